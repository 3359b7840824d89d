"""Operator commands: up, serve, worker, migrate, images."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import httpx

from service.core.embedded_postgres import resolve_database_url
from service.core.settings import Settings, get_settings


# Imported on use: each command imports the part it starts (the API, a worker, the image builder), so `passk
# --help` and the other commands do not load them.

def cmd_migrate(_args: argparse.Namespace) -> int:
    from service.core.migrate import upgrade_to_head

    upgrade_to_head(resolve_database_url(get_settings()))
    print("database schema is at head")
    return 0


def cmd_images(args: argparse.Namespace) -> int:
    from sandbox import languages
    from sandbox.engine import ensure_engine
    from sandbox.images import ensure_language_image, ensure_sandbox_image, toolchain_version

    settings = get_settings()
    root = settings.engine_root.resolve() if settings.engine_root else None
    client = ensure_engine(Path(settings.data_dir).resolve(), root=root)
    if not args.language:
        print(ensure_sandbox_image(client, args.base_image or settings.sandbox_base_image))
        return 0
    names = list(languages.all_languages()) if args.language == ["all"] else args.language
    for name in names:
        language = languages.resolve(name)
        tag = ensure_language_image(
            client, language, args.base_image or settings.sandbox_base_image, settings.deb_cache
        )
        print(f"{language.name}\t{tag}\t{toolchain_version(client, tag, language)}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    return _serve(get_settings(), args)


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    from service.api.app import create_app
    from service.api.server import serve

    settings = settings.model_copy(update={"database_url": resolve_database_url(settings)})
    serve(create_app(settings), settings, args.host or settings.api_host, args.port or settings.api_port)
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from service.worker.runner import Worker

    settings = get_settings()
    worker = Worker(settings, resolve_database_url(settings), args.image or settings.sandbox_image, args.concurrency)
    worker.install_signal_handlers()
    worker.run()
    return 0


def cmd_up(args: argparse.Namespace) -> int:
    """Everything on one machine: Docker engine, sandbox image, database, migrations, worker and API.

    A Docker engine this command had to start is its own: supervised (reaped and started again when it dies)
    and stopped when the command ends.
    """
    import threading

    from sandbox.engine import host_under, start_or_connect
    from sandbox.images import ensure_sandbox_image
    from service.core.migrate import upgrade_to_head

    settings = get_settings()
    base_url = f"http://{args.host or settings.api_host}:{args.port or settings.api_port}"
    if _healthy(base_url):
        print(f"passk is already running at {base_url}")
        return 0
    data_dir = Path(settings.data_dir).resolve()
    root = settings.engine_root.resolve() if settings.engine_root else None
    client, embedded = start_or_connect(data_dir, root, backoff_s=settings.engine_restart_backoff_s, own=True)
    image = ensure_sandbox_image(client, args.base_image or settings.sandbox_base_image)
    url = resolve_database_url(settings)
    upgrade_to_head(url)
    _ensure_dev_key(settings.model_copy(update={"database_url": url}), data_dir)
    _build_guide(settings)
    env = {**os.environ, "PASSK_DATABASE_URL": url, "PASSK_SANDBOX_IMAGE": image}
    if root is not None:
        env["DOCKER_HOST"] = host_under(root)
    if embedded is not None:
        threading.Thread(target=embedded.supervise, name="engine", daemon=True).start()
    worker = subprocess.Popen([sys.executable, "-m", "service.cli", "worker"], env=env, preexec_fn=_die_with_parent)
    print(f"passk API on {base_url} (guide at {base_url}/guide/, API reference at {base_url}/docs); worker pid {worker.pid}; Ctrl-C stops both", flush=True)
    try:
        return _serve(settings.model_copy(update={"database_url": url, "sandbox_image": image}), args)
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
        if embedded is not None:
            embedded.stop()


def _build_guide(settings: Settings) -> None:
    """The documentation site for /guide/; without MkDocs the API still runs and /guide/ says how to build it."""
    from service.cli.docs import DocsUnavailable, build_site

    try:
        build_site(settings.guide_dir)
    except DocsUnavailable as exc:
        print(f"the guide at /guide/ is not built: {exc}", flush=True)


def _die_with_parent() -> None:
    # uvicorn re-raises SIGTERM after its shutdown, so a `finally` here may never run: let the kernel
    # stop the worker when `passk up` goes, however it goes.
    import ctypes
    import signal

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6").prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _ensure_dev_key(settings: Settings, data_dir: Path) -> None:
    """First start: make a key with every scope and keep it in a 0600 file for the quick start."""
    from service.cli.keys import create_key

    key_file = data_dir / "api-key"
    if key_file.exists():
        print(f"API key: in {key_file}")
        return
    raw = create_key(settings, "local", ["read", "submit"])
    key_file.write_text(raw + "\n")
    key_file.chmod(0o600)
    print(f"created an API key with read+submit scopes, saved in {key_file}:\n  {raw}")


def _healthy(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def register(sub: argparse._SubParsersAction) -> None:
    up = sub.add_parser("up", help="run API + worker (+ embedded Postgres, + Docker engine if root) on this machine")
    up.add_argument("--base-image", help="base for the sandbox image (default: official python image, or local Debian)")
    up.add_argument("--host")
    up.add_argument("--port", type=int)
    up.set_defaults(func=cmd_up)

    serve = sub.add_parser("serve", help="run the HTTP API")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.set_defaults(func=cmd_serve)

    worker = sub.add_parser("worker", help="run a worker that executes queued samples")
    worker.add_argument("--concurrency", type=int, help="parallel sandboxes (default: number of cores)")
    worker.add_argument("--image", help="sandbox image (default: PASSK_SANDBOX_IMAGE)")
    worker.set_defaults(func=cmd_worker)

    migrate = sub.add_parser("migrate", help="apply database migrations")
    migrate.set_defaults(func=cmd_migrate)

    images = sub.add_parser("images", help="build the sandbox image (and its local Debian base if needed)")
    images.add_argument("--base-image", help="e.g. python:3.11-slim-bookworm where a registry is reachable")
    images.add_argument("--language", action="append", metavar="NAME",
                        help="build this language's image (repeatable; `all` for every one); default: Python's")
    images.set_defaults(func=cmd_images)
