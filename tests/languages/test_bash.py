"""Bash end to end: MultiPL-E's Bash rows with right and wrong completions, broken variants (a non-zero status, an
infinite loop, a memory hog, `exit 0` in the function and at the top level, a syntax error) and a stdio problem,
through the API over HTTP, a worker process and the Bash sandbox image (built on demand); and the split of every
stored MultiPL-E Bash row into a judge and a candidate (no container)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import bash, get, split
from sandbox.languages.base import ReferencePass
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import DATA, labelled_completions, multipl_e_rows

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "sh.json").read_text())
# The verdict of each kind of completion in tests/data/multipl-e/solutions/sh.json. A Bash function has no
# exceptions: `return 3` is a status the tests do not look at, and `exit 0` in the function ends only the command
# substitution the tests call it in, as in one program; both fail on what they printed.
VERDICTS = {"correct": "passed", "wrong": "failed", "throws": "failed", "loops": "timeout", "exits": "failed",
            "memory": "memory", "syntax_error": "error", "exit_top_level": "failed"}


STDIO_SOLUTION = "while read -r a b; do\n    echo $((a + b))\ndone\n"


def test_every_row_splits_into_a_judge_and_a_candidate() -> None:
    rows = multipl_e_rows("sh")
    assert len(rows) == 25 and set(SOLUTIONS) <= {row["name"] for row in rows} and len(SOLUTIONS) >= 10
    for row in rows:
        completion = SOLUTIONS.get(row["name"], {}).get("correct", "    echo 1\n")
        programs = bash.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], completion))
        candidate, judge = programs.candidate["main.sh"], programs.judge["main.sh"]
        name = row["name"].split("_", 2)[2]
        # The candidate is the original program up to its tests, closed as the tests close it; the tests are the
        # judge's alone.
        assert candidate == row["prompt"] + completion + "\n}" + bash.serve_statement(name)
        assert row["tests"][1:] in judge and completion not in judge and "run_test" not in candidate
        assert judge.startswith(row["prompt"][:row["prompt"].rindex(f"{name}() {{")])
        assert f"{name}() {{\n    passk_call {name} \"$@\"\n}}\n" in judge


def test_stub_keeps_the_signature() -> None:
    cases = {"f() {": "f() {\n    passk_call f \"$@\"\n}\n",
             "function g {": "function g {\n    passk_call g \"$@\"\n}\n",
             "function h_1 () {": "function h_1 () {\n    passk_call h_1 \"$@\"\n}\n"}
    for signature, stub in cases.items():
        head = "#!/bin/bash\n# A comment with x() { and a }\nset -u\n" + signature + "\n"
        parts = bash.split_problem(split.TestSource("multipl-e", head, "}\n\nf 1\n", "    echo 1\n"))
        assert bash.stub(parts) == stub
        assert parts.before == head[:head.index(signature)]
    for bad in ("x=1\n", "if true; then {\n", "f() {\n    g() {\n"):
        with pytest.raises(split.SplitError):
            bash.programs(split.TestSource("multipl-e", bad, "}\n", "    echo 1\n"))


def test_reference_rule() -> None:
    language = get("bash")
    assert language.reference_commands == ("bash main.sh",) and language.run_code_names == ("bash",)
    assert language.reference_pass == ReferencePass(timeout_s=15.0) and language.packages == ()
    assert language.reference_pass.passes(0, "", "syntax error") and not language.reference_pass.passes(1, "", "")
    assert language.candidate_argv(256 << 20) == ("env", "BASH_ENV=/opt/passk/bash/server.sh", "bash", "main.sh")
    assert language.run_argv(256 << 20) == ("bash", "main.sh")


@pytest.mark.slow
def test_bash_end_to_end(stack: Stack) -> None:
    multipl_e = endtoend.multipl_e_case("sh", labelled_completions(SOLUTIONS, VERDICTS))
    results = endtoend.check_language(stack, "bash", {
        "multipl-e-sh": multipl_e,
        "stdio-sh": endtoend.stdio_case("bash", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("a + b", "a - b"), more=(
            ("stdio syntax error", "if true; then echo\n", "error"),
        )),
    })
    assert "a test failed" in results["HumanEval_23_strlen wrong"]["detail"]
    assert '[[ $(candidate "") = "0" ]]' in results["HumanEval_23_strlen wrong"]["detail"]
    early = results["HumanEval_23_strlen exit_top_level"]
    assert "before its tests finished" in early["detail"] and "ended_early" in early["flags"]
    assert "ended_early" not in results["HumanEval_23_strlen exits"]["flags"]
    assert "syntax error" in results["HumanEval_23_strlen syntax_error"]["detail"]
    endtoend.assert_toolchain(stack, "bash", "multipl-e-sh", "bash 5.2")
