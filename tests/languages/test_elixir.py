"""Elixir end to end: MultiPL-E's Elixir rows with right and wrong completions, broken variants (an exception, an
infinite loop, a memory hog, an early halt, a syntax error) and a stdio problem, through the API over HTTP, a worker
process and the Elixir sandbox image (built on demand); and the split of every stored MultiPL-E Elixir row into a
judge and a candidate (no container)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import elixir, get, split
from sandbox.languages.base import ReferencePass
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import DATA, labelled_completions, multipl_e_rows

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "elixir.json").read_text())
# The verdict of each kind of completion in tests/data/multipl-e/solutions/elixir.json.
VERDICTS = {"correct": "passed", "wrong": "failed", "throws": "error", "loops": "timeout", "exits": "failed",
            "memory": "memory", "syntax_error": "error"}


STDIO_SOLUTION = ("IO.stream(:stdio, :line)\n|> Enum.each(fn line ->\n"
                  "  [a, b] = line |> String.split() |> Enum.map(&String.to_integer/1)\n  IO.puts(a + b)\nend)\n")


def test_every_row_splits_into_a_judge_and_a_candidate() -> None:
    rows = multipl_e_rows("elixir")
    assert len(rows) == 25 and set(SOLUTIONS) <= {row["name"] for row in rows} and len(SOLUTIONS) >= 10
    for row in rows:
        completion = SOLUTIONS.get(row["name"], {}).get("correct", "    nil\n  end\nend\n")
        programs = elixir.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], completion))
        candidate, judge = programs.candidate["main.exs"], programs.judge["main.exs"]
        name = row["name"].split("_", 2)[2]
        # The candidate is the original program up to its tests; the tests are the judge's alone.
        assert candidate == row["prompt"] + completion + "\n" + elixir.serve_statement("HumanEval", name)
        assert row["tests"] in judge and completion not in judge and "ExUnit" not in candidate
        before = row["prompt"][:row["prompt"].rindex("  def ")]
        assert judge.startswith(before) and f'PasskJudge.call("{name}", [' in judge
        assert judge.endswith("  end\n\nend\n" + row["tests"])


def test_stub_keeps_the_signature() -> None:
    cases = {
        "  def f(a, b) do": '  def f(a, b) do\n    PasskJudge.call("f", [a, b])\n  end\n',
        "  def g() do": '  def g() do\n    PasskJudge.call("g", [])\n  end\n',
        "  def h?(x, y \\\\ [1, 2]) do": '  def h?(x, y \\\\ [1, 2]) do\n    PasskJudge.call("h?", [x, y])\n  end\n',
        '  def k(s \\\\ "(a, b) do") do': '  def k(s \\\\ "(a, b) do") do\n    PasskJudge.call("k", [s])\n  end\n',
    }
    for signature, stub in cases.items():
        head = "# A comment with def x(y) do\n# defmodule Nope do\ndefmodule A.B do\n  def candidate(x), do: x\n" + signature + "\n"
        parts = elixir.split_problem(split.TestSource("multipl-e", head, "IO.puts(1)\n", "  1\n  end\nend\n"))
        assert elixir.stub(parts) == stub and elixir._module(parts) == "A.B"
        assert parts.before == head[:head.index(signature)]
    for bad in ("defmodule A do\n  def f(%{a: a}) do\n", "defmodule A do\n  def f([h | t]) do\n", "def f(a) do\n",
                "x = 1\n", "defmodule A do\n  defmodule B do\n    def f(a) do\n", "defmodule A do\n  def f(a), do: a\n"):
        with pytest.raises(split.SplitError):
            elixir.programs(split.TestSource("multipl-e", bad, "IO.puts(1)\n", "end\n"))


def test_reference_rule() -> None:
    language = get("elixir")
    assert language.reference_commands == ("elixir main.exs",) and language.reference_pass == ReferencePass(timeout_s=5.0)
    assert language.reference_pass.passes(0, "", "warning") and not language.reference_pass.passes(1, "", "")
    cap = ("--erl", f"+hmax {(256 << 20) // 8}")
    assert language.candidate_argv(256 << 20) == ("elixir", *cap, "-pa", "/opt/passk/elixir/ebin", "main.exs")
    assert language.run_argv(256 << 20) == ("elixir", *cap, "main.exs") and not language.limit_address_space
    assert elixir.LANGUAGE.aliases == ("ex", "exs") and language.run_code_names == ("elixir",)


@pytest.mark.slow
def test_elixir_end_to_end(stack: Stack) -> None:
    multipl_e = endtoend.multipl_e_case("elixir", labelled_completions(SOLUTIONS, VERDICTS))
    results = endtoend.check_language(stack, "elixir", {
        "multipl-e-elixir": multipl_e,
        "stdio-elixir": endtoend.stdio_case("elixir", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("a + b", "a - b"),
                                            time_limit_s=5.0, more=(
            ("stdio syntax error", "IO.puts(1 +\n", "error"),
            ("stdio exception", "raise \"boom\"\n", "error"),
        )),
    })
    assert "ExUnit.AssertionError: Assertion with == failed" in results["HumanEval_23_strlen wrong"]["detail"]
    assert "RuntimeError: boom" in results["HumanEval_23_strlen throws"]["detail"]
    exits = results["HumanEval_23_strlen exits"]
    assert "before its tests finished" in exits["detail"] and "ended_early" in exits["flags"]
    assert "SyntaxError" in results["HumanEval_23_strlen syntax_error"]["detail"]
    endtoend.assert_toolchain(stack, "elixir", "multipl-e-elixir", "Elixir 1.14")
    endtoend.check_run_code(stack, "elixir", prints="IO.puts(123)\n", raises="raise \"boom\"\n",
                            loops="Stream.repeatedly(fn -> 1 end) |> Stream.run()\n", broken="IO.puts(1 +\n",
                            echoes="IO.puts(String.to_integer(String.trim(IO.gets(\"\"))))\n")
