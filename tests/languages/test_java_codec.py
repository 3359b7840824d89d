"""Java's codec (sandbox/languages/java/passk/Wire.java) against the Python reference (sandbox/runtime/values.py),
in the real Java image: each value of the types HumanEval-X's and MultiPL-E's Java signatures use is rebuilt by
Wire.decode as its declared type and encoded again by Wire.encode, and must come back byte for byte; bytes that
are not a value of the declared type must be refused."""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path

import pytest

from sandbox.runtime import values as v

# One identity method per declared type: its parameter type guides the decode, its return type the encode.
TYPES = {
    "int": "int", "long": "long", "float": "float", "double": "double", "boolean": "boolean", "char": "char",
    "Integer": "Integer", "Long": "Long", "String": "String", "Object": "Object",
    "ListInteger": "List<Integer>", "ListListInteger": "List<List<Integer>>", "ArrayListLong": "ArrayList<Long>",
    "ListString": "List<String>", "ListDouble": "List<Double>", "ListObject": "List<Object>",
    "ArrayListFloat": "ArrayList<Float>", "MapStringInteger": "Map<String, Integer>",
    "HashMapStringLong": "HashMap<String, Long>", "MapObjectObject": "Map<Object, Object>",
    "OptionalInteger": "Optional<Integer>", "OptionalObject": "Optional<Object>", "OptionalLong": "Optional<Long>",
    "PairLongLong": "Pair<Long, Long>", "TripletLongStringBoolean": "Triplet<Long, String, Boolean>",
    "ListOptionalInteger": "List<Optional<Integer>>", "ArrayListPairStringLong": "ArrayList<Pair<String, Long>>",
    "BigInteger": "BigInteger", "intArray": "int[]",
}

ECHO = """import java.io.*;
import java.lang.reflect.*;
import java.math.BigInteger;
import java.nio.file.*;
import java.util.*;
import org.javatuples.*;

class Echo {
%s
    public static void main(String[] args) throws Exception {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(Files.readAllBytes(Path.of("in.bin"))));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (in.available() > 0) {
            byte[] frame = new byte[in.readInt()];
            in.readFully(frame);
            passk.Wire.In r = new passk.Wire.In(frame);
            String name = r.string();
            Method m = null;
            for (Method each : Echo.class.getDeclaredMethods()) if (each.getName().equals(name)) m = each;
            passk.Wire.Out o = new passk.Wire.Out();
            try {
                Object value = passk.Wire.decode(r, m.getGenericParameterTypes()[0], 0);
                if (!r.done()) throw new passk.Wire.Malformed("trailing bytes");
                o.b('R');
                passk.Wire.encode(o, m.getGenericReturnType(), value, 0);
            } catch (passk.Wire.Malformed e) {
                o = new passk.Wire.Out();
                o.b('B');
                o.string(String.valueOf(e.getMessage()));
            } catch (passk.Wire.Unsendable e) {
                o = new passk.Wire.Out();
                o.b('U');
                o.string(e.type);
            }
            byte[] bytes = o.toBytes();
            new DataOutputStream(out).writeInt(bytes.length);
            out.write(bytes);
        }
        Files.write(Path.of("out.bin"), out.toByteArray());
    }
}
""" % "".join(f"    static {kind} echo_{name}({kind} x) {{ return x; }}\n" for name, kind in TYPES.items())


def i(n: int) -> v.Node:
    return v.integer(n, "i")


def l(n: int) -> v.Node:  # noqa: E741, E743
    return v.integer(n, "l")


def s(text: str | bytes) -> v.Node:
    return v.string(text)


def a(type_name: str, value: v.Node) -> v.Node:
    return v.dynamic(type_name, value)


def seq(*items: v.Node, tag: str = "A") -> v.Node:
    return v.seq(tag, list(items))


def f32_bits(bits: int) -> v.Node:
    return v.Node("f", bits)


def f64_bits(bits: int) -> v.Node:
    return v.Node("d", bits)


def nested(depth: int) -> v.Node:
    node = a("java.util.List", seq())
    for _ in range(depth - 1):
        node = a("java.util.List", seq(node))
    return node


# (method, value): must come back byte for byte.
ROUND_TRIPS = [
    *(("int", i(n)) for n in (0, 1, -1, 2**31 - 1, -2**31)),
    *(("long", l(n)) for n in (0, -1, 2**63 - 1, -2**63, 2**40 + 7)),
    *(("float", f32_bits(bits)) for bits in (0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00001, 0x7FA00000, 1,
                                              0x3FC00000)),
    *(("double", f64_bits(bits)) for bits in (0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000,
                                               0x7FF8000000000001, 0xFFF8DEADBEEF0001, 1, 0x3FF8000000000000)),
    ("boolean", v.TRUE), ("boolean", v.FALSE),
    *(("char", v.Node("c", unit)) for unit in (0, 65, 0xE9, 0xD800, 0xDC00, 0xFFFF)),
    ("Integer", i(7)), ("Integer", v.NULL), ("Long", l(-2**63)),
    *(("String", s(text)) for text in ("", "abc", "h\u00e9llo \u4e16\u754c", "\U0001F600", "a\udc00b", "\ud800",
                                       "\x00nul", "\ud800\U0001F600\udfff")),
    ("String", v.NULL),
    ("ListInteger", seq()), ("ListInteger", seq(i(1), i(-2), i(2**31 - 1))), ("ListInteger", seq(i(1), v.NULL)),
    ("ListListInteger", seq(seq(), seq(i(1)), seq(i(2), i(3)))), ("ArrayListLong", seq(l(3), l(-5))),
    ("ListString", seq(s(""), s("x"), s("\U0001F600"))), ("ListDouble", seq(f64_bits(0x7FF8000000000001), v.f64(-0.0))),
    ("ArrayListFloat", seq(v.f32(1.5), f32_bits(0x80000000))),
    # The sender's order (rebuilt as a LinkedHashMap); a HashMap is rebuilt as one, in its own order (here the same).
    ("MapStringInteger", v.pairs("M", [(s("b"), i(1)), (s("a"), i(2)), (s("c"), i(3))])),
    ("MapStringInteger", v.pairs("M", [])),
    ("HashMapStringLong", v.pairs("M", [(s("a"), l(1)), (s("b"), l(2))])),
    ("MapObjectObject", v.pairs("M", [(a("java.lang.String", s("k")), a("java.lang.Integer", i(1))),
                                      (a("java.lang.Integer", i(2)), a("java.lang.Long", l(2)))])),
    ("OptionalInteger", v.EMPTY), ("OptionalInteger", v.present(i(5))), ("OptionalLong", v.present(l(-1))),
    ("OptionalObject", v.present(a("java.lang.String", s("2,3")))), ("OptionalObject", v.present(a("java.lang.Double", v.f64(2.5)))),
    ("PairLongLong", seq(l(1), l(2), tag="P")),
    ("TripletLongStringBoolean", seq(l(1), s("x"), v.TRUE, tag="P")),
    ("ListOptionalInteger", seq(v.EMPTY, v.present(i(3)))),
    ("ArrayListPairStringLong", seq(seq(s("a"), l(1), tag="P"))),
    # Dynamic values keep their runtime type: Integer, Long, Double, Float, Character, Boolean, String, containers.
    *(("Object", node) for node in (
        v.NULL, a("java.lang.Integer", i(5)), a("java.lang.Long", l(5)), a("java.lang.Double", v.f64(5.0)),
        a("java.lang.Float", v.f32(5.0)), a("java.lang.Character", v.Node("c", 99)), a("java.lang.Boolean", v.FALSE),
        a("java.lang.String", s("adasd")), a("java.lang.Short", v.integer(-3, "h")), a("java.lang.Byte", v.integer(-3, "b")),
        a("java.util.List", seq(a("java.lang.Integer", i(1)), a("java.util.Map", v.pairs("M", [])), v.NULL)),
        a("java.util.Set", seq(a("java.lang.Integer", i(1)), tag="S")),
        a("java.util.Optional", v.present(a("java.lang.Integer", i(1)))),
        a("org.javatuples.Pair", seq(a("java.lang.Long", l(1)), a("java.lang.String", s("b")), tag="P")),
        a("java.math.BigInteger", v.Node("z", -(2**100))),
        nested(45),  # 90 levels deep: within MAX_DEPTH
    )),
    ("ListObject", seq(a("java.lang.Integer", i(4)), a("java.util.Map", v.pairs("M", [])),
                       a("java.util.List", seq()), a("java.lang.Double", v.f64(23.2)), a("java.lang.Character", v.Node("c", 97)))),
    *(("BigInteger", v.Node("z", n)) for n in (0, 1, -1, 127, 128, -128, -129, 255, 2**64, -(2**64))),
    ("intArray", seq(i(1), i(2))), ("intArray", seq()),
]

# (method, bytes of a value): must be refused as Malformed ('B'), or as a type not carried ('U').
REFUSED = [
    ("int", v.encode(l(1)), "B"), ("long", v.encode(i(1)), "B"), ("int", v.encode(v.NULL), "B"),
    ("Integer", v.encode(l(1)), "B"), ("double", v.encode(v.f32(1.0)), "B"), ("boolean", b"i", "B"),
    ("String", b"s\x00\x00\x00\x01\xff", "B"), ("String", b"s\x00\x00\x00\x02\xc0\x80", "B"),
    ("String", b"s\x00\x00\x00\x06\xed\xa0\xbd\xed\xb8\x80", "B"),  # a surrogate pair written as two halves
    ("String", b"s\x00\x00\x00\x04\xf4\x90\x80\x80", "B"),  # above U+10FFFF
    ("String", b"s\x00\x00\x00\x09abc", "B"),  # truncated
    ("ListInteger", b"A\x7f\xff\xff\xff", "B"),  # a count larger than the message
    ("ListInteger", v.encode(seq(l(1))), "B"),
    ("OptionalInteger", b"Yn", "B"), ("OptionalInteger", v.encode(i(1)), "B"),
    ("Object", v.encode(a("Evil", i(1))), "B"), ("Object", v.encode(i(1)), "B"),
    ("Object", v.encode(a("java.lang.Integer", l(1))), "B"),
    ("MapStringInteger", v.encode(v.pairs("M", [(s("a"), i(1)), (s("a"), i(2))])), "B"),
    ("PairLongLong", v.encode(seq(l(1), l(2), l(3), tag="P")), "B"),
    ("char", b"c\x00\x01\x00\x00", "B"),
    ("int", v.encode(i(1)) + b"\x00", "B"),
    ("Object", v.encode(nested(60)), "B"),  # 120 levels deep
    ("ListInteger", v.encode(v.Node("X", None, "Thread")), "U"),
    ("ListObject", v.encode(seq(v.Node("X", None, "Solution$1"))), "U"),
]


def _frames(items: list[tuple[str, bytes]]) -> bytes:
    out = bytearray()
    for name, data in items:
        name = "echo_" + name
        body = struct.pack(">I", len(name)) + name.encode() + data
        out += struct.pack(">I", len(body)) + body
    return bytes(out)


def _read_frames(data: bytes) -> list[bytes]:
    frames, at = [], 0
    while at < len(data):
        (size,) = struct.unpack(">I", data[at:at + 4])
        frames.append(data[at + 4:at + 4 + size])
        at += 4 + size
    return frames


@pytest.fixture(scope="module")
def echoed(docker_client) -> list[bytes]:  # type: ignore[no-untyped-def]
    from sandbox.images import ensure_language_image
    from sandbox.languages import get
    from sandbox.languages.java import CLASSPATH, RUN_ARCHIVE

    image = ensure_language_image(docker_client, get("java"))
    inputs = [(name, v.encode(node)) for name, node in ROUND_TRIPS] + [(name, data) for name, data, _ in REFUSED]
    with tempfile.TemporaryDirectory() as work:
        Path(work, "Echo.java").write_text(ECHO)
        Path(work, "in.bin").write_bytes(_frames(inputs))
        Path(work).chmod(0o777)
        docker_client.containers.run(
            image, entrypoint="sh", network_mode="none", remove=True, working_dir="/w",
            volumes={work: {"bind": "/w", "mode": "rw"}},
            # -Xshare:on: the runs' class-data-sharing archive must map with the runs' class path (no silent miss).
            command=["-c", f"javac -nowarn -cp {CLASSPATH} Echo.java"
                     f" && java -Xshare:on -XX:SharedArchiveFile={RUN_ARCHIVE} -cp {CLASSPATH} Echo"],
        )
        return _read_frames(Path(work, "out.bin").read_bytes())


def test_values_round_trip_byte_for_byte(echoed: list[bytes]) -> None:
    wrong = []
    for (name, node), got in zip(ROUND_TRIPS, echoed, strict=False):
        want = b"R" + v.encode(node)
        if got != want:
            wrong.append((name, node, want, got))
        else:
            assert v.same(v.parse_message(got)[1], node)  # type: ignore[arg-type]
    assert not wrong, wrong


def test_anything_else_is_refused(echoed: list[bytes]) -> None:
    got = echoed[len(ROUND_TRIPS):]
    assert len(got) == len(REFUSED)
    wrong = [(name, data, kind, answer) for (name, data, kind), answer in zip(REFUSED, got, strict=True)
             if answer[:1].decode() != kind]
    assert not wrong, wrong
