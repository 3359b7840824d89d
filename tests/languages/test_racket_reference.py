"""Racket against MultiPL-E's own evaluation (evaluation/src/eval_racket.py: `racket <file>`, 15 s; a pass is exit
status 0 with nothing on stderr), run in the same Racket image on the same programs: every completion of one problem
in tests/data/multipl-e/solutions/rkt.json (right, wrong, raising, looping, memory-hungry, exiting early, not
parsing), the right and wrong ones of a few more (a string, a float, #f), a crash, and the forged-pass attacks that
do not reach outside the one process. passk and MultiPL-E agree on every program but those listed in
tests/data/multipl_e_differences.json, each with its reason (all of them forged passes MultiPL-E accepts)."""

from __future__ import annotations

import json

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA
from tests.languages.reference import compare_with_multipl_e
from tests.languages.test_racket_hostile import ATTACKS

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "rkt.json").read_text())
DIFFERENCES = json.loads((DATA / "multipl_e_differences.json").read_text())["racket"]
# Attacks that stay inside the program's own process (the others signal or kill every process of their uid, the
# reference harness's too).
IN_PROCESS = ("rackunit's checks shadowed", "rackunit's check handler replaced", "the error port replaced",
              "(exit 0) at the top level", "(exit 0) in the call", "an exit handler that exits with 0",
              "a raised value that says PASS", "a struct of the model's own", "lines that look like a pass",
              "forged answers before any call")
# Problems whose right and wrong answers both harnesses judge, beside every completion of HumanEval_23_strlen.
COMPARED = ("HumanEval_23_strlen", "HumanEval_89_encrypt", "HumanEval_2_truncate_number", "HumanEval_12_longest")


def programs() -> dict[str, tuple[str, str]]:
    """label -> (problem, completion)."""
    found = {f"{problem} {kind}": (problem, text) for problem in COMPARED for kind, text in SOLUTIONS[problem].items()
             if isinstance(text, str) and (problem == COMPARED[0] or kind in ("correct", "wrong"))}
    found["HumanEval_23_strlen crashes"] = (
        "HumanEval_23_strlen", "  (require ffi/unsafe)\n  ((get-ffi-obj \"abort\" #f (_fun -> _void))))\n")
    for attack in IN_PROCESS:
        found[f"HumanEval_23_strlen {attack}"] = ("HumanEval_23_strlen", ATTACKS[attack][0])
    return found


@pytest.mark.slow
def test_passk_agrees_with_multipl_e(docker_client) -> None:  # type: ignore[no-untyped-def]
    found = compare_with_multipl_e(docker_client, "racket", "rkt", programs(), DIFFERENCES)
    # Every difference is a pass MultiPL-E gives and passk does not.
    assert all(found.reference[label]["passed"] and found.outcomes[label].verdict is not Verdict.PASSED
               for label in found.differ)
    assert all(found.outcomes[f"{problem} correct"].verdict is Verdict.PASSED for problem in COMPARED)
