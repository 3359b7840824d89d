"""Lua end to end: MultiPL-E's Lua rows with right and wrong completions, broken variants (an error, an infinite
loop, a memory hog, an early exit, a syntax error) and a stdio problem, through the API over HTTP, a worker process
and the Lua sandbox image (built on demand); and the split of every stored MultiPL-E Lua row into a judge and a
candidate (no container)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import get, lua, split
from sandbox.languages.base import ReferencePass
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import DATA, labelled_completions, multipl_e_rows

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "lua.json").read_text())
# The verdict of each kind of completion in tests/data/multipl-e/solutions/lua.json.
VERDICTS = {"correct": "passed", "wrong": "failed", "throws": "error", "loops": "timeout", "exits": "failed",
            "memory": "memory", "syntax_error": "error"}


STDIO_SOLUTION = "for line in io.lines() do\n  local a, b = line:match('(%-?%d+)%s+(%-?%d+)')\n  print(math.tointeger(a + b))\nend\n"


def test_every_row_splits_into_a_judge_and_a_candidate() -> None:
    rows = multipl_e_rows("lua")
    assert len(rows) == 25 and set(SOLUTIONS) <= {row["name"] for row in rows} and len(SOLUTIONS) >= 10
    for row in rows:
        completion = SOLUTIONS.get(row["name"], {}).get("correct", "  return nil\nend\n")
        programs = lua.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], completion))
        candidate, judge = programs.candidate["main.lua"], programs.judge["main.lua"]
        name = row["name"].split("_", 2)[2]
        # The candidate is the original program up to its tests; the tests are the judge's alone.
        assert candidate == row["prompt"] + completion + "\n" + lua.serve_statement(name)
        assert row["tests"] in judge and completion not in judge and "luaunit" not in candidate
        assert judge.startswith(row["prompt"][:row["prompt"].rindex("local function ")])
        assert f"return PasskJudge.call('{name}', table.pack(" in judge


def test_stub_keeps_the_signature() -> None:
    cases = {
        "local function f(a, b)": "local function f(a, b)\n  return PasskJudge.call('f', table.pack(a, b))\nend\n",
        "local function g()": "local function g()\n  return PasskJudge.call('g', table.pack())\nend\n",
        "function h(x, ...)": "function h(x, ...)\n  return PasskJudge.call('h', table.pack(x, ...))\nend\n",
    }
    for signature, stub in cases.items():
        head = "-- A comment with local function x(y) and an end\n-- >>> f(1)\n" + signature + "\n"
        parts = lua.split_problem(split.TestSource("multipl-e", head, "print(1)\n", "  return 1\nend\n"))
        assert lua.stub(parts) == stub
        assert parts.before == head[:head.index(signature)]
    for bad in ("local function f(a, {b})\n", "x = 1\n", "local function f(a)\n  local x = 1\n",
                "local t = {}\nfunction t.f(a)\n", "local function f(a\n"):
        with pytest.raises(split.SplitError):
            lua.programs(split.TestSource("multipl-e", bad, "print(1)\n", "end\n"))


def test_reference_rule() -> None:
    language = get("lua")
    assert language.reference_commands == ("lua main.lua",) and language.reference_pass == ReferencePass(timeout_s=15.0)
    assert language.reference_pass.passes(0, "", "warning") and not language.reference_pass.passes(1, "", "")
    assert language.candidate_argv(256 << 20) == ("lua", "-e", "dofile('/opt/passk/lua/server.lua')", "main.lua")
    assert language.run_argv(256 << 20) == ("lua", "main.lua") and language.run_code_names == ("lua",)


@pytest.mark.slow
def test_lua_end_to_end(stack: Stack) -> None:
    multipl_e = endtoend.multipl_e_case("lua", labelled_completions(SOLUTIONS, VERDICTS))
    results = endtoend.check_language(stack, "lua", {
        "multipl-e-lua": multipl_e,
        "stdio-lua": endtoend.stdio_case("lua", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("a + b", "a - b"), more=(
            ("stdio syntax error", "print(1 +\n", "error"),
            ("stdio error", "error('boom')\n", "error"),
        )),
    })
    assert "LuaUnit failure" in results["HumanEval_23_strlen wrong"]["detail"]
    assert "raised error: main.lua:7: boom" in results["HumanEval_23_strlen throws"]["detail"]
    exits = results["HumanEval_23_strlen exits"]
    assert "before its tests finished" in exits["detail"] and "ended_early" in exits["flags"]
    assert "unexpected symbol" in results["HumanEval_23_strlen syntax_error"]["detail"]
    endtoend.assert_toolchain(stack, "lua", "multipl-e-lua", "Lua 5.4")
