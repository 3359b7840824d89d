"""The result cache and the re-run of wall-clock timeouts, through the real API and workers."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Stack, wait_for_run


def _dataset(client, name: str) -> str:  # noqa: ANN001
    body = {"name": name, "problems": [{"id": "sq", "prompt": "def sq(x):\n", "test": "def check(c):\n    assert c(3) == 9\n", "entry_point": "sq"}]}
    return client.post("/v1/datasets", json=body).raise_for_status().json()["id"]


def _run(client, dataset_id: str, completions: list[str], **extra: object) -> list[dict]:  # noqa: ANN001
    body = {"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 0.0},
            "samples": [{"problem_id": "sq", "completion": c} for c in completions], **extra}
    run_id = client.post("/v1/runs", json=body).raise_for_status().json()["id"]
    run = wait_for_run(client, run_id)
    assert run["status"] == "completed", run
    return sorted(client.get(f"/v1/runs/{run_id}/samples").raise_for_status().json()["items"], key=lambda s: s["id"])


def _fresh_workers(stack: Stack, concurrency: int):  # noqa: ANN202
    stack.stop_workers()
    stack.start_worker(concurrency=concurrency)
    return stack.client()


@pytest.mark.slow
def test_identical_programs_run_once_and_reuse_the_verdict(stack: Stack) -> None:
    client = _fresh_workers(stack, concurrency=1)
    dataset_id = _dataset(client, "cache")
    right, wrong = "    return x * x\n", "    return x + x\n"
    first = _run(client, dataset_id, [right, right, wrong, right])
    assert [s["verdict"] for s in first] == ["passed", "passed", "failed", "passed"]
    assert [s["cached"] for s in first] == [False, True, False, True]
    again = _run(client, dataset_id, [right, wrong])
    assert [s["cached"] for s in again] == [True, True] and [s["verdict"] for s in again] == ["passed", "failed"]
    off = _run(client, dataset_id, [right, right], cache=False)
    assert [s["cached"] for s in off] == [False, False]
    stack.stop_workers()


@pytest.mark.slow
def test_wall_clock_timeout_is_rerun_alone_and_recorded(stack: Stack) -> None:
    client = _fresh_workers(stack, concurrency=2)
    dataset_id = _dataset(client, "rerun")
    sleeper = "    import time\n    time.sleep(30)\n    return x * x\n"
    looper = "    while True:\n        pass\n"
    samples = _run(client, dataset_id, [sleeper, looper], time_limit_s=1.0)
    by_completion = dict(zip([sleeper, looper], samples, strict=True))
    assert by_completion[sleeper]["verdict"] == "timeout" and by_completion[sleeper]["rerun"] is True
    # A CPU-time timeout measures the program, not the machine: final at once, not re-run.
    assert by_completion[looper]["verdict"] == "timeout" and by_completion[looper]["rerun"] is False
    stack.stop_workers()
