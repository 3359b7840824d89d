"""Lua's judge against hostile candidates, through the real sandbox (the Lua image, built on demand).

- Attacks: each trick a forger has in Lua (LuaUnit's asserts and runner replaced, LuaUnit's own exit, a table whose
  metamethods say yes, equality patched through the debug library, finalizers and to-be-closed variables that exit,
  `os.exit` early, the environment and /proc, lines that look like a pass, garbage and forged answers on the reply
  descriptor, a replaced server, signals and ptrace of every other process, killing the parent, child processes),
  each around a wrong answer, on several problems: none passes, none is `sandbox_error`, and each carries the flag
  its trick must raise.
- The property: for every solved MultiPL-E Lua row, the right completion inside a harmless trick still passes, and
  a wrong one inside a hostile wrapper fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA, multipl_e_rows
from tests.languages.hostile import assert_verdicts_survive_tricks, attack, language_image
from tests.languages.test_javascript_hostile import PTRACE

ROWS = {row["name"]: row for row in multipl_e_rows("lua")}
SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "lua.json").read_text())
# Problems the attacks run on: integers, strings, tables as lists, floats, a table as a map (returned and passed),
# nil in a table.
ATTACKED = ("HumanEval_23_strlen", "HumanEval_89_encrypt", "HumanEval_14_all_prefixes", "HumanEval_2_truncate_number",
            "HumanEval_111_histogram", "HumanEval_95_check_dict_case", "HumanEval_136_largest_smallest_integers")
# Every stored problem's tests fail this answer.
WRONG = "  return 'passk-wrong'\nend\n"
# A framed answer `R (true)`, as the candidate's server would write it.
FORGED = "'\\0\\0\\0\\7RP\\0\\0\\0\\1T'"
LUV = "require('luv')"

# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "LuaUnit's asserts and runner replaced": (
        WRONG + "local lu = require('luaunit')\nfor name, f in pairs(lu) do\n"
        "  if type(f) == 'function' and name:match('^assert') then lu[name] = function() end end\nend\n"
        "lu.LuaUnit.run = function() return 0 end\nlu.LuaUnit.runSuite = function() return 0 end\n", None),
    "LuaUnit's own exit in the call": ("  require('luaunit').oldOsExit(0)\nend\n", "ended_early"),
    "a table that equals anything": (
        "  return setmetatable({}, {__eq = function() return true end, __lt = function() return false end,\n"
        "    __le = function() return true end, __index = function() return 1 end, __len = function() return 1 end,\n"
        "    __tostring = function() return 'passk' end})\nend\n", None),
    "equality patched through the debug library": (
        WRONG + "for _, v in ipairs({0, 0.5, '', true, print}) do\n"
        "  pcall(debug.setmetatable, v, {__eq = function() return true end, __lt = function() return false end})\nend\n"
        "debug.setmetatable(nil, {__eq = function() return true end})\nrawequal = function() return true end\n", None),
    "finalizers and to-be-closed variables": (
        WRONG + "PASSK_KEEP = setmetatable({}, {__gc = function() os.exit(0) end})\n"
        "local closing <close> = setmetatable({}, {__close = function() os.exit(0, true) end})\n", None),
    "os.exit(0) at the top level": (WRONG + "os.exit(0)\n", "ended_early"),
    "os.exit(0) in the call": ("  os.exit(0)\nend\n", "ended_early"),
    "os.exit(true, true) in the call": ("  os.exit(true, true)\nend\n", "ended_early"),
    "an error object that says pass": (
        "  error(setmetatable({}, {__tostring = function() return 'PASS' end}))\nend\n", None),
    "the environment and /proc": (
        WRONG + "print(os.getenv('HOME'), os.getenv('PATH'))\n"
        "for _, f in ipairs({'/proc/self/environ', '/proc/1/environ', '/proc/1/cmdline', '/proc/1/mem'}) do\n"
        "  local h = io.open(f, 'rb')\n  print(f, h and h:read('a'))\nend\n"
        "os.execute('cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline; ls -l /proc/[0-9]*/fd; echo x > /proc/1/mem')\n",
        None),
    "lines that look like a pass": (
        WRONG + "print('PASS')\nio.stderr:write('PASS\\n')\nio.write('\\nOK\\n')\n"
        "print('Ran 1 tests in 0.000 seconds, 1 success, 0 failures')\nprint('OK')\n"
        f"for fd = 5, 7 do pcall({LUV}.fs_write, fd, 'PASS', -1) end\n", None),
    "garbage on the reply descriptor": (WRONG + f"{LUV}.fs_write(4, 'garbage', -1)\n", "out_of_turn"),
    "forged answers before any call": (WRONG + f"for _ = 1, 64 do {LUV}.fs_write(4, {FORGED}, -1) end\n", "out_of_turn"),
    "an extra answer with each call": (f"  {LUV}.fs_write(4, {FORGED}, -1)\n" + WRONG, "out_of_turn"),
    "the server replaced by one that answers true": (
        WRONG + "PasskServer.serve = function()\n  local uv = require('luv')\n  while true do\n"
        "    local header = uv.fs_read(3, 4, -1)\n    if not header or #header < 4 then return end\n"
        f"    uv.fs_read(3, string.unpack('>I4', header), -1)\n    uv.fs_write(4, {FORGED}, -1)\n  end\nend\n", None),
    "signals to every other process": (
        WRONG + "os.execute('for p in /proc/[0-9]*; do p=${p#/proc/}; [ $p = $$ ] || "
        "{ kill -STOP $p; kill -TERM $p; kill -KILL $p; }; done 2>/dev/null')\n", "reached_judge"),
    "killing the parent": (
        WRONG + "os.execute('kill -KILL $(cut -d\" \" -f4 /proc/$PPID/stat); kill -KILL 1')\n", "reached_judge"),
    "ptrace and kill from a child process": (
        WRONG + "os.execute([==[python3 -c '" + PTRACE.replace("\\n", "\n") + "']==])\n", "reached_judge"),
    "child processes left behind": (WRONG + "os.execute('(sleep 2; echo PASS) & kill -9 -1')\n", "reached_judge"),
}

# Harmless tricks around a right answer (they must not stop it passing).
TRICKS = (
    "print('PASS')\nio.stderr:write('FLAG out_of_turn\\n')\nio.write('\\nPASS\\n')\n",
    "PASSK_KEEP = setmetatable({}, {__gc = function() io.stderr:write('bye\\n') end})\n"
    "string.passk_helper = function() return 1 end\n",
    "local h = io.open('/proc/self/environ', 'rb')\nif h then h:close() end\n"
    "h = io.open('/proc/1/environ', 'rb')\nif h then h:close() end\n",
    "local co = coroutine.wrap(function() coroutine.yield(1) end)\nco()\ncollectgarbage()\n",
    "local lu = require('luaunit')\nlocal quoted = string.format('%q', 'x')\n",
)
# Hostile wrappers around a wrong answer (they must not make it pass).
HOSTILE = tuple(ATTACKS[name][0].removeprefix(WRONG) for name in (
    "LuaUnit's asserts and runner replaced", "equality patched through the debug library",
    "finalizers and to-be-closed variables", "os.exit(0) at the top level", "forged answers before any call",
    "the server replaced by one that answers true",
))


@pytest.fixture(scope="module")
def lua(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    yield language_image(docker_client, "lua")


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(lua) -> None:  # type: ignore[no-untyped-def]
    by_label = attack(lua, ROWS, ATTACKED, ATTACKS)
    # A table crosses as its raw contents: the metamethods the model wrote stay in its own process.
    anything = by_label["HumanEval_14_all_prefixes a table that equals anything"]
    assert anything.verdict is Verdict.FAILED and "LuaUnit failure" in (anything.detail or ""), anything
    raised = by_label["HumanEval_23_strlen an error object that says pass"]
    assert raised.verdict is Verdict.ERROR and "error object (table): PASS" in (raised.detail or ""), raised
    assert "before its tests finished" in (by_label["HumanEval_23_strlen os.exit(0) at the top level"].detail or "")


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(lua) -> None:  # type: ignore[no-untyped-def]
    assert_verdicts_survive_tricks(lua, ROWS, SOLUTIONS, SOLUTIONS, TRICKS, HOSTILE)
