"""Bash against MultiPL-E's own evaluation (evaluation/src/eval_sh.py: `bash <file>`, 15 s, exit status 0 passes),
run in the same Bash image on the same programs: every completion of tests/data/multipl-e/solutions/sh.json (right,
wrong, failing with a status, looping, memory-hungry, exiting, not parsing), a crash, and the forged-pass attacks
that do not reach outside the one process. passk and MultiPL-E agree on every program but those listed in
tests/data/multipl_e_differences.json, each with its reason (all of them passes MultiPL-E gives and passk does
not)."""

from __future__ import annotations

import json

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA
from tests.languages.reference import compare_with_multipl_e
from tests.languages.test_bash_hostile import ATTACKS, WRONG

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "sh.json").read_text())
DIFFERENCES = json.loads((DATA / "multipl_e_differences.json").read_text())["bash"]
# Attacks that stay inside the program's own process (the others signal or kill every process of their uid, the
# reference harness's too).
IN_PROCESS = ("an EXIT trap that exits 0", "set redefined so that set -e does nothing", "exit 0 at the top level",
              "exit 0 in the call", "the environment and /proc", "lines that look like a pass",
              "garbage on the reply descriptor", "forged answers before any call", "an extra answer with each call",
              "the server replaced by one that answers 0")


def programs() -> dict[str, tuple[str, str]]:
    """label -> (problem, completion)."""
    found = {f"{problem} {kind}": (problem, text) for problem, variants in SOLUTIONS.items()
             for kind, text in variants.items() if isinstance(text, str)}
    found["HumanEval_23_strlen crashes"] = ("HumanEval_23_strlen", "    kill -SEGV $$\n")
    found["HumanEval_23_strlen the call's own shell killed"] = ("HumanEval_23_strlen", WRONG + "    kill -KILL $BASHPID\n")
    for attack in IN_PROCESS:
        found[f"HumanEval_23_strlen {attack}"] = ("HumanEval_23_strlen", ATTACKS[attack][0])
    return found


@pytest.mark.slow
def test_passk_agrees_with_multipl_e(docker_client) -> None:  # type: ignore[no-untyped-def]
    found = compare_with_multipl_e(docker_client, "bash", "sh", programs(), DIFFERENCES)
    # Every difference is a pass MultiPL-E gives and passk does not.
    assert all(found.reference[label]["passed"] and found.outcomes[label].verdict is not Verdict.PASSED
               for label in found.differ)
    assert all(found.outcomes[f"{problem} correct"].verdict is Verdict.PASSED for problem in SOLUTIONS)
