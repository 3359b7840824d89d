"""D against MultiPL-E's own evaluation (evaluation/src/eval_dlang.py: `rdmd -unittest -main <file>`, 15 s, exit
status 0 passes; Debian has no rdmd, so LDC's DMD-compatible `ldmd2 -unittest -main`, then the program), run in the
same D image on the same programs: every completion of tests/data/multipl-e/solutions/d.json (right, wrong, throwing,
looping, exiting early), a crash, compile errors, and the forged-pass attacks that do not reach outside the one
process.
passk and MultiPL-E agree on every program but those listed in tests/data/multipl_e_differences.json, each with its
reason (all of them passes MultiPL-E gives to programs whose tests did not all run and pass)."""

from __future__ import annotations

import json

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA
from tests.languages.reference import compare_with_multipl_e
from tests.languages.test_d_hostile import ATTACKS

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "d.json").read_text())
DIFFERENCES = json.loads((DATA / "multipl_e_differences.json").read_text())["d"]
# Attacks that stay inside the program's own process (the others signal or kill every process of their uid, the
# reference harness's too).
IN_PROCESS = ("exit(0) in the call", "_exit(0) in the call", "a module constructor that exits 0",
              "module destructors and atexit hooks that exit 0", "druntime's unit-test runner replaced", "its own main",
              "lines that look like a pass", "garbage on the reply descriptor", "forged answers before any call",
              "a server of its own that answers 1 to every call")


def programs() -> dict[str, tuple[str, str]]:
    """label -> (problem, completion)."""
    found = {f"{problem} {kind}": (problem, text) for problem, variants in SOLUTIONS.items()
             for kind, text in variants.items() if isinstance(text, str)}
    found["HumanEval_23_strlen crashes"] = ("HumanEval_23_strlen", "{\n    int* p = null;\n    return *p;\n}\n")
    found["HumanEval_23_strlen compile error"] = ("HumanEval_23_strlen", "{\n    return string.lenght;\n}\n")
    found["HumanEval_95_check_dict_case without its import"] = ("HumanEval_95_check_dict_case", "{\n    return false;\n}\n")
    for attack in IN_PROCESS:
        found[f"HumanEval_23_strlen {attack}"] = ("HumanEval_23_strlen", ATTACKS[attack][0])
    return found


@pytest.mark.slow
def test_passk_agrees_with_multipl_e(docker_client) -> None:  # type: ignore[no-untyped-def]
    found = compare_with_multipl_e(docker_client, "d", "d", programs(), DIFFERENCES)
    # Every difference is a pass MultiPL-E gives and passk does not.
    assert all(found.reference[label]["passed"] and found.outcomes[label].verdict is not Verdict.PASSED
               for label in found.differ)
    assert all(found.outcomes[f"{problem} correct"].verdict is Verdict.PASSED for problem in SOLUTIONS)
