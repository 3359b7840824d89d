"""Which time and memory limits apply to a program: one rule, for running it (the worker) and for showing it (the
API's run summary).

Each limit is the first one set of the run's, the problem's (time and memory only) and the dataset's, else the
default: the server's for time and memory (`Settings.default_time_limit_s`, `default_memory_mb`), the language's
for compiling. A language that is not compiled has no compile limits (None).

Pure: the levels are any objects with the limit attributes (ORM rows, Core rows, validated bodies); an absent
attribute is an unset limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sandbox.languages.base import Language
from sandbox.runtime.job import MB
from service.core.settings import Settings


@dataclass(frozen=True)
class Limits:
    time_limit_s: float
    memory_mb: int
    compile_time_limit_s: float | None = None  # None: the language is not compiled
    compile_memory_mb: int | None = None

    @property
    def memory_bytes(self) -> int:
        return self.memory_mb * MB

    @property
    def compile_memory_bytes(self) -> int | None:
        return None if self.compile_memory_mb is None else self.compile_memory_mb * MB


# The server's defaults as Settings declares them, for a program built outside a worker (a bare problem in a
# test or a bench): a worker passes its own settings' defaults.
DEFAULT_TIME_LIMIT_S: float = Settings.model_fields["default_time_limit_s"].default
DEFAULT_MEMORY_MB: int = Settings.model_fields["default_memory_mb"].default


def _first(levels: tuple[Any, ...], name: str) -> Any:
    return next((value for level in levels if (value := getattr(level, name, None)) is not None), None)


def limits_in_force(
    *,
    run: Any = None,
    problem: Any = None,
    dataset: Any = None,
    language: Language | None = None,
    default_time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    default_memory_mb: int = DEFAULT_MEMORY_MB,
) -> Limits:
    """The limits in force for a program of `problem` in `run` over `dataset` (any level may be None)."""
    levels = (run, problem, dataset)
    time_limit_s = _first(levels, "time_limit_s")
    memory_mb = _first(levels, "memory_mb")
    compile_time_limit_s = compile_memory_mb = None
    if language is not None and language.compiled:
        compile_levels = (run, dataset)
        compile_time_limit_s = _first(compile_levels, "compile_time_limit_s")
        compile_memory_mb = _first(compile_levels, "compile_memory_mb")
        if compile_time_limit_s is None:
            compile_time_limit_s = language.compile_time_limit_s
        if compile_memory_mb is None and language.compile_memory_bytes:
            compile_memory_mb = language.compile_memory_bytes // MB
    return Limits(
        time_limit_s=float(default_time_limit_s if time_limit_s is None else time_limit_s),
        memory_mb=int(default_memory_mb if memory_mb is None else memory_mb),
        compile_time_limit_s=None if compile_time_limit_s is None else float(compile_time_limit_s),
        compile_memory_mb=None if compile_memory_mb is None else int(compile_memory_mb),
    )


def limits_of(problem: Any) -> Limits:
    """A program's limits: those the worker attached to the problem's row (`limits`), else the problem's own
    over the server's declared defaults."""
    found = getattr(problem, "limits", None)
    return found if isinstance(found, Limits) else limits_in_force(problem=problem)
