"""Ruby's value wire (sandbox/languages/ruby/wire.rb) against the Python reference codec (sandbox/runtime/values.py),
in the real Ruby image: values round-trip byte for byte, Ruby's own values encode to exactly the reference's bytes,
and malformed bytes are refused. Then one problem through the real sandbox whose tests see every kind of value
cross both ways exactly as one process would."""

from __future__ import annotations

import json

import pytest

from sandbox.images import ensure_language_image
from sandbox.languages import get
from sandbox.runtime import values as v
from sandbox.verdicts import Verdict
from tests.languages.codec import (
    D, S, U32, assert_matches_the_reference, bits, container_stdout, echo_outcomes, nested, raw,
)

Z = lambda n: v.integer(n, "z")  # noqa: E731




def typed(name: str, node: v.Node) -> v.Node:
    return v.dynamic(name, node)



# Values a Ruby receiver rebuilds and sends back unchanged.
ROUND_TRIP = [
    v.NULL, v.TRUE, v.FALSE,
    Z(0), Z(1), Z(-1), Z(127), Z(128), Z(-128), Z(-129), Z(255), Z(2**63), Z(-(2**63)), Z(2**64), Z(-(2**100) + 3),
    Z(2**1000),
    D(0.0), D(-0.0), D(1.5), D(float("inf")), D(float("-inf")), D(5e-324), D(1.7976931348623157e308),
    bits(0x7FF8000000000000), bits(0x7FF8000000000ABC), bits(0xFFF8000000000001), bits(0x7FF0000000000001),
    S(""), S("abc"), S("h\u00e9llo"), S("\U0001f600"), S("a\x00b"), S(b"\xff\xfe"), S(b"\xed\xa0\x80"),
    v.seq("A", []), nested(3), v.seq("A", [Z(1), S("x"), v.NULL, D(2.5), v.seq("A", [v.TRUE])]),
    v.pairs("M", []), v.pairs("M", [(S("b"), Z(1)), (S("a"), v.seq("A", [])), (Z(3), S("c")), (D(1.0), v.NULL),
                                    (Z(1), v.FALSE), (v.seq("A", [Z(1)]), v.pairs("M", []))]),
    v.seq("S", [Z(3), S("3"), D(3.0), v.NULL]),
    typed("Symbol", S("sym")), typed("Symbol", S("h\u00e9")),
    typed("String:ASCII-8BIT", S(b"\xff")), typed("String:US-ASCII", S("ascii")),
    typed("String:UTF-16LE", S(b"a\x00b\x00")), typed("String:Shift_JIS", S(b"\x82\xa0")),
    typed("Rational", v.seq("P", [Z(-3), Z(4)])), typed("Rational", v.seq("P", [Z(2**70), Z(3)])),
    typed("Complex", v.seq("P", [Z(1), D(2.5)])),
    typed("Complex", v.seq("P", [typed("Rational", v.seq("P", [Z(1), Z(2)])), Z(0)])),
    v.seq("A", [nested(v.MAX_DEPTH - 2)]),
]

# Ruby expressions and the reference value each must encode to.
LITERALS = {
    "nil": v.NULL, "-0.0": D(-0.0), "Float::NAN": bits(0x7FF8000000000000), "1.0 / 0": D(float("inf")),
    "2**64": Z(2**64), "-(2**64)": Z(-(2**64)), "'\u00e9'": S("\u00e9"), "'\u00e9'.b": typed("String:ASCII-8BIT", S("\u00e9")),
    "'ab'.encode('UTF-16LE')": typed("String:UTF-16LE", S(b"a\x00b\x00")), "1.to_s(2)": typed("String:US-ASCII", S("1")),
    ":sym": typed("Symbol", S("sym")), "[1, [2.5, nil]]": v.seq("A", [Z(1), v.seq("A", [D(2.5), v.NULL])]),
    "{'b' => 1, 'a' => [nil], 2 => 3.0}": v.pairs("M", [(S("b"), Z(1)), (S("a"), v.seq("A", [v.NULL])), (Z(2), D(3.0))]),
    "Hash.new(5).merge('k' => 1)": v.pairs("M", [(S("k"), Z(1))]),
    "Set[2, 1, 2]": v.seq("S", [Z(2), Z(1)]),
    "Rational(3, -6)": typed("Rational", v.seq("P", [Z(-1), Z(2)])),
    "Complex(1, 2.5)": typed("Complex", v.seq("P", [Z(1), D(2.5)])),
    # A subclass of Array, Hash or String crosses as its base class: the tests' own == sees only its contents.
    "Class.new(Array).new([1])": v.seq("A", [Z(1)]), "Class.new(Hash)[1, 2]": v.pairs("M", [(Z(1), Z(2))]),
    "Class.new(String).new('x')": S("x"),
    # What cannot be rebuilt crosses as X with its class's name (the whole value).
    "1..2": v.Node("X", None, "Range"), "Object.new": v.Node("X", None, "Object"),
    "Struct.new(:a).new(1)": v.Node("X", None, "an anonymous class"), "proc { 1 }": v.Node("X", None, "Proc"),
    "method(:puts)": v.Node("X", None, "Method"), "Time.at(0)": v.Node("X", None, "Time"),
    "[1, Object.new]": v.Node("X", None, "Object"), "{}.compare_by_identity": v.Node("X", None, "Hash comparing by identity"),
    "(a = []; a << a)": v.Node("X", None, "deeply nested value"),
    "(0...200).reduce([]) { |acc, _| [acc] }": v.Node("X", None, "deeply nested value"),
    "'x'.encode('UTF-16LE').to_sym": v.Node("X", None, "Symbol"),
}

# Bytes a Ruby receiver must refuse (Malformed), never coerce.
REFUSED = {
    "an int32 (Ruby's integers cross as z)": raw("i", U32(1)),
    "a character": raw("c", U32(65)),
    "a bare tuple": raw("P", U32(0)),
    "JavaScript's undefined": raw("u"),
    "a JavaScript object": raw("O", U32(0)),
    "an optional": raw("Y", "n"),
    "a binary32 float": raw("f", U32(0)),
    "trailing bytes": raw("T", "T"),
    "truncated double": raw("d", b"\0\0\0"),
    "a count past the end": raw("A", U32(5), "n"),
    "a huge count past the end": raw("A", U32(0xFFFFFFFF), "n"),
    "an unknown tag": raw("?"),
    "empty": b"",
    "an integer not in its shortest form": raw("z", U32(2), b"\x00\x01"),
    "a negative integer not in its shortest form": raw("z", U32(2), b"\xff\xff"),
    "a map with a key twice": raw("M", U32(2), "n", "n", "n", "n"),
    "a set with an item twice": raw("S", U32(2), "z", U32(1), b"\x01", "z", U32(1), b"\x01"),
    "a UTF-8 string as a dynamic value": v.encode(typed("String:UTF-8", S("x"))),
    "an encoding by another of its names": v.encode(typed("String:binary", S("x"))),
    "an unknown encoding": v.encode(typed("String:NOPE", S("x"))),
    "a symbol that is not a string": v.encode(typed("Symbol", Z(1))),
    "a symbol that is not UTF-8": v.encode(typed("Symbol", S(b"\xff"))),
    "a rational not in lowest terms": v.encode(typed("Rational", v.seq("P", [Z(2), Z(4)]))),
    "a rational over zero": v.encode(typed("Rational", v.seq("P", [Z(1), Z(0)]))),
    "a complex number of strings": v.encode(typed("Complex", v.seq("P", [S("1"), Z(0)]))),
    "a class Ruby does not rebuild": v.encode(typed("Range", v.seq("P", [Z(1), Z(2)]))),
    "nested too deeply": v.encode(nested(v.MAX_DEPTH + 1)),
}

SCRIPT = r"""
require '/opt/passk/ruby/wire'
require 'json'
input = JSON.parse(ARGV[0])
out = { 'roundTrip' => [], 'literals' => [], 'refused' => [] }
input['roundTrip'].each do |hex|
  out['roundTrip'] << PasskWire.encode(PasskWire.decode([hex].pack('H*'))).unpack1('H*')
rescue StandardError => e
  out['roundTrip'] << "#{e.class}: #{e.message}"
end
input['literals'].each { |code| out['literals'] << PasskWire.encode(eval(code)).unpack1('H*') }
input['refused'].each do |hex|
  PasskWire.decode([hex].pack('H*'))
  out['refused'] << 'accepted'
rescue StandardError => e
  out['refused'] << e.class.name
end
print JSON.generate(out)
"""


@pytest.fixture(scope="module")
def image(docker_client) -> str:  # type: ignore[no-untyped-def]
    return ensure_language_image(docker_client, get("ruby"))


@pytest.mark.slow
def test_codec_matches_the_reference_byte_for_byte(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    payload = json.dumps({
        "roundTrip": [v.encode(node).hex() for node in ROUND_TRIP],
        "literals": list(LITERALS),
        "refused": [data.hex() for data in REFUSED.values()],
    })
    got = json.loads(container_stdout(docker_client, image, ["ruby", "-e", SCRIPT, payload]))
    assert_matches_the_reference(ROUND_TRIP, got["roundTrip"], LITERALS, got["literals"], REFUSED, got["refused"],
                                 "PasskWire::Malformed")


# A problem whose tests hand every kind of value to the candidate and check, as one process would, what comes
# back; the candidate checks what it received the same way (and raises if anything differs).
ECHO_PROMPT = "# Returns its argument.\ndef echo(value, kind)\n"
ECHO_CHECK = r"""
require 'set'
def passk_same(a, b)
  return false unless a.class == b.class
  case a
  when Float then [a].pack('G') == [b].pack('G')
  when String then a.encoding == b.encoding && a.b == b.b
  when Array, Set then a.size == b.size && a.to_a.zip(b.to_a).all? { |x, y| passk_same(x, y) }
  when Hash then a.size == b.size && a.to_a.zip(b.to_a).all? { |(k, x), (l, y)| passk_same(k, l) && passk_same(x, y) }
  when Complex then passk_same(a.real, b.real) && passk_same(a.imaginary, b.imaginary)
  else a == b
  end
end

def passk_values
  [nil, true, false, 0, -1, 2**100, -(2**70), 1.5, -0.0, Float::NAN, -Float::INFINITY, '', "h\u00e9llo", "\xff".dup.force_encoding('UTF-8'),
   'bin'.b, "\xff".b, 'ascii'.encode('US-ASCII'), :sym, [1, [nil, [2.5]]],
   { 'b' => 1, 'a' => {}, 3 => 'c', 1.0 => 'd', [1] => nil }, Set[3, 'x'], Rational(-3, 4), Complex(1, 2.5), 'x' * 100_000]
end
"""
ECHO_COMPLETION = ECHO_CHECK + """
  return value if kind == 'any'
  raise "the candidate received #{kind}" unless passk_same(value, passk_values[kind])
  value
end
"""
ECHO_TESTS = ECHO_CHECK + """
passk_values.each_with_index do |value, index|
  back = echo(value, index)
  raise "the tests received #{index}" unless passk_same(back, value)
end
raise 'equal but not the same' unless echo(3, 'any') == 3.0 && echo('x'.b, 'any') == 'x' && echo(Rational(1, 2), 'any') == 0.5
"""


@pytest.mark.slow
def test_every_kind_of_value_crosses_as_one_process_sees_it(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    # The same tests against a candidate that returns a symbol as its name: the tests see the difference.
    lossy = "  kind == 'any' || !value.is_a?(Symbol) ? value : value.to_s\nend\n"
    echo, lossy_outcome = echo_outcomes(docker_client, image, "ruby", ECHO_PROMPT, ECHO_TESTS,
                                        [ECHO_COMPLETION, lossy])
    assert echo.verdict is Verdict.PASSED, echo
    assert lossy_outcome.verdict is Verdict.ERROR and "the tests received" in (lossy_outcome.detail or ""), lossy_outcome
