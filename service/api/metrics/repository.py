"""Per-problem counts of a run for metrics and comparisons: one grouped query, no sample rows loaded."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, bindparam, func, literal_column, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox.verdicts import MODEL_VERDICTS, Verdict
from service.core.models import Dataset, Problem, Run, Sample
from service.core.states import OPEN_SAMPLE_STATES, SampleState
from service.api.auth.principal import Principal
from service.api.projects.ownership import owned
from service.api.projects.ownership import owned_param
from service.api.projects.ownership import ownership_params

_CONTENT_DIGEST = (
    "md5((to_jsonb(problems) - 'id' - 'dataset_id' - 'position' - 'key' - 'tags' - 'canonical_solution' "
    "- 'hidden_tests')::text)"
)


def _run_state() -> Any:
    run_id = bindparam("run_id", type_=Run.__table__.c.id.type)
    open_samples = (
        select(func.count()).where(Sample.run_id == run_id, Sample.state.in_(OPEN_SAMPLE_STATES)).scalar_subquery()
    )
    last_event = select(func.coalesce(func.max(Sample.event), 0)).where(Sample.run_id == run_id).scalar_subquery()
    return select(Run.status, last_event, open_samples).where(Run.id == run_id, owned_param(Run.project_id))


# Built once: a poll binds the id only.
_RUN_STATE = _run_state()


class MetricsRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def get_run(self, principal: Principal, run_id: uuid.UUID) -> Row[tuple[Run, str]] | None:
        """One of the caller's runs and its dataset's content digest (two datasets with one digest hold the same
        problems)."""
        statement = (
            select(Run, Dataset.digest).join(Dataset, Dataset.id == Run.dataset_id)
            .where(Run.id == run_id, owned(principal, Run.project_id))
        )
        return (await self.session.execute(statement)).one_or_none()

    async def run_state(self, principal: Principal, run_id: uuid.UUID) -> tuple[str, int, int] | None:
        """What the run's figures depend on that can change: its status, its last event id (a new one per
        recorded verdict) and its unfinished samples (a cancel ends them without an event). None: the caller has no such
        run."""
        params = {"run_id": run_id, **ownership_params(principal)}
        row = (await self.session.execute(_RUN_STATE, params)).one_or_none()
        return None if row is None else (row[0], row[1], row[2])

    async def dataset_header(self, dataset_id: uuid.UUID) -> tuple[str, int]:
        """The dataset's name and problem count (what a run's score covers is said against it)."""
        statement = select(Dataset.name, Dataset.problem_count).where(Dataset.id == dataset_id)
        name, count = (await self.session.execute(statement)).one()
        return name, count

    async def problem_counts(
        self, run_id: uuid.UUID, *, distinct_programs: bool = False, content_digest: bool = False
    ) -> Sequence[Row[Any]]:
        """Per problem in dataset order: key, tags, total, pending, one count per verdict.

        distinct_programs adds count(DISTINCT md5(completion)): it reads the completions
        (the heap, not just the covering index), so it is asked for only where shown.
        content_digest adds an md5 of the problem's content, which tells whether two
        datasets' problems with the same key are the same problem.
        """
        columns: list[Any] = [
            Sample.problem_id,
            func.count().label("total"),
            func.count().filter(Sample.state.in_(OPEN_SAMPLE_STATES)).label("pending"),
            *(func.count().filter(Sample.verdict == v.value).label(v.value) for v in Verdict),
        ]
        if distinct_programs:
            columns.append(func.count(func.distinct(func.md5(Sample.completion))).label("distinct_programs"))
        per_problem = select(*columns).where(Sample.run_id == run_id).group_by(Sample.problem_id).subquery()
        outer: list[Any] = [Problem.key, Problem.tags, *(c for c in per_problem.c if c.name != "problem_id")]
        if content_digest:
            # Everything that decides a verdict (prompt, tests, entry point, limits, and whatever columns
            # problem formats add), in jsonb's canonical text; not ids, position, tags or the reference
            # solution. Two datasets' problems with one key and one digest are the same problem.
            outer.append(literal_column(_CONTENT_DIGEST).label("content_digest"))
        statement = (
            select(*outer)
            .join(per_problem, per_problem.c.problem_id == Problem.id)
            .order_by(Problem.position)
        )
        return (await self.session.execute(statement)).all()

    async def sample_metadata(self, run_id: uuid.UUID) -> Sequence[Row[Any]]:
        """(problem key, passed, cost, latency_ms, input_tokens, output_tokens, confidence, steps) of the run's
        finished samples that carry any of them; sandbox errors are excluded as they are from n."""
        metadata = (
            Sample.cost, Sample.latency_ms, Sample.input_tokens, Sample.output_tokens, Sample.confidence, Sample.steps,
        )
        statement = (
            select(Problem.key, (Sample.verdict == Verdict.PASSED.value).label("passed"), *metadata)
            .join(Problem, Problem.id == Sample.problem_id)
            .where(
                Sample.run_id == run_id,
                Sample.state == SampleState.DONE,
                Sample.verdict.in_([v.value for v in MODEL_VERDICTS]),
                or_(*(column.is_not(None) for column in metadata)),
            )
        )
        return (await self.session.execute(statement)).all()
