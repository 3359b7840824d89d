"""POST /v1/judge through the real stack (API, worker, Docker): tests sent apart from the program, passk's verdict
and an unforgeable reward back, in Python, C++ (by SandboxFusion's name) and Ruby (a real MultiPL-E row)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import httpx
import pytest

from passk_dev.localstack import LocalStack
from sandbox.images import ensure_language_image

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parent.parent / "data" / "multipl-e"

ADD = {"id": "add", "prompt": "def add(a, b):\n", "entry_point": "add",
       "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n"}
REVERSE = {"format": "stdio", "id": "reverse", "cases": [{"input": "abc\n", "output": "cba\n"},
                                                         {"input": "xy\n", "output": "yx\n"}]}
CPP_REVERSE = ("#include <iostream>\n#include <string>\n#include <algorithm>\n"
               "int main() { std::string s; std::cin >> s; std::reverse(s.begin(), s.end()); std::cout << s << '\\n'; }\n")


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    # C++'s and Ruby's images first, not on a request's time (see tests/e2e/test_run_code_sandboxfusion.py).
    for name in ("cpp", "ruby"):
        ensure_language_image(docker.from_env(), name)
    with LocalStack(prefix="passk_judge") as running:
        running.start_worker(concurrency=2)
        yield running


@pytest.fixture(scope="module")
def client(stack: LocalStack) -> Iterator[httpx.Client]:
    with stack.client() as c:
        yield c


def judge(client: httpx.Client, **body: Any) -> dict:
    for _ in range(3):  # a busy machine's 504 is retried, as clients do
        response = client.post("/v1/judge", json=body)
        if response.status_code != 504:
            break
    assert response.status_code == 200, response.text
    return response.json()


def test_a_right_program_earns_the_reward_and_a_wrong_one_does_not(client: httpx.Client) -> None:
    right = judge(client, problem=ADD, completion="    return a + b\n")
    assert (right["passed"], right["reward"], right["verdict"], right["detail"]) == (True, 1.0, "passed", None)
    assert right["sample"]["problem_id"] == "add"
    wrong = judge(client, problem=ADD, completion="    return a - b\n")
    assert (wrong["passed"], wrong["reward"], wrong["verdict"]) == (False, 0.0, "failed")
    assert wrong["sample"]["failure"]  # the failing assertion, for the caller whose tests they are
    # One problem, stored once: a loop over many programs for it reuses its dataset.
    assert right["dataset_id"] == wrong["dataset_id"]
    run = client.get(f"/v1/runs/{wrong['run_id']}").json()
    assert (run["model"], run["priority"], run["progress"]["total"]) == ("judge", "interactive", 1)


@pytest.mark.parametrize("forgery", [
    "    import sys; sys.exit(0)\n",  # leave before the tests run
    "    import os; os._exit(0)\n",
    "    print('PASSED'); raise SystemExit(0)\n",  # a fake report
    "    import builtins; builtins.AssertionError = type('Never', (Exception,), {})\n    return 0\n",
])
def test_forged_passes_earn_nothing(client: httpx.Client, forgery: str) -> None:
    result = judge(client, problem=ADD, completion=forgery)
    assert (result["passed"], result["reward"]) == (False, 0.0), result


def test_stdio_cases_in_cpp_by_sandboxfusions_name(client: httpx.Client) -> None:
    right = judge(client, language="cpp", problem=REVERSE, completion=CPP_REVERSE)
    assert right["verdict"] == "passed", right
    wrong = judge(client, language="cpp", problem=REVERSE, completion="int main() { return 0; }\n")
    assert (wrong["verdict"], wrong["reward"]) == ("failed", 0.0)
    broken = judge(client, language="cpp", problem=REVERSE, completion="int main( {\n")
    assert broken["verdict"] == "compile_error"


def test_a_multipl_e_row_in_ruby(client: httpx.Client) -> None:
    row = next(json.loads(line) for line in (DATA / "rb.jsonl").read_text().splitlines()
               if json.loads(line)["name"] == "HumanEval_23_strlen")
    problem = {"format": "multipl-e", **{key: row[key] for key in ("name", "language", "prompt", "tests")}}
    right = judge(client, language="ruby", problem=problem, completion="  string.length\nend\n")
    assert right["verdict"] == "passed", right
    early_exit = judge(client, language="ruby", problem=problem, completion="  exit 0\nend\n")
    assert early_exit["reward"] == 0.0


def test_a_timeout_is_the_programs_verdict(client: httpx.Client) -> None:
    result = judge(client, problem=ADD, completion="    while True: pass\n", time_limit_s=1)
    assert (result["verdict"], result["reward"]) == ("timeout", 0.0)


def test_bad_requests_say_what_is_wrong(client: httpx.Client) -> None:
    unknown = client.post("/v1/judge", json={"language": "cobol", "problem": ADD, "completion": ""})
    assert unknown.status_code == 422
    assert unknown.json()["detail"][0]["loc"] == ["body", "language"]
    assert "cobol" in unknown.json()["detail"][0]["msg"]
    missing = client.post("/v1/judge", json={"problem": {"id": "x", "prompt": "def f():\n"}, "completion": ""})
    assert missing.status_code == 422
    assert missing.json()["detail"][0]["loc"][:2] == ["body", "problem"]
    wrong_language = client.post("/v1/judge", json={"language": "cpp", "problem": ADD, "completion": ""})
    assert wrong_language.status_code == 422
    assert wrong_language.json()["detail"][0]["loc"] == ["body", "problem", "format"]


def test_another_projects_key_does_not_see_the_judged_run(client: httpx.Client, stack: LocalStack) -> None:
    result = judge(client, problem=ADD, completion="    return a + b\n")
    with stack.client(api_key=stack.project_key("judge-other")) as other:
        assert other.get(f"/v1/runs/{result['run_id']}").status_code == 404
