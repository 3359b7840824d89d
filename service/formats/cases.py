"""What the case-judged formats (stdio, call) share: the fields besides their cases, and the problem columns."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from service.formats.fields import _SETUP, _TOLERANCES, ProblemFields, StorableStr, Tolerance
from service.formats.registry import UNUSED_COLUMNS


class JudgedByCases(ProblemFields):
    """What the case-judged formats (stdio, call) share besides their cases."""

    abs_tol: Tolerance | None = Field(None, description=_TOLERANCES)
    rel_tol: Tolerance | None = Field(None, description=_TOLERANCES)
    setup_code: StorableStr | None = _SETUP
    canonical_solution: StorableStr | None = None


def judged_columns(problem: Any) -> dict[str, Any]:
    """The columns every case-judged problem fills; its format adds `format`, `entry_point` (and `comparison`)."""
    return {
        **UNUSED_COLUMNS,
        "prompt": problem.prompt,
        "test": "",
        "canonical_solution": problem.canonical_solution,
        "setup_code": problem.setup_code,
        "abs_tol": problem.abs_tol,
        "rel_tol": problem.rel_tol,
        "cases": [case.model_dump(mode="json") for case in problem.cases],
    }
