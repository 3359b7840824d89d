"""Problem formats: how each kind of problem becomes a self-checking program, and how rows load.

| format      | from                              | the program                                                     |
|-------------|-----------------------------------|-----------------------------------------------------------------|
| `humaneval` | HumanEval rows                    | judge: prompt + test + `check(entry_point)`; candidate: prompt + completion |
| `mbpp`      | MBPP rows (`text`, `test_list`)   | judge: test_setup_code + the asserts; candidate: setup + completion |
| `stdio`     | APPS, CodeContests, LiveCodeBench | the driver feeds each case on stdin, compares stdout            |
| `call`      | APPS `fn_name`, LiveCodeBench     | the driver calls `fn_name(*input)`, compares the result         |

The candidate's code never runs in the process that judges it: trusted_tests.py
(HumanEval, MBPP) calls it in a child process over a pipe, driver.py (stdio,
call) runs each case in a child. Every program passes only by returning
normally (see sandbox/runtime/supervisor.py).
Comparison policies are documented in sandbox/runtime/compare.py; the judges are sandbox/runtime/trusted_tests.py and driver.py.
"""

from __future__ import annotations

from typing import Any

from service.problems import Program

FORMATS = ("humaneval", "mbpp", "stdio", "call")


def program_for_format(format_: str, problem: Any, completion: str) -> Program:
    # Imported here: each module pulls in only what its format needs.
    if format_ == "mbpp":
        from service.formats import mbpp

        return mbpp.program(problem, completion)
    if format_ == "stdio":
        from service.formats import stdio

        return stdio.program(problem, completion)
    if format_ == "call":
        from service.formats import call

        return call.program(problem, completion)
    if format_ == "run":
        from service.formats import run

        return run.program(problem, completion)
    raise ValueError(f"unknown problem format {format_!r}")
