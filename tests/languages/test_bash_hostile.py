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

from sandbox.executor import Job
from sandbox.images import ensure_language_image, toolchain_version
from sandbox.languages import get, split
from sandbox.languages import jobs as native_jobs
from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA, multipl_e_rows
from tests.languages.test_javascript_hostile import PTRACE, run_parallel

MIB = 1024 * 1024
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
    language = get("bash")
    image = ensure_language_image(docker_client, language)
    yield docker_client, language, image, toolchain_version(docker_client, image, language)


def job(language, version: str, row: dict, completion: str, label: str, time_limit_s: float = 3.0) -> Job:  # type: ignore[no-untyped-def]
    source = split.TestSource("multipl-e", row["prompt"], row["tests"], completion)
    return Job(label, "", time_limit_s, 256 * MIB, language=language.name,
               native=native_jobs.tests_spec(language, source, version, 256 * MIB))


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(bash) -> None:  # type: ignore[no-untyped-def]
    client, language, image, version = bash
    jobs, expected = [], {}
    for name in ATTACKED:
        for attack, (completion, flag) in ATTACKS.items():
            jobs.append(job(language, version, ROWS[name], completion, f"{name} {attack}"))
            expected[jobs[-1].id] = flag
    outcomes = run_parallel(client, image, jobs)
    wrong = [(j.id, o.verdict.value, o.flags, (o.detail or "")[:300]) for j, o in zip(jobs, outcomes, strict=True)
             if o.verdict in (Verdict.PASSED, Verdict.SANDBOX_ERROR) or (expected[j.id] and expected[j.id] not in o.flags)]
    assert not wrong, wrong
    by_label = {j.id: o for j, o in zip(jobs, outcomes, strict=True)}
    assert "before its tests finished" in (by_label["HumanEval_23_strlen exit 0 at the top level"].detail or "")
    assert by_label["HumanEval_23_strlen exit 0 in the call"].verdict is Verdict.FAILED


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(bash) -> None:  # type: ignore[no-untyped-def]
    client, language, image, version = bash
    jobs, kinds = [], []
    for index, (name, variants) in enumerate(SOLUTIONS.items()):
        row = ROWS[name]
        trick = TRICKS[index % len(TRICKS)]
        jobs.append(job(language, version, row, variants["correct"] + trick, f"{name} right"))
        kinds.append("right")
        hostile = HOSTILE[index % len(HOSTILE)]
        jobs.append(job(language, version, row, variants["wrong"] + hostile, f"{name} wrong", time_limit_s=2.0))
        kinds.append("wrong")
    outcomes = run_parallel(client, image, jobs)
    errors = [(j.id, o.detail) for j, o in zip(jobs, outcomes, strict=True) if o.verdict is Verdict.SANDBOX_ERROR]
    forged = [(j.id, o.detail) for j, o, kind in zip(jobs, outcomes, kinds, strict=True)
              if kind == "wrong" and o.verdict is Verdict.PASSED]
    lost = [(j.id, o.verdict.value, (o.detail or "")[:200]) for j, o, kind in zip(jobs, outcomes, kinds, strict=True)
            if kind == "right" and o.verdict is not Verdict.PASSED]
    assert not errors, errors
    assert not forged, forged
    assert not lost, lost
