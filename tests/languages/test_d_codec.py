"""D's value wire (sandbox/languages/d/passk/wire.d) against the Python reference codec (sandbox/runtime/values.py),
in the real D image: values of every type MultiPL-E's D prompts use round-trip byte for byte through D's decoder and
encoder for that type, D's own values encode to exactly the reference's bytes, and bytes that are not a value of
the type expected are refused. Then one problem through the real sandbox whose tests see nested values cross both
ways exactly as one process would."""

from __future__ import annotations

import pytest

from sandbox.images import ensure_language_image
from sandbox.runtime import values as v
from sandbox.verdicts import Verdict
from tests.languages.codec import D, S, assert_matches_the_reference, bits, container_stdout, echo_outcomes, raw

L = lambda n: v.integer(n, "l")  # noqa: E731
I = lambda n: v.integer(n, "i")  # noqa: E731, E741

# The D types the script decodes and re-encodes, by index.
TYPES = ("bool", "long", "int", "float", "double", "char", "string", "long[]", "string[]", "long[][]", "float[]",
         "long[string]", "Nullable!(long)", "Nullable!(string)", "Nullable!(long[string])", "Tuple!(long, long)",
         "Tuple!(Nullable!(long), Nullable!(long))", "Tuple!(string, double[])", "ubyte", "ulong")
T = {name: index for index, name in enumerate(TYPES)}


def F(x: float) -> v.Node:  # noqa: N802
    return v.f32(x)


# (type, value) pairs a D receiver rebuilds as that type and sends back unchanged.
ROUND_TRIP = [
    ("bool", v.TRUE), ("bool", v.FALSE),
    ("long", L(0)), ("long", L(-1)), ("long", L(2**63 - 1)), ("long", L(-(2**63))), ("int", I(-(2**31))),
    ("ubyte", v.integer(255, "B")), ("ulong", v.integer(2**64 - 1, "L")),
    ("float", F(0.5)), ("float", F(-0.0)), ("float", v.Node("f", 0x7FC00ABC)), ("float", F(float("inf"))),
    ("double", D(-0.0)), ("double", D(5e-324)), ("double", bits(0x7FF8000000000ABC)), ("double", bits(0xFFF8000000000001)),
    ("char", v.Node("c", 0)), ("char", v.Node("c", 0xFF)),
    ("string", S("")), ("string", S("h\u00e9llo")), ("string", S("\U0001f600")), ("string", S("a\x00b")),
    ("string", S(b"\xff\xfe")),
    ("long[]", v.seq("A", [])), ("long[]", v.seq("A", [L(1), L(-2)])),
    ("string[]", v.seq("A", [S("a"), S("")])),
    ("long[][]", v.seq("A", [v.seq("A", []), v.seq("A", [L(3)])])), ("float[]", v.seq("A", [F(1.5), F(-2.0)])),
    ("long[string]", v.pairs("M", [])), ("long[string]", v.pairs("M", [(S("only"), L(7))])),
    ("Nullable!(long)", v.EMPTY), ("Nullable!(long)", v.present(L(5))),
    ("Nullable!(string)", v.present(S("x"))), ("Nullable!(long[string])", v.present(v.pairs("M", [(S("k"), L(1))]))),
    ("Nullable!(long[string])", v.EMPTY),
    ("Tuple!(long, long)", v.seq("P", [L(1), L(2)])),
    ("Tuple!(Nullable!(long), Nullable!(long))", v.seq("P", [v.EMPTY, v.present(L(-3))])),
    ("Tuple!(string, double[])", v.seq("P", [S("t"), v.seq("A", [D(0.25)])])),
]

# D expressions (compiled in the script) and the reference value each must encode to.
LITERALS = {
    "true": v.TRUE, "42L": L(42), "-7": I(-7), "cast(ubyte) 200": v.integer(200, "B"), "2.5f": F(2.5),
    "-0.0": D(-0.0), "double.nan": bits(0x7FF8000000000000), "'z'": v.Node("c", ord("z")), "\"h\u00e9\"": S("h\u00e9"),
    "[1L, 2L]": v.seq("A", [L(1), L(2)]), "[[1L], []]": v.seq("A", [v.seq("A", [L(1)]), v.seq("A", [])]),
    "[\"k\": 3L]": v.pairs("M", [(S("k"), L(3))]), "Nullable!long()": v.EMPTY, "Nullable!long(9)": v.present(L(9)),
    "tuple(1L, \"a\")": v.seq("P", [L(1), S("a")]), "tuple(Nullable!long(), 2.0f)": v.seq("P", [v.EMPTY, F(2.0)]),
    "Nullable!(string[])([\"a\"])": v.present(v.seq("A", [S("a")])),
}

# (type, bytes) the receiver must refuse: another type's tag, truncated, trailing bytes, a wrong arity.
REFUSED = {
    "a long for a string": ("string", v.encode(L(1))),
    "an int for a long": ("long", v.encode(I(1))),
    "a double for a float": ("float", v.encode(D(1.0))),
    "null for a bool": ("bool", b"n"),
    "a truncated long": ("long", b"l\x00\x00"),
    "a string claiming more bytes than sent": ("string", raw("s", b"\x00\x00\x01\x00", "abc")),
    "an array claiming a billion values": ("long[]", raw("A", b"\x3b\x9a\xca\x00")),
    "trailing bytes": ("long", v.encode(L(1)) + b"x"),
    "a set for an array": ("long[]", v.encode(v.seq("S", []))),
    "a map with a key twice": ("long[string]", v.encode(v.pairs("M", [(S("a"), L(1)), (S("a"), L(2))]))),
    "a tuple of three for a pair": ("Tuple!(long, long)", v.encode(v.seq("P", [L(1), L(2), L(3)]))),
    "a present value without its value": ("Nullable!(long)", b"Y"),
    "a value of an unknown type for an optional": ("Nullable!(long)", v.encode(v.Node("X", None, "Object"))),
    "a char beyond one byte": ("char", v.encode(v.Node("c", 0x100))),
    "an unknown tag": ("long", b"?"),
}

SCRIPT = r"""
import passk.wire;
import std.conv : to;
import std.meta : AliasSeq;
import std.stdio : readln, writeln;
import std.string : split, strip;
import std.typecons : Nullable, Tuple, tuple;

alias Types = AliasSeq!(%TYPES%);

string hex(const(ubyte)[] data) {
    import std.format : format;
    string out_;
    foreach (b; data) out_ ~= format("%02x", b);
    return out_;
}

string encoded(T)(T value) {
    Writer w;
    encode(w, value);
    return hex(w.data);
}

void main() {
    static foreach (expression; [%LITERALS%]) writeln(encoded(mixin(expression)));
    string line;
    while ((line = readln()) !is null) {
        auto parts = line.strip.split(" ");
        const index = parts[0].to!size_t;
        ubyte[] data;
        const text = parts.length > 1 ? parts[1] : "";
        for (size_t i = 0; i + 1 < text.length; i += 2) data ~= text[i .. i + 2].to!ubyte(16);
        dispatch: switch (index) {
            static foreach (k, T; Types) {
                case k:
                    try {
                        auto r = Reader(data);
                        auto value = decode!T(r);
                        r.finish();
                        writeln(encoded(value));
                    } catch (Malformed) {
                        writeln("malformed");
                    }
                    break dispatch;
            }
            default:
                assert(0);
        }
    }
}
"""


def _script() -> str:
    literals = ", ".join('"' + expression.replace("\\", "\\\\").replace('"', '\\"') + '"' for expression in LITERALS)
    return SCRIPT.replace("%TYPES%", ", ".join(TYPES)).replace("%LITERALS%", literals)


@pytest.mark.slow
def test_codec_matches_the_reference(docker_client) -> None:  # type: ignore[no-untyped-def]
    image = ensure_language_image(docker_client, "d")
    lines = [f"{T[kind]} {v.encode(node).hex()}" for kind, node in ROUND_TRIP]
    lines += [f"{T[kind]} {data.hex()}" for kind, data in REFUSED.values()]
    out = container_stdout(docker_client, image, [
        "sh", "-c", 'cd /tmp && printf "%s" "$SCRIPT" > codec.d && ldc2 -I/opt/passk/d -of=codec codec.d '
        '/opt/passk/d/libpassk.a && printf "%s" "$INPUT" | ./codec'],
        environment={"SCRIPT": _script(), "INPUT": "\n".join(lines) + "\n"}).split()
    literals, round_trip, refused = out[:len(LITERALS)], out[len(LITERALS):len(LITERALS) + len(ROUND_TRIP)], \
        out[len(LITERALS) + len(ROUND_TRIP):]
    assert_matches_the_reference([node for _, node in ROUND_TRIP], round_trip, LITERALS, literals,
                                 {label: data for label, (_, data) in REFUSED.items()}, refused, "malformed")


ECHO_PROMPT = (
    "import std.typecons;\n/* Return x unchanged. */\n"
    "Tuple!(long[string], Nullable!(string)[], float, bool[][]) echo(Tuple!(long[string], Nullable!(string)[], float, "
    "bool[][]) x, string s) \n"
)
ECHO_TESTS = (
    "unittest\n{\n    alias candidate = echo;\n\n"
    "    auto x = tuple([\"a\": 1L, \"\\u00e9\": -2L], [Nullable!string(\"h\\u00e9\"), Nullable!string()], -0.5f,"
    " [[true], [], [false, true]]);\n"
    "    assert(candidate(x, \"s\") == x);\n"
    "    auto empty = tuple((long[string]).init, (Nullable!(string)[]).init, 0.0f, (bool[][]).init);\n"
    "    assert(candidate(empty, \"\") == empty);\n}\nvoid main(){}"
)


@pytest.mark.slow
def test_nested_values_cross_as_in_one_process(docker_client) -> None:  # type: ignore[no-untyped-def]
    image = ensure_language_image(docker_client, "d")
    right, wrong, changed = echo_outcomes(docker_client, image, "d", ECHO_PROMPT, ECHO_TESTS, [
        "{\n    return x;\n}\n",
        "{\n    auto y = x;\n    y[2] = 1.0f;\n    return y;\n}\n",
        "{\n    auto y = x;\n    if (s.length) y[0][\"b\"] = 3;\n    return y;\n}\n",
    ])
    assert right.verdict is Verdict.PASSED, right
    assert wrong.verdict is Verdict.FAILED and changed.verdict is Verdict.FAILED, (wrong, changed)
