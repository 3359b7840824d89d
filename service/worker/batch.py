"""Turning a claimed batch into outcomes: cache hits, one run per distinct program, wall timeouts set aside.

A wall-clock timeout is not final: it goes to the worker's re-run lane (see service/worker/lane.py), so the
thread that claimed the batch records the rest at once and claims again instead of waiting for the re-run.
Pure orchestration over one callable, so the rules are unit-testable without Docker.
"""

from __future__ import annotations

import json

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from sandbox import languages
from sandbox.executor import Job, Outcome
from sandbox.runtime.job import Native, from_dict
from sandbox.verdicts import Verdict
from service.worker.cache import wall_timeout
from service.worker.queue import ClaimedSample


@dataclass
class Rerun:
    """A program whose wall-clock timeout waits for a re-run, and every sample of the batch that is that program."""

    job: Job
    samples: list[ClaimedSample]  # the one that ran first, then those that share its cache key

    @property
    def run_id(self) -> uuid.UUID:
        return self.samples[0].run_id

    @property
    def api_key_id(self) -> uuid.UUID | None:
        return self.samples[0].api_key_id

    def finish(self, outcome: Outcome) -> tuple[list[Outcome], set[int], set[int]]:
        """Outcomes aligned with `samples`, the ids marked cached and the ids marked re-run."""
        leader, followers = self.samples[0], self.samples[1:]
        outcomes = [replace(outcome, id=str(leader.id))] + [replace(outcome, id=str(s.id)) for s in followers]
        cached = {s.id for s in followers} if outcome.verdict is not Verdict.SANDBOX_ERROR else set()
        return outcomes, cached, {s.id for s in self.samples}


@dataclass
class BatchResult:
    outcomes: list[Outcome]  # aligned with the claimed samples; a pending re-run's samples hold its first outcome
    cached_ids: set[int] = field(default_factory=set)
    reruns: list[Rerun] = field(default_factory=list)
    executed: int = 0

    @property
    def pending_ids(self) -> set[int]:
        """Samples whose verdict is not final yet: they wait for their re-run."""
        return {s.id for rerun in self.reruns for s in rerun.samples}


def execute_batch(
    claimed: list[ClaimedSample],
    cache_hits: dict[str, Outcome],
    run_jobs: Callable[[list[Job]], list[Outcome]],
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

    jobs = [
        Job(str(s.id), s.program, s.time_limit_s, s.memory_bytes, s.judged, language=s.language,
            native=from_dict(Native, json.loads(s.program)) if languages.get(s.language).native else None)
        for s in to_run
    ]
    reruns: dict[int, Rerun] = {}
    for sample, job, outcome in zip(to_run, jobs, run_jobs(jobs) if jobs else [], strict=True):
        by_sample[sample.id] = outcome
        if wall_timeout(outcome):
            reruns[sample.id] = Rerun(job, [sample])
    result.executed = len(jobs)

    for sample, leader in followers:
        by_sample[sample.id] = replace(by_sample[leader.id], id=str(sample.id))
        if leader.id in reruns:
            reruns[leader.id].samples.append(sample)
        elif by_sample[leader.id].verdict is not Verdict.SANDBOX_ERROR:
            result.cached_ids.add(sample.id)
    result.reruns = list(reruns.values())
    result.outcomes = [by_sample[sample.id] for sample in claimed]
    return result
