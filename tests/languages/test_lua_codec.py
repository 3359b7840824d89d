"""Lua's value wire (sandbox/languages/lua/wire.lua) against the Python reference codec (sandbox/runtime/values.py),
in the real Lua image: values round-trip byte for byte, Lua's own values encode to exactly the reference's bytes,
and malformed bytes are refused. Then one problem through the real sandbox whose tests see every kind of value
cross both ways exactly as one process would."""

from __future__ import annotations


import pytest

from sandbox.images import ensure_language_image
from sandbox.languages import get
from sandbox.runtime import values as v
from sandbox.verdicts import Verdict
from tests.languages.codec import (
    D, S, U32, assert_matches_the_reference, bits, container_stdout, echo_outcomes, nested, raw,
)

L = lambda n: v.integer(n, "l")  # noqa: E731




def table(*pairs: tuple[v.Node, v.Node]) -> v.Node:
    return v.pairs("M", list(pairs))



# Values a Lua receiver rebuilds and sends back unchanged.
ROUND_TRIP = [
    v.NULL, v.TRUE, v.FALSE,
    L(0), L(1), L(-1), L(255), L(2**63 - 1), L(-(2**63)),
    D(0.0), D(-0.0), D(1.5), D(float("inf")), D(float("-inf")), D(5e-324), D(1.7976931348623157e308), D(2.0**63),
    bits(0x7FF8000000000000), bits(0x7FF8000000000ABC), bits(0xFFF8000000000001),
    S(""), S("abc"), S("h\u00e9llo"), S("\U0001f600"), S("a\x00b"), S(b"\xff\xfe"), S(b"\xed\xa0\x80"),
    v.seq("A", []), nested(3), v.seq("A", [L(1), S("x"), D(2.5), v.seq("A", [v.TRUE]), table((S("k"), L(1)))]),
    # A table that is not a sequence: its keys in the one order (booleans, numbers by value, strings by bytes).
    table((v.FALSE, L(1)), (v.TRUE, v.seq("A", [])), (L(-3), S("c")), (D(0.5), v.FALSE), (L(2), L(2)), (L(7), L(7)),
          (D(2.0**63), L(0)), (S(""), L(0)), (S("B"), L(1)), (S("a"), table((L(2), L(3)))), (S("\u00e9"), L(1))),
    table((L(1), S("a")), (L(3), S("c"))), table((L(0), L(0))), table((L(2), L(2))),
    v.seq("A", [nested(v.MAX_DEPTH - 2)]),
]

# Lua expressions and the reference value each must encode to.
LITERALS = {
    "nil": v.NULL, "-0.0": D(-0.0), "math.huge": D(float("inf")), "3 / 2": D(1.5), "2^53": D(2.0**53),
    "7 // 2": L(3), "math.maxinteger": L(2**63 - 1), "math.mininteger": L(-(2**63)), "'\u00e9'": S("\u00e9"),
    "'\\255'": S(b"\xff"), "{}": v.seq("A", []), "{1, {2.5, 'x'}}": v.seq("A", [L(1), v.seq("A", [D(2.5), S("x")])]),
    "{a = 1, b = {}}": table((S("a"), L(1)), (S("b"), v.seq("A", []))),
    "{1, nil, 3}": table((L(1), L(1)), (L(3), L(3))), "{nil, 1}": table((L(2), L(1))),
    "{[true] = 1, [false] = 2, [0.5] = 3, [-1] = 4, z = 5, [10] = 6}":
        table((v.FALSE, L(2)), (v.TRUE, L(1)), (L(-1), L(4)), (D(0.5), L(3)), (L(10), L(6)), (S("z"), L(5))),
    # A float key with an integer's value is that integer to Lua.
    "{[1.0] = 'a', [2] = 'b'}": v.seq("A", [S("a"), S("b")]),
    # A table crosses as its raw contents: metamethods never run, the metatable stays behind.
    "setmetatable({1}, {__eq = function() return true end, __index = function() return 9 end, __len = function() return 5 end})":
        v.seq("A", [L(1)]),
    "setmetatable({}, {__pairs = function() error('ran') end})": v.seq("A", []),
    # What cannot be rebuilt crosses as X with its type (the whole value).
    "print": v.Node("X", None, "function"), "coroutine.create(print)": v.Node("X", None, "thread"),
    "io.stdout": v.Node("X", None, "userdata"), "{1, print}": v.Node("X", None, "function"),
    "{[{}] = 1}": v.Node("X", None, "a table keyed by a table"),
    "(function() local t = {} t[1] = t return t end)()": v.Node("X", None, "deeply nested value"),
    "(function() local t = {} for _ = 1, 200 do t = {t} end return t end)()": v.Node("X", None, "deeply nested value"),
}

# Bytes a Lua receiver must refuse (Malformed), never coerce.
REFUSED = {
    "an integer of any size (Lua's cross as l)": raw("z", U32(1), b"\x01"),
    "an int32": raw("i", U32(1)),
    "a character": raw("c", U32(65)),
    "a bare tuple": raw("P", U32(0)),
    "JavaScript's undefined": raw("u"),
    "a JavaScript object": raw("O", U32(0)),
    "an optional": raw("Y", "n"),
    "an empty optional": raw("N"),
    "a binary32 float": raw("f", U32(0)),
    "a set": raw("S", U32(0)),
    "a dynamic value": v.encode(v.dynamic("Symbol", S("x"))),
    "trailing bytes": raw("T", "T"),
    "truncated double": raw("d", b"\0\0\0"),
    "truncated integer": raw("l", b"\0\0\0\0"),
    "a count past the end": raw("A", U32(5), "n"),
    "a huge count past the end": raw("A", U32(0xFFFFFFFF), "T"),
    "an unknown tag": raw("?"),
    "empty": b"",
    "a nil in a sequence": v.encode(v.seq("A", [L(1), v.NULL, L(3)])),
    "an empty map": v.encode(table()),
    "a map that is a sequence": v.encode(table((L(1), S("a")), (L(2), S("b")))),
    "map keys out of order": v.encode(table((S("b"), L(1)), (S("a"), L(2)))),
    "a number key after a string key": v.encode(table((S("a"), L(1)), (L(5), L(2)))),
    "a map key twice": v.encode(table((S("a"), L(1)), (S("a"), L(2)))),
    "a nil value in a map": v.encode(table((S("a"), v.NULL))),
    "a nil key": v.encode(table((v.NULL, L(1)))),
    "a NaN key": v.encode(table((bits(0x7FF8000000000000), L(1)))),
    "a float key Lua stores as an integer": v.encode(table((D(5.0), L(1)))),
    "a table as a key": v.encode(table((v.seq("A", []), L(1)))),
    "nested too deeply": v.encode(nested(v.MAX_DEPTH + 1)),
}


def _lua_strings(items: list[str]) -> str:
    return "{" + ", ".join(f"'{item}'" for item in items) + "}"


def script() -> str:
    """A Lua program that round-trips, encodes and refuses every case above, one result a line."""
    return f"""
local wire = dofile('/opt/passk/lua/wire.lua')
local function hex(s) return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end)) end
local function unhex(h) return (h:gsub('..', function(x) return string.char(tonumber(x, 16)) end)) end
for _, h in ipairs({_lua_strings([v.encode(node).hex() for node in ROUND_TRIP])}) do
  local ok, back = pcall(function() return hex(wire.encode(wire.decode(unhex(h)))) end)
  print('R ' .. (ok and back or ('failed ' .. tostring(back.text or back.type or back))))
end
local literals = {{{", ".join(f"function() return {code} end" for code in LITERALS)}}}
for _, make in ipairs(literals) do print('L ' .. hex(wire.encode(make()))) end
for _, h in ipairs({_lua_strings([data.hex() for data in REFUSED.values()])}) do
  local ok, problem = pcall(wire.decode, unhex(h))
  print('F ' .. (ok and 'accepted' or (wire.is_malformed(problem) and 'Malformed' or tostring(problem))))
end
"""


@pytest.fixture(scope="module")
def image(docker_client) -> str:  # type: ignore[no-untyped-def]
    return ensure_language_image(docker_client, get("lua"))


@pytest.mark.slow
def test_codec_matches_the_reference_byte_for_byte(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    lines = container_stdout(docker_client, image, ["lua", "-e", script()]).splitlines()
    got = {kind: [line[2:] for line in lines if line.startswith(kind + " ")] for kind in "RLF"}
    assert_matches_the_reference(ROUND_TRIP, got["R"], LITERALS, got["L"], REFUSED, got["F"], "Malformed")


# A problem whose tests hand every kind of value to the candidate and check, as one process would, what comes
# back (every value the function returns); the candidate checks what it received the same way.
ECHO_PROMPT = "-- Returns its argument.\nlocal function echo(value, kind)\n"
ECHO_CHECK = r"""
function passk_same(a, b)
  if type(a) ~= type(b) or math.type(a) ~= math.type(b) then return false end
  if math.type(a) == 'float' then return string.pack('>d', a) == string.pack('>d', b) end
  if type(a) ~= 'table' then return a == b end
  for k, x in pairs(a) do if not passk_same(x, rawget(b, k)) then return false end end
  for k in pairs(b) do if rawget(a, k) == nil then return false end end
  return getmetatable(b) == nil
end

function passk_values()
  return {{nil}, {true}, {false}, {0}, {-1}, {math.maxinteger}, {math.mininteger}, {1.5}, {-0.0}, {0/0}, {-math.huge},
    {''}, {'h\u{e9}llo'}, {'\255'}, {{}}, {{1, {2.5, 'x'}}}, {{a = 1, b = {}}}, {{nil, 1}}, {{[true] = 1, [0.5] = 2}},
    {{4, {}, {}, 23.2, 9, 'adasd'}}, {string.rep('x', 100000)}}
end
"""
ECHO_COMPLETION = ECHO_CHECK + """
  if kind == 'any' then return value end
  if not passk_same(value, passk_values()[kind][1]) then error('the candidate received ' .. kind) end
  return value, kind, nil
end
"""
ECHO_TESTS = ECHO_CHECK + """
for index, wrapped in ipairs(passk_values()) do
  local back = table.pack(echo(wrapped[1], index))
  if back.n ~= 3 or back[2] ~= index or not passk_same(back[1], wrapped[1]) then
    error('the tests received ' .. index)
  end
end
assert(echo(3, 'any') == 3.0 and select('#', echo(nil, 'any')) == 1 and echo(nil, 'any') == nil)
"""


@pytest.mark.slow
def test_every_kind_of_value_crosses_as_one_process_sees_it(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    # The same tests against a candidate that turns integers into floats: the tests see the difference.
    lossy = "  if math.type(value) == 'integer' then return value + 0.0, kind, nil end\n  return value, kind, nil\nend\n"
    echo, lossy_outcome = echo_outcomes(docker_client, image, "lua", ECHO_PROMPT, ECHO_TESTS,
                                        [ECHO_COMPLETION, lossy])
    assert echo.verdict is Verdict.PASSED, echo
    assert lossy_outcome.verdict is Verdict.ERROR and "the tests received 4" in (lossy_outcome.detail or ""), lossy_outcome
