"""Bash's judge against hostile candidates, through the real sandbox (the Bash image, built on demand).

- Attacks: each trick a forger has in Bash (an EXIT trap that exits 0, `set` redefined so the tests' `set -e` does
  nothing, `exit 0` at the top level, the environment and /proc, lines that look like a pass, garbage and forged
  answers on the reply descriptor, a replaced server, signals and ptrace of every other process, killing the
  parent, child processes), each around a wrong answer, on several problems: none passes, none is `sandbox_error`,
  and each carries the flag its trick must raise. Top-level tricks close the function themselves and open a
  harmless one for the tests' `}` to close, as a completion can.
- The property: for every stored MultiPL-E Bash row, the right completion inside a harmless trick still passes,
  and a wrong one inside a hostile wrapper fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA, multipl_e_rows
from tests.languages.hostile import assert_verdicts_survive_tricks, attack, language_image
from tests.languages.test_javascript_hostile import PTRACE

ROWS = {row["name"]: row for row in multipl_e_rows("sh")}
SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "sh.json").read_text())
# Problems the attacks run on: a number, a string, a CSV, a list, two arguments.
ATTACKED = ("HumanEval_23_strlen", "HumanEval_89_encrypt", "HumanEval_85_add", "HumanEval_25_factorize",
            "HumanEval_53_add")
# Every stored problem's tests fail this answer.
WRONG = "    echo passk-wrong\n"


def top_level(code: str) -> str:
    """A wrong answer, then `code` at the top level of the program."""
    return WRONG + "}\n" + code + "passk_reopened() {\n    :\n"


# A framed answer: `0` printed, exit status 0, as the candidate's server would write it.
FORGED = "printf 'RP\\x00\\x00\\x00\\x02s\\x00\\x00\\x00\\x010B\\x00' | { printf '\\x00\\x00\\x00\\x0e'; cat; }"
EVERY_OTHER_PID = "for p in /proc/[0-9]*; do p=${p#/proc/}; [[ $p == $$ || $p == $BASHPID ]] && continue"

# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "an EXIT trap that exits 0": (top_level("trap 'exit 0' EXIT\n"), None),
    "set redefined so that set -e does nothing": (top_level("set() { :; }\n"), None),
    "exit 0 at the top level": (top_level("exit 0\n"), "ended_early"),
    "exit 0 in the call": (WRONG + "    exit 0\n", None),
    "the environment and /proc": (
        top_level("env\ncat /proc/self/environ /proc/1/environ /proc/1/cmdline\n"
                  f"{EVERY_OTHER_PID}\n    cat /proc/$p/environ /proc/$p/cmdline /proc/$p/mem; ls /proc/$p/fd\n"
                  "    echo x > /proc/$p/mem\ndone 2>&1\n"), None),
    "lines that look like a pass": (
        top_level("echo PASS; echo PASS >&2; printf '\\nPASS\\n'\nfor fd in 5 6 7; do printf PASS >&$fd; done 2>/dev/null\n"),
        None),
    "garbage on the reply descriptor": (top_level("printf garbage >&4\n"), "out_of_turn"),
    "forged answers before any call": (top_level(f"for i in $(seq 64); do {FORGED} >&4; done\n"), "out_of_turn"),
    "an extra answer with each call": (f"    {FORGED} >&4\n" + WRONG, "out_of_turn"),
    "the server replaced by one that answers 0": (
        top_level(f"passk_serve() {{\n    while head -c 4 <&3 > /dev/null; do\n        head -c 100 <&3 > /dev/null\n"
                  f"        {FORGED} >&4\n    done\n}}\n"), None),
    "signals to every other process": (
        top_level(f"{EVERY_OTHER_PID}\n    kill -STOP $p; kill -TERM $p; kill -KILL $p\ndone 2>/dev/null\n"),
        "reached_judge"),
    "killing the parent": (top_level("kill -KILL $PPID 1 2>/dev/null\n"), "reached_judge"),
    "ptrace and kill from a child process": (
        top_level("python3 -c \"$(cat <<'PY'\n" + PTRACE.replace("\\n", "\n") + "PY\n)\"\n"), "reached_judge"),
    "child processes left behind": (top_level("(sleep 2; echo PASS) &\nkill -9 -1 2>/dev/null\n"), "reached_judge"),
}

# Harmless tricks around a right answer (they must not stop it passing).
TRICKS = (
    "}\necho PASS; echo 'FLAG out_of_turn' >&2; printf '\\nPASS\\n'\npassk_reopened() {\n    :\n",
    "}\ntrap 'echo bye >&2' EXIT\nrun_test() { :; }\ncandidate() { :; }\npassk_reopened() {\n    :\n",
    "}\ncat /proc/self/environ /proc/1/environ > /dev/null 2>&1\npassk_reopened() {\n    :\n",
    "}\nset -eo pipefail\nshopt -s extglob\npassk_reopened() {\n    :\n",
    "}\nPASSK_NAME=x; REPLY=y; LC_ALL=C.UTF-8\npassk_reopened() {\n    :\n",
)
# Hostile wrappers around a wrong answer (they must not make it pass).
HOSTILE = tuple(ATTACKS[name][0].removeprefix(WRONG) for name in (
    "an EXIT trap that exits 0", "set redefined so that set -e does nothing", "exit 0 at the top level",
    "forged answers before any call", "the server replaced by one that answers 0",
))


@pytest.fixture(scope="module")
def bash(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    yield language_image(docker_client, "bash")


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(bash) -> None:  # type: ignore[no-untyped-def]
    by_label = attack(bash, ROWS, ATTACKED, ATTACKS)
    assert "before its tests finished" in (by_label["HumanEval_23_strlen exit 0 at the top level"].detail or "")
    assert by_label["HumanEval_23_strlen exit 0 in the call"].verdict is Verdict.FAILED


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(bash) -> None:  # type: ignore[no-untyped-def]
    assert_verdicts_survive_tricks(bash, ROWS, SOLUTIONS, SOLUTIONS, TRICKS, HOSTILE)
