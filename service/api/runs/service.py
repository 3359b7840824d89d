"""Run use cases. Never commits: the request dependency does, once, so a run and all its samples appear together."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import Row
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox import languages
from sandbox.tracebacks import strip_runtime_frames
from sandbox.verdicts import Verdict
from service.api import hidden_tests
from service.api.auth.principal import Principal
from service.api.datasets.repository import DatasetRepository
from service.api.datasets.service import check_compile_limits, check_limits
from service.api.delivery.admission import admit, precheck
from service.api.delivery.targets import RefusedTarget, resolve
from service.core.exceptions import Conflict, InvalidInput, NotFound
from service.core.models import Dataset, Run
from service.core.flags import Flag
from service.core.limits import limits_in_force
from service.core.samples import SAMPLE_METADATA
from service.api.runs.repository import DatasetHeader, FlagCounts, RunRepository
from service.api.runs.schemas import (
    Progress,
    RunCreate,
    RunList,
    RewardHacks,
    RunListItem,
    RunRead,
    RunSummary,
    RunUpdate,
    SamplePage,
    SampleRead,
    StateCounts,
    VerdictCounts,
    coverage,
    Webhook,
    WebhookAttempt,
)
from service.core.settings import Settings
from service.core.states import RunState, SampleState

def _summary_fields(settings: Settings, run: Run | Row[Any], dataset: DatasetHeader) -> dict[str, Any]:
    """RunSummary's fields, from an ORM run or a Core row of the runs table."""
    # The run's own limits over the dataset's (a problem may still set its own: shown on the problem).
    limits = limits_in_force(
        run=run, dataset=dataset, language=languages.all_languages().get(dataset.language),
        default_time_limit_s=settings.default_time_limit_s, default_memory_mb=settings.default_memory_mb,
    )
    return dict(
        id=run.id,
        dataset_id=run.dataset_id,
        model=run.model,
        sampling=run.sampling,
        status=run.status,  # type: ignore[arg-type]
        sample_count=run.sample_count,
        dataset_name=dataset.name,
        problem_count=run.problem_count,
        coverage=coverage(run.problem_count, dataset.problem_count),
        display_name=run.display_name,
        note=run.note,
        tags=list(run.tags or []),
        archived=run.archived,
        time_limit_s=limits.time_limit_s,
        memory_mb=limits.memory_mb,
        compile_time_limit_s=limits.compile_time_limit_s,
        compile_memory_mb=limits.compile_memory_mb,
        cache=run.use_cache,
        currency=run.currency,
        checkpoint=run.checkpoint,
        step=run.step,
        created_at=run.created_at,
        started_at=run.started_at,
        finished_at=run.finished_at,
        priority=run.priority,  # type: ignore[arg-type]
        callback_url=run.callback_url,
    )


def _summary(settings: Settings, run: Run | Row[Any], dataset: DatasetHeader) -> RunSummary:
    return RunSummary(**_summary_fields(settings, run, dataset))


def _progress(counts: Sequence[tuple[str, str | None, int]], flagged: FlagCounts) -> Progress:
    by_state: dict[str, int] = defaultdict(int)
    by_verdict: dict[str, int] = defaultdict(int)
    for state, verdict, count in counts:
        by_state[state] += count
        if verdict is not None:
            by_verdict[verdict] += count
    return Progress(
        total=sum(by_state.values()),
        done=by_state[SampleState.DONE],
        passed=by_verdict[Verdict.PASSED.value],
        by_verdict=VerdictCounts(**by_verdict),
        by_state=StateCounts(**by_state),
        reward_hacks=RewardHacks(samples=flagged.samples, passed=flagged.passed, by_flag=flagged.by_flag),
    )


def _check_completions(body: RunCreate, settings: Settings) -> None:
    limit = settings.max_program_bytes
    for position, sample in enumerate(body.samples):
        # A UTF-8 character is at most 4 bytes: only long strings need encoding to measure.
        if len(sample.completion) * 4 > limit and (size := len(sample.completion.encode("utf-8"))) > limit:
            raise InvalidInput(
                ["body", "samples", position, "completion"],
                f"the completion of samples[{position}] (sample {position + 1} of {len(body.samples)}, counting from 1) "
                f"is {size} bytes; the limit is {limit}",
            )


def _sample_rows(run_id: uuid.UUID, body: RunCreate, problem_ids: dict[str, int]) -> Iterator[tuple[Any, ...]]:
    """Rows of repository.SAMPLE_ROW (run_id, problem_id, index, completion, *metadata); index counts per
    problem, in request order."""
    next_index: dict[int, int] = defaultdict(int)
    for sample in body.samples:
        problem = problem_ids[sample.problem_id]
        metadata = tuple(getattr(sample, name) for name in SAMPLE_METADATA)
        yield run_id, problem, next_index[problem], sample.completion, *metadata
        next_index[problem] += 1


async def create(session: AsyncSession, settings: Settings, principal: Principal, body: RunCreate,
                 stream: str | None = None, resolved: tuple[Dataset, dict[str, int]] | None = None) -> RunRead:
    """A run of the caller's project, on one of its datasets or on a dataset another project shares; `stream`: the
    stream a /run_code or /v1/judge call joins (service/api/streams); `resolved`: the dataset of `body.dataset_id`
    and its problem ids by key, where the caller has just read them in this transaction (POST /run_code's own
    dataset), so that they are not read again."""
    if len(body.samples) > settings.max_samples_per_run:
        raise InvalidInput(
            ["body", "samples"], f"{len(body.samples)} samples; at most {settings.max_samples_per_run} per run"
        )
    check_limits(settings, ["body"], body.time_limit_s, body.memory_mb)
    _check_completions(body, settings)
    datasets = DatasetRepository(session)
    dataset = resolved[0] if resolved is not None else await datasets.get(principal, body.dataset_id)
    if dataset is None or dataset.id != body.dataset_id:
        raise InvalidInput(["body", "dataset_id"], f"dataset {body.dataset_id} not found", str(body.dataset_id))
    check_compile_limits(settings, ["body"], dataset.language, body.compile_time_limit_s, body.compile_memory_mb)
    problem_ids = resolved[1] if resolved is not None else await datasets.problem_ids_by_key(dataset.id)
    unknown = sorted({s.problem_id for s in body.samples} - problem_ids.keys())
    if unknown:
        shown = ", ".join(repr(key) for key in unknown[:10])
        more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        raise InvalidInput(
            ["body", "samples"], f"problem id(s) not in dataset {dataset.id}: {shown}{more}", unknown[:10]
        )

    if body.callback_url is not None:
        try:
            await resolve(body.callback_url, settings.webhook_allow_networks)
        except RefusedTarget as exc:
            raise InvalidInput(["body", "callback_url"], str(exc), body.callback_url) from None
    await precheck(session, settings, principal.key_id, len(body.samples))

    repository = RunRepository(session)
    run = await repository.insert(
        {
            "project_id": principal.project_id,
            "priority": body.priority.value,
            "api_key_id": principal.key_id,
            "callback_url": body.callback_url,
            "id": uuid.uuid4(),
            "dataset_id": dataset.id,
            "model": body.model,
            "sampling": body.sampling.stored(),
            # Stored as requested (None = inherit) so per-problem limits still apply underneath.
            "time_limit_s": body.time_limit_s,
            "memory_mb": body.memory_mb,
            "compile_time_limit_s": body.compile_time_limit_s,
            "compile_memory_mb": body.compile_memory_mb,
            "use_cache": body.cache,
            "currency": body.currency,
            "display_name": body.display_name,
            "tags": list(dict.fromkeys(body.tags)),  # order kept, duplicates dropped (as PATCH does)
            "checkpoint": body.checkpoint,
            "step": body.step,
            "stream": stream,
            "sample_count": len(body.samples),
            "problem_count": len({sample.problem_id for sample in body.samples}),
        }
    )
    await repository.insert_samples(_sample_rows(run.id, body, problem_ids))
    await repository.notify_workers()
    # Last: the admission lock is held from here until this request commits (service/api/delivery/admission.py).
    await admit(session, settings, principal.key_id, len(body.samples))
    total = len(body.samples)
    progress = Progress(
        total=total, done=0, passed=0, by_verdict=VerdictCounts(), by_state=StateCounts(queued=total)
    )
    header = DatasetHeader(dataset.name, dataset.problem_count, dataset.time_limit_s, dataset.memory_mb,
                           dataset.language, dataset.compile_time_limit_s, dataset.compile_memory_mb)
    summary = _summary(settings, run, header)
    return RunRead(**summary.model_dump(), progress=progress)


async def get(session: AsyncSession, settings: Settings, principal: Principal, run_id: uuid.UUID) -> RunRead:
    repository = RunRepository(session)
    found = await repository.get_with_progress(principal, run_id)
    if found is None:
        raise NotFound("run", run_id)
    run, dataset, counts, flagged = found
    progress = _progress(counts, flagged)
    webhook = None
    if run.callback_url is not None:
        attempts = await repository.webhook_attempts(run_id)
        webhook = Webhook(
            state=run.callback_state,  # type: ignore[arg-type]
            attempts=[
                WebhookAttempt(event=a.event, attempt=a.attempt, status_code=a.status_code, error=a.error,
                               delivered=a.delivered, at=a.at)
                for a in attempts
            ],
        )
    return RunRead(**_summary_fields(settings, run, dataset), progress=progress, webhook=webhook)


async def list_runs(
    session: AsyncSession,
    settings: Settings,
    principal: Principal,
    *,
    dataset_id: uuid.UUID | None,
    model: str | None,
    limit: int,
    offset: int,
    **filters: Any,
) -> RunList:
    rows, total = await RunRepository(session).list_page(
        principal, dataset_id=dataset_id, model=model, limit=limit, offset=offset, **filters
    )
    items = [
        RunListItem(**_summary_fields(settings, run, dataset), flagged_samples=flagged) for run, dataset, flagged in rows
    ]
    return RunList(items=items, total=total, limit=limit, offset=offset)


async def update(
    session: AsyncSession, settings: Settings, principal: Principal, run_id: uuid.UUID, body: RunUpdate
) -> RunRead:
    """Only the fields sent change; `null` clears display_name or note."""
    values = body.model_dump(exclude_unset=True)
    if values.get("tags") is None:
        values.pop("tags", None)
    else:
        values["tags"] = list(dict.fromkeys(values["tags"]))  # order kept, duplicates dropped
    if values.get("archived") is None:
        values.pop("archived", None)
    repository = RunRepository(session)
    if values and not await repository.update_fields(principal, run_id, values):
        raise NotFound("run", run_id)
    return await get(session, settings, principal, run_id)


async def cancel(session: AsyncSession, settings: Settings, principal: Principal, run_id: uuid.UUID) -> RunRead:
    repository = RunRepository(session)
    # Row lock: a worker finishing the run at the same moment either wins (409) or sees it cancelled.
    run = await repository.get(principal, run_id, for_update=True)
    if run is None:
        raise NotFound("run", run_id)
    if run.status in (RunState.COMPLETED, RunState.FAILED):
        raise Conflict(f"run {run_id} is already {run.status}; only queued or running runs can be cancelled")
    if run.status != RunState.CANCELLED:
        await repository.cancel_queued_samples(run_id)
        await repository.mark_cancelled(run)
        await repository.notify_run_ended(run)
    return await get(session, settings, principal, run_id)


async def samples(
    session: AsyncSession,
    principal: Principal,
    run_id: uuid.UUID,
    *,
    problem_key: str | None,
    verdict: Verdict | None,
    cursor: int | None,
    limit: int,
    include_completion: bool,
    flagged: bool | None = None,
    flag: Flag | None = None,
) -> SamplePage:
    if flag is not None and flagged is False:
        raise InvalidInput(["query", "flagged"], f"flagged=false lists samples without flags, none of which has {flag}",
                           False)
    repository = RunRepository(session)
    run = await repository.get(principal, run_id)
    if run is None:
        raise NotFound("run", run_id)
    dataset = await DatasetRepository(session).of_run(run.dataset_id)
    problem_id = None
    if problem_key is not None:
        problem_id = await repository.problem_id(run.dataset_id, problem_key)
        if problem_id is None:
            message = f"problem {problem_key!r} is not in dataset {run.dataset_id}"
            raise InvalidInput(["query", "problem_id"], message, problem_key)
    rows = await repository.samples_page(
        run_id,
        problem_id=problem_id,
        verdict=verdict.value if verdict is not None else None,
        after=cursor,
        limit=limit + 1,  # one extra row tells whether another page exists
        include_completion=include_completion,
        flagged=flagged,
        flag=flag.value if flag is not None else None,
    )
    shown = [row._asdict() for row in rows[:limit]]
    if not principal.owns(dataset.project_id):
        shown = await _withheld_where_hidden(repository, shown, dataset.hidden_tests)
    items = [SampleRead.model_validate({**values, "traceback": strip_runtime_frames(values["stderr"], dataset.language)})
             for values in shown]
    next_cursor = str(items[-1].id) if len(rows) > limit else None
    return SamplePage(items=items, next_cursor=next_cursor)


async def _withheld_where_hidden(
    repository: RunRepository, rows: list[dict[str, Any]], dataset_hides: bool
) -> list[dict[str, Any]]:
    """Samples of problems with hidden tests, as a caller who is not the dataset's project sees them."""
    hidden = [row for row in rows if dataset_hides or row["problem_hides_tests"]]
    if not hidden:
        return rows
    tests = await repository.problem_tests({row["problem_row"] for row in hidden})
    return [hidden_tests.withheld(row, tests.get(row["problem_row"])) if dataset_hides or row["problem_hides_tests"]
            else row for row in rows]
