"""PHP end to end: MultiPL-E's PHP rows with right and wrong completions, broken variants (an exception, an infinite
loop, a memory hog, an early exit, a syntax error) and a stdio problem, through the API over HTTP, a worker process
and the PHP sandbox image (built on demand); and the split of every stored MultiPL-E PHP row into a judge and a
candidate (no container)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import get, php, split
from sandbox.languages.base import ReferencePass
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import DATA, multipl_e_rows

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "php.json").read_text())
# The verdict of each kind of completion in tests/data/multipl-e/solutions/php.json.
VERDICTS = {"correct": "passed", "wrong": "failed", "throws": "error", "loops": "timeout", "exits": "failed",
            "memory": "memory", "syntax_error": "error"}
# Problems no completion can pass (their note says why): every completion is an error (the judge cannot load).
UNSOLVABLE = {problem for problem, variants in SOLUTIONS.items() if "unsolvable" in variants}


def completions() -> dict[str, dict[str, tuple[str, str]]]:
    """problem -> label -> (completion, verdict): every completion of the solutions file."""
    return {problem: {f"{problem} {kind}": (text, "error" if problem in UNSOLVABLE else VERDICTS[kind])
                      for kind, text in variants.items() if kind in VERDICTS}
            for problem, variants in SOLUTIONS.items()}


STDIO_SOLUTION = "<?php\nwhile (($line = fgets(STDIN)) !== false) {\n    [$a, $b] = array_map('intval', preg_split('/\\s+/', trim($line)));\n    echo $a + $b, \"\\n\";\n}\n"


def test_every_row_splits_into_a_judge_and_a_candidate() -> None:
    rows = multipl_e_rows("php")
    assert len(rows) == 25 and set(SOLUTIONS) <= {row["name"] for row in rows} and len(SOLUTIONS) - len(UNSOLVABLE) >= 10
    for row in rows:
        completion = SOLUTIONS.get(row["name"], {}).get("correct", "    return null;\n}\n")
        programs = php.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], completion))
        candidate, judge = programs.candidate["main.php"], programs.judge["main.php"]
        name = row["name"].split("_", 2)[2]
        # The candidate is the original program up to its tests; the tests are the judge's alone.
        assert candidate == row["prompt"] + completion + "\n" + php.serve_statement(name)
        assert row["tests"] in judge and completion not in judge and "Test failed!" not in candidate
        assert judge.startswith(row["prompt"][:row["prompt"].rindex("function ")])
        assert f"return \\PasskJudge::call('{name}', func_get_args());" in judge


def test_stub_keeps_the_signature() -> None:
    cases = {
        "function f($a, $b) {": ("f", "function f($a, $b) {\n    return \\PasskJudge::call('f', func_get_args());\n}\n"),
        "function g(): array {": ("g", "function g(): array {\n    return \\PasskJudge::call('g', func_get_args());\n}\n"),
        "function h(int $x = 5, string ...$rest): ?int {":
            ("h", "function h(int $x = 5, string ...$rest): ?int {\n    return \\PasskJudge::call('h', func_get_args());\n}\n"),
        "function k($s = 'a) {') {": ("k", "function k($s = 'a) {') {\n    return \\PasskJudge::call('k', func_get_args());\n}\n"),
    }
    for signature, (name, stub) in cases.items():
        head = "<?php\n// A comment with function x($y) {\n/* function nope() { */\n# >>> f(1)\n" + signature + "\n"
        parts = php.split_problem(split.TestSource("multipl-e", head, "test();\n", "    return 1;\n}\n"))
        assert parts.entry.name == name and php.stub(parts) == stub
        assert parts.before == head[:head.index(signature)]
    for bad in ("<?php\nfunction f(&$a) {\n", "<?php\n$x = 1;\n", "<?php\nclass A {\n    function f($a) {\n",
                "<?php\nfunction f($a): void {\n", "<?php\nfunction f($a) {\n    if ($a) {\n"):
        with pytest.raises(split.SplitError):
            php.programs(split.TestSource("multipl-e", bad, "test();\n", "}\n"))


def test_reference_rule() -> None:
    language = get("php")
    assert language.reference_commands == ("php main.php",) and language.reference_pass == ReferencePass(timeout_s=15.0)
    assert language.reference_pass.passes(0, "", "PHP Warning: x") and not language.reference_pass.passes(255, "", "")
    assert language.candidate_argv(256 << 20) == ("php", "-d", "auto_prepend_file=/opt/passk/php/server.php", "main.php")
    assert language.run_argv(256 << 20) == ("php", "main.php") and language.run_code_names == ("php",)


@pytest.mark.slow
def test_php_end_to_end(stack: Stack) -> None:
    multipl_e = endtoend.multipl_e_case("php", completions())
    results = endtoend.check_language(stack, "php", {
        "multipl-e-php": multipl_e,
        "stdio-php": endtoend.stdio_case("php", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("$a + $b", "$a - $b"), more=(
            ("stdio syntax error", "<?php\necho 1 +;\n", "error"),
            ("stdio exception", "<?php\nthrow new RuntimeException('boom');\n", "error"),
        )),
    })
    assert "Uncaught Exception: Test failed!" in results["HumanEval_53_add wrong"]["detail"]
    assert "raised Exception: boom" in results["HumanEval_53_add throws"]["detail"]
    exits = results["HumanEval_53_add exits"]
    assert "before its tests finished" in exits["detail"] and "ended_early" in exits["flags"]
    assert "PHP Parse error" in results["HumanEval_53_add syntax_error"]["detail"]
    assert "Cannot redeclare strlen()" in results["HumanEval_23_strlen correct"]["detail"]
    endtoend.assert_toolchain(stack, "php", "multipl-e-php", "PHP 8.2")
