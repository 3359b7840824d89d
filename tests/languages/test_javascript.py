"""JavaScript end to end: HumanEval-X's 164 canonical solutions, broken variants, MultiPL-E rows and a stdio
problem, through the API over HTTP, a worker process, and the JavaScript sandbox image (built on demand)."""

from __future__ import annotations

import pytest

from sandbox.languages.javascript import tests_program as wrap_tests
from tests.e2e.conftest import Stack
from tests.languages import endtoend

# Broken completions of JavaScript/0 (`const hasCloseElements = (numbers, threshold) => {`), each with the
# verdict passk must give it.
WRONG = "  return false;\n}\n"
VARIANTS = {
    # HumanEval-X's tests use console.assert, which only prints; passk makes a failed one throw.
    **endtoend.broken_variants(
        wrong=WRONG,
        runtime="  throw new Error('boom');\n}\n",
        loop="  while (true) { }\n}\n",
        memory="  const hog = [];\n  while (true) hog.push(new Array(1 << 20).fill(1.5));\n}\n",
    ),
    "syntax error": ("  return (;\n}\n", "error"),
    "type error": ("  return null.length;\n}\n", "error"),
    "early process.exit(0)": ("  process.exit(0);\n}\n", "failed"),
    # The candidate's top-level code runs before the tests.
    "top-level process.exit(0)": (WRONG + "process.exit(0);\n", "failed"),
    # ... or turns the failed tests' exit status into 0 on the way out (node's atexit).
    "exit handler exitCode 0": (WRONG + "process.on('exit', () => { process.exitCode = 0; });\n", "failed"),
    "exit handler exit(0)": (WRONG + "process.on('exit', () => process.exit(0));\n", "failed"),
    # ... or silences the tests' assertions (console.assert is not writable).
    "console.assert replaced": (WRONG + "console.assert = () => {};\n", "failed"),
    "uncaught exceptions swallowed": (WRONG + "process.on('uncaughtException', () => {});\n", "failed"),
    "top-level code that does nothing": (endtoend.AfterCanonical("const passkQuiet = 1;\n"), "passed"),
}

M_COMPLETIONS = {
    "HumanEval_23_strlen": {
        "strlen": ("  return string.length;\n}\n", "passed"),
        "strlen wrong": ("  return 0;\n}\n", "failed"),
    },
    "HumanEval_8_sum_product": {
        "sum_product": ("  return [numbers.reduce((a, b) => a + b, 0), numbers.reduce((a, b) => a * b, 1)];\n}\n",
            "passed"),
        "sum_product wrong": ("  return [0, 1];\n}\n", "failed"),
    },
    "HumanEval_2_truncate_number": {
        "truncate_number": ("  return number % 1.0;\n}\n", "passed"),
        "truncate_number exception": ("  return number.nope();\n}\n", "error"),
    },
}

STDIO_SOLUTION = (
    "const lines = require('fs').readFileSync(0, 'utf8').trim().split('\\n');\n"
    "for (const line of lines) { const [a, b] = line.split(' ').map(Number); console.log(a + b); }\n"
)


def test_wrapping() -> None:
    wrapped = wrap_tests("const f = () => 1;\nconsole.assert(f() === 1);\n")
    # The prelude is one line: the program's line numbers are unchanged.
    assert wrapped.splitlines()[1] == "console.assert(f() === 1);"
    strict = wrap_tests('"use strict";\nconst f = 1;\n')
    assert strict.startswith('"use strict"; const __passk')


@pytest.mark.slow
def test_javascript_end_to_end(stack: Stack) -> None:
    results = endtoend.check_language(stack, "javascript", {
        "humaneval-x-js": endtoend.humaneval_x_case("js", "javascript", VARIANTS, time_limit_s=3.0),
        "multipl-e-js": endtoend.multipl_e_case("js", M_COMPLETIONS),
        "stdio-js": endtoend.stdio_case(
            "javascript", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("a + b", "a - b")
        ),
    })
    assert "AssertionError" in results["wrong answer"]["detail"]
    assert "pass token" in results["early process.exit(0)"]["detail"]
    assert "SyntaxError" in results["syntax error"]["detail"]
