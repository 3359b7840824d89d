"""What failed, per test: the judges' structured account of the first failing assertion or case.

The judges (sandbox/runtime/trusted_tests.py and driver.py) end a failing sample's message with
FAILURE_MARK and a JSON object; the report channel they write to is private to them, and they strip the
mark from any text that came from the candidate, so the object is theirs. Here it is split off the
detail, stored in `samples.failure`, and joined back for the verdict cache.

HumanEval / MBPP: {"kind": "assertion", "line": N, "source": "assert f(1) == 2", "expected": "2",
"actual": "3"} (expected / actual only where both sides are plain values). stdio / call: {"kind": "case",
"index": i (0-based), "input": ..., "expected": ..., "got": ...} (strings, truncated).
"""

from __future__ import annotations

import json
from typing import Any

FAILURE_MARK = "\x1e"


def split_failure(detail: str | None) -> tuple[str | None, dict[str, Any] | None]:
    if not detail or FAILURE_MARK not in detail:
        return detail, None
    text, _, payload = detail.rpartition(FAILURE_MARK)
    try:
        failure = json.loads(payload)
    except ValueError:
        return text, None
    return text, failure if isinstance(failure, dict) else None


def join_failure(detail: str | None, failure: dict[str, Any] | None) -> str | None:
    if failure is None:
        return detail
    return (detail or "") + FAILURE_MARK + json.dumps(failure, separators=(",", ":"))
