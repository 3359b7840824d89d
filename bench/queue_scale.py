"""One PostgreSQL for many hosts: simulated workers claim, lease, renew and record no-op batches.

    .venv/bin/python bench/queue_scale.py                       # 8, 32, 64 and 128 workers, 10 s each after a warm-up
    .venv/bin/python bench/queue_scale.py --workers 64 --seconds 20 --batch 16
    .venv/bin/python bench/queue_scale.py --workers 8 64 128 --rounds 4      # the targets, judged on medians
    .venv/bin/python bench/queue_scale.py --workers 8 64 128 --rounds 4 --control samples --samples 1200000

Each simulated worker is a thread doing what a worker's claiming thread does with the queue, through the same
functions (service/worker/queue.py, results.py): claim a batch (one transaction), record a passing verdict for
every sample (one transaction) and check whether its runs ended (another, as a worker does after each record).
Execution is a no-op, so the figures are the database's side alone. The workers are spread over `--processes`
processes, which stand for worker processes: each has one owner name for its threads' leases, one connection
per thread, and a maintenance thread that renews the leases its threads hold every 5 s in one statement, as a
worker's does. Prints samples/s through the queue and the claim latency (p50 / p99, the claim's transaction
including its commit), and checks that no sample was recorded twice.

The figures are a steady state's, as a deployment's workers hold their connections for hours: the window opens
once every worker has worked for at least `--warmup` seconds (5) and `--warmup-cycles` cycles (20), and only
the window is measured. A new connection's first cycles cost PostgreSQL several times a steady one's (catalog
caches filled, memory faulted in, and each statement parsed and planned until it is prepared once, with one
generic plan: service/core/database.py's make_worker_engine). A time alone is not enough: at 64 workers on 2
cores a worker completes about one cycle a second, so a 5-s warm-up ends inside the first cycles and the window
measures them.

Targets: PostgreSQL <= 0.15 CPU-s per 1,000 samples at 64 workers, and a rate at 64 and at 128 workers at least
the rate at 8.

`--control` runs a control instead of the queue, with the same processes, threads, connections and transactions
and every worker's batches assigned in advance, so that nothing is chosen and nothing is waited for:
`samples` (ControlCycle) makes the queue's changes to the samples table's rows, `bare` (BareCycle) the same
kind of changes to a table with a primary key alone. What their rates do as workers are added is not the
queue's choosing: the first is the samples table's, the second the machine's.

The cluster runs with a deployment's durability (fsync, synchronous_commit and full_page_writes on, as
PostgreSQL's defaults in docker-compose.yml), not the embedded development cluster's (all three off); the
header prints what was in force. Clients and server share this machine's cores, so it also prints the CPU
seconds per 1,000 samples of the postgres processes and of the client processes, and, derived from the
former, the rate one dedicated database core would sustain if CPU were its only limit.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import os
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Collection
from pathlib import Path

from sqlalchemy import BigInteger, any_, bindparam, create_engine, func, insert, select, text, update
from sqlalchemy.dialects.postgresql import ARRAY

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from passk_dev.localstack import create_database, drop_database, postgres_server  # noqa: E402
from passk_dev.proc import parent_pid, process_cpu_s, tree_cpu_s  # noqa: E402
from sandbox.executor import Outcome  # noqa: E402
from sandbox.verdicts import Verdict  # noqa: E402
from service.core.database import make_sync_engine, make_sync_sessionmaker, make_worker_engine, psycopg_url, transaction  # noqa: E402
from service.core.models import Dataset, Problem, Run, Sample  # noqa: E402
from service.core.settings import Settings  # noqa: E402
from service.core.states import SampleState  # noqa: E402
from service.api.projects.repository import default_project  # noqa: E402
from service.worker import queue, results  # noqa: E402

TARGET_WORKERS, TARGET_CPU_PER_1K = 64, 0.15
RUNS, PROBLEMS = 8, 64
# A worker renews its in-flight leases every min(lease / 4, 5 s) (service/worker/runner.py).
RENEW_EVERY_S = 5.0
WARMUP_LIMIT_S = 600.0


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
        connection.execute(text("CHECKPOINT"))  # the seeding's pages written out before the window, not in it
    engine.dispose()


class Window:
    """The measured window, shared by the client processes: it opens once every worker is warm (see main's
    --warmup-cycles) and lasts `seconds`. Until then both ends are infinitely far."""

    def __init__(self) -> None:
        self.bounds = mp.Array("d", [math.inf, math.inf])
        self.warm = mp.Value("i", 0)

    def open(self, seconds: float) -> None:
        now = time.time()
        self.bounds[1] = now + seconds  # the end first: whoever sees the start sees an end too
        self.bounds[0] = now

    @property
    def start(self) -> float:
        return self.bounds[0]

    @property
    def end(self) -> float:
        return self.bounds[1]


class InFlight:
    """A process's claimed and not yet recorded samples: what its maintenance thread renews, as a worker's does."""

    def __init__(self) -> None:
        self.ids: set[int] = set()
        self.lock = threading.Lock()

    def add(self, ids: list[int]) -> None:
        with self.lock:
            self.ids.update(ids)

    def discard(self, ids: list[int]) -> None:
        with self.lock:
            self.ids.difference_update(ids)

    def snapshot(self) -> list[int]:
        with self.lock:
            return sorted(self.ids)


class QueueCycle:
    """A worker's cycle through the queue: claim a batch, record a passing verdict for each sample, and check
    whether its runs ended, each in a transaction of its own, through the worker's functions."""

    TABLE = "samples"
    seed = staticmethod(seed)

    def __init__(self, batch: int, owner: str, worker: int, workers: int, samples: int) -> None:
        self.batch, self.owner = batch, owner

    def claim(self, session):
        return queue.claim_batch(session, self.owner, self.batch, 60.0, 3.0, 512, "sha256:bench")

    def record(self, session, claimed) -> Collection[uuid.UUID]:
        outcomes = [Outcome(id=str(s.id), verdict=Verdict.PASSED, duration_ms=1.0, cpu_ms=1.0) for s in claimed]
        return results.record_outcomes(session, self.owner, claimed, outcomes, max_attempts=3)

    def end(self, session, runs) -> None:
        results.end_runs(session, runs)


class ControlCycle:
    """The control (--control samples): the same three transactions and the same rows' changes (queued to leased
    to done, with an event id each, and a probe for the run's newest lease), but with no queue to choose from:
    worker w of W takes the batches w, w + W, w + 2W, ... of the samples, assigned in advance. Batch b is the
    samples' (b·STRIDE mod batches)-th run of `batch` ids, so that workers writing at the same time are as far
    apart in the table as the claim's random pivot puts them. What grows with the workers here is not the
    queue's choosing."""

    TABLE = "samples"
    seed = staticmethod(seed)
    STRIDE = 7919  # a prime: b -> b * STRIDE mod batches is one-to-one unless it divides the number of batches

    CLAIM = text(
        f"UPDATE samples SET state = '{SampleState.LEASED}', lease_owner = :owner, attempts = attempts + 1, "
        "lease_expires_at = now() + interval '60 seconds' "
        f"WHERE id = ANY(:ids) AND state = '{SampleState.QUEUED}' RETURNING id, run_id"
    )
    # The lease's guard and the event id as the worker's record takes them (results.held_by, results.event_id).
    RECORD = (
        update(Sample.__table__)
        .where(Sample.id == any_(bindparam("ids", type_=ARRAY(BigInteger))), *results.held_by(bindparam("owner")))
        .values(state=results.fixed(SampleState.DONE), verdict=Verdict.PASSED, duration_ms=1, cpu_ms=1, stdout="",
                stderr="", finished_at=func.now(), lease_owner=None, lease_expires_at=None, event=results.event_id())
        .returning(Sample.run_id)
    )
    END = text(
        f"SELECT 1 FROM samples WHERE run_id = ANY(ARRAY[CAST(:run AS uuid)]) AND state = '{SampleState.LEASED}' "
        "ORDER BY run_id DESC, lease_expires_at DESC LIMIT 1"
    )

    def __init__(self, batch: int, owner: str, worker: int, workers: int, samples: int) -> None:
        self.batch, self.owner, self.next, self.step = batch, owner, worker, workers
        self.batches = samples // batch
        if self.batches % self.STRIDE == 0:
            raise ValueError(f"{samples} samples make a multiple of {self.STRIDE} batches of {batch}: "
                             "seed another number")

    def batch_ids(self, b: int) -> range:
        """The ids of batch b (the seeded samples' ids are 1, 2, ...)."""
        first = 1 + (b * self.STRIDE % self.batches) * self.batch
        return range(first, first + self.batch)

    def claim(self, session):
        ids = self.batch_ids(self.next)
        self.next += self.step
        return session.execute(self.CLAIM, {"owner": self.owner, "ids": list(ids)}).all()

    def record(self, session, claimed) -> Collection[uuid.UUID]:
        ids = [row.id for row in claimed]
        return set(session.execute(self.RECORD, {"owner": self.owner, "ids": ids}).scalars())

    def end(self, session, runs) -> None:
        for run in sorted(runs):
            session.execute(self.END, {"run": run}).first()


class BareCycle(ControlCycle):
    """The control on a bare table (--control bare): the same transactions and kinds of changes as ControlCycle's,
    to a table with a primary key alone, so that its updates are HOT (no index holds a column they change)."""

    TABLE = "bare"

    CLAIM = text(
        "UPDATE bare SET state = 'leased', owner = :owner, attempts = attempts + 1, "
        "expires = now() + interval '60 seconds' WHERE id = ANY(:ids) AND state = 'queued' RETURNING id, run"
    )
    RECORD = text(
        "UPDATE bare SET state = 'done', owner = NULL, expires = NULL, "
        "event = CASE WHEN pg_current_xact_id() IS NOT NULL THEN nextval('sample_events') END "
        "WHERE id = ANY(:ids) AND state = 'leased' AND owner = :owner RETURNING run"
    )
    END = text("SELECT 1 FROM bare WHERE id = CAST(:run AS bigint) AND state = 'leased'")

    @staticmethod
    def seed(url: str, samples_total: int) -> None:
        """`samples_total` queued rows as wide as a seeded sample's, in RUNS runs."""
        engine = make_sync_engine(url)
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE bare (id bigint PRIMARY KEY, run bigint, state text, owner text, "
                                    "attempts int DEFAULT 0, expires timestamptz, event bigint, pad text)"))
            connection.execute(
                text("INSERT INTO bare (id, run, state, pad) "
                     "SELECT g, g * :runs / :n, 'queued', repeat('x', 60) FROM generate_series(1, :n) AS g"),
                {"n": samples_total, "runs": RUNS},
            )
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("VACUUM ANALYZE bare"))
            connection.execute(text("CHECKPOINT"))
        engine.dispose()


CONTROLS = {"samples": ControlCycle, "bare": BareCycle}


def _worker_thread(sessions, cycle, in_flight: InFlight, window: Window,
                   warm_after: tuple[float, int], out: list, barrier) -> None:
    """Claims and records until the window's end; says it is warm after `warm_after` (a time and a number of
    cycles, both reached); counts the claims made and the batches recorded within the window."""
    claims, recorded, cycles, warm = [], 0, 0, False
    barrier.wait()
    while time.time() < window.end:
        started = time.perf_counter()
        with transaction(sessions) as session:
            claimed = cycle.claim(session)
        if time.time() >= window.start:
            claims.append(time.perf_counter() - started)
        if not claimed:
            continue
        ids = [s.id for s in claimed]
        in_flight.add(ids)
        with transaction(sessions) as session:
            runs = cycle.record(session, claimed)
        in_flight.discard(ids)
        with transaction(sessions) as session:  # as a worker does after each record: did a run end?
            cycle.end(session, runs)
        if window.start <= time.time() < window.end:  # recorded within the window
            recorded += len(claimed)
        cycles += 1
        if not warm and cycles >= warm_after[1] and time.time() >= warm_after[0]:
            warm = True
            with window.warm.get_lock():
                window.warm.value += 1
    out.append((claims, recorded))


def _maintenance_thread(sessions, owner: str, in_flight: InFlight, window: Window) -> None:
    """Renews the process's in-flight leases every RENEW_EVERY_S, in one statement, as a worker's maintenance
    thread does (service/worker/runner.py)."""
    while time.time() < window.end:
        time.sleep(min(RENEW_EVERY_S, max(0.0, window.end - time.time())))
        if ids := in_flight.snapshot():
            with transaction(sessions) as session:
                queue.renew_leases(session, owner, 60.0, ids)


def _process(url: str, threads: int, batch: int, window: Window, warm_after: tuple[float, int], start_at: float,
             conn, cycle_type: type, first_worker: int, workers: int, samples: int) -> None:
    """A worker process: `threads` claiming threads and a maintenance thread under one owner, one connection
    each."""
    engine = make_worker_engine(url, pool_size=threads + 1, max_overflow=0)
    sessions = make_sync_sessionmaker(engine)
    owner, in_flight = f"bench-{uuid.uuid4().hex[:8]}", InFlight()
    out: list = []
    barrier = threading.Barrier(threads)
    time.sleep(max(0.0, start_at - time.time()))
    pool = [
        threading.Thread(target=_worker_thread,
                         args=(sessions, cycle_type(batch, owner, first_worker + i, workers, samples), in_flight,
                               window, warm_after, out, barrier))
        for i in range(threads)
    ]
    pool.append(threading.Thread(target=_maintenance_thread, args=(sessions, owner, in_flight, window)))
    for thread in pool:
        thread.start()
    # This process's CPU within the window (its threads' included).
    while time.time() < window.start:
        time.sleep(0.01)
    cpu_from = process_cpu_s(os.getpid())
    time.sleep(max(0.0, window.end - time.time()))
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


def measure(url: str, workers: int, batch: int, seconds: float, processes: int, warmup: float,
            warmup_cycles: int, cycle_type: type = QueueCycle, samples: int = 0) -> dict:
    processes = min(processes, workers)
    postmaster = _postmaster(url)
    shares = [workers // processes + (1 if i < workers % processes else 0) for i in range(processes)]
    start_at = time.time() + 2.0  # every process connected and ready
    window = Window()
    pipes, procs = [], []
    for number, share in enumerate(shares):
        parent, child = mp.Pipe(duplex=False)
        proc = mp.Process(target=_process,
                          args=(url, share, batch, window, (start_at + warmup, warmup_cycles), start_at, child,
                                cycle_type, sum(shares[:number]), workers, samples))
        proc.start()
        pipes.append(parent)
        procs.append(proc)
    while window.warm.value < workers:
        if not any(proc.is_alive() for proc in procs) or time.time() - start_at > WARMUP_LIMIT_S:
            sys.exit(f"{workers - window.warm.value} of {workers} workers were not warm after {WARMUP_LIMIT_S:g} s")
        time.sleep(0.05)
    warmed_in = time.time() - start_at
    window.open(seconds)
    server_before = tree_cpu_s(postmaster)
    time.sleep(max(0.0, window.end - time.time()))
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
        "warmed_in_s": warmed_in,
    }


def check(url: str, table: str = "samples") -> None:
    engine = make_sync_engine(url)
    with engine.connect() as connection:
        done, twice = connection.execute(text(
            f"SELECT count(*) FILTER (WHERE state = '{SampleState.DONE}'), count(*) FILTER (WHERE attempts > 1) "
            f"FROM {table}"
        )).one()
    engine.dispose()
    print(f"check: {done} {table} rows done, {twice} claimed more than once")
    if twice:
        sys.exit("a sample was claimed twice")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="*", default=[8, 32, 64, 128])
    parser.add_argument("--seconds", type=float, default=10.0, help="the measured window, after the warm-up")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds of work before the measured window, at least")
    parser.add_argument("--warmup-cycles", type=int, default=20,
                        help="claim-record cycles every worker completes before the measured window, at least")
    parser.add_argument("--batch", type=int, default=Settings().batch_size)
    parser.add_argument("--processes", type=int, default=8, help="client processes the workers are spread over")
    parser.add_argument("--samples", type=int, default=400_000, help="queued samples seeded before each level")
    parser.add_argument("--rounds", type=int, default=1,
                        help="measure every level this many times, in turn (every other round from the most workers "
                             "down: an even number puts each level first as often as last); the targets are judged "
                             "on the medians")
    parser.add_argument("--control", choices=sorted(CONTROLS),
                        help="a control instead of the queue: the same transactions with each worker's rows assigned "
                             "in advance, on the samples table or on a bare one; seed enough samples for the warm-up "
                             "and the window (1,200,000 at these rates)")
    args = parser.parse_args()

    with postgres_server("passk-queue-scale") as server:
        what = f"the control on {args.control}, no queue" if args.control else "the queue"
        print(f"{what}; batch {args.batch}; a warm-up of at least {args.warmup:g} s and {args.warmup_cycles} cycles "
              f"of every worker, then {args.seconds:g} s measured; {os.cpu_count()} cores "
              f"shared by clients and server, load average "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; {deployment_durability(server)}")
        print(f"{'round':>5} {'workers':>8} {'samples/s':>10} {'claims':>8} {'claim p50 ms':>13} {'claim p99 ms':>13}"
              f" {'pg cpu s/1k':>12} {'client cpu s/1k':>16} {'derived: /s per db core':>24} {'warm after s':>13}")
        rounds: list[dict[int, dict]] = []
        for number in range(args.rounds):
            rounds.append({})
            for workers in (args.workers if number % 2 == 0 else args.workers[::-1]):
                url = create_database(server, "passk_queue_scale")
                cycle = CONTROLS[args.control] if args.control else QueueCycle
                cycle.seed(url, args.samples)
                row = measure(url, workers, args.batch, args.seconds, args.processes, args.warmup, args.warmup_cycles,
                              cycle, args.samples)
                rounds[-1][workers] = row
                print(f"{number + 1:>5} {workers:>8} {row['samples_per_s']:>10,.0f} {row['claims']:>8}"
                      f" {row['claim_p50_ms']:>13.1f} {row['claim_p99_ms']:>13.1f} {row['server_cpu_per_1k']:>12.3f}"
                      f" {row['client_cpu_per_1k']:>16.3f} {1000 / row['server_cpu_per_1k']:>24,.0f}"
                      f" {row['warmed_in_s']:>13.1f}", flush=True)
                check(url, cycle.TABLE)
                # Gone before the next level, so that autovacuum cleaning up after this one does not run in its window.
                drop_database(url)
        report(rounds, args.batch)


def report(rounds: list[dict[int, dict]], batch: int) -> None:
    """The medians over the rounds (a single run on a shared 2-core machine varies by about 15 %), and the targets
    judged on them: a level's rate against the rate at 8 workers is the median of the rounds' ratios."""
    levels = sorted(rounds[0])
    if len(rounds) > 1:
        for workers in levels:
            rows = [measured[workers] for measured in rounds]
            rate, server, client = (statistics.median(r[name] for r in rows)
                                    for name in ("samples_per_s", "server_cpu_per_1k", "client_cpu_per_1k"))
            print(f"median of {len(rounds)}: {workers:>4} workers {rate:>8,.0f} samples/s, PostgreSQL {server:.3f} "
                  f"and clients {client:.3f} CPU-s per 1,000 samples")
    if TARGET_WORKERS in levels:
        cpu = statistics.median(measured[TARGET_WORKERS]["server_cpu_per_1k"] for measured in rounds)
        print(f"target: PostgreSQL <= {TARGET_CPU_PER_1K} CPU-s per 1,000 samples at {TARGET_WORKERS} workers: "
              f"{cpu:.3f} ({'met' if cpu <= TARGET_CPU_PER_1K else 'not met'}; batch {batch})")
    if 8 in levels:
        for workers in (w for w in levels if w > 8):
            ratios = [measured[workers]["samples_per_s"] / measured[8]["samples_per_s"] for measured in rounds]
            ratio = statistics.median(ratios)
            each = f" (rounds: {', '.join(f'{r:.2f}' for r in ratios)})" if len(ratios) > 1 else ""
            print(f"target: the rate at {workers} workers >= the rate at 8: {ratio:.2f} of it{each} "
                  f"({'met' if ratio >= 1 else 'not met'})")
    print("derived (not measured): a dedicated database host's rate if postgres CPU were its only limit = "
          "cores x the 'derived' column")


if __name__ == "__main__":
    main()
