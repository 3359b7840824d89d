"""Writing a batch's verdicts, retried until the database is back: losing them means running the programs again.
Only a stopping worker gives up; its leases then expire and the samples run elsewhere."""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection

from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker
from tenacity import RetryCallState, RetryError, Retrying, retry_if_exception_type, wait_incrementing

from sandbox.executor import Outcome
from service.core.database import transaction
from service.worker import queue, results

log = logging.getLogger(__name__)


class Recorder:
    def __init__(self, sessions: sessionmaker[Session], owner: str, max_attempts: int, stopping: threading.Event) -> None:
        self.sessions, self.owner, self.max_attempts, self.stopping = sessions, owner, max_attempts, stopping

    def record(
        self,
        claimed: list[queue.ClaimedSample],
        outcomes: list[Outcome],
        *,
        cached_ids: Collection[int] = frozenset(),
        rerun_ids: Collection[int] = frozenset(),
        skipped: Collection[int] = frozenset(),
    ) -> None:
        """The outcomes of `claimed` (aligned), with the ids whose verdict came from the cache or a re-run; the
        `skipped` samples (never run: of a cancelled run, or given back) are released."""
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
                        session, self.owner, claimed, outcomes, self.max_attempts, set(cached_ids), set(rerun_ids)
                    )
                    queue.release_unrun(session, self.owner, set(skipped))
        except RetryError:
            log.error("gave up recording %d results; their leases will expire and they will run again", len(claimed))
            return
        # Once committed: did the runs end? (A new transaction sees every record committed before it.)
        try:
            with transaction(self.sessions) as session:
                results.end_runs(session, recorded)
        except (OperationalError, DBAPIError) as exc:  # the maintenance pass's sweep ends them
            log.error("could not check whether runs %s ended: %s", recorded, exc)
