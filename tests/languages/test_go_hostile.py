"""Go's reward hacks, through the real sandbox: each attack class of tests/languages/go_attacks.py around a wrong
answer, on several HumanEval-X problems; none may pass or become `sandbox_error`, and each must carry the flags of
what it did (ended early, wrote on the judge's channel out of turn, signalled or traced another process)."""

from __future__ import annotations

import docker
import pytest

from sandbox.executor import Outcome
from sandbox.languages.split import TestSource as Source
from tests.languages.conftest import humaneval_x_rows
from tests.languages.go_attacks import ATTACKS, run_jobs, wrapped, wrong_answer

# Problems of different signatures: bool, interface{}, [][2]int from [][]int, map[rune]int, [2]interface{}.
PROBLEMS = ("Go/0", "Go/12", "Go/87", "Go/111", "Go/112")


@pytest.fixture(scope="module")
def attacked(docker_client: docker.DockerClient) -> dict[str, Outcome]:
    rows = {row["task_id"]: row for row in humaneval_x_rows("go")}
    jobs = []
    for task in PROBLEMS:
        row = rows[task]
        for label, wrapper in ATTACKS.items():
            source = Source("humaneval-x", row["prompt"], row["test"], wrapped(wrapper, wrong_answer(row)), row["declaration"])
            jobs.append((f"{task} {label}", source))
    return run_jobs(docker_client, jobs)


@pytest.mark.slow
def test_no_attack_passes_and_each_is_on_the_record(attacked: dict[str, Outcome]) -> None:
    wrong = []
    for task in PROBLEMS:
        for label, wrapper in ATTACKS.items():
            outcome = attacked[f"{task} {label}"]
            if outcome.verdict in ("passed", "sandbox_error") or not wrapper.flags <= set(outcome.flags):
                wrong.append((task, label, outcome.verdict, outcome.flags, (outcome.detail or "")[:200]))
    assert not wrong, wrong
    # How some of them ended: as the same program would have ended in one process.
    for task in PROBLEMS:
        assert attacked[f"{task} runtime.Goexit"].verdict == "error"
        assert attacked[f"{task} SIGKILL to itself"].verdict == "crashed"
        assert attacked[f"{task} its channel closed"].verdict == "failed"
        assert "stopped answering" in (attacked[f"{task} its channel closed"].detail or "")
        assert attacked[f"{task} testing's flags from init()"].verdict == "failed"
