"""OCaml against MultiPL-E's own evaluation (evaluation/src/eval_ocaml.py: `ocaml <file>`, the toplevel, under
safe_subprocess's 15 s; exit status 0 passes), run in the same OCaml image on the same programs: every completion of
tests/data/multipl-e/solutions/ml.json (right, wrong, raising, looping, memory-hungry, exiting early, not parsing,
and the problems whose own code does not compile), a crash, and the forged-pass attacks that stay inside the one
process. passk and MultiPL-E agree on every program but those listed in tests/data/multipl_e_differences.json, each
with its reason (all of them forged passes MultiPL-E accepts)."""

from __future__ import annotations

import json

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA
from tests.languages.reference import compare_with_multipl_e
from tests.languages.test_ocaml_hostile import ATTACKS

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "ml.json").read_text())
DIFFERENCES = json.loads((DATA / "multipl_e_differences.json").read_text())["ocaml"]
# Attacks that stay inside the program's own process and need nothing but OCaml's standard library (the toplevel
# MultiPL-E runs loads no Unix, and no passk_wire); the others signal or kill every process of their uid.
IN_PROCESS = ("equality redefined", "an at_exit handler that exits 0", "an uncaught-exception handler that exits 0",
              "exit 0 at the top level", "exit 0 in the call", "an exception that says PASS",
              "the environment and /proc")
KINDS = ("correct", "wrong", "throws", "loops", "exits", "memory", "syntax_error", "exit_top_level")


def programs() -> dict[str, tuple[str, str]]:
    """label -> (problem, completion)."""
    found = {f"{problem} {kind}": (problem, text) for problem, variants in SOLUTIONS.items()
             for kind, text in variants.items() if kind in KINDS}
    found["HumanEval_23_strlen crashes"] = ("HumanEval_23_strlen", ' ignore (Sys.command "kill -SEGV $PPID"); 0\n')
    for attack in IN_PROCESS:
        found[f"HumanEval_85_add {attack}"] = ("HumanEval_85_add", ATTACKS[attack][0])
    return found


@pytest.mark.slow
def test_passk_agrees_with_multipl_e(docker_client) -> None:  # type: ignore[no-untyped-def]
    found = compare_with_multipl_e(docker_client, "ocaml", "ml", programs(), DIFFERENCES)
    # Every difference is a pass MultiPL-E gives and passk does not.
    assert all(found.reference[label]["passed"] and found.outcomes[label].verdict is not Verdict.PASSED
               for label in found.differ)
    assert all(found.outcomes[f"{problem} correct"].verdict is Verdict.PASSED
               for problem, variants in SOLUTIONS.items() if "unsolvable" not in variants)
