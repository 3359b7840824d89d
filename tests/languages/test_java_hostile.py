"""Java's judge/candidate split under attack, through the real sandbox (the Java image, built on demand).

- The attacks: each class of trick a Java completion can play, around a wrong answer, on several HumanEval-X
  problems. None passes, none is `sandbox_error`; those that end early carry `ended_early`, those that signal or
  trace other processes `reached_judge`, those that write on their reply descriptor `out_of_turn`.
- The property: for every one of the 164 problems, the canonical solution inside a harmless trick still passes,
  and a wrong answer inside a hostile wrapper fails.

All jobs run in one batch over two sandboxes (one per core), split by problem so that each problem's judge
compiles once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from sandbox.executor import Job, Outcome
from tests.languages.conftest import humaneval_x_rows
from tests.sandbox.programs import run_sharded

MIB = 1024 * 1024
ROWS = humaneval_x_rows("java")
BY_ID = {row["task_id"]: row for row in ROWS}


def jstr(text: str) -> str:
    """A Java string literal of `text`."""
    return json.dumps(text)


# A wrong answer for each return type of HumanEval-X's Java signatures (no problem's tests accept it).
WRONG = {
    "boolean": "false", "int": "-7", "long": "-7L", "double": "-7.5", "String": '"passk-wrong"',
    "Object": "null",
}


def wrong_answer(row: dict) -> str:
    signature = row["declaration"].rstrip().split("\n")[-1].strip()
    returns = signature.split("(")[0].split()[-2]
    if returns in WRONG:
        return WRONG[returns]
    if returns.startswith("Optional"):
        return "Optional.empty()"
    if returns.startswith("Map"):
        return "new HashMap<>()"
    return "null"  # a list: the tests' equals() on it ends in a NullPointerException


@dataclass(frozen=True)
class Wrapper:
    """Code around an answer: statements before it in the method, members after it in the class, top-level code
    after the class."""

    before: str = ""
    members: str = ""
    after: str = ""

    def around_return(self, value: str) -> str:
        return self.before + f"        return {value};\n    }}\n" + self.members + "}\n" + self.after

    def around_canonical(self, canonical: str) -> str:
        body = canonical.rstrip()
        assert body.endswith("}"), canonical[-40:]
        return self.before + body[:-1] + self.members + "}\n" + self.after


FD4 = ("java.lang.reflect.Field passkFd = java.io.FileDescriptor.class.getDeclaredField(\"fd\");\n"
       "            passkFd.setAccessible(true);\n"
       "            java.io.FileDescriptor passkD = new java.io.FileDescriptor();\n"
       "            passkFd.setInt(passkD, 4);\n"
       "            java.io.FileOutputStream passkOut = new java.io.FileOutputStream(passkD);\n")


def on_fd4(data: str) -> str:
    return ("        try {\n            " + FD4 + f"            passkOut.write(new byte[] {{{data}}});\n"
            "            passkOut.flush();\n        } catch (Exception passkE) { throw new RuntimeException(passkE); }\n")


TRACE_PY = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "buf = ctypes.create_string_buffer(8)\n"
    "class IOV(ctypes.Structure):\n"
    "    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]\n"
    "local = IOV(ctypes.cast(buf, ctypes.c_void_p), 8)\n"
    "for p in os.listdir('/proc'):\n"
    "    if p.isdigit() and int(p) != os.getpid():\n"
    "        libc.ptrace(16, int(p), 0, 0)\n"
    "        remote = IOV(0x400000, 8)\n"
    "        libc.process_vm_writev(int(p), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)\n"
    "        try:\n"
    "            open(f'/proc/{p}/mem', 'r+b').write(b'PASS')\n"
    "        except OSError:\n"
    "            pass\n"
)

ATTACKS: dict[str, tuple[Wrapper, tuple[str, ...]]] = {
    # Code of the candidate's that runs before the tests need it: Solution's initialisers.
    "static initialiser exit(0)": (Wrapper(members="    static { System.exit(0); }\n"), ("ended_early",)),
    "instance initialiser halt(0)": (Wrapper(members="    { Runtime.getRuntime().halt(0); }\n"), ("ended_early",)),
    "exit(0) before answering": (Wrapper(before="        System.exit(0);\n"), ("ended_early",)),
    # Exit hooks: the failed tests end the judge, not the candidate, whatever its hooks do.
    "shutdown hook halt(0)": (Wrapper(members=(
        "    static { Runtime.getRuntime().addShutdownHook(new Thread(() -> Runtime.getRuntime().halt(0))); }\n")), ()),
    "shutdown hook, then exit(0)": (Wrapper(before=(
        "        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println(\"PASS\")));\n"
        "        System.exit(0);\n")), ("ended_early",)),
    # What the candidate can read: its environment and /proc (no token, no tests there).
    "environment and /proc/self": (Wrapper(before=(
        "        System.out.println(System.getenv());\n"
        "        for (String passkF : new String[] {\"/proc/self/environ\", \"/proc/self/cmdline\", \"/proc/self/status\","
        " \"/proc/1/environ\", \"/proc/1/cmdline\"}) {\n"
        "            try { System.out.println(new String(java.nio.file.Files.readAllBytes(java.nio.file.Path.of(passkF)))); }"
        " catch (Exception passkE) { System.out.println(passkE); }\n"
        "        }\n")), ()),
    "prints PASS and tokens": (Wrapper(before=(
        "        System.out.println(\"\\nPASS\\n\"); System.err.println(\"PASS\");\n"
        "        System.out.println(\"0123456789abcdef0123456789abcdef\"); System.out.flush();\n")), ()),
    # Reflection over passk's classes and a server of the candidate's own: its process only.
    "reflection over passk's classes": (Wrapper(before=(
        "        try {\n"
        "            Class<?> passkM = Class.forName(\"PasskMain\");\n"
        "            for (java.lang.reflect.Field passkF : passkM.getDeclaredFields()) { passkF.setAccessible(true); passkF.set(null, null); }\n"
        "            for (java.lang.reflect.Field passkF : Class.forName(\"passk.Wire\").getDeclaredFields()) passkF.setAccessible(true);\n"
        "            Class.forName(\"Main\");\n"
        "        } catch (Throwable passkE) { System.out.println(passkE); }\n")), ()),
    "a class named passk shadows the server": (Wrapper(after=(
        "class passk {\n    static class Server {\n"
        "        static void serve(Class<?> c, String name) { System.exit(0); }\n    }\n}\n"
        "class Main { public static void main(String[] a) { } }\nclass PasskJudge { }\nclass Problem { }\n")),
        ("ended_early",)),
    # Unicode escapes are braces to javac: the candidate's braces, in the candidate's file.
    "unicode escapes hide code in a string": (Wrapper(members=(
        "    static String passkU = \"\\u0022; static { System.exit(0); } static String passkV = \\u0022\";\n")),
        ("ended_early",)),
    # Writing on the reply descriptor: forged answers, garbage, a line that says PASS.
    "forged answers on fd 4": (Wrapper(before=on_fd4("0, 0, 0, 2, 'R', 'T', 0, 0, 0, 2, 'R', 'T'")), ("out_of_turn",)),
    "garbage on fd 4": (Wrapper(before=on_fd4("'P', 'A', 'S', 'S', '\\n', (byte) 0xff")), ("out_of_turn",)),
    # Signals and traces: every pid in /proc.
    "kill every process": (Wrapper(before=(
        "        for (ProcessHandle passkP : ProcessHandle.allProcesses().toArray(ProcessHandle[]::new)) {\n"
        "            if (passkP.pid() != ProcessHandle.current().pid()) passkP.destroyForcibly();\n"
        "        }\n")), ("reached_judge",)),
    "ptrace and write every process's memory": (Wrapper(before=(
        f"        try {{ new ProcessBuilder(\"python3\", \"-c\", {jstr(TRACE_PY)}).inheritIO().start().waitFor(); }}"
        " catch (Exception passkE) { System.out.println(passkE); }\n")), ("reached_judge",)),
}
ATTACKED = ("Java/0", "Java/2", "Java/12", "Java/22", "Java/137")
# The model's own equals(): never run by the judge, which rebuilds values of known classes only.
EQUALS = {
    "Java/22": "new ArrayList<Integer>() { public boolean equals(Object o) { return true; } }",
    "Java/137": "Optional.of(new Object() { public boolean equals(Object o) { return true; } })",
    "Java/12": "Optional.of(new String(\"x\"))",
}

# Harmless tricks around the canonical solution (they must not change its verdict).
TRICKS = (
    Wrapper(members="    static { System.out.println(\"PASS\"); System.getenv(); }\n"),
    Wrapper(members="    static { Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println(\"bye\"))); }\n"),
    Wrapper(after="class Main { public static void main(String[] a) { System.exit(0); } }\nclass PasskJudge { }\n"),
    Wrapper(members="    static { Thread t = new Thread(() -> System.err.println(\"PASS\")); t.setDaemon(true); t.start(); }\n"),
    Wrapper(members="    { try { Class.forName(\"PasskMain\").getDeclaredMethods(); } catch (Exception e) { } }\n"),
)
# Hostile wrappers around a wrong answer.
HOSTILE = (
    ATTACKS["static initialiser exit(0)"][0],
    ATTACKS["shutdown hook halt(0)"][0],
    ATTACKS["prints PASS and tokens"][0],
    ATTACKS["garbage on fd 4"][0],
    ATTACKS["kill every process"][0],
)


@dataclass(frozen=True)
class Sample:
    label: str
    task_id: str
    completion: str
    time_limit_s: float = 5.0


def _samples() -> list[Sample]:
    samples = []
    for name, (wrapper, _) in ATTACKS.items():
        for task_id in ATTACKED:
            samples.append(Sample(f"{name} / {task_id}", task_id, wrapper.around_return(wrong_answer(BY_ID[task_id]))))
    for task_id, value in EQUALS.items():
        samples.append(Sample(f"own equals / {task_id}", task_id, Wrapper().around_return(value)))
    for index, row in enumerate(ROWS):
        trick = TRICKS[index % len(TRICKS)]
        samples.append(Sample(f"right {index % len(TRICKS)} / {row['task_id']}", row["task_id"],
                              trick.around_canonical(row["canonical_solution"])))
        hostile = HOSTILE[index % len(HOSTILE)]
        samples.append(Sample(f"wrong {index % len(HOSTILE)} / {row['task_id']}", row["task_id"],
                              hostile.around_return(wrong_answer(row)), time_limit_s=3.0))
    return samples


def _run(docker_client, samples: list[Sample]) -> dict[str, Outcome]:  # type: ignore[no-untyped-def]
    from sandbox.images import ensure_language_image, toolchain_version
    from sandbox.languages import get
    from sandbox.languages.jobs import tests_spec
    from sandbox.languages.split import TestSource

    java = get("java")
    image = ensure_language_image(docker_client, java)
    version = toolchain_version(docker_client, image, java)
    memory = 256 * MIB
    jobs = []
    for sample in samples:
        row = BY_ID[sample.task_id]
        source = TestSource("humaneval-x", row["prompt"], row["test"], sample.completion, row["declaration"])
        jobs.append(Job(sample.label, "", sample.time_limit_s, memory, language="java",
                        native=tests_spec(java, source, version, memory)))
    task_of = {sample.label: sample.task_id for sample in samples}
    return run_sharded(docker_client, image, jobs, lambda job: task_of[job.id])


@pytest.fixture(scope="module")
def outcomes(docker_client) -> dict[str, Outcome]:  # type: ignore[no-untyped-def]
    return _run(docker_client, _samples())


def _shown(outcome: Outcome) -> tuple:
    return outcome.verdict.value, outcome.flags, (outcome.detail or "")[:200], (outcome.stderr or "")[:200]


def test_nothing_is_a_sandbox_error(outcomes: dict[str, Outcome]) -> None:
    errors = {label: _shown(o) for label, o in outcomes.items() if o.verdict.value == "sandbox_error"}
    assert not errors, errors


def test_attacks_never_pass_and_carry_their_flags(outcomes: dict[str, Outcome]) -> None:
    wrong = []
    for name, (_, flags) in ATTACKS.items():
        for task_id in ATTACKED:
            outcome = outcomes[f"{name} / {task_id}"]
            if outcome.verdict.value == "passed" or not set(flags) <= set(outcome.flags):
                wrong.append((name, task_id, flags, _shown(outcome)))
    assert not wrong, wrong
    # Exiting early is a failure that says so.
    early = outcomes["exit(0) before answering / Java/0"]
    assert early.verdict.value == "failed" and "before its tests finished" in (early.detail or ""), _shown(early)
    # A forged reply is refused whole: the judge never takes the model's bytes for an answer of another type.
    assert "broke its channel" in (outcomes["garbage on fd 4 / Java/2"].detail or "")


def test_the_judge_never_runs_the_models_equals(outcomes: dict[str, Outcome]) -> None:
    got = {task_id: outcomes[f"own equals / {task_id}"] for task_id in EQUALS}
    assert got["Java/22"].verdict.value == "failed", _shown(got["Java/22"])  # rebuilt as an ArrayList: [] != [4, 9]
    assert got["Java/137"].verdict.value == "error", _shown(got["Java/137"])  # an anonymous class: not carried
    assert "cannot compare" in (got["Java/137"].detail or "")
    assert got["Java/12"].verdict.value == "failed", _shown(got["Java/12"])


def test_property_right_answers_pass_and_wrong_ones_fail(outcomes: dict[str, Outcome]) -> None:
    lost = {label: _shown(o) for label, o in outcomes.items() if label.startswith("right ") and o.verdict.value != "passed"}
    forged = {label: _shown(o) for label, o in outcomes.items() if label.startswith("wrong ") and o.verdict.value == "passed"}
    assert not lost, lost
    assert not forged, forged
    # The hostile wrappers were seen doing what they do.
    for index, flag in ((0, "ended_early"), (3, "out_of_turn"), (4, "reached_judge")):
        for label, outcome in outcomes.items():
            if label.startswith(f"wrong {index} /"):
                assert flag in outcome.flags, (label, _shown(outcome))
