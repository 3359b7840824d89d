"""`passk`: one command, with subcommands contributed by the modules listed in COMMAND_MODULES.

The operator's commands (service/cli: up, serve, worker, migrate, images, keys) read the server's Settings;
the user's (service/client: datasets, submit, status, metrics, compare, report...) need only their arguments
and the environment the Python client reads.
"""

from __future__ import annotations

import argparse
import importlib
import logging

# Each module has `register(subparsers)`; its subcommands set `func(args) -> int`.
COMMAND_MODULES = ("service.cli.operators", "service.cli.keys", "service.cli.docs", "service.client.report_command", "service.client.commands")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="passk", description="Execution-backed pass@k for code models.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)
