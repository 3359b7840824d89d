"""k as users write it ("1,10,100"): parsed in one place for the API and both CLIs."""

from __future__ import annotations

import re

MAX_KS = 32
_K = re.compile(r"[0-9]{1,9}")  # ASCII only, and short enough that int() cannot blow up


def parse_ks(raw: str) -> list[int]:
    """'1,10,100' -> [1, 10, 100] (order kept, duplicates dropped); ValueError saying what is wrong."""
    ks: list[int] = []
    for part in raw.split(","):
        token = part.strip()
        if not _K.fullmatch(token) or int(token) < 1:
            raise ValueError(f"k must be comma-separated positive integers; {token!r} is not one")
        if int(token) not in ks:
            ks.append(int(token))
    if len(ks) > MAX_KS:
        raise ValueError(f"at most {MAX_KS} values of k per request")
    return ks


def ks_argument(raw: str) -> list[int]:
    """parse_ks as an argparse `type`."""
    import argparse

    try:
        return parse_ks(raw)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
