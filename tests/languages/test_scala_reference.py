"""Scala against MultiPL-E's own evaluation (evaluation/src/eval_scala.py: `scalac`, then `scala -cp . Problem`; a
pass wants exit status 0 and nothing on stderr), run in the same Scala image on the same programs: the completions
of tests/data/multipl-e/solutions/scala.json on one problem (right, wrong, throwing, looping, exiting early), a
compile error, and the forged-pass attacks that stay inside the one process. passk and MultiPL-E agree on every
program but those listed in tests/data/multipl_e_differences.json, each with its reason."""

from __future__ import annotations

import json

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA
from tests.languages.reference import compare_with_multipl_e
from tests.languages.test_scala import VERDICTS
from tests.languages.test_scala_hostile import ATTACKS

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "scala.json").read_text())
DIFFERENCES = json.loads((DATA / "multipl_e_differences.json").read_text())["scala"]
# One problem's right, wrong, throwing, looping and exiting answers (more problems run end to end in test_scala.py).
PROBLEMS = ("HumanEval_23_strlen",)
IN_PROCESS = ("the object's initialiser exits 0", "a shutdown hook that halts 0", "lines that look like a pass")


def programs() -> dict[str, tuple[str, str]]:
    """label -> (problem, completion)."""
    found = {f"{problem} {kind}": (problem, text) for problem in PROBLEMS
             for kind, text in SOLUTIONS[problem].items()
             if kind in VERDICTS and (kind in ("correct", "wrong") or problem == "HumanEval_23_strlen")}
    found["HumanEval_23_strlen compile error"] = ("HumanEval_23_strlen", "        string.lenght.toLong\n")
    for attack in IN_PROCESS:
        found[f"HumanEval_23_strlen {attack}"] = ("HumanEval_23_strlen", ATTACKS[attack][0])
    return found


@pytest.mark.slow
def test_passk_agrees_with_multipl_e(docker_client) -> None:  # type: ignore[no-untyped-def]
    found = compare_with_multipl_e(docker_client, "scala", "scala", programs(), DIFFERENCES)
    # Every difference is a pass MultiPL-E gives and passk does not.
    assert all(found.reference[label]["passed"] and found.outcomes[label].verdict is not Verdict.PASSED
               for label in found.differ)
    assert all(found.outcomes[f"{problem} correct"].verdict is Verdict.PASSED for problem in PROBLEMS)
