"""JavaScript end to end: HumanEval-X's 164 canonical solutions, broken variants, MultiPL-E rows and a stdio
problem, through the API over HTTP, a worker process, and the JavaScript sandbox image (built on demand); and the
split of every HumanEval-X and stored MultiPL-E problem into a judge and a candidate (no container)."""

from __future__ import annotations

import pytest

from sandbox.languages import javascript, split, typescript
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import humaneval_x_rows, multipl_e_rows

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
    "thrown string": ("  throw 'boom';\n}\n", "error"),
    "stack overflow": ("  return hasCloseElements(numbers, threshold);\n}\n", "error"),
    "a function returned": ("  return () => true;\n}\n", "error"),
    # The candidate's top-level code runs before its function is served, as it ran before the tests.
    "top-level process.exit(0)": (WRONG + "process.exit(0);\n", "failed"),
    "top-level exception": (WRONG + "throw new TypeError('at load');\n", "error"),
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

def multipl_e_canonical(file_language: str, typed: bool = False,
                        more: dict[str, dict[str, tuple[str, str]]] | None = None) -> dict[str, dict[str, tuple[str, str]]]:
    """A right completion of every stored MultiPL-E row (HumanEval-X's JavaScript canonical solution of the same
    problem, defined inside the function and called with its arguments; TypeScript: through `any`), or the
    completions `more` gives for it."""
    rows = {int(row["task_id"].split("/")[1]): row for row in humaneval_x_rows("js")}
    completions = {}
    for m_row in multipl_e_rows(file_language):
        if m_row["name"] in (more or {}):
            continue
        row = rows[int(m_row["name"].split("_")[1])]
        name = javascript.split_problem(split.TestSource("humaneval-x", row["declaration"], "", ""))[1].entry.name
        impl, args = ("const passkImpl: any = ((): any => {", "...(arguments as any)") if typed else \
            ("const passkImpl = (() => {", "...arguments")
        completions[m_row["name"]] = {f"{m_row['name']} canonical": (
            f"  {impl}{row['declaration']}{row['canonical_solution']}\n  return {name};\n  }})();\n"
            f"  return passkImpl({args});\n}}\n", "passed")}
    for name, labelled in (more or {}).items():
        completions.setdefault(name, {}).update(labelled)
    return completions


STDIO_SOLUTION = (
    "const lines = require('fs').readFileSync(0, 'utf8').trim().split('\\n');\n"
    "for (const line of lines) { const [a, b] = line.split(' ').map(Number); console.log(a + b); }\n"
)


def test_every_problem_splits_into_a_judge_and_a_candidate() -> None:
    rows = humaneval_x_rows("js")
    for row in rows:
        source = split.TestSource("humaneval-x", row["prompt"], row["test"], row["canonical_solution"], row["declaration"])
        programs = javascript.programs(source)
        candidate, judge = programs.candidate["main.js"], programs.judge["main.js"]
        # The candidate is the original program up to its tests; the tests are the judge's alone.
        assert candidate.startswith(row["prompt"] + row["canonical_solution"]) and row["test"] not in candidate
        assert row["test"] in judge and row["canonical_solution"] not in judge
        assert "__passk_call" in judge and ".serve(" in candidate
    for language, module, file in (("js", javascript, "main.js"), ("ts", typescript, "main.ts")):
        for row in multipl_e_rows(language):
            programs = module.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], "  return 1;\n}\n"))
            assert row["tests"] in programs.judge[file] and "candidate(" not in "".join(programs.candidate.values())


def test_entry_signatures() -> None:
    cases = {
        "const f = (a, b = [1, 2]) => {": ("f", ("a", "b"), ""),
        "function g(x){": ("g", ("x",), ""),
        "const h = x => {": ("h", ("x",), ""),
        "let k = function (s, ...rest) {": ("k", ("s", "rest"), ""),
        "function m(a: {[key: string]: number}, b?: [number, string]): Array<number> | undefined {":
            ("m", ("a", "b"), "Array<number> | undefined"),
        "const n = (a: number[]): [number, number] => {": ("n", ("a",), "[number, number]"),
    }
    for signature, (name, params, returns) in cases.items():
        head = "// comment {\nconst helper = () => { return 1; }\n" + signature + "\n"
        parsed = javascript.split_problem(split.TestSource("multipl-e", head, "f();\n", "  return 1;\n}\n"))[1]
        assert (parsed.entry.name, tuple(p for p, _ in parsed.entry.params), parsed.entry.returns) == (name, params, returns)
        assert parsed.entry.signature == signature[:-1].strip()
    stub = javascript.stub(javascript.split_problem(split.TestSource("humaneval-x", "const f = (a) => {\n", "", ""))[1])
    assert stub == 'const f = function (a) {\n  return globalThis.__passk_call("f", arguments);\n};\n'
    for bad in ("async function f(a) {\n", "function* f(a) {\n", "const x = 1;\nif (x) {\n", "class A {\n  f(a) {\n"):
        with pytest.raises(split.SplitError):
            javascript.programs(split.TestSource("multipl-e", bad, "f();\n", "}\n"))


@pytest.mark.slow
def test_javascript_end_to_end(stack: Stack) -> None:
    results = endtoend.check_language(stack, "javascript", {
        "humaneval-x-js": endtoend.humaneval_x_case("js", "javascript", VARIANTS, time_limit_s=3.0),
        "multipl-e-js": endtoend.multipl_e_case("js", multipl_e_canonical("js", more=M_COMPLETIONS)),
        "stdio-js": endtoend.stdio_case(
            "javascript", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("a + b", "a - b")
        ),
    })
    assert "AssertionError" in results["wrong answer"]["detail"]
    assert "before its tests finished" in results["early process.exit(0)"]["detail"]
    assert "RangeError" in results["stack overflow"]["detail"] and "boom" in results["thrown string"]["detail"]
    assert "SyntaxError" in results["syntax error"]["detail"]
