"""Reward-hack flags on real PostgreSQL, without Docker: the worker's one-statement record and the verdict cache
keep them, and a run's counts (progress, metrics and its warning, the runs list) and the flagged-sample
listing come out of them. The sandbox raising them for real: tests/e2e/test_reward_hacks.py."""

from __future__ import annotations

import uuid

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from sandbox.executor import Outcome
from sandbox.verdicts import Verdict
from service.core.flags import FLAGS, canonical, check, described, wire_text
from service.api.metrics.service import reward_hack_warning
from service.api.runs.repository import FlagCounts
from service.worker import queue
from service.worker.cache import lookup_cache
from service.worker.results import record_outcomes
from tests.conftest import create_dataset, create_run, set_verdicts
from tests.test_claim_order import _dataset, _run

NO_FLAGS = dict.fromkeys(FLAGS, 0)


# ---- pure helpers ------------------------------------------------------------------------------------------


def test_flags_are_kept_known_once_each_and_in_one_order() -> None:
    assert canonical(["reached_judge", "ended_early", "reached_judge", "forged"]) == ["ended_early", "reached_judge"]
    assert canonical([]) is None and canonical(["forged"]) is None
    assert wire_text(["ended_early", "reached_judge"]) == "ended_early,reached_judge" and wire_text(None) is None
    assert all("," not in name for name in FLAGS)  # the wire's separator
    assert check("flags", ["a", "b"]) == "flags IS NULL OR (cardinality(flags) > 0 AND flags <@ ARRAY['a', 'b']::text[])"


def test_the_warning_says_how_many_what_they_did_and_whether_they_passed() -> None:
    counts = FlagCounts(3, 1, {**NO_FLAGS, "ended_early": 2, "reached_judge": 1})
    assert described(counts.by_flag) == (
        f"2 {FLAGS['ended_early']} (ended_early), 1 {FLAGS['reached_judge']} (reached_judge)"
    )
    run_id = uuid.uuid4()
    warning = reward_hack_warning(counts, run_id)
    assert warning.startswith("3 samples did what only a forger does: 2 ended with status 0")
    assert warning.endswith(f"; 1 of them passed anyway and count as passes in these figures "
                            f"(GET /v1/runs/{run_id}/samples?flagged=true lists them)")
    single = reward_hack_warning(FlagCounts(1, 0, {**NO_FLAGS, "out_of_turn": 1}), run_id)
    assert single.startswith("1 sample did what only a forger does: 1 wrote on the judge's channel out of turn")
    assert "; none of them passed (" in single


# ---- the worker's record and the verdict cache ---------------------------------------------------------------


def test_the_record_and_the_cache_keep_the_flags(sync_session: Session) -> None:
    db = sync_session
    dataset, (problem,) = _dataset(db, 1)
    run = _run(db, dataset, problem, None, "interactive", 3)
    claimed = sorted(queue.claim_batch(db, "tests", 16, 60, 3.0, 512, "image"), key=lambda s: s.id)
    assert len(claimed) == 3 and all(s.cache_key for s in claimed)
    outcomes = [
        # Flags arrive in the judge's order: they are stored in FLAGS order.
        Outcome(str(claimed[0].id), Verdict.PASSED, flags=("reached_judge", "ended_early")),
        Outcome(str(claimed[1].id), Verdict.FAILED, "AssertionError", failure={"kind": "assertion", "line": 2},
                flags=("out_of_turn",)),
        Outcome(str(claimed[2].id), Verdict.FAILED, "AssertionError"),
    ]
    record_outcomes(db, "tests", claimed, outcomes, max_attempts=3)
    rows = db.execute(
        text("SELECT flags, failure, detail, state FROM samples WHERE run_id = :run ORDER BY id"), {"run": run}
    ).all()
    assert [r.flags for r in rows] == [["ended_early", "reached_judge"], ["out_of_turn"], None]
    assert rows[1].failure == {"kind": "assertion", "line": 2} and rows[1].detail == "AssertionError"
    assert {r.state for r in rows} == {"done"}
    # A cache hit is the program it repeats: its flags come with its verdict.
    hits = lookup_cache(db, [s.cache_key for s in claimed])
    by_key = {s.cache_key: o for s, o in zip(claimed, outcomes, strict=True)}
    for key, hit in hits.items():
        assert hit.flags == tuple(canonical(by_key[key].flags) or ())
        assert (hit.verdict, hit.failure, hit.detail) == (by_key[key].verdict, by_key[key].failure, by_key[key].detail)
    assert len(hits) == 3
    stored = db.execute(text("SELECT flags FROM verdict_cache WHERE key = :k"), {"k": claimed[0].cache_key}).scalar_one()
    assert stored == ["ended_early", "reached_judge"]
    # The index of flagged samples serves the counts' predicate (whatever the planner prefers on three rows).
    db.execute(text("SET LOCAL enable_seqscan = off"))
    plan = "\n".join(db.execute(text(
        "EXPLAIN SELECT count(*) FROM samples WHERE run_id = :run AND flags IS NOT NULL"), {"run": run}).scalars())
    assert "ix_samples_flagged" in plan, plan


def test_a_retried_sandbox_error_records_no_flags(sync_session: Session) -> None:
    db = sync_session
    dataset, (problem,) = _dataset(db, 1)
    run = _run(db, dataset, problem, None, "interactive", 1)
    claimed = queue.claim_batch(db, "tests", 16, 60, 3.0, 512, "image")
    record_outcomes(db, "tests", claimed, [Outcome(str(claimed[0].id), Verdict.SANDBOX_ERROR, "engine", flags=("ended_early",))],
                    max_attempts=3)
    state, flags = db.execute(text("SELECT state, flags FROM samples WHERE run_id = :run"), {"run": run}).one()
    assert (state, flags) == ("queued", None)


# ---- the run's counts over HTTP ----------------------------------------------------------------------------


async def _flag(session: AsyncSession, run_id: str, key: str, flags_by_index: dict[int, list[str]]) -> None:
    for index, flags in flags_by_index.items():
        await session.execute(
            text("UPDATE samples s SET flags = CAST(:flags AS text[]) FROM problems p "
                 "WHERE s.run_id = :run AND s.problem_id = p.id AND p.key = :key AND s.index = :index"),
            {"flags": flags, "run": run_id, "key": key, "index": index},
        )
    await session.commit()


async def test_progress_metrics_samples_and_list_count_the_flags(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a", "b"])
    run = await create_run(client, dataset["id"], {"a": 3, "b": 3})
    clean = await create_run(client, dataset["id"], {"a": 1, "b": 1})
    await set_verdicts(db_session, run["id"], "a", ["passed", "failed", "passed"])
    await set_verdicts(db_session, run["id"], "b", ["failed", "failed", "passed"])
    await set_verdicts(db_session, clean["id"], "a", ["passed"])
    await set_verdicts(db_session, clean["id"], "b", ["passed"])
    await _flag(db_session, run["id"], "a", {0: ["reached_judge"], 1: ["ended_early", "out_of_turn"]})
    await _flag(db_session, run["id"], "b", {0: ["ended_early"]})

    # Progress: flagged samples, the passes among them, per flag (every flag listed).
    progress = (await client.get(f"/v1/runs/{run['id']}")).json()["progress"]
    assert progress["reward_hacks"] == {
        "samples": 3, "passed": 1, "by_flag": {"ended_early": 2, "out_of_turn": 1, "reached_judge": 1},
    }
    assert (await client.get(f"/v1/runs/{clean['id']}")).json()["progress"]["reward_hacks"] == {
        "samples": 0, "passed": 0, "by_flag": NO_FLAGS,
    }

    # Metrics: the same counts with what each flag means, and the first warning.
    metrics = (await client.get(f"/v1/runs/{run['id']}/metrics", params={"k": "1"})).json()
    hacks = metrics["reward_hacks"]
    assert (hacks["samples"], hacks["passed"], hacks["by_flag"]) == (3, 1, progress["reward_hacks"]["by_flag"])
    assert hacks["descriptions"] == FLAGS
    assert metrics["warnings"][0].startswith("3 samples did what only a forger does: 2 ended with status 0")
    assert "1 of them passed" in metrics["warnings"][0]
    calm = (await client.get(f"/v1/runs/{clean['id']}/metrics", params={"k": "1"})).json()
    assert calm["reward_hacks"]["samples"] == 0 and not any("forger" in w for w in calm["warnings"])

    # Samples carry their flags; filters for the flagged ones, one flag, and the unflagged.
    async def listed(**params: str) -> list[tuple[str, int, list[str]]]:
        page = (await client.get(f"/v1/runs/{run['id']}/samples", params=params)).json()
        return [(s["problem_id"], s["index"], s["flags"]) for s in page["items"]]

    everything = await listed()
    assert len(everything) == 6 and ("a", 2, []) in everything
    assert await listed(flagged="true") == [  # in id order, as every listing
        ("a", 0, ["reached_judge"]), ("a", 1, ["ended_early", "out_of_turn"]), ("b", 0, ["ended_early"]),
    ]
    assert await listed(flag="ended_early") == [("a", 1, ["ended_early", "out_of_turn"]), ("b", 0, ["ended_early"])]
    assert await listed(flag="out_of_turn", problem_id="a") == [("a", 1, ["ended_early", "out_of_turn"])]
    assert await listed(flagged="false") == [("a", 2, []), ("b", 1, []), ("b", 2, [])]
    page = (await client.get(f"/v1/runs/{run['id']}/samples", params={"flagged": "true", "limit": 2})).json()
    rest = (await client.get(f"/v1/runs/{run['id']}/samples",
                             params={"flagged": "true", "cursor": page["next_cursor"]})).json()
    assert len(page["items"]) == 2 and len(rest["items"]) == 1 and rest["next_cursor"] is None
    unknown = await client.get(f"/v1/runs/{run['id']}/samples", params={"flag": "forged"})
    assert unknown.status_code == 422 and "ended_early" in unknown.text
    contradiction = await client.get(f"/v1/runs/{run['id']}/samples", params={"flag": "ended_early", "flagged": "false"})
    assert contradiction.status_code == 422

    # The runs list counts each run's flagged samples.
    listed_runs = (await client.get("/v1/runs", params={"dataset_id": dataset["id"]})).json()["items"]
    assert {r["id"]: r["flagged_samples"] for r in listed_runs} == {run["id"]: 3, clean["id"]: 0}
