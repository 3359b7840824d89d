"""Ruby against MultiPL-E's own evaluation (evaluation/src/eval_ruby.py: `ruby <file>`, 5 s, exit status 0 passes),
run in the same Ruby image on the same programs: every completion of tests/data/multipl-e/solutions/rb.json (right,
wrong, raising, looping, memory-hungry, exiting early, not parsing), a crash, and the forged-pass attacks that do
not reach outside the one process. passk and MultiPL-E agree on every program but those listed in
tests/data/multipl_e_differences.json, each with its reason (all of them forged passes MultiPL-E accepts)."""

from __future__ import annotations

import json

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA
from tests.languages.reference import compare_with_multipl_e
from tests.languages.test_ruby_hostile import ATTACKS

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "rb.json").read_text())
DIFFERENCES = json.loads((DATA / "multipl_e_differences.json").read_text())["ruby"]
# Attacks that stay inside the program's own process (the others signal or kill every process of their uid, the
# reference harness's too).
IN_PROCESS = ("test/unit's asserts redefined", "== monkey-patched on every core class", "an object that equals anything",
              "a String subclass that equals anything", "at_exit hooks", "exit 0 at the top level", "exit! in the call",
              "exit 0 in the call", "a SystemExit raised and rescued", "the environment and /proc",
              "lines that look like a pass", "garbage on the reply descriptor", "forged answers before any call",
              "the server replaced by one that answers true")


def programs() -> dict[str, tuple[str, str]]:
    """label -> (problem, completion)."""
    found = {f"{problem} {kind}": (problem, text) for problem, variants in SOLUTIONS.items()
             for kind, text in variants.items() if isinstance(text, str)}
    found["HumanEval_23_strlen crashes"] = ("HumanEval_23_strlen", "  Process.kill('SEGV', Process.pid)\nend\n")
    for attack in IN_PROCESS:
        found[f"HumanEval_23_strlen {attack}"] = ("HumanEval_23_strlen", ATTACKS[attack][0])
    return found


@pytest.mark.slow
def test_passk_agrees_with_multipl_e(docker_client) -> None:  # type: ignore[no-untyped-def]
    found = compare_with_multipl_e(docker_client, "ruby", "rb", programs(), DIFFERENCES)
    # Every difference is a pass MultiPL-E gives and passk does not.
    assert all(found.reference[label]["passed"] and found.outcomes[label].verdict is not Verdict.PASSED
               for label in found.differ)
    assert all(found.outcomes[f"{problem} correct"].verdict is Verdict.PASSED for problem in SOLUTIONS)
