"""Call-based problems: the driver calls `fn_name(*input)` once per case and compares the result.

`fn_name` is looked up as a method of a `Solution` class (LeetCode style, as
in APPS and LiveCodeBench) and else as a top-level function. The program runs
with `__name__ == "solution"`, so a `__main__` block of its own does not run.
Results are compared by type and value (compare.value_mismatch).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sandbox.runtime.compare import DEFAULT_ABS_TOL, DEFAULT_REL_TOL
from service.core.limits import limits_of
from service.formats.cases import JudgedByCases, judged_columns
from service.formats.fields import _ID, Identifier, JsonValue, NumericId, StorableStr
from service.formats.harness import driver_program
from service.formats.program import Program
from service.formats.registry import Format


class CallCase(BaseModel):
    input: list[JsonValue] = Field(description="The positional arguments.")
    output: JsonValue = Field(description="The expected return value, compared by type and value.")


class CallProblemIn(JudgedByCases):
    """A call-based problem (APPS `fn_name`, LiveCodeBench `functional`): `fn_name(*input)` must return `output`.

    `fn_name` is a top-level function of the program or a method of its `Solution` class.
    """

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "format": "call",
                    "id": "lc-2956",
                    "prompt": "Find common elements between two arrays.",
                    "fn_name": "findIntersectionValues",
                    "cases": [{"input": [[4, 3, 2, 3, 1], [2, 2, 5, 2, 3, 6]], "output": [3, 4]}],
                    "setup_code": "from typing import *",
                }
            ]
        }
    )

    format: Literal["call"]
    id: NumericId = _ID
    prompt: StorableStr = Field("", description="The problem statement.")
    fn_name: Identifier
    cases: list[CallCase] = Field(min_length=1)


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
            "case_time_limit_s": limits_of(problem).time_limit_s,
        }
    )


def columns(problem: Any) -> dict[str, Any]:
    return {**judged_columns(problem), "format": "call", "entry_point": problem.fn_name}


FORMAT = Format(
    name="call", program=program, model=CallProblemIn, columns=columns,
    summary="call-based cases: fn_name(*input) compared with output (APPS, LiveCodeBench)",
)
