"""Lua against MultiPL-E's own evaluation (evaluation/src/eval_lua.py: `lua <file>`, safe_subprocess's 15 s, exit
status 0 passes), run in the same Lua image on the same programs: every completion of
tests/data/multipl-e/solutions/lua.json (right, wrong, raising, looping, memory-hungry, exiting early, not parsing),
a crash, and the forged-pass attacks that do not reach outside the one process. passk and MultiPL-E agree on every
program but those listed in tests/data/multipl_e_differences.json, each with its reason (all of them forged passes
MultiPL-E accepts)."""

from __future__ import annotations

import json

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA
from tests.languages.reference import compare_with_multipl_e
from tests.languages.test_lua_hostile import ATTACKS

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "lua.json").read_text())
DIFFERENCES = json.loads((DATA / "multipl_e_differences.json").read_text())["lua"]
# Attacks that stay inside the program's own process (the others signal or kill every process of their uid, the
# reference harness's too).
IN_PROCESS = ("LuaUnit's asserts and runner replaced", "LuaUnit's own exit in the call", "a table that equals anything",
              "equality patched through the debug library", "finalizers and to-be-closed variables",
              "os.exit(0) at the top level", "os.exit(0) in the call", "os.exit(true, true) in the call",
              "an error object that says pass", "the environment and /proc", "lines that look like a pass",
              "garbage on the reply descriptor", "forged answers before any call",
              "the server replaced by one that answers true")


def programs() -> dict[str, tuple[str, str]]:
    """label -> (problem, completion)."""
    found = {f"{problem} {kind}": (problem, text) for problem, variants in SOLUTIONS.items()
             for kind, text in variants.items() if isinstance(text, str)}
    found["HumanEval_23_strlen crashes"] = ("HumanEval_23_strlen", "  os.execute('kill -SEGV $PPID')\nend\n")
    for attack in IN_PROCESS:
        found[f"HumanEval_23_strlen {attack}"] = ("HumanEval_23_strlen", ATTACKS[attack][0])
        found[f"HumanEval_14_all_prefixes {attack}"] = ("HumanEval_14_all_prefixes", ATTACKS[attack][0])
    return found


@pytest.mark.slow
def test_passk_agrees_with_multipl_e(docker_client) -> None:  # type: ignore[no-untyped-def]
    found = compare_with_multipl_e(docker_client, "lua", "lua", programs(), DIFFERENCES)
    # Every difference is a pass MultiPL-E gives and passk does not.
    assert all(found.reference[label]["passed"] and found.outcomes[label].verdict is not Verdict.PASSED
               for label in found.differ)
    assert all(found.outcomes[f"{problem} correct"].verdict is Verdict.PASSED for problem in SOLUTIONS)
