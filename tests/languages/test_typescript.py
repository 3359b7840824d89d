"""TypeScript end to end (it has no HumanEval-X set): MultiPL-E rows with right, wrong, ill-typed and broken
completions, and a stdio problem, through the API over HTTP, a worker process, and the TypeScript sandbox image
(built on demand)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Stack
from tests.languages.conftest import DATA
from tests.languages.endtoend import Case, check_language

STRLEN = [
    ("strlen", "  return string.length;\n}\n", "passed"),
    ("wrong answer", "  return 0;\n}\n", "failed"),
    # MultiPL-E's harness runs tsc first: a program that does not type-check fails there.
    ("type error", "  return string;\n}\n", "compile_error"),
    ("syntax error", "  return (;\n}\n", "compile_error"),
    ("runtime exception", "  throw new Error('boom');\n}\n", "error"),
    ("infinite loop", "  while (true) { }\n}\n", "timeout"),
    ("memory hog", "  const hog: number[][] = [];\n  while (true) hog.push(new Array(1 << 20).fill(1.5));\n}\n", "memory"),
    ("early process.exit(0)", "  (globalThis as any).process.exit(0);\n  return 0;\n}\n", "failed"),
    ("top-level process.exit(0)", "  return 0;\n}\n(globalThis as any).process.exit(0);\n", "failed"),
    ("console.assert replaced", "  return 0;\n}\n(console as any).assert = () => {};\n", "failed"),
]
OTHERS = [
    ("HumanEval_8_sum_product", "sum_product",
     "  return [numbers.reduce((a, b) => a + b, 0), numbers.reduce((a, b) => a * b, 1)];\n}\n", "passed"),
    ("HumanEval_8_sum_product", "sum_product wrong tuple type", "  return [0];\n}\n", "compile_error"),
    ("HumanEval_2_truncate_number", "truncate_number", "  return number % 1.0;\n}\n", "passed"),
]

STDIO_CASES = [{"input": "1 2\n", "output": "3\n"}, {"input": "40 2\n5 5\n", "output": "42\n10\n"}]
STDIO_SOLUTION = (
    "declare var require: any;\n"
    "const lines: string[] = require('fs').readFileSync(0, 'utf8').trim().split('\\n');\n"
    "for (const line of lines) { const [a, b] = line.split(' ').map(Number); console.log(a + b); }\n"
)


@pytest.mark.slow
def test_typescript_end_to_end(stack: Stack) -> None:
    samples = [(label, "HumanEval_23_strlen", completion, verdict) for label, completion, verdict in STRLEN]
    samples += [(label, name, completion, verdict) for name, label, completion, verdict in OTHERS]
    results = check_language(stack, "typescript", {
        "multipl-e-ts": Case(multipl_e_file=DATA / "multipl-e" / "ts.jsonl", samples=samples),
        "stdio-ts": Case(
            dataset={"language": "typescript", "time_limit_s": 3.0, "problems": [
                {"format": "stdio", "id": "sum", "cases": STDIO_CASES}]},
            samples=[("stdio", "sum", STDIO_SOLUTION, "passed"),
                     ("stdio type error", "sum", STDIO_SOLUTION.replace("string[]", "number"), "compile_error")],
        ),
    })
    assert "TS2322" in results["type error"]["detail"], results["type error"]
    assert "pass token" in results["early process.exit(0)"]["detail"]
