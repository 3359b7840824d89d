"""Elixir against MultiPL-E's own evaluation (evaluation/src/eval_elixir.py: `elixir <file>`, 5 s, exit status 0
passes), run in the same Elixir image on the same programs: every completion of one problem in
tests/data/multipl-e/solutions/elixir.json (right, wrong, raising, looping, memory-hungry, halting early, not
parsing), the right and wrong ones of a few more (a string, a float, nil), a crash, and the forged-pass attacks that do not reach outside the one process. passk and MultiPL-E agree
on every program but those listed in tests/data/multipl_e_differences.json, each with its reason (all of them
forged passes MultiPL-E accepts)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import get
from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA
from tests.languages.reference import compare_with_multipl_e
from tests.languages.test_elixir_hostile import ATTACKS

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "elixir.json").read_text())
DIFFERENCES = json.loads((DATA / "multipl_e_differences.json").read_text())["elixir"]
# Attacks that stay inside the program's own process (the others signal or kill every process of their uid, the
# reference harness's too).
IN_PROCESS = ("ExUnit's assertions redefined", "ExUnit's runner redefined", "an exit hook that halts with 0",
              "System.halt(0) at the top level", "System.halt(0) in the call", ":erlang.halt(0) in the call",
              "exit(:normal) in the call", "a struct of the model's own module",
              "forged answers before any call", "the server replaced by one that answers true")
# Problems whose right and wrong answers both harnesses judge, beside every completion of HumanEval_23_strlen.
COMPARED = ("HumanEval_23_strlen", "HumanEval_89_encrypt", "HumanEval_2_truncate_number", "HumanEval_12_longest")


def programs() -> dict[str, tuple[str, str]]:
    """label -> (problem, completion)."""
    found = {f"{problem} {kind}": (problem, text) for problem in COMPARED for kind, text in SOLUTIONS[problem].items()
             if isinstance(text, str) and (problem == COMPARED[0] or kind in ("correct", "wrong"))}
    found["HumanEval_23_strlen crashes"] = ("HumanEval_23_strlen", "    :erlang.halt(~c\"crash\")\n  end\nend\n")
    for attack in IN_PROCESS:
        found[f"HumanEval_23_strlen {attack}"] = ("HumanEval_23_strlen", ATTACKS[attack][0])
    return found


@pytest.mark.slow
def test_passk_agrees_with_multipl_e(docker_client) -> None:  # type: ignore[no-untyped-def]
    found = compare_with_multipl_e(docker_client, "elixir", "elixir", programs(), DIFFERENCES)
    # Every difference is a pass MultiPL-E gives and passk does not.
    assert all(found.reference[label]["passed"] and found.outcomes[label].verdict is not Verdict.PASSED
               for label in found.differ)
    assert all(found.outcomes[f"{problem} correct"].verdict is Verdict.PASSED for problem in COMPARED)
    assert get("elixir").reference_pass.timeout_s == 5.0
