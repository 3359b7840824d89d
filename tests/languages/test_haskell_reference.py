"""Haskell against MultiPL-E's own evaluation (evaluation/src/eval_hs.py: `runghc <file>` under safe_subprocess's
15 s; exit status 0 passes), run in the same Haskell image on the same programs: completions of
tests/data/multipl-e/solutions/hs.json (right ones of problems of several types; for two problems also the wrong,
raising, looping, memory-hungry and unparsable ones), a crash, and the forged-pass attacks that stay inside the one
process. passk and MultiPL-E agree on every program but those listed in tests/data/multipl_e_differences.json, each
with its reason (all of them forged passes MultiPL-E accepts)."""

from __future__ import annotations

import json

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA
from tests.languages.reference import compare_with_multipl_e
from tests.languages.test_haskell_hostile import ATTACKS, FFI

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "hs.json").read_text())
DIFFERENCES = json.loads((DATA / "multipl_e_differences.json").read_text())["haskell"]
# Attacks that stay inside the program's own process (the others signal or trace every process of their uid, the
# reference harness's too, or write on descriptors only passk's sandbox gives).
IN_PROCESS = ("exit(0) through the C library in the call", "== of its own", "a main of its own",
              "an error that says PASS")
KINDS = ("correct", "wrong", "throws", "loops", "memory", "syntax_error")
# Problems whose every completion is compared, and those whose right answer is (runghc takes seconds a program; the
# end-to-end test passes every right answer through passk).
CHOSEN = ("HumanEval_23_strlen", "HumanEval_53_add")
RIGHT_ONLY = ("HumanEval_89_encrypt", "HumanEval_96_count_up_to", "HumanEval_2_truncate_number")


def programs() -> dict[str, tuple[str, str]]:
    """label -> (problem, completion)."""
    found = {f"{problem} {kind}": (problem, text) for problem, variants in SOLUTIONS.items()
             for kind, text in variants.items() if kind in KINDS and (problem in CHOSEN or (problem in RIGHT_ONLY and kind == "correct"))}
    found["HumanEval_23_strlen crashes"] = ("HumanEval_23_strlen", " passkRaise 11 `seq` (-7)\n" + FFI)
    for attack in IN_PROCESS:
        found[f"HumanEval_53_add {attack}"] = ("HumanEval_53_add", ATTACKS[attack][0])
    return found


@pytest.mark.slow
def test_passk_agrees_with_multipl_e(docker_client) -> None:  # type: ignore[no-untyped-def]
    found = compare_with_multipl_e(docker_client, "haskell", "hs", programs(), DIFFERENCES)
    # Every difference is a pass MultiPL-E gives and passk does not.
    assert all(found.reference[label]["passed"] and found.outcomes[label].verdict is not Verdict.PASSED
               for label in found.differ)
    assert all(found.outcomes[f"{problem} correct"].verdict is Verdict.PASSED for problem in CHOSEN + RIGHT_ONLY)
