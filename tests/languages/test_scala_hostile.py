"""Scala's judge against hostile candidates, through the real sandbox (the Scala image, built on demand).

Each trick a forger has in Scala (sys.exit / halt in the call or in the object's initialiser, shutdown hooks, lines
that look like a pass, forged answers and garbage on the reply descriptor, killing every other process), each around
a wrong answer: none passes, none is `sandbox_error`, and each carries the flag its trick must raise. The judge is a
JVM of its own that holds none of the model's code, so only bytes on the wire reach it. A compile that stalls is
never a `sandbox_error` nor the program's compile error.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import multipl_e_rows
from tests.languages.hostile import attack, job, language_image
from tests.languages.test_javascript_hostile import run_parallel

ROWS = {row["name"]: row for row in multipl_e_rows("scala")}
ATTACKED = ("HumanEval_23_strlen",)
WRONG = "        -7L\n"
# (Scala 2.11's default target, JVM 1.6, calls no static interface method such as ProcessHandle's: a shell kills.)
# The reply descriptor (4) as a stream: FileDescriptor's `fd` field (java.io is opened to the program's module).
FD4 = ("        val passkF = classOf[java.io.FileDescriptor].getDeclaredField(\"fd\")\n"
       "        passkF.setAccessible(true)\n        val passkD = new java.io.FileDescriptor()\n"
       "        passkF.setInt(passkD, 4)\n        val passkOut = new java.io.FileOutputStream(passkD)\n")


def _on_fd4(data: str) -> str:
    return FD4 + f"        passkOut.write(Array[Byte]({data}))\n        passkOut.flush()\n" + WRONG


def _member(code: str) -> str:
    """The wrong answer, then `code` as a member of the prompt's object (it runs when the object initialises)."""
    return WRONG + "    }\n" + code + "\n    def passkUnused() = {\n"


# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "sys.exit(0) in the call": ("        sys.exit(0)\n", "ended_early"),
    "halt(0) in the call": ("        Runtime.getRuntime().halt(0)\n" + WRONG, "ended_early"),
    "the object's initialiser exits 0": (_member("    val passkX = { System.exit(0); 1 }"), "ended_early"),
    "a shutdown hook that halts 0": (
        "        sys.addShutdownHook(Runtime.getRuntime().halt(0))\n" + WRONG, None),
    "lines that look like a pass": (
        "        println(\"PASS\"); System.err.println(\"PASS\"); println(\"0123456789abcdef0123456789abcdef\")\n" + WRONG,
        None),
    # Two forged replies of 1 in one write during the first call: the judge takes the first as the answer, and the
    # tests fail on it. Flagged out_of_turn only when the server's own reply is still in the pipe as the judge ends:
    # the judge's read-ahead may already hold it with the forged one (a race, so no flag is required here).
    "forged answers on the reply descriptor": (
        _on_fd4("0, 0, 0, 10, 82, 108, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 10, 82, 108, 0, 0, 0, 0, 0, 0, 0, 1"),
        None),
    "garbage on the reply descriptor": (_on_fd4("80, 65, 83, 83, 10, -1"), "out_of_turn"),
    "kill every other process": (
        "        Runtime.getRuntime.exec(Array(\"sh\", \"-c\", \"for p in /proc/[0-9]*; do kill -9 ${p#/proc/}; done\")).waitFor()\n"
        + WRONG, "reached_judge"),
}


@pytest.fixture(scope="module")
def sandbox(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    yield language_image(docker_client, "scala")


@pytest.mark.slow
def test_attacks_never_pass(sandbox: tuple) -> None:
    outcomes = attack(sandbox, ROWS, ATTACKED, ATTACKS)
    assert "ended_early" not in outcomes["HumanEval_23_strlen a shutdown hook that halts 0"].flags


@pytest.mark.slow
def test_a_stalled_compile_is_never_a_sandbox_error_nor_the_programs_compile_error(sandbox: tuple) -> None:
    """scalac reads no file a program names, so a Scala compile that gains no CPU only stalls on a loaded machine: it
    waits (here a candidate's compile that sleeps 7 s, then fails, is judged by how it ended). Where compiles are
    watched for idleness, a judge's (trusted code) that stalls is a wall-clock timeout, which the worker re-runs
    alone, never a sandbox_error."""
    client, language, image, version = sandbox
    slow = job(language, version, ROWS["HumanEval_23_strlen"], WRONG, "slow candidate compile")
    slow.native.candidate.compile = ["sh", "-c", "sleep 7; exit 3"]
    stalled = job(language, version, ROWS["HumanEval_23_strlen"], WRONG, "stalled judge compile")
    stalled.native.watch_compile_idle = True
    stalled.native.judge.compile = ["sleep", "30"]
    waited, outcome = run_parallel(client, image, [slow, stalled])
    assert waited.verdict is Verdict.COMPILE_ERROR and "status 3" in (waited.detail or ""), waited.detail
    assert outcome.verdict is Verdict.TIMEOUT and outcome.timeout_kind == "wall", (outcome.verdict, outcome.detail)
    assert "stalled" in (outcome.detail or ""), outcome.detail
