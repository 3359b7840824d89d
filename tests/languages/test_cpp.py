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
        WRONG + "struct PasskLate { PasskLate() { atexit([] { _Exit(0); }); } } passk_late;\n", "failed"
    ),
    "atexit before exit(0)": (
        "    atexit([] { _Exit(0); });\n    exit(3);\n}\n", "failed"
    ),
    # A global constructor that does nothing does not stop the tests.
    "global constructor that does nothing": (
        endtoend.AfterCanonical("struct PasskQuiet { PasskQuiet() {} } q;\n"), "passed"
    ),
}

# MultiPL-E rows (tests/data/multipl-e/cpp.jsonl) with right answers in every type the rows use: unions (passk's
# tagged struct), std::any, tuples of optionals, maps, vectors of tuples, optional strings, float tuples.
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
    "HumanEval_103_rounded_avg": {
        "rounded_avg (union)": (
            "    if (n > m) return -1;\n    long avg = (long)std::nearbyint((n + m) / 2.0);\n    std::string bits;\n"
            "    do { bits = char('0' + avg % 2) + bits; avg /= 2; } while (avg > 0);\n    return \"0b\" + bits;", "passed"),
        # The string "-1" where the tests want the long -1: another member of the union, so not equal.
        "rounded_avg wrong member": (
            "    if (n > m) return std::string(\"-1\");\n    long avg = (long)std::nearbyint((n + m) / 2.0);\n"
            "    std::string bits;\n    do { bits = char('0' + avg % 2) + bits; avg /= 2; } while (avg > 0);\n"
            "    return \"0b\" + bits;", "failed"),
    },
    "HumanEval_125_split_words": {
        "split_words (union of vector and long)": (
            "    std::vector<std::string> out;\n    std::string word;\n"
            "    if (txt.find(' ') == std::string::npos) {\n"
            "        if (txt.find(',') == std::string::npos) {\n            long count = 0;\n"
            "            for (char c : txt) if (c >= 'a' && c <= 'z' && (c - 'a') % 2 == 1) count++;\n"
            "            return count;\n        }\n        for (char& c : txt) if (c == ',') c = ' ';\n    }\n"
            "    std::istringstream words(txt);\n    while (words >> word) out.push_back(word);\n    return out;", "passed"),
    },
    "HumanEval_22_filter_integers": {
        "filter_integers (std::any)": (
            "    std::vector<long> out;\n    for (auto& value : values) if (value.type() == typeid(int)) "
            "out.push_back(std::any_cast<int>(value));\n    return out;", "passed"),
        # The held types cross exactly: a solution that looks for long finds none of the tests' ints.
        "filter_integers looks for long": (
            "    std::vector<long> out;\n    for (auto& value : values) if (value.type() == typeid(long)) "
            "out.push_back(std::any_cast<long>(value));\n    return out;", "failed"),
    },
    "HumanEval_136_largest_smallest_integers": {
        "largest_smallest_integers (tuple of optionals)": (
            "    std::optional<long> negative, positive;\n    for (long x : lst) {\n"
            "        if (x < 0 && (!negative || x > *negative)) negative = x;\n"
            "        if (x > 0 && (!positive || x < *positive)) positive = x;\n    }\n"
            "    return std::make_tuple(negative, positive);", "passed"),
    },
    "HumanEval_111_histogram": {
        "histogram (map)": (
            "    std::map<std::string, long> count, out;\n    std::istringstream words(test);\n    std::string word;\n"
            "    long best = 0;\n    while (words >> word) best = std::max(best, ++count[word]);\n"
            "    for (auto& [key, value] : count) if (value == best) out[key] = value;\n    return out;", "passed"),
    },
    "HumanEval_87_get_row": {
        "get_row (vector of tuples)": (
            "    std::vector<std::tuple<long, long>> out;\n    for (long i = 0; i < (long)lst.size(); i++)\n"
            "        for (long j = (long)lst[i].size() - 1; j >= 0; j--)\n"
            "            if (lst[i][j] == x) out.push_back(std::make_tuple(i, j));\n    return out;", "passed"),
    },
    "HumanEval_12_longest": {
        "longest (optional string)": (
            "    if (strings.empty()) return std::nullopt;\n    std::string best = strings[0];\n"
            "    for (auto& s : strings) if (s.size() > best.size()) best = s;\n    return best;", "passed"),
    },
    "HumanEval_20_find_closest_elements": {
        "find_closest_elements (float tuple)": (
            "    std::tuple<float, float> best;\n    float distance = -1;\n"
            "    for (size_t i = 0; i < numbers.size(); i++)\n        for (size_t j = i + 1; j < numbers.size(); j++) {\n"
            "            float d = std::abs(numbers[i] - numbers[j]);\n            if (distance < 0 || d < distance) {\n"
            "                distance = d;\n"
            "                best = std::make_tuple(std::min(numbers[i], numbers[j]), std::max(numbers[i], numbers[j]));\n"
            "            }\n        }\n    return best;", "passed"),
    },
    "HumanEval_95_check_dict_case": {
        "check_dict_case (map parameter)": (
            "    if (dict.empty()) return false;\n    bool lower = true, upper = true;\n"
            "    for (auto& [key, value] : dict)\n        for (char c : key) {\n"
            "            if (!islower(c)) lower = false;\n            if (!isupper(c)) upper = false;\n        }\n"
            "    return lower || upper;", "passed"),
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
    assert "before its tests finished" in results["early exit(0)"]["detail"]
    # A failed assertion names the tests' own line (judge.cpp's `#line`), and keeps the `failed` verdict.
    assert "tests:5: int main(): Assertion" in results["wrong answer"]["detail"], results["wrong answer"]
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


def _sandbox(docker_client):  # type: ignore[no-untyped-def]
    from tests.sandbox.programs import image_sandbox
    from sandbox.images import ensure_language_image, toolchain_version
    from sandbox.languages import get

    cpp = get("cpp")
    image = ensure_language_image(docker_client, cpp)
    version = toolchain_version(docker_client, image, cpp)
    return cpp, version, image_sandbox(docker_client, image)


def _job(cpp, version, name, prompt, completion, tests, **limits):  # type: ignore[no-untyped-def]
    from sandbox.executor import Job
    from sandbox.languages.jobs import tests_spec
    from sandbox.languages.split import TestSource

    memory = 256 * 1024 * 1024
    source = TestSource("humaneval-x", prompt, tests, completion)
    return Job(name, "", 2.0, memory, language="cpp", native=tests_spec(cpp, source, version, memory, **limits))


TWICE = "int twice(int x) {\n"
TWICE_TESTS = "#undef NDEBUG\n#include<assert.h>\nint main() { assert(twice(2) == 4); }\n"


def test_compile_cache_and_compile_limits(docker_client) -> None:  # type: ignore[no-untyped-def]
    """Through the executor: a program compiles once per container (the same sample twice: the candidate's
    compile is a cache hit, and so are the judge's and the server's, which take no CPU the second time); a
    compile has its own CPU limit, the judge's build included."""
    cpp, version, sandbox = _sandbox(docker_client)
    prompt = "#include <cassert>\n" + TWICE
    right = "    return 2 * x;\n}\n"
    try:
        first, second, starved = sandbox.run([
            _job(cpp, version, "a", prompt, right, TWICE_TESTS),
            _job(cpp, version, "b", prompt, right, TWICE_TESTS),
            _job(cpp, version, "c", "#include <bits/stdc++.h>\n" + TWICE, right, TWICE_TESTS, compile_time_limit_s=0.01),
        ])
    finally:
        sandbox.close()
    assert (first.verdict.value, second.verdict.value) == ("passed", "passed"), (first, second)
    assert first.compile_cached is False and second.compile_cached is True
    assert sandbox.settings.stats["compile_hits"] == 1, sandbox.settings.stats
    assert second.cpu_ms < first.cpu_ms / 2, (first.cpu_ms, second.cpu_ms)
    # 0.01 s of CPU (plus the 0.1 s slack) is not enough for g++ to parse every standard header: a compile error
    # that says why (never the program's time limit, never passk's fault).
    assert starved.verdict.value == "compile_error" and "CPU time limit" in (starved.detail or ""), starved


PCH_PROMPT = "/* twice */\n#include <vector>\n\n#include <cassert>\nusing namespace std;\n" + TWICE
PCH_RIGHT = "    vector<int> v{x, x};\n    return v[0] + v[1];\n}\n"


def test_precompiled_header_is_shared_and_keeps_meaning(docker_client) -> None:  # type: ignore[no-untyped-def]
    """Candidates with the same include block share one precompiled header (built once per container, as the
    candidate's uid; the judge's builds never read it) and each get their own verdict; a program missing an
    include still fails to compile; line numbers are kept, the candidate's and the tests'."""
    cpp, version, sandbox = _sandbox(docker_client)
    jobs = {
        "passes": (PCH_PROMPT, PCH_RIGHT, TWICE_TESTS),
        "fails": (PCH_PROMPT, PCH_RIGHT + "// another sample\n", TWICE_TESTS.replace("== 4", "== 5")),
        # The same block without <vector>: its own header, which does not declare vector.
        "missing include": (PCH_PROMPT.replace("#include <vector>\n", "\n"), PCH_RIGHT, TWICE_TESTS),
        "syntax": (PCH_PROMPT, PCH_RIGHT.replace("v[1];", "v[1]"), TWICE_TESTS),
    }
    try:
        got = dict(zip(jobs, sandbox.run([_job(cpp, version, name, *texts) for name, texts in jobs.items()]),
                       strict=True))
    finally:
        sandbox.close()
    assert got["passes"].verdict.value == "passed" and got["passes"].pch == "built", got["passes"]
    # Same include block: the header built for the first candidate serves the second, which still fails, at the
    # tests' own line.
    assert got["fails"].verdict.value == "failed" and got["fails"].pch == "hit", got["fails"]
    assert "tests:3: int main(): Assertion `twice(2) == 5' failed" in (got["fails"].detail or ""), got["fails"]
    assert got["missing include"].verdict.value == "compile_error", got["missing include"]
    assert "vector" in (got["missing include"].detail or "") and got["missing include"].pch == "built"
    assert got["syntax"].verdict.value == "compile_error" and got["syntax"].pch == "hit", got["syntax"]
    assert "main.cpp:8:" in (got["syntax"].detail or ""), got["syntax"]  # the `}` after the missing `;`
    stats = sandbox.settings.stats
    assert (stats["pch_builds"], stats["pch_hits"], stats["pch_rejected"]) == (2, 2, 0), stats


# HumanEval-X's most common include block (CPP/3, CPP/5, ...): its header is precompiled in the image.
PREBUILT_BLOCK = "#include<stdio.h>\n#include<vector>\nusing namespace std;\n"


def test_prebuilt_header_from_the_image(docker_client) -> None:  # type: ignore[no-untyped-def]
    """A HumanEval-X include block's header comes precompiled in the image (same key as a container's build, so
    same meaning) and serves the judge's, the server's and the candidate's compiles; a job with other compile
    limits builds its own (the judge's and the server's compiles then go without); no program can write the
    image's headers."""
    from sandbox.runtime.builds import PREBUILT_ROOT, pch_split

    cpp, version, sandbox = _sandbox(docker_client)
    prompt = PREBUILT_BLOCK + TWICE
    right = "    vector<int> v{x, x};\n    return v[0] + v[1];\n}\n"
    passes = _job(cpp, version, "passes", prompt, right, TWICE_TESTS)
    stored = f"{PREBUILT_ROOT}/{pch_split(passes.native, passes.native.candidate)[0]}/passk_pch.h.gch"
    # The candidate tries to replace the image's header, to add one beside it, and to change its mode (before its
    # answer, from a global constructor: an assertion that fails there ends the candidate, so the sample fails).
    writer = right + "#include<sys/stat.h>\n#undef NDEBUG\n#include<assert.h>\nstruct Writer { Writer() {\n" \
        f"    assert(fopen(\"{stored}\", \"r\") != NULL);\n" \
        f"    assert(fopen(\"{stored}\", \"w\") == NULL && fopen(\"{stored}\", \"a\") == NULL);\n" \
        f"    assert(fopen(\"{PREBUILT_ROOT}/pch-new\", \"w\") == NULL && chmod(\"{stored}\", 0777) != 0);\n}}}} writer;\n"
    jobs = [
        passes,
        _job(cpp, version, "fails", prompt, right + "// another sample\n", TWICE_TESTS.replace("== 4", "== 5")),
        _job(cpp, version, "other limits", prompt, right, TWICE_TESTS, compile_time_limit_s=19.0),
        _job(cpp, version, "writer", prompt, writer, TWICE_TESTS),
    ]
    try:
        got = {job.id: outcome for job, outcome in zip(jobs, sandbox.run(jobs), strict=True)}
    finally:
        sandbox.close()
    assert got["passes"].verdict.value == "passed" and got["passes"].pch == "prebuilt", got["passes"]
    assert got["fails"].verdict.value == "failed" and got["fails"].pch == "prebuilt", got["fails"]
    assert "tests:3:" in (got["fails"].detail or ""), got["fails"]
    assert got["other limits"].verdict.value == "passed" and got["other limits"].pch == "built", got["other limits"]
    assert got["writer"].verdict.value == "passed" and got["writer"].pch == "prebuilt", got["writer"]
    stats = sandbox.settings.stats  # the candidates' compiles
    assert (stats["pch_prebuilt"], stats["pch_builds"], stats["pch_rejected"]) == (3, 1, 0), stats
