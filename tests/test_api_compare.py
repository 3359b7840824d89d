"""GET /v1/compare: paired differences, the 14/5/181 worked vector, datasets, k and metadata checks."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from tests.conftest import create_dataset, create_run, problem, set_verdicts


async def _bulk_verdicts(session: AsyncSession, run_id: str, verdicts: dict[str, list[str]]) -> None:
    """Like set_verdicts, for many problems in one statement."""
    keys = [k for k, vs in verdicts.items() for _ in vs]
    indexes = [i for vs in verdicts.values() for i in range(len(vs))]
    values = [v for vs in verdicts.values() for v in vs]
    await session.execute(
        text(
            "UPDATE samples s SET state = 'done', verdict = v.verdict, attempts = 1, finished_at = now() "
            "FROM problems p, unnest(CAST(:keys AS text[]), CAST(:indexes AS int[]), CAST(:verdicts AS text[])) "
            "AS v(key, idx, verdict) WHERE s.run_id = :run_id AND s.problem_id = p.id AND p.key = v.key "
            "AND s.index = v.idx"
        ),
        {"run_id": run_id, "keys": keys, "indexes": indexes, "verdicts": values},
    )
    await session.commit()


async def _compare(client: httpx.AsyncClient, base: str, candidate: str, **params: Any) -> httpx.Response:
    return await client.get("/v1/compare", params={"base": base, "candidate": candidate, **params})


def _counts(n: int, c: int) -> list[str]:
    return ["passed"] * c + ["failed"] * (n - c)


@pytest.fixture
async def fourteen_five(client: httpx.AsyncClient, db_session: AsyncSession) -> tuple[Any, Any, Any]:
    """200 problems, one sample each: candidate wins 14, loses 5, ties 181 (90 both pass, 91 both fail)."""
    keys = [f"item/{i}" for i in range(200)]
    dataset = await create_dataset(client, keys)
    base = await create_run(client, dataset["id"], {k: 1 for k in keys}, model="model-a")
    candidate = await create_run(client, dataset["id"], {k: 1 for k in keys}, model="model-b")
    outcome_b = [0] * 14 + [1] * 5 + [1] * 90 + [0] * 91
    outcome_c = [1] * 14 + [0] * 5 + [1] * 90 + [0] * 91
    for run, outcome in ((base, outcome_b), (candidate, outcome_c)):
        verdicts = {k: ["passed" if o else "failed"] for k, o in zip(keys, outcome, strict=True)}
        await _bulk_verdicts(db_session, run["id"], verdicts)
    return dataset, base, candidate


async def test_worked_vector_fourteen_five(client: httpx.AsyncClient, fourteen_five: tuple[Any, Any, Any]) -> None:
    dataset, base, candidate = fourteen_five
    response = await _compare(client, base["id"], candidate["id"], k="1")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["base"]["run_id"] == base["id"] and body["candidate"]["model"] == "model-b"
    assert body["base"]["sampling"] == body["candidate"]["sampling"] == {"temperature": 0.8}
    summary = (body["dataset_id"], body["problems"], body["dropped_problems"], body["intersection"])
    assert summary == (dataset["id"], 200, 0, False)
    assert body["warnings"] == [] and body["partial"] is False
    [metric] = body["metrics"]
    assert metric["base"]["estimate"] == pytest.approx(0.475) and metric["candidate"]["estimate"] == pytest.approx(0.52)
    diff = metric["difference"]
    assert diff["estimate"] == pytest.approx(0.045)
    assert diff["standard_error"] == pytest.approx(0.0216, abs=5e-5)  # 2.16 points
    assert 0.0 < diff["ci_low"] < 0.01 and 0.08 < diff["ci_high"] < 0.095  # roughly 0.5 to 9 points
    assert diff["method_used"] == "bca"
    # Sign-flip on 0/1 outcomes: the 181 ties cannot flip, the 19 discordant are enumerated exactly.
    assert metric["p_value_method"] == "sign-flip permutation" and metric["p_value_exact"] is True
    assert round(metric["p_value"], 4) == 0.0636
    assert 0.8 < metric["correlation"] < 0.85
    per_problem = body["per_problem"]
    assert (per_problem["k"], per_problem["wins"], per_problem["losses"], per_problem["ties"]) == (1, 14, 5, 181)
    assert per_problem["items_total"] == 200 and len(per_problem["items"]) == 200
    assert per_problem["items"][0] == {"problem_id": "item/0", "base": 0.0, "candidate": 1.0, "delta": 1.0}
    mcnemar = body["mcnemar"]
    assert (mcnemar["wins"], mcnemar["losses"]) == (14, 5)
    assert round(mcnemar["exact_p"], 4) == 0.0636
    assert round(mcnemar["chi2"], 3) == 4.263 and round(mcnemar["chi2_p"], 4) == 0.0389
    assert round(mcnemar["chi2_corrected"], 3) == 3.368 and round(mcnemar["chi2_corrected_p"], 4) == 0.0665
    capped = (await _compare(client, base["id"], candidate["id"], items_limit=10)).json()["per_problem"]
    assert len(capped["items"]) == 10 and capped["items_truncated"] and capped["wins"] == 14


async def test_same_seed_same_result(client: httpx.AsyncClient, fourteen_five: tuple[Any, Any, Any]) -> None:
    _, base, candidate = fourteen_five
    params = {"k": "1", "resamples": 2000, "seed": 9, "method": "percentile"}
    first = (await _compare(client, base["id"], candidate["id"], **params)).json()
    assert first == (await _compare(client, base["id"], candidate["id"], **params)).json()
    assert first["metrics"][0]["difference"]["method_used"] == "percentile"
    other = (await _compare(client, base["id"], candidate["id"], **{**params, "seed": 10})).json()
    assert other["metrics"][0]["difference"]["ci_low"] != first["metrics"][0]["difference"]["ci_low"] or (
        other["metrics"][0]["difference"]["ci_high"] != first["metrics"][0]["difference"]["ci_high"]
    )


async def test_many_samples_per_problem(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    keys = [f"p{i}" for i in range(40)]
    dataset = await create_dataset(client, keys)
    base = await create_run(client, dataset["id"], {k: 10 for k in keys})
    candidate = await create_run(client, dataset["id"], {k: 10 for k in keys}, sampling={"temperature": 0.2})
    base_c = [(i * 3) % 11 for i in range(40)]
    cand_c = [min(10, c + (1 if i % 4 else 0)) for i, c in enumerate(base_c)]
    await _bulk_verdicts(db_session, base["id"], {k: _counts(10, c) for k, c in zip(keys, base_c, strict=True)})
    await _bulk_verdicts(db_session, candidate["id"], {k: _counts(10, c) for k, c in zip(keys, cand_c, strict=True)})
    body = (await _compare(client, base["id"], candidate["id"], k="1,5", permutations=5000)).json()
    assert body["mcnemar"] is None
    assert [m["k"] for m in body["metrics"]] == [1, 5]
    at1 = body["metrics"][0]
    assert at1["difference"]["estimate"] == pytest.approx((sum(cand_c) - sum(base_c)) / 400)
    assert at1["difference"]["ci_low"] > 0  # a consistent improvement on 29 problems, no losses
    assert at1["p_value"] < 0.001 and at1["p_value_exact"] is False and at1["permutations"] == 5000
    assert body["per_problem"]["losses"] == 0
    [warning] = [w for w in body["warnings"] if "sampling" in w]
    assert "temperature: 0.8 vs 0.2" in warning and "nothing is pooled" in warning


async def test_unknown_runs_are_404(client: httpx.AsyncClient, fourteen_five: tuple[Any, Any, Any]) -> None:
    _, base, _ = fourteen_five
    missing = str(uuid.uuid4())
    for a, b in ((missing, base["id"]), (base["id"], missing)):
        response = await _compare(client, a, b)
        assert response.status_code == 404 and response.json() == {"detail": f"run {missing} not found"}


async def test_k_above_the_smallest_n_is_refused(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a", "b"])
    base = await create_run(client, dataset["id"], {"a": 10, "b": 10})
    candidate = await create_run(client, dataset["id"], {"a": 10, "b": 3})
    await _bulk_verdicts(db_session, base["id"], {"a": _counts(10, 2), "b": _counts(10, 5)})
    await _bulk_verdicts(db_session, candidate["id"], {"a": _counts(10, 4), "b": _counts(3, 1)})
    response = await _compare(client, base["id"], candidate["id"], k="1,5")
    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["loc"] == ["query", "k"] and "candidate run" in error["msg"] and "n=3" in error["msg"]
    assert error["input"] == {"k": 5, "n_min": 3, "run": "candidate", "problem_ids": ["b"]}
    assert (await _compare(client, base["id"], candidate["id"], k="3")).status_code == 200


async def test_different_datasets_need_intersection(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    first = await create_dataset(client, ["shared/1", "shared/2", "changed", "only-first"])
    payload = {
        "name": f"second-{uuid.uuid4().hex[:6]}",
        "problems": [
            problem("shared/1"), problem("shared/2"), problem("only-second"),
            problem("changed", test="def check(candidate):\n    assert candidate(2) == 2\n"),
        ],
    }
    response = await client.post("/v1/datasets", json=payload)
    assert response.status_code == 201, response.text
    second = response.json()
    base = await create_run(client, first["id"], {k: 2 for k in ["shared/1", "shared/2", "changed", "only-first"]})
    candidate = await create_run(client, second["id"], {k: 2 for k in ["shared/1", "shared/2", "changed", "only-second"]})
    for run in (base, candidate):
        for key in ("shared/1", "shared/2", "changed", "only-first", "only-second"):
            await set_verdicts(db_session, run["id"], key, ["passed", "failed"])
    response = await _compare(client, base["id"], candidate["id"])
    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["loc"] == ["query", "intersection"] and "intersection=true" in error["msg"]
    body = (await _compare(client, base["id"], candidate["id"], intersection="true")).json()
    # Only the two problems with the same id *and* the same content are compared.
    assert (body["intersection"], body["dataset_id"], body["problems"], body["dropped_problems"]) == (True, None, 2, 3)
    assert [i["problem_id"] for i in body["per_problem"]["items"]] == ["shared/1", "shared/2"]
    assert any("differ in prompt, test or entry point" in w for w in body["warnings"])
    assert any("3 problem(s) of either run are not compared" in w for w in body["warnings"])


async def test_disjoint_datasets_have_nothing_in_common(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    a = await create_dataset(client, ["x"])
    b = await create_dataset(client, ["y"])
    base = await create_run(client, a["id"], {"x": 1})
    candidate = await create_run(client, b["id"], {"y": 1})
    response = await _compare(client, base["id"], candidate["id"], intersection="true")
    assert response.status_code == 422 and "no problem in common" in response.json()["detail"][0]["msg"]


async def test_unfinished_problems_are_left_out_and_said(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a", "b", "c"])
    base = await create_run(client, dataset["id"], {"a": 2, "b": 2, "c": 2})
    candidate = await create_run(client, dataset["id"], {"a": 2, "b": 2, "c": 2})
    response = await _compare(client, base["id"], candidate["id"])
    assert response.status_code == 409
    await _bulk_verdicts(db_session, base["id"], {"a": _counts(2, 1), "b": _counts(2, 2), "c": _counts(2, 0)})
    await _bulk_verdicts(db_session, candidate["id"], {"a": _counts(2, 2), "b": _counts(2, 2)})
    body = (await _compare(client, base["id"], candidate["id"])).json()
    assert (body["problems"], body["dropped_problems"], body["partial"]) == (2, 1, True)
    assert body["base"]["problems"] == 3 and body["candidate"]["problems"] == 2
    assert any("unfinished" in w for w in body["warnings"])


async def test_a_run_against_itself(client: httpx.AsyncClient, fourteen_five: tuple[Any, Any, Any]) -> None:
    _, base, _ = fourteen_five
    body = (await _compare(client, base["id"], base["id"])).json()
    [metric] = body["metrics"]
    assert (metric["difference"]["estimate"], metric["p_value"], metric["correlation"]) == (0.0, 1.0, 1.0)
    assert metric["difference"]["method_used"] == "none"
    assert (body["per_problem"]["ties"], body["mcnemar"]["exact_p"], body["mcnemar"]["chi2"]) == (200, 1.0, None)


async def test_bad_parameters(client: httpx.AsyncClient, fourteen_five: tuple[Any, Any, Any]) -> None:
    _, base, candidate = fourteen_five
    for params, field in [
        ({"k": "0"}, "k"), ({"method": "basic"}, "method"), ({"confidence": 1}, "confidence"),
        ({"resamples": 0}, "resamples"), ({"permutations": 100_001}, "permutations"),
        ({"items_limit": 10_001}, "items_limit"), ({"intersection": "perhaps"}, "intersection"),
    ]:
        response = await _compare(client, base["id"], candidate["id"], **params)
        assert response.status_code == 422, params
        assert [e["loc"] for e in response.json()["detail"]] == [["query", field]], params
    response = await client.get("/v1/compare", params={"base": base["id"]})
    assert response.status_code == 422
