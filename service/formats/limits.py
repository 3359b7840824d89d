"""The per-case time limit of stdin/stdout and call-based problems."""

from __future__ import annotations

from typing import Any

from service.settings import get_settings


def case_time_limit_s(problem: Any) -> float:
    """The usual chain (run, then problem, then dataset, then server default), applied to each case.

    The worker's row carries the coalesced `effective_time_limit_s`; a bare
    problem (tests, tools) falls back to its own limit.
    """
    for value in (getattr(problem, "effective_time_limit_s", None), getattr(problem, "time_limit_s", None)):
        if value:
            return float(value)
    return get_settings().default_time_limit_s
