"""TypeScript end to end (it has no HumanEval-X set): MultiPL-E rows with right, wrong, ill-typed and broken
completions, and a stdio problem, through the API over HTTP, a worker process, and the TypeScript sandbox image
(built on demand). The judge and the candidate are compiled apart: the candidate's own type errors are its
compile error; the tests are type-checked against the prompt's signature in the judge's build."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.test_javascript import multipl_e_canonical

M_COMPLETIONS = {
    "HumanEval_23_strlen": {
        "strlen": ("  return string.length;\n}\n", "passed"),
        "wrong answer": ("  return 0;\n}\n", "failed"),
        # MultiPL-E's harness runs tsc first: a program that does not type-check fails there.
        "type error": ("  return string;\n}\n", "compile_error"),
        "syntax error": ("  return (;\n}\n", "compile_error"),
        "runtime exception": ("  throw new Error('boom');\n}\n", "error"),
        "infinite loop": ("  while (true) { }\n}\n", "timeout"),
        "memory hog": ("  const hog: number[][] = [];\n  while (true) hog.push(new Array(1 << 20).fill(1.5));\n}\n",
            "memory"),
        "early process.exit(0)": ("  (globalThis as any).process.exit(0);\n  return 0;\n}\n", "failed"),
        "top-level process.exit(0)": ("  return 0;\n}\n(globalThis as any).process.exit(0);\n", "failed"),
        "console.assert replaced": ("  return 0;\n}\n(console as any).assert = () => {};\n", "failed"),
    },
    "HumanEval_8_sum_product": {
        "sum_product": ("  return [numbers.reduce((a, b) => a + b, 0), numbers.reduce((a, b) => a * b, 1)];\n}\n",
            "passed"),
        "sum_product wrong tuple type": ("  return [0];\n}\n", "compile_error"),
    },
    "HumanEval_2_truncate_number": {
        "truncate_number": ("  return number % 1.0;\n}\n", "passed"),
    },
    # An object type in the signature; the object crosses with its keys in order.
    "HumanEval_111_histogram": {
        "histogram": (
            "  const counts: {[key: string]: number} = {};\n"
            "  for (const word of test.split(' ')) if (word) counts[word] = (counts[word] || 0) + 1;\n"
            "  const most = Math.max(0, ...Object.values(counts));\n"
            "  const out: {[key: string]: number} = {};\n"
            "  for (const [key, n] of Object.entries(counts)) if (n === most) out[key] = n;\n  return out;\n}\n",
            "passed"),
        "histogram as a Map": ("  return new Map([['a', 1]]) as any;\n}\n", "failed"),
    },
}

STDIO_SOLUTION = (
    "declare var require: any;\n"
    "const lines: string[] = require('fs').readFileSync(0, 'utf8').trim().split('\\n');\n"
    "for (const line of lines) { const [a, b] = line.split(' ').map(Number); console.log(a + b); }\n"
)


@pytest.mark.slow
def test_typescript_end_to_end(stack: Stack) -> None:
    results = endtoend.check_language(stack, "typescript", {
        "multipl-e-ts": endtoend.multipl_e_case("ts", multipl_e_canonical("ts", typed=True, more=M_COMPLETIONS)),
        # The compile error is a type error.
        "stdio-ts": endtoend.stdio_case(
            "typescript", STDIO_SOLUTION, compile_error=STDIO_SOLUTION.replace("string[]", "number")
        ),
    })
    assert "TS2322" in results["type error"]["detail"], results["type error"]
    assert "before its tests finished" in results["early process.exit(0)"]["detail"]
    assert "boom" in results["runtime exception"]["detail"], results["runtime exception"]
