"""The per-case time limit of stdin/stdout and call-based problems."""

from __future__ import annotations

from typing import Any

from service.core.settings import get_settings


def case_time_limit_s(problem: Any) -> float:
    """The usual chain (run, then problem, then dataset, then server default), applied to each case.

    The worker's row carries `effective_time_limit_s`, with the worker's own default filled in
    (service/worker/queue.py); a bare problem (tests) falls back to its own limit, then to the settings.
    """
    for value in (getattr(problem, "effective_time_limit_s", None), getattr(problem, "time_limit_s", None)):
        if value:
            return float(value)
    return get_settings().default_time_limit_s
