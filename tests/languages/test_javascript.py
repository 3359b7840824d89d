"""JavaScript end to end: HumanEval-X's 164 canonical solutions, broken variants, MultiPL-E rows and a stdio
problem, through the API over HTTP, a worker process, and the JavaScript sandbox image (built on demand)."""

from __future__ import annotations

import pytest

from sandbox.languages.javascript import tests_program as wrap_tests
from tests.e2e.conftest import Stack
from tests.languages.conftest import DATA, exceptions, humaneval_x_rows
from tests.languages.endtoend import Case, check_language, humaneval_x_case

# Broken completions of JavaScript/0 (`const hasCloseElements = (numbers, threshold) => {`), each with the
# verdict passk must give it.
WRONG = "  return false;\n}\n"
VARIANTS = {
    # HumanEval-X's tests use console.assert, which only prints; passk makes a failed one throw.
    "wrong answer": (WRONG, "failed"),
    "syntax error": ("  return (;\n}\n", "error"),
    "runtime exception": ("  throw new Error('boom');\n}\n", "error"),
    "type error": ("  return null.length;\n}\n", "error"),
    "infinite loop": ("  while (true) { }\n}\n", "timeout"),
    "memory hog": ("  const hog = [];\n  while (true) hog.push(new Array(1 << 20).fill(1.5));\n}\n", "memory"),
    "early process.exit(0)": ("  process.exit(0);\n}\n", "failed"),
    # The candidate's top-level code runs before the tests.
    "top-level process.exit(0)": (WRONG + "process.exit(0);\n", "failed"),
    # ... or turns the failed tests' exit status into 0 on the way out (node's atexit).
    "exit handler exitCode 0": (WRONG + "process.on('exit', () => { process.exitCode = 0; });\n", "failed"),
    "exit handler exit(0)": (WRONG + "process.on('exit', () => process.exit(0));\n", "failed"),
    # ... or silences the tests' assertions (console.assert is not writable).
    "console.assert replaced": (WRONG + "console.assert = () => {};\n", "failed"),
    "uncaught exceptions swallowed": (WRONG + "process.on('uncaughtException', () => {});\n", "failed"),
    "top-level code that does nothing": (None, "passed"),
}

M_COMPLETIONS = {
    "HumanEval_23_strlen": [
        ("strlen", "  return string.length;\n}\n", "passed"),
        ("strlen wrong", "  return 0;\n}\n", "failed"),
    ],
    "HumanEval_8_sum_product": [
        ("sum_product", "  return [numbers.reduce((a, b) => a + b, 0), numbers.reduce((a, b) => a * b, 1)];\n}\n",
         "passed"),
        ("sum_product wrong", "  return [0, 1];\n}\n", "failed"),
    ],
    "HumanEval_2_truncate_number": [
        ("truncate_number", "  return number % 1.0;\n}\n", "passed"),
        ("truncate_number exception", "  return number.nope();\n}\n", "error"),
    ],
}

STDIO_CASES = [{"input": "1 2\n", "output": "3\n"}, {"input": "40 2\n5 5\n", "output": "42\n10\n"}]
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
    rows = humaneval_x_rows("js")
    assert len(rows) == 164
    canonical_0 = rows[0]["canonical_solution"]
    variants = {label: (completion if completion is not None else canonical_0 + "const passkQuiet = 1;\n", verdict)
                for label, (completion, verdict) in VARIANTS.items()}
    m_samples = [(label, name, completion, verdict) for name, entries in M_COMPLETIONS.items()
                 for label, completion, verdict in entries]
    results = check_language(stack, "javascript", {
        "humaneval-x-js": humaneval_x_case(rows, exceptions("javascript"), variants, "javascript", time_limit_s=3.0),
        "multipl-e-js": Case(multipl_e_file=DATA / "multipl-e" / "js.jsonl", samples=m_samples),
        "stdio-js": Case(
            dataset={"language": "javascript", "time_limit_s": 3.0, "problems": [
                {"format": "stdio", "id": "sum", "cases": STDIO_CASES}]},
            samples=[("stdio", "sum", STDIO_SOLUTION, "passed"),
                     ("stdio wrong", "sum", STDIO_SOLUTION.replace("a + b", "a - b"), "failed")],
        ),
    })
    assert "AssertionError" in results["wrong answer"]["detail"]
    assert "pass token" in results["early process.exit(0)"]["detail"]
    assert "SyntaxError" in results["syntax error"]["detail"]
