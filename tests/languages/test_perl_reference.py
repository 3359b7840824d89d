"""Perl against MultiPL-E's own evaluation (evaluation/src/eval_pl.py: `perl <file>`, 15 s, exit status 0 passes
unless "ERROR" is in its output), run in the same Perl image on the same programs: every completion of
tests/data/multipl-e/solutions/pl.json (right, wrong, dying, looping, memory-hungry, exiting early, not compiling),
a crash, and the forged-pass attacks that do not reach outside the one process. passk and MultiPL-E agree on every
program but those listed in tests/data/multipl_e_differences.json, each with its reason (all of them passes
MultiPL-E gives and passk does not)."""

from __future__ import annotations

import json

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA
from tests.languages.reference import compare_with_multipl_e
from tests.languages.test_perl_hostile import ATTACKS, TRICKS

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "pl.json").read_text())
DIFFERENCES = json.loads((DATA / "multipl_e_differences.json").read_text())["perl"]
# Attacks that stay inside the program's own process (the others signal or kill every process of their uid, the
# reference harness's too).
IN_PROCESS = ("Test::Deep's eq_deeply redefined", "exit overridden before the tests are compiled", "END blocks",
              "a die hook that exits 0", "an object that equals anything", "exit 0 at the top level",
              "exit 0 in the call", "POSIX::_exit(0) in the call", "__END__ before the tests",
              "the environment and /proc", "lines that look like a pass", "garbage on the reply descriptor",
              "forged answers before any call", "the server replaced by one that answers true")


def programs() -> dict[str, tuple[str, str]]:
    """label -> (problem, completion)."""
    found = {f"{problem} {kind}": (problem, text) for problem, variants in SOLUTIONS.items()
             for kind, text in variants.items() if isinstance(text, str)}
    found["HumanEval_23_strlen crashes"] = ("HumanEval_23_strlen", "    kill 'SEGV', $$;\n}\n")
    # A right answer that prints "ERROR" (MultiPL-E's harness fails any output holding it).
    found["HumanEval_23_strlen prints ERROR"] = ("HumanEval_23_strlen", SOLUTIONS["HumanEval_23_strlen"]["correct"] + TRICKS[0])
    for attack in IN_PROCESS:
        found[f"HumanEval_23_strlen {attack}"] = ("HumanEval_23_strlen", ATTACKS[attack][0])
    return found


@pytest.mark.slow
def test_passk_agrees_with_multipl_e(docker_client) -> None:  # type: ignore[no-untyped-def]
    found = compare_with_multipl_e(docker_client, "perl", "pl", programs(), DIFFERENCES)
    # Every difference but the printed "ERROR" is a pass MultiPL-E gives and passk does not.
    assert all(found.reference[label]["passed"] and found.outcomes[label].verdict is not Verdict.PASSED
               for label in found.differ - {"HumanEval_23_strlen prints ERROR"})
    assert all(found.outcomes[f"{problem} correct"].verdict is Verdict.PASSED for problem in SOLUTIONS)
