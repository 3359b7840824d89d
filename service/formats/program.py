"""How a sample becomes a program. One place, so the worker and the tests build the same bytes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from sandbox.runtime.job import Native


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
    # Another language than Python: `native` is what the supervisor compiles and runs
    # (sandbox/languages/jobs.py) and `text` its canonical JSON (the verdict cache key's program bytes).
    language: str = "python"
    native: Native | None = None


def program_for(problem: ProblemContext | Any, completion: str) -> Program:
    """The program for a sample: the problem's format (service/formats/registry.py) builds it."""
    from service.formats import registry  # imported late: the formats build Programs from here

    return registry.program_for(problem, completion)
