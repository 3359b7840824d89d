"""R end to end: MultiPL-E's R rows with right and wrong completions, broken variants (an error, an infinite loop, a
memory hog, an early quit, a syntax error) and a stdio problem, through the API over HTTP, a worker process and the
R sandbox image (built on demand); and the split of every stored MultiPL-E R row into a judge and a candidate (no
container)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import get, r, resolve, split
from sandbox.languages.base import ReferencePass
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import DATA, labelled_completions, multipl_e_rows

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "r.json").read_text())
# The verdict of each kind of completion in tests/data/multipl-e/solutions/r.json.
VERDICTS = {"correct": "passed", "wrong": "failed", "throws": "error", "loops": "timeout", "exits": "failed",
            "memory": "memory", "syntax_error": "error"}


STDIO_SOLUTION = ("con <- file('stdin')\nfor (line in readLines(con)) {\n"
                  "  v <- as.integer(strsplit(trimws(line), '[[:space:]]+')[[1]])\n  cat(v[1] + v[2], '\\n', sep = '')\n}\n")


def test_every_row_splits_into_a_judge_and_a_candidate() -> None:
    rows = multipl_e_rows("r")
    assert len(rows) == 25 and set(SOLUTIONS) <= {row["name"] for row in rows} and len(SOLUTIONS) >= 10
    for row in rows:
        completion = SOLUTIONS.get(row["name"], {}).get("correct", "\n  NULL\n}\n")
        programs = r.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], completion))
        candidate, judge = programs.candidate["main.R"], programs.judge["main.R"]
        name = row["name"].split("_", 2)[2]
        # The candidate is the original program up to its tests; the tests are the judge's alone.
        assert candidate == row["prompt"] + completion + "\n" + r.serve_statement(name)
        assert row["tests"] in judge and completion not in judge and "test_humaneval" not in candidate
        assert judge.startswith(row["prompt"][:row["prompt"].rindex(f"{name} <- function")])
        assert f"  PasskJudge$call('{name}', PasskJudge$arguments(environment(), c(" in judge


def test_stub_keeps_the_signature() -> None:
    cases = {
        "f <- function(a, b) {": "f <- function(a, b) {\n  PasskJudge$call('f', PasskJudge$arguments(environment(), "
                                 "c(\"a\", \"b\")))\n}\n",
        "g = function() {": "g = function() {\n  PasskJudge$call('g', PasskJudge$arguments(environment(), c()))\n}\n",
        "h <- function(x, y = c(1, 2), ...) {": "h <- function(x, y = c(1, 2), ...) {\n  PasskJudge$call('h', "
                                                "PasskJudge$arguments(environment(), c(\"x\", \"y\", \"...\")))\n}\n",
    }
    for signature, stub in cases.items():
        head = "# A comment with f <- function(y) { and a }\n# >>> f(1)\nhelper <- function(z) { z }\n" + signature
        parts = r.split_problem(split.TestSource("multipl-e", head, "print(1)\n", "\n  1\n}\n"))
        assert r.stub(parts) == stub
        assert parts.before == head[:head.index(signature)]
    for bad in ("f <- function(a, `b c`) {", "x <- 1 {", "outer <- function() {\n  f <- function(a) {",
                "f <- function(a, ... = 1) {"):
        with pytest.raises(split.SplitError):
            r.programs(split.TestSource("multipl-e", bad, "print(1)\n", "\n}\n"))


def test_reference_rule() -> None:
    language = get("r")
    assert language.reference_commands == ("Rscript main.R",) and language.reference_pass == ReferencePass(timeout_s=15.0)
    assert language.reference_pass.passes(0, "", "Warning") and not language.reference_pass.passes(1, "", "")
    assert language.candidate_argv(256 << 20) == ("env", "R_PROFILE_USER=/opt/passk/R/server.R", "Rscript", "main.R")
    assert language.run_argv(256 << 20) == ("Rscript", "main.R") and language.run_code_names == ("R",)
    assert resolve("R") is language


@pytest.mark.slow
def test_r_end_to_end(stack: Stack) -> None:
    multipl_e = endtoend.multipl_e_case("r", labelled_completions(SOLUTIONS, VERDICTS))
    results = endtoend.check_language(stack, "r", {
        "multipl-e-r": multipl_e,
        "stdio-r": endtoend.stdio_case("r", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("v[1] + v[2]", "v[1] - v[2]"),
                                       more=(("stdio syntax error", "cat(1 +\n", "error"),
                                             ("stdio error", "stop('boom')\n", "error"))),
    })
    assert "is not TRUE" in results["HumanEval_23_strlen wrong"]["detail"]
    assert "raised simpleError: boom" in results["HumanEval_23_strlen throws"]["detail"]
    exits = results["HumanEval_23_strlen exits"]
    assert "before its tests finished" in exits["detail"] and "ended_early" in exits["flags"]
    assert "unexpected '}'" in results["HumanEval_23_strlen syntax_error"]["detail"]
    endtoend.assert_toolchain(stack, "r", "multipl-e-r", "Rscript (R) version 4.2")
