"""The hostile-wrapper property for C++ (Python's is tests/sandbox/test_hostile_property.py): for every one of
HumanEval-X's 164 C++ problems, through the real sandbox,

- the canonical solution inside a harmless trick still passes (the trick runs in the candidate's process and
  leaves the answer right: a global constructor that prints "PASS" and reads its environment, exit hooks, a
  child process, macros after the answer, probing the other processes with signal 0);
- a wrong answer inside a hostile wrapper fails (ending with status 0 from a global constructor, its own
  `main`, garbage on the judge's channel, killing every other process, redefining `assert` and `==`);
- nothing is `sandbox_error`.

Two sandboxes (two containers) share the work, one per core.
"""

from __future__ import annotations

from sandbox.executor import Job
from sandbox.images import ensure_language_image, toolchain_version
from sandbox.languages import get
from sandbox.languages import jobs
from sandbox.languages.split import TestSource as Source
from tests.languages.conftest import humaneval_x_rows
from tests.sandbox.programs import run_sharded

INCLUDES = "\n#include <cstdio>\n#include <cstdlib>\n#include <unistd.h>\n#include <sys/wait.h>\n#include <dirent.h>\n" \
    "#include <signal.h>\n"
# At namespace scope after the canonical solution; each leaves its answer right.
TRICKS = (
    INCLUDES + "struct PasskLoud { PasskLoud() { printf(\"PASS\\n\"); fflush(stdout);"
    " FILE* f = fopen(\"/proc/self/environ\", \"r\"); if (f) fclose(f); } } passk_loud;\n",
    INCLUDES + "struct PasskHooks { PasskHooks() { atexit([] {}); at_quick_exit([] {}); } } passk_hooks;\n",
    INCLUDES + "struct PasskChild { PasskChild() { pid_t c = fork(); if (c == 0) _exit(0); if (c > 0)"
    " waitpid(c, nullptr, 0); } } passk_child;\n",
    INCLUDES + "#define assert(x) ((void)0)\n#define main passk_main\n",
    INCLUDES + "struct PasskProbe { PasskProbe() { DIR* d = opendir(\"/proc\"); while (struct dirent* e = d ?"
    " readdir(d) : nullptr) { int pid = atoi(e->d_name); if (pid > 0 && pid != getpid()) kill(pid, 0); }"
    " if (d) closedir(d); } } passk_probe;\n",
)
WRONG = "    return {};\n}\n"
# Around the wrong answer, at namespace scope after it.
WRAPPERS = (
    INCLUDES + "struct PasskEarly { PasskEarly() { exit(0); } } passk_early;\n",
    INCLUDES + "int main() { return 0; }\n",
    INCLUDES + "struct PasskNoise { PasskNoise() { write(4, \"\\0\\0\\0\\2RT\", 6); } } passk_noise;\n",
    INCLUDES + "struct PasskKill { PasskKill() { DIR* d = opendir(\"/proc\"); while (struct dirent* e = d ?"
    " readdir(d) : nullptr) { int pid = atoi(e->d_name); if (pid > 0 && pid != getpid()) kill(pid, SIGKILL); }"
    " if (d) closedir(d); } } passk_kill;\n",
    INCLUDES + "#define assert(x) ((void)0)\ntemplate <class T> bool operator==(const T&, const T&) { return true; }\n",
)


def test_hostile_wrappers_never_turn_a_wrong_answer_into_a_pass_or_a_right_one_into_a_failure(docker_client) -> None:  # type: ignore[no-untyped-def]
    cpp = get("cpp")
    image = ensure_language_image(docker_client, cpp)
    version = toolchain_version(docker_client, image, cpp)
    memory = 256 * 1024 * 1024
    rows = humaneval_x_rows("cpp")
    assert len(rows) == 164

    def job(label: str, row: dict, completion: str, limit_s: float) -> Job:
        source = Source("humaneval-x", row["prompt"], row["test"], completion, row["declaration"])
        return Job(label, "", limit_s, memory, language="cpp", native=jobs.tests_spec(cpp, source, version, memory))

    # One problem's right and wrong samples in the same container, so that its judge and server compile once.
    queued: list[Job] = []
    right_ids: set[str] = set()
    problem_of: dict[str, str] = {}
    for index, row in enumerate(rows):
        right = job(f"{row['task_id']} trick {index % len(TRICKS)}", row,
                    row["canonical_solution"] + TRICKS[index % len(TRICKS)], 3.0)
        wrong = job(f"{row['task_id']} wrapper {index % len(WRAPPERS)}", row,
                    WRONG + WRAPPERS[index % len(WRAPPERS)], 2.0)
        queued += [right, wrong]
        right_ids.add(right.id)
        problem_of[right.id] = problem_of[wrong.id] = row["task_id"]

    outcomes = run_sharded(docker_client, image, queued, shard_of=lambda one: problem_of[one.id])
    errors = [(name, o.detail) for name, o in outcomes.items() if o.verdict.value == "sandbox_error"]
    forged = [(name, o.detail) for name, o in outcomes.items() if name not in right_ids and o.verdict.value == "passed"]
    lost = [(name, o.verdict.value, (o.detail or "")[:200]) for name, o in outcomes.items()
            if name in right_ids and o.verdict.value != "passed"]
    assert not errors, errors
    assert not forged, forged
    assert not lost, lost
