"""The result cache and the re-run of wall-clock timeouts, through the real API and workers."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.e2e.conftest import Stack, wait_for_run, wait_until


def _dataset(client, name: str) -> str:  # noqa: ANN001
    body = {"name": name, "problems": [{"id": "sq", "prompt": "def sq(x):\n", "test": "def check(c):\n    assert c(3) == 9\n", "entry_point": "sq"}]}
    return client.post("/v1/datasets", json=body).raise_for_status().json()["id"]


def _submit(client, dataset_id: str, completions: list[str], **extra: object) -> str:  # noqa: ANN001
    body = {"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 0.0},
            "samples": [{"problem_id": "sq", "completion": c} for c in completions], **extra}
    return client.post("/v1/runs", json=body).raise_for_status().json()["id"]


def _run(client, dataset_id: str, completions: list[str], **extra: object) -> list[dict]:  # noqa: ANN001
    run_id = _submit(client, dataset_id, completions, **extra)
    run = wait_for_run(client, run_id)
    assert run["status"] == "completed", run
    return sorted(client.get(f"/v1/runs/{run_id}/samples").raise_for_status().json()["items"], key=lambda s: s["id"])


@pytest.fixture
def workers(stack: Stack) -> Iterator[Callable[[int], httpx.Client]]:
    """Restarts the workers with the given concurrency and returns a client; stops them after the test, pass or fail."""

    def restart(concurrency: int) -> httpx.Client:
        stack.stop_workers()
        stack.start_worker(concurrency=concurrency)
        return stack.client()

    yield restart


@pytest.mark.slow
def test_identical_programs_run_once_and_reuse_the_verdict(workers: Callable[[int], httpx.Client]) -> None:
    client = workers(1)
    dataset_id = _dataset(client, "cache")
    right, wrong = "    return x * x\n", "    return x + x\n"
    first = _run(client, dataset_id, [right, right, wrong, right])
    assert [s["verdict"] for s in first] == ["passed", "passed", "failed", "passed"]
    assert [s["cached"] for s in first] == [False, True, False, True]
    again = _run(client, dataset_id, [right, wrong])
    assert [s["cached"] for s in again] == [True, True] and [s["verdict"] for s in again] == ["passed", "failed"]
    off = _run(client, dataset_id, [right, right], cache=False)
    assert [s["cached"] for s in off] == [False, False]


@pytest.mark.slow
def test_wall_clock_timeout_is_rerun_alone_and_recorded(workers: Callable[[int], httpx.Client]) -> None:
    client = workers(2)
    dataset_id = _dataset(client, "rerun")
    sleeper = "    import time\n    time.sleep(30)\n    return x * x\n"
    looper = "    while True:\n        pass\n"
    samples = _run(client, dataset_id, [sleeper, looper], time_limit_s=1.0)
    by_completion = dict(zip([sleeper, looper], samples, strict=True))
    assert by_completion[sleeper]["verdict"] == "timeout" and by_completion[sleeper]["rerun"] is True
    # A CPU-time timeout measures the program, not the machine: final at once, not re-run.
    assert by_completion[looper]["verdict"] == "timeout" and by_completion[looper]["rerun"] is False


@pytest.mark.slow
def test_a_rerun_does_not_hold_other_runs_samples(workers: Callable[[int], httpx.Client]) -> None:
    # One claiming thread, so that on a worker whose claiming thread re-ran wall timeouts itself (and alone),
    # the other run could only start once the sleeper's re-run was over.
    client = workers(1)
    dataset_id = _dataset(client, "lane")
    sleeper = "    import time\n    time.sleep(300)\n    return x * x\n"
    # A 15 s CPU limit: the sleeper is stopped by the wall-clock limit (31 s), then re-run in the lane.
    slow_id = _submit(client, dataset_id, [sleeper], time_limit_s=15.0)
    other_id = _submit(client, dataset_id, ["    return x * x\n", "    return x + x\n", "    return x ** 2\n"])

    other = wait_for_run(client, other_id)
    assert other["status"] == "completed" and other["progress"]["passed"] == 2
    # The other run finished while the sleeper's verdict still waited for its re-run.
    slow = client.get(f"/v1/runs/{slow_id}").raise_for_status().json()
    assert slow["status"] == "running" and slow["progress"]["done"] == 0, slow

    slow = wait_for_run(client, slow_id)
    assert slow["status"] == "completed"
    [sample] = client.get(f"/v1/runs/{slow_id}/samples").raise_for_status().json()["items"]
    assert sample["verdict"] == "timeout" and sample["rerun"] is True


@pytest.mark.slow
def test_a_stopping_worker_gives_back_the_reruns_it_has_not_started(
    stack: Stack, workers: Callable[[int], httpx.Client]
) -> None:
    client = workers(1)
    dataset_id = _dataset(client, "give-back")
    sleepers = [f"    import time\n    time.sleep(300)  # {i}\n    return x * x\n" for i in range(3)]
    run_id = _submit(client, dataset_id, sleepers, time_limit_s=3.0)

    def states() -> dict[str, int]:
        return client.get(f"/v1/runs/{run_id}").raise_for_status().json()["progress"]["by_state"]

    # All three timed out on the wall clock and went to the lane; one re-run is recorded, one is running, one waits.
    wait_until(lambda: states()["done"] >= 1, 120, "the first re-run's verdict")
    stack.stop_workers()
    # The running re-run was finished; the waiting one is back in the queue (no worker is left to reclaim it).
    # The stop may also come between the first re-run's record and the start of the second: then both wait and
    # both are given back.
    given_back = states()
    assert given_back["leased"] == 0 and given_back["cancelled"] == 0, given_back
    assert given_back["queued"] in (1, 2) and given_back["queued"] + given_back["done"] == 3, given_back

    client = workers(1)
    run = wait_for_run(client, run_id)
    assert run["status"] == "completed"
    samples = client.get(f"/v1/runs/{run_id}/samples").raise_for_status().json()["items"]
    assert [(s["verdict"], s["rerun"]) for s in samples] == [("timeout", True)] * 3
