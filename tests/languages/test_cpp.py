"""C++ end to end: HumanEval-X's 164 canonical solutions, broken variants, MultiPL-E rows and a stdio problem,
through the API over HTTP, a worker process, and the C++ sandbox image (built on demand)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from service.formats.loader import to_problem
from tests.e2e.conftest import Stack, wait_for_run
from tests.languages.conftest import DATA, SHARED, exceptions, humaneval_x_rows, multipl_e_rows

# Broken completions of CPP/0 (`bool has_close_elements(vector<float> numbers, float threshold){`), each with
# the verdict passk must give it.
WRONG = "    return false;\n}\n"
VARIANTS = {
    "wrong answer": (WRONG, "failed"),
    "compile error": ("    return undefined_name;\n}\n", "compile_error"),
    "runtime exception": ("    throw 42;\n}\n", "error"),
    "infinite loop": ("    volatile long spin = 0;\n    while (true) spin++;\n}\n", "timeout"),
    "memory hog": (
        "    vector<char*> hog;\n    while (true) { char* p = new char[1 << 24]; p[0] = 1; hog.push_back(p); }\n}\n",
        "memory",
    ),
    "segfault": ("    int* volatile p = nullptr;\n    *p = 1;\n    return false;\n}\n", "crashed"),
    "early exit(0)": ("    exit(0);\n}\n", "failed"),
    # The candidate's code that runs before the tests (a global constructor) ends the program with status 0.
    "global constructor exit(0)": (WRONG + "struct PasskEarly { PasskEarly() { exit(0); } } passk_early;\n", "failed"),
    # ... or registers an atexit handler that turns any exit into status 0 before the tests fail.
    "atexit _Exit(0)": (
        WRONG + "struct PasskLate { PasskLate() { atexit([] { std::_Exit(0); }); } } passk_late;\n", "failed"
    ),
    "atexit before exit(0)": (
        "    atexit([] { std::_Exit(0); });\n    exit(3);\n}\n", "failed"
    ),
}

STDIO_SOLUTION = "#include <iostream>\nint main() { long a, b; while (std::cin >> a >> b) std::cout << a + b << '\\n'; }\n"
STDIO_CASES = [{"input": "1 2\n", "output": "3\n"}, {"input": "40 2\n5 5\n", "output": "42\n10\n"}]


@pytest.mark.slow
def test_cpp_end_to_end(stack: Stack) -> None:
    client = stack.client(timeout=300)
    rows = humaneval_x_rows("cpp")
    assert len(rows) == 164
    created = client.post("/v1/datasets", json={
        "name": "humaneval-x-cpp", "language": "cpp", "time_limit_s": 3.0, "memory_mb": 256,
        "problems": [to_problem(row) for row in rows],
    })
    assert created.status_code == 201, created.text
    assert created.json()["language"] == "cpp"
    # A format that only runs Python, in a C++ dataset: refused with what is wrong.
    refused = client.post("/v1/datasets", json={"name": "bad", "language": "cpp", "problems": [
        {"task_id": "X/0", "prompt": "def f():\n", "test": "def check(c):\n    pass\n", "entry_point": "f"}]})
    assert refused.status_code == 422 and "does not run 'cpp'" in refused.text, refused.text
    unknown = client.post("/v1/datasets", json={"name": "bad", "language": "cobol", "problems": [to_problem(rows[0])]})
    assert unknown.status_code == 422 and "unknown language" in unknown.text, unknown.text

    samples = [{"problem_id": row["task_id"], "completion": row["canonical_solution"]} for row in rows]
    canonical_0 = rows[0]["canonical_solution"]
    expected = {}
    for label, (completion, verdict) in VARIANTS.items():
        samples.append({"problem_id": "CPP/0", "completion": completion})
        expected[len(samples) - 1] = (label, verdict)
    samples.append({"problem_id": "CPP/0", "completion": canonical_0 + "struct PasskQuiet { PasskQuiet() {} } q;\n"})
    expected[len(samples) - 1] = ("global constructor that does nothing", "passed")

    # MultiPL-E rows, imported with the CLI as published.
    env = {**os.environ, "PASSK_URL": stack.api_url, "PASSK_API_KEY": stack.api_key}
    imported = subprocess.run(
        [sys.executable, "-m", "service.cli", "datasets", "import", "multipl-e", str(DATA / "multipl-e" / "cpp.jsonl"),
         "--name", "multipl-e-cpp"], env=env, capture_output=True, text=True, timeout=120,
    )
    assert imported.returncode == 0, imported.stderr
    assert "3 multipl-e" in imported.stdout and "language cpp" in imported.stdout, imported.stdout
    stdio = client.post("/v1/datasets", json={"name": "stdio-cpp", "language": "cpp", "problems": [
        {"format": "stdio", "id": "sum", "cases": STDIO_CASES}]})
    assert stdio.status_code == 201, stdio.text

    stack.start_worker(concurrency=2)
    run_id = client.post("/v1/runs", json={
        "dataset_id": created.json()["id"], "model": "canonical+broken", "sampling": {"temperature": 0.0},
        "samples": samples,
    }).raise_for_status().json()["id"]
    datasets = {d["name"]: d for d in client.get("/v1/datasets").json()["items"]}
    multipl = datasets["multipl-e-cpp"]
    m_rows = multipl_e_rows("cpp")
    m_completions = {
        "HumanEval_23_strlen": ["    return string.size();", "    return 0;"],
        "HumanEval_2_truncate_number": ["    return number - (long)number;", "    return number"],
        "HumanEval_0_has_close_elements": [
            "    for (size_t i = 0; i < numbers.size(); i++)\n        for (size_t j = i + 1; j < numbers.size(); j++)\n"
            "            if (std::abs(numbers[i] - numbers[j]) < threshold) return true;\n    return false;",
            "    return true;",
        ],
    }
    m_samples = [{"problem_id": row["name"], "completion": c} for row in m_rows for c in m_completions[row["name"]]]
    m_run = client.post("/v1/runs", json={
        "dataset_id": multipl["id"], "model": "m", "sampling": {"temperature": 0.0}, "samples": m_samples,
    }).raise_for_status().json()["id"]
    s_run = client.post("/v1/runs", json={
        "dataset_id": stdio.json()["id"], "model": "s", "sampling": {"temperature": 0.0}, "samples": [
            {"problem_id": "sum", "completion": STDIO_SOLUTION},
            {"problem_id": "sum", "completion": STDIO_SOLUTION.replace("a + b", "a - b")},
            {"problem_id": "sum", "completion": "int main() { return }\n"},
        ],
    }).raise_for_status().json()["id"]

    run = wait_for_run(client, run_id, timeout_s=1800)
    m = wait_for_run(client, m_run, timeout_s=600)
    s = wait_for_run(client, s_run, timeout_s=600)
    stack.stop_workers()
    assert run["status"] == "completed", run
    assert run["progress"]["by_verdict"].get("sandbox_error", 0) == 0, run["progress"]

    with stack.passk_client() as passk:
        got = list(passk.iter_samples(run_id))
        m_got = list(passk.iter_samples(m_run))
        s_got = list(passk.iter_samples(s_run))
    allowed = exceptions("cpp")
    wrong = []
    for index, (sample, mine) in enumerate(zip(samples, got, strict=True)):
        if index < 164:
            if (mine["verdict"] == "passed") == (sample["problem_id"] in allowed):
                wrong.append((sample["problem_id"], mine["verdict"], (mine["detail"] or "")[:300]))
        else:
            label, verdict = expected[index]
            if mine["verdict"] != verdict:
                wrong.append((label, verdict, mine["verdict"], (mine["detail"] or "")[:300]))
    assert not wrong, wrong
    by_variant = {expected[i][0]: got[i] for i in expected}
    assert "compile" in by_variant["compile error"]["detail"] and "undefined_name" in by_variant["compile error"]["detail"]
    assert "pass token" in by_variant["early exit(0)"]["detail"]
    assert run["progress"]["by_verdict"]["compile_error"] == 1

    assert [x["verdict"] for x in m_got] == ["passed", "failed", "passed", "compile_error", "passed", "failed"], m_got
    assert m["status"] == s["status"] == "completed"
    assert [x["verdict"] for x in s_got] == ["passed", "failed", "compile_error"], s_got
    assert "case 1 of 2" in s_got[1]["detail"], s_got[1]

    # The toolchain is reported: per language, and on the dataset.
    languages = {entry["name"]: entry for entry in client.get("/v1/languages").raise_for_status().json()}
    assert languages["cpp"]["toolchain"].startswith("g++"), languages["cpp"]
    assert languages["cpp"]["compile"][0] == "g++" and "humaneval-x" in languages["cpp"]["formats"]
    detail = client.get(f"/v1/datasets/{created.json()['id']}").raise_for_status().json()
    assert detail["language"] == "cpp" and detail["toolchain"] == languages["cpp"]["toolchain"]
    listed = subprocess.run([sys.executable, "-m", "service.cli", "languages"], env=env, capture_output=True, text=True,
                            timeout=120)
    assert listed.returncode == 0 and "cpp" in listed.stdout and "g++ (Debian" in listed.stdout, listed


def test_shared_data_is_there() -> None:
    assert (SHARED / "humaneval_cpp.jsonl.gz").exists()


def test_compile_cache_and_compile_limits(docker_client) -> None:  # type: ignore[no-untyped-def]
    """Through the executor: an identical program compiles once per container; the compile has its own CPU limit."""
    from sandbox.executor import Job, Sandbox, SandboxSettings
    from sandbox.images import ensure_language_image, toolchain_version
    from sandbox.languages import get
    from sandbox.languages.jobs import tests_spec

    cpp = get("cpp")
    image = ensure_language_image(docker_client, cpp)
    version = toolchain_version(docker_client, image, cpp)
    memory = 256 * 1024 * 1024
    program = "#include <cassert>\nint twice(int x) { return 2 * x; }\nint main() { assert(twice(2) == 4); }\n"
    sandbox = Sandbox(docker_client, SandboxSettings(image="unused-for-cpp", images=lambda _: image, owner="passk-tests"))
    try:
        first, second, starved = sandbox.run([
            Job("a", "", 2.0, memory, language="cpp", native=tests_spec(cpp, program, version, memory)),
            Job("b", "", 2.0, memory, language="cpp", native=tests_spec(cpp, program, version, memory)),
            Job("c", "", 2.0, memory, language="cpp",
                native=tests_spec(cpp, "#include <bits/stdc++.h>\n" + program, version, memory, compile_time_limit_s=0.01)),
        ])
    finally:
        sandbox.close()
    assert (first.verdict, second.verdict) == ("passed", "passed"), (first, second)
    assert first.compile_cached is False and second.compile_cached is True
    assert sandbox.settings.stats["compile_hits"] == 1
    # 0.01 s of CPU (plus the 0.1 s slack) is not enough for g++ to parse every standard header: a compile error
    # that says why (never the program's time limit).
    assert starved.verdict == "compile_error" and "CPU time limit" in (starved.detail or ""), starved


PCH_PROGRAM = ("/* twice */\n#include <vector>\n\n#include <cassert>\nusing namespace std;\n"
               "int twice(int x) { vector<int> v{x, x}; return v[0] + v[1]; }\nint main() { assert(twice(2) == 4); }\n")


def test_precompiled_header_is_shared_and_keeps_meaning(docker_client) -> None:  # type: ignore[no-untyped-def]
    """Programs with the same include block share one precompiled header (built once per container) and each
    get their own verdict; a program missing an include still fails to compile; line numbers are kept."""
    from sandbox.executor import Job, Sandbox, SandboxSettings
    from sandbox.images import ensure_language_image, toolchain_version
    from sandbox.languages import get
    from sandbox.languages.jobs import tests_spec

    cpp = get("cpp")
    image = ensure_language_image(docker_client, cpp)
    version = toolchain_version(docker_client, image, cpp)
    memory = 256 * 1024 * 1024
    wrong = PCH_PROGRAM.replace("== 4", "== 5")
    # The same block without <vector>: its own header, which does not declare vector.
    missing = PCH_PROGRAM.replace("#include <vector>\n", "\n")
    broken = PCH_PROGRAM.replace("v[1];", "v[1]")
    programs = {"passes": PCH_PROGRAM, "fails": wrong, "missing include": missing, "syntax": broken}
    sandbox = Sandbox(docker_client, SandboxSettings(image="unused-for-cpp", images=lambda _: image, owner="passk-tests"))
    try:
        got = dict(zip(programs, sandbox.run([
            Job(name, "", 2.0, memory, language="cpp", native=tests_spec(cpp, text, version, memory))
            for name, text in programs.items()
        ]), strict=True))
    finally:
        sandbox.close()
    assert got["passes"].verdict == "passed" and got["passes"].pch == "built", got["passes"]
    # Same include block: the header built for the first program serves the second, which still fails.
    assert got["fails"].verdict == "failed" and got["fails"].pch == "hit", got["fails"]
    assert "main.cpp:10:" in (got["fails"].detail or ""), got["fails"]  # 3 prelude lines + line 7
    assert got["missing include"].verdict == "compile_error", got["missing include"]
    assert "vector" in (got["missing include"].detail or "") and got["missing include"].pch == "built"
    assert got["syntax"].verdict == "compile_error" and got["syntax"].pch == "hit", got["syntax"]
    assert "main.cpp:9:" in (got["syntax"].detail or ""), got["syntax"]
    stats = sandbox.settings.stats
    assert (stats["pch_builds"], stats["pch_hits"], stats["pch_rejected"]) == (2, 2, 0), stats
