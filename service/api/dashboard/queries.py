"""The few reads the page shells need that the JSON API does not offer (names, the problem's prompt).

Each takes the viewer and reads only what it may (service/projects/ownership.py), as the API does.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox.verdicts import Verdict
from service.core.models import Dataset, Problem, Run, Sample, Toolchain
from service.core.states import SampleState
from service.api.auth.principal import Principal
from service.api.projects.ownership import owned
from service.api.projects.ownership import readable_dataset


@dataclass(frozen=True)
class RunHeader:
    id: uuid.UUID
    model: str
    dataset_id: uuid.UUID
    dataset_name: str
    problem_count: int
    language: str
    toolchain: str | None
    dataset_project_id: uuid.UUID
    dataset_hides_tests: bool
    checkpoint: str | None = None
    step: int | None = None


@dataclass(frozen=True)
class ProblemView:
    key: str
    prompt: str
    test: str
    entry_point: str
    previous_key: str | None
    next_key: str | None
    verdicts: dict[str, int]
    total: int
    flagged: int = 0  # samples with a reward-hack flag
    tests_hidden: bool = False  # the viewer is not the dataset's project and its tests are hidden: `test` is ""


async def run_header(session: AsyncSession, principal: Principal, run_id: uuid.UUID) -> RunHeader | None:
    statement = (
        select(Run.id, Run.model, Run.dataset_id, Dataset.name, Dataset.problem_count, Dataset.language,
               Toolchain.version, Dataset.project_id, Dataset.hidden_tests, Run.checkpoint, Run.step)
        .join(Dataset, Dataset.id == Run.dataset_id)
        .outerjoin(Toolchain, Toolchain.language == Dataset.language)
        .where(Run.id == run_id, owned(principal, Run.project_id))
    )
    row = (await session.execute(statement)).one_or_none()
    return RunHeader(*row) if row is not None else None


async def filter_options(
    session: AsyncSession, principal: Principal, limit: int = 1000
) -> tuple[list[dict[str, str]], list[str]]:
    """Datasets (id, name) the viewer may read and the distinct models of its runs, for the runs list filters."""
    datasets = (
        await session.execute(
            select(Dataset.id, Dataset.name, Dataset.problem_count)
            .where(readable_dataset(principal))
            .order_by(Dataset.created_at.desc(), Dataset.id)
            .limit(limit)
        )
    ).all()
    models = (await session.execute(
        select(Run.model).where(owned(principal, Run.project_id)).distinct().order_by(Run.model).limit(limit)
    )).scalars().all()
    return (
        [{"id": str(d.id), "name": d.name, "problems": d.problem_count} for d in datasets],
        list(models),
    )


async def last_dataset(session: AsyncSession, principal: Principal, readable: set[str]) -> str | None:
    """The dataset of the viewer's own latest run in its project (submitted with this key; else any of the
    project's), among `readable`: where the leaderboard opens. Never another project's choice."""
    for own_key in (True, False):
        statement = select(Run.dataset_id).where(Run.project_id == principal.project_id)
        if own_key:
            if principal.key_id is None:
                continue
            statement = statement.where(Run.api_key_id == principal.key_id)
        found = await session.scalar(statement.order_by(Run.created_at.desc(), Run.id).limit(1))
        if found is not None and str(found) in readable:
            return str(found)
    return None


async def problem_view(session: AsyncSession, principal: Principal, run: RunHeader, key: str) -> ProblemView | None:
    """A problem of a run the viewer may read; its tests left out when they are hidden from the viewer."""
    problem = (
        await session.execute(
            select(
                Problem.id, Problem.position, Problem.prompt, Problem.test, Problem.entry_point, Problem.hidden_tests
            ).where(Problem.dataset_id == run.dataset_id, Problem.key == key)
        )
    ).one_or_none()
    if problem is None:
        return None
    previous_key = await session.scalar(
        select(Problem.key)
        .where(Problem.dataset_id == run.dataset_id, Problem.position < problem.position)
        .order_by(Problem.position.desc())
        .limit(1)
    )
    next_key = await session.scalar(
        select(Problem.key)
        .where(Problem.dataset_id == run.dataset_id, Problem.position > problem.position)
        .order_by(Problem.position)
        .limit(1)
    )
    # One grouped count over the problem's samples (ix_samples_run_problem finds them).
    rows = (
        await session.execute(
            select(Sample.state, Sample.verdict, func.count(), func.count().filter(Sample.flags.is_not(None)))
            .where(Sample.run_id == run.id, Sample.problem_id == problem.id)
            .group_by(Sample.state, Sample.verdict)
        )
    ).all()
    counted: dict[str, int] = {}
    flagged = 0
    for state, verdict, count, flagged_here in rows:
        label = verdict if verdict is not None else state
        counted[label] = counted.get(label, 0) + count
        flagged += flagged_here
    # Verdicts in their usual order, then unfinished states.
    order = [v.value for v in Verdict] + [SampleState.QUEUED, SampleState.LEASED, SampleState.CANCELLED]
    verdicts = {label: counted[label] for label in order if label in counted}
    hidden = (run.dataset_hides_tests or problem.hidden_tests) and not principal.owns(run.dataset_project_id)
    return ProblemView(
        key=key,
        prompt=problem.prompt,
        test="" if hidden else problem.test,
        tests_hidden=hidden,
        entry_point=problem.entry_point,
        previous_key=previous_key,
        next_key=next_key,
        verdicts=verdicts,
        total=sum(verdicts.values()),
        flagged=flagged,
    )
