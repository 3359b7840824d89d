"""Call-based problems: the driver calls `fn_name(*input)` once per case and compares the result.

`fn_name` is looked up as a method of a `Solution` class (LeetCode style, as
in APPS and LiveCodeBench) and else as a top-level function. The program runs
with `__name__ == "solution"`, so a `__main__` block of its own does not run.
Results are compared by type and value (compare.value_mismatch).
"""

from __future__ import annotations

from typing import Any

from sandbox.runtime.compare import DEFAULT_ABS_TOL, DEFAULT_REL_TOL
from service.formats.harness import driver_program
from service.formats.limits import case_time_limit_s
from service.formats.registry import Format
from service.formats.program import Program


def program(problem: Any, completion: str) -> Program:
    return driver_program(
        {
            "mode": "call",
            "source": completion,
            "setup": problem.setup_code or "",
            "fn_name": problem.entry_point,
            "cases": problem.cases,
            "policy": None,
            "abs_tol": DEFAULT_ABS_TOL if problem.abs_tol is None else problem.abs_tol,
            "rel_tol": DEFAULT_REL_TOL if problem.rel_tol is None else problem.rel_tol,
            "case_time_limit_s": case_time_limit_s(problem),
        }
    )


def columns(problem: Any) -> dict[str, Any]:
    from service.formats.stdio import judged_columns

    return {**judged_columns(problem), "format": "call", "entry_point": problem.fn_name}


def _model() -> type:
    from service.api.datasets.schemas import CallProblemIn

    return CallProblemIn


FORMAT = Format(
    name="call", program=program, model=_model, columns=columns,
    summary="call-based cases: fn_name(*input) compared with output (APPS, LiveCodeBench)",
)
