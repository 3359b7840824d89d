"""C++ end to end: HumanEval-X's 164 canonical solutions, broken variants, MultiPL-E rows and a stdio problem,
through the API over HTTP, a worker process, and the C++ sandbox image (built on demand)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from service.formats.loader import to_problem
from tests.e2e.conftest import Stack
from tests.languages.conftest import SHARED, humaneval_x_rows
from tests.languages import endtoend

# Broken completions of CPP/0 (`bool has_close_elements(vector<float> numbers, float threshold){`), each with
# the verdict passk must give it.
WRONG = "    return false;\n}\n"
VARIANTS = {
    **endtoend.broken_variants(
        wrong=WRONG,
        compile_error="    return undefined_name;\n}\n",
        runtime="    throw 42;\n}\n",
        loop="    volatile long spin = 0;\n    while (true) spin++;\n}\n",
        memory="    vector<char*> hog;\n    while (true) { char* p = new char[1 << 24]; p[0] = 1; hog.push_back(p); }\n}\n",
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
    # A global constructor that does nothing does not stop the tests.
    "global constructor that does nothing": (
        endtoend.AfterCanonical("struct PasskQuiet { PasskQuiet() {} } q;\n"), "passed"
    ),
}

M_COMPLETIONS = {
    "HumanEval_23_strlen": {
        "strlen": ("    return string.size();", "passed"),
        "strlen wrong": ("    return 0;", "failed"),
    },
    "HumanEval_2_truncate_number": {
        "truncate_number": ("    return number - (long)number;", "passed"),
        "truncate_number compile error": ("    return number", "compile_error"),
    },
    "HumanEval_0_has_close_elements": {
        "has_close_elements": (
            "    for (size_t i = 0; i < numbers.size(); i++)\n        for (size_t j = i + 1; j < numbers.size(); j++)\n"
            "            if (std::abs(numbers[i] - numbers[j]) < threshold) return true;\n    return false;", "passed"),
        "has_close_elements wrong": ("    return true;", "failed"),
    },
}

STDIO_SOLUTION = "#include <iostream>\nint main() { long a, b; while (std::cin >> a >> b) std::cout << a + b << '\\n'; }\n"


@pytest.mark.slow
def test_cpp_end_to_end(stack: Stack) -> None:
    client = stack.client(timeout=300)
    # A format that only runs Python, in a C++ dataset: refused with what is wrong.
    refused = client.post("/v1/datasets", json={"name": "bad", "language": "cpp", "problems": [
        {"task_id": "X/0", "prompt": "def f():\n", "test": "def check(c):\n    pass\n", "entry_point": "f"}]})
    assert refused.status_code == 422 and "does not run 'cpp'" in refused.text, refused.text
    first = to_problem(humaneval_x_rows("cpp")[0])
    unknown = client.post("/v1/datasets", json={"name": "bad", "language": "cobol", "problems": [first]})
    assert unknown.status_code == 422 and "unknown language" in unknown.text, unknown.text

    humaneval_x = endtoend.humaneval_x_case("cpp", "cpp", VARIANTS, time_limit_s=3.0)
    results = endtoend.check_language(stack, "cpp", {
        "humaneval-x-cpp": humaneval_x,
        "multipl-e-cpp": endtoend.multipl_e_case("cpp", M_COMPLETIONS),
        "stdio-cpp": endtoend.stdio_case("cpp", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("a + b", "a - b"),
                                compile_error="int main() { return }\n"),
    }, timeout_s=1800)
    assert "compile" in results["compile error"]["detail"] and "undefined_name" in results["compile error"]["detail"]
    assert "pass token" in results["early exit(0)"]["detail"]
    assert sum(r["verdict"] == "compile_error" for r in endtoend.case_results(results, humaneval_x)) == 1
    assert "case 1 of 2" in results["stdio wrong"]["detail"], results["stdio wrong"]

    # The toolchain is reported: per language, and on the dataset.
    cpp = endtoend.assert_toolchain(stack, "cpp", "humaneval-x-cpp", "g++")
    assert cpp["compile"][0] == "g++" and "humaneval-x" in cpp["formats"]
    env = {**os.environ, "PASSK_URL": stack.api_url, "PASSK_API_KEY": stack.api_key}
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


# HumanEval-X's most common include block (CPP/3, CPP/5, ...): its header is precompiled in the image.
PREBUILT_BLOCK = "#include<stdio.h>\n#include<vector>\nusing namespace std;\n"
PREBUILT_PROGRAM = PREBUILT_BLOCK + "int twice(int x) { vector<int> v{x, x}; return v[0] + v[1]; }\n" \
    "#undef NDEBUG\n#include<assert.h>\nint main() { assert(twice(2) == 4); }\n"


def test_prebuilt_header_from_the_image(docker_client) -> None:  # type: ignore[no-untyped-def]
    """A HumanEval-X include block's header comes precompiled in the image (same key as a container's build, so
    same meaning); a job with other compile limits builds its own; no program can write the image's headers."""
    from sandbox.executor import Job, Sandbox, SandboxSettings
    from sandbox.images import ensure_language_image, toolchain_version
    from sandbox.languages import get
    from sandbox.languages.jobs import tests_spec
    from sandbox.runtime.native import PREBUILT_ROOT, pch_split

    cpp = get("cpp")
    image = ensure_language_image(docker_client, cpp)
    version = toolchain_version(docker_client, image, cpp)
    memory = 256 * 1024 * 1024
    spec = tests_spec(cpp, PREBUILT_PROGRAM, version, memory)
    stored = f"{PREBUILT_ROOT}/{pch_split(spec)[0]}/passk_pch.h.gch"
    # The candidate tries to replace the image's header, to add one beside it, and to change its mode.
    writer = PREBUILT_BLOCK + "int passk_writer;\n#include<sys/stat.h>\n#include<assert.h>\nint main() {\n" \
        f"    assert(fopen(\"{stored}\", \"r\") != NULL);\n" \
        f"    assert(fopen(\"{stored}\", \"w\") == NULL && fopen(\"{stored}\", \"a\") == NULL);\n" \
        f"    assert(fopen(\"{PREBUILT_ROOT}/pch-new\", \"w\") == NULL && chmod(\"{stored}\", 0777) != 0);\n}}\n"
    jobs = {
        "passes": spec,
        "fails": tests_spec(cpp, PREBUILT_PROGRAM.replace("== 4", "== 5"), version, memory),
        "other limits": tests_spec(cpp, PREBUILT_PROGRAM, version, memory, compile_time_limit_s=19.0),
        "writer": tests_spec(cpp, writer, version, memory),
    }
    sandbox = Sandbox(docker_client, SandboxSettings(image="unused-for-cpp", images=lambda _: image, owner="passk-tests"))
    try:
        got = dict(zip(jobs, sandbox.run([Job(name, "", 2.0, memory, language="cpp", native=native)
                                          for name, native in jobs.items()]), strict=True))
    finally:
        sandbox.close()
    assert got["passes"].verdict == "passed" and got["passes"].pch == "prebuilt", got["passes"]
    assert got["fails"].verdict == "failed" and got["fails"].pch == "prebuilt", got["fails"]
    assert "main.cpp:10:" in (got["fails"].detail or ""), got["fails"]  # 3 prelude lines + line 7
    assert got["other limits"].verdict == "passed" and got["other limits"].pch == "built", got["other limits"]
    assert got["writer"].verdict == "passed" and got["writer"].pch == "prebuilt", got["writer"]
    stats = sandbox.settings.stats
    assert (stats["pch_prebuilt"], stats["pch_builds"], stats["pch_rejected"]) == (3, 1, 0), stats
