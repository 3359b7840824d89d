"""Placeholder: filled in by its own change."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """No subcommands yet."""
