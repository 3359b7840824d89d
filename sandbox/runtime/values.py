"""The value wire: how a judge calls the candidate's function in another process, in every language but Python.

A judge (the problem's tests, compiled or loaded without any of the model's code) and a candidate (the
model's code and passk's server for it) are two processes under two uids (process.py). Where the tests call
the function the model wrote, the judge has a stub with the prompt's signature; the stub sends the
arguments as values, the candidate's server calls the real function and sends back what it returned. Only
values cross, rebuilt by type from data, so nothing the model wrote ever runs in the judge. Each language
implements this file once (its codec, in sandbox/languages/<name>/); this module is the rule and a reference
codec in Python that the languages' tests compare against.

Descriptors. The judge writes calls on its fd 4 and reads answers on its fd 5 (it reports to PID 1 on fd 3:
report.py). The candidate reads calls on its fd 3 and answers on its fd 4. Its fds 0-2 are its own
stdin (/dev/null), stdout and stderr: its output never reaches the judge.

Framing. A message is a 4-byte big-endian length N, then N bytes. Messages:

    judge -> candidate   'C' <string name> <u32 count> <count values>      call the function `name`
    candidate -> judge   'R' <value>                                       it returned this
                         'E' <string class> <string message>               it threw / panicked
                         'U' <string type>                                 it returned a value of a type the
                                                                           wire cannot carry
The judge closes its end when the tests are done; the candidate then exits with status 0. A reply that is
not exactly one well-formed message answering the pending call (garbled bytes, trailing bytes, a message
before any call) is BROKEN in the judge's report, flagged `out_of_turn`.

Values: a tag byte, then its payload. Integers and lengths are big-endian; a <string> is <u32 n> <n bytes>.

    n                      null: nullptr, null, nil, None
    u                      JavaScript's undefined
    F  T                   false, true
    b h i l                signed integers of 8, 16, 32, 64 bits (two's complement)
    B H I L                unsigned integers of 8, 16, 32, 64 bits
    z <u32 n> <n bytes>    an integer of any size, two's complement (BigInteger, BigInt); n = 0 is zero
    f                      binary32 float, its 4 bytes of IEEE 754 bits (NaN payloads and -0.0 kept)
    d                      binary64 float, its 8 bytes of IEEE 754 bits
    c <u32>                a character: C++ char (its byte, 0-255), Java char (its UTF-16 unit), Rust char
                           (its scalar value); Go's rune is an int32 and crosses as `i`
    s <string>             a string: C++ and Go strings as their bytes; Rust as its UTF-8; Java and JavaScript
                           as WTF-8 (UTF-8 of their UTF-16 units, a lone surrogate as its own 3-byte form)
    A <u32 n> <n values>   a sequence: vector, list, array, slice, Vec
    P <u32 n> <n values>   a tuple: pair, tuple, javatuples' Pair/Triplet/..., Rust's tuples
    M <u32 n> <n pairs>    a map, each pair a key value and a value value, in the sender's iteration order
    S <u32 n> <n values>   a set
    O <u32 n> <n pairs>    a JavaScript plain object: each pair a <string> key and a value, in key order
    N                      an empty optional: std::nullopt, Optional.empty(), Rust's None
    Y <value>              a present optional holding the value
    a <string t> <value>   a value of a dynamic type (C++'s boost::any / std::any, Rust's Box<dyn Any>, Go's
                           interface{}): `t` is the type in the language's own notation, then the value as
                           that type; an empty any is type "" with the value n
    X <string t>           a value of a type the wire cannot carry, by name (never rebuilt: the judge fails
                           the sample as `error`, "returned a value of type t")

A receiver rebuilds a value as the type it expects (the prompt's signature) and refuses any other tag; where
it expects a dynamic type it rebuilds the type named (from a fixed list per language, never a class the
candidate defined). Nesting deeper than MAX_DEPTH is sent as X "deeply nested value".
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

MAX_DEPTH = 100
MAX_MESSAGE = 1 << 30

_INTS = {"b": (1, True), "h": (2, True), "i": (4, True), "l": (8, True),
         "B": (1, False), "H": (2, False), "I": (4, False), "L": (8, False)}
_SEQUENCES = {"A", "P", "S"}
_PAIRS = {"M", "O"}


@dataclass(frozen=True)
class Node:
    """One decoded value: its tag and its payload (an int, float bits, bytes, a tuple of Nodes, ...)."""

    tag: str
    payload: object = None
    type_name: str = ""  # `a` and `X` only

    def __repr__(self) -> str:
        return f"Node({self.tag!r}, {self.payload!r}{', ' + repr(self.type_name) if self.type_name else ''})"


# ------------------------------------------------------------------ building nodes from Python values


def integer(value: int, tag: str = "l") -> Node:
    size, signed = _INTS[tag] if tag != "z" else (0, True)
    if tag != "z":
        low, high = (-(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1) if signed else (0, (1 << (8 * size)) - 1)
        if not low <= value <= high:
            raise OverflowError(f"{value} does not fit {tag}")
    return Node(tag, value)


def f32(value: float) -> Node:
    return Node("f", struct.unpack(">I", struct.pack(">f", value))[0])


def f64(value: float) -> Node:
    return Node("d", struct.unpack(">Q", struct.pack(">d", value))[0])


def string(value: str | bytes) -> Node:
    return Node("s", value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass"))


def seq(tag: str, items: list[Node]) -> Node:
    return Node(tag, tuple(items))


def pairs(tag: str, items: list[tuple[Node, Node]]) -> Node:
    return Node(tag, tuple(items))


def dynamic(type_name: str, value: Node) -> Node:
    return Node("a", value, type_name)


NULL, UNDEFINED, FALSE, TRUE, EMPTY = Node("n"), Node("u"), Node("F"), Node("T"), Node("N")


def present(value: Node) -> Node:
    return Node("Y", value)


def float_value(node: Node) -> float:
    """The float a `f` or `d` node holds."""
    if node.tag == "f":
        return struct.unpack(">f", struct.pack(">I", node.payload))[0]
    return struct.unpack(">d", struct.pack(">Q", node.payload))[0]


# ------------------------------------------------------------------ bytes


def encode(node: Node) -> bytes:
    out = bytearray()
    _encode(node, out)
    return bytes(out)


def _string(data: bytes, out: bytearray) -> None:
    out += struct.pack(">I", len(data)) + data


def _encode(node: Node, out: bytearray) -> None:
    tag = node.tag
    out += tag.encode()
    if tag in ("n", "u", "F", "T", "N"):
        return
    if tag in _INTS:
        size, signed = _INTS[tag]
        out += int(node.payload).to_bytes(size, "big", signed=signed)  # type: ignore[call-overload]
    elif tag == "z":
        value = int(node.payload)  # type: ignore[call-overload]
        size = 0 if value == 0 else (value.bit_length() + 8) // 8
        out += struct.pack(">I", size) + (value.to_bytes(size, "big", signed=True) if size else b"")
    elif tag == "f":
        out += struct.pack(">I", node.payload)
    elif tag == "d":
        out += struct.pack(">Q", node.payload)
    elif tag == "c":
        out += struct.pack(">I", node.payload)
    elif tag == "s":
        _string(node.payload, out)  # type: ignore[arg-type]
    elif tag in _SEQUENCES:
        out += struct.pack(">I", len(node.payload))  # type: ignore[arg-type]
        for item in node.payload:  # type: ignore[union-attr]
            _encode(item, out)
    elif tag in _PAIRS:
        out += struct.pack(">I", len(node.payload))  # type: ignore[arg-type]
        for key, value in node.payload:  # type: ignore[union-attr]
            if tag == "O":
                _string(key if isinstance(key, bytes) else key.payload, out)
            else:
                _encode(key, out)
            _encode(value, out)
    elif tag == "Y":
        _encode(node.payload, out)  # type: ignore[arg-type]
    elif tag == "a":
        _string(node.type_name.encode(), out)
        _encode(node.payload, out)  # type: ignore[arg-type]
    elif tag == "X":
        _string(node.type_name.encode(), out)
    else:
        raise ValueError(f"unknown tag {tag!r}")


class Malformed(ValueError):
    """Bytes that are not a well-formed value (or message)."""


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, size: int) -> bytes:
        if size < 0 or self.at + size > len(self.data):
            raise Malformed("truncated")
        chunk = self.data[self.at:self.at + size]
        self.at += size
        return chunk

    def u32(self) -> int:
        return struct.unpack(">I", self.take(4))[0]

    def string(self) -> bytes:
        return self.take(self.u32())


def decode(data: bytes) -> Node:
    """The one value `data` holds (Malformed if it holds anything else)."""
    reader = _Reader(data)
    node = _decode(reader, 0)
    if reader.at != len(data):
        raise Malformed("trailing bytes")
    return node


def _decode(reader: _Reader, depth: int) -> Node:
    if depth > MAX_DEPTH:
        raise Malformed("nested too deeply")
    tag = reader.take(1).decode("latin-1")
    if tag in ("n", "u", "F", "T", "N"):
        return Node(tag)
    if tag in _INTS:
        size, signed = _INTS[tag]
        return Node(tag, int.from_bytes(reader.take(size), "big", signed=signed))
    if tag == "z":
        size = reader.u32()
        return Node(tag, int.from_bytes(reader.take(size), "big", signed=True) if size else 0)
    if tag in ("f", "c"):
        return Node(tag, reader.u32())
    if tag == "d":
        return Node(tag, struct.unpack(">Q", reader.take(8))[0])
    if tag == "s":
        return Node(tag, reader.string())
    if tag in _SEQUENCES:
        return Node(tag, tuple(_decode(reader, depth + 1) for _ in range(reader.u32())))
    if tag == "M":
        return Node(tag, tuple((_decode(reader, depth + 1), _decode(reader, depth + 1)) for _ in range(reader.u32())))
    if tag == "O":
        return Node(tag, tuple((reader.string(), _decode(reader, depth + 1)) for _ in range(reader.u32())))
    if tag == "Y":
        return Node(tag, _decode(reader, depth + 1))
    if tag == "a":
        name = reader.string().decode("utf-8", "replace")
        return Node(tag, _decode(reader, depth + 1), name)
    if tag == "X":
        return Node(tag, None, reader.string().decode("utf-8", "replace"))
    raise Malformed(f"unknown tag {tag!r}")


# ------------------------------------------------------------------ messages


def call(name: str, args: list[Node]) -> bytes:
    out = bytearray(b"C")
    _string(name.encode(), out)
    out += struct.pack(">I", len(args))
    for arg in args:
        _encode(arg, out)
    return bytes(out)


def returned(value: Node) -> bytes:
    return b"R" + encode(value)


def raised(class_name: str, message: str) -> bytes:
    out = bytearray(b"E")
    _string(class_name.encode("utf-8", "replace"), out)
    _string(message.encode("utf-8", "replace"), out)
    return bytes(out)


def frame(message: bytes) -> bytes:
    return struct.pack(">I", len(message)) + message


def parse_message(message: bytes) -> tuple[str, object]:
    """('C', (name, [args])) | ('R', value) | ('E', (class, message)) | ('U', type name); Malformed otherwise."""
    reader = _Reader(message)
    kind = reader.take(1).decode("latin-1")
    if kind == "C":
        name = reader.string().decode("utf-8", "replace")
        result: object = (name, [_decode(reader, 1) for _ in range(reader.u32())])
    elif kind == "R":
        result = _decode(reader, 0)
    elif kind == "E":
        result = (reader.string().decode("utf-8", "replace"), reader.string().decode("utf-8", "replace"))
    elif kind == "U":
        result = reader.string().decode("utf-8", "replace")
    else:
        raise Malformed(f"unknown message kind {kind!r}")
    if reader.at != len(message):
        raise Malformed("trailing bytes")
    return kind, result


def same(a: Node, b: Node) -> bool:
    """Bit-for-bit equality of two nodes (NaN equals the same NaN; -0.0 differs from 0.0)."""
    return encode(a) == encode(b)


def is_nan(node: Node) -> bool:
    return node.tag in ("f", "d") and math.isnan(float_value(node))
