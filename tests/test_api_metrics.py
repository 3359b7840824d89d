"""Metrics API: verdicts written straight into the DB (as a worker would), estimates checked by hand."""

from __future__ import annotations

import uuid
from math import comb
from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from tests.conftest import create_dataset, create_run, set_verdicts


def _verdicts(n: int, c: int, fail: str = "failed") -> list[str]:
    return ["passed"] * c + [fail] * (n - c)


async def _metrics(client: httpx.AsyncClient, run_id: str, **params: Any) -> httpx.Response:
    return await client.get(f"/v1/runs/{run_id}/metrics", params=params)


async def test_pass_at_k_and_pass_hat_k_match_hand_computed(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["p"])
    run = await create_run(client, dataset["id"], {"p": 10})
    await set_verdicts(db_session, run["id"], "p", _verdicts(10, 3, "error"))
    response = await _metrics(client, run["id"], k="1,2,3,5")
    assert response.status_code == 200, response.text
    body = response.json()
    by_k = {m["k"]: m for m in body["metrics"]}
    expected_at = {1: 0.3, 2: 1 - 21 / 45, 3: 1 - 35 / 120, 5: 1 - 21 / 252}
    expected_hat = {1: 0.3, 2: 1 / 15, 3: 1 / 120, 5: 0.0}
    for k in (1, 2, 3, 5):
        assert by_k[k]["pass_at_k"]["estimate"] == pytest.approx(expected_at[k], rel=1e-12)
        assert by_k[k]["pass_hat_k"]["estimate"] == pytest.approx(expected_hat[k], rel=1e-12, abs=1e-15)
        # One problem: nothing to resample, no bounds (not a zero-width interval).
        assert by_k[k]["pass_at_k"]["ci_low"] is None and by_k[k]["pass_at_k"]["ci_high"] is None
    interval = by_k[1]["pass_at_k"]
    assert set(interval) >= {"estimate", "ci_low", "ci_high", "confidence", "standard_error", "method"}
    assert interval["confidence"] == 0.95
    assert (body["partial"], body["problems"], body["samples"], body["n_min"], body["n_max"]) == (False, 1, 10, 10, 10)
    assert body["run_id"] == run["id"] and body["dataset_id"] == dataset["id"] and body["sampling"] == {"temperature": 0.8}
    assert body["model"] == "test-model" and body["excluded_sandbox_errors"] == 0


async def test_mean_over_problems_with_an_interval(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    cs = [0, 3, 10, 7, 5]
    dataset = await create_dataset(client, [f"p{i}" for i in range(5)])
    run = await create_run(client, dataset["id"], {f"p{i}": 10 for i in range(5)})
    for i, c in enumerate(cs):
        await set_verdicts(db_session, run["id"], f"p{i}", _verdicts(10, c))
    body = (await _metrics(client, run["id"], k="1,3", confidence=0.9, resamples=2000)).json()
    at3 = body["metrics"][1]["pass_at_k"]
    assert at3["estimate"] == pytest.approx(sum(1 - comb(10 - c, 3) / comb(10, 3) for c in cs) / 5)
    assert at3["ci_low"] < at3["estimate"] < at3["ci_high"] and at3["confidence"] == 0.9
    assert body["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx(0.5)


async def test_k_larger_than_n_is_refused(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["big", "small/1", "small/2"])
    run = await create_run(client, dataset["id"], {"big": 20, "small/1": 4, "small/2": 4})
    await set_verdicts(db_session, run["id"], "big", _verdicts(20, 5))
    await set_verdicts(db_session, run["id"], "small/1", _verdicts(4, 1))
    await set_verdicts(db_session, run["id"], "small/2", _verdicts(4, 4))
    response = await _metrics(client, run["id"], k="1,5")
    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["loc"] == ["query", "k"]
    assert "k=5" in error["msg"] and "n=4" in error["msg"] and "small/1" in error["msg"] and "small/2" in error["msg"]
    assert error["input"] == {"k": 5, "n_min": 4, "problem_ids": ["small/1", "small/2"]}
    assert (await _metrics(client, run["id"], k="4")).status_code == 200


async def test_sandbox_errors_are_excluded_from_n(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["p", "q"])
    run = await create_run(client, dataset["id"], {"p": 10, "q": 2})
    await set_verdicts(db_session, run["id"], "p", ["passed"] * 3 + ["sandbox_error"] * 2 + ["failed"] * 5)
    await set_verdicts(db_session, run["id"], "q", ["sandbox_error", "sandbox_error"])
    body = (await _metrics(client, run["id"])).json()
    [error] = body["detail"]  # q has n=0: no k can be estimated for it, and we say so
    assert "n=0" in error["msg"] and "q" in error["input"]["problem_ids"] and "sandbox_error" in error["msg"]
    await set_verdicts(db_session, run["id"], "q", ["passed", "sandbox_error"])
    body = (await _metrics(client, run["id"])).json()
    assert body["samples"] == 8 + 1 and body["excluded_sandbox_errors"] == 3
    assert (body["n_min"], body["n_max"]) == (1, 8)
    assert body["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx((3 / 8 + 1.0) / 2)
    problems = (await client.get(f"/v1/runs/{run['id']}/problems", params={"k": "1,2"})).json()["problems"]
    assert [(p["problem_id"], p["n"], p["c"], p["by_verdict"]["sandbox_error"]) for p in problems] == [
        ("p", 8, 3, 2),
        ("q", 1, 1, 1),
    ]
    assert problems[1]["pass_at_k"] == {"1": 1.0, "2": None}


async def test_partial_while_unfinished(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a", "b"])
    run = await create_run(client, dataset["id"], {"a": 4, "b": 4})
    body = (await _metrics(client, run["id"], k="1,2")).json()
    assert (body["partial"], body["problems"], body["problems_total"], body["metrics"]) == (True, 0, 2, [])
    assert "no problem has finished" in body["note"] and body["n_min"] is None
    await set_verdicts(db_session, run["id"], "a", _verdicts(4, 2))
    await set_verdicts(db_session, run["id"], "b", ["passed", None, None, None])
    body = (await _metrics(client, run["id"], k="1,2")).json()
    assert (body["partial"], body["problems"], body["problems_finished"], body["problems_total"]) == (True, 1, 1, 2)
    assert body["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx(0.5) and "partial" in body["note"]
    problems = (await client.get(f"/v1/runs/{run['id']}/problems", params={"k": "1,2"})).json()
    assert problems["ks"] == [1, 2]
    assert [(p["problem_id"], p["done"], p["n"], p["pending"]) for p in problems["problems"]] == [
        ("a", True, 4, 0),
        ("b", False, 1, 3),
    ]
    assert problems["problems"][0]["pass_hat_k"] == {"1": 0.5, "2": pytest.approx(1 / 6)}
    assert problems["problems"][1]["pass_at_k"] == {"1": 1.0, "2": None}
    await set_verdicts(db_session, run["id"], "b", _verdicts(4, 1))
    body = (await _metrics(client, run["id"], k="1,2")).json()
    assert (body["partial"], body["problems"], body["note"]) == (False, 2, None)


async def test_cancelled_run_uses_problems_with_nothing_pending(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a", "b", "c", "d"])
    run = await create_run(client, dataset["id"], {"a": 3, "b": 3, "c": 3, "d": 3})
    await set_verdicts(db_session, run["id"], "a", _verdicts(3, 3))
    await set_verdicts(db_session, run["id"], "b", ["failed"])
    await set_verdicts(db_session, run["id"], "d", ["sandbox_error"])  # no model verdict before the cancel
    assert (await client.post(f"/v1/runs/{run['id']}/cancel")).status_code == 200
    body = (await _metrics(client, run["id"])).json()
    assert (body["status"], body["partial"], body["problems"], body["problems_total"]) == ("cancelled", True, 2, 4)
    assert (body["n_min"], body["n_max"]) == (1, 3) and "cancelled" in body["note"]
    assert body["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx(0.5)


async def test_seed_reproducibility(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    keys = [f"p{i}" for i in range(30)]
    dataset = await create_dataset(client, keys)
    run = await create_run(client, dataset["id"], {k: 10 for k in keys})
    for i, key in enumerate(keys):
        await set_verdicts(db_session, run["id"], key, _verdicts(10, (i * 7) % 11))
    params = {"k": "1,5", "resamples": 3000}
    first = (await _metrics(client, run["id"], seed=7, **params)).json()["metrics"]
    again = (await _metrics(client, run["id"], seed=7, **params)).json()["metrics"]
    other = (await _metrics(client, run["id"], seed=8, **params)).json()["metrics"]
    assert first == again
    assert first != other
    assert [m["pass_at_k"]["estimate"] for m in first] == [m["pass_at_k"]["estimate"] for m in other]


async def test_bad_parameters_are_named(client: httpx.AsyncClient) -> None:
    dataset = await create_dataset(client, ["a"])
    run = await create_run(client, dataset["id"], {"a": 1})
    for params, field in [
        ({"k": "1,x"}, "k"), ({"k": "0"}, "k"), ({"k": ""}, "k"), ({"k": "1,,2"}, "k"), ({"k": "²"}, "k"),
        ({"confidence": 1}, "confidence"), ({"confidence": 0}, "confidence"),
        ({"resamples": 0}, "resamples"), ({"resamples": 100_001}, "resamples"), ({"seed": -1}, "seed"),
    ]:
        response = await _metrics(client, run["id"], **params)
        assert response.status_code == 422, params
        assert [e["loc"] for e in response.json()["detail"]] == [["query", field]], params
    missing = uuid.uuid4()
    for path in ("metrics", "problems"):
        response = await client.get(f"/v1/runs/{missing}/{path}")
        assert response.status_code == 404 and response.json() == {"detail": f"run {missing} not found"}


async def test_metrics_at_scale(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    keys = [f"task/{i}" for i in range(1000)]
    dataset = await create_dataset(client, keys)
    samples = [{"problem_id": k, "completion": "    pass\n"} for _ in range(200) for k in keys]
    body = {"dataset_id": dataset["id"], "model": "m", "sampling": {"temperature": 1.0}, "samples": samples}
    response = await client.post("/v1/runs", json=body)
    assert response.status_code == 202
    run_id = response.json()["id"]
    await db_session.execute(
        text(
            "UPDATE samples SET state = 'done', "
            "verdict = CASE WHEN (id * 2654435761) % 97 < problem_id % 97 THEN 'passed' ELSE 'failed' END "
            "WHERE run_id = :id"
        ),
        {"id": run_id},
    )
    await db_session.commit()
    await db_session.execute(text("ANALYZE samples"))
    # How long these take: bench/api_scale.py (speed checks live in bench/, not in tests).
    response = await _metrics(client, run_id, k="1,10,100", resamples=10_000)
    assert response.status_code == 200, response.text
    assert response.json()["samples"] == 200_000
    response = await client.get(f"/v1/runs/{run_id}")
    assert response.json()["progress"]["done"] == 200_000


# ---- intervals, fallbacks and the new fields -------------------------------------------------


async def _dataset_with_tags(client: httpx.AsyncClient, tags: dict[str, list[str]]) -> dict[str, Any]:
    from tests.conftest import problem

    payload = {"name": f"tagged-{uuid.uuid4().hex[:8]}", "problems": [problem(k, tags=t) for k, t in tags.items()]}
    response = await client.post("/v1/datasets", json=payload)
    assert response.status_code == 201, response.text
    return response.json()


async def test_one_pass_in_200_gives_exactly_half_at_k_100(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["p"])
    run = await create_run(client, dataset["id"], {"p": 200})
    await set_verdicts(db_session, run["id"], "p", _verdicts(200, 1))
    body = (await _metrics(client, run["id"], k="1,100")).json()
    assert body["metrics"][0]["pass_at_k"]["estimate"] == 0.005
    assert body["metrics"][1]["pass_at_k"]["estimate"] == 0.5
    problems = (await client.get(f"/v1/runs/{run['id']}/problems", params={"k": "100"})).json()["problems"]
    assert problems[0]["pass_at_k"] == {"100": 0.5}


async def test_defaults_bca_with_standard_error_and_method_used(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    keys = [f"p{i}" for i in range(40)]
    dataset = await create_dataset(client, keys)
    run = await create_run(client, dataset["id"], {k: 10 for k in keys})
    cs = [0, 0, 0, 10, 10, 1, 2, 5, 9, 3] * 4
    for key, c in zip(keys, cs, strict=True):
        await set_verdicts(db_session, run["id"], key, _verdicts(10, c))
    body = (await _metrics(client, run["id"], k="1,5", resamples=2000)).json()
    assert (body["method"], body["confidence"], body["resamples"], body["seed"]) == ("bca", 0.95, 2000, 0)
    for metric in body["metrics"]:
        for name in ("pass_at_k", "pass_hat_k"):
            interval = metric[name]
            assert interval["method"] == interval["method_used"] == "bca" and interval["fallback_reason"] is None
            assert interval["ci_low"] < interval["estimate"] < interval["ci_high"]
        assert metric["plugin_pass_at_k"] is None
    values = np.array(cs) / 10
    se = values.std(ddof=1) / np.sqrt(40)
    assert body["metrics"][0]["pass_at_k"]["standard_error"] == pytest.approx(se, rel=1e-12)
    percentile = (await _metrics(client, run["id"], k="1,5", resamples=2000, method="percentile")).json()
    assert percentile["metrics"][0]["pass_at_k"]["method_used"] == "percentile"
    assert percentile["metrics"][0]["pass_at_k"]["estimate"] == body["metrics"][0]["pass_at_k"]["estimate"]
    # The histogram of c/n: 12 problems at 0, 8 at 1.0, the rest between.
    assert body["histogram"]["counts"] == [12, 4, 4, 4, 0, 4, 0, 0, 0, 12]
    assert (body["histogram"]["never_solved"], body["histogram"]["always_solved"]) == (12, 8)
    assert body["histogram"]["bin_edges"][:3] == [0.0, 0.1, 0.2]


async def test_plugin_estimates_are_labelled_biased(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a", "b"])
    run = await create_run(client, dataset["id"], {"a": 10, "b": 10})
    await set_verdicts(db_session, run["id"], "a", _verdicts(10, 3))
    await set_verdicts(db_session, run["id"], "b", _verdicts(10, 3))
    metric = (await _metrics(client, run["id"], k="3", plugin="true")).json()["metrics"][0]
    assert metric["pass_at_k"]["estimate"] == pytest.approx(1 - 35 / 120)
    assert metric["plugin_pass_at_k"]["estimate"] == pytest.approx(1 - 0.7**3)  # 0.657: reads low
    assert metric["plugin_pass_hat_k"]["estimate"] == pytest.approx(0.3**3)  # 0.027 vs 1/120: reads high
    assert metric["plugin_pass_at_k"]["biased"] is True and "BIASED" in metric["plugin_pass_at_k"]["label"]


async def test_all_solved_none_solved_and_single_problem_fallbacks(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    keys = [f"p{i}" for i in range(50)]
    dataset = await create_dataset(client, keys)
    run = await create_run(client, dataset["id"], {k: 5 for k in keys})
    for key in keys:
        await set_verdicts(db_session, run["id"], key, _verdicts(5, 5))
    body = (await _metrics(client, run["id"], k="1,5")).json()
    for metric in body["metrics"]:
        interval = metric["pass_at_k"]
        assert (interval["estimate"], interval["ci_high"], interval["method_used"]) == (1.0, 1.0, "clopper-pearson")
        assert interval["ci_low"] == pytest.approx(0.025 ** (1 / 50))
        assert "every problem scores 1" in interval["fallback_reason"]
        # no standard error beside an exact bound (0 would claim the mean is known), and the reason why
        assert interval["standard_error"] is None and "exact bound" in interval["standard_error_note"]
    single = await create_run(client, dataset["id"], {"p0": 5})
    await set_verdicts(db_session, single["id"], "p0", _verdicts(5, 0))
    body = (await _metrics(client, single["id"], k="1")).json()
    at = body["metrics"][0]["pass_at_k"]
    # One problem, never solved: the exact bound still holds, (alpha/2)^(1/1) from the top.
    assert (at["estimate"], at["ci_low"], at["method_used"]) == (0.0, 0.0, "clopper-pearson")
    assert at["ci_high"] == pytest.approx(0.975)
    assert any("only 1 problem" in w for w in body["warnings"])


async def test_unequal_n_reports_the_bounding_problems(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["big", "small/1", "small/2", "mid"])
    run = await create_run(client, dataset["id"], {"big": 20, "small/1": 4, "small/2": 4, "mid": 8})
    for key, n, c in (("big", 20, 5), ("small/1", 4, 1), ("small/2", 4, 4), ("mid", 8, 2)):
        await set_verdicts(db_session, run["id"], key, _verdicts(n, c))
    body = (await _metrics(client, run["id"], k="1,4")).json()
    assert (body["n_min"], body["n_max"], body["k_max_allowed"]) == (4, 20, 4)
    assert body["k_max_bounding_problems"] == ["small/1", "small/2"] and body["k_max_bounding_count"] == 2
    assert any("unequal n" in w for w in body["warnings"])
    assert body["metrics"][1]["pass_at_k"]["estimate"] == pytest.approx(
        ((1 - comb(15, 4) / comb(20, 4)) + 1 + 1 + (1 - comb(6, 4) / comb(8, 4))) / 4
    )
    assert (await _metrics(client, run["id"], k="5")).status_code == 422


async def test_group_by_tag_micro_and_macro(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    tags = {f"e{i}": ["difficulty:easy", "src:a"] for i in range(30)} | {f"h{i}": ["difficulty:hard"] for i in range(10)}
    tags["loose"] = ["src:b"]
    dataset = await _dataset_with_tags(client, tags)
    run = await create_run(client, dataset["id"], {k: 4 for k in tags})
    for i in range(30):
        await set_verdicts(db_session, run["id"], f"e{i}", _verdicts(4, 4 if i % 5 else 2))
    for i in range(10):
        await set_verdicts(db_session, run["id"], f"h{i}", _verdicts(4, 1 if i < 3 else 0))
    await set_verdicts(db_session, run["id"], "loose", _verdicts(4, 0))
    body = (await _metrics(client, run["id"], k="1", group_by="tag", tag_prefix="difficulty:")).json()
    groups = body["groups"]
    assert (groups["by"], groups["tag_prefix"], groups["untagged_problems"], groups["overlapping"]) == (
        "tag", "difficulty:", 1, False,
    )
    easy, hard = groups["groups"]
    assert (easy["tag"], easy["problems"], hard["tag"], hard["problems"]) == ("difficulty:easy", 30, "difficulty:hard", 10)
    easy_mean = (24 * 1.0 + 6 * 0.5) / 30
    hard_mean = 3 * 0.25 / 10
    assert easy["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx(easy_mean)
    assert hard["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx(hard_mean)
    assert groups["micro"]["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx((30 * easy_mean + 10 * hard_mean) / 40)
    assert groups["macro"]["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx((easy_mean + hard_mean) / 2)
    assert "micro" in groups["micro"]["label"] and "macro" in groups["macro"]["label"]
    assert (groups["micro"]["problems"], groups["macro"]["groups"]) == (40, 2)
    # Without group_by nothing is added; without a prefix every tag is a group (they overlap).
    assert (await _metrics(client, run["id"])).json()["groups"] is None
    everything = (await _metrics(client, run["id"], group_by="tag")).json()["groups"]
    assert [g["tag"] for g in everything["groups"]] == ["difficulty:easy", "difficulty:hard", "src:a", "src:b"]
    assert everything["overlapping"] and everything["untagged_problems"] == 0


async def test_distinct_programs_per_problem_and_diversity(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a", "b"])
    samples = [{"problem_id": "a", "completion": f"    return {i % 2}\n"} for i in range(6)]
    samples += [{"problem_id": "b", "completion": "    return 1\n"} for _ in range(4)]
    body = {"dataset_id": dataset["id"], "model": "m", "sampling": {"temperature": 0.0}, "samples": samples}
    response = await client.post("/v1/runs", json=body)
    assert response.status_code == 202, response.text
    run_id = response.json()["id"]
    await set_verdicts(db_session, run_id, "a", _verdicts(6, 3))
    await set_verdicts(db_session, run_id, "b", _verdicts(4, 4))
    problems = (await client.get(f"/v1/runs/{run_id}/problems")).json()["problems"]
    assert [(p["problem_id"], p["distinct_programs"]) for p in problems] == [("a", 2), ("b", 1)]
    metrics = (await _metrics(client, run_id, diversity="true")).json()
    assert metrics["diversity"] == {
        "mean_distinct_fraction": pytest.approx((2 / 6 + 1 / 4) / 2),
        "min_distinct_programs": 1,
        "problems_with_duplicates": 2,
        "single_program_problems": 1,
    }
    assert any("low diversity" in w for w in metrics["warnings"])
    assert (await _metrics(client, run_id)).json()["diversity"] is None


async def test_new_parameters_are_validated(client: httpx.AsyncClient) -> None:
    dataset = await create_dataset(client, ["a"])
    run = await create_run(client, dataset["id"], {"a": 1})
    for params, field in [
        ({"method": "basic"}, "method"), ({"plugin": "maybe"}, "plugin"), ({"group_by": "model"}, "group_by"),
        ({"resamples": 100_001}, "resamples"), ({"diversity": "x"}, "diversity"),
    ]:
        response = await _metrics(client, run["id"], **params)
        assert response.status_code == 422, params
        assert [e["loc"] for e in response.json()["detail"]] == [["query", field]], params


async def test_bca_interval_is_reproducible_and_matches_the_offline_report(
    client: httpx.AsyncClient, db_session: AsyncSession
) -> None:
    from service.client.report import ProblemRecord, build_report
    from service.statistics.summary import Options

    keys = [f"p{i}" for i in range(60)]
    dataset = await create_dataset(client, keys)
    run = await create_run(client, dataset["id"], {k: 10 for k in keys})
    counts = [(i * 7) % 11 for i in range(60)]
    for key, c in zip(keys, counts, strict=True):
        await set_verdicts(db_session, run["id"], key, _verdicts(10, c))
    params = {"k": "1,5,10", "resamples": 3000, "seed": 42}
    first = (await _metrics(client, run["id"], **params)).json()
    assert first["metrics"] == (await _metrics(client, run["id"], **params)).json()["metrics"]
    offline = build_report(
        [ProblemRecord(k, 10, c) for k, c in zip(keys, counts, strict=True)],
        Options(ks=[1, 5, 10], resamples=3000, seed=42), source="x", file_format="csv",
    )
    assert offline["metrics"] == first["metrics"]
    assert offline["histogram"] == first["histogram"]


async def test_metrics_carry_an_etag_that_follows_the_run_state(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["p", "q"])
    run = await create_run(client, dataset["id"], {"p": 4, "q": 4})
    await set_verdicts(db_session, run["id"], "p", ["passed", "failed", "passed", "passed"])
    first = await _metrics(client, run["id"], k="1,2")
    etag = first.headers["etag"]
    assert first.status_code == 200 and etag.startswith('"')
    # Unchanged run, same query: 304 without a body; another query is another ETag.
    again = await client.get(f"/v1/runs/{run['id']}/metrics", params={"k": "1,2"}, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    assert (await _metrics(client, run["id"], k="1")).headers["etag"] != etag
    # A verdict more changes the state: a full answer under a new ETag.
    await set_verdicts(db_session, run["id"], "q", ["passed", "passed", "failed", "failed"])
    changed = await client.get(f"/v1/runs/{run['id']}/metrics", params={"k": "1,2"}, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    assert changed.json()["problems"] == 2 and first.json()["problems"] == 1


async def test_problems_carry_the_curves_for_every_k_up_to_n_min(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    """The dashboard's curves come from the server: pass@k and pass^k means for k = 1..n_min over finished problems."""
    dataset = await create_dataset(client, ["a", "b", "c"])
    run = await create_run(client, dataset["id"], {"a": 4, "b": 5, "c": 5})
    url = f"/v1/runs/{run['id']}/problems"
    assert (await client.get(url)).json()["curves"] is None  # nothing finished yet
    await set_verdicts(db_session, run["id"], "a", _verdicts(4, 1))
    await set_verdicts(db_session, run["id"], "b", _verdicts(5, 3))
    await set_verdicts(db_session, run["id"], "c", ["passed", "passed", None, None, None])  # unfinished: left out
    curves = (await client.get(url)).json()["curves"]
    # a (n=4, c=1): pass@k 1/4, 1 - C(3,k)/C(4,k); pass^k 1/4 then 0. b (n=5, c=3): 3/5, 1 - C(2,k)/C(5,k); C(3,k)/C(5,k).
    at_a = [1 - comb(3, k) / comb(4, k) for k in range(1, 5)]
    at_b = [1 - comb(2, k) / comb(5, k) for k in range(1, 5)]
    hat_a = [comb(1, k) / comb(4, k) for k in range(1, 5)]
    hat_b = [comb(3, k) / comb(5, k) for k in range(1, 5)]
    assert (curves["n_min"], curves["problems"]) == (4, 2)
    assert curves["pass_at_k"] == pytest.approx([(x + y) / 2 for x, y in zip(at_a, at_b, strict=True)], rel=1e-12)
    assert curves["pass_at_k"] == pytest.approx([0.425, 0.7, 0.875, 1.0], rel=1e-12)
    assert curves["pass_hat_k"] == pytest.approx([(x + y) / 2 for x, y in zip(hat_a, hat_b, strict=True)], rel=1e-12, abs=1e-15)
    assert curves["pass_hat_k"] == pytest.approx([0.425, 0.15, 0.05, 0.0], rel=1e-12, abs=1e-15)


async def test_an_estimate_few_problems_carry_is_warned_about(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    # pass^100 at n = 200 over 40 problems of which 3 are (nearly) always solved: it rests on about 3 problems.
    keys = [f"p{i}" for i in range(40)]
    dataset = await create_dataset(client, keys)
    run = await create_run(client, dataset["id"], {k: 200 for k in keys})
    cs = [200, 199, 190] + [60] * 37
    for key, c in zip(keys, cs, strict=True):
        await set_verdicts(db_session, run["id"], key, _verdicts(200, c))
    body = (await _metrics(client, run["id"], k="1,100", resamples=2000)).json()
    at1, hat100 = body["metrics"][0]["pass_at_k"], body["metrics"][1]["pass_hat_k"]
    values = np.array([comb(c, 100) / comb(200, 100) for c in cs])
    assert hat100["effective_problems"] == pytest.approx(values.sum() ** 2 / np.sum(values**2), rel=1e-9)
    assert hat100["effective_problems"] < 3 and "rests on about" in hat100["warning"]
    assert at1["effective_problems"] > 30 and at1["warning"] is None
    assert [w for w in body["warnings"] if w.startswith("pass^100: the estimate rests on about")]
    assert not [w for w in body["warnings"] if w.startswith("pass@1:")]


async def test_small_tags_are_named_in_the_warnings(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    tags = {f"a{i}": ["size:small"] for i in range(4)} | {f"b{i}": ["size:big"] for i in range(40)}
    dataset = await _dataset_with_tags(client, tags)
    run = await create_run(client, dataset["id"], {k: 4 for k in tags})
    for i, key in enumerate(tags):
        await set_verdicts(db_session, run["id"], key, _verdicts(4, i % 5))
    body = (await _metrics(client, run["id"], k="1", group_by="tag")).json()
    expected = "fewer than 30 problems in tag 'size:small' (4)"
    assert [w for w in body["groups"]["warnings"] if w.startswith(expected)]
    assert [w for w in body["warnings"] if w.startswith(expected)]
    small = body["groups"]["groups"][1]["metrics"][0]["pass_at_k"]
    assert small["warning"] and small["effective_problems"] <= 4
