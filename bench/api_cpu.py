"""CPU per request of the endpoints bench/load.py polls, without sandboxes: where a poll's CPU goes.

    .venv/bin/python bench/api_cpu.py                      # sequential per endpoint, then 20 pollers for 30 s
    .venv/bin/python bench/api_cpu.py --requests 1000 --seconds 60

A LocalStack (its own Postgres cluster, the API over HTTP on 127.0.0.1) with a run of --samples samples
(4 problems, as bench/load.py's) and no worker. Instead of sandboxes, this process finishes the run's
samples straight in the database at the pace of a real run (the whole run in --seconds), as the results
writer does: state done, a verdict, an event id. So every poll sees a run
that changed since the last one, as during bench/load.py --slowdown, but the machine stays free and the
figures are the API's own.

1. Sequential: --requests requests per endpoint from one keep-alive client, with the run half done and
   frozen; the API process's CPU (from /proc) per request, Postgres's (the postmaster and its backends)
   and this process's (the client's).
2. Pollers: --clients pollers as bench/load.py's (run status and metrics revalidated by their ETags,
   /v1/status, every --poll-interval) while the run advances; latencies and the CPU per request of the
   API, Postgres and the pollers. bench/load.py --slowdown needs API + pollers at about 1.5 ms per request
   on 2 cores for its <= 20 % slowdown.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import threading
import time
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import PROBLEMS, PROMPT, TEST, Stats, _poll_run, completion, percentile  # noqa: E402
from passk_dev.localstack import LocalStack  # noqa: E402
from passk_dev.proc import process_cpu_s, tree_cpu_s  # noqa: E402

# What the results writer does to a finished sample (state, verdict, attempt, event id) and to its run.
_FINISH = """
WITH picked AS (
    SELECT id FROM samples WHERE run_id = %(run)s AND state = 'queued' ORDER BY id LIMIT %(n)s FOR UPDATE
), started AS (
    UPDATE runs SET status = 'running', started_at = coalesce(started_at, now())
    WHERE id = %(run)s AND status = 'queued'
)
UPDATE samples s SET state = 'done', attempts = 1, finished_at = now(),
       verdict = CASE WHEN s.id %% 4 = 3 THEN 'failed' ELSE 'passed' END,
       event = CASE WHEN pg_current_xact_id() IS NOT NULL THEN nextval('sample_events') END
FROM picked WHERE s.id = picked.id
"""
_END = "UPDATE runs SET status = 'completed', finished_at = now() WHERE id = %(run)s AND NOT EXISTS " \
       "(SELECT 1 FROM samples WHERE run_id = %(run)s AND state IN ('queued', 'leased'))"


class Meter:
    """CPU seconds of the API process, Postgres (postmaster and backends) and this process, between two reads."""

    def __init__(self, stack: LocalStack) -> None:
        self.stack = stack
        self.before = self._read()

    def _read(self) -> dict[str, float]:
        own = os.times()
        return {"API": process_cpu_s(self.stack.api_pid), "Postgres": tree_cpu_s(self.stack.postgres_pid),
                "client": own.user + own.system}

    def per_request_ms(self, requests: int) -> dict[str, float]:
        after = self._read()
        return {name: 1000 * (after[name] - self.before[name]) / max(1, requests) for name in after}


def _database_url(stack: LocalStack) -> str:
    return make_url(stack.database_url).set(drivername="postgresql").render_as_string(hide_password=False)


def finish_samples(stack: LocalStack, run_id: str, n: int) -> None:
    with psycopg.connect(_database_url(stack), autocommit=True) as conn:
        conn.execute(_FINISH, {"run": run_id, "n": n})
        conn.execute(_END, {"run": run_id})


def advance(stack: LocalStack, run_id: str, per_s: float, stop: threading.Event) -> None:
    """Finish the run's samples at per_s, in batches every 0.1 s, until stop or the run is done."""
    with psycopg.connect(_database_url(stack), autocommit=True) as conn:
        started, finished = time.monotonic(), 0
        while not stop.wait(0.1):
            due = int((time.monotonic() - started) * per_s) - finished
            if due > 0:
                conn.execute(_FINISH, {"run": run_id, "n": due})
                conn.execute(_END, {"run": run_id})
                finished += due


def submit(stack: LocalStack, dataset_id: str, samples: int, tag: str) -> str:
    body = {"dataset_id": dataset_id, "model": tag, "sampling": {"temperature": 0.8}, "cache": False,
            "samples": [{"problem_id": f"p{j % PROBLEMS}", "completion": completion(1000, f"{tag} {j}", j % 4 != 3)}
                        for j in range(samples)]}
    with stack.client() as client:
        return client.post("/v1/runs", json=body).raise_for_status().json()["id"]


def sequential(stack: LocalStack, run_id: str, requests: int) -> None:
    with stack.client() as client:
        status_etag = client.get(f"/v1/runs/{run_id}").headers["etag"]
        metrics_etag = client.get(f"/v1/runs/{run_id}/metrics", params={"k": "1,10"}).headers["etag"]
        cases = [
            ("GET /healthz (no key, no query)", "/healthz", {}, {}),
            ("GET /v1/runs/{id}", f"/v1/runs/{run_id}", {}, {}),
            ("GET /v1/runs/{id} -> 304", f"/v1/runs/{run_id}", {}, {"If-None-Match": status_etag}),
            ("GET /v1/status", "/v1/status", {}, {}),
            ("GET /v1/runs/{id}/metrics", f"/v1/runs/{run_id}/metrics", {"k": "1,10"}, {}),
            ("GET /v1/runs/{id}/metrics -> 304", f"/v1/runs/{run_id}/metrics", {"k": "1,10"},
             {"If-None-Match": metrics_etag}),
        ]
        print(f"\n1. sequential, {requests} requests each, one keep-alive client (httpx), run half done and frozen")
        print(f"{'endpoint':<36}{'p50 ms':>8}{'API ms':>8}{'PG ms':>7}{'client ms':>10}  (CPU per request)")
        for label, path, params, headers in cases:
            for _ in range(20):  # warm up
                client.get(path, params=params, headers=headers)
            meter, latencies = Meter(stack), []
            for _ in range(requests):
                started = time.perf_counter()
                response = client.get(path, params=params, headers=headers)
                latencies.append(1000 * (time.perf_counter() - started))
                assert response.status_code in (200, 304), (label, response.status_code, response.text)
            cpu = meter.per_request_ms(requests)
            print(f"{label:<36}{statistics.median(latencies):>8.2f}{cpu['API']:>8.2f}{cpu['Postgres']:>7.2f}"
                  f"{cpu['client']:>10.2f}")


def pollers(stack: LocalStack, run_id: str, args: argparse.Namespace) -> None:
    stats = Stats(deadline=float("inf"))
    stop = threading.Event()
    writer = threading.Thread(target=advance, args=(stack, run_id, args.samples / args.seconds, stop), daemon=True)

    async def poll_all() -> None:
        done = asyncio.Event()
        asyncio.get_running_loop().call_later(args.seconds, done.set)
        await asyncio.gather(*(_poll_run(stack, run_id, args, stats, done) for _ in range(args.clients)))

    meter = Meter(stack)
    # The writer's own CPU (this process, and its UPDATEs in Postgres) is counted too: a few % of the figures.
    writer.start()
    started = time.monotonic()
    asyncio.run(poll_all())
    wall = time.monotonic() - started
    stop.set()
    writer.join()
    total = sum(stats.requests.values())
    cpu = meter.per_request_ms(total)
    print(f"\n2. {args.clients} pollers for {wall:.1f} s while the run advances ({args.samples / args.seconds:.0f} "
          f"samples/s): {total} requests, {total / wall:.1f}/s")
    print(f"{'endpoint':<30}{'requests':>9}{'p50 ms':>9}{'p95 ms':>9}{'304s':>7}")
    for name in sorted(stats.latencies):
        values = [v * 1000 for v in stats.latencies[name]]
        not_modified = stats.requests[name] - stats.fresh[name] if name in stats.fresh else 0
        print(f"{name:<30}{len(values):>9}{statistics.median(values):>9.1f}{percentile(values, 95):>9.1f}{not_modified:>7}")
    print(f"CPU per request: API {cpu['API']:.2f} ms, Postgres {cpu['Postgres']:.2f} ms, pollers (this process, "
          f"with the writer) {cpu['client']:.2f} ms; API + pollers {cpu['API'] + cpu['client']:.2f} ms "
          f"= {(cpu['API'] + cpu['client']) * total / wall / 1000:.2f} of a core at this rate")
    if stats.errors:
        print(f"errors: {dict(stats.errors)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=3280, help="samples of the polled run (default 3280)")
    parser.add_argument("--requests", type=int, default=500, help="sequential requests per endpoint")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long the pollers poll (the run lasts as long)")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--poll-interval", type=float, default=0.5)
    parser.add_argument("--only", choices=["sequential", "pollers"], help="one of the two parts")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    with LocalStack(prefix="passk_apicpu", private_postgres=True, log_path=Path(os.devnull)) as stack:
        with stack.client() as client:
            problems = [{"id": f"p{i}", "prompt": PROMPT, "test": TEST, "entry_point": "work"} for i in range(PROBLEMS)]
            dataset_id = client.post("/v1/datasets", json={"name": "apicpu", "problems": problems}).raise_for_status().json()["id"]
        if args.only != "pollers":
            frozen = submit(stack, dataset_id, args.samples, "frozen")
            finish_samples(stack, frozen, args.samples // 2)
            sequential(stack, frozen, args.requests)
        if args.only != "sequential":
            pollers(stack, submit(stack, dataset_id, args.samples, "polled"), args)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
