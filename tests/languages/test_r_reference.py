"""R against MultiPL-E's own evaluation (evaluation/src/eval_r.py: `Rscript <file>`, safe_subprocess's 15 s, exit
status 0 passes), run in the same R image on the same programs: every completion of
tests/data/multipl-e/solutions/r.json (right, wrong, raising, looping, memory-hungry, quitting early, not parsing),
a crash, and the forged-pass attacks that do not reach outside the one process. passk and MultiPL-E agree on every
program but those listed in tests/data/multipl_e_differences.json, each with its reason (all of them forged passes
MultiPL-E accepts)."""

from __future__ import annotations

import json

import pytest

from sandbox.images import ensure_language_image, toolchain_version
from sandbox.languages import get
from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA, multipl_e_rows
from tests.languages.reference import run_reference
from tests.languages.test_javascript_hostile import run_parallel
from tests.languages.test_lua_hostile import job
from tests.languages.test_r_hostile import ATTACKS

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "r.json").read_text())
DIFFERENCES = json.loads((DATA / "multipl_e_differences.json").read_text())["r"]
# Attacks that stay inside the program's own process (the others signal or kill every process of their uid, the
# reference harness's too).
IN_PROCESS = ("stopifnot, identical, all.equal and isTRUE redefined", "the tests' function taken over by an active binding",
              "an object whose all.equal method says yes", "quit(status = 0) at the top level",
              "quit(status = 0) in the call", "q('no') in the call", ".Last, exit finalizers and error hooks",
              "an error condition that says PASS", "the environment and /proc", "lines that look like a pass")


def programs() -> dict[str, tuple[str, str]]:
    """label -> (problem, completion)."""
    found = {f"{problem} {kind}": (problem, text) for problem, variants in SOLUTIONS.items()
             for kind, text in variants.items() if isinstance(text, str)}
    found["HumanEval_23_strlen crashes"] = ("HumanEval_23_strlen", "\n  tools::pskill(Sys.getpid(), 11L)\n}\n")
    for attack in IN_PROCESS:
        found[f"HumanEval_23_strlen {attack}"] = ("HumanEval_23_strlen", ATTACKS[attack][0])
        found[f"HumanEval_14_all_prefixes {attack}"] = ("HumanEval_14_all_prefixes", ATTACKS[attack][0])
    return found


@pytest.mark.slow
def test_passk_agrees_with_multipl_e(docker_client) -> None:  # type: ignore[no-untyped-def]
    language = get("r")
    image = ensure_language_image(docker_client, language)
    version = toolchain_version(docker_client, image, language)
    rows = {row["name"]: row for row in multipl_e_rows("r")}
    chosen = programs()
    reference = run_reference(docker_client, image, language, {
        label: rows[problem]["prompt"] + completion + "\n" + rows[problem]["tests"]
        for label, (problem, completion) in chosen.items()})
    jobs = [job(language, version, rows[problem], completion, label) for label, (problem, completion) in chosen.items()]
    outcomes = {j.id: o for j, o in zip(jobs, run_parallel(docker_client, image, jobs), strict=True)}
    assert not [label for label, o in outcomes.items() if o.verdict is Verdict.SANDBOX_ERROR]
    differ = {label for label in chosen if (outcomes[label].verdict is Verdict.PASSED) != reference[label]["passed"]}
    assert differ == set(DIFFERENCES), {label: (outcomes[label].verdict.value, reference[label]["exit_code"])
                                        for label in differ ^ set(DIFFERENCES)}
    # Every difference is a pass MultiPL-E gives and passk does not.
    assert all(reference[label]["passed"] and outcomes[label].verdict is not Verdict.PASSED for label in differ)
    assert all(outcomes[f"{problem} correct"].verdict is Verdict.PASSED for problem in SOLUTIONS)
