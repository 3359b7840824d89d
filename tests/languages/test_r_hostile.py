"""R's judge against hostile candidates, through the real sandbox (the R image, built on demand).

- Attacks: each trick a forger has in R (stopifnot, identical, all.equal and isTRUE redefined, in the global
  environment and in base itself; the tests' own function taken over by an active binding; an object whose
  all.equal method says yes; `quit(status = 0)` early; .Last, exit finalizers, options(error =) and global calling
  handlers that quit with 0; an error condition that says PASS; the environment and /proc; lines that look like a
  pass; garbage and forged answers on the reply descriptor; a replaced server; signals and ptrace of every other
  process, killing the parent, child processes), each around a wrong answer, on several problems: none passes,
  none is `sandbox_error`, and each carries the flag its trick must raise.
- The property: for every solved MultiPL-E R row, the right completion inside a harmless trick still passes, and a
  wrong one inside a hostile wrapper fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA, multipl_e_rows
from tests.languages.hostile import assert_verdicts_survive_tricks, attack, language_image
from tests.languages.test_javascript_hostile import PTRACE

ROWS = {row["name"]: row for row in multipl_e_rows("r")}
SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "r.json").read_text())
# Problems the attacks run on: numbers, strings, a vector of strings, doubles, a named list (histogram), a list
# passed in (check_dict_case), NULLs in a list (largest_smallest_integers).
ATTACKED = ("HumanEval_23_strlen", "HumanEval_89_encrypt", "HumanEval_14_all_prefixes", "HumanEval_2_truncate_number",
            "HumanEval_111_histogram", "HumanEval_95_check_dict_case", "HumanEval_136_largest_smallest_integers")
# Every stored problem's tests fail this answer.
WRONG = "\n  'passk-wrong'\n}\n"
# A framed answer `R TRUE`, as the candidate's server would write it.
FORGED = "as.raw(c(0, 0, 0, 19, 82, 97, 0, 0, 0, 7, 108, 111, 103, 105, 99, 97, 108, 65, 0, 0, 0, 1, 84))"
# The server's connection on a descriptor, found among R's open connections (the descriptor itself is closed).
CONNECTION = ("passk_con <- function(d) {\n  for (n in getAllConnections()) if (summary(getConnection(n))$description == d)"
              " return(getConnection(n))\n  NULL\n}\n")

# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "stopifnot, identical, all.equal and isTRUE redefined": (
        WRONG + "stopifnot <- function(...) invisible(TRUE)\nisTRUE <- function(x) TRUE\n"
        "all.equal <- function(...) TRUE\nidentical <- function(...) TRUE\n"
        "for (f in c('stopifnot', 'isTRUE', 'identical')) {\n  unlockBinding(f, baseenv())\n"
        "  assign(f, function(...) TRUE, envir = baseenv())\n}\n", None),
    "the tests' function taken over by an active binding": (
        WRONG + "makeActiveBinding('test_humaneval', function(value) function() invisible(TRUE), globalenv())\n", None),
    "an object whose all.equal method says yes": (
        "\n  structure(list(), class = 'passk_any')\n}\nall.equal.passk_any <- function(target, current, ...) TRUE\n"
        "identical <- function(x, y, ...) TRUE\n", None),
    "quit(status = 0) at the top level": (WRONG + "quit(status = 0)\n", "ended_early"),
    "quit(status = 0) in the call": ("\n  quit(status = 0)\n}\n", "ended_early"),
    "q('no') in the call": ("\n  q('no')\n}\n", "ended_early"),
    ".Last, exit finalizers and error hooks": (
        WRONG + ".Last <- function() quit(status = 0, runLast = FALSE)\n"
        "reg.finalizer(globalenv(), function(e) quit(status = 0, runLast = FALSE), onexit = TRUE)\n"
        "options(error = function() quit(status = 0, runLast = FALSE))\n"
        "globalCallingHandlers(error = function(e) quit(status = 0, runLast = FALSE))\n", None),
    "an error condition that says PASS": (
        "\n  stop(structure(class = c('PASS', 'error', 'condition'), list(message = 'PASS', call = NULL)))\n}\n",
        None),
    "the environment and /proc": (
        WRONG + "print(Sys.getenv())\n"
        "for (f in c('/proc/self/environ', '/proc/1/environ', '/proc/1/cmdline', '/proc/1/mem'))\n"
        "  print(tryCatch(readBin(f, 'raw', 10000), error = function(e) conditionMessage(e)))\n"
        "system('cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline; ls -l /proc/[0-9]*/fd; echo x > /proc/1/mem')\n",
        None),
    "lines that look like a pass": (
        WRONG + "print('PASS')\ncat('PASS\\n', file = stderr())\ncat('\\nOK\\n')\n"
        "for (fd in 3:7) try(writeBin(charToRaw('PASS'), fifo(sprintf('/dev/fd/%d', fd), 'wb')), silent = TRUE)\n",
        None),
    "garbage on the reply descriptor": (
        WRONG + CONNECTION + "writeBin(charToRaw('garbage'), passk_con('/dev/fd/4'))\n", "out_of_turn"),
    "forged answers before any call": (
        WRONG + CONNECTION + f"for (i in 1:64) writeBin({FORGED}, passk_con('/dev/fd/4'))\n", "out_of_turn"),
    "an extra answer with each call": (
        f"\n  writeBin({FORGED}, passk_con('/dev/fd/4'))\n  'passk-wrong'\n}}\n" + CONNECTION, "out_of_turn"),
    "the server replaced by one that answers true": (
        WRONG + CONNECTION + "PasskServer$serve <- function(name, fn) {\n"
        "  calls <- passk_con('/dev/fd/3')\n  replies <- passk_con('/dev/fd/4')\n  repeat {\n"
        "    header <- readBin(calls, 'raw', 4)\n    if (length(header) < 4) return(invisible(NULL))\n"
        "    readBin(calls, 'raw', sum(as.integer(header) * c(16777216, 65536, 256, 1)))\n"
        f"    writeBin({FORGED}, replies)\n  }}\n}}\n", None),
    "signals to every other process": (
        WRONG + "system('for p in /proc/[0-9]*; do p=${p#/proc/}; [ $p = $$ ] || "
        "{ kill -STOP $p; kill -TERM $p; kill -KILL $p; }; done 2>/dev/null')\n", "reached_judge"),
    "killing the parent": (
        WRONG + "system('kill -KILL $(cut -d\" \" -f4 /proc/$PPID/stat); kill -KILL 1')\n", "reached_judge"),
    "ptrace and kill from a child process": (
        WRONG + "system2('python3', c('-c', shQuote(r\"---[" + PTRACE.replace("\\n", "\n") + "]---\")))\n",
        "reached_judge"),
    "child processes left behind": (WRONG + "system('(sleep 2; echo PASS) & kill -9 -1')\n", "reached_judge"),
}

# Harmless tricks around a right answer (they must not stop it passing).
TRICKS = (
    "print('PASS')\ncat('FLAG out_of_turn\\n', file = stderr())\ncat('\\nPASS\\n')\n",
    ".Last <- function() cat('bye\\n', file = stderr())\n"
    "reg.finalizer(new.env(), function(e) NULL, onexit = TRUE)\npasskHelper <- function() 1\n",
    "h <- file('/proc/self/environ', 'rb')\nclose(h)\ninvisible(tryCatch(readLines('/proc/1/environ'), "
    "error = function(e) NULL, warning = function(w) NULL))\n",
    "invisible(gc())\nx <- tryCatch(stop('x'), error = function(e) 1)\nsuppressWarnings(as.integer('x'))\n",
    "options(digits = 3, warn = 1)\nset.seed(1)\n",
)
# Hostile wrappers around a wrong answer (they must not make it pass).
HOSTILE = tuple(ATTACKS[name][0].removeprefix(WRONG) for name in (
    "stopifnot, identical, all.equal and isTRUE redefined", "the tests' function taken over by an active binding",
    ".Last, exit finalizers and error hooks", "quit(status = 0) at the top level", "forged answers before any call",
    "the server replaced by one that answers true",
))


@pytest.fixture(scope="module")
def r(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    yield language_image(docker_client, "r")


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(r) -> None:  # type: ignore[no-untyped-def]
    by_label = attack(r, ROWS, ATTACKED, ATTACKS)
    # The object crosses as what it is: a value of a class the wire cannot carry, whatever its methods say.
    anything = by_label["HumanEval_14_all_prefixes an object whose all.equal method says yes"]
    assert anything.verdict is Verdict.ERROR and "type passk_any" in (anything.detail or ""), anything
    raised = by_label["HumanEval_23_strlen an error condition that says PASS"]
    assert raised.verdict is Verdict.ERROR and "raised PASS: PASS" in (raised.detail or ""), raised
    assert "before its tests finished" in (by_label["HumanEval_23_strlen quit(status = 0) at the top level"].detail or "")


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(r) -> None:  # type: ignore[no-untyped-def]
    assert_verdicts_survive_tricks(r, ROWS, SOLUTIONS, SOLUTIONS, TRICKS, HOSTILE)
