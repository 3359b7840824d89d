"""C#'s value wire (sandbox/languages/csharp/Wire.cs, in the image's passk.dll) against the Python reference codec
(sandbox/runtime/values.py), in the real C# image: values round-trip byte for byte as the type each is declared,
C#'s own values encode to exactly the reference's bytes, and malformed bytes (or bytes of another type) are
refused."""

from __future__ import annotations

import pytest

from sandbox.images import ensure_language_image
from sandbox.languages import get
from sandbox.runtime import values as v
from tests.languages.codec import D, S, U32, assert_matches_the_reference, bits, container_stdout, raw

L = v.integer  # a long ('l')
Z = lambda n: v.integer(n, "z")  # noqa: E731
A = lambda *items: v.seq("A", list(items))  # noqa: E731


def typed(name: str, node: v.Node) -> v.Node:
    return v.dynamic(name, node)


def _nested_objects(depth: int) -> v.Node:
    node = v.NULL
    for _ in range(depth):
        node = typed("List<object>", A(node))
    return node


# (declared type, value) a C# receiver rebuilds as that type and sends back unchanged.
ROUND_TRIP: list[tuple[str, v.Node]] = [
    ("bool", v.TRUE), ("bool", v.FALSE), ("long", L(0)), ("long", L(-(2**63))), ("long", L(2**63 - 1)),
    ("int", v.integer(-7, "i")), ("sbyte", v.integer(-128, "b")), ("short", v.integer(300, "h")),
    ("byte", v.integer(255, "B")), ("ushort", v.integer(65535, "H")), ("uint", v.integer(2**32 - 1, "I")),
    ("ulong", v.integer(2**64 - 1, "L")),
    ("BigInteger", Z(0)), ("BigInteger", Z(-1)), ("BigInteger", Z(255)), ("BigInteger", Z(-129)),
    ("BigInteger", Z(2**100)), ("BigInteger", Z(-(2**70) + 3)),
    ("double", D(0.0)), ("double", D(-0.0)), ("double", D(1.5)), ("double", D(float("-inf"))), ("double", D(5e-324)),
    ("double", bits(0x7FF8000000000000)), ("double", bits(0xFFF8000000000001)),
    ("float", v.f32(1.5)), ("float", v.f32(-0.0)), ("float", v.f32(float("inf"))),
    ("char", v.Node("c", 65)), ("char", v.Node("c", 0xD800)), ("char", v.Node("c", 0xFFFF)),
    ("string", S("")), ("string", S("h\u00e9llo")), ("string", S("\U0001f600")), ("string", S("a\x00b")),
    ("string", S(b"\xed\xa0\x80")), ("string", S(b"\xed\xbf\xbfx")), ("string", v.NULL),
    ("List<long>", A()), ("List<long>", A(L(1), L(-2))), ("List<List<string>>", A(A(S("x"), v.NULL), v.NULL, A())),
    ("long[]", A(L(3))), ("List<float>", A(v.f32(0.5))),
    ("Dictionary<string,long>", v.pairs("M", [(S("b"), L(1)), (S("a"), L(2))])),
    ("Dictionary<long,List<string>>", v.pairs("M", [(L(1), A(S("x"))), (L(0), v.NULL)])),
    ("HashSet<long>", v.seq("S", [L(3), L(1)])),
    ("Tuple<long,string>", v.seq("P", [L(1), S("x")])),
    ("Tuple<Nullable<long>,Nullable<long>>", v.seq("P", [v.NULL, L(4)])),
    ("ValueTuple<long,bool,double>", v.seq("P", [L(1), v.TRUE, D(2.0)])),
    ("Nullable<long>", v.NULL), ("Nullable<long>", L(5)),
    ("object", v.NULL), ("object", typed("long", L(1))), ("object", typed("float", v.f32(23.2))),
    ("object", typed("string", S("adasd"))),
    ("object", typed("List<object>", A(typed("long", L(4)), typed("List<object>", A()), v.NULL))),
    ("object", typed("Dictionary<string,object>", v.pairs("M", [(S("k"), typed("bool", v.TRUE))]))),
    ("object", typed("Tuple<long,Nullable<long>>", v.seq("P", [L(1), v.NULL]))),
    ("object", typed("long[]", A(L(1)))),
]

# (declared type, C# expression) and the reference value each must encode to.
LITERALS: dict[tuple[str, str], v.Node] = {
    ("long", "-1L"): L(-1), ("string", '"\\ud800"'): S(b"\xed\xa0\x80"), ("string", '"\\ud83d\\ude00"'): S("\U0001f600"),
    ("double", "double.NaN"): bits(0xFFF8000000000000), ("float", "0.1f"): v.f32(0.1),
    ("char", "'\\u00e9'"): v.Node("c", 0xE9), ("BigInteger", "BigInteger.Pow(2, 64)"): Z(2**64),
    ("List<long>", "new List<long> {1, 2}"): A(L(1), L(2)),
    ("IEnumerable<long>", "new long[] {7}"): A(L(7)),
    ("object", "new List<object> {4L, \"x\", null, 2.5f}"):
        typed("List<object>", A(typed("long", L(4)), typed("string", S("x")), v.NULL, typed("float", v.f32(2.5)))),
    ("Tuple<long,long>", "Tuple.Create(1L, 2L)"): v.seq("P", [L(1), L(2)]),
    ("Nullable<long>", "(long?) null"): v.NULL,
    ("Dictionary<string,long>", 'new Dictionary<string,long> {{"b", 2}, {"a", 1}}'): v.pairs("M", [(S("b"), L(2)),
                                                                                                   (S("a"), L(1))]),
    # A subclass of a carried collection crosses as what it holds: the tests' own Equals sees only its contents.
    ("List<long>", "new PasskList {5}"): A(L(5)),
    # What cannot be rebuilt: X with the runtime type's name (the judge reports it as a type it cannot compare).
    ("object", "new System.Text.StringBuilder()"): v.Node("X", None, "System.Text.StringBuilder"),
    ("object", "new PasskList()"): v.Node("X", None, "PasskList"),
    ("object", "new object()"): v.Node("X", None, "System.Object"),
    ("object", "Deep(150)"): v.Node("X", None, "deeply nested value"),
}

# (declared type, bytes) a C# receiver must refuse (Malformed), never coerce.
REFUSED: dict[str, tuple[str, bytes]] = {
    "an int32 for a long": ("long", raw("i", U32(1))),
    "a long for an int": ("int", raw("l", b"\0" * 8)),
    "null for a long": ("long", raw("n")),
    "trailing bytes": ("bool", raw("T", "T")),
    "a truncated double": ("double", raw("d", b"\0\0\0")),
    "a character past UTF-16": ("char", raw("c", U32(0x10000))),
    "a string that is not WTF-8": ("string", raw("s", U32(1), b"\xff")),
    "a surrogate pair as two 3-byte forms": ("string", raw("s", U32(6), b"\xed\xa0\xbd\xed\xb8\x80")),
    "an overlong form": ("string", raw("s", U32(2), b"\xc0\x80")),
    "a count past the end": ("List<long>", raw("A", U32(5), "n")),
    "a huge count past the end": ("List<long>", raw("A", U32(0xFFFFFFFF))),
    "a map with a key twice": ("Dictionary<string,long>", raw("M", U32(2), "s", U32(0), "l", b"\0" * 8, "s", U32(0),
                                                              "l", b"\0" * 8)),
    "a map with a null key": ("Dictionary<string,long>", raw("M", U32(1), "n", "l", b"\0" * 8)),
    "a set with an item twice": ("HashSet<long>", raw("S", U32(2), "l", b"\0" * 8, "l", b"\0" * 8)),
    "a tuple of another size": ("Tuple<long,long>", raw("P", U32(1), "l", b"\0" * 8)),
    "an integer not in its shortest form": ("BigInteger", raw("z", U32(2), b"\x00\x01")),
    "a dynamic value of a class of the candidate's": ("object", v.encode(typed("Problem", L(1)))),
    "a dynamic value of type object": ("object", v.encode(typed("object", v.NULL))),
    "a dynamic type by another spelling": ("object", v.encode(typed("System.Int64", L(1)))),
    "a value that is not dynamic for an object": ("object", v.encode(L(1))),
    "an unknown tag": ("long", raw("?")),
    "empty": ("long", b""),
    "nested too deeply": ("object", v.encode(_nested_objects(v.MAX_DEPTH + 2))),
}

SCRIPT = r"""
using System;
using System.Collections.Generic;
using System.Numerics;
using Passk;

class PasskList : List<long> {}

static class CodecTest {
    static object Deep(int n) { object o = new List<object>(); for (int i = 0; i < n; i++) o = new List<object> {o}; return o; }
    static string Hex(byte[] b) { return BitConverter.ToString(b).Replace("-", "").ToLowerInvariant(); }
    static byte[] Bytes(string hex) {
        var b = new byte[hex.Length / 2];
        for (int i = 0; i < b.Length; i++) b[i] = Convert.ToByte(hex.Substring(2 * i, 2), 16);
        return b;
    }
    static string Literal(Type type, Func<object> value) {
        try { return Hex(Wire.Encode(type, value())); }
        catch (Unsendable e) { var o = new Wire.Out(); o.B('X'); o.String(e.Type); return Hex(o.ToArray()); }
    }
    static void Main(string[] args) {
        foreach (string line in System.IO.File.ReadAllLines(args[0])) {
            string[] f = line.Split('\t');
            try {
                if (f[0] == "round") { Type t = Wire.Named(f[1]); Console.WriteLine(Hex(Wire.Encode(t, Wire.Decode(t, Bytes(f[2]))))); }
                else { Wire.Decode(Wire.Named(f[1]), Bytes(f[2])); Console.WriteLine("accepted"); }
            } catch (Exception e) { Console.WriteLine(e.GetType().Name); }
        }
LITERALS
    }
}
"""


def script() -> str:
    literals = "".join(f"        Console.WriteLine(Literal(typeof({kind}), () => ({expression})));\n"
                       for kind, expression in LITERALS)
    return SCRIPT.replace("LITERALS\n", literals)


@pytest.fixture(scope="module")
def image(docker_client) -> str:  # type: ignore[no-untyped-def]
    return ensure_language_image(docker_client, get("csharp"))


@pytest.mark.slow
def test_codec_matches_the_reference_byte_for_byte(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    refused = REFUSED
    lines = [f"round\t{kind}\t{v.encode(node).hex()}" for kind, node in ROUND_TRIP]
    lines += [f"refuse\t{kind}\t{data.hex()}" for kind, data in refused.values()]
    command = ("cd /tmp && printf '%s' \"$SCRIPT\" > t.cs && printf '%s' \"$INPUT\" > in.txt"
               " && mcs -nologo -r:System.Numerics.dll -r:/opt/passk/csharp/passk.dll -out:t.exe t.cs >&2"
               " && MONO_PATH=/opt/passk/csharp mono t.exe in.txt")
    out = container_stdout(docker_client, image, ["sh", "-c", command],
                           environment={"SCRIPT": script(), "INPUT": "\n".join(lines) + "\n"}).splitlines()
    round_back = out[:len(ROUND_TRIP)]
    refused_back = out[len(ROUND_TRIP):len(ROUND_TRIP) + len(refused)]
    literals_back = out[len(ROUND_TRIP) + len(refused):]
    assert_matches_the_reference([node for _, node in ROUND_TRIP], round_back, LITERALS, literals_back,
                                 {label: data for label, (_, data) in refused.items()}, refused_back, "Malformed")
