"""Per-sample cost, latency, tokens, confidence and steps: validated (422s that name the field), stored, returned, exported."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from service.client.commands import results_rows
from tests.conftest import create_dataset, set_verdicts


def _sample(key: str, **metadata: Any) -> dict[str, Any]:
    return {"problem_id": key, "completion": "    return x\n", **metadata}


async def _post(client: httpx.AsyncClient, dataset_id: str, samples: list[dict[str, Any]], **body: Any) -> httpx.Response:
    payload = {"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 0.2}, "samples": samples, **body}
    return await client.post("/v1/runs", json=payload)


async def test_metadata_is_stored_returned_and_exported(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a", "b"])
    samples = [
        _sample("a", cost=0.012, latency_ms=812.5, input_tokens=130, output_tokens=64, confidence=0.9, steps=3),
        _sample("a", cost=0, latency_ms=1200, confidence=1),
        _sample("b"),
    ]
    response = await _post(client, dataset["id"], samples, currency="USD")
    assert response.status_code == 202, response.text
    run = response.json()
    assert run["currency"] == "USD"
    assert (await client.get(f"/v1/runs/{run['id']}")).json()["currency"] == "USD"

    await set_verdicts(db_session, run["id"], "a", ["passed", "failed"])
    await set_verdicts(db_session, run["id"], "b", ["passed"])
    page = (await client.get(f"/v1/runs/{run['id']}/samples", params={"include": "completion"})).json()["items"]
    first, second, third = page
    assert {k: first[k] for k in ("cost", "latency_ms", "input_tokens", "output_tokens", "confidence", "steps")} == {
        "cost": 0.012, "latency_ms": 812.5, "input_tokens": 130, "output_tokens": 64, "confidence": 0.9, "steps": 3,
    }
    assert (second["cost"], second["latency_ms"], second["confidence"], second["input_tokens"]) == (0, 1200, 1, None)
    assert all(third[k] is None for k in ("cost", "latency_ms", "confidence", "steps"))
    assert first["attempts"] == 1  # the sandbox's execution count is a different field from the agent's steps

    rows, _ = results_rows(page)
    assert rows[0]["cost"] == 0.012 and rows[0]["steps"] == 3 and rows[0]["passed"] is True
    assert "cost" not in rows[2] and rows[2]["task_id"] == "b"


@pytest.mark.parametrize(
    ("metadata", "field", "message"),
    [
        ({"confidence": 1.2}, "confidence", "less than or equal to 1"),
        ({"confidence": -0.1}, "confidence", "greater than or equal to 0"),
        ({"confidence": "0.9"}, "confidence", ""),
        ({"cost": -0.01}, "cost", "greater than or equal to 0"),
        ({"latency_ms": -5}, "latency_ms", "greater than or equal to 0"),
        ({"input_tokens": 1.5}, "input_tokens", ""),
        ({"output_tokens": -1}, "output_tokens", "greater than or equal to 0"),
        ({"steps": True}, "steps", ""),
        ({"steps": 2**31}, "steps", "less than or equal to"),
    ],
)
async def test_bad_metadata_is_a_422_naming_the_field(
    client: httpx.AsyncClient, metadata: dict[str, Any], field: str, message: str
) -> None:
    dataset = await create_dataset(client, ["a"])
    response = await _post(client, dataset["id"], [_sample("a"), _sample("a", **metadata)], currency="EUR")
    assert response.status_code == 422, response.text
    errors = response.json()["detail"]
    assert any(e["loc"][:4] == ["body", "samples", 1, field] and message in e["msg"] for e in errors), errors
    assert (await client.get("/v1/runs")).json()["total"] == 0  # nothing stored


async def test_non_finite_cost_is_refused(client: httpx.AsyncClient) -> None:
    dataset = await create_dataset(client, ["a"])
    payload = (
        '{"dataset_id": "%s", "model": "m", "sampling": {"temperature": 0}, "currency": "USD", '
        '"samples": [{"problem_id": "a", "completion": "x", "cost": Infinity}]}' % dataset["id"]
    )
    response = await client.post("/v1/runs", content=payload, headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text


async def test_cost_needs_a_currency_and_a_valid_one(client: httpx.AsyncClient) -> None:
    dataset = await create_dataset(client, ["a"])
    response = await _post(client, dataset["id"], [_sample("a", cost=0.01)])
    assert response.status_code == 422
    assert "samples[0] (sample 1, counting from 1) has a cost but the run has no currency" in response.text
    response = await _post(client, dataset["id"], [_sample("a", cost=0.01)], currency="dollars")
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "currency"]
    # a currency without costs is harmless; latency and confidence need none
    response = await _post(client, dataset["id"], [_sample("a", latency_ms=10, confidence=0.5)])
    assert response.status_code == 202 and response.json()["currency"] is None
