"""Building the sandbox image, and where no registry is reachable, its Debian base.

With a registry, the Dockerfile's default BASE_IMAGE (an official Python image)
is used. Without one (this project's CI), `ensure_local_base` makes a minimal
Debian with the full Python standard library by debootstrap and `docker import`.
The sandbox image tag carries a hash of its build context, so a changed
supervisor never runs under a stale image.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import docker
from docker.errors import ImageNotFound

log = logging.getLogger(__name__)

CONTEXT_DIR = Path(__file__).parent / "image"
# The in-sandbox runtime, copied into the image (as `runtime/` in the build context).
RUNTIME_DIR = Path(__file__).parent / "runtime"
LOCAL_BASE = "passk-base:bookworm"
SANDBOX_REPOSITORY = "passk-sandbox"
DEBIAN_SUITE = "bookworm"


def context_files() -> list[tuple[str, Path]]:
    """(name in the build context, file): the Dockerfile and the runtime's modules."""
    files = [(path.name, path) for path in sorted(CONTEXT_DIR.iterdir()) if path.is_file()]
    files += [(f"runtime/{path.name}", path) for path in sorted(RUNTIME_DIR.glob("*.py"))]
    return files


def context_digest(base_image: str) -> str:
    digest = hashlib.sha256(base_image.encode())
    for name, path in context_files():
        digest.update(name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def sandbox_tag(base_image: str) -> str:
    return f"{SANDBOX_REPOSITORY}:{context_digest(base_image)}"


def image_exists(client: docker.DockerClient, name: str) -> bool:
    try:
        client.images.get(name)
        return True
    except ImageNotFound:
        return False


def ensure_local_base(client: docker.DockerClient, work_dir: Path | None = None) -> str:
    """Make `passk-base:bookworm` from Debian's mirror unless it exists already."""
    if image_exists(client, LOCAL_BASE):
        return LOCAL_BASE
    if shutil.which("debootstrap") is None:
        if os.geteuid() != 0:
            raise RuntimeError("debootstrap is needed to build the local base image; install it or pass --base-image")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "debootstrap"], check=True, env=env)
    root = Path(tempfile.mkdtemp(prefix="passk-rootfs-", dir=work_dir))
    try:
        log.warning("building %s with debootstrap (a few minutes, once)", LOCAL_BASE)
        subprocess.run(
            ["debootstrap", "--variant=minbase", "--include=python3", DEBIAN_SUITE, str(root)],
            check=True, stdout=subprocess.DEVNULL,
        )
        # Package caches and lists are dead weight in every container.
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            shutil.rmtree(root / junk, ignore_errors=True)
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        assert tar.stdout is not None
        client.api.import_image_from_stream(tar.stdout, repository=LOCAL_BASE.split(":")[0], tag=LOCAL_BASE.split(":")[1])
        if tar.wait() != 0:
            raise RuntimeError("tar of the debootstrap root failed")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return LOCAL_BASE


def build_sandbox_image(client: docker.DockerClient, base_image: str) -> str:
    """Build (or reuse) the sandbox image for `base_image`; returns its tag, also tagged `latest`."""
    tag = sandbox_tag(base_image)
    if image_exists(client, tag):
        client.images.get(tag).tag(SANDBOX_REPOSITORY, "latest")
        return tag
    log.warning("building sandbox image %s from %s", tag, base_image)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, path in context_files():
            archive.add(path, arcname=name)
    buffer.seek(0)
    client.images.build(
        fileobj=buffer, custom_context=True, tag=tag, buildargs={"BASE_IMAGE": base_image}, rm=True, forcerm=True,
        pull=False, network_mode="none",  # nothing in the build needs the network
    )
    client.images.get(tag).tag(SANDBOX_REPOSITORY, "latest")
    return tag


OFFICIAL_BASE = "python:3.11-slim-bookworm"


def ensure_sandbox_image(client: docker.DockerClient, base_image: str | None = None) -> str:
    """The sandbox image tag. Base: the one given, else the official image if it can be had, else local Debian."""
    base = base_image or os.environ.get("PASSK_SANDBOX_BASE_IMAGE")
    if base is None:
        base = LOCAL_BASE if image_exists(client, LOCAL_BASE) else _pull_or_none(client, OFFICIAL_BASE)
    if base is None:
        base = ensure_local_base(client)
    return build_sandbox_image(client, base)


def _pull_or_none(client: docker.DockerClient, name: str) -> str | None:
    if image_exists(client, name):
        return name
    try:
        client.images.pull(name)
        return name
    except docker.errors.DockerException as exc:
        log.warning("cannot pull %s (%s); building a local Debian base instead", name, str(exc).splitlines()[0][:200])
        return None
