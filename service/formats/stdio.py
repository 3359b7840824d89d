"""Standard input / output problems: the driver runs the program once per case (any language).

In Python, the driver (driver.py) runs the program; in another language, the solution is compiled once
and the binary runs once per case (sandbox/runtime/native.py).

See driver.py for how a case runs and compare.py for the comparison policies.
"""

from __future__ import annotations

from typing import Any

from sandbox.runtime.compare import DEFAULT_ABS_TOL, DEFAULT_POLICY, DEFAULT_REL_TOL
from service.formats.harness import driver_program
from service.formats.limits import case_time_limit_s
from service.formats.registry import UNUSED_COLUMNS, Format, language_of
from service.formats.program import Program


def program(problem: Any, completion: str) -> Program:
    language = language_of(problem)
    if language != "python":
        from service.formats.native import stdio_program

        return stdio_program(problem, completion, language)
    return driver_program(
        {
            "mode": "stdio",
            "source": completion,
            "setup": problem.setup_code or "",
            "cases": problem.cases,
            "policy": problem.comparison or DEFAULT_POLICY,
            "abs_tol": DEFAULT_ABS_TOL if problem.abs_tol is None else problem.abs_tol,
            "rel_tol": DEFAULT_REL_TOL if problem.rel_tol is None else problem.rel_tol,
            "case_time_limit_s": case_time_limit_s(problem),
        }
    )


def judged_columns(problem: Any) -> dict[str, Any]:
    """Columns shared by the case-based formats (stdio, call)."""
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


def columns(problem: Any) -> dict[str, Any]:
    return {**judged_columns(problem), "format": "stdio", "entry_point": "", "comparison": problem.comparison}


def _model() -> type:
    from service.api.datasets.schemas import StdioProblemIn

    return StdioProblemIn


def _rows() -> tuple:
    from service.formats import sources

    # APPS and LiveCodeBench rows become stdio or call problems, CodeContests rows stdio ones.
    return (
        (sources.is_apps, sources.from_apps),
        (sources.is_code_contests, sources.from_code_contests),
        (sources.is_livecodebench, sources.from_livecodebench),
    )


FORMAT = Format(
    name="stdio", program=program, model=_model, columns=columns, rows=_rows(), languages=None,
    summary="stdin/stdout cases (APPS, CodeContests, LiveCodeBench), in any language",
)
