"""Standard input / output problems: the driver runs the program once per case (any language).

In Python, the driver (driver.py) runs the program; in another language, the solution is compiled once
and the binary runs once per case (sandbox/runtime/native.py).

See driver.py for how a case runs and compare.py for the comparison policies.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sandbox import languages
from sandbox.runtime.compare import DEFAULT_ABS_TOL, DEFAULT_POLICY, DEFAULT_REL_TOL, POLICIES
from service.formats import sources
from service.core.limits import limits_of
from service.formats.cases import JudgedByCases, judged_columns
from service.formats.fields import _ID, NumericId, StorableStr
from service.formats.harness import driver_program
from service.formats.native import stdio_program
from service.formats.program import Program
from service.formats.registry import Format, language_of


class StdioCase(BaseModel):
    input: StorableStr = Field(description="Sent on standard input.")
    output: StorableStr = Field(description="The expected standard output.")


_STDIO_EXAMPLE = {
    "format": "stdio",
    "id": "cf-4A",
    "prompt": "Can the watermelon of weight w be split into two even parts?",
    "cases": [{"input": "8\n", "output": "YES\n"}, {"input": "5\n", "output": "NO\n"}],
    "comparison": "whitespace",
    "time_limit_s": 1.0,
}


class StdioProblemIn(JudgedByCases):
    """A standard input/output problem (APPS, CodeContests, LiveCodeBench `stdin`): passes when every case does."""

    model_config = ConfigDict(json_schema_extra={"examples": [_STDIO_EXAMPLE]})

    format: Literal["stdio"]
    id: NumericId = _ID
    prompt: StorableStr = Field("", description="The problem statement.")
    cases: list[StdioCase] = Field(min_length=1)
    comparison: Literal[POLICIES] = Field(  # type: ignore[valid-type]
        "whitespace", description="`exact`, `whitespace` (tokens) or `numeric` (tokens, numbers with tolerance)."
    )


def program(problem: Any, completion: str) -> Program:
    language = language_of(problem)
    if languages.get(language).native:
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
            "case_time_limit_s": limits_of(problem).time_limit_s,
        }
    )


def columns(problem: Any) -> dict[str, Any]:
    return {**judged_columns(problem), "format": "stdio", "entry_point": "", "comparison": problem.comparison}


# APPS and LiveCodeBench rows become stdio or call problems, CodeContests rows stdio ones.
ROWS = (
    (sources.is_apps, sources.from_apps),
    (sources.is_code_contests, sources.from_code_contests),
    (sources.is_livecodebench, sources.from_livecodebench),
)


FORMAT = Format(
    name="stdio", program=program, model=StdioProblemIn, columns=columns, rows=ROWS, languages=None,
    summary="stdin/stdout cases (APPS, CodeContests, LiveCodeBench), in any language",
)
