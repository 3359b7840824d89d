"""Elixir's value wire (sandbox/languages/elixir/wire.ex) against the Python reference codec
(sandbox/runtime/values.py), in the real Elixir image: values round-trip byte for byte, Elixir's own values encode
to exactly the reference's bytes, and malformed bytes are refused. Then one problem through the real sandbox whose
tests see every kind of value cross both ways exactly as one process would."""

from __future__ import annotations

import pytest

from sandbox.images import ensure_language_image
from sandbox.languages import elixir, get
from sandbox.runtime import values as v
from sandbox.verdicts import Verdict
from tests.languages.codec import (
    D, S, U32, assert_matches_the_reference, bits, container_stdout, echo_outcomes, nested, raw,
)

Z = lambda n: v.integer(n, "z")  # noqa: E731


def atom(name: str) -> v.Node:
    return v.dynamic("Atom", S(name))


def struct(module: str, *fields: tuple[str, v.Node]) -> v.Node:
    """A struct: the map it is, its keys (atoms) in Elixir's order."""
    return v.pairs("M", sorted([(atom("__struct__"), atom(f"Elixir.{module}")), *((atom(k), x) for k, x in fields)],
                               key=lambda pair: pair[0].payload.payload))


# Values an Elixir receiver rebuilds and sends back unchanged (a small map's pairs in Elixir's term order).
ROUND_TRIP = [
    v.NULL, v.TRUE, v.FALSE,
    Z(0), Z(1), Z(-1), Z(127), Z(128), Z(-128), Z(-129), Z(255), Z(2**63), Z(-(2**63)), Z(2**64), Z(-(2**100) + 3),
    Z(2**1000),
    D(0.0), D(-0.0), D(1.5), D(5e-324), D(1.7976931348623157e308), D(-2.5e-300),
    S(""), S("abc"), S("h\u00e9llo"), S("\U0001f600"), S("a\x00b"), S(b"\xff\xfe"), S(b"\xed\xa0\x80"),
    v.seq("A", []), nested(3), v.seq("A", [Z(1), S("x"), v.NULL, D(2.5), v.seq("A", [v.TRUE])]),
    v.seq("P", []), v.seq("P", [Z(1), S("x"), v.seq("P", [v.NULL])]),
    v.pairs("M", []), v.pairs("M", [(Z(1), v.FALSE), (Z(3), S("c")), (atom("k"), v.NULL), (v.seq("P", [Z(1)]), Z(2)),
                                    (v.seq("A", [Z(1)]), v.pairs("M", [])), (S("a"), v.seq("A", [])), (S("b"), Z(1))]),
    atom("ok"), atom("h\u00e9"), atom("Elixir.MapSet"), atom(""),
    struct("Range", ("first", Z(1)), ("last", Z(3)), ("step", Z(1))),
    v.seq("A", [nested(v.MAX_DEPTH - 2)]),
]

# Elixir expressions and the reference value each must encode to.
LITERALS = {
    "nil": v.NULL, "true": v.TRUE, "1.5": D(1.5), "Integer.pow(2, 64)": Z(2**64), "-Integer.pow(2, 100)": Z(-(2**100)),
    "\"\u00e9\"": S("\u00e9"), "<<255>>": S(b"\xff"), ":ok": atom("ok"), ":\"with space\"": atom("with space"),
    "MapSet": atom("Elixir.MapSet"), "[1, [2.5, nil]]": v.seq("A", [Z(1), v.seq("A", [D(2.5), v.NULL])]),
    "'ab'": v.seq("A", [Z(97), Z(98)]), "{1, \"x\"}": v.seq("P", [Z(1), S("x")]),
    "%{\"b\" => 1, \"a\" => [nil], 2 => 3.0}": v.pairs("M", [(Z(2), D(3.0)), (S("a"), v.seq("A", [v.NULL])), (S("b"), Z(1))]),
    # A struct crosses as the map it is: the receiver's == compares it field by field, and runs none of its code.
    "1..3": struct("Range", ("first", Z(1)), ("last", Z(3)), ("step", Z(1))),
    "MapSet.new([2])": struct("MapSet", ("map", v.pairs("M", [(Z(2), v.seq("A", []))])), ("version", Z(2))),
    # What cannot be rebuilt crosses as X with its kind (the whole value).
    "fn -> 1 end": v.Node("X", None, "Function"), "self()": v.Node("X", None, "PID"),
    "make_ref()": v.Node("X", None, "Reference"), "<<1::3>>": v.Node("X", None, "BitString"),
    "[1 | 2]": v.Node("X", None, "improper list"), "{1, [self()]}": v.Node("X", None, "PID"),
    "%{a: &IO.puts/1}": v.Node("X", None, "Function"),
    "Enum.reduce(1..200, [], fn _, acc -> [acc] end)": v.Node("X", None, "deeply nested value"),
}

# Bytes an Elixir receiver must refuse (Malformed), never coerce.
REFUSED = {
    "an int32 (Elixir's integers cross as z)": raw("i", U32(1)),
    "a character": raw("c", U32(65)),
    "JavaScript's undefined": raw("u"),
    "a JavaScript object": raw("O", U32(0)),
    "an optional": raw("Y", "n"),
    "an empty optional": raw("N"),
    "a binary32 float": raw("f", U32(0)),
    "a set": raw("S", U32(0)),
    "NaN": v.encode(bits(0x7FF8000000000000)),
    "an infinity": v.encode(D(float("inf"))),
    "trailing bytes": raw("T", "T"),
    "truncated double": raw("d", b"\0\0\0"),
    "a count past the end": raw("A", U32(5), "n"),
    "a huge count past the end": raw("P", U32(0xFFFFFFFF), "n"),
    "an unknown tag": raw("?"),
    "empty": b"",
    "an integer not in its shortest form": raw("z", U32(2), b"\x00\x01"),
    "a negative integer not in its shortest form": raw("z", U32(2), b"\xff\xff"),
    "zero not as the empty integer": raw("z", U32(1), b"\x00"),
    "a map with a key twice": raw("M", U32(2), "n", "n", "n", "n"),
    "nil as an atom": v.encode(atom("nil")),
    "an atom's name that is not UTF-8": v.encode(atom(b"\xff")),  # type: ignore[arg-type]
    "an atom's name over 255 bytes": v.encode(atom("x" * 256)),
    "an atom that is not a string": v.encode(v.dynamic("Atom", Z(1))),
    "a type Elixir does not rebuild": v.encode(v.dynamic("Symbol", S("x"))),
    "nested too deeply": v.encode(nested(v.MAX_DEPTH + 1)),
}

# The payload in the environment (sections of hex, and expressions split by \x1f); each answer on a line of its own.
SCRIPT = r"""
hex = fn name -> System.get_env(name) |> String.split(",", trim: true) |> Enum.map(&Base.decode16!(&1, case: :lower)) end
for data <- hex.("ROUND") do
  back = try do PasskWire.encode(PasskWire.decode(data)) |> Base.encode16(case: :lower) rescue e -> inspect(e) end
  IO.puts("round " <> back)
end
for code <- String.split(System.get_env("LITERALS"), "\x1f") do
  {value, _} = Code.eval_string(code)
  IO.puts("literal " <> Base.encode16(PasskWire.encode(value), case: :lower))
end
for data <- hex.("REFUSED") do
  answer = try do
    PasskWire.decode(data)
    "accepted"
  rescue
    e -> inspect(e.__struct__)
  end
  IO.puts("refused " <> answer)
end
"""


@pytest.fixture(scope="module")
def image(docker_client) -> str:  # type: ignore[no-untyped-def]
    return ensure_language_image(docker_client, get("elixir"))


@pytest.mark.slow
def test_codec_matches_the_reference_byte_for_byte(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    environment = {
        "ROUND": ",".join(v.encode(node).hex() for node in ROUND_TRIP),
        "LITERALS": "\x1f".join(LITERALS),
        "REFUSED": ",".join(data.hex() or "" for data in REFUSED.values()),
        **elixir.LANGUAGE.extra["env"], "LANG": "C.UTF-8",
    }
    # The empty input cannot ride in a comma list: it is checked on its own below.
    refused = {label: data for label, data in REFUSED.items() if data}
    environment["REFUSED"] = ",".join(data.hex() for data in refused.values())
    out = container_stdout(docker_client, image, ["elixir", "-pa", elixir.EBIN, "-e", SCRIPT + 'IO.puts("refused " <> (try do PasskWire.decode(""); "accepted" rescue e -> inspect(e.__struct__) end))'],
                           environment)
    lines = out.splitlines()
    got = {kind: [line.split(" ", 1)[1] if " " in line else "" for line in lines if line.startswith(kind + " ")]
           for kind in ("round", "literal", "refused")}
    assert_matches_the_reference(ROUND_TRIP, got["round"], LITERALS, got["literal"], {**refused, "empty": b""},
                                 got["refused"], "PasskWire.Malformed")


# A problem whose tests hand every kind of value to the candidate and check, as one process would, what comes back
# (strictly: 1 and 1.0 differ); the candidate checks what it received the same way (and raises if anything differs).
# The values are the prompt's, so both programs have them.
ECHO_PROMPT = """# Returns its argument.
defmodule HumanEval do
  def values, do: [nil, true, false, 0, -1, Integer.pow(2, 100), -Integer.pow(2, 70), 1.5, -2.5e-300, "", "h\u00e9llo",
    <<255>>, :sym, :"h\u00e9", [1, [nil, [2.5]]], 'abc', {}, {1, "x", {nil}}, %{"b" => 1, "a" => %{}, 3 => "c", 1.0 => "d", [1] => nil},
    MapSet.new([3, "x"]), 1..3, String.duplicate("x", 100_000)]
  def candidate(value, kind), do: echo(value, kind)
  def echo(value, kind) do
"""
ECHO_COMPLETION = """    cond do
      kind == :any -> value
      value === Enum.at(values(), kind) -> value
      true -> raise "the candidate received #{kind}"
    end
  end
end
"""
ECHO_TESTS = """ExUnit.start()
defmodule HumanEvalTest do
  use ExUnit.Case, async: true
  test 'echo' do
    for {value, index} <- Enum.with_index(HumanEval.values()) do
      back = HumanEval.candidate(value, index)
      unless back === value, do: raise "the tests received #{index}"
    end
    assert HumanEval.candidate(3, :any) == 3.0 and HumanEval.candidate(1..2, :any) == 1..2
  end
end
"""


@pytest.mark.slow
def test_every_kind_of_value_crosses_as_one_process_sees_it(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    # The same tests against a candidate that returns an atom as its name: the tests see the difference.
    lossy = "    if is_atom(value) and is_integer(kind) and value not in [nil, true, false], do: Atom.to_string(value), else: value\n  end\nend\n"
    echo, lossy_outcome = echo_outcomes(docker_client, image, "elixir", ECHO_PROMPT, ECHO_TESTS,
                                        [ECHO_COMPLETION, lossy])
    assert echo.verdict is Verdict.PASSED, echo
    assert lossy_outcome.verdict is Verdict.ERROR and "the tests received" in (lossy_outcome.detail or ""), lossy_outcome
