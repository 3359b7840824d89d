"""Perl end to end: MultiPL-E's Perl rows with right and wrong completions, broken variants (a die, a blessed
exception, an infinite loop, a memory hog, an early exit, a syntax error) and a stdio problem, through the API over
HTTP, a worker process and the Perl sandbox image (built on demand); and the split of every stored MultiPL-E Perl
row into a judge and a candidate (no container)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import get, perl, split
from sandbox.languages.base import ReferencePass
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import DATA, labelled_completions, multipl_e_rows

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "pl.json").read_text())
# The verdict of each kind of completion in tests/data/multipl-e/solutions/pl.json.
VERDICTS = {"correct": "passed", "wrong": "failed", "throws": "error", "die_object": "error", "loops": "timeout",
            "exits": "failed", "memory": "memory", "syntax_error": "error"}


STDIO_SOLUTION = "while (my $line = <STDIN>) {\n    my ($a, $b) = split ' ', $line;\n    print $a + $b, \"\\n\";\n}\n"


def test_every_row_splits_into_a_judge_and_a_candidate() -> None:
    rows = multipl_e_rows("pl")
    assert len(rows) == 25 and set(SOLUTIONS) == {row["name"] for row in rows}
    for row in rows:
        completion = SOLUTIONS[row["name"]]["correct"]
        programs = perl.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], completion))
        candidate, judge = programs.candidate["main.pl"], programs.judge["main.pl"]
        name = row["name"].split("_", 2)[2]
        # The candidate is the original program up to its tests; the tests are the judge's alone.
        assert candidate == row["prompt"] + completion + "\n" + perl.serve_statement(name)
        assert row["tests"] in judge and completion not in judge and "testhumaneval" not in candidate
        assert judge.startswith(row["prompt"][:row["prompt"].rindex("sub ")])
        assert f"sub {name} {{\n    return PasskJudge::call('{name}', @_);\n}}\n" in judge


def test_stub_keeps_the_signature() -> None:
    cases = {
        "sub f {": "sub f {\n    return PasskJudge::call('f', @_);\n}\n",
        "sub g($$) {": "sub g($$) {\n    return PasskJudge::call('g', @_);\n}\n",
        "sub Pkg::h :prototype($) {": "sub Pkg::h :prototype($) {\n    return PasskJudge::call('Pkg::h', @_);\n}\n",
    }
    for signature, stub in cases.items():
        head = "# A comment with sub x { and a }\nuse strict;\n" + signature + "\n    my($a) = @_;\n"
        parts = perl.split_problem(split.TestSource("multipl-e", head, "print 1;\n", "    1;\n}\n"))
        assert perl.stub(parts) == stub
        assert parts.before == head[:head.index(signature)]
    for bad in ("my $x = 1;\n", "package A {\n    sub f {\n", "if (1) {\n", "sub f {\n    if (1) {\n"):
        with pytest.raises(split.SplitError):
            perl.programs(split.TestSource("multipl-e", bad, "print 1;\n", "}\n"))


def test_reference_rule() -> None:
    language = get("perl")
    assert language.reference_commands == ("perl main.pl",) and language.run_code_names == ("perl",)
    assert language.reference_pass == ReferencePass(fails_on=("ERROR",), timeout_s=15.0, captured_bytes=2048)
    assert language.reference_pass.passes(0, "ok!", "warning") and not language.reference_pass.passes(1, "", "")
    assert not language.reference_pass.passes(0, "ok!ERROR", "") and language.reference_pass.passes(0, "x" * 2048 + "ERROR", "")
    assert not language.reference_pass.passes(0, "", "", timed_out=True)
    assert language.candidate_argv(256 << 20) == ("perl", "-I/opt/passk/perl", "-MPasskServer", "main.pl")
    assert language.run_argv(256 << 20) == ("perl", "main.pl")


@pytest.mark.slow
def test_perl_end_to_end(stack: Stack) -> None:
    multipl_e = endtoend.multipl_e_case("pl", labelled_completions(SOLUTIONS, VERDICTS))
    results = endtoend.check_language(stack, "perl", {
        "multipl-e-pl": multipl_e,
        "stdio-pl": endtoend.stdio_case("perl", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("$a + $b", "$a - $b"), more=(
            ("stdio syntax error", "print(1 +;\n", "error"),
            ("stdio die", "die 'boom';\n", "error"),
        )),
    })
    assert "a test failed" in results["HumanEval_23_strlen wrong"]["detail"]
    assert "die: boom at main.pl line" in results["HumanEval_23_strlen throws"]["detail"]
    assert "raised Boom: " in results["HumanEval_23_strlen die_object"]["detail"]
    early = results["HumanEval_23_strlen exits"]
    assert "before its tests finished" in early["detail"] and "ended_early" in early["flags"]
    assert "syntax error" in results["HumanEval_23_strlen syntax_error"]["detail"]
    endtoend.assert_toolchain(stack, "perl", "multipl-e-pl", "perl 5.36")
