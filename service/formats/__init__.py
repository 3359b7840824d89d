"""Problem formats: how each kind of problem becomes a self-checking program, and how rows load.

| format      | from                              | the program                                             |
|-------------|-----------------------------------|---------------------------------------------------------|
| `humaneval` | HumanEval rows                    | prompt + completion + test + `check(entry_point)`       |
| `mbpp`      | MBPP rows (`text`, `test_list`)   | test_setup_code + completion + the assert statements    |
| `stdio`     | APPS, CodeContests, LiveCodeBench | the driver feeds each case on stdin, compares stdout    |
| `call`      | APPS `fn_name`, LiveCodeBench     | the driver calls `fn_name(*input)`, compares the result |

Every program passes only by returning normally (see sandbox/image/supervisor.py).
Comparison policies are documented in service/formats/compare.py.
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
    raise ValueError(f"unknown problem format {format_!r}")
