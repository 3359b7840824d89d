"""`passk docs build`: render docs/ (mkdocs.yml at the repository's root) into the site the API serves at /guide/."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from service.core.settings import get_settings

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "mkdocs.yml"


class DocsUnavailable(RuntimeError):
    """The site cannot be built here: no sources next to this installation, or MkDocs is not installed."""


def build_site(output: Path, strict: bool = True) -> float:
    """Build the site into `output` (replacing what was there); returns the seconds it took."""
    if not CONFIG.is_file():
        raise DocsUnavailable(f"no {CONFIG.name} at {REPO}: the guide builds from passk's sources")
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")  # Material's banner about its successor, on every build
    try:
        from mkdocs.commands.build import build
        from mkdocs.config import load_config
    except ImportError as exc:
        raise DocsUnavailable("MkDocs is not installed: pip install 'passk[docs]'") from exc
    started = time.monotonic()
    config = load_config(str(CONFIG), site_dir=str(output.resolve()), strict=strict)
    config.plugins.on_startup(command="build", dirty=False)
    try:
        build(config)
    finally:
        config.plugins.on_shutdown()
    return time.monotonic() - started


def cmd_docs_build(args: argparse.Namespace) -> int:
    output = Path(args.output) if args.output else get_settings().guide_dir
    try:
        seconds = build_site(output)
    except DocsUnavailable as exc:
        print(f"error: {exc}")
        return 1
    print(f"built the guide into {output} in {seconds:.1f} s (served at /guide/ by `passk serve`)")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    docs = sub.add_parser("docs", help="the documentation site the API serves under /guide/")
    docs_sub = docs.add_subparsers(dest="docs_command", required=True)
    build = docs_sub.add_parser("build", help="render docs/ with MkDocs (--strict) into PASSK_GUIDE_DIR")
    build.add_argument("-o", "--output", help="directory to build into (default: PASSK_GUIDE_DIR, .passk/guide)")
    build.set_defaults(func=cmd_docs_build)
