"""Standard input / output problems: the driver runs the program once per case.

See driver.py for how a case runs and compare.py for the comparison policies.
"""

from __future__ import annotations

from typing import Any

from sandbox.runtime.compare import DEFAULT_ABS_TOL, DEFAULT_POLICY, DEFAULT_REL_TOL
from service.formats.harness import driver_program
from service.formats.limits import case_time_limit_s
from service.problems import Program


def program(problem: Any, completion: str) -> Program:
    return driver_program(
        {
            "mode": "stdio",
            "source": completion,
            "setup": problem.setup_code or "",
            "cases": problem.cases,
            "policy": problem.comparison or DEFAULT_POLICY,
            "abs_tol": DEFAULT_ABS_TOL if problem.abs_tol is None else problem.abs_tol,
            "rel_tol": DEFAULT_REL_TOL if problem.rel_tol is None else problem.rel_tol,
            "case_time_limit_s": case_time_limit_s(problem),
        }
    )
