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
import json
import logging
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import docker
from docker.errors import ImageNotFound
from filelock import FileLock

from sandbox import languages

log = logging.getLogger(__name__)

CONTEXT_DIR = Path(__file__).parent / "image"
REPO_ROOT = Path(__file__).resolve().parent.parent
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
    """The sandbox image tag. Base: the one given (the caller's setting), else local Debian if built, else the
    official image if it can be had, else a local Debian built now."""
    base = base_image
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


# ------------------------------------------------------------------ one image per language

LANGUAGE_DOCKERFILE = CONTEXT_DIR / "language" / "Dockerfile"
# The line of the sandbox's Dockerfile before which a language's toolchain layers go.
RUNTIME_LAYERS = "COPY runtime/"
_versions: dict[str, str] = {}


# Where downloaded .deb files (and npm tarballs, beside it) are cached; the service passes Settings.deb_cache.
DEFAULT_DEB_CACHE = Path.home() / ".cache" / "passk" / "debs"


def language_dockerfile() -> str:
    """A language image's Dockerfile: the sandbox's (users, runtime, entry point), with the toolchain's layers
    (sandbox/image/language/Dockerfile) inserted before the runtime's. The toolchain layers then depend on the
    base and the language only, so a change to sandbox/runtime rebuilds only the last layers: Docker's build
    cache keeps the toolchain's."""
    sandbox = (CONTEXT_DIR / "Dockerfile").read_text()
    at = sandbox.index("\n" + RUNTIME_LAYERS) + 1
    return sandbox[:at] + LANGUAGE_DOCKERFILE.read_text() + "\n" + sandbox[at:]


def language_tag(base_image: str, language: Any) -> str:
    """`passk-sandbox-<name>:<hash>`: the hash covers the base, the Python sandbox's context (Dockerfile and
    runtime), the language's packages, npm packages, setup commands and context files, and its Dockerfile."""
    digest = hashlib.sha256(context_digest(base_image).encode())
    digest.update(json.dumps([language.name, language.packages, language.npm_packages, language.image_setup,
                              language.context_files]).encode())
    digest.update(language_dockerfile().encode())
    for repo_path, _ in language.context_files:
        digest.update(_file_bytes(REPO_ROOT / repo_path))
    return f"{SANDBOX_REPOSITORY}-{language.name}:{digest.hexdigest()[:16]}"


def _file_bytes(path: Path) -> bytes:
    if path.is_dir():
        return b"".join(p.relative_to(path).as_posix().encode() + p.read_bytes()
                        for p in sorted(path.rglob("*")) if p.is_file())
    return path.read_bytes()


def _resolve_base(client: docker.DockerClient, base_image: str | None) -> str:
    base = base_image
    if base is None:
        base = LOCAL_BASE if image_exists(client, LOCAL_BASE) else _pull_or_none(client, OFFICIAL_BASE)
    return base or ensure_local_base(client)


def download_debs(client: docker.DockerClient, base_image: str, packages: tuple[str, ...],
                  cache: Path = DEFAULT_DEB_CACHE) -> Path:
    """The .deb files `packages` need on top of `base_image`, cached on the host by (base, package list).

    A throwaway container of the base with the host's network runs `apt-get install --download-only`; the
    image build itself then installs them with no network at all.
    """
    key = hashlib.sha256(json.dumps([base_image, sorted(packages)]).encode()).hexdigest()[:16]
    target = cache / key
    if (target / ".complete").exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    log.warning("downloading Debian packages %s (once, cached in %s)", " ".join(packages), target)
    script = (
        "set -e; export DEBIAN_FRONTEND=noninteractive; apt-get update -qq; "
        "mkdir -p /debs; apt-get install -y -qq --no-install-recommends --download-only -o Dir::Cache::archives=/debs "
        + " ".join(packages)
        + "; rm -rf /debs/partial /debs/lock"
    )
    # No bind mount: the worker may itself run in a container, where its paths are not the engine's.
    container = client.containers.create(base_image, ["sh", "-c", script], entrypoint=[], user="0:0",
                                         network_mode="host")
    try:
        container.start()
        status = container.wait()
        if status.get("StatusCode") != 0:
            tail = container.logs(stdout=True, stderr=True)[-2000:].decode("utf-8", "replace")
            raise RuntimeError(f"downloading {' '.join(packages)} failed: {tail}")
        stream, _ = container.get_archive("/debs")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as archive:
            for member in archive.getmembers():
                if member.isfile() and member.name.endswith(".deb"):
                    member.name = Path(member.name).name
                    archive.extract(member, target)
    finally:
        container.remove(force=True)
    (target / ".complete").write_text(" ".join(sorted(packages)) + "\n")
    return target


def npm_tarballs(packages: tuple[str, ...], cache: Path = DEFAULT_DEB_CACHE) -> Path:
    """`npm pack` of each package on the host, cached by the package list."""
    key = hashlib.sha256(json.dumps(sorted(packages)).encode()).hexdigest()[:16]
    target = cache.parent / "npm" / key
    if (target / ".complete").exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    for package in packages:
        subprocess.run(["npm", "pack", package, "--pack-destination", str(target)], check=True,
                       stdout=subprocess.DEVNULL)
    (target / ".complete").write_text(" ".join(sorted(packages)) + "\n")
    return target


def build_language_image(client: docker.DockerClient, language: Any, base_image: str | None = None,
                         deb_cache: Path | None = None) -> str:
    """Build (or reuse) the image of a native language; returns its tag. Offline build (network_mode none)."""
    base = _resolve_base(client, base_image)
    tag = language_tag(base, language)
    if image_exists(client, tag):
        return tag
    cache = deb_cache or DEFAULT_DEB_CACHE
    # Processes on one host that need the same image at once (workers, test processes) build it once.
    locks = cache.parent / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with FileLock(locks / f"{tag.replace('/', '_').replace(':', '_')}.lock"):
        if image_exists(client, tag):
            return tag
        return _build_language_image(client, language, base, tag, cache)


def _build_language_image(client: docker.DockerClient, language: Any, base: str, tag: str, cache: Path) -> str:
    debs = download_debs(client, base, language.packages, cache) if language.packages else None
    npm = npm_tarballs(language.npm_packages, cache) if language.npm_packages else None
    log.warning("building %s image %s (offline)", language.name, tag)
    setup = " && ".join(language.image_setup) if language.image_setup else "true"
    buffer = io.BytesIO()
    dockerfile = language_dockerfile().encode()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("Dockerfile")
        info.size, info.mode = len(dockerfile), 0o644
        archive.addfile(info, io.BytesIO(dockerfile))
        for name, path in context_files():
            if name.startswith("runtime/"):
                archive.add(path, arcname=name, filter=_reproducible)
        _add_dir(archive, "debs", debs, "*.deb")
        _add_dir(archive, "npm", npm, "*.tgz")
        _add_dir(archive, "context", None, "")
        for repo_path, context_path in language.context_files:
            archive.add(REPO_ROOT / repo_path, arcname=f"context/{context_path}", filter=_reproducible)
    buffer.seek(0)
    client.images.build(
        fileobj=buffer, custom_context=True, tag=tag, rm=True, forcerm=True, pull=False, network_mode="none",
        buildargs={"BASE_IMAGE": base, "SETUP": setup},
    )
    return tag


def _reproducible(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Build-context entries whose metadata depends on their content only (Docker's cache compares both)."""
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
    return info


def _add_dir(archive: tarfile.TarFile, name: str, source: Path | None, pattern: str) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, 0o755
    archive.addfile(info)
    if source is not None:
        for path in sorted(source.glob(pattern)):
            archive.add(path, arcname=f"{name}/{path.name}", filter=_reproducible)


def ensure_language_image(client: docker.DockerClient, language: Any, base_image: str | None = None,
                          deb_cache: Path | None = None) -> str:
    """The image tag for `language` (a Language or its name), built on demand; Python keeps today's image."""
    if isinstance(language, str):
        language = languages.get(language)
    language = languages.image_of(language)
    if not language.own_image:
        return ensure_sandbox_image(client, base_image)
    return build_language_image(client, language, base_image, deb_cache)


def toolchain_version(client: docker.DockerClient, image: str, language: Any) -> str:
    """The first line of the language's version command in `image` (probed once per image and process)."""
    if isinstance(language, str):
        language = languages.get(language)
    key = f"{image}\0{language.name}"
    if key not in _versions:
        output = client.containers.run(
            image, list(language.version), entrypoint=[], user="10002:10002", network_mode="none", remove=True,
            stdout=True, stderr=True,
        )
        text = output.decode("utf-8", "replace").strip()
        _versions[key] = text.splitlines()[0].strip() if text else "unknown"
    return _versions[key]
