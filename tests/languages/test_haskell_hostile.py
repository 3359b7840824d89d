"""Haskell's judge against hostile candidates, through the real sandbox (the Haskell image, built on demand).

A completion cannot import anything (imports come before the prompt's code), so its ways out of pure code are
Haskell 2010's foreign function interface (a pure `foreign import ccall` of the C library's exit, kill, ptrace,
write...) and what it defines at the top level.

- Attacks: each trick a forger has in Haskell (exit(0) through the C library in the call, `==` and `main` of its own,
  an `error` whose message says PASS, garbage and forged answers written on the reply descriptor, lines that look
  like a pass, signals to every other process, ptrace and killing the parent), each around a wrong answer: none
  passes, none is `sandbox_error`, and each carries the flag its trick must raise.
- The property: for solved MultiPL-E Haskell rows of several types, the right completion inside a harmless trick
  still passes, and a wrong one inside a hostile wrapper fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA, multipl_e_rows
from tests.languages.hostile import assert_verdicts_survive_tricks, attack, language_image

ROWS = {row["name"]: row for row in multipl_e_rows("hs")}
SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "hs.json").read_text())
# The problem the attacks run on (it returns an Int, which the wrong answer below is): two arguments. Each sample
# compiles with GHC, so one problem is enough for the language's time budget.
ATTACKED = ("HumanEval_53_add",)
# The problems the property runs on: integers, a string, lists, a float.
PROPERTY = ("HumanEval_23_strlen", "HumanEval_89_encrypt", "HumanEval_96_count_up_to", "HumanEval_2_truncate_number")
# Every attacked problem's tests fail this answer.
WRONG = " -7\n"

FFI = (
    'foreign import ccall "exit" passkExit :: Int -> Int\n'
    'foreign import ccall "kill" passkKill :: Int -> Int -> Int\n'
    'foreign import ccall "getppid" passkParent :: Int -> Int\n'
    'foreign import ccall "ptrace" passkPtrace :: Int -> Int -> Int -> Int -> Int\n'
    'foreign import ccall "calloc" passkCalloc :: Int -> Int -> Int\n'
    'foreign import ccall "memset" passkMemset :: Int -> Int -> Int -> Int\n'
    'foreign import ccall "write" passkWrite :: Int -> Int -> Int -> Int\n'
    'foreign import ccall "raise" passkRaise :: Int -> Int\n'
    # `bytes` written on descriptor `fd` (a pure call: forced where the answer is).
    "passkWriteBytes :: Int -> [Int] -> Int\n"
    "passkWriteBytes fd bytes = let p = passkCalloc 1 (length bytes) in\n"
    "  foldr seq (passkWrite fd p (length bytes)) [passkMemset (p + i) b 1 | (i, b) <- zip [0 ..] bytes]\n"
    # A framed answer `R l 7`, as the candidate's server would write it.
    "passkForged :: [Int]\npasskForged = [0, 0, 0, 10, 82, 108, 0, 0, 0, 0, 0, 0, 0, 7]\n"
)


def forced(expression: str) -> str:
    """A wrong answer that first forces `expression` (a call into the C library)."""
    return f" ({expression}) `seq` (-7)\n" + FFI


# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "exit(0) through the C library in the call": (forced("passkExit 0"), "ended_early"),
    "== of its own": (WRONG + "x == y = True\nx /= y = False\n", None),
    "a main of its own": (WRONG + "main :: IO ()\nmain = pure ()\n", None),
    "an error that says PASS": (' error "PASS\\nFLAG out_of_turn"\n', None),
    "lines that look like a pass": (forced("passkWriteBytes 1 (map fromEnum \"PASS\\n\") + passkWriteBytes 2 "
                                           "(map fromEnum \"PASS\\n\") + passkWriteBytes 5 [80]"), None),
    "garbage on the reply descriptor": (forced("passkWriteBytes 4 [103, 97, 114]"), "out_of_turn"),
    "a forged answer with the call": (forced("passkWriteBytes 4 passkForged"), "out_of_turn"),
    "signals to every other process": (forced("passkKill (-1) 19 + passkKill (-1) 9 + passkKill 1 9"),
                                       "reached_judge"),
    "ptrace and killing the parent": (forced("passkPtrace 16 (passkParent 0) 0 0 + passkPtrace 16 1 0 0"
                                             " + passkKill (passkParent 0) 9"), "reached_judge"),
}

# Harmless tricks around a right answer (they must not stop it passing).
TRICKS = (
    "passkHelper :: Int -> Int\npasskHelper = (+ 1)\n",
    "main :: IO ()\nmain = putStrLn \"PASS\"\n",
    "data PasskMine = PasskMine deriving (Show, Eq)\ninstance Ord PasskMine where compare _ _ = EQ\n",
    'foreign import ccall "getpid" passkPid :: Int -> Int\n',
)
# Hostile wrappers around a wrong answer (they must not make it pass).
HOSTILE = (
    "x == y = True\n", "main :: IO ()\nmain = pure ()\n",
    'foreign import ccall "exit" passkExit :: Int -> Int\npasskGone :: Int\npasskGone = passkExit 0\n',
)


@pytest.fixture(scope="module")
def haskell(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    yield language_image(docker_client, "haskell")


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(haskell) -> None:  # type: ignore[no-untyped-def]
    by_label = attack(haskell, ROWS, ATTACKED, ATTACKS)
    # `==` defined by the model's module: the tests' `==` is the Prelude's.
    equal = by_label["HumanEval_53_add == of its own"]
    assert equal.verdict is Verdict.FAILED and "assertion failed" in (equal.detail or ""), equal
    raised = by_label["HumanEval_53_add an error that says PASS"]
    assert raised.verdict is Verdict.ERROR and "raised ErrorCall: PASS" in (raised.detail or ""), raised
    exited = by_label["HumanEval_53_add exit(0) through the C library in the call"]
    assert "before its tests finished" in (exited.detail or ""), exited


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(haskell) -> None:  # type: ignore[no-untyped-def]
    assert_verdicts_survive_tricks(haskell, ROWS, SOLUTIONS, PROPERTY, TRICKS, HOSTILE)
