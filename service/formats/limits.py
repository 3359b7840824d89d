"""The per-case time limit of stdin/stdout and call-based problems."""

from __future__ import annotations

from typing import Any

from service.core.limits import limits_of


def case_time_limit_s(problem: Any) -> float:
    """The program's time limit in force (service/core/limits.py), applied to each case."""
    return limits_of(problem).time_limit_s
