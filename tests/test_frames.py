"""How a worker thread cuts a claimed batch into frames (service/worker/frames.py): unit tests with a stand-in
sandbox and recorder passed in, no Docker or database."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable
from types import SimpleNamespace


from sandbox.executor import Job, Outcome
from sandbox.verdicts import Verdict
from service.worker.frames import GIVEN_BACK_DETAIL, ClaimSize, Frames, Skipped


class _Sandbox:
    """Answers every job at once with a pass, and remembers the size of each frame it was sent."""

    def __init__(self) -> None:
        self.frames: list[int] = []
        self.pinned: list[bool] = []

    def run(self, jobs: list[Job], pinned: bool = True) -> list[Outcome]:
        self.frames.append(len(jobs))
        self.pinned.append(pinned)
        return [Outcome(job.id, Verdict.PASSED) for job in jobs]


class _Worker:
    """What a worker passes a batch's frames: the re-run gate's shared side, the engine check, the recorder."""

    def __init__(self, cancelled: bool = False) -> None:
        self.recorded: list[int] = []
        self.is_cancelled = cancelled

    def record(self, samples: list, outcomes: list) -> None:
        self.recorded.append(len(samples))

    def frames(self, sandbox: _Sandbox, claimed: list, last: tuple[uuid.UUID, int] | None = None,
               budget_s: float | None = None, clock: Callable[[], float] = time.monotonic,
               pinned: bool = True) -> Frames:
        return Frames(sandbox, claimed, shared=contextlib.nullcontext, engine_answers=lambda: True,  # type: ignore[arg-type]
                      record=self.record, cancelled=lambda: self.is_cancelled, last=last, budget_s=budget_s,
                      clock=clock, pinned=pinned)


def _batch(run_id: uuid.UUID, n: int, first_id: int = 1) -> tuple[list[SimpleNamespace], list[Job]]:
    claimed = [SimpleNamespace(id=first_id + i, run_id=run_id) for i in range(n)]
    return claimed, [Job(str(sample.id), "pass", 3.0, 1 << 28) for sample in claimed]


def test_a_first_batch_starts_with_one_program_and_doubles_while_frames_are_short() -> None:
    worker, sandbox = _Worker(), _Sandbox()
    claimed, jobs = _batch(uuid.uuid4(), 16)
    frames = worker.frames(sandbox, claimed)
    outcomes = frames.run(jobs)
    assert [o.id for o in outcomes] == [job.id for job in jobs]
    assert sandbox.frames == [1, 2, 4, 8, 1]
    assert frames.size == 16  # the last frame was a remainder: it neither grows nor shrinks the size
    # Each frame's final verdicts are written before the next frame starts (it might run long); the last
    # frame's go with the rest of the batch (written by the caller).
    assert worker.recorded == [1, 2, 4, 8]
    assert len(frames.recorded) == 15 and [o.id for o in frames.held] == [jobs[-1].id]


def test_the_next_batch_of_the_same_run_starts_at_the_size_the_last_one_reached() -> None:
    worker, sandbox = _Worker(), _Sandbox()
    run_id = uuid.uuid4()
    claimed, jobs = _batch(run_id, 16)
    first = worker.frames(sandbox, claimed)
    first.run(jobs)
    sandbox.frames.clear()
    claimed, jobs = _batch(run_id, 16, first_id=100)
    second = worker.frames(sandbox, claimed, (first.run_id, first.size))
    second.run(jobs)
    assert sandbox.frames == [16]
    assert second.size == 32
    assert worker.recorded == [1, 2, 4, 8] and len(second.held) == 16  # one frame: one write, by the caller


def test_a_batch_of_another_run_starts_again_with_one_program() -> None:
    worker, sandbox = _Worker(), _Sandbox()
    claimed, jobs = _batch(uuid.uuid4(), 4)
    frames = worker.frames(sandbox, claimed, (uuid.uuid4(), 64))
    frames.run(jobs)
    assert sandbox.frames == [1, 2, 1]


def test_a_cancelled_run_skips_the_rest_as_skipped_outcomes() -> None:
    worker, sandbox = _Worker(cancelled=True), _Sandbox()
    claimed, jobs = _batch(uuid.uuid4(), 3)
    outcomes = worker.frames(sandbox, claimed).run(jobs)
    assert sandbox.frames == [] and all(isinstance(o, Skipped) for o in outcomes)
    assert [o.id for o in outcomes] == [job.id for job in jobs]


class _SlowSandbox(_Sandbox):
    """Every program takes `seconds` of the clock passed to Frames."""

    def __init__(self, clock: list[float], seconds: float) -> None:
        super().__init__()
        self.clock, self.seconds = clock, seconds

    def run(self, jobs: list[Job], pinned: bool = True) -> list[Outcome]:
        self.clock[0] += self.seconds * len(jobs)
        return super().run(jobs)


def _budgeted(seconds_each: float, programs: int, budget_s: float) -> tuple[_Worker, _SlowSandbox, Frames, list[Outcome]]:
    """A batch of `programs` that take `seconds_each` of a stand-in clock, run under `budget_s`."""
    now = [100.0]
    worker, sandbox = _Worker(), _SlowSandbox(now, seconds_each)
    claimed, jobs = _batch(uuid.uuid4(), programs)
    frames = worker.frames(sandbox, claimed, budget_s=budget_s, clock=lambda: now[0])
    outcomes = frames.run(jobs)
    assert [o.id for o in outcomes] == [job.id for job in jobs]
    return worker, sandbox, frames, outcomes


def test_a_batch_past_its_time_budget_gives_back_the_programs_it_has_not_started() -> None:
    worker, sandbox, frames, outcomes = _budgeted(4.0, 16, budget_s=10.0)
    # 4 s programs: frames of one; the third starts at 8 s, within the budget, and ends at 12 s, past it.
    assert sandbox.frames == [1, 1, 1]
    assert [o.verdict for o in outcomes[:3]] == [Verdict.PASSED] * 3
    given_back = outcomes[3:]
    assert all(isinstance(o, Skipped) and o.detail == GIVEN_BACK_DETAIL for o in given_back) and len(given_back) == 13
    assert worker.recorded == [1, 1] and len(frames.held) == 1  # the finished ones are recorded as usual


def test_a_batch_runs_at_least_one_frame_whatever_its_budget() -> None:
    _, sandbox, _, outcomes = _budgeted(0.01, 4, budget_s=0.001)
    assert sandbox.frames == [1] and outcomes[0].verdict is Verdict.PASSED
    assert all(isinstance(o, Skipped) for o in outcomes[1:])


def test_interactive_claims_start_at_one_and_double_while_they_come_back_full() -> None:
    sizes = ClaimSize(most=8)
    asked = []
    for _ in range(5):
        asked.append(sizes.size)
        sizes.claimed(sizes.size)  # a backlog: every claim full
    assert asked == [1, 2, 4, 8, 8]


def test_an_interactive_claim_that_comes_back_short_sets_the_next_size_to_what_it_found() -> None:
    sizes = ClaimSize(most=8)
    for _ in range(3):
        sizes.claimed(sizes.size)
    assert sizes.size == 8
    sizes.claimed(3)  # the backlog is draining
    assert sizes.size == 3
    sizes.claimed(0)  # nothing waits: back to one
    assert sizes.size == 1


def test_every_frame_of_a_batch_runs_pinned_or_not_as_the_batch_was_told() -> None:
    for pinned in (True, False):
        worker, sandbox = _Worker(), _Sandbox()
        claimed, jobs = _batch(uuid.uuid4(), 5)
        worker.frames(sandbox, claimed, pinned=pinned).run(jobs)
        assert len(sandbox.pinned) > 1 and set(sandbox.pinned) == {pinned}
