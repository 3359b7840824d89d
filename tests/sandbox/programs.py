"""Helpers for running programs in the real sandbox (the fixtures are in tests/conftest.py)."""

from __future__ import annotations

from sandbox.executor import Job, Outcome, Sandbox
from service.problems import Program

MIB = 1024 * 1024


def run_one(box: Sandbox, program: str, time_limit_s: float = 3.0, memory_mb: int = 256) -> Outcome:
    return box.run([Job("job", program, time_limit_s, memory_mb * MIB)])[0]


def run_many(box: Sandbox, programs: list[str], time_limit_s: float = 3.0, memory_mb: int = 256) -> list[Outcome]:
    return box.run([Job(str(i), p, time_limit_s, memory_mb * MIB) for i, p in enumerate(programs)])


def run_programs(box: Sandbox, programs: list[Program], time_limit_s: float = 3.0, memory_mb: int = 256) -> list[Outcome]:
    """Programs as the worker builds them: their own time limit if they carry one, under their judge."""
    jobs = [Job(str(i), p.text, p.time_limit_s or time_limit_s, memory_mb * MIB, p.judged) for i, p in enumerate(programs)]
    return box.run(jobs)
