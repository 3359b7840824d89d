"""PHP against MultiPL-E's own evaluation (evaluation/src/eval_php.py: `php <file>`, safe_subprocess's 15 s, exit
status 0 passes), run in the same PHP image on the same programs: every completion of
tests/data/multipl-e/solutions/php.json (right, wrong, throwing, looping, memory-hungry, exiting early, not
parsing, and a problem no completion can pass), a crash, and the forged-pass attacks that do not reach outside the
one process. passk and MultiPL-E agree on every program but those listed in tests/data/multipl_e_differences.json,
each with its reason (all of them forged passes MultiPL-E accepts)."""

from __future__ import annotations

import json

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA
from tests.languages.reference import compare_with_multipl_e
from tests.languages.test_php import VERDICTS
from tests.languages.test_php_hostile import ATTACKS, SOLVABLE

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "php.json").read_text())
DIFFERENCES = json.loads((DATA / "multipl_e_differences.json").read_text())["php"]
# Attacks that stay inside the program's own process (the others signal or kill every process of their uid, the
# reference harness's too).
IN_PROCESS = ("the tests' own functions declared first", "an object that stands for the answer",
              "an ArrayObject for a list", "exit(0) at the top level", "exit(0) in the call",
              "die with a message in the call", "shutdown functions, destructors and an exception handler",
              "an error handler that swallows everything", "the environment and /proc", "lines that look like a pass",
              "garbage on the reply descriptor", "forged answers before any call", "a server of its own that answers true")


def programs() -> dict[str, tuple[str, str]]:
    """label -> (problem, completion)."""
    found = {f"{problem} {kind}": (problem, text) for problem, variants in SOLUTIONS.items()
             for kind, text in variants.items() if kind in VERDICTS}
    found["HumanEval_53_add crashes"] = ("HumanEval_53_add", "    posix_kill(getmypid(), SIGSEGV);\n}\n")
    for attack in IN_PROCESS:
        for problem in ("HumanEval_53_add", "HumanEval_14_all_prefixes"):
            found[f"{problem} {attack}"] = (problem, ATTACKS[attack][0])
    return found


@pytest.mark.slow
def test_passk_agrees_with_multipl_e(docker_client) -> None:  # type: ignore[no-untyped-def]
    found = compare_with_multipl_e(docker_client, "php", "php", programs(), DIFFERENCES)
    # Every difference is a pass MultiPL-E gives and passk does not; the marked exits are among them.
    assert all(found.reference[label]["passed"] and found.outcomes[label].verdict is not Verdict.PASSED
               for label in found.differ)
    assert {f"{problem} {kind}" for problem, variants in SOLUTIONS.items()
            for kind in variants.get("multipl_e_passes", {})} <= found.differ
    assert all(found.outcomes[f"{problem} correct"].verdict is Verdict.PASSED for problem in SOLVABLE)
