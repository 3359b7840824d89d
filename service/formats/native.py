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
from service.core.limits import limits_of
from service.formats.program import Program


def memory_bytes(problem: Any) -> int:
    return limits_of(problem).memory_bytes


def compile_limits(problem: Any) -> tuple[float | None, int | None]:
    """The compile limits in force; None: the language's default."""
    limits = limits_of(problem)
    return limits.compile_time_limit_s, limits.compile_memory_bytes


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
    limit = limits_of(problem).time_limit_s
    spec = stdio_spec(
        language, completion, problem.cases, limit, problem.comparison or DEFAULT_POLICY,
        DEFAULT_ABS_TOL if problem.abs_tol is None else problem.abs_tol,
        DEFAULT_REL_TOL if problem.rel_tol is None else problem.rel_tol,
        "", memory_bytes(problem), *compile_limits(problem),
    )
    return as_program(spec, language.name, limit)
