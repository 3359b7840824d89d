"""The worker process: threads that claim batches, run them in sandboxes and record verdicts.

Nothing here lives in the API process. State is in Postgres only, so a worker
can be killed at any moment: its leases expire and other workers take over.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from types import FrameType

from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from sandbox.container import MAX_CONTAINER_AGE_S, owner_id, sweep
from sandbox.engine import connect
from sandbox.executor import Job, Outcome, Sandbox, SandboxSettings
from service.database import make_sync_engine, make_sync_sessionmaker, transaction
from service.settings import Settings
from service.worker import queue
from service.worker.batch import execute_batch
from service.worker.gate import ExclusiveGate

log = logging.getLogger(__name__)

SWEEP_EVERY_S = 60.0
RECLAIM_EVERY_S = 5.0


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
        self.image_id = ""
        self.gate = ExclusiveGate()
        self._lock = threading.Lock()

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
        self.image_id = client.images.get(self.image).id
        removed = sweep(client, max_age_s=MAX_CONTAINER_AGE_S)
        if removed:
            log.warning("removed %d leftover sandbox containers", removed)
        log.warning("worker %s: %d threads, image %s", self.owner, self.concurrency, self.image)
        threads = [threading.Thread(target=self._execute_loop, name=f"exec-{i}", daemon=True) for i in range(self.concurrency)]
        threads.append(threading.Thread(target=self._maintenance_loop, name="maintenance", daemon=True))
        for thread in threads:
            thread.start()
        try:
            while not self.stopping.is_set():
                self.stopping.wait(0.5)
        finally:
            self.stopping.set()
            for thread in threads:
                thread.join()
            self.engine.dispose()

    def stop(self) -> None:
        self.stopping.set()

    # -- threads

    def _execute_loop(self) -> None:
        cfg = self.settings
        sandbox = Sandbox(
            connect(),
            SandboxSettings(
                image=self.image, cpus=cfg.sandbox_cpus, pids=cfg.sandbox_pids,
                scratch_bytes=cfg.sandbox_scratch_mb * 1024 * 1024, excerpt_bytes=cfg.output_excerpt_bytes,
                owner=self.owner,
            ),
        )
        try:
            while not self.stopping.is_set():
                try:
                    if not self._execute_one(sandbox):
                        self.stopping.wait(cfg.poll_interval_s)
                except (OperationalError, DBAPIError) as exc:
                    # The database went away: our leases will expire or be renewed once it is back.
                    log.error("database error in %s: %s", threading.current_thread().name, exc)
                    self.stopping.wait(2.0)
                except Exception:
                    log.exception("unexpected error in %s", threading.current_thread().name)
                    sandbox.close()
                    self.stopping.wait(2.0)
        finally:
            sandbox.close()

    def _execute_one(self, sandbox: Sandbox) -> bool:
        cfg = self.settings
        with transaction(self.sessions) as session:
            claimed = queue.claim_batch(
                session, self.owner, cfg.batch_size, cfg.lease_seconds, cfg.default_time_limit_s,
                cfg.default_memory_mb, self.image_id,
            )
            hits = queue.lookup_cache(session, (s.cache_key for s in claimed if s.cache_key))
        if not claimed:
            return False

        def run_jobs(jobs: list[Job]) -> list[Outcome]:
            with self.gate.shared():
                return sandbox.run(jobs)

        def run_alone(job: Job) -> Outcome:
            with self.gate.exclusive():
                return sandbox.run([job])[0]

        result = execute_batch(claimed, hits, run_jobs, run_alone)
        self._record(claimed, result.outcomes, result.cached_ids, result.rerun_ids)
        with self._lock:
            self.processed += len(claimed)
        return True

    def _record(
        self, claimed: list[queue.ClaimedSample], outcomes: list[Outcome], cached_ids: set[int], rerun_ids: set[int]
    ) -> None:
        # Results are worth retrying for a while: losing them means running the programs again.
        for attempt in range(5):
            try:
                with transaction(self.sessions) as session:
                    queue.record_outcomes(
                        session, self.owner, claimed, outcomes, self.settings.max_attempts, cached_ids, rerun_ids
                    )
                return
            except (OperationalError, DBAPIError) as exc:
                log.error("could not record %d results (attempt %d): %s", len(claimed), attempt + 1, exc)
                time.sleep(1.0 + attempt)
        log.error("gave up recording %d results; their leases will expire and they will run again", len(claimed))

    def _maintenance_loop(self) -> None:
        cfg = self.settings
        next_sweep = time.monotonic() + SWEEP_EVERY_S
        next_reclaim = 0.0
        while not self.stopping.wait(min(cfg.lease_seconds / 4, RECLAIM_EVERY_S)):
            try:
                with transaction(self.sessions) as session:
                    queue.renew_leases(session, self.owner, cfg.lease_seconds)
                if time.monotonic() >= next_reclaim:
                    with transaction(self.sessions) as session:
                        reclaimed = queue.reclaim_expired(session, cfg.max_attempts)
                    if reclaimed:
                        log.warning("reclaimed %d samples from lost workers", reclaimed)
                    next_reclaim = time.monotonic() + RECLAIM_EVERY_S
                if time.monotonic() >= next_sweep:
                    sweep(connect(), max_age_s=MAX_CONTAINER_AGE_S)
                    next_sweep = time.monotonic() + SWEEP_EVERY_S
            except Exception:
                log.exception("maintenance failed; will try again")
