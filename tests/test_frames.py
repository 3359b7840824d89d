"""How a worker thread cuts a claimed batch into frames (service/worker/runner.py `_Frames`): unit tests with a
stand-in sandbox and worker, no Docker or database."""

from __future__ import annotations

import contextlib
import uuid
from types import SimpleNamespace


from sandbox.executor import Job, Outcome
from sandbox.verdicts import Verdict
from service.worker.runner import _Frames


class _Sandbox:
    """Answers every job at once with a pass, and remembers the size of each frame it was sent."""

    def __init__(self) -> None:
        self.frames: list[int] = []

    def run(self, jobs: list[Job]) -> list[Outcome]:
        self.frames.append(len(jobs))
        return [Outcome(job.id, Verdict.PASSED) for job in jobs]


class _Worker:
    def __init__(self) -> None:
        self.gate = SimpleNamespace(shared=contextlib.nullcontext)
        self.recorded: list[int] = []

    def _record(self, samples: list, outcomes: list, cached: set, reruns: set) -> None:
        self.recorded.append(len(samples))

    def _engine_answers(self, _sandbox: object) -> bool:
        return True


def _batch(run_id: uuid.UUID, n: int, first_id: int = 1) -> tuple[list[SimpleNamespace], list[Job]]:
    claimed = [SimpleNamespace(id=first_id + i, run_id=run_id) for i in range(n)]
    return claimed, [Job(str(sample.id), "pass", 3.0, 1 << 28) for sample in claimed]


def test_a_first_batch_starts_with_one_program_and_doubles_while_frames_are_short() -> None:
    worker, sandbox = _Worker(), _Sandbox()
    claimed, jobs = _batch(uuid.uuid4(), 16)
    frames = _Frames(worker, sandbox, claimed)  # type: ignore[arg-type]
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
    first = _Frames(worker, sandbox, claimed)  # type: ignore[arg-type]
    first.run(jobs)
    sandbox.frames.clear()
    claimed, jobs = _batch(run_id, 16, first_id=100)
    second = _Frames(worker, sandbox, claimed, (first.run_id, first.size))  # type: ignore[arg-type]
    second.run(jobs)
    assert sandbox.frames == [16]
    assert second.size == 32
    assert worker.recorded == [1, 2, 4, 8] and len(second.held) == 16  # one frame: one write, by the caller


def test_a_batch_of_another_run_starts_again_with_one_program() -> None:
    worker, sandbox = _Worker(), _Sandbox()
    claimed, jobs = _batch(uuid.uuid4(), 4)
    frames = _Frames(worker, sandbox, claimed, (uuid.uuid4(), 64))  # type: ignore[arg-type]
    frames.run(jobs)
    assert sandbox.frames == [1, 2, 1]
