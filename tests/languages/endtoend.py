"""One end-to-end check for a language, shared by the Java, JavaScript and TypeScript tests: datasets created
through the API (HumanEval-X rows, MultiPL-E rows imported with the CLI, stdio problems), one run per dataset
pushed through a worker and the language's sandbox image, and each sample's verdict compared with the expected."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service.formats.loader import to_problem
from tests.e2e.conftest import Stack, wait_for_run


# The expected verdict of a canonical solution listed as failing under the original harness too.
NOT_PASSED = "not passed"


@dataclass
class Case:
    """Samples of one dataset, each with the verdict passk must give it (None: the canonical rule)."""

    dataset: dict[str, Any] | None = None  # POST /v1/datasets body (None: imported from `multipl_e_file`)
    multipl_e_file: Path | None = None
    samples: list[tuple[str, str, str, str]] = field(default_factory=list)  # (label, problem_id, completion, verdict)


def check_language(stack: Stack, language: str, cases: dict[str, Case], timeout_s: float = 2400) -> dict[str, dict]:
    """Creates the datasets, starts one run per dataset, waits, and asserts every verdict; returns the
    results by label (for further checks of their details)."""
    client = stack.client(timeout=300)
    env = {**os.environ, "PASSK_URL": stack.api_url, "PASSK_API_KEY": stack.api_key}
    dataset_ids = {}
    for name, case in cases.items():
        if case.dataset is not None:
            created = client.post("/v1/datasets", json={"name": name, **case.dataset})
            assert created.status_code == 201, created.text
            assert created.json()["language"] == language
            dataset_ids[name] = created.json()["id"]
        else:
            imported = subprocess.run(
                [sys.executable, "-m", "service.cli", "datasets", "import", "multipl-e", str(case.multipl_e_file),
                 "--name", name], env=env, capture_output=True, text=True, timeout=120,
            )
            assert imported.returncode == 0, imported.stderr
            assert f"language {language}" in imported.stdout, imported.stdout
    datasets = {d["name"]: d for d in client.get("/v1/datasets").json()["items"]}
    for name in cases:
        dataset_ids.setdefault(name, datasets[name]["id"])
        assert datasets[name]["language"] == language

    stack.start_worker(concurrency=2)
    run_ids = {}
    for name, case in cases.items():
        run_ids[name] = client.post("/v1/runs", json={
            "dataset_id": dataset_ids[name], "model": f"{language}-{name}", "sampling": {"temperature": 0.0},
            "samples": [{"problem_id": problem, "completion": completion} for _, problem, completion, _ in case.samples],
        }).raise_for_status().json()["id"]
    runs = {name: wait_for_run(client, run_id, timeout_s=timeout_s) for name, run_id in run_ids.items()}
    stack.stop_workers()

    results: dict[str, dict] = {}
    wrong = []
    with stack.passk_client() as passk:
        for name, case in cases.items():
            assert runs[name]["status"] == "completed", runs[name]
            assert runs[name]["progress"]["by_verdict"].get("sandbox_error", 0) == 0, runs[name]["progress"]
            got = list(passk.iter_samples(run_ids[name]))
            for (label, problem, _, verdict), mine in zip(case.samples, got, strict=True):
                results[label] = mine
                if mine["verdict"] != verdict and not (verdict == NOT_PASSED and mine["verdict"] != "passed"):
                    wrong.append((name, label, problem, verdict, mine["verdict"], (mine["detail"] or "")[:400],
                                  (mine.get("stderr") or "")[:300]))
    assert not wrong, wrong
    return results


def humaneval_x_case(rows: list[dict], allowed: dict[str, str], variants: dict[str, tuple[str, str]],
                     language: str, time_limit_s: float, memory_mb: int = 256) -> Case:
    """The 164 canonical solutions (passed, or failed for the listed exceptions), then broken variants of the
    first problem."""
    samples = [
        (row["task_id"], row["task_id"], row["canonical_solution"],
         NOT_PASSED if row["task_id"] in allowed else "passed")
        for row in rows
    ]
    first = rows[0]["task_id"]
    samples += [(label, first, completion, verdict) for label, (completion, verdict) in variants.items()]
    return Case(
        dataset={"language": language, "time_limit_s": time_limit_s, "memory_mb": memory_mb,
                 "problems": [to_problem(row) for row in rows]},
        samples=samples,
    )
