"""Clojure against MultiPL-E's own evaluation (evaluation/src/eval_clj.py: the Clojure CLI's `clojure
-J-Dclojure.main.report=stderr -M <file>`, here the JVM command it runs, as Debian's `clojure` script takes neither
option; 15 s; a pass is exit status 0 with clojure.test's summary "0 failures, 0 errors." on stdout), run in the
same Clojure image on the same programs: the right, wrong, raising, exiting and unreadable completions of one
problem (not the looping one, which would spin for MultiPL-E's whole 15 s, nor the memory-hungry one, which fills
the JVM's default heap five times over there), the right and wrong ones of one more (a vector of nils), a problem
whose prompt does not read, a crash of the JVM, and the forged-pass attacks that do not reach outside the one
process (its early exits are the exiting completion's). passk and MultiPL-E agree on every program but those listed
in tests/data/multipl_e_differences.json, each with its reason (all of them forged passes MultiPL-E accepts)."""

from __future__ import annotations

import json

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA
from tests.languages.reference import compare_with_multipl_e
from tests.languages.test_clojure import BROKEN
from tests.languages.test_clojure_hostile import ATTACKS

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "clj.json").read_text())
DIFFERENCES = json.loads((DATA / "multipl_e_differences.json").read_text())["clojure"]
# Attacks that stay inside the program's own process (the others signal or kill every process of their uid, the
# reference harness's too).
IN_PROCESS = ("clojure.test's is redefined", "clojure.test's report replaced", "equality patched",
              "an object equal to everything", "lines that look like a pass")
# Problems whose right and wrong answers both harnesses judge, beside every completion of HumanEval_53_add.
COMPARED = ("HumanEval_53_add", "HumanEval_136_largest_smallest_integers")


def programs() -> dict[str, tuple[str, str]]:
    """label -> (problem, completion)."""
    found = {f"{problem} {kind}": (problem, text) for problem in COMPARED for kind, text in SOLUTIONS[problem].items()
             if kind in ("correct", "wrong")}
    found.update({f"HumanEval_53_add {kind}": ("HumanEval_53_add", text) for kind, text in BROKEN.items()
                  if kind not in ("loops", "memory")})
    found["HumanEval_12_longest correct"] = ("HumanEval_12_longest", SOLUTIONS["HumanEval_12_longest"]["correct"])
    found["HumanEval_53_add crashes"] = (
        "HumanEval_53_add", "  (let [f (.getDeclaredField sun.misc.Unsafe \"theUnsafe\")]\n"
        "    (.setAccessible f true)\n    (.putAddress ^sun.misc.Unsafe (.get f nil) 0 0)))\n")
    for attack in IN_PROCESS:
        found[f"HumanEval_53_add {attack}"] = ("HumanEval_53_add", ATTACKS[attack][0])
    return found


@pytest.mark.slow
def test_passk_agrees_with_multipl_e(docker_client) -> None:  # type: ignore[no-untyped-def]
    found = compare_with_multipl_e(docker_client, "clojure", "clj", programs(), DIFFERENCES)
    # Every difference is a pass MultiPL-E gives and passk does not.
    assert all(found.reference[label]["passed"] and found.outcomes[label].verdict is not Verdict.PASSED
               for label in found.differ)
    assert all(found.outcomes[f"{problem} correct"].verdict is Verdict.PASSED for problem in COMPARED)
