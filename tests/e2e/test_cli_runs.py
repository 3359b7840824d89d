"""The CLI's run commands as a user meets them, through the real service: a run named and tagged at submission,
pass@1 in `runs list`, progress in a log while a run waits for a worker, `passk languages` at 100 columns, and a
sample the server refuses named by its line in the file."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from service.core.migrate import REPO_ROOT
from tests.e2e.conftest import Stack, wait_until
from tests.e2e.test_cli import ok, passk, run_id_of
from tests.e2e.test_dashboard import create_dataset, humaneval_slice

PROBLEMS = 6


def _samples_file(path: Path, problems: dict[str, dict], wrong_every: int = 2) -> Path:
    """Two samples per problem: the canonical solution, then every `wrong_every`-th problem a wrong one."""
    rows = []
    for position, (task_id, problem) in enumerate(problems.items()):
        rows.append({"task_id": task_id, "completion": problem["canonical_solution"]})
        wrong = position % wrong_every == 0
        rows.append({"task_id": task_id, "completion": "    return None\n" if wrong else problem["canonical_solution"]})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_submit_names_and_tags_and_runs_list_shows_pass_at_1(stack: Stack, tmp_path: Path) -> None:
    problems = humaneval_slice(PROBLEMS)
    with stack.client() as client:
        dataset = create_dataset(client, "cli-runs", problems)
    samples = _samples_file(tmp_path / "samples.jsonl", problems)
    stack.start_worker(concurrency=2)
    try:
        result = ok(passk(stack, "submit", str(samples), "--dataset", dataset["name"], "--model", "cli-model",
                          "--temperature", "0.2", "--name", "nightly 7b", "--tag", "nightly", "--tag", "7b",
                          "--wait", "-k", "1,2"))
    finally:
        stack.stop_workers()
    run_id = run_id_of(result)
    with stack.client() as client:
        run = client.get(f"/v1/runs/{run_id}").json()
        metrics = client.get(f"/v1/runs/{run_id}/metrics", params={"k": 1}).json()
    assert run["display_name"] == "nightly 7b" and run["tags"] == ["nightly", "7b"], run
    pass_at_1 = metrics["metrics"][0]["pass_at_k"]
    # pass@1 with its interval, as `passk metrics` prints it, in the row of the run; its label under the table.
    listed = ok(passk(stack, "runs", "list", "--tag", "nightly"))
    header, row = listed.stdout.splitlines()[:2]
    assert header.split()[:3] == ["id", "name", "pass@1"], header
    bracket = f"{pass_at_1['estimate']:.2%} [{pass_at_1['ci_low']:.2%}, {pass_at_1['ci_high']:.2%}]"
    assert row.startswith(run_id[:8]) and "nightly 7b" in row and bracket in row, (row, bracket)
    assert f"pass@1 intervals: {pass_at_1['label']}" in listed.stderr, listed.stderr


def test_wait_prints_progress_in_a_log_while_queued(stack: Stack, tmp_path: Path) -> None:
    """No worker: the run stays queued, and `submit --wait` writing to a pipe still says so every few seconds."""
    problems = humaneval_slice(2)
    with stack.client() as client:
        dataset = create_dataset(client, "cli-queued", problems)
    samples = _samples_file(tmp_path / "samples.jsonl", problems)
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("PASSK_")}
    env |= {"PASSK_URL": stack.api_url, "PASSK_API_KEY": stack.api_key, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "submit", str(samples), "--dataset", dataset["name"], "--model", "m",
         "--temperature", "1", "--wait"],
        env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(process.stderr.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        progress = lambda: [line for line in lines if line.startswith("[") and line.rstrip().endswith("queued")]  # noqa: E731
        wait_until(lambda: len(progress()) >= 3, 120, "three progress lines while the run is queued")
        assert all("0/4 (0.0%)" in line for line in progress()), lines
    finally:
        process.terminate()
        process.wait(timeout=30)
    run_id = run_id_of(subprocess.CompletedProcess([], 0, "", "".join(lines)))
    with stack.client() as client:
        client.post(f"/v1/runs/{run_id}/cancel")


def test_languages_fit_100_columns(stack: Stack) -> None:
    with stack.client() as client:
        entries = client.get("/v1/languages").json()
    table = ok(passk(stack, "languages")).stdout
    assert all(len(line) <= 100 for line in table.splitlines()), table
    header, *rows = table.splitlines()
    assert header.split()[:2] == ["language", "toolchain"], header
    names = [entry["name"] for entry in entries]
    assert [row.split()[0] for row in rows[:len(names)]] == names, table
    with_commands = ok(passk(stack, "languages", "--commands")).stdout
    assert all(len(line) <= 100 for line in with_commands.splitlines()), with_commands
    assert "  run      python3 main.py" in with_commands, with_commands
    assert json.loads(ok(passk(stack, "languages", "--json")).stdout) == entries


def test_python_toolchain_is_known_once_a_worker_runs(stack: Stack) -> None:
    """Python runs in the worker's own image: a worker reports its version at start, so no "not used yet"."""
    worker = stack.start_worker(concurrency=1)
    try:
        def python_version() -> str | None:
            entries = httpx.get(f"{stack.api_url}/v1/languages",
                                headers={"Authorization": f"Bearer {stack.api_key}"}).json()
            return next(e["toolchain"] for e in entries if e["name"] == "python")

        version = wait_until(python_version, 120, "the worker to report Python's toolchain", poll_s=0.5)
    finally:
        stack.stop_workers()
    assert worker is not None and version.startswith("Python 3."), version
    row = next(line for line in ok(passk(stack, "languages")).stdout.splitlines() if line.startswith("python "))
    assert version in row and "not used" not in row, row


def test_a_refused_sample_is_named_by_its_line(stack: Stack, tmp_path: Path) -> None:
    """The API counts a request's samples from 0; the CLI names the file's line, counted from 1 as editors do."""
    problems = humaneval_slice(2)
    with stack.client() as client:
        dataset = create_dataset(client, "cli-lines", problems)
    first, second = list(problems)
    rows = [{"task_id": first, "completion": "    return 1\n"}, None,
            {"task_id": second, "completion": "    return 2\n"},
            {"task_id": second, "completion": "#" * 300_000 + "\n"}]  # over the 256 KiB program limit
    path = tmp_path / "samples.jsonl"
    path.write_text("".join((json.dumps(row) if row else "") + "\n" for row in rows))
    result = passk(stack, "submit", str(path), "--dataset", dataset["name"], "--model", "m", "--temperature", "1")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"{path}:4: " in result.stderr, result.stderr
    assert "samples[2] (sample 3 of 3, counting from 1)" in result.stderr, result.stderr
