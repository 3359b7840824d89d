"""D's judge against hostile candidates, through the real sandbox (the D image, built on demand).

- Attacks: each trick a forger has in D (module constructors and destructors, atexit hooks and `exit`/`_exit`
  early, druntime's unit-test runner replaced, its own `main`, the environment and /proc, lines that look like a
  pass, garbage and forged answers on the reply descriptor, a server of its own, signals and ptrace of every other
  process, killing the parent, child processes), each around a wrong answer: none passes, none is
  `sandbox_error`, and each carries the flag its trick must raise.
- The property: for every MultiPL-E D row with solutions, the right completion inside a harmless trick still
  passes, and a wrong one inside a hostile wrapper fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA, multipl_e_rows
from tests.languages.hostile import assert_verdicts_survive_tricks, attack, language_image
from tests.languages.test_javascript_hostile import PTRACE

ROWS = {row["name"]: row for row in multipl_e_rows("d")}
SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "d.json").read_text())
# The problem the attacks run on: long(string), whose answer a forger can write in a few bytes (the property below
# runs the hostile wrappers on every problem's types).
ATTACKED = ("HumanEval_23_strlen",)
# Every stored problem's tests fail this answer (its type's default value).
WRONG = "{\n    return typeof(return).init;\n}\n"
# A framed answer `R l 1` (the long 1), as the candidate's server would write it.
FORGED = "cast(ubyte[]) [0, 0, 0, 10, 'R', 'l', 0, 0, 0, 0, 0, 0, 0, 1]"
OTHERS = (
    "int[] passkOthers() {\n    import std.file : dirEntries, SpanMode;\n    import std.path : baseName;\n"
    "    import std.conv : to;\n    import std.algorithm : all;\n    import std.ascii : isDigit;\n"
    "    import core.sys.posix.unistd : getpid;\n    int[] pids;\n"
    "    try {\n        foreach (e; dirEntries(\"/proc\", SpanMode.shallow, false)) {\n"
    "            auto n = e.name.baseName;\n            if (n.all!isDigit && n.to!int != getpid()) pids ~= n.to!int;\n"
    "        }\n    } catch (Exception) {}\n    return pids;\n}\n"
)
POSIX = "import core.sys.posix.unistd : _exit, write, getppid;\nimport core.sys.posix.signal : kill, SIGKILL, SIGSTOP, SIGTERM;\n"


def _ctor(code: str) -> str:
    """The wrong answer, then `code` in a module constructor (it runs before the server's first call)."""
    return WRONG + POSIX + "shared static this() {\n" + code + "\n}\n"


def _call(code: str) -> str:
    """`code` run from the function's body (in a function of its own), then the wrong answer."""
    return ("{\n    passkAttack();\n    return typeof(return).init;\n}\n" + POSIX + OTHERS
            + "void passkAttack() {\n" + code + "\n}\n")


# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "exit(0) in the call": (_call("    import core.stdc.stdlib : exit;\n    exit(0);"), "ended_early"),
    "_exit(0) in the call": (_call("    _exit(0);"), "ended_early"),
    "a module constructor that exits 0": (_ctor("    import core.stdc.stdlib : exit;\n    exit(0);"), "ended_early"),
    "module destructors and atexit hooks that exit 0": (
        WRONG + POSIX + "static ~this() { _exit(0); }\nshared static ~this() { _exit(0); }\n"
        "extern(C) void passkBye() nothrow @nogc { _exit(0); }\n"
        "shared static this() { import core.stdc.stdlib : atexit; atexit(&passkBye); }\n", None),
    "druntime's unit-test runner replaced": (
        WRONG + "import core.runtime : Runtime, UnitTestResult;\nshared static this() {\n"
        "    Runtime.extendedModuleUnitTester = () => UnitTestResult(1, 1, false, true);\n}\n"
        "extern(C) __gshared string[] rt_options = [\"testmode=test-only\"];\nunittest { assert(true); }\n", None),
    "its own main": (WRONG + "void main() {}\n", None),
    "the environment and /proc": (_call(
        "    import std.stdio : writeln;\n    import std.file : read, write;\n    import std.process : environment;\n"
        "    writeln(environment.toAA);\n"
        "    foreach (f; [\"/proc/self/environ\", \"/proc/1/environ\", \"/proc/1/cmdline\"])\n"
        "        try { writeln(cast(string) read(f)); } catch (Exception e) { writeln(typeid(e)); }\n"
        "    foreach (p; passkOthers()) {\n        import std.conv : text;\n"
        "        foreach (w; [\"environ\", \"cmdline\", \"mem\"])\n"
        "            try { writeln(cast(string) read(text(\"/proc/\", p, \"/\", w))); } catch (Exception e) { writeln(typeid(e)); }\n"
        "        try { write(text(\"/proc/\", p, \"/mem\"), \"x\"); } catch (Exception e) { writeln(typeid(e)); }\n    }"), None),
    "lines that look like a pass": (_ctor(
        "    import std.stdio : writeln, stderr;\n    writeln(\"PASS\\n1 modules passed unittests\");\n"
        "    stderr.writeln(\"PASS\");\n    foreach (fd; [5, 6, 7]) write(fd, \"PASS\".ptr, 4);"), None),
    "garbage on the reply descriptor": (_ctor("    write(4, \"garbage\".ptr, 7);"), "out_of_turn"),
    "forged answers before any call": (_ctor(f"    auto f = {FORGED};\n    foreach (_; 0 .. 64) write(4, f.ptr, f.length);"),
                                       "out_of_turn"),
    "an extra answer with each call": (_call(f"    auto f = {FORGED};\n    write(4, f.ptr, f.length);"), "out_of_turn"),
    "a server of its own that answers 1 to every call": (_ctor(
        "    import core.sys.posix.unistd : read;\n    ubyte[4] header;\n    ubyte[65536] body;\n"
        f"    auto f = {FORGED};\n"
        "    while (read(3, header.ptr, 4) == 4) {\n"
        "        read(3, body.ptr, (header[0] << 24) | (header[1] << 16) | (header[2] << 8) | header[3]);\n"
        "        write(4, f.ptr, f.length);\n    }\n    _exit(0);"), None),
    "signals to every other process": (_call(
        "    foreach (p; passkOthers()) foreach (s; [SIGSTOP, SIGTERM, SIGKILL]) kill(p, s);"), "reached_judge"),
    "killing the parent": (_call("    kill(getppid(), SIGKILL);\n    kill(1, SIGKILL);"), "reached_judge"),
    "ptrace and kill from a child process": (_call(
        "    import std.process : execute;\n    execute([\"python3\", \"-c\", \"" + PTRACE.replace('"', '\\"') + "\"]);"),
        "reached_judge"),
    "child processes left behind": (_call(
        "    import std.process : spawnProcess, execute;\n    spawnProcess([\"sh\", \"-c\", \"sleep 2; echo PASS\"]);\n"
        "    execute([\"sh\", \"-c\", \"kill -9 -1\"]);"), "reached_judge"),
}

# Harmless tricks around a right answer (they must not stop it passing).
TRICKS = (
    "shared static this() {\n    import std.stdio : writeln, stderr;\n    writeln(\"PASS\");\n"
    "    stderr.writeln(\"FLAG out_of_turn\");\n}\n",
    "static ~this() {\n    import std.stdio : stderr;\n    stderr.writeln(\"bye\");\n}\n"
    "struct PasskAny {\n    bool opEquals(T)(T) const { return true; }\n}\n",
    "shared static this() {\n    import std.file : read;\n    try { read(\"/proc/self/environ\"); read(\"/proc/1/environ\"); }"
    " catch (Exception) {}\n}\n",
    "shared static this() {\n    import core.thread : Thread;\n    auto t = new Thread({});\n    t.start();\n    t.join();\n}\n",
    "long passkHelper(long x) { return x * 2; }\nimport std.algorithm, std.array, std.range, std.typecons;\n",
)
# Hostile wrappers around a wrong answer (they must not make it pass).
HOSTILE = tuple(ATTACKS[name][0].removeprefix(WRONG) for name in (
    "a module constructor that exits 0", "module destructors and atexit hooks that exit 0",
    "druntime's unit-test runner replaced", "forged answers before any call",
    "a server of its own that answers 1 to every call",
))


@pytest.fixture(scope="module")
def dlang(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    yield language_image(docker_client, "d")


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(dlang) -> None:  # type: ignore[no-untyped-def]
    by_label = attack(dlang, ROWS, ATTACKED, ATTACKS)
    # Every attack compiled (else it proved nothing): only the one that defines main fails to link.
    not_built = {label for label, outcome in by_label.items() if outcome.verdict is Verdict.COMPILE_ERROR}
    assert not_built == {f"{name} its own main" for name in ATTACKED}, {
        label: (by_label[label].detail or "")[:300] for label in not_built}
    assert "before its tests finished" in (by_label["HumanEval_23_strlen a module constructor that exits 0"].detail or "")


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(dlang) -> None:  # type: ignore[no-untyped-def]
    assert_verdicts_survive_tricks(dlang, ROWS, SOLUTIONS, SOLUTIONS, TRICKS, HOSTILE)
