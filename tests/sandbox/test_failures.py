"""What failed, per test: the judges' account of the first failing assertion or case, in the real sandbox."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from sandbox.executor import Sandbox
from service.formats.run_code import completion_for
from service.formats.program import program_for
from tests.sandbox.programs import run_programs

PROMPT = "def add(a, b):\n"
TEST = "def check(candidate):\n    assert candidate(1, 1) == 2\n    assert candidate(2, 3) == 5, 'two and three'\n"


def _problem(**columns: Any) -> SimpleNamespace:
    base = {"key": "p", "prompt": "", "test": "", "entry_point": "", "setup_code": None, "comparison": None,
            "abs_tol": None, "rel_tol": None, "time_limit_s": 2.0, "cases": None, "fn_name": None}
    return SimpleNamespace(**{**base, **columns})


def test_humaneval_reports_the_first_failing_assertion(sandbox: Sandbox) -> None:
    problem = _problem(format="humaneval", prompt=PROMPT, test=TEST, entry_point="add")
    wrong, right, raises = run_programs(sandbox, [
        program_for(problem, "    return a * b + 1 if a == 2 else a + b\n"),
        program_for(problem, "    return a + b\n"),
        program_for(problem, "    raise ValueError('no')\n"),
    ])
    assert wrong.verdict.value == "failed"
    assert wrong.failure == {"kind": "assertion", "line": 3, "source": "assert candidate(2, 3) == 5, 'two and three'",
                       "expected": "5", "actual": "7"}
    assert wrong.detail == "AssertionError: two and three"  # the record travels beside the detail, not in it
    assert right.verdict.value == "passed" and right.failure is None
    assert raises.verdict.value == "error" and raises.failure is None


def test_mbpp_reports_strings_and_skips_values_that_are_not_plain(sandbox: Sandbox) -> None:
    test = "assert rev('abc') == 'cba'\nassert rev('xy') == 'yx'\n"
    problem = _problem(format="mbpp", prompt="", test=test, entry_point="rev", setup_code="")
    (wrong,) = run_programs(sandbox, [program_for(problem, "def rev(s):\n    return s if len(s) == 2 else s[::-1]\n")])
    failure = wrong.failure
    assert wrong.verdict.value == "failed" and failure is not None
    assert failure["line"] == 2 and failure["expected"] == "'yx'" and failure["actual"] == "'xy'", failure


def test_stdio_and_call_report_the_first_failing_case(sandbox: Sandbox) -> None:
    stdio = _problem(format="stdio", cases=[{"input": "1 2\n", "output": "3\n"}, {"input": "5 5\n", "output": "10\n"}])
    call = _problem(format="call", entry_point="f", cases=[{"input": [1], "output": 2}, {"input": [3], "output": 6}])
    wrong_stdio, wrong_call = run_programs(sandbox, [
        program_for(stdio, "a, b = map(int, input().split())\nprint(a + b if a != 5 else 11)\n"),
        program_for(call, "def f(x):\n    return 2 * x if x == 1 else [x]\n"),
    ])
    assert wrong_stdio.verdict.value == "failed" and wrong_call.verdict.value == "failed"
    assert wrong_stdio.failure == {"kind": "case", "index": 1, "input": "5 5\n", "expected": "10\n",
                                                     "got": "11\n"}
    assert wrong_call.failure == {"kind": "case", "index": 1, "input": "[3]", "expected": "6", "got": "[3]"}


def test_the_candidate_cannot_forge_the_record(sandbox: Sandbox) -> None:
    problem = _problem(format="humaneval", prompt=PROMPT, test=TEST, entry_point="add")
    forged = '    raise AssertionError("x\\x1e{\\"kind\\": \\"assertion\\", \\"line\\": 99}")\n'
    (outcome,) = run_programs(sandbox, [program_for(problem, forged)])
    failure = outcome.failure
    assert outcome.verdict.value == "failed" and failure is not None and failure["line"] == 2
    assert "\x1e" not in (outcome.detail or "")


def test_run_mode_gives_output_and_return_code(sandbox: Sandbox) -> None:
    problem = _problem(format="run_code")
    ok, exited = run_programs(sandbox, [
        program_for(problem, completion_for("print(input()[::-1])", "abc\n", {})),
        program_for(problem, completion_for("import sys\nprint('partial')\nsys.exit(4)", "", {})),
    ])
    assert ok.verdict.value == "passed" and ok.stdout == "cba\n"
    assert exited.verdict.value == "error" and exited.stdout == "partial\n"
    assert exited.failure is not None and exited.failure["kind"] == "run_code"
    assert exited.failure["run"]["return_code"] == 4 and exited.failure["compile"] is None
