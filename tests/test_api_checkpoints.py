"""GET /v1/checkpoints: one model's checkpoints on one dataset, each against the one before it (paired)."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

import httpx
import numpy as np
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from service.api.checkpoints import service as checkpoint_service
from service.api.checkpoints.service import CheckpointOptions, _warnings
from service.statistics.checkpoints import versus_previous
from tests.conftest import client_for, create_dataset, create_run, project_key
from tests.test_api_compare import _bulk_verdicts

PROBLEMS = 40
N = 5
KEYS = [f"c/{i}" for i in range(PROBLEMS)]


async def _checkpoint(client: httpx.AsyncClient, db_session: AsyncSession, dataset_id: str, step: int,
                      solved: set[int] | None, model: str = "trainee") -> dict[str, Any]:
    """A run at `step` whose every sample passes on the `solved` problems and fails elsewhere (None: not run)."""
    run = await create_run(client, dataset_id, {k: N for k in KEYS}, model=model, checkpoint=f"ckpt-{step}", step=step)
    if solved is not None:
        verdicts = {k: ["passed" if i in solved else "failed"] * N for i, k in enumerate(KEYS)}
        await _bulk_verdicts(db_session, run["id"], verdicts)
    return run


@pytest.fixture
async def series(client: httpx.AsyncClient, db_session: AsyncSession) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    dataset = await create_dataset(client, KEYS)
    # Submitted out of step order: the view orders by step.
    late = await _checkpoint(client, db_session, dataset["id"], 3000, set(range(29)))  # 29 of 40: one lost
    early = await _checkpoint(client, db_session, dataset["id"], 1000, set(range(10)))  # 10 of 40
    middle = await _checkpoint(client, db_session, dataset["id"], 2000, set(range(30)))  # 30 of 40: 20 gained
    await _checkpoint(client, db_session, dataset["id"], 4000, None)  # queued: pending, not plotted
    await _checkpoint(client, db_session, dataset["id"], 2500, set(range(40)), model="someone-else")
    return dataset, [early, middle, late]


async def test_points_by_step_with_changes(client: httpx.AsyncClient, series: Any) -> None:
    dataset, (early, middle, late) = series
    response = await client.get("/v1/checkpoints", params={"model": "trainee", "dataset": dataset["id"], "resamples": 2000})
    assert response.status_code == 200, response.text
    body = response.json()
    assert [p["step"] for p in body["points"]] == [1000, 2000, 3000]
    assert [p["checkpoint"] for p in body["points"]] == ["ckpt-1000", "ckpt-2000", "ckpt-3000"]
    assert [p["run_id"] for p in body["points"]] == [early["id"], middle["id"], late["id"]]
    assert [p["pass_at_k"]["estimate"] for p in body["points"]] == [0.25, 0.75, 0.725]
    assert [p["problems"] for p in body["points"]] == [40, 40, 40] and not any(p["partial"] for p in body["points"])
    assert [(p["step"], p["status"]) for p in body["pending"]] == [(4000, "queued")]
    first, gained, lost = (p["vs_previous"] for p in body["points"])
    assert first is None
    # 20 problems gained, none lost: 20 non-tied problems, all +1: exact p = 2 / 2^20.
    assert gained["previous_run_id"] == early["id"] and gained["problems"] == 40
    assert gained["difference"]["estimate"] == pytest.approx(0.5)
    assert gained["p_value"] == 2 / 2**20 and gained["p_value_exact"]
    assert gained["significant"] and gained["direction"] == "better"
    # One problem lost: p = 1 (both sign vectors of one difference reach it), worse but not significant.
    assert lost["difference"]["estimate"] == pytest.approx(-0.025) and lost["p_value"] == 1.0
    assert not lost["significant"] and lost["direction"] == "worse"
    # Holm over the two steps.
    assert gained["p_value_adjusted"] == 2 * 2 / 2**20 and lost["p_value_adjusted"] == 1.0
    assert body["significant_changes"] == 1 and body["k"] == 1 and body["dataset_name"] == dataset["name"]


async def test_the_run_pages_interval_and_the_compare_pages_difference(client: httpx.AsyncClient, series: Any) -> None:
    dataset, (early, middle, _) = series
    body = (await client.get("/v1/checkpoints", params={"model": "trainee", "dataset": dataset["id"], "k": 3})).json()
    point = body["points"][1]
    metrics = (await client.get(f"/v1/runs/{middle['id']}/metrics", params={"k": "3"})).json()
    assert point["pass_at_k"] == metrics["metrics"][0]["pass_at_k"]
    compared = (await client.get("/v1/compare", params={"base": early["id"], "candidate": middle["id"], "k": "3"})).json()
    assert point["vs_previous"]["difference"] == compared["metrics"][0]["difference"]
    assert point["vs_previous"]["p_value"] == compared["metrics"][0]["p_value"]


async def test_pairs_over_shared_problems_only(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, KEYS)
    await _checkpoint(client, db_session, dataset["id"], 10, set(range(20)))
    half = await create_run(client, dataset["id"], {k: N for k in KEYS[:25]}, model="trainee", checkpoint="c20", step=20)
    await _bulk_verdicts(db_session, half["id"], {k: ["passed"] * N for k in KEYS[:25]})
    body = (await client.get("/v1/checkpoints", params={"model": "trainee", "dataset": dataset["id"]})).json()
    second = body["points"][1]
    assert second["problems"] == 25 and second["pass_at_k"]["estimate"] == 1.0
    assert second["vs_previous"]["problems"] == 25  # the 25 both finished
    assert second["vs_previous"]["difference"]["estimate"] == pytest.approx(5 / 25)
    assert any("cover different problems" in w for w in body["warnings"])


async def test_bad_input(client: httpx.AsyncClient, series: Any) -> None:
    dataset, _ = series
    unknown = await client.get("/v1/checkpoints", params={"model": "trainee", "dataset": str(uuid.uuid4())})
    assert unknown.status_code == 404 and "dataset" in unknown.json()["detail"]
    malformed = await client.get("/v1/checkpoints", params={"model": "trainee", "dataset": "humaneval"})
    assert malformed.status_code == 422
    no_model = await client.get("/v1/checkpoints", params={"model": "nobody", "dataset": dataset["id"]})
    assert no_model.status_code == 404 and "carries a step" in no_model.json()["detail"]
    too_large = await client.get("/v1/checkpoints", params={"model": "trainee", "dataset": dataset["id"], "k": 6})
    assert too_large.status_code == 422, too_large.text
    detail = too_large.json()["detail"][0]
    assert detail["loc"] == ["query", "k"] and "step 1000" in detail["msg"] and "Choose k up to 5" in detail["msg"]
    assert detail["input"]["n_min"] == 5
    zero = await client.get("/v1/checkpoints", params={"model": "trainee", "dataset": dataset["id"], "k": 0})
    assert zero.status_code == 422


async def test_submission_fields(client: httpx.AsyncClient) -> None:
    dataset = await create_dataset(client, KEYS[:2])
    samples = [{"problem_id": KEYS[0], "completion": "    return x\n"}]
    body = {"dataset_id": dataset["id"], "model": "m", "sampling": {"temperature": 0.2}, "samples": samples}
    no_step = await client.post("/v1/runs", json={**body, "checkpoint": "ckpt-9"})
    assert no_step.status_code == 422 and "has no step" in no_step.text
    for bad in (-1, 1.5, "12"):
        assert (await client.post("/v1/runs", json={**body, "step": bad})).status_code == 422, bad
    created = await client.post("/v1/runs", json={**body, "checkpoint": "ckpt-9", "step": 9000})
    assert created.status_code == 202, created.text
    run = (await client.get(f"/v1/runs/{created.json()['id']}")).json()
    assert (run["checkpoint"], run["step"]) == ("ckpt-9", 9000)
    plain = (await client.post("/v1/runs", json=body)).json()
    assert (plain["checkpoint"], plain["step"]) == (None, None)


async def test_another_projects_runs_do_not_exist(
    app: FastAPI, client: httpx.AsyncClient, db_session: AsyncSession, series: Any
) -> None:
    dataset, _ = series
    key = await project_key(db_session, "rivals")
    async with client_for(app, key) as rivals:
        hidden = await rivals.get("/v1/checkpoints", params={"model": "trainee", "dataset": dataset["id"]})
        assert hidden.status_code == 404 and hidden.json()["detail"] == f"dataset {dataset['id']} not found"
        shared = await client.patch(f"/v1/datasets/{dataset['id']}", json={"shared": True})
        assert shared.status_code == 200, shared.text
        # Readable now, but the runs stay their project's.
        empty = await rivals.get("/v1/checkpoints", params={"model": "trainee", "dataset": dataset["id"]})
        assert empty.status_code == 404 and "carries a step" in empty.json()["detail"]


async def test_the_model_may_be_left_out_when_there_is_one(client: httpx.AsyncClient, series: Any) -> None:
    dataset, _ = series
    several = await client.get("/v1/checkpoints", params={"dataset": dataset["id"]})
    assert several.status_code == 422 and "someone-else, trainee" in several.json()["detail"][0]["msg"]
    alone = await create_dataset(client, KEYS[:3])
    missing = await client.get("/v1/checkpoints", params={"dataset": alone["id"]})
    assert missing.status_code == 404 and "carries a step" in missing.json()["detail"]
    await create_run(client, alone["id"], {k: 1 for k in KEYS[:3]}, model="solo", checkpoint="a", step=1)
    only = await client.get("/v1/checkpoints", params={"dataset": alone["id"]})
    assert only.status_code == 200 and only.json()["model"] == "solo" and only.json()["points"] == []


async def test_only_the_latest_steps_beyond_the_limit(
    client: httpx.AsyncClient, series: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset, (_, _, late) = series
    monkeypatch.setattr(checkpoint_service, "MAX_POINTS", 2)
    body = (await client.get("/v1/checkpoints", params={"model": "trainee", "dataset": dataset["id"]})).json()
    assert [p["step"] for p in body["points"]] == [3000] and [p["step"] for p in body["pending"]] == [4000]
    assert body["points"][0]["run_id"] == late["id"] and body["points"][0]["vs_previous"] is None
    assert "4 runs carry a step; the latest 2 are shown" in body["warnings"]


def test_many_steps_say_how_many_marks_chance_gives() -> None:
    loaded = [SimpleNamespace(run=SimpleNamespace(step=s, checkpoint=None, id=s), finished=[None] * 40) for s in range(21)]
    same = versus_previous(np.zeros(40), np.zeros(40), k=1, resamples=100)
    warnings = _warnings(loaded, [None] + [same] * 20, 21, 21, CheckpointOptions())  # type: ignore[arg-type]
    assert warnings == ["20 steps are tested, each at 5%: about 1.0 marks are expected by chance alone; "
                        "`p_value_adjusted` (Holm) holds for the whole series"]
    assert _warnings(loaded[:10], [None] + [same] * 9, 10, 10, CheckpointOptions()) == []  # type: ignore[arg-type]
