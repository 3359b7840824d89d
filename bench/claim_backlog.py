"""Claims against a backlog of one-sample runs: an RL step's POST /run_code calls waiting in the queue.

    .venv/bin/python bench/claim_backlog.py [--backlogs 256 2048 8192] [--cycles 64]

For each backlog size, a fresh database holds that many one-sample interactive runs of one problem (one API
key, as one trainer sends them) and another key's batch run. One worker thread then claims (up to 8 samples, as
an interactive claim that keeps coming back full does), records and checks the end of its runs, `--cycles`
times, through the worker's own functions and engine (service/worker/queue.py, results.py). Prints the claim's
latency (its transaction, commit included; client and server on this machine, nothing else running) and the
ratio of the largest backlog's claim to the smallest's: a claim's cost should not grow with the backlog.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

from sqlalchemy import insert, text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from passk_dev.localstack import create_database, postgres_server  # noqa: E402
from sandbox.executor import Outcome  # noqa: E402
from sandbox.verdicts import Verdict  # noqa: E402
from service.api.auth.keys import SCOPES  # noqa: E402
from service.api.auth.repository import create_key  # noqa: E402
from service.api.projects.repository import default_project  # noqa: E402
from service.core.database import make_sync_sessionmaker, make_worker_engine, transaction  # noqa: E402
from service.core.models import Dataset, Problem, Run  # noqa: E402
from service.worker import queue, results  # noqa: E402


def seed(url: str, backlog: int) -> None:
    engine = make_worker_engine(url)
    with transaction(make_sync_sessionmaker(engine)) as session:
        project_id = default_project(session).id
        trainer, _ = create_key(session, "trainer", SCOPES)
        evaluator, _ = create_key(session, "evaluator", SCOPES)
        dataset_id = uuid.uuid4()
        session.execute(insert(Dataset).values(id=dataset_id, project_id=project_id, name="run_code",
                                               digest=uuid.uuid4().hex, problem_count=1))
        problem_id = session.execute(
            insert(Problem).values(dataset_id=dataset_id, position=0, key="python", prompt="", test="",
                                   entry_point="").returning(Problem.id)
        ).scalar_one()
        session.execute(
            text("INSERT INTO runs (id, project_id, dataset_id, model, sampling, sample_count, problem_count, priority, "
                 "api_key_id, use_cache, created_at) SELECT gen_random_uuid(), :project, :dataset, 'm', '{}', 1, 1, "
                 "'interactive', :key, false, clock_timestamp() + i * interval '1 millisecond' "
                 "FROM generate_series(1, :n) AS i"),
            {"project": project_id, "dataset": dataset_id, "key": trainer.id, "n": backlog},
        )
        session.execute(
            text("INSERT INTO samples (run_id, problem_id, index, completion) "
                 "SELECT id, :problem, 0, 'print(' || id || ')' FROM runs WHERE dataset_id = :dataset ORDER BY created_at"),
            {"problem": problem_id, "dataset": dataset_id},
        )
        batch = uuid.uuid4()
        session.execute(insert(Run).values(id=batch, project_id=project_id, dataset_id=dataset_id, model="m", sampling={},
                                           sample_count=1000, problem_count=1, api_key_id=evaluator.id, use_cache=False))
        session.execute(text("INSERT INTO samples (run_id, problem_id, index, completion) "
                             "SELECT :run, :problem, g, 'pass  # ' || g FROM generate_series(0, 999) AS g"),
                        {"run": batch, "problem": problem_id})
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("ANALYZE"))
    engine.dispose()


def measure(url: str, cycles: int) -> dict:
    engine = make_worker_engine(url)
    sessions = make_sync_sessionmaker(engine)
    latencies = []
    for cycle in range(cycles):
        started = time.perf_counter()
        with transaction(sessions) as session:
            claimed = queue.claim_batch(session, "bench", 64, 60.0, 3.0, 512, "sha256:bench", interactive_limit=8)
        if cycle >= 4:  # past the connection's first plans
            latencies.append(time.perf_counter() - started)
        outcomes = [Outcome(id=str(s.id), verdict=Verdict.PASSED, duration_ms=1.0, cpu_ms=1.0) for s in claimed]
        with transaction(sessions) as session:
            ended = results.record_outcomes(session, "bench", claimed, outcomes, max_attempts=3)
        with transaction(sessions) as session:
            results.end_runs(session, ended)
    engine.dispose()
    latencies.sort()
    return {"p50_ms": 1000 * statistics.median(latencies), "p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backlogs", type=int, nargs="*", default=[256, 2048, 8192])
    parser.add_argument("--cycles", type=int, default=64)
    args = parser.parse_args()
    rows = {}
    with postgres_server("passk-claim-backlog") as server:
        print(f"{'one-sample runs queued':>23} {'claim p50 ms':>13} {'claim p99 ms':>13}")
        for backlog in args.backlogs:
            url = create_database(server, "passk_claim_backlog")
            seed(url, backlog)
            rows[backlog] = measure(url, args.cycles)
            row = rows[backlog]
            print(f"{backlog:>23,} {row['p50_ms']:>13.2f} {row['p99_ms']:>13.2f}", flush=True)
    small, large = min(rows), max(rows)
    print(f"claim p50 at {large:,} runs / at {small:,}: {rows[large]['p50_ms'] / rows[small]['p50_ms']:.2f}")


if __name__ == "__main__":
    main()
