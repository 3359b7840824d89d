"""Several workers share one queue; a worker killed with SIGKILL loses nothing."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import docker
import httpx
import pytest

from sqlalchemy import text

from sandbox.container import LABEL_OWNER, LABEL_ROLE, ROLE_SANDBOX, listed_labels
from service.core.database import make_sync_engine, make_sync_sessionmaker, transaction
from service.worker import queue
from tests.e2e.conftest import Stack, wait_for_run, wait_until

PROMPT = "def slow(x):\n"
TEST = "def check(candidate):\n    assert candidate(2) == 4\n"


def _dataset(client: httpx.Client, name: str, problems: int) -> str:
    body = {
        "name": name,
        "problems": [
            {"id": f"p{i}", "prompt": PROMPT, "test": TEST + f"# {i}\n", "entry_point": "slow"} for i in range(problems)
        ],
    }
    response = client.post("/v1/datasets", json=body)
    assert response.status_code in (200, 201), response.text
    return response.json()["id"]


def _samples(client: httpx.Client, run_id: str) -> list[dict]:
    page = client.get(f"/v1/runs/{run_id}/samples", params={"limit": 1000}).raise_for_status().json()
    return page["items"]


@pytest.mark.slow
def test_two_workers_never_run_a_sample_twice(stack: Stack) -> None:
    client = stack.client(timeout=60)
    dataset_id = _dataset(client, "shared-queue", problems=20)
    samples = [{"problem_id": f"p{i}", "completion": "    return x * x\n"} for i in range(20) for _ in range(10)]
    stack.start_worker(concurrency=2)
    stack.start_worker(concurrency=2)
    run_id = client.post(
        "/v1/runs", json={"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 0.8}, "samples": samples}
    ).json()["id"]
    run = wait_for_run(client, run_id)
    stack.stop_workers()
    assert run["status"] == "completed" and run["progress"]["passed"] == 200
    rows = _samples(client, run_id)
    assert len(rows) == 200
    # Claimed exactly once each: a second claim would have raised the attempt count.
    assert {row["attempts"] for row in rows} == {1}


def test_progress_counts_samples_as_they_finish(stack: Stack) -> None:
    """A batch's finished samples count in the run's progress before its slow programs end, not with them."""
    client = stack.client(timeout=60)
    dataset_id = _dataset(client, "progress-per-sample", problems=1)
    # Two slow passes (1.5 s of CPU each): final verdicts, not timeouts, which the re-run lane records apart.
    slow = "    import time\n    start = time.process_time()\n    while time.process_time() - start < 1.5:\n        pass\n"
    slow_passes = [{"problem_id": "p0", "completion": slow + f"    return x * x  # {i}\n"} for i in range(2)]
    samples = [{"problem_id": "p0", "completion": "    return x * x\n"}, *slow_passes]
    stack.start_worker(concurrency=1)
    run_id = client.post(
        "/v1/runs",
        json={"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 0.8}, "samples": samples, "time_limit_s": 10},
    ).json()["id"]

    def one_done_while_running() -> bool:
        run = client.get(f"/v1/runs/{run_id}").raise_for_status().json()
        assert run["progress"]["done"] < 3 or run["status"] != "running", run
        return run["status"] == "running" and run["progress"]["done"] == 1 and run["progress"]["passed"] == 1

    # The slow ones take 3 s of CPU after the first sample passed: a wide window.
    wait_until(one_done_while_running, 60, "the first sample to count while the slow ones still run", poll_s=0.05)
    run = wait_for_run(client, run_id)
    stack.stop_workers()
    assert run["status"] == "completed" and run["progress"]["done"] == 3
    assert [row["verdict"] for row in _samples(client, run_id)] == ["passed"] * 3


def test_a_batch_past_its_time_budget_gives_the_rest_back_to_the_queue(stack: Stack, tmp_path: Path) -> None:
    """One thread claims the whole problem (one claim), runs for its batch's budget, and gives back the programs it
    has not started: the other thread takes them, and no attempt is counted for a program given back."""
    client = stack.client(timeout=60)
    dataset_id = _dataset(client, "given-back", problems=1)
    completion = "    import time\n    time.sleep(0.6)\n    return x * x\n"
    stack.log_path = tmp_path / "worker.log"
    try:
        stack.start_worker(concurrency=2, PASSK_BATCH_SECONDS="1")
    finally:
        stack.log_path = None
    run_id = client.post(
        "/v1/runs",
        json={"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 1.0},
              "samples": [{"problem_id": "p0", "completion": completion + f"    # {i}\n"} for i in range(8)]},
    ).json()["id"]
    run = wait_for_run(client, run_id, timeout_s=180)
    stack.stop_workers()
    assert run["status"] == "completed" and run["progress"]["passed"] == 8, run
    assert {row["attempts"] for row in _samples(client, run_id)} == {1}
    log = (tmp_path / "worker.log").read_text()
    assert f"run {run_id}: released" in log and "the batch ran past its time budget" in log, log[-3000:]


def test_interactive_claims_grow_with_a_backlog_and_give_back_after_their_own_budget(stack: Stack, tmp_path: Path) -> None:
    """One thread and a backlog of an interactive run's slow programs: its claims grow (1, 2, 4 samples) and the
    claim of 4 gives back what it has not started once it has run for PASSK_INTERACTIVE_BATCH_SECONDS (1 s; the
    batch runs' budget stays at its 10 s), and the thread claims them again; no attempt is counted twice."""
    client = stack.client(timeout=60)
    dataset_id = _dataset(client, "interactive-given-back", problems=1)
    completion = "    import time\n    time.sleep(0.6)\n    return x * x\n"
    stack.log_path = tmp_path / "worker.log"
    try:
        stack.start_worker(concurrency=1, PASSK_INTERACTIVE_SANDBOXES="0", PASSK_INTERACTIVE_BATCH_SECONDS="1")
    finally:
        stack.log_path = None
    run_id = client.post(
        "/v1/runs",
        json={"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 1.0}, "priority": "interactive",
              # Texts of their own: the result cache must not answer them from another test's verdicts.
              "samples": [{"problem_id": "p0", "completion": completion + f"    # interactive {i}\n"}
                          for i in range(8)]},
    ).json()["id"]
    run = wait_for_run(client, run_id, timeout_s=180)
    stack.stop_workers()
    assert run["status"] == "completed" and run["progress"]["passed"] == 8, run
    rows = _samples(client, run_id)
    assert {row["attempts"] for row in rows} == {1} and not any(row["cached"] for row in rows), rows
    log = (tmp_path / "worker.log").read_text()
    assert f"run {run_id}: released" in log and "the batch ran past its time budget" in log, log[-3000:]


@pytest.mark.slow
def test_sigkilled_worker_loses_nothing(stack: Stack) -> None:
    client = stack.client(timeout=60)
    dataset_id = _dataset(client, "crash-me", problems=1)
    # Slow enough that the worker dies mid-batch.
    completion = "    import time\n    time.sleep(0.5)\n    return x * x\n"
    run_id = client.post(
        "/v1/runs",
        json={"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 1.0},
              # Distinct texts, so the result cache cannot answer them before the kill.
              "samples": [{"problem_id": "p0", "completion": completion + f"    # {i}\n"} for i in range(12)]},
    ).json()["id"]
    stack.stop_workers()
    engine = docker.from_env()

    def containers_of(*workers: subprocess.Popen, **filters: str) -> list:
        # Only this test's workers' containers: the Docker engine may be shared with other test runs.
        owners = tuple(f"-{worker.pid}-" for worker in workers)
        listed = engine.containers.list(all=True, sparse=True, filters={"label": f"{LABEL_ROLE}={ROLE_SANDBOX}", **filters})
        return [c for c in listed if any(owner in listed_labels(c).get(LABEL_OWNER, "") for owner in owners)]

    doomed = stack.start_worker(concurrency=1)
    wait_until(lambda: client.get(f"/v1/runs/{run_id}").json()["status"] != "queued", 60, "the first worker's claim")
    # Mid-batch: its sandbox runs the first programs, none finished yet (each takes 0.5 s).
    wait_until(lambda: containers_of(doomed, status="running"), 30, "the first worker's sandbox")
    doomed.send_signal(signal.SIGKILL)
    doomed.wait()
    assert client.get(f"/v1/runs/{run_id}").json()["progress"]["done"] == 0
    # Its container notices the hang-up and exits on its own; the next worker sweeps it on start.
    wait_until(lambda: not containers_of(doomed, status="running"), 90, "the dead worker's container to stop")

    successor = stack.start_worker(concurrency=1)
    run = wait_for_run(client, run_id, timeout_s=180)
    stack.stop_workers()
    assert run["status"] == "completed"
    rows = _samples(client, run_id)
    assert len(rows) == 12
    assert all(row["state"] == "done" and row["verdict"] == "passed" for row in rows), rows
    assert {row["attempts"] for row in rows} == {2}
    # The dead worker's container ended with it and was swept: nothing labelled passk is left.
    assert containers_of(doomed, successor) == []


def test_a_claim_never_waits_for_a_run_that_is_being_cancelled(stack: Stack) -> None:
    """A cancel locks the run, then the run's queued samples; a claim locks samples, then the run.
    If the claim waited for the run row, the two would deadlock."""
    stack.stop_workers()
    client = stack.client(timeout=60)
    dataset_id = _dataset(client, "lock-order", problems=1)
    run_id = client.post(
        "/v1/runs", json={"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 1.0}, "samples": [
            {"problem_id": "p0", "completion": "    return x * x\n"}] * 2},
    ).json()["id"]
    engine = make_sync_engine(stack.database_url)
    try:
        with engine.connect() as cancel:
            cancel.execute(text("SELECT 1 FROM runs WHERE id = :id FOR UPDATE"), {"id": run_id})
            with transaction(make_sync_sessionmaker(engine)) as session:
                session.execute(text("SET LOCAL lock_timeout = '5s'"))  # the old claim fails here
                claimed = queue.claim_batch(session, "lock-order-test", 10, 2.0, 3.0, 256, "sha256:test")
            assert len(claimed) == 2
            # The cancel goes on without waiting either: the claimed samples are no longer queued.
            cancel.execute(text("SET LOCAL lock_timeout = '5s'"))
            left = cancel.execute(
                text("UPDATE samples SET state = 'cancelled' WHERE run_id = :id AND state = 'queued'"), {"id": run_id}
            ).rowcount
            assert left == 0
            cancel.rollback()
    finally:
        engine.dispose()
    # The claim's owner is gone: cancelled, its leased samples end `cancelled` when their lease expires.
    assert client.delete(f"/v1/runs/{run_id}").status_code == 200
