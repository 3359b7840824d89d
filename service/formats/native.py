"""Programs in languages other than Python: the `native` job the supervisor compiles and runs.

The language module (sandbox/languages/<name>.py) says how to compile and run; this module adds the
problem's limits. The toolchain version is filled in by the worker (service/worker), which knows the
language's image, so that it is part of both the verdict cache key and the in-sandbox compile cache key.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from sandbox import languages
from sandbox.languages.jobs import stdio_spec, tests_spec
from sandbox.languages.split import TestSource
from sandbox.runtime.compare import DEFAULT_ABS_TOL, DEFAULT_POLICY, DEFAULT_REL_TOL
from sandbox.runtime.job import Native, to_dict
from service.formats.limits import case_time_limit_s
from service.formats.program import Program
from service.core.settings import get_settings


def memory_bytes(problem: Any) -> int:
    for value in (getattr(problem, "effective_memory_mb", None), getattr(problem, "memory_mb", None)):
        if value:
            return int(value) * 1024 * 1024
    return get_settings().default_memory_mb * 1024 * 1024


def compile_limits(problem: Any) -> tuple[float | None, int | None]:
    """The run's, else the dataset's compile limits (the worker's context row); None: the language's default."""
    time_s = getattr(problem, "compile_time_limit_s", None)
    memory_mb = getattr(problem, "compile_memory_mb", None)
    return time_s, int(memory_mb) * 1024 * 1024 if memory_mb else None


def as_program(spec: Native, language: str, time_limit_s: float | None = None) -> Program:
    """The program of a native job: its text is the job's canonical JSON (the verdict cache's program bytes)."""
    text = json.dumps(to_dict(spec), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return Program(text, time_limit_s, judged=False, language=language, native=spec)


def with_toolchain(program: Program, toolchain: str) -> Program:
    """The same program with its language's toolchain version (part of both cache keys)."""
    if program.native is None:
        return program
    return as_program(dataclasses.replace(program.native, toolchain=toolchain), program.language, program.time_limit_s)


def tests_program(problem: Any, source: TestSource, language_name: str) -> Program:
    """A self-checking problem: the judge (its tests) and the candidate (the completion) in two processes."""
    language = languages.get(language_name)
    return as_program(tests_spec(language, source, "", memory_bytes(problem), *compile_limits(problem)), language.name)


def stdio_program(problem: Any, completion: str, language_name: str) -> Program:
    language = languages.get(language_name)
    limit = case_time_limit_s(problem)
    spec = stdio_spec(
        language, completion, problem.cases, limit, problem.comparison or DEFAULT_POLICY,
        DEFAULT_ABS_TOL if problem.abs_tol is None else problem.abs_tol,
        DEFAULT_REL_TOL if problem.rel_tol is None else problem.rel_tol,
        "", memory_bytes(problem), *compile_limits(problem),
    )
    return as_program(spec, language.name, limit)
