"""C# against MultiPL-E's own evaluation (evaluation/src/eval_cs.py: compiled with DEBUG and System.Numerics, run with
`mono` for 5 s with Debug's listener on stderr; a run fails on a failed compile, a failed Debug.Assert or an unhandled
exception in stderr, whatever its exit status), run in the same C# image on the same programs: every completion of
tests/data/multipl-e/solutions/cs.json (right, wrong, raising, looping, exiting early), one that does not compile, a
crash, and the forged-pass attacks that do not reach outside the one process. passk and MultiPL-E agree on every
program but those listed in tests/data/multipl_e_differences.json, each with its reason (all of them passes
MultiPL-E gives to programs whose tests never finished)."""

from __future__ import annotations

import json

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA
from tests.languages.reference import compare_with_multipl_e
from tests.languages.test_csharp import VERDICTS
from tests.languages.test_csharp_hostile import ATTACKS

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "cs.json").read_text())
DIFFERENCES = json.loads((DATA / "multipl_e_differences.json").read_text())["csharp"]
# Attacks that stay inside the program's own process (the others kill every process of their uid, the reference
# harness's too).
# (The attacks on the reply descriptor find nothing there in one process: the hostile tests cover them.)
IN_PROCESS = ("Debug's listeners cleared", "exit hooks", "Environment.Exit(0) in the call",
              "Environment.Exit(0) before any call", "lines that look like a pass",
              "passk's server replaced by one that answers true")


def programs() -> dict[str, tuple[str, str]]:
    """label -> (problem, completion)."""
    found = {f"{problem} {kind}": (problem, text) for problem, variants in SOLUTIONS.items()
             for kind, text in variants.items() if kind in VERDICTS}
    found["HumanEval_23_strlen does not compile"] = ("HumanEval_23_strlen", "        return str.Lenght;\n")
    found["HumanEval_23_strlen crashes"] = ("HumanEval_23_strlen",
                                            "        System.Diagnostics.Process.GetCurrentProcess().Kill();\n"
                                            "        return 0;\n")
    for attack in IN_PROCESS:
        found[f"HumanEval_23_strlen {attack}"] = ("HumanEval_23_strlen", ATTACKS[attack][0])
    return found


@pytest.mark.slow
def test_passk_agrees_with_multipl_e(docker_client) -> None:  # type: ignore[no-untyped-def]
    found = compare_with_multipl_e(docker_client, "csharp", "cs", programs(), DIFFERENCES)
    # Every difference is a pass MultiPL-E gives and passk does not.
    assert all(found.reference[label]["passed"] and found.outcomes[label].verdict is not Verdict.PASSED
               for label in found.differ)
    assert all(found.outcomes[f"{problem} correct"].verdict is Verdict.PASSED
               for problem, variants in SOLUTIONS.items() if "unsolvable" not in variants)
