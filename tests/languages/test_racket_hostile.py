"""Racket's judge against hostile candidates, through the real sandbox (the Racket image, built on demand).

- Attacks: each trick a forger has in Racket (rackunit's checks shadowed, its check handler or the error port
  replaced, `(exit 0)` early, the environment and /proc, lines that look like a pass, garbage and forged answers on
  the reply descriptor, a server of its own, a struct or a procedure as the answer, signals and ptrace of every
  other process, killing the parent, child processes), each around a wrong answer: none passes, none is
  `sandbox_error`, and each carries the flag its trick must raise.
- The property: for solved MultiPL-E Racket rows of every kind of answer, the right completion inside a harmless
  trick still passes, and a wrong one inside a hostile wrapper fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA, multipl_e_rows
from tests.languages.hostile import assert_verdicts_survive_tricks, attack, language_image
from tests.languages.test_javascript_hostile import PTRACE

ROWS = {row["name"]: row for row in multipl_e_rows("rkt")}
SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "rkt.json").read_text())
ATTACKED = ("HumanEval_23_strlen",)
# Problems whose right and wrong answers run inside the tricks: an integer, a string, a list, a float, #f.
TRICKED = ("HumanEval_23_strlen", "HumanEval_89_encrypt", "HumanEval_14_all_prefixes", "HumanEval_2_truncate_number",
           "HumanEval_12_longest")
# Every stored problem's tests fail this answer; it closes the function.
WRONG = "  \"passk-wrong\")\n"
# Bytes written on the reply descriptor (the candidate's fd 4); FORGED is a framed answer `R T` (true).
REPLIES = "(require ffi/unsafe/port)\n(define (passk-forge bytes) (let ([p (unsafe-file-descriptor->port 4 'r '(write))]) (write-bytes bytes p) (flush-output p)))\n"
FORGED = "(bytes 0 0 0 2 82 84)"
OTHER_PIDS = ("(for/list ([p (directory-list \"/proc\")] #:when (regexp-match? #rx\"^[0-9]+$\" (path->string p))"
              " #:unless (equal? (path->string p) (number->string (getpid)))) (path->string p))")

# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "rackunit's checks shadowed": (
        WRONG + "(define-syntax-rule (check-within a b c) (void))\n(define-syntax-rule (check-equal? a b) (void))\n", None),
    "rackunit's check handler replaced": (WRONG + "(require rackunit)\n(current-check-handler void)\n", None),
    "the error port replaced": (WRONG + "(current-error-port (open-output-nowhere))\n", None),
    "(exit 0) at the top level": (WRONG + "(exit 0)\n", "ended_early"),
    "(exit 0) in the call": ("  (exit 0))\n", "ended_early"),
    "an exit handler that exits with 0": (
        WRONG + "(let ([exit* (exit-handler)]) (exit-handler (lambda (code) (exit* 0))))\n", None),
    "a raised value that says PASS": ("  (raise 'PASS))\n", None),
    "a struct of the model's own": ("  (struct fake (x) #:transparent)\n  (fake 1))\n", None),
    "a procedure as the answer": ("  (lambda (x) #t))\n", None),
    "the environment and /proc": (
        WRONG + "(require racket/os)\n(displayln (environment-variables-names (current-environment-variables)))\n"
        "(for ([f '(\"/proc/self/environ\" \"/proc/1/environ\" \"/proc/1/cmdline\")])\n"
        "  (displayln (with-handlers ([void exn-message]) (file->bytes f))))\n"
        f"(for* ([p {OTHER_PIDS}] [w '(\"environ\" \"cmdline\" \"mem\")])\n"
        "  (displayln (with-handlers ([void exn-message]) (file->bytes (format \"/proc/~a/~a\" p w))))\n"
        "  (displayln (with-handlers ([void exn-message]) (directory-list (format \"/proc/~a/fd\" p)))))\n", None),
    "lines that look like a pass": (WRONG + "(displayln \"PASS\")\n(eprintf \"PASS\\n\")\n", None),
    "garbage on the reply descriptor": (WRONG + REPLIES + "(passk-forge #\"garbage\")\n", "out_of_turn"),
    "forged answers before any call": (WRONG + REPLIES + f"(for ([_ 64]) (passk-forge {FORGED}))\n", "out_of_turn"),
    "an extra answer with each call": (
        f"  (passk-forge {FORGED})\n" + WRONG + REPLIES, "out_of_turn"),
    "a server of its own that answers true": (
        WRONG + REPLIES + "(let ([calls (unsafe-file-descriptor->port 3 'c '(read))])\n"
        "  (let loop ()\n    (define header (read-bytes 4 calls))\n    (unless (eof-object? header)\n"
        "      (read-bytes (integer-bytes->integer header #f #t) calls)\n"
        f"      (passk-forge {FORGED})\n      (loop))))\n(exit 0)\n", None),
    "signals to every other process": (
        WRONG + "(require racket/os)\n"
        f"(for ([p {OTHER_PIDS}]) (system (format \"kill -STOP ~a; kill -TERM ~a; kill -KILL ~a\" p p p)))\n",
        "reached_judge"),
    "killing the parent": (
        WRONG + "(define ppid (list-ref (string-split (file->string \"/proc/self/stat\")) 3))\n"
        "(system (format \"kill -9 ~a; kill -9 1\" ppid))\n", "reached_judge"),
    "ptrace and kill from a child process": (
        WRONG + "(system* \"/usr/bin/env\" \"python3\" \"-c\" " + json.dumps(PTRACE.replace("\\n", "\n")) + ")\n",
        "reached_judge"),
    "child processes left behind": (
        WRONG + "(system \"(sleep 2; echo PASS) > /dev/null 2>&1 &\")\n(system \"kill -9 -1\")\n", "reached_judge"),
}

# Harmless tricks around a right answer (they must not stop it passing).
TRICKS = (
    "(displayln \"PASS\")\n",
    "(define (passk-helper x) (* 2 x))\n(exit-handler (let ([exit* (exit-handler)]) (lambda (code) (exit* code))))\n",
    "(with-handlers ([void void]) (file->bytes \"/proc/self/environ\"))\n",
    "(thread-wait (thread (lambda () (sleep 0.01))))\n",
    "(define-syntax-rule (check-within a b c) (void))\n",
)
# Hostile wrappers around a wrong answer (they must not make it pass).
HOSTILE = tuple(ATTACKS[name][0].removeprefix(WRONG) for name in (
    "rackunit's checks shadowed", "rackunit's check handler replaced", "the error port replaced",
    "(exit 0) at the top level", "forged answers before any call", "a server of its own that answers true",
))


@pytest.fixture(scope="module")
def racket(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    yield language_image(docker_client, "racket")


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(racket) -> None:  # type: ignore[no-untyped-def]
    by_label = attack(racket, ROWS, ATTACKED, ATTACKS)
    procedure = by_label["HumanEval_23_strlen a procedure as the answer"]
    assert procedure.verdict is Verdict.ERROR and "type procedure" in (procedure.detail or ""), procedure
    struct = by_label["HumanEval_23_strlen a struct of the model's own"]
    assert struct.verdict is Verdict.ERROR and "type fake" in (struct.detail or ""), struct
    said = by_label["HumanEval_23_strlen a raised value that says PASS"]
    assert said.verdict is Verdict.ERROR and "raise: 'PASS" in (said.detail or ""), said
    assert "before its tests finished" in (by_label["HumanEval_23_strlen (exit 0) at the top level"].detail or "")


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(racket) -> None:  # type: ignore[no-untyped-def]
    assert_verdicts_survive_tricks(racket, ROWS, SOLUTIONS, TRICKED, TRICKS, HOSTILE)
