"""Run and sample queries. Aggregates are computed in SQL; sample rows are never loaded to count them."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Float, Row, String, any_, bindparam, cast, func, literal, or_, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value

from sandbox.verdicts import MODEL_VERDICTS, Verdict
from service.core.flags import FLAGS
from service.core.channels import Channel, notify
from service.core.models import Dataset, Problem, Run, Sample, WebhookDelivery
from service.core.samples import SAMPLE_METADATA
from service.core.states import RunState, SampleState
from service.api.auth.principal import Principal
from service.api.projects.ownership import owned
from service.api.projects.ownership import owned_param
from service.api.projects.ownership import ownership_params

# A new sample's columns, in the order of the rows runs/service.py makes; the rest take their defaults.
SAMPLE_ROW = ("run_id", "problem_id", "index", "completion", *SAMPLE_METADATA)
_COPY_SAMPLES = "COPY samples ({}) FROM STDIN".format(", ".join(f'"{name}"' for name in SAMPLE_ROW))
_INSERT_SAMPLES = pg_insert(Sample.__table__)
# Up to this many samples go in as one INSERT (one round trip: a /run_code call's one sample); more as a COPY
# stream (two round trips however many rows).
COPY_ABOVE = 16

_RUNS = Run.__table__
# Built once; the values come as parameters. clock_timestamp, not now(): "newest first" must hold within one
# transaction too.
_INSERT_RUN = pg_insert(_RUNS).values(created_at=func.clock_timestamp()).returning(*_RUNS.c)

_SAMPLE_COLUMNS = (
    Sample.id, Problem.key.label("problem_id"), Sample.index, Sample.state, Sample.verdict, Sample.attempts,
    Sample.duration_ms, Sample.cpu_ms, Sample.exit_code, Sample.signal, Sample.detail, Sample.stdout,
    Sample.stderr, Sample.stdout_truncated, Sample.stderr_truncated, Sample.finished_at, Sample.cached, Sample.rerun,
    Sample.cost, Sample.latency_ms, Sample.input_tokens, Sample.output_tokens, Sample.confidence, Sample.steps,
    Sample.failure, Sample.event, func.coalesce(Sample.flags, text("'{}'::text[]")).label("flags"),
    Problem.hidden_tests.label("problem_hides_tests"), Sample.problem_id.label("problem_row"),
)


class DatasetHeader(NamedTuple):
    name: str
    problem_count: int
    time_limit_s: float | None
    memory_mb: int | None
    language: str = "python"
    compile_time_limit_s: float | None = None
    compile_memory_mb: int | None = None


_DATASET_HEADER = (
    Dataset.name, Dataset.problem_count, Dataset.time_limit_s, Dataset.memory_mb, Dataset.language,
    Dataset.compile_time_limit_s, Dataset.compile_memory_mb,
)


def _with_header(row: Sequence[Any]) -> tuple[Run, DatasetHeader, int]:
    """(run, dataset header, flagged samples) of a list_page row."""
    return row[0], DatasetHeader(*row[1:-1]), row[-1]


def _pass_at_1() -> Any:
    """A run's pass@1 estimate (the mean over problems of c/n, finished model verdicts only), for sorting.

    Answered from ix_samples_run_problem; NULL for a run with no finished sample, sorted last.
    """
    model_verdicts = [v.value for v in MODEL_VERDICTS]
    passed = func.count().filter(Sample.verdict == Verdict.PASSED.value)
    finished = func.count().filter(Sample.verdict.in_(model_verdicts))
    per_problem = (
        select((cast(passed, Float) / finished).label("rate"))
        .where(Sample.run_id == Run.id)
        .group_by(Sample.problem_id)
        .having(finished > 0)
        .correlate(Run)
        .subquery()
    )
    return select(func.avg(per_problem.c.rate)).scalar_subquery()


class FlagCounts(NamedTuple):
    """A run's reward-hack counts: samples with any flag, the passes among them, and per flag (FLAGS order)."""

    samples: int
    passed: int
    by_flag: dict[str, int]


def _flagged(run_id: Any) -> Any:
    """A run's flagged samples: the predicate of ix_samples_flagged, so only that index is read."""
    return (Sample.run_id == run_id, Sample.flags.is_not(None))


def _flag_counts(run_id: Any) -> Any:
    """FlagCounts as one JSON array [samples, passed, per flag...]: an index-only scan of ix_samples_flagged."""
    counts = (
        func.count(),
        func.count().filter(Sample.verdict == Verdict.PASSED.value),
        *(func.count().filter(literal(name) == any_(Sample.flags)) for name in FLAGS),
    )
    return select(func.json_build_array(*counts)).where(*_flagged(run_id)).scalar_subquery()


def flag_counts_of(value: Sequence[int]) -> FlagCounts:
    samples, passed, *per_flag = value
    return FlagCounts(samples, passed, dict(zip(FLAGS, per_flag, strict=True)))


_FLAG_COUNTS = select(_flag_counts(bindparam("run_id", type_=Run.__table__.c.id.type)))


def _run_with_progress() -> Any:
    run_id = bindparam("run_id", type_=Run.__table__.c.id.type)
    grouped = (
        select(Sample.state, Sample.verdict, func.count().label("n"))
        .where(Sample.run_id == run_id)
        .group_by(Sample.state, Sample.verdict)
        .subquery()
    )
    counts = select(
        func.coalesce(func.json_agg(func.json_build_array(grouped.c.state, grouped.c.verdict, grouped.c.n)),
                      text("'[]'::json"))
    ).scalar_subquery()
    header = [column.label(f"dataset_{column.key}") for column in _DATASET_HEADER]
    return (
        select(*Run.__table__.c, *header, counts, _flag_counts(run_id))
        .join_from(Run.__table__, Dataset.__table__, Dataset.id == Run.dataset_id)
        .where(Run.id == run_id, owned_param(Run.__table__.c.project_id))
    )


_RUN_WITH_PROGRESS = _run_with_progress()


class RunRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def insert(self, values: dict[str, Any]) -> Row[Any]:
        """The new run's row (a Core row of the runs table, not an ORM instance: one per POST /run_code call)."""
        return (await self.session.execute(_INSERT_RUN, values)).one()

    async def insert_samples(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """The new samples (rows of SAMPLE_ROW's columns), in the run's transaction: a few as one INSERT, more in a
        COPY on the session's own connection (tens of thousands of rows in one stream, not as INSERT parameters)."""
        rows = iter(rows)
        first = list(itertools.islice(rows, COPY_ABOVE + 1))
        if len(first) <= COPY_ABOVE:
            if first:
                await self.session.execute(_INSERT_SAMPLES, [dict(zip(SAMPLE_ROW, row, strict=True)) for row in first])
            return
        connection = await self.session.connection()
        raw = await connection.get_raw_connection()
        driver = raw.driver_connection  # psycopg.AsyncConnection
        assert driver is not None
        async with driver.cursor() as cursor, cursor.copy(_COPY_SAMPLES) as copy:
            for row in itertools.chain(first, rows):
                await copy.write_row(row)

    async def notify_workers(self) -> None:
        # Delivered at commit, so a worker never wakes for samples it cannot see yet.
        await self.session.execute(notify(Channel.SAMPLES))

    async def get(self, principal: Principal, run_id: uuid.UUID, *, for_update: bool = False) -> Run | None:
        """One of the caller's runs (any run for an operator); None for another project's as for no run."""
        statement = select(Run).where(Run.id == run_id, owned(principal, Run.project_id))
        if for_update:
            statement = statement.with_for_update()
        return (await self.session.execute(statement)).scalar_one_or_none()

    async def get_with_progress(
        self, principal: Principal, run_id: uuid.UUID
    ) -> tuple[Row[Any], DatasetHeader, list[tuple[str, str | None, int]], FlagCounts] | None:
        """The run's columns (a Core row, not an ORM instance), its dataset's header, its (state, verdict, count)
        groups and its reward-hack counts in one round trip.

        The counts are one grouped count answered from ix_samples_run_problem (state and verdict are INCLUDEd)
        and one count over ix_samples_flagged (the flagged samples alone), each returned as a JSON scalar. The
        statement is built once (_RUN_WITH_PROGRESS): a poll only binds the id and the caller's project.
        """
        params = {"run_id": run_id, **ownership_params(principal)}
        row = (await self.session.execute(_RUN_WITH_PROGRESS, params)).one_or_none()
        if row is None:
            return None
        run_columns = len(Run.__table__.c)
        groups = [(state, verdict, n) for state, verdict, n in row[-2]]
        return row, DatasetHeader(*row[run_columns:-2]), groups, flag_counts_of(row[-1])

    async def flag_counts(self, run_id: uuid.UUID) -> FlagCounts:
        """The run's reward-hack counts alone (zeros for a run with no flagged sample, or no such run)."""
        return flag_counts_of((await self.session.execute(_FLAG_COUNTS, {"run_id": run_id})).scalar_one())

    async def list_page(
        self,
        principal: Principal,
        *,
        dataset_id: uuid.UUID | None,
        model: str | None,
        limit: int,
        offset: int,
        status: str | None = None,
        tag: str | None = None,
        archived: bool | None = False,
        search: str | None = None,
        id_prefix: str | None = None,
        order: str = "newest",
        streams: bool | None = False,
        stream: str | None = None,
    ) -> tuple[list[tuple[Run, DatasetHeader, int]], int]:
        """A page of runs with their dataset's header and their flagged samples' count (ix_samples_flagged), and
        how many runs match. The caller's project's runs only (every project's for an operator)."""
        filters: list[Any] = [owned(principal, Run.project_id)]
        if dataset_id is not None:
            filters.append(Run.dataset_id == dataset_id)
        if model is not None:
            filters.append(Run.model == model)
        if status is not None:
            filters.append(Run.status == status)
        if tag is not None:
            filters.append(Run.tags.contains([tag]))
        if archived is not None:
            filters.append(Run.archived.is_(archived))
        if stream is not None:
            filters.append(Run.stream == stream)
        elif streams is not None and not id_prefix:  # a run named by its id is found wherever it is
            filters.append(Run.stream.is_not(None) if streams else Run.stream.is_(None))
        if id_prefix:
            filters.append(cast(Run.id, String).startswith(id_prefix.lower()))
        if search:
            pattern = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            filters.append(
                or_(
                    Run.model.ilike(pattern), Run.display_name.ilike(pattern), Run.note.ilike(pattern),
                    Dataset.name.ilike(pattern), cast(Run.id, String).startswith(search.lower()),
                    func.array_to_string(Run.tags, " ").ilike(pattern),
                )
            )
        ordering = {
            "newest": (Run.created_at.desc(), Run.id),
            "oldest": (Run.created_at.asc(), Run.id),
            "model": (Run.model.asc(), Run.created_at.desc(), Run.id),
            "name": (func.coalesce(Run.display_name, Run.model).asc(), Run.created_at.desc(), Run.id),
            "score": (_pass_at_1().desc().nulls_last(), Run.created_at.desc(), Run.id),
        }[order]
        flagged = select(func.count()).where(*_flagged(Run.id)).correlate(Run).scalar_subquery()
        statement = (
            select(Run, *_DATASET_HEADER, flagged)
            .join(Dataset, Dataset.id == Run.dataset_id)
            .where(*filters)
            .order_by(*ordering)
            .limit(limit)
            .offset(offset)
        )
        counted = select(func.count()).select_from(Run).join(Dataset, Dataset.id == Run.dataset_id).where(*filters)
        total = (await self.session.execute(counted)).scalar_one()
        return [_with_header(row) for row in (await self.session.execute(statement)).all()], int(total)

    async def update_fields(self, principal: Principal, run_id: uuid.UUID, values: dict[str, Any]) -> bool:
        """Set display_name / note / tags / archived; False if the caller has no such run."""
        statement = (
            update(Run).where(Run.id == run_id, owned(principal, Run.project_id)).values(**values).returning(Run.id)
        )
        return (await self.session.execute(statement.execution_options(synchronize_session=False))).first() is not None

    async def cancel_queued_samples(self, run_id: uuid.UUID) -> None:
        # Leased samples are left to finish: their worker owns them until it reports.
        statement = update(Sample).where(Sample.run_id == run_id, Sample.state == SampleState.QUEUED).values(state=SampleState.CANCELLED)
        await self.session.execute(statement.execution_options(synchronize_session=False))

    async def mark_cancelled(self, run: Run) -> None:
        table = Run.__table__
        statement = (
            update(table)
            .where(table.c.id == run.id)
            .values(status=RunState.CANCELLED, finished_at=func.clock_timestamp())
            .returning(table.c.status, table.c.finished_at)
        )
        status, finished_at = (await self.session.execute(statement)).one()
        # Core UPDATE + committed values: no second UPDATE at flush, no lazy reload (which async cannot do).
        set_committed_value(run, "status", status)
        set_committed_value(run, "finished_at", finished_at)

    async def problem_id(self, dataset_id: uuid.UUID, key: str) -> int | None:
        statement = select(Problem.id).where(Problem.dataset_id == dataset_id, Problem.key == key)
        return (await self.session.execute(statement)).scalar_one_or_none()

    async def samples_page(
        self,
        run_id: uuid.UUID,
        *,
        problem_id: int | None,
        verdict: str | None,
        after: int | None,
        limit: int,
        include_completion: bool,
        flagged: bool | None = None,
        flag: str | None = None,
    ) -> Sequence[Row[Any]]:
        """A page of the run's samples by id; `flagged` / `flag`: only those with any flag / with this one (walked
        in ix_samples_flagged), `flagged=False`: only those without."""
        columns = (*_SAMPLE_COLUMNS, Sample.completion) if include_completion else _SAMPLE_COLUMNS
        statement = select(*columns).join(Problem, Problem.id == Sample.problem_id).where(Sample.run_id == run_id)
        if flagged or flag is not None:
            statement = statement.where(*_flagged(run_id))
        elif flagged is False:
            statement = statement.where(Sample.flags.is_(None))
        if flag is not None:
            statement = statement.where(literal(flag) == any_(Sample.flags))
        if problem_id is not None:
            statement = statement.where(Sample.problem_id == problem_id)
        if verdict is not None:
            statement = statement.where(Sample.verdict == verdict)
        if after is not None:
            statement = statement.where(Sample.id > after)
        return (await self.session.execute(statement.order_by(Sample.id).limit(limit))).all()

    async def problem_tests(self, problem_ids: Iterable[int]) -> dict[int, str]:
        """The tests' source of these problems (to number a hidden test's failing assertion)."""
        statement = select(Problem.id, Problem.test).where(Problem.id.in_(list(problem_ids)))
        return {id_: test for id_, test in (await self.session.execute(statement)).all()}

    async def webhook_attempts(self, run_id: uuid.UUID) -> Sequence[WebhookDelivery]:
        statement = select(WebhookDelivery).where(WebhookDelivery.run_id == run_id).order_by(WebhookDelivery.id)
        return (await self.session.execute(statement)).scalars().all()

    async def notify_run_ended(self, run: Run) -> None:
        """A cancelled run: its followers get the final event, its webhook becomes owed (at commit)."""
        await self.session.execute(notify(Channel.EVENTS, str(run.id)))
        if run.callback_url is not None:
            await self.session.execute(
                update(Run).where(Run.id == run.id).values(callback_state="pending")
                .execution_options(synchronize_session=False)
            )
            set_committed_value(run, "callback_state", "pending")
            await self.session.execute(notify(Channel.CALLBACKS))
