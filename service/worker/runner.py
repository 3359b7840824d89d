"""The worker process: threads that claim batches, run them in sandboxes and record verdicts.

Nothing here lives in the API process. State is in Postgres only, so a worker
can be killed at any moment: its leases expire and other workers take over.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
import uuid
from datetime import timedelta
from types import FrameType

import docker
from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker
from tenacity import RetryCallState, RetryError, Retrying, retry_if_exception_type, wait_incrementing

from sandbox import languages
from sandbox.cgroups import docker_parent, ensure_parent
from sandbox.container import MAX_CONTAINER_AGE_S, owner_id, sweep
from sandbox.engine import connect
from sandbox.executor import Job, Outcome, Sandbox, SandboxSettings
from sandbox.images import ensure_language_image, toolchain_version
from sandbox.verdicts import Verdict
from service.core.database import make_sync_engine, make_sync_sessionmaker, transaction
from service.core.models import Run, Toolchain, WorkerHeartbeat
from service.core.settings import Settings
from service.core.states import RunState
from service.worker import queue, results
from service.worker.cache import lookup_cache, wall_timeout
from service.worker.batch import Rerun, execute_batch
from service.worker.gate import ExclusiveGate
from service.worker.lane import RerunQueue
from service.worker.wakeup import Wakeup, listen

log = logging.getLogger(__name__)

runs, heartbeats = Run.__table__, WorkerHeartbeat.__table__

SWEEP_EVERY_S = 60.0
RECLAIM_EVERY_S = 5.0
# A batch goes to the sandbox in frames of about this long, so that a cancelled run stops between frames.
FRAME_TARGET_S = 0.5
CANCEL_CHECK_EVERY_S = 0.5
# A frame never holds more programs than this (a claimed batch is at most Settings.batch_size, 500).
MAX_FRAME_JOBS = 512
ENGINE_RETRY_MAX_S = 5.0
# The maintenance loop's ping of the engine gives up after this long (a hung engine counts as down).
ENGINE_PROBE_TIMEOUT_S = 5.0
# A heartbeat keeps the worker listed as live for this many maintenance ticks.
HEARTBEAT_TICKS = 3
# The outcome given to the samples of a cancelled run that were claimed but not run.
SKIPPED_DETAIL = "not run: the run was cancelled"
ENGINE_DOWN_DETAIL = "not run: the Docker engine stopped answering during this batch"


class Worker:
    def __init__(self, settings: Settings, database_url: str, image: str, concurrency: int | None = None) -> None:
        self.settings = settings
        self.image = image
        self.concurrency = concurrency or settings.worker_concurrency
        self.owner = owner_id()
        self.engine = make_sync_engine(database_url, pool_size=self.concurrency + 2)
        self.sessions: sessionmaker[Session] = make_sync_sessionmaker(self.engine)
        self.stopping = threading.Event()
        self.processed = 0
        self.sandbox_errors = 0
        self.image_id = ""
        self.gate = ExclusiveGate(settings.rerun_exclusive_share)
        # language -> (image tag, image id, toolchain version), built or found on first use.
        self._images: dict[str, tuple[str, str, str]] = {}
        self._image_lock = threading.Lock()
        # Wall-clock timeouts waiting for the re-run lane; their samples stay leased (and in flight) meanwhile.
        self.reruns = RerunQueue()
        # Woken by LISTEN passk_samples; poll_interval_s is only the fallback.
        self.wakeup = Wakeup()
        self._claims = 0
        self._lock = threading.Lock()
        # Samples claimed and not yet recorded: the only leases the maintenance loop renews.
        self._in_flight: set[int] = set()
        # Per claiming thread: (run id, frame size) its last batch ended with; the next batch of that run starts there.
        self._frame_sizes = threading.local()
        # Cleared while the Docker engine does not answer: no thread claims work then, and the heartbeat
        # says so (GET /v1/status, passk_engine_up). A failed sandbox or the maintenance loop's ping clears it.
        self._engine_ok = threading.Event()
        self._engine_ok.set()
        self._probe: docker.DockerClient | None = None
        # Docker's cgroup_parent for the sandboxes (made, with its weight, in run()); None: the engine's default.
        self.cgroup_parent = docker_parent(settings.sandbox_cgroup_parent) if settings.sandbox_cgroup_parent else None

    # -- process life cycle

    def install_signal_handlers(self) -> None:
        def stop(signum: int, _frame: FrameType | None) -> None:
            log.warning("received %s: finishing current batches, then exiting", signal.Signals(signum).name)
            self.stopping.set()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)

    def run(self) -> None:
        """Block until stop() or a signal; every thread drains its batch before returning."""
        client = connect()
        self._probe = connect(timeout=ENGINE_PROBE_TIMEOUT_S)
        # Part of every cache key: a rebuilt sandbox never inherits verdicts from the old one.
        self.image_id = client.images.get(self.image).id
        try:
            removed = sweep(client, max_age_s=MAX_CONTAINER_AGE_S)
            if removed:
                log.warning("removed %d leftover sandbox containers", removed)
        except docker.errors.NotFound as exc:
            # A container went away between the listing and its inspection (another worker removed it):
            # nothing to sweep there, and the maintenance loop sweeps again within a minute.
            log.warning("the start-up sweep raced another removal (%s); the next sweep does it", exc)
        if self.settings.sandbox_cgroup_parent:
            ensure_parent(self.settings.sandbox_cgroup_parent, self.settings.sandbox_cgroup_cpu_shares)
        log.warning("worker %s: %d threads, image %s", self.owner, self.concurrency, self.image)
        threads = [threading.Thread(target=self._execute_loop, name=f"exec-{i}", daemon=True) for i in range(self.concurrency)]
        threads.append(threading.Thread(target=self._rerun_loop, name="rerun", daemon=True))
        threads.append(threading.Thread(target=self._maintenance_loop, name="maintenance", daemon=True))
        threads.append(threading.Thread(
            target=listen, args=(self.engine.url, self.wakeup, self.stopping), name="listen", daemon=True
        ))
        for thread in threads:
            thread.start()
        try:
            while not self.stopping.is_set():
                self.stopping.wait(0.5)
        finally:
            self.stopping.set()
            self.wakeup.notify()
            for thread in threads:
                thread.join()
            # Re-runs that claiming threads handed over after the lane had stopped.
            self._give_back(self.reruns.drain())
            self._forget_heartbeat()
            self.engine.dispose()

    def stop(self) -> None:
        self.stopping.set()

    # -- languages (sandbox/languages): one image each, built on demand the first time a dataset needs it

    def _image_key(self, language: str) -> tuple[str, str]:
        """(image id, toolchain version) of a language: part of the program and of its cache key."""
        if not languages.get(language).native:  # the sandbox image itself
            return self.image_id, ""
        _, image_id, version = self._language_image(language)
        return image_id, version

    def _language_tag(self, language: str) -> str:
        return self._language_image(language)[0]

    def _language_image(self, language: str) -> tuple[str, str, str]:
        with self._image_lock:
            if language not in self._images:
                client = connect()
                tag = ensure_language_image(
                    client, language, self.settings.sandbox_base_image, self.settings.deb_cache
                )
                version = toolchain_version(client, tag, language)
                self._images[language] = (tag, client.images.get(tag).id, version)
                with transaction(self.sessions) as session:
                    statement = insert(Toolchain).values(language=language, image=tag, version=version)
                    session.execute(
                        statement.on_conflict_do_update(
                            index_elements=[Toolchain.language],
                            set_={"image": tag, "version": version, "updated_at": func.now()},
                        )
                    )
                log.warning("language %s: image %s, %s", language, tag, version)
            return self._images[language]

    # -- threads

    def _new_sandbox(self) -> Sandbox:
        cfg = self.settings
        return Sandbox(
            connect(),
            SandboxSettings(
                image=self.image, images=self._language_tag, cpus=cfg.sandbox_cpus, pids=cfg.sandbox_pids,
                scratch_bytes=cfg.sandbox_scratch_mb * 1024 * 1024, excerpt_bytes=cfg.output_excerpt_bytes,
                owner=self.owner, cpu_shares=cfg.sandbox_cpu_shares, cgroup_parent=self.cgroup_parent,
            ),
        )

    def _execute_loop(self) -> None:
        cfg = self.settings
        sandbox = self._new_sandbox()
        try:
            while not self.stopping.is_set():
                try:
                    mark = self.wakeup.mark()
                    if not self._execute_one(sandbox) and not self.stopping.is_set():
                        self.wakeup.wait(mark, cfg.poll_interval_s)
                except (OperationalError, DBAPIError) as exc:
                    # The database went away: our leases will expire or be renewed once it is back.
                    log.error("database error in %s: %s", threading.current_thread().name, exc)
                    self.stopping.wait(2.0)
                except Exception:
                    # Never let the thread die: a dead thread's claimed samples would wait for a lease to expire.
                    log.exception("unexpected error in %s", threading.current_thread().name)
                    _discard(sandbox)
                    self.stopping.wait(2.0)
        finally:
            stats = sandbox.settings.stats
            if stats.get("compiles"):
                log.warning("%s: compiles=%d compile_hits=%d pch_builds=%d pch_hits=%d pch_prebuilt=%d pch_rejected=%d",
                            threading.current_thread().name, stats["compiles"], stats["compile_hits"],
                            stats.get("pch_builds", 0), stats.get("pch_hits", 0), stats.get("pch_prebuilt", 0),
                            stats.get("pch_rejected", 0))
            _discard(sandbox)

    def _execute_one(self, sandbox: Sandbox) -> bool:
        cfg = self.settings
        if not self._engine_ok.is_set():
            self._wait_for_engine(sandbox)
            if self.stopping.is_set():
                return True
        with self._lock:
            self._claims += 1
            # Interactive runs first, except every batch_share-th claim: batch runs never starve.
            first = "batch" if self._claims % cfg.batch_share == 0 else "interactive"
        with transaction(self.sessions) as session:
            claimed = queue.claim_batch(
                session, self.owner, cfg.batch_size, cfg.lease_seconds, cfg.default_time_limit_s,
                cfg.default_memory_mb, self._image_key, first,
            )
            hits = lookup_cache(session, (s.cache_key for s in claimed if s.cache_key))
        if not claimed:
            return False
        ids = {sample.id for sample in claimed}
        handed_off: set[int] = set()
        with self._lock:
            self._in_flight |= ids
        try:
            handed_off = self._execute_claimed(sandbox, claimed, hits)
        finally:
            with self._lock:
                self._in_flight -= ids - handed_off  # the re-run lane's samples stay in flight until it records them
        return True

    def _execute_claimed(
        self, sandbox: Sandbox, claimed: list[queue.ClaimedSample], hits: dict[str, Outcome]
    ) -> set[int]:
        """Run and record a claimed batch; returns the samples handed to the re-run lane."""
        frames = _Frames(self, sandbox, claimed, getattr(self._frame_sizes, "last", None))
        result = execute_batch(claimed, hits, frames.run)
        self._frame_sizes.last = (frames.run_id, frames.size)
        pending = result.pending_ids
        skipped = {
            sample.id for sample, outcome in zip(claimed, result.outcomes, strict=True)
            if outcome.verdict is Verdict.SANDBOX_ERROR and outcome.detail == SKIPPED_DETAIL
        }
        ran = [
            (sample, outcome) for sample, outcome in zip(claimed, result.outcomes, strict=True)
            if sample.id not in skipped and sample.id not in pending
        ]
        rest = [(sample, outcome) for sample, outcome in ran if sample.id not in frames.recorded]
        self._record([sample for sample, _ in rest], [outcome for _, outcome in rest], result.cached_ids, set(), skipped)
        errors = sum(1 for _, outcome in ran if outcome.verdict is Verdict.SANDBOX_ERROR)
        with self._lock:
            self.processed += len(ran)
            self.sandbox_errors += errors
        if skipped:
            log.warning("run %s was cancelled: released %d claimed samples unrun", claimed[0].run_id, len(skipped))
        # Last, so that an error above leaves nothing in the lane that this thread no longer counts in flight.
        for rerun in result.reruns:
            self.reruns.put(rerun)
        if frames.engine_failed or (errors and not self._engine_answers(sandbox)):
            # Claiming more now would burn every retry of the queue's samples in seconds: wait for the engine.
            self._engine_ok.clear()
            self._wait_for_engine(sandbox)
        return pending

    # -- the re-run lane

    def _rerun_loop(self) -> None:
        """Re-run wall-clock timeouts one at a time in a sandbox of their own, beside the claiming threads."""
        sandbox = self._new_sandbox()
        try:
            while not self.stopping.is_set():
                rerun = self.reruns.get(timeout_s=0.5)
                if rerun is None:
                    continue
                try:
                    self._rerun(sandbox, rerun)
                except (OperationalError, DBAPIError) as exc:
                    log.error("database error in the re-run lane: %s", exc)
                    self.stopping.wait(2.0)
                except Exception:
                    log.exception("unexpected error in the re-run lane")
                    _discard(sandbox)
                    self.stopping.wait(2.0)
        finally:
            _discard(sandbox)
            self._give_back(self.reruns.drain())

    def _rerun(self, sandbox: Sandbox, rerun: Rerun) -> None:
        ids = {sample.id for sample in rerun.samples}
        try:
            if _CancelCheck(self, rerun.run_id, fresh=True)():
                self._record([], [], set(), set(), ids)
                return
            # A bounded window alone (see gate.py): the claiming threads start no new frame during it.
            with self.gate.exclusive(rerun.job.time_limit_s + 1.0) as alone_s:
                outcome = _run_safely(sandbox, [rerun.job])[0][0]
            log.info("re-ran sample %s (%.1f s alone): %s", rerun.job.id, alone_s, outcome.verdict.value)
            outcomes, cached_ids, rerun_ids = rerun.finish(outcome)
            self._record(rerun.samples, outcomes, cached_ids, rerun_ids)
            with self._lock:
                self.processed += len(rerun.samples)
                self.sandbox_errors += outcome.verdict is Verdict.SANDBOX_ERROR
        finally:
            with self._lock:
                self._in_flight -= ids

    def _give_back(self, reruns: list[Rerun]) -> None:
        """A stopping worker's re-runs that never started: queued again for any worker, the attempt not counted."""
        ids = {sample.id for rerun in reruns for sample in rerun.samples}
        if not ids:
            return
        try:
            with transaction(self.sessions) as session:
                queue.requeue(session, self.owner, ids)
            log.warning("stopping: gave back %d samples whose re-run had not started", len(ids))
        except Exception as exc:  # their leases expire and they are reclaimed
            log.warning("could not give back %d samples waiting for a re-run: %s", len(ids), exc)
        finally:
            with self._lock:
                self._in_flight -= ids

    def _record(
        self,
        claimed: list[queue.ClaimedSample],
        outcomes: list[Outcome],
        cached_ids: set[int],
        rerun_ids: set[int],
        skipped: set[int] = frozenset(),  # type: ignore[assignment]
    ) -> None:
        # Results are worth keeping until the database is back: losing them means running the programs again.
        # Only a stopping worker gives up; its leases then expire and the samples run elsewhere.
        def failed(state: RetryCallState) -> None:
            log.error(
                "could not record %d results (attempt %d): %s",
                len(claimed) + len(skipped), state.attempt_number, state.outcome.exception() if state.outcome else None,
            )

        retrying = Retrying(
            retry=retry_if_exception_type((OperationalError, DBAPIError)),
            stop=lambda state: self.stopping.is_set() and state.attempt_number >= 5,
            wait=wait_incrementing(start=2.0, increment=1.0, max=5.0),  # 2, 3, 4, 5, 5, ... s
            after=failed,
        )
        try:
            for attempt in retrying:
                with attempt, transaction(self.sessions) as session:
                    recorded = results.record_outcomes(
                        session, self.owner, claimed, outcomes, self.settings.max_attempts, cached_ids, rerun_ids
                    )
                    queue.release_cancelled(session, self.owner, skipped)
        except RetryError:
            log.error("gave up recording %d results; their leases will expire and they will run again", len(claimed))
            return
        try:
            with transaction(self.sessions) as session:
                results.end_runs(session, recorded)
        except (OperationalError, DBAPIError) as exc:  # the maintenance thread's sweep ends them
            log.error("could not check whether runs %s ended: %s", recorded, exc)

    # -- the Docker engine

    def _engine_answers(self, sandbox: Sandbox) -> bool:
        try:
            sandbox.client.ping()
            return True
        except Exception:
            return False

    def _probe_engine(self) -> None:
        """Stop claiming as soon as the engine stops answering, before a sandbox has to fail on it."""
        if self._probe is None or not self._engine_ok.is_set():
            return  # a claiming thread is already waiting for it
        try:
            self._probe.ping()
        except Exception as exc:
            log.error("the Docker engine does not answer (%s): claiming nothing until it does", exc)
            self._engine_ok.clear()

    def _wait_for_engine(self, sandbox: Sandbox) -> None:
        """Block until the engine answers a ping (or the worker stops), then sweep what it left behind."""
        delay = 0.5
        log.error("claiming nothing until the Docker engine answers")
        while not self._engine_answers(sandbox):
            if self.stopping.wait(delay):
                return
            delay = min(delay * 2, ENGINE_RETRY_MAX_S)
        try:
            # Containers that died with the engine could not be removed then; they go now.
            removed = sweep(sandbox.client, max_age_s=MAX_CONTAINER_AGE_S)
            log.warning("the Docker engine answers; removed %d dead sandbox containers", removed)
        except Exception:
            log.exception("sweep after the engine came back failed")
        self._engine_ok.set()

    # -- the heartbeat

    def _heartbeat(self, tick_s: float) -> None:
        with self._lock:
            processed, errors = self.processed, self.sandbox_errors
        with transaction(self.sessions) as session:
            now = func.now()
            row = insert(heartbeats).values(
                owner=self.owner, hostname=socket.gethostname()[:200], pid=os.getpid(), threads=self.concurrency,
                started_at=now, seen_at=now, expires_at=now + timedelta(seconds=tick_s * HEARTBEAT_TICKS + 1.0),
                processed=processed, sandbox_errors=errors, engine_up=self._engine_ok.is_set(),
            )
            session.execute(
                row.on_conflict_do_update(
                    index_elements=[heartbeats.c.owner],
                    set_={
                        "seen_at": now, "expires_at": row.excluded.expires_at,
                        "processed": row.excluded.processed, "sandbox_errors": row.excluded.sandbox_errors,
                        "engine_up": row.excluded.engine_up,
                    },
                )
            )
            session.execute(delete(heartbeats).where(heartbeats.c.expires_at < func.now() - timedelta(days=1)))

    def _forget_heartbeat(self) -> None:
        try:
            with transaction(self.sessions) as session:
                session.execute(delete(heartbeats).where(heartbeats.c.owner == self.owner))
        except Exception as exc:
            log.warning("could not remove this worker's heartbeat (it expires on its own): %s", exc)

    def _maintenance_loop(self) -> None:
        cfg = self.settings
        next_sweep = time.monotonic() + SWEEP_EVERY_S
        next_reclaim = 0.0
        tick = min(cfg.lease_seconds / 4, RECLAIM_EVERY_S)
        try:
            self._heartbeat(tick)
        except Exception as exc:
            log.error("heartbeat failed: %s", exc)
        while not self.stopping.wait(tick):
            try:
                self._probe_engine()
                with self._lock:
                    in_flight = set(self._in_flight)
                with transaction(self.sessions) as session:
                    queue.renew_leases(session, self.owner, cfg.lease_seconds, in_flight)
                self._heartbeat(tick)
                if time.monotonic() >= next_reclaim:
                    with transaction(self.sessions) as session:
                        reclaimed = queue.reclaim_expired(session, cfg.max_attempts)
                    with transaction(self.sessions) as session:  # runs a reclaim or a lost worker finished
                        results.end_runs(session)
                    if reclaimed:
                        log.warning("reclaimed %d samples from lost workers", reclaimed)
                    next_reclaim = time.monotonic() + RECLAIM_EVERY_S
                if time.monotonic() >= next_sweep:
                    sweep(connect(), max_age_s=MAX_CONTAINER_AGE_S)
                    next_sweep = time.monotonic() + SWEEP_EVERY_S
            except Exception:
                log.exception("maintenance failed; will try again")


class _Frames:
    """Runs a claimed batch's programs in frames of about FRAME_TARGET_S, as `execute_batch`'s `run_jobs`.

    Between frames, a cancelled run stops (the rest end as skipped) and an engine that stopped answering
    ends the rest as sandbox errors. The final verdicts of the frames so far are recorded before the next
    frame starts (it may run long), so a run's progress counts samples as they finish, not batches. The last
    frame's verdicts, what is not final yet (a wall-clock timeout waiting for its re-run, a sandbox error) and
    the samples that share a program are recorded with the rest of the batch: a batch sent as one frame (the
    usual case once a thread knows the run's frame size) is one write.
    """

    def __init__(
        self, worker: Worker, sandbox: Sandbox, claimed: list[queue.ClaimedSample],
        last: tuple[uuid.UUID, int] | None = None,
    ) -> None:
        self.worker, self.sandbox = worker, sandbox
        self.samples = {str(sample.id): sample for sample in claimed}
        self.run_id = claimed[0].run_id  # one (run, problem) group per claim
        self.cancelled = _CancelCheck(worker, self.run_id)
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
                return outcomes + [Outcome(job.id, Verdict.SANDBOX_ERROR, SKIPPED_DETAIL) for job in rest]
            if self.engine_failed:
                return outcomes + [Outcome(job.id, Verdict.SANDBOX_ERROR, ENGINE_DOWN_DETAIL) for job in rest]
            self._record_held()
            frame = rest[:size]
            started = time.monotonic()
            with self.worker.gate.shared():
                results, failed = _run_safely(self.sandbox, frame)
            outcomes += results
            self.engine_failed = failed or (
                all(o.verdict is Verdict.SANDBOX_ERROR for o in results) and not self.worker._engine_answers(self.sandbox)
            )
            self.held += [o for o in results if o.verdict is not Verdict.SANDBOX_ERROR and not wall_timeout(o)]
            elapsed = time.monotonic() - started
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
        self.worker._record(samples, self.held, set(), set())
        self.recorded |= {sample.id for sample in samples}
        self.held = []


class _CancelCheck:
    """Whether a run was cancelled, asked of the database at most every CANCEL_CHECK_EVERY_S."""

    def __init__(self, worker: Worker, run_id: uuid.UUID, fresh: bool = False) -> None:
        self.worker = worker
        self.run_id = run_id
        # Just claimed: the run was not cancelled then. `fresh` asks the database at the first call.
        self.checked_at = float("-inf") if fresh else time.monotonic()
        self.cancelled = False

    def __call__(self) -> bool:
        if self.cancelled or time.monotonic() - self.checked_at < CANCEL_CHECK_EVERY_S:
            return self.cancelled
        self.checked_at = time.monotonic()
        try:
            with self.worker.engine.connect() as connection:
                status = connection.execute(select(runs.c.status).where(runs.c.id == self.run_id)).scalar_one_or_none()
        except Exception as exc:  # the database is away: keep running, record_outcomes sorts it out
            log.warning("could not check whether run %s was cancelled: %s", self.run_id, exc)
            return False
        self.cancelled = status in (None, RunState.CANCELLED)
        return self.cancelled


def _run_safely(sandbox: Sandbox, jobs: list[Job]) -> tuple[list[Outcome], bool]:
    """sandbox.run, and whether the sandbox itself failed.

    The executor turns a broken container into sandbox_error, but not an engine that stopped answering
    (the Docker SDK raises connection errors): then every job of the frame is a sandbox_error too,
    retried by record_outcomes, and never blamed on the program.
    """
    try:
        return sandbox.run(jobs), False
    except Exception as exc:
        log.error("the sandbox failed (%s): %d programs become sandbox errors", exc, len(jobs))
        _discard(sandbox)
        return [Outcome(job.id, Verdict.SANDBOX_ERROR, f"the sandbox failed: {exc}") for job in jobs], True


def _discard(sandbox: Sandbox) -> None:
    """Close the thread's sandbox container, even when the engine cannot be asked to remove it.

    SandboxContainer.close() lets the Docker SDK's connection errors through when the engine is down;
    the container is then forgotten here and removed by the sweep once the engine is back.
    """
    try:
        sandbox.close()
    except Exception as exc:
        log.warning("could not remove the sandbox container (%s); the sweep will", exc)
        sandbox.forget()
