"""Racket end to end: MultiPL-E's Racket rows with right and wrong completions, broken variants (an exception, an
infinite loop, a memory hog, an early exit, a syntax error) and a stdio problem, through the API over HTTP, a worker
process and the Racket sandbox image (built on demand); and the split of every stored MultiPL-E Racket row into a
judge and a candidate (no container)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import get, racket, split
from sandbox.languages.base import ReferencePass
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import DATA, labelled_completions, multipl_e_rows

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "rkt.json").read_text())
# The verdict of each kind of completion in tests/data/multipl-e/solutions/rkt.json.
VERDICTS = {"correct": "passed", "wrong": "failed", "throws": "error", "loops": "timeout", "exits": "failed",
            "memory": "memory", "syntax_error": "error"}


STDIO_SOLUTION = ("#lang racket/base\n(for ([line (in-lines)])\n"
                  "  (define numbers (map string->number (regexp-split #rx\" +\" line)))\n"
                  "  (displayln (+ (car numbers) (cadr numbers))))\n")


def test_every_row_splits_into_a_judge_and_a_candidate() -> None:
    rows = multipl_e_rows("rkt")
    assert len(rows) == 25 and set(SOLUTIONS) <= {row["name"] for row in rows} and len(SOLUTIONS) >= 10
    for row in rows:
        completion = SOLUTIONS.get(row["name"], {}).get("correct", "  #f)\n")
        programs = racket.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], completion))
        candidate, judge = programs.candidate["main.rkt"], programs.judge["main.rkt"]
        name = row["name"].split("_", 2)[2]
        # The candidate is the original program up to its tests; the tests are the judge's alone.
        assert candidate == row["prompt"] + completion + "\n" + racket.serve_statement(name)
        assert row["tests"] in judge and completion not in judge and "rackunit" not in candidate
        assert judge.startswith(row["prompt"][:row["prompt"].rindex("(define (")]) and judge.startswith("#lang racket\n")
        assert f'(passk-call "{name}" (list ' in judge


def test_stub_keeps_the_signature() -> None:
    cases = {
        "(define (f a b)": '(define (f a b)\n  (passk-call "f" (list a b)))\n',
        "(define (g)": '(define (g)\n  (passk-call "g" (list )))\n',
        "(define (h? x-y)": '(define (h? x-y)\n  (passk-call "h?" (list x-y)))\n',
    }
    require = '(require (only-in (file "/opt/passk/racket/call.rkt") passk-call))\n'
    for signature, stub in cases.items():
        head = "#lang racket\n;; A comment with (define (x y) and a )\n#| (define (nope) |#\n(define s \"(\")\n" + signature + "\n"
        parts = racket.split_problem(split.TestSource("multipl-e", head, "(f 1)\n", "  1)\n"))
        assert racket.stub(parts) == require + stub
        assert parts.before == head[:head.index(signature)]
    for bad in ("#lang racket\n(define (f a . rest)\n", "#lang racket\n(define (f [a 1])\n", "#lang racket\n",
                "#lang racket\n(define x 1)\n", "#lang racket\n(define (f a)\n  (let ([x 1])\n", "#lang racket\n)\n",
                "#lang racket\n(define f (lambda (a)\n"):
        with pytest.raises(split.SplitError):
            racket.programs(split.TestSource("multipl-e", bad, "(f 1)\n", ")\n"))


def test_reference_rule() -> None:
    language = get("racket")
    assert language.reference_commands == ("racket main.rkt",)
    assert language.reference_pass == ReferencePass(quiet_stderr=True, timeout_s=15.0)
    assert language.reference_pass.passes(0, "", "") and not language.reference_pass.passes(0, "", "FAILURE")
    assert not language.reference_pass.passes(1, "", "")
    assert language.run_argv(256 << 20) == ("racket", "main.rkt") and language.run_code_names == ("racket",)
    assert racket.LANGUAGE.aliases == ("rkt",)


@pytest.mark.slow
def test_racket_end_to_end(stack: Stack) -> None:
    multipl_e = endtoend.multipl_e_case("rkt", labelled_completions(SOLUTIONS, VERDICTS))
    results = endtoend.check_language(stack, "racket", {
        "multipl-e-rkt": multipl_e,
        "stdio-rkt": endtoend.stdio_case("racket", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("(+ ", "(- "),
                                         time_limit_s=5.0, more=(
            ("stdio syntax error", "#lang racket/base\n(displayln (+ 1\n", "error"),
            ("stdio exception", "#lang racket/base\n(error 'boom \"no\")\n", "error"),
        )),
    })
    assert "FAILURE name: 'check-within, actual: 1, expected: 0" in results["HumanEval_23_strlen wrong"]["detail"]
    assert "exn:fail: strlen: boom" in results["HumanEval_23_strlen throws"]["detail"]
    exits = results["HumanEval_23_strlen exits"]
    assert "before its tests finished" in exits["detail"] and "ended_early" in exits["flags"]
    assert "read-syntax" in results["HumanEval_23_strlen syntax_error"]["detail"]
    endtoend.assert_toolchain(stack, "racket", "multipl-e-rkt", "Racket 8.7 (chez-scheme)")
    endtoend.check_run_code(stack, "racket", prints="#lang racket/base\n(displayln 123)\n",
                            raises="#lang racket/base\n(error 'boom \"no\")\n",
                            loops="#lang racket/base\n(let loop () (loop))\n", broken="#lang racket/base\n(displayln (+ 1\n",
                            echoes="#lang racket/base\n(displayln (string->number (read-line)))\n")
