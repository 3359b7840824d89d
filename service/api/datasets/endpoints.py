"""HTTP routes for datasets."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, status

from service.api.auth.dependencies import CallerDep
from service.api import idempotency
from service.api.datasets import service as dataset_service
from service.api.datasets.schemas import (
    DatasetCreate,
    DatasetDetail,
    DatasetList,
    DatasetRead,
    DatasetUpdate,
    LanguageRead,
    StorableStr,
)
from service.api.dependencies import SessionDep, SettingsDep, openapi_error, openapi_invalid_input
from service.api.idempotency import IdempotencyKeyHeader

router = APIRouter(prefix="/v1/datasets", tags=["datasets"])

_NOT_FOUND = openapi_error("No such dataset", {"detail": "dataset 6f1c2b1e-4a43-4f7a-9a55-0e4b4f1b2c3d not found"})


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=DatasetRead,
    summary="Create a dataset in the caller's project (idempotent on name + content)",
    description=(
        "Stores the problems in the given order. `format` (default `humaneval`) says how programs are built "
        "and judged: `humaneval`, `mbpp`, `stdio` or `call`. For human-eval problems `task_id` is accepted "
        "for `id`, so rows of `HumanEval.jsonl` can be posted unchanged. Posting the same name and content "
        "again returns the project's existing dataset with **200** instead of 201 (same `id`). Names are the "
        "project's: another project's dataset of the same name is another dataset, never this one. "
        "`shared: true` lets every project read and run against it (only this project changes it); "
        "`hidden_tests: true` (or a problem's own `hidden_tests`) hides the tests from other projects."
    ),
    responses={
        200: {"description": "A dataset with this name and digest already existed; it is returned", "model": DatasetRead},
        201: {"description": "Dataset created"},
        422: openapi_invalid_input(
            "Invalid problems: duplicate ids, missing fields, limits outside the server maxima",
            ["body", "problems"], "duplicate problem id(s): 'HumanEval/3'", ["HumanEval/3"],
        ),
    },
)
async def create_dataset(
    body: DatasetCreate,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    principal: CallerDep,
    idempotency_key: IdempotencyKeyHeader = None,
) -> Any:
    async def produce() -> tuple[int, DatasetRead]:
        dataset, created = await dataset_service.create(session, settings, principal, body)
        return (status.HTTP_201_CREATED if created else status.HTTP_200_OK), dataset

    return await idempotency.respond_once(session, request, principal, idempotency_key, produce)


@router.get(
    "",
    response_model=DatasetList,
    summary="List datasets, newest first: the project's own and those other projects share",
    description=(
        "`name` finds a dataset by name **in the caller's project only** (newest first when the project has "
        "posted several versions); `project` looks in that project's shared datasets instead."
    ),
)
async def list_datasets(
    session: SessionDep,
    principal: CallerDep,
    name: Annotated[StorableStr | None, Query(max_length=200, description="Only datasets of this name")] = None,
    project: Annotated[
        StorableStr | None, Query(max_length=200, description="Only this project's (another project's: shared ones)")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="Page size")] = 50,
    offset: Annotated[int, Query(ge=0, le=2**31 - 1, description="Rows to skip")] = 0,
) -> DatasetList:
    datasets, total = await dataset_service.list_datasets(
        session, principal, limit=limit, offset=offset, name=name, project=project
    )
    return DatasetList(items=datasets, total=total, limit=limit, offset=offset)


@router.get(
    "/{dataset_id}",
    response_model=DatasetDetail,
    summary="Get a dataset with a summary of its problems",
    responses={404: _NOT_FOUND},
)
async def get_dataset(dataset_id: uuid.UUID, session: SessionDep, principal: CallerDep) -> DatasetDetail:
    return await dataset_service.get(session, principal, dataset_id)


@router.patch(
    "/{dataset_id}",
    response_model=DatasetDetail,
    summary="Share a dataset or hide its tests (its own project only)",
    description=(
        "`shared`: every project may read it and run against it, read-only. `hidden_tests`: other projects' "
        "failure details name the failing case's index and the kind of failure, never its input, expected output "
        "or the test's text. The problems themselves never change (post a new dataset instead)."
    ),
    responses={
        404: _NOT_FOUND,
        403: openapi_error("Another project's shared dataset: read-only",
                           {"detail": "dataset 6f1c2b1e-4a43-4f7a-9a55-0e4b4f1b2c3d is project 'bench''s, shared read-only: "
                                      "only its project changes it"}),
    },
)
async def update_dataset(
    dataset_id: uuid.UUID, body: DatasetUpdate, session: SessionDep, principal: CallerDep
) -> DatasetDetail:
    return await dataset_service.update(session, principal, dataset_id, body)


languages_router = APIRouter(prefix="/v1/languages", tags=["datasets"])


@languages_router.get(
    "", response_model=list[LanguageRead], summary="Languages: compile and run commands, limits, toolchain versions"
)
async def list_languages(session: SessionDep) -> list[LanguageRead]:
    return await dataset_service.list_languages(session)
