"""Ruby end to end: MultiPL-E's Ruby rows with right and wrong completions, broken variants (an exception, an
infinite loop, a memory hog, early exits, a syntax error) and a stdio problem, through the API over HTTP, a worker
process and the Ruby sandbox image (built on demand); and the split of every stored MultiPL-E Ruby row into a judge
and a candidate (no container)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import get, ruby, split
from sandbox.languages.base import ReferencePass
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import DATA, labelled_completions, multipl_e_rows

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "rb.json").read_text())
# The verdict of each kind of completion in tests/data/multipl-e/solutions/rb.json.
VERDICTS = {"correct": "passed", "wrong": "failed", "throws": "error", "loops": "timeout", "exits": "failed",
            "exit_bang": "failed", "memory": "memory", "syntax_error": "error"}


STDIO_SOLUTION = "STDIN.each_line do |line|\n  a, b = line.split.map(&:to_i)\n  puts a + b\nend\n"


def test_every_row_splits_into_a_judge_and_a_candidate() -> None:
    rows = multipl_e_rows("rb")
    assert len(rows) == 25 and set(SOLUTIONS) == {row["name"] for row in rows}
    for row in rows:
        completion = SOLUTIONS[row["name"]]["correct"]
        programs = ruby.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], completion))
        candidate, judge = programs.candidate["main.rb"], programs.judge["main.rb"]
        # The candidate is the original program up to its tests; the tests are the judge's alone.
        assert candidate == row["prompt"] + completion + "\n" + ruby.serve_statement(row["name"].split("_", 2)[2])
        assert row["tests"] in judge and completion not in judge and "candidate" not in candidate
        assert judge.startswith(row["prompt"][:row["prompt"].rindex("def ")]) and "::PasskJudge.call(" in judge


def test_stub_keeps_the_signature() -> None:
    cases = {
        "def f(a, b)": "def f(a, b)\n  ::PasskJudge.call('f', [a, b])\nend\n",
        "def g": "def g\n  ::PasskJudge.call('g', [])\nend\n",
        "def h?(x = [1, 2], *rest)": "def h?(x = [1, 2], *rest)\n  ::PasskJudge.call('h?', [x, *rest])\nend\n",
        "def k(s = \"(a, b)\")": "def k(s = \"(a, b)\")\n  ::PasskJudge.call('k', [s])\nend\n",
    }
    for signature, stub in cases.items():
        head = "# A comment with def x(y) and an end\n=begin\ndef nope\n=end\n" + signature + "\n"
        parts = ruby.split_problem(split.TestSource("multipl-e", head, "p 1\n", "  1\nend\n"))
        assert ruby.stub(parts) == stub
        assert parts.before == head[:head.index(signature)]
    for bad in ("def f(a:, b: 2)\n", "def f(&block)\n", "def f(**options)\n", "x = 1\n", "class A\n  def f(a)\n",
                "def f(a)\n  x = 1\n"):
        with pytest.raises(split.SplitError):
            ruby.programs(split.TestSource("multipl-e", bad, "p 1\n", "end\n"))


def test_reference_rule() -> None:
    language = get("ruby")
    assert language.reference_commands == ("ruby main.rb",) and language.reference_pass == ReferencePass(timeout_s=5.0)
    assert language.reference_pass.passes(0, "", "warning") and not language.reference_pass.passes(1, "", "")
    assert not language.reference_pass.passes(0, "", "", timed_out=True)
    assert language.candidate_argv(256 << 20) == ("ruby", "-r/opt/passk/ruby/server.rb", "main.rb")
    assert language.run_argv(256 << 20) == ("ruby", "main.rb")


@pytest.mark.slow
def test_ruby_end_to_end(stack: Stack) -> None:
    multipl_e = endtoend.multipl_e_case("rb", labelled_completions(SOLUTIONS, VERDICTS))
    results = endtoend.check_language(stack, "ruby", {
        "multipl-e-rb": multipl_e,
        "stdio-rb": endtoend.stdio_case("ruby", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("a + b", "a - b"), more=(
            ("stdio syntax error", "puts(1 +\n", "error"),
            ("stdio exception", "raise 'boom'\n", "error"),
        )),
    })
    assert "AssertionFailedError" in results["HumanEval_23_strlen wrong"]["detail"]
    assert "ArgumentError: boom" in results["HumanEval_23_strlen throws"]["detail"]
    for early in ("HumanEval_23_strlen exits", "HumanEval_23_strlen exit_bang"):
        assert "before its tests finished" in results[early]["detail"] and "ended_early" in results[early]["flags"]
    assert "syntax error" in results["HumanEval_23_strlen syntax_error"]["detail"]
    endtoend.assert_toolchain(stack, "ruby", "multipl-e-rb", "ruby 3.1")
