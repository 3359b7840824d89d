"""One PostgreSQL for many hosts: simulated workers claim, lease, renew and record no-op batches.

    .venv/bin/python bench/queue_scale.py                       # 8, 32, 64 and 128 workers, 10 s each
    .venv/bin/python bench/queue_scale.py --workers 64 --seconds 20 --batch 16

Each simulated worker is a thread doing what a worker's thread does with the queue, through the same
functions (service/worker/queue.py, results.py): claim a batch (one transaction), renew its leases (as the
maintenance thread does, every 5 s), then record a passing verdict for every sample (one transaction) and check
whether its runs ended (another, as a worker does after each record). Execution is a
no-op, so the figures are the database's side alone. Workers are spread over processes (one connection
each), so Python's GIL is not what is measured. Prints samples/s through the queue and the claim latency
(p50 / p99, the claim's transaction including its commit), and checks that no sample was recorded twice.

The figures are a steady state's: every worker first works through a warm-up (`--warmup`, 5 s by default), as a
deployment's workers hold their connections for hours, and only the window after it is measured. A new
connection's first statements cost PostgreSQL several times a steady one's (its catalog caches filled, each
statement parsed and planned until the driver prepares it, its memory faulted in); `--warmup 0` measures that
too.

Target: >= 20,000 samples/s at 64 workers (a hundred hosts at today's per-host rate).

The cluster runs with a deployment's durability (fsync, synchronous_commit and full_page_writes on, as
PostgreSQL's defaults in docker-compose.yml), not the embedded development cluster's (all three off); the
header prints what was in force. Clients and server share this machine's cores, so it also prints the CPU
seconds per 1,000 samples of the postgres processes and of the client processes, and, derived from the
former, the rate one dedicated database core would sustain if CPU were its only limit.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, func, insert, select, text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from passk_dev.localstack import create_database, postgres_server  # noqa: E402
from passk_dev.proc import parent_pid, process_cpu_s, tree_cpu_s  # noqa: E402
from sandbox.executor import Outcome  # noqa: E402
from sandbox.verdicts import Verdict  # noqa: E402
from service.core.database import make_sync_engine, psycopg_url, make_sync_sessionmaker, transaction  # noqa: E402
from service.core.models import Dataset, Problem, Run, Sample  # noqa: E402
from service.core.settings import Settings  # noqa: E402
from service.core.states import SampleState  # noqa: E402
from service.api.projects.repository import default_project  # noqa: E402
from service.worker import queue, results  # noqa: E402

TARGET_WORKERS, TARGET_RATE = 64, 20_000
RUNS, PROBLEMS = 8, 64
# A worker renews its in-flight leases every min(lease / 4, 5 s) (service/worker/runner.py).
RENEW_EVERY_S = 5.0


def seed(url: str, samples_total: int) -> None:
    """RUNS runs over one dataset of PROBLEMS problems, samples_total queued samples in all."""
    engine = make_sync_engine(url)
    with transaction(make_sync_sessionmaker(engine)) as session:
        dataset_id = uuid.uuid4()
        project_id = default_project(session).id
        session.execute(insert(Dataset).values(id=dataset_id, project_id=project_id, name="queue-scale",
                                               digest=uuid.uuid4().hex, problem_count=PROBLEMS))
        session.execute(
            insert(Problem),
            [
                {"dataset_id": dataset_id, "position": i, "key": f"p{i}", "prompt": "def f(x):\n",
                 "test": "def check(candidate):\n    assert candidate(2) == 4\n", "entry_point": "f"}
                for i in range(PROBLEMS)
            ],
        )
        problem_ids = list(session.execute(select(Problem.id).where(Problem.dataset_id == dataset_id)).scalars())
        per_run = samples_total // RUNS
        for _ in range(RUNS):
            run_id = uuid.uuid4()
            session.execute(
                insert(Run).values(id=run_id, project_id=project_id, dataset_id=dataset_id, model="m", sampling={},
                                   sample_count=per_run, problem_count=PROBLEMS, use_cache=False)
            )
            # Distinct completions, problem by problem as a client submits them.
            session.execute(
                text(
                    "INSERT INTO samples (run_id, problem_id, index, completion) "
                    "SELECT :run, (:problems)[1 + (g / :per_problem) % cardinality(:problems)], g % :per_problem, "
                    "'    return x * x  # ' || g FROM generate_series(0, :n - 1) AS g"
                ),
                {"run": run_id, "problems": problem_ids, "per_problem": max(1, per_run // PROBLEMS), "n": per_run},
            )
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("ANALYZE"))  # as autovacuum would soon: plans for the seeded sizes
    engine.dispose()


def _worker_thread(sessions, owner: str, batch: int, window: tuple[float, float], out: list, barrier) -> None:
    """Claims and records until the window's end (time.time()); counts the claims made and the batches recorded
    within it."""
    measured_from, deadline = window
    claims, recorded = [], 0
    renewed_at = time.monotonic()
    barrier.wait()
    while time.time() < deadline:
        started = time.perf_counter()
        with transaction(sessions) as session:
            claimed = queue.claim_batch(session, owner, batch, 60.0, 3.0, 512, "sha256:bench")
        if time.time() >= measured_from:
            claims.append(time.perf_counter() - started)
        if not claimed:
            continue
        if time.monotonic() - renewed_at >= RENEW_EVERY_S:  # as a worker's maintenance thread renews
            with transaction(sessions) as session:
                queue.renew_leases(session, owner, 60.0, [s.id for s in claimed])
            renewed_at = time.monotonic()
        outcomes = [Outcome(id=str(s.id), verdict=Verdict.PASSED, duration_ms=1.0, cpu_ms=1.0) for s in claimed]
        with transaction(sessions) as session:
            runs = results.record_outcomes(session, owner, claimed, outcomes, max_attempts=3)
        with transaction(sessions) as session:  # as a worker does after each record: did a run end?
            results.end_runs(session, runs)
        if measured_from <= time.time() < deadline:  # recorded within the window
            recorded += len(claimed)
    out.append((claims, recorded))


def _process(url: str, threads: int, batch: int, window: tuple[float, float], start_at: float, conn) -> None:
    engine = make_sync_engine(url, pool_size=threads, max_overflow=0)
    sessions = make_sync_sessionmaker(engine)
    out: list = []
    barrier = threading.Barrier(threads)
    time.sleep(max(0.0, start_at - time.time()))
    pool = [
        threading.Thread(target=_worker_thread, args=(sessions, f"bench-{uuid.uuid4().hex[:8]}", batch, window, out, barrier))
        for _ in range(threads)
    ]
    for thread in pool:
        thread.start()
    # This process's CPU within the window (its threads' included).
    time.sleep(max(0.0, window[0] - time.time()))
    cpu_from = process_cpu_s(os.getpid())
    time.sleep(max(0.0, window[1] - time.time()))
    cpu = process_cpu_s(os.getpid()) - cpu_from
    for thread in pool:
        thread.join()
    engine.dispose()
    conn.send((out, cpu))


def _postmaster(url: str) -> int:
    engine = make_sync_engine(url)
    with engine.connect() as connection:  # read while the backend lives: its parent is the postmaster
        backend = connection.execute(text("SELECT pg_backend_pid()")).scalar_one()
        parent = parent_pid(backend)
    engine.dispose()
    return parent


def deployment_durability(url: str) -> str:
    """A private cluster gets a deployment's durability settings; a shared one (PASSK_TEST_DATABASE_URL) is
    left as it is. Returns what is in force."""
    engine = create_engine(psycopg_url(url), isolation_level="AUTOCOMMIT")
    names = ("fsync", "synchronous_commit", "full_page_writes")
    with engine.connect() as connection:
        if not Settings().test_database_url:
            for name in names:
                connection.execute(text(f"ALTER SYSTEM SET {name} = on"))
            connection.execute(text("SELECT pg_reload_conf()"))
            time.sleep(0.5)
        in_force = ", ".join(f"{name}={connection.execute(text(f'SHOW {name}')).scalar_one()}" for name in names)
    engine.dispose()
    return in_force


def measure(url: str, workers: int, batch: int, seconds: float, processes: int, warmup: float) -> dict:
    processes = min(processes, workers)
    postmaster = _postmaster(url)
    shares = [workers // processes + (1 if i < workers % processes else 0) for i in range(processes)]
    start_at = time.time() + 2.0  # every process connected and ready
    window = (start_at + warmup, start_at + warmup + seconds)
    pipes, procs = [], []
    for share in shares:
        parent, child = mp.Pipe(duplex=False)
        proc = mp.Process(target=_process, args=(url, share, batch, window, start_at, child))
        proc.start()
        pipes.append(parent)
        procs.append(proc)
    time.sleep(max(0.0, window[0] - time.time()))
    server_before = tree_cpu_s(postmaster)
    time.sleep(max(0.0, window[1] - time.time()))
    server_cpu = tree_cpu_s(postmaster) - server_before
    received = [pipe.recv() for pipe in pipes]
    for proc in procs:
        proc.join()
    outs = [item for items, _ in received for item in items]
    client_cpu = sum(cpu for _, cpu in received)
    claims = sorted(c for cl, _ in outs for c in cl)
    recorded = sum(r for _, r in outs)
    return {
        "workers": workers,
        "samples_per_s": recorded / seconds,
        "claims": len(claims),
        "claim_p50_ms": 1000 * statistics.median(claims) if claims else float("nan"),
        "claim_p99_ms": 1000 * claims[int(0.99 * (len(claims) - 1))] if claims else float("nan"),
        "recorded": recorded,
        "server_cpu_per_1k": 1000 * server_cpu / recorded if recorded else float("nan"),
        "client_cpu_per_1k": 1000 * client_cpu / recorded if recorded else float("nan"),
    }


def check(url: str) -> None:
    engine = make_sync_engine(url)
    with engine.connect() as connection:
        twice = connection.execute(select(func.count()).where(Sample.attempts > 1)).scalar_one()
        done = connection.execute(select(func.count()).where(Sample.state == SampleState.DONE)).scalar_one()
    engine.dispose()
    print(f"check: {done} samples done, {twice} claimed more than once")
    if twice:
        sys.exit("a sample was claimed twice")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="*", default=[8, 32, 64, 128])
    parser.add_argument("--seconds", type=float, default=10.0, help="the measured window, after the warm-up")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds of work before the measured window")
    parser.add_argument("--batch", type=int, default=Settings().batch_size)
    parser.add_argument("--processes", type=int, default=8, help="client processes the workers are spread over")
    parser.add_argument("--samples", type=int, default=400_000, help="queued samples seeded before each level")
    args = parser.parse_args()

    with postgres_server("passk-queue-scale") as server:
        print(f"batch {args.batch}, {args.warmup:g} s warm-up then {args.seconds:g} s measured, {os.cpu_count()} cores "
              f"shared by clients and server, load average "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; {deployment_durability(server)}")
        print(f"{'workers':>8} {'samples/s':>10} {'claims':>8} {'claim p50 ms':>13} {'claim p99 ms':>13}"
              f" {'pg cpu s/1k':>12} {'client cpu s/1k':>16} {'derived: /s per db core':>24}")
        rows = []
        for workers in args.workers:
            url = create_database(server, "passk_queue_scale")
            seed(url, args.samples)
            row = measure(url, workers, args.batch, args.seconds, args.processes, args.warmup)
            rows.append(row)
            print(f"{workers:>8} {row['samples_per_s']:>10,.0f} {row['claims']:>8} {row['claim_p50_ms']:>13.1f}"
                  f" {row['claim_p99_ms']:>13.1f} {row['server_cpu_per_1k']:>12.3f} {row['client_cpu_per_1k']:>16.3f}"
                  f" {1000 / row['server_cpu_per_1k']:>24,.0f}", flush=True)
            check(url)
        at_target = [r for r in rows if r["workers"] == TARGET_WORKERS]
        if at_target:
            rate = at_target[0]["samples_per_s"]
            print(f"target: >= {TARGET_RATE:,} samples/s at {TARGET_WORKERS} workers: {rate:,.0f} "
                  f"({'met' if rate >= TARGET_RATE else 'not met'}; batch {args.batch})")
            print("derived (not measured): a dedicated database host's rate if postgres CPU were its only limit = "
                  "cores x the last column")


if __name__ == "__main__":
    main()
