"""Turning a claimed batch into outcomes: cache hits, one run per distinct program, re-runs of wall timeouts.

Pure orchestration over two callables, so the rules are unit-testable without Docker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from sandbox.executor import Job, Outcome
from sandbox.verdicts import Verdict
from service.worker.queue import ClaimedSample


@dataclass
class BatchResult:
    outcomes: list[Outcome]  # aligned with the claimed samples
    cached_ids: set[int] = field(default_factory=set)
    rerun_ids: set[int] = field(default_factory=set)
    executed: int = 0


def needs_rerun(outcome: Outcome) -> bool:
    # A CPU-time timeout measures the program itself; a wall-clock one may only measure the machine's load.
    return outcome.verdict is Verdict.TIMEOUT and outcome.timeout_kind != "cpu"


def execute_batch(
    claimed: list[ClaimedSample],
    cache_hits: dict[str, Outcome],
    run_jobs: Callable[[list[Job]], list[Outcome]],
    run_alone: Callable[[Job], Outcome],
) -> BatchResult:
    result = BatchResult(outcomes=[])
    by_sample: dict[int, Outcome] = {}
    leaders: dict[str, ClaimedSample] = {}  # first sample of each distinct cache key
    followers: list[tuple[ClaimedSample, ClaimedSample]] = []
    to_run: list[ClaimedSample] = []
    for sample in claimed:
        key = sample.cache_key
        if key is not None and key in cache_hits:
            by_sample[sample.id] = replace(cache_hits[key], id=str(sample.id))
            result.cached_ids.add(sample.id)
        elif key is not None and key in leaders:
            followers.append((sample, leaders[key]))
        else:
            if key is not None:
                leaders[key] = sample
            to_run.append(sample)

    jobs = [Job(str(s.id), s.program, s.time_limit_s, s.memory_bytes, s.judged) for s in to_run]
    for job, outcome in zip(jobs, run_jobs(jobs) if jobs else [], strict=True):
        if needs_rerun(outcome):
            outcome = run_alone(job)
            result.rerun_ids.add(int(job.id))
        by_sample[int(job.id)] = outcome
    result.executed = len(jobs)

    for sample, leader in followers:
        by_sample[sample.id] = replace(by_sample[leader.id], id=str(sample.id))
        if by_sample[leader.id].verdict is not Verdict.SANDBOX_ERROR:
            result.cached_ids.add(sample.id)
        if leader.id in result.rerun_ids:
            result.rerun_ids.add(sample.id)
    result.outcomes = [by_sample[sample.id] for sample in claimed]
    return result
