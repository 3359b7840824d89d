"""How a claiming thread runs a claimed batch: in frames of about FRAME_TARGET_S, so that a cancelled run stops
between frames, an engine that stopped answering ends the rest as sandbox errors, and a batch that has run for
its time budget gives the programs it has not started back to the queue, for other threads (a batch is large so
that the database pays for one claim per many samples, and its programs run one after the other: a batch of
slow programs must not hold the rest of its run behind one thread).

The final verdicts of the frames so far are recorded before the next frame starts (it may run long), so a run's
progress counts samples as they finish, not batches. The last frame's verdicts, what is not final yet (a
wall-clock timeout waiting for its re-run, a sandbox error) and the samples that share a program are recorded
with the rest of the batch: a batch sent as one frame (the usual case once a thread knows the run's frame size)
is one write.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from sqlalchemy import Engine, select

from sandbox.executor import Job, Outcome, Sandbox
from sandbox.verdicts import Verdict
from service.core.models import Run
from service.core.states import RunState
from service.worker import queue
from service.worker.cache import wall_timeout

log = logging.getLogger(__name__)

FRAME_TARGET_S = 0.5
CANCEL_CHECK_EVERY_S = 0.5
# A frame never holds more programs than this (a claimed batch is at most Settings.batch_size, 500).
MAX_FRAME_JOBS = 512
ENGINE_DOWN_DETAIL = "not run: the Docker engine stopped answering during this batch"

runs = Run.__table__


@dataclass
class Skipped(Outcome):
    """A claimed program not run, because its run was cancelled or its batch ran past its time budget: released
    (queue.release_unrun), never recorded as a verdict."""

    verdict: Verdict = Verdict.SANDBOX_ERROR
    detail: str | None = "not run: the run was cancelled"


GIVEN_BACK_DETAIL = "not run: its batch ran past its time budget, so it went back to the queue"


# (samples, outcomes) -> None: record final verdicts now (Recorder.record with nothing cached or re-run).
RecordNow = Callable[[list[queue.ClaimedSample], list[Outcome]], None]


class Frames:
    """Runs a claimed batch's programs, as `execute_batch`'s `run_jobs`."""

    def __init__(
        self,
        sandbox: Sandbox,
        claimed: list[queue.ClaimedSample],
        *,
        shared: Callable[[], AbstractContextManager],
        engine_answers: Callable[[], bool],
        record: RecordNow,
        cancelled: Callable[[], bool],
        last: tuple[uuid.UUID, int] | None = None,
        budget_s: float | None = None,
        pinned: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`budget_s`: once the batch has run this long, the programs not started yet are given back (Skipped);
        at least one frame runs. `pinned`: on the sandbox's core (Sandbox.run)."""
        self.sandbox, self.pinned = sandbox, pinned
        self.budget_s, self.clock = budget_s, clock
        self.started = clock()
        self.shared, self.engine_answers, self.record_now, self.cancelled = shared, engine_answers, record, cancelled
        self.samples = {str(sample.id): sample for sample in claimed}
        self.run_id = claimed[0].run_id  # one (run, problem) group per claim
        self.engine_failed = False
        self.recorded: set[int] = set()
        self.held: list[Outcome] = []  # final verdicts not recorded yet
        # The first frame's size: where the thread's last batch of the same run ended (its programs take about
        # as long), else 1, doubling while frames are short. Fewer frames: fewer round trips and result writes.
        self.size = last[1] if last is not None and last[0] == self.run_id else 1

    def run(self, jobs: list[Job]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        size = max(1, min(self.size, len(jobs)))
        while len(outcomes) < len(jobs):
            rest = jobs[len(outcomes):]
            if self.cancelled():
                return outcomes + [Skipped(job.id) for job in rest]
            if self.engine_failed:
                return outcomes + [Outcome(job.id, Verdict.SANDBOX_ERROR, ENGINE_DOWN_DETAIL) for job in rest]
            if outcomes and self.budget_s is not None and self.clock() - self.started >= self.budget_s:
                return outcomes + [Skipped(job.id, detail=GIVEN_BACK_DETAIL) for job in rest]
            self._record_held()
            frame = rest[:size]
            started = self.clock()
            with self.shared():
                results, failed = run_safely(self.sandbox, frame, self.pinned)
            outcomes += results
            self.engine_failed = failed or (
                all(o.verdict is Verdict.SANDBOX_ERROR for o in results) and not self.engine_answers()
            )
            self.held += [o for o in results if o.verdict is not Verdict.SANDBOX_ERROR and not wall_timeout(o)]
            elapsed = self.clock() - started
            if elapsed < FRAME_TARGET_S / 2 and len(frame) == size:
                size = min(size * 2, MAX_FRAME_JOBS)
            elif elapsed > FRAME_TARGET_S:
                size = max(1, len(frame) // 2)
            self.size = size
        return outcomes

    def _record_held(self) -> None:
        """Record the final verdicts of the frames so far (before another frame, which may run long)."""
        if not self.held:
            return
        samples = [self.samples[o.id] for o in self.held]
        self.record_now(samples, self.held)
        self.recorded |= {sample.id for sample in samples}
        self.held = []


class ClaimSize:
    """How many samples of interactive runs a claiming thread asks for next: one while few wait, so that a program
    that sleeps holds no other caller's; twice as many (up to `most`) after a claim that came back full, a backlog in
    which the samples would wait anyway; and what the last claim found after one that came back short. A claim of
    several stays quick to let go: its first frame runs one program alone (unless the thread's last batch was of
    the same run, frames start at one) and the programs it has not started go back to the queue once it has run
    for its budget (Frames, PASSK_INTERACTIVE_BATCH_SECONDS)."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.size = 1

    def claimed(self, got: int) -> None:
        """After a claim that asked for `size` samples of interactive runs and got `got`."""
        self.size = min(self.size * 2, self.most) if got >= self.size else max(1, got)


class CancelCheck:
    """Whether a run was cancelled, asked of the database at most every CANCEL_CHECK_EVERY_S."""

    def __init__(self, engine: Engine, run_id: uuid.UUID, fresh: bool = False) -> None:
        self.engine = engine
        self.run_id = run_id
        # Just claimed: the run was not cancelled then. `fresh` asks the database at the first call.
        self.checked_at = float("-inf") if fresh else time.monotonic()
        self.cancelled = False

    def __call__(self) -> bool:
        if self.cancelled or time.monotonic() - self.checked_at < CANCEL_CHECK_EVERY_S:
            return self.cancelled
        self.checked_at = time.monotonic()
        try:
            with self.engine.connect() as connection:
                status = connection.execute(select(runs.c.status).where(runs.c.id == self.run_id)).scalar_one_or_none()
        except Exception as exc:  # the database is away: keep running, record_outcomes sorts it out
            log.warning("could not check whether run %s was cancelled: %s", self.run_id, exc)
            return False
        self.cancelled = status in (None, RunState.CANCELLED)
        return self.cancelled


def run_safely(sandbox: Sandbox, jobs: list[Job], pinned: bool = True) -> tuple[list[Outcome], bool]:
    """sandbox.run, and whether the sandbox itself failed.

    The executor turns a broken container into sandbox_error, but not an engine that stopped answering
    (the Docker SDK raises connection errors): then every job of the frame is a sandbox_error too,
    retried by record_outcomes, and never blamed on the program.
    """
    try:
        return sandbox.run(jobs, pinned), False
    except Exception as exc:
        log.error("the sandbox failed (%s): %d programs become sandbox errors", exc, len(jobs))
        discard(sandbox)
        return [Outcome(job.id, Verdict.SANDBOX_ERROR, f"the sandbox failed: {exc}") for job in jobs], True


def discard(sandbox: Sandbox) -> None:
    """Close the thread's sandbox container, even when the engine cannot be asked to remove it.

    SandboxContainer.close() lets the Docker SDK's connection errors through when the engine is down;
    the container is then forgotten here and removed by the sweep once the engine is back.
    """
    try:
        sandbox.close()
    except Exception as exc:
        log.warning("could not remove the sandbox container (%s); the sweep will", exc)
        sandbox.forget()
