"""The worker process: threads that claim batches, run them in sandboxes and record verdicts.

Its parts: claiming threads (here) run claimed batches in frames (frames.py) and write verdicts through the
recorder (recorder.py); the re-run lane (lane.py, gate.py) re-runs wall-clock timeouts alone; the maintenance
thread renews leases, reclaims lost ones and beats the heartbeat (heartbeat.py), and never calls Docker: the
engine watch (engine.py) probes the engine and sweeps dead containers in a thread of its own; images.py builds
each language's image on first use.

Nothing here lives in the API process. State is in Postgres only, so a worker
can be killed at any moment: its leases expire and other workers take over.
"""

from __future__ import annotations

import logging
import os
import random
import signal
import threading
import time
from types import FrameType

import docker
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from sandbox.cgroups import docker_parent, ensure_parent
from sandbox.container import MAX_CONTAINER_AGE_S, owner_id, sweep
from sandbox.engine import connect
from sandbox.executor import Outcome, Sandbox, SandboxSettings
from sandbox.runtime.builds import STATS as BUILD_STATS
from sandbox.verdicts import Verdict
from service.core.database import make_sync_sessionmaker, make_worker_engine, transaction
from service.core.settings import Settings
from service.core.states import RunPriority
from service.worker import queue, results, retention
from service.worker.batch import Rerun, execute_batch
from service.worker.cache import lookup_cache
from service.worker.engine import EngineWatch
from service.worker.frames import GIVEN_BACK_DETAIL, CancelCheck, ClaimSize, Frames, Skipped, discard, run_safely
from service.worker.gate import ExclusiveGate
from service.worker.heartbeat import Heartbeat
from service.worker.images import ImageNotReady, LanguageImages
from service.worker.lane import RerunQueue
from service.worker.recorder import Recorder
from service.worker.wakeup import Wakeup, listen

log = logging.getLogger(__name__)

# How often a worker prunes stream runs past their retention (service/worker/retention.py).
PRUNE_EVERY_S = 300.0
RECLAIM_EVERY_S = 5.0


def sandbox_cores(threads: int, usable: list[int]) -> list[int | None]:
    """The core each claiming thread's sandbox runs its programs on (Settings.sandbox_pinning): thread i on the
    i-th of the `usable` cores, round them again past the last; None for all when none is given."""
    return [usable[i % len(usable)] if usable else None for i in range(threads)]

class Worker:
    def __init__(self, settings: Settings, database_url: str, image: str, concurrency: int | None = None) -> None:
        self.settings = settings
        self.image = image
        self.concurrency = concurrency or settings.worker_concurrency
        self.owner = owner_id()
        self.engine = make_worker_engine(database_url, pool_size=self.concurrency + settings.interactive_sandboxes + 2)
        self.sessions: sessionmaker[Session] = make_sync_sessionmaker(self.engine)
        self.stopping = threading.Event()
        self.processed = 0
        self.sandbox_errors = 0
        self.gate = ExclusiveGate(settings.rerun_exclusive_share)
        self.images = LanguageImages(settings, self.sessions)
        self.recorder = Recorder(self.sessions, self.owner, settings.max_attempts, self.stopping)
        self.heartbeat = Heartbeat(self.sessions, self.owner, self.concurrency)
        # Cleared while the Docker engine does not answer: no thread claims work then, and the heartbeat
        # says so (GET /v1/status, passk_engine_up). A failed sandbox or the maintenance loop's probe clears it.
        self.docker_engine = EngineWatch(self.stopping)
        # Wall-clock timeouts waiting for the re-run lane; their samples stay leased (and in flight) meanwhile.
        self.reruns = RerunQueue()
        # Woken by LISTEN passk_samples, one idle claiming thread per notification; poll_interval_s is the fallback.
        self.wakeup = Wakeup(threads=self.concurrency + settings.interactive_sandboxes)
        self._claims = 0
        self._lock = threading.Lock()
        # Samples claimed and not yet recorded: the only leases the maintenance loop renews.
        self._in_flight: set[int] = set()
        # Per claiming thread: (run id, frame size) its last batch ended with; the next batch of that run starts there.
        self._frame_sizes = threading.local()
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
        # Part of every cache key: a rebuilt sandbox never inherits verdicts from the old one.
        self.images.start(client, self.image)
        try:
            removed = sweep(client, max_age_s=MAX_CONTAINER_AGE_S)
            if removed:
                log.warning("removed %d leftover sandbox containers", removed)
        except docker.errors.NotFound as exc:
            # A container went away between the listing and its inspection (another worker removed it):
            # nothing to sweep there, and the engine watch sweeps again within a minute.
            log.warning("the start-up sweep raced another removal (%s); the next sweep does it", exc)
        if self.settings.sandbox_cgroup_parent:
            ensure_parent(self.settings.sandbox_cgroup_parent, self.settings.sandbox_cgroup_cpu_shares)
        log.warning("worker %s: %d threads, image %s", self.owner, self.concurrency, self.image)
        cores = sandbox_cores(self.concurrency, sorted(os.sched_getaffinity(0)) if self.settings.sandbox_pinning else [])
        threads = [threading.Thread(target=self._execute_loop, kwargs={"core": core}, name=f"exec-{i}", daemon=True)
                   for i, core in enumerate(cores)]
        threads += [threading.Thread(target=self._execute_loop, args=(True,), name=f"interactive-{i}", daemon=True)
                    for i in range(self.settings.interactive_sandboxes)]
        threads.append(threading.Thread(target=self._rerun_loop, name="rerun", daemon=True))
        threads.append(threading.Thread(target=self._maintenance_loop, name="maintenance", daemon=True))
        threads.append(threading.Thread(target=self.docker_engine.watch, name="engine-watch", daemon=True))
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
            self.wakeup.notify_all()
            for thread in threads:
                thread.join()
            # Re-runs that claiming threads handed over after the lane had stopped.
            self._give_back(self.reruns.drain())
            self.heartbeat.forget()
            self.engine.dispose()

    def stop(self) -> None:
        self.stopping.set()

    # -- threads

    def _new_sandbox(self, core: int | None = None) -> Sandbox:
        cfg = self.settings
        return Sandbox(
            connect(),
            SandboxSettings(
                image=self.image, images=self.images.tag, cpus=cfg.sandbox_cpus, pids=cfg.sandbox_pids,
                scratch_bytes=cfg.sandbox_scratch_mb * 1024 * 1024, excerpt_bytes=cfg.output_excerpt_bytes,
                owner=self.owner, cpu_shares=cfg.sandbox_cpu_shares, cgroup_parent=self.cgroup_parent, core=core,
            ),
        )

    def _execute_loop(self, interactive_only: bool = False, core: int | None = None) -> None:
        cfg = self.settings
        sandbox = self._new_sandbox(core)
        sizes = ClaimSize(cfg.interactive_batch_size)  # how many samples of interactive runs this thread claims
        try:
            while not self.stopping.is_set():
                try:
                    mark = self.wakeup.mark()
                    if not self._execute_one(sandbox, sizes, interactive_only) and not self.stopping.is_set():
                        self.wakeup.wait(mark, cfg.poll_interval_s, interactive_only)
                except (OperationalError, DBAPIError) as exc:
                    # The database went away: our leases will expire or be renewed once it is back.
                    log.error("database error in %s: %s", threading.current_thread().name, exc)
                    self.stopping.wait(2.0)
                except Exception:
                    # Never let the thread die: a dead thread's claimed samples would wait for a lease to expire.
                    log.exception("unexpected error in %s", threading.current_thread().name)
                    discard(sandbox)
                    self.stopping.wait(2.0)
        finally:
            stats = sandbox.settings.stats
            if stats.get("compiles"):
                log.warning("%s: %s", threading.current_thread().name,
                            " ".join(f"{name}={stats.get(name, 0)}" for name in BUILD_STATS))
            discard(sandbox)

    def _execute_one(self, sandbox: Sandbox, sizes: ClaimSize, interactive_only: bool = False) -> bool:
        cfg = self.settings
        if not self.docker_engine.up:
            self.docker_engine.wait()
            if self.stopping.is_set():
                return True
        with self._lock:
            self._claims += 1
            # Interactive runs first, except every batch_share-th claim: batch runs never starve.
            first = "batch" if self._claims % cfg.batch_share == 0 else "interactive"
        try:
            with transaction(self.sessions) as session:
                claimed = queue.claim_batch(
                    session, self.owner, cfg.batch_size, cfg.lease_seconds, cfg.default_time_limit_s,
                    cfg.default_memory_mb, self.images.key, first, interactive_limit=sizes.size,
                    only_priority=RunPriority.INTERACTIVE if interactive_only else None,
                )
                hits = lookup_cache(session, (s.cache_key for s in claimed if s.cache_key))
        except ImageNotReady as missing:  # the claim leased nothing: the image first, then claim again
            self.images.prepare(missing.language)
            return True
        interactive = bool(claimed) and claimed[0].priority == RunPriority.INTERACTIVE
        # One notification stood for more samples than this claim took (a batch run, an interactive run of several),
        # so another idle thread looks too. A one-sample run has a notification of its own.
        if claimed and (not interactive or len(claimed) > 1):
            self.wakeup.notify()
        if interactive or not claimed:
            sizes.claimed(len(claimed))
        if not claimed:
            return False
        if not self.docker_engine.up:
            # The engine went down while this claim was made (another thread found out): give the samples back
            # unrun, their attempt not counted; the next turn waits for the engine.
            with transaction(self.sessions) as session:
                queue.release_unrun(session, self.owner, [sample.id for sample in claimed])
            return True
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
        frames = Frames(
            sandbox, claimed, shared=self.gate.shared, engine_answers=self.docker_engine.answers,
            record=self.recorder.record, cancelled=CancelCheck(self.engine, claimed[0].run_id),
            last=getattr(self._frame_sizes, "last", None),
            budget_s=self.settings.interactive_batch_seconds if claimed[0].priority == RunPriority.INTERACTIVE
            else self.settings.batch_seconds,
            # An interactive run's time limit is a wall-clock one (/run_code's meaning) and its programs are not
            # re-run after a wall-clock timeout: they run wherever a core is free, never waiting for their own.
            pinned=claimed[0].priority != RunPriority.INTERACTIVE,
        )
        result = execute_batch(claimed, hits, frames.run)
        self._frame_sizes.last = (frames.run_id, frames.size)
        pending = result.pending_ids
        skipped = {
            sample.id for sample, outcome in zip(claimed, result.outcomes, strict=True) if isinstance(outcome, Skipped)
        }
        ran = [
            (sample, outcome) for sample, outcome in zip(claimed, result.outcomes, strict=True)
            if sample.id not in skipped and sample.id not in pending
        ]
        rest = [(sample, outcome) for sample, outcome in ran if sample.id not in frames.recorded]
        errors = sum(1 for _, outcome in ran if outcome.verdict is Verdict.SANDBOX_ERROR)
        engine_down = frames.engine_failed or (errors and not self.docker_engine.answers())
        if engine_down:
            # Before the samples it caught go back to the queue: no other thread claims them meanwhile, only to
            # lose another attempt to the same outage.
            self.docker_engine.mark_down()
        self.recorder.record([sample for sample, _ in rest], [outcome for _, outcome in rest],
                             cached_ids=result.cached_ids, skipped=skipped)
        with self._lock:
            self.processed += len(ran)
            self.sandbox_errors += errors
        if skipped:
            given_back = sum(1 for outcome in result.outcomes if isinstance(outcome, Skipped)
                             and outcome.detail == GIVEN_BACK_DETAIL)
            log.log(logging.INFO if given_back else logging.WARNING, "run %s: released %d claimed samples unrun (%s)",
                    claimed[0].run_id, len(skipped), "the batch ran past its time budget" if given_back else "cancelled")
        # Last, so that an error above leaves nothing in the lane that this thread no longer counts in flight.
        for rerun in result.reruns:
            self.reruns.put(rerun)
        if engine_down:
            # Claiming more now would burn every retry of the queue's samples in seconds: wait for the engine.
            self.docker_engine.wait()
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
                    discard(sandbox)
                    self.stopping.wait(2.0)
        finally:
            discard(sandbox)
            self._give_back(self.reruns.drain())

    def _rerun(self, sandbox: Sandbox, rerun: Rerun) -> None:
        ids = {sample.id for sample in rerun.samples}
        try:
            if CancelCheck(self.engine, rerun.run_id, fresh=True)():
                self.recorder.record([], [], skipped=ids)
                return
            # A bounded window alone (see gate.py): the claiming threads start no new frame during it.
            with self.gate.exclusive(rerun.job.time_limit_s + 1.0) as alone_s:
                outcome = run_safely(sandbox, [rerun.job])[0][0]
            log.info("re-ran sample %s (%.1f s alone): %s", rerun.job.id, alone_s, outcome.verdict.value)
            outcomes, cached_ids, rerun_ids = rerun.finish(outcome)
            self.recorder.record(rerun.samples, outcomes, cached_ids=cached_ids, rerun_ids=rerun_ids)
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

    # -- maintenance: leases, reclaims, the heartbeat (never a Docker call: a hung engine must not delay a renewal)

    def _maintenance_loop(self) -> None:
        cfg = self.settings
        next_prune = time.monotonic() + PRUNE_EVERY_S * random.random()  # workers started together spread out
        next_reclaim = 0.0
        # As often as a lease runs down by the part that makes a renewal extend it (queue.RENEW_AFTER), or more often.
        tick = min(cfg.lease_seconds * queue.RENEW_AFTER, RECLAIM_EVERY_S)
        try:
            self._beat(tick)
        except Exception as exc:
            log.error("heartbeat failed: %s", exc)
        while not self.stopping.wait(tick):
            try:
                with self._lock:
                    in_flight = set(self._in_flight)
                with transaction(self.sessions) as session:
                    queue.renew_leases(session, self.owner, cfg.lease_seconds, in_flight)
                self._beat(tick)
                if time.monotonic() >= next_reclaim:
                    with transaction(self.sessions) as session:
                        reclaimed = queue.reclaim_expired(session, cfg.max_attempts)
                    with transaction(self.sessions) as session:  # runs a reclaim or a lost worker finished
                        results.end_runs(session)
                    if reclaimed:
                        log.warning("reclaimed %d samples from lost workers", reclaimed)
                    next_reclaim = time.monotonic() + RECLAIM_EVERY_S
                if cfg.stream_retention_days and time.monotonic() >= next_prune:
                    self._prune(cfg.stream_retention_days)
                    next_prune = time.monotonic() + PRUNE_EVERY_S
            except Exception:
                log.exception("maintenance failed; will try again")

    def _prune(self, older_than_days: float) -> None:
        for prune, what, batch in ((retention.prune_streams, "stream runs' programs and outputs", retention.BATCH),
                                   (retention.prune_cache, "result-cache entries", retention.CACHE_BATCH)):
            while True:  # batch by batch, each in its own short transaction
                with transaction(self.sessions) as session:
                    pruned = prune(session, older_than_days, batch)
                if pruned:
                    log.info("retention: deleted %d %s", pruned, what)
                if pruned < batch or self.stopping.is_set():
                    break

    def _beat(self, tick_s: float) -> None:
        with self._lock:
            processed, errors = self.processed, self.sandbox_errors
        self.heartbeat.beat(tick_s, processed=processed, sandbox_errors=errors, engine_up=self.docker_engine.up)
