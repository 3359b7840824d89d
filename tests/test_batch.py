"""Batch rules without Docker: cache hits, one execution per distinct program, re-runs of wall timeouts."""

from __future__ import annotations

import uuid

from sandbox.executor import Job, Outcome
from sandbox.verdicts import Verdict
from service.worker.batch import execute_batch
from service.worker.cache import cache_key, cacheable, wall_timeout
from service.worker.queue import ClaimedSample

RUN = uuid.uuid4()


def sample(sample_id: int, program: str, cache: bool = True) -> ClaimedSample:
    key = cache_key(program, 3.0, 1 << 29, "sha256:image") if cache else None
    return ClaimedSample(sample_id, RUN, "p", program, 3.0, 1 << 29, 1, key)


class Recorder:
    """Stands in for the sandbox (an edge-case unit test; the real sandbox is tested under tests/sandbox)."""

    def __init__(self, verdicts: dict[str, tuple[Verdict, str | None]]) -> None:
        self.verdicts = verdicts
        self.batches: list[list[str]] = []

    def run_jobs(self, jobs: list[Job]) -> list[Outcome]:
        self.batches.append([job.program for job in jobs])
        return [Outcome(job.id, *self.verdicts[job.program][:1], timeout_kind=self.verdicts[job.program][1]) for job in jobs]


PASS, FAIL = (Verdict.PASSED, None), (Verdict.FAILED, None)


def test_identical_programs_run_once_and_the_rest_are_marked_cached() -> None:
    rec = Recorder({"a": PASS, "b": FAIL})
    claimed = [sample(1, "a"), sample(2, "a"), sample(3, "b"), sample(4, "a")]
    result = execute_batch(claimed, {}, rec.run_jobs)
    assert rec.batches == [["a", "b"]] and result.executed == 2
    assert [o.verdict for o in result.outcomes] == [Verdict.PASSED, Verdict.PASSED, Verdict.FAILED, Verdict.PASSED]
    assert result.cached_ids == {2, 4}
    assert [o.id for o in result.outcomes] == ["1", "2", "3", "4"]


def test_cache_hits_are_not_executed() -> None:
    rec = Recorder({"b": FAIL})
    hit = sample(1, "a")
    result = execute_batch([hit, sample(2, "b")], {hit.cache_key: Outcome("", Verdict.PASSED)}, rec.run_jobs)
    assert rec.batches == [["b"]]
    assert result.cached_ids == {1} and result.outcomes[0].verdict is Verdict.PASSED and result.outcomes[0].id == "1"


def test_with_the_cache_off_everything_runs() -> None:
    rec = Recorder({"a": PASS})
    result = execute_batch([sample(1, "a", cache=False), sample(2, "a", cache=False)], {}, rec.run_jobs)
    assert rec.batches == [["a", "a"]] and result.cached_ids == set()


def test_only_wall_clock_timeouts_wait_for_a_rerun_and_their_followers_with_them() -> None:
    rec = Recorder({"w": (Verdict.TIMEOUT, "wall"), "c": (Verdict.TIMEOUT, "cpu"), "a": PASS})
    claimed = [sample(1, "w"), sample(2, "c"), sample(3, "w"), sample(4, "a")]
    result = execute_batch(claimed, {}, rec.run_jobs)
    assert rec.batches == [["w", "c", "a"]]
    # Nothing is re-run here: the lane does it, so the claiming thread is free at once.
    assert [(r.job.program, [s.id for s in r.samples]) for r in result.reruns] == [("w", [1, 3])]
    assert result.pending_ids == {1, 3} and result.cached_ids == set()
    assert result.outcomes[1].verdict is Verdict.TIMEOUT and result.outcomes[3].verdict is Verdict.PASSED
    outcomes, cached, rerun = result.reruns[0].finish(Outcome("1", Verdict.PASSED))
    assert [(o.id, o.verdict) for o in outcomes] == [("1", Verdict.PASSED), ("3", Verdict.PASSED)]
    assert cached == {3} and rerun == {1, 3}  # the follower shares its leader's re-run verdict


def test_a_rerun_that_failed_in_the_sandbox_marks_nothing_cached() -> None:
    rerun = execute_batch([sample(1, "w"), sample(2, "w")], {}, Recorder({"w": (Verdict.TIMEOUT, "wall")}).run_jobs).reruns[0]
    _, cached, rerun_ids = rerun.finish(Outcome("1", Verdict.SANDBOX_ERROR, "the sandbox failed"))
    assert cached == set() and rerun_ids == {1, 2}


def test_one_rule_says_which_timeouts_depend_on_load() -> None:
    assert wall_timeout(Outcome("1", Verdict.TIMEOUT, timeout_kind="wall"))
    assert wall_timeout(Outcome("1", Verdict.TIMEOUT))  # unknown kind: treated as possibly load
    assert not wall_timeout(Outcome("1", Verdict.TIMEOUT, timeout_kind="cpu"))
    assert not wall_timeout(Outcome("1", Verdict.PASSED))
    # The cache follows the same rule: what a re-run may overturn is never stored.
    assert not cacheable(Outcome("1", Verdict.TIMEOUT, timeout_kind="wall"))
    assert cacheable(Outcome("1", Verdict.TIMEOUT, timeout_kind="cpu"))
    assert not cacheable(Outcome("1", Verdict.SANDBOX_ERROR))


def test_cache_key_covers_everything_that_decides_a_verdict() -> None:
    base = cache_key("p", 3.0, 1 << 29, "img1")
    assert base == cache_key("p", 3.0, 1 << 29, "img1")
    assert len({base, cache_key("p ", 3.0, 1 << 29, "img1"), cache_key("p", 2.0, 1 << 29, "img1"),
                cache_key("p", 3.0, 1 << 28, "img1"), cache_key("p", 3.0, 1 << 29, "img2")}) == 5
