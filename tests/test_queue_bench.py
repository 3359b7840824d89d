"""The queue bench's control (bench/queue_scale.py --control samples), on real PostgreSQL: a batch through the control
changes its samples as a batch through the queue's own cycle does, so that the two benches differ in the
queue's choosing alone."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from sqlalchemy import select

from passk_dev.localstack import create_database, drop_database
from service.core.database import make_sync_sessionmaker, make_worker_engine, transaction
from service.core.models import Sample

BENCH = Path(__file__).resolve().parent.parent / "bench" / "queue_scale.py"
# What differs sample by sample whoever records it: which sample it is, and the moment and order of its record.
IDENTITY = {"id", "run_id", "problem_id", "index", "completion"}
PER_SAMPLE = {"event", "finished_at"}


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("queue_scale", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_batch_through_the_control_ends_as_one_through_the_queue(database_url: str) -> None:
    bench = _bench()
    url = create_database(database_url, "passk_bench")
    engine = make_worker_engine(url)
    try:
        samples = bench.RUNS * bench.PROBLEMS * 8  # a problem has 64 samples over the runs: a full claim
        bench.seed(url, samples)
        sessions = make_sync_sessionmaker(engine)
        recorded: dict[str, list[int]] = {}

        def through(name: str, cycle) -> None:  # noqa: ANN001
            with transaction(sessions) as session:
                claimed = cycle.claim(session)
            assert len(claimed) == 64
            with transaction(sessions) as session:
                runs = cycle.record(session, claimed)
            assert runs
            with transaction(sessions) as session:
                cycle.end(session, runs)
            recorded[name] = [sample.id for sample in claimed]

        # The queue first: its batch is one problem's samples of every run, wherever its random pivot lands. The
        # control's is a run of 64 ids: one that the queue's batch left whole (an eighth of them cross it).
        through("queue", bench.QueueCycle(64, "queue", 0, 1, samples))
        layout = bench.ControlCycle(64, "control", 0, 1, samples)
        whole = next(b for b in range(layout.batches) if set(layout.batch_ids(b)).isdisjoint(recorded["queue"]))
        # Worker `whole` of one per batch takes batch `whole` first.
        through("control", bench.ControlCycle(64, "control", whole, layout.batches, samples))

        with engine.connect() as connection:
            rows = {name: connection.execute(select(Sample.__table__).where(Sample.id.in_(ids))).mappings().all()
                    for name, ids in recorded.items()}
        assert all(len(found) == 64 for found in rows.values())

        def shape(found) -> dict[str, object]:
            """Each column's values over the batch; the per-sample ones as whether they are set."""
            return {column: sorted({repr(row[column] is not None if column in PER_SAMPLE else row[column])
                                    for row in found})
                    for column in found[0].keys() if column not in IDENTITY}

        assert shape(rows["control"]) == shape(rows["queue"])
        # Every sample has an event id of its own.
        events = [row["event"] for found in rows.values() for row in found]
        assert None not in events and len(set(events)) == len(events)
    finally:
        engine.dispose()
        drop_database(url)
