"""`passk`: one command, with subcommands contributed by the modules listed in COMMAND_MODULES."""

from __future__ import annotations

import argparse
import importlib
import logging

from service.settings import get_settings

# Each module has `register(subparsers)`; its subcommands set `func(settings, args) -> int`.
COMMAND_MODULES = ("operators", "keys", "report", "client_commands")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="passk", description="Execution-backed pass@k for code models.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(f"service.cli.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    return int(args.func(get_settings(), args) or 0)
