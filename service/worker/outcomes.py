"""An Outcome as the columns samples and verdict_cache share."""

from __future__ import annotations

from sandbox.executor import Outcome
from service.core.flags import canonical

OUTCOME_COLUMNS = (
    "verdict", "detail", "exit_code", "signal", "duration_ms", "cpu_ms",
    "stdout", "stderr", "stdout_truncated", "stderr_truncated",
)


def outcome_values(outcome: Outcome) -> dict[str, object]:
    """The outcome's column values, with `failure` (the judge's record, a dict for the JSONB column) and `flags`
    (the reward-hack flags: a list in FLAGS order, None when none)."""
    return {
        "verdict": outcome.verdict.value,
        "detail": outcome.detail,
        "failure": outcome.failure,
        "flags": canonical(outcome.flags),
        "exit_code": outcome.exit_code,
        "signal": outcome.signal,
        "duration_ms": outcome.duration_ms,
        "cpu_ms": outcome.cpu_ms,
        "stdout": _clean(outcome.stdout),
        "stderr": _clean(outcome.stderr),
        "stdout_truncated": outcome.stdout_truncated,
        "stderr_truncated": outcome.stderr_truncated,
    }


def _clean(value: str) -> str:
    # PostgreSQL text cannot hold NUL bytes, which programs can print.
    return value.replace("\x00", "\\x00")
