"""C#'s judge against hostile candidates, through the real sandbox (the C# image, built on demand).

- Attacks: each trick a forger has in C# (Debug's listeners cleared, `Equals` of a returned list overridden, exits
  early from a static constructor or the call, exit hooks, lines that look like a pass, garbage and forged answers
  written on the reply descriptor through libc, passk's own Server class replaced by one of the model's, every
  other process killed, children left behind), each around a wrong answer: none passes, none is `sandbox_error`,
  and each carries the flag its trick must raise.
- The property: for every other solved C# row, the right completion inside a harmless trick still passes, and a
  wrong one inside a hostile wrapper fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA, multipl_e_rows
from tests.languages.hostile import assert_verdicts_survive_tricks, attack, language_image

ROWS = {row["name"]: row for row in multipl_e_rows("cs")}
SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "cs.json").read_text())
# Problems the attacks run on: a long from a string, a float.
ATTACKED = ("HumanEval_23_strlen", "HumanEval_2_truncate_number")
# Every attacked problem's tests fail this answer.
WRONG = "        return -1;\n"
# Members after the function: the completion closes the method, adds its own members, and opens a method that the
# tests' `}` closes (as one program, and as the candidate's program).
AFTER = "    }\n"
REOPEN = "    static void PasskAttackEnd() {\n"
LIBC = ('    [System.Runtime.InteropServices.DllImport("libc")]\n'
        "    internal static extern System.IntPtr write(int fd, byte[] data, System.UIntPtr count);\n")
# A framed answer `R T` (true), as the candidate's server would write it.
FORGED = "new byte[] {0, 0, 0, 2, 0x52, 0x54}"


def members(code: str) -> str:
    """A wrong answer, then `code` as members of the problem's class."""
    return WRONG + AFTER + code + REOPEN


# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "Debug's listeners cleared": (members(
        "    static Problem() {\n        System.Diagnostics.Debug.Listeners.Clear();\n"
        "        System.Diagnostics.Trace.Listeners.Clear();\n    }\n"), None),
    "exit hooks": (members(
        "    static Problem() {\n        AppDomain.CurrentDomain.ProcessExit += (s, e) => Console.WriteLine(\"PASS\");\n"
        "        AppDomain.CurrentDomain.UnhandledException += (s, e) => Environment.Exit(0);\n    }\n"), None),
    "Environment.Exit(0) in the call": ("        Environment.Exit(0);\n" + WRONG, "ended_early"),
    "Environment.Exit(0) before any call": (members(
        "    static Problem() {\n        Environment.Exit(0);\n    }\n"), "ended_early"),
    "lines that look like a pass": (members(
        "    static Problem() {\n        Console.WriteLine(\"PASS\");\n        Console.Error.WriteLine(\"PASS\");\n"
        "    }\n"), None),
    "garbage on the reply descriptor": (members(
        LIBC + "    static Problem() {\n        var b = System.Text.Encoding.ASCII.GetBytes(\"garbage\");\n"
        "        write(4, b, (System.UIntPtr) b.Length);\n    }\n"), "out_of_turn"),
    "an extra answer with each call": (
        f"        var b = {FORGED};\n        write(4, b, (System.UIntPtr) b.Length);\n" + members(LIBC), "out_of_turn"),
    "passk's server replaced by one that answers true": (
        WRONG + AFTER + "}\nnamespace Passk {\n    public static class Server {\n"
        "        public static void Serve(System.Type entry, string name) {\n"
        "            var input = new System.IO.BinaryReader(Console.OpenStandardInput());\n"
        "            while (true) {\n"
        f"                var b = {FORGED};\n                PasskForger.write(4, b, (System.UIntPtr) b.Length);\n"
        "                System.Threading.Thread.Sleep(100);\n"
        "            }\n        }\n    }\n}\nclass PasskForger {\n" + LIBC + REOPEN, "out_of_turn"),
    "every other process killed": (members(
        "    static Problem() {\n        int self = System.Diagnostics.Process.GetCurrentProcess().Id;\n"
        "        foreach (var p in System.Diagnostics.Process.GetProcesses())\n"
        "            if (p.Id != self) { try { p.Kill(); } catch (Exception) { } }\n    }\n"), None),
    "child processes left behind": (members(
        "    static Problem() {\n        System.Diagnostics.Process.Start(\"sh\", \"-c 'sleep 2; echo PASS'\");\n"
        "    }\n"), None),
}

# Harmless tricks around a right answer (they must not stop it passing).
TRICKS = (
    AFTER + "    static Problem() {\n        Console.WriteLine(\"PASS\");\n        Console.Error.WriteLine(\"FLAG out_of_turn\");\n"
    "    }\n" + REOPEN,
    AFTER + "    public static void Main(string[] args) {\n        Environment.Exit(1);\n    }\n" + REOPEN,
    AFTER + "    static Problem() {\n        AppDomain.CurrentDomain.ProcessExit += (s, e) => Console.Error.WriteLine(\"bye\");\n"
    "    }\n" + REOPEN,
)
# Hostile wrappers around a wrong answer (they must not make it pass).
HOSTILE = tuple(ATTACKS[name][0].removeprefix(WRONG) for name in (
    "Debug's listeners cleared", "exit hooks", "Environment.Exit(0) before any call",
    "passk's server replaced by one that answers true",
))


@pytest.fixture(scope="module")
def csharp(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    yield language_image(docker_client, "csharp")


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(csharp) -> None:  # type: ignore[no-untyped-def]
    by_label = attack(csharp, ROWS, ATTACKED, ATTACKS)
    assert "before its tests finished" in (by_label["HumanEval_23_strlen Environment.Exit(0) in the call"].detail or "")
    cleared = by_label["HumanEval_23_strlen Debug's listeners cleared"]
    assert cleared.verdict is Verdict.FAILED and "Debug.Assert failed" in (cleared.detail or ""), cleared


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(csharp) -> None:  # type: ignore[no-untyped-def]
    # Every other solved problem: each trick on two problems, each hostile wrapper on one at least (the end-to-end and
    # reference tests run every stored completion already).
    solved = [name for name, variants in SOLUTIONS.items() if "unsolvable" not in variants][::2]
    assert_verdicts_survive_tricks(csharp, ROWS, SOLUTIONS, solved, TRICKS, HOSTILE)
