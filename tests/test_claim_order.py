"""The queue's claim order (real PostgreSQL): priority first, then the API key with the fewest leased
samples (keys share the workers at equal priority), then the oldest run; batch runs keep a turn."""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import text
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session

from service.api.auth.keys import SCOPES
from service.api.auth.repository import create_key
from service.api.projects.repository import default_project
from service.core.database import WORKER_SERVER_SETTINGS
from service.worker import queue, results


def _run(db: Session, dataset: uuid.UUID, problem: int, key: uuid.UUID | None, priority: str, samples: int) -> uuid.UUID:
    """A run of the dataset's project, submitted with `key`."""
    run_id = uuid.uuid4()
    db.execute(
        text("INSERT INTO runs (id, project_id, dataset_id, model, sampling, sample_count, priority, api_key_id, "
             "created_at) SELECT :id, project_id, :ds, 'm', '{}', :n, :priority, :key, clock_timestamp() "
             "FROM datasets WHERE id = :ds"),
        {"id": run_id, "ds": dataset, "n": samples, "priority": priority, "key": key},
    )
    db.execute(
        text("INSERT INTO samples (run_id, problem_id, index, completion) "
             "SELECT :run, :problem, i, 'return x' || i FROM generate_series(0, :n - 1) AS i"),
        {"run": run_id, "problem": problem, "n": samples},
    )
    return run_id


def _dataset(db: Session, problems: int, stdio: bool = False) -> tuple[uuid.UUID, list[int]]:
    """A dataset of `problems` problems p0, p1, ... (HumanEval-form, or stdio with one case); (its id, problem ids)."""
    dataset = uuid.uuid4()
    db.execute(text("INSERT INTO datasets (id, project_id, name, digest, problem_count) "
                    "VALUES (:id, :project, 'd', :digest, :n)"),
               {"id": dataset, "project": default_project(db).id, "digest": uuid.uuid4().hex, "n": problems})
    columns = ("'', 'stdio', '[{\"input\": \"1\\n\", \"output\": \"1\\n\"}]'" if stdio
               else "'f', 'humaneval', NULL")
    ids = [
        db.execute(
            text("INSERT INTO problems (dataset_id, position, key, prompt, test, entry_point, format, cases) "
                 f"VALUES (:ds, :pos, :key, '', '', {columns}) RETURNING id"),
            {"ds": dataset, "pos": i, "key": f"p{i}"},
        ).scalar_one()
        for i in range(problems)
    ]
    return dataset, ids


def _claim(db: Session, first: str = "interactive") -> set[uuid.UUID]:
    claimed = queue.claim_batch(db, "tests", 16, 60, 3.0, 512, "image", first)
    return {sample.run_id for sample in claimed}


def test_priority_then_fair_share_between_keys_then_age(sync_session: Session) -> None:
    db = sync_session
    dataset, problems = _dataset(db, 2)
    key_a, _ = create_key(db, "a", SCOPES)
    key_b, _ = create_key(db, "b", SCOPES)
    old_batch_a = _run(db, dataset, problems[0], key_a.id, "batch", 100)
    batch_b = _run(db, dataset, problems[1], key_b.id, "batch", 100)
    interactive_a = _run(db, dataset, problems[1], key_a.id, "interactive", 10)

    # Interactive first, although the batch runs are older.
    assert _claim(db) == {interactive_a}
    # Key A now holds 10 leased samples, key B none: B's run is next although A's batch run is older.
    assert _claim(db) == {batch_b}
    # B holds 16, A 10: A's turn.
    assert _claim(db) == {old_batch_a}
    # A claim that prefers batch takes a batch run even while interactive work waits.
    late_interactive = _run(db, dataset, problems[0], key_b.id, "interactive", 5)
    assert _claim(db, first="batch") <= {old_batch_a, batch_b}
    assert _claim(db) == {late_interactive}


def test_one_claim_fills_its_batch_with_the_same_problem_of_other_runs(sync_session: Session) -> None:
    db = sync_session
    dataset, (problem,) = _dataset(db, 1)
    key, _ = create_key(db, "k", SCOPES)
    singles = [_run(db, dataset, problem, key.id, "interactive", 1) for _ in range(20)]
    other_priority = _run(db, dataset, problem, key.id, "batch", 1)
    claimed = _claim(db)
    assert len(claimed) == 16 and claimed <= set(singles) and other_priority not in claimed
    statuses = db.execute(text("SELECT DISTINCT status FROM runs WHERE id = ANY(:ids)"), {"ids": list(claimed)}).scalars()
    assert set(statuses) == {"running"}


def test_programs_take_the_workers_own_default_limit(sync_session: Session) -> None:
    """No limit on the run, problem or dataset: the program is built with the claiming worker's default."""
    db = sync_session
    dataset, (problem,) = _dataset(db, 1, stdio=True)
    key, _ = create_key(db, "a", SCOPES)
    _run(db, dataset, problem, key.id, "interactive", 1)
    (claimed,) = queue.claim_batch(db, "tests", 16, 60, 7.25, 512, "image")
    assert "7.25" in claimed.program and claimed.memory_bytes == 512 * 1024 * 1024


def test_the_claims_one_plan_walks_indexes(sync_session: Session) -> None:
    """The claim runs on a generic plan (made once per connection, without the parameters' values): on a queue of a
    realistic shape it must still find the head run's sample and its batch by walking indexes in order, never by
    reading and sorting a run's queued samples (as a plan that did not know a LIMIT would)."""
    db = sync_session
    dataset, problems = _dataset(db, 64)
    # Eight runs of 50,000 samples over 64 problems, as bench/queue_scale.py's.
    runs = [_run(db, dataset, problems[0], None, "batch", 0) for _ in range(8)]
    db.execute(
        text("INSERT INTO samples (run_id, problem_id, index, completion) "
             "SELECT run, (:problems)[1 + (i / 781) % 64], i % 781, 'return x' || i "
             "FROM unnest(CAST(:runs AS uuid[])) AS run, generate_series(0, 49999) AS i"),
        {"runs": runs, "problems": problems},
    )
    head = runs[0]
    db.execute(text("ANALYZE samples"))
    db.execute(text("ANALYZE runs"))

    plan = _generic_plan(db, queue._CLAIM, {"owner": "tests", "lease": timedelta(seconds=60), "head_run": head, "limit": 16})
    ctes = _ctes(plan)
    for name in ("CTE pivot", "CTE past", "CTE before", "CTE head_rows"):
        kinds = [(n["Node Type"], n.get("Relation Name")) for n in _nodes(ctes[name])]
        assert not [k for k in kinds if "Sort" in k[0] or k == ("Seq Scan", "samples")], (name, kinds)
    # Whether a candidate run has a queued sample is looked up in an index, never by reading the table until one
    # turns up (a claimed run's first rows are no longer queued: such a scan reads them all, on every claim).
    plan = _generic_plan(db, queue._CANDIDATE_RUNS, {"first": "interactive", "only": None})
    kinds = [(n["Node Type"], n.get("Relation Name")) for n in _nodes(plan["Plan"])]
    assert ("Seq Scan", "samples") not in kinds, kinds
    assert len(queue.claim_batch(db, "tests", 16, 60, 3.0, 512, "image")) == 16


def test_a_backlog_of_one_sample_runs_is_claimed_without_reading_every_run(sync_session: Session) -> None:
    """An RL step's backlog: thousands of one-sample interactive runs of one problem, and another key's batch run.
    The candidate runs are found by walking ix_runs_claim_order (each key's oldest runs first), and a claim fills its
    batch from the other runs of its problem by walking ix_samples_queued_problem: neither reads every active run."""
    db = sync_session
    dataset, (problem,) = _dataset(db, 1)
    key_a, _ = create_key(db, "a", SCOPES)
    key_b, _ = create_key(db, "b", SCOPES)
    singles = db.execute(
        text("INSERT INTO runs (id, project_id, dataset_id, model, sampling, sample_count, priority, api_key_id, "
             "created_at) SELECT gen_random_uuid(), project_id, :ds, 'm', '{}', 1, 'interactive', :key, "
             "clock_timestamp() + i * interval '1 millisecond' FROM datasets, generate_series(1, 3000) AS i "
             "WHERE datasets.id = :ds RETURNING id, created_at"),
        {"ds": dataset, "key": key_a.id},
    ).all()
    singles = [row.id for row in sorted(singles, key=lambda row: row.created_at)]
    db.execute(text("INSERT INTO samples (run_id, problem_id, index, completion) "
                    "SELECT run, :problem, 0, 'return ' || run FROM unnest(CAST(:runs AS uuid[])) AS run"),
               {"problem": problem, "runs": singles})
    batch_b = _run(db, dataset, problem, key_b.id, "batch", 10)
    db.execute(text("ANALYZE samples"))
    db.execute(text("ANALYZE runs"))

    plan = _generic_plan(db, queue._CANDIDATE_RUNS, {"first": "interactive", "only": None}, analyze=True)
    runs_read = sum(n["Actual Rows"] * n["Actual Loops"] for n in _nodes(plan["Plan"])
                    if n.get("Relation Name") == "runs")
    assert runs_read < 100, runs_read
    plan = _generic_plan(db, queue._CLAIM, {"owner": "tests", "lease": timedelta(seconds=60), "head_run": singles[0],
                                            "limit": 8}, analyze=True)
    others = [(n["Node Type"], n.get("Index Name"), n["Actual Rows"] * n["Actual Loops"])
              for n in _nodes(_ctes(plan)["CTE others"])]
    assert not [o for o in others if "Sort" in o[0] or o[0] == "Seq Scan"], others
    assert sum(rows for kind, index, rows in others if index == "ix_samples_queued_problem") < 100, others

    claimed = queue.claim_batch(db, "tests", 16, 60, 3.0, 512, "image", interactive_limit=8)
    assert [sample.run_id for sample in claimed] == singles[:8]  # the oldest first, one problem, one claim
    assert {sample.run_id for sample in queue.claim_batch(db, "tests", 16, 60, 3.0, 512, "image", "batch")} == {batch_b}


def test_the_end_of_run_check_reads_its_own_runs_samples_only(sync_session: Session) -> None:
    """After each record a worker asks whether the runs it recorded into ended (results.end_runs). On its generic
    plan that looks for the run's newest lease, then (only when there is none) for one queued sample of the run:
    never through every worker's leases, which grow with the workers (~workers x batch rows), nor through the
    entries the run's recorded samples left in the leased index."""
    db = sync_session
    dataset, (problem,) = _dataset(db, 1)
    first, second = _run(db, dataset, problem, None, "batch", 20), _run(db, dataset, problem, None, "batch", 20)
    # The other run's leases come first in the leased index (run_id order), before the checked run's.
    others, checked = sorted((first, second))
    for run, size in ((others, 3000), (checked, 3000)):
        db.execute(text("INSERT INTO samples (run_id, problem_id, index, completion) "
                        "SELECT :run, :problem, i, 'return x' FROM generate_series(20, :n - 1) AS i"),
                   {"run": run, "problem": problem, "n": size})
    # Analyzed while nothing was leased, as a queue is when its runs are submitted: a plan that trusts those figures
    # reads the whole leased index, once it is full, and filters it by run.
    db.execute(text("ANALYZE samples"))

    def lease(run: uuid.UUID, below: int) -> None:  # leased in index order: sample i's lease expires i ms later
        db.execute(text("UPDATE samples SET state = 'leased', lease_owner = 'tests', "
                        "lease_expires_at = now() + interval '1 minute' + index * interval '1 ms' "
                        "WHERE run_id = :run AND state = 'queued' AND index < :below"), {"run": run, "below": below})

    def probes() -> dict[str, tuple[int, int, int]]:
        plan = _generic_plan(db, results._END, {"run_ids": f"{{{checked}}}", "woken": f"{{{checked}}}"}, analyze=True)
        return {n["Index Name"]: (n["Actual Loops"], n["Actual Rows"] * n["Actual Loops"], n.get("Heap Fetches", 0))
                for n in _nodes(plan["Plan"]) if n.get("Index Name", "").startswith("ix_samples_")}

    lease(others, 3000)
    # Most of the run recorded, its newest leases out, samples still queued: the newest lease answers, its first
    # entry; the entries the recorded samples left are not read, nor are the queued samples looked for.
    lease(checked, 2990)
    db.execute(text("UPDATE samples SET state = 'done', verdict = 'passed', lease_owner = NULL "
                    "WHERE run_id = :run AND state = 'leased' AND index < 2980"), {"run": checked})
    found = probes()
    assert found.pop("ix_samples_leased_run") == (1, 1, 1), found
    assert [loops for loops, _, _ in found.values()] == [0], found  # the queued probe's index, never walked
    # Nothing leased: one queued sample of this run is enough, whatever the other runs hold.
    db.execute(text("UPDATE samples SET state = 'done', verdict = 'passed', lease_owner = NULL "
                    "WHERE run_id = :run AND state = 'leased'"), {"run": checked})
    found = probes()
    assert found.pop("ix_samples_leased_run")[1] == 0, found
    assert [(loops, rows) for loops, rows, _ in found.values()] == [(1, 1)], found
    # Nothing left: the run ends.
    db.execute(text("UPDATE samples SET state = 'done', verdict = 'passed', lease_owner = NULL WHERE run_id = :run"),
               {"run": checked})
    results.end_runs(db, [checked])
    status = db.execute(text("SELECT status FROM runs WHERE id = :run"), {"run": checked}).scalar_one()
    assert status not in ("queued", "running"), status


def _nodes(node: dict):
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)


def _ctes(plan: dict) -> dict[str, dict]:
    return {node["Subplan Name"]: node for node in _nodes(plan["Plan"]) if node.get("Subplan Name", "").startswith("CTE ")}


def _generic_plan(db: Session, statement, values: dict, analyze: bool = False) -> dict:
    """The plan a worker's connection runs `statement` on (prepared, generic: WORKER_SERVER_SETTINGS); `analyze`: run
    it too (inside a savepoint, undone after), with the rows each node read."""
    compiled = statement.compile(dialect=postgresql.dialect(paramstyle="numeric_dollar"))
    values = {**compiled.params, **values}
    for name, value in WORKER_SERVER_SETTINGS.items():  # as a worker's connections run
        db.execute(text(f"SET LOCAL {name} = {value}"))

    def literal(value: object) -> str:  # EXECUTE's arguments: a utility statement takes no bound parameters
        if value is None:
            return "NULL"
        if isinstance(value, timedelta):
            return f"interval '{value.total_seconds()} seconds'"
        if isinstance(value, int):
            return str(value)
        return "'" + str(getattr(value, "value", value)).replace("'", "''") + "'"

    arguments = ", ".join(literal(values[name]) for name in compiled.positiontup)
    savepoint = db.begin_nested()
    try:
        db.execute(text(f"PREPARE passk_plan AS {compiled.string}"))
        options = "ANALYZE, FORMAT JSON" if analyze else "FORMAT JSON"
        (plan,) = db.execute(text(f"EXPLAIN ({options}) EXECUTE passk_plan({arguments})")).scalar_one()
        db.execute(text("DEALLOCATE passk_plan"))
    finally:
        savepoint.rollback()
    return plan
