"""JavaScript's value wire (sandbox/languages/javascript/wire.js) against the Python reference codec
(sandbox/runtime/values.py), in the real JavaScript image: values round-trip byte for byte, JavaScript's own
values encode to exactly the reference's bytes, and malformed bytes are refused. Then one problem through the real
sandbox whose tests see every kind of value cross both ways exactly as one process would."""

from __future__ import annotations

import json
import struct

import pytest

from sandbox.executor import Job
from sandbox.images import ensure_language_image, toolchain_version
from sandbox.languages import get, jobs as native_jobs, split
from sandbox.runtime import values as v
from sandbox.verdicts import Verdict
from tests.sandbox.programs import image_sandbox

MIB = 1024 * 1024


def f64_bits(bits: int) -> v.Node:
    return v.Node("d", bits)


def nested(depth: int) -> v.Node:
    node = v.seq("A", [])
    for _ in range(depth):
        node = v.seq("A", [node])
    return node


S = v.string
D = v.f64
Z = lambda n: v.integer(n, "z")  # noqa: E731

# Values a JavaScript receiver rebuilds and sends back unchanged (the order of object keys is the engine's:
# integer-like keys first, ascending, then the others as inserted).
ROUND_TRIP = [
    v.NULL, v.UNDEFINED, v.TRUE, v.FALSE,
    D(0.0), D(-0.0), D(1.5), D(float("inf")), D(float("-inf")), D(5e-324), D(1.7976931348623157e308),
    f64_bits(0x7FF8000000000000), f64_bits(0x7FF8000000000ABC), f64_bits(0xFFF8000000000001),
    Z(0), Z(1), Z(-1), Z(127), Z(128), Z(-128), Z(-129), Z(255), Z(2**63), Z(-(2**63)), Z(2**64), Z(-(2**100) + 3),
    Z(2**1000),
    S(""), S("abc"), S("h\u00e9llo"), S("\u65e5\u672c"), S("\U0001f600"), S("\ufeffbom"), S("a\x00b"),
    S("\ud800"), S("a\udc00b"), S("\udbff\ud800"), S("\U0010ffff"),
    v.seq("A", []), nested(3), v.seq("A", [D(1.0), S("x"), v.NULL, v.UNDEFINED, v.seq("A", [Z(5)])]),
    v.pairs("O", []), v.pairs("O", [(b"b", D(1.0)), (b"a", D(2.0))]),
    v.pairs("O", [(b"1", v.TRUE), (b"10", v.TRUE), (b"z", v.FALSE), (b"__proto__", v.pairs("O", []))]),
    v.pairs("O", [("\ud800".encode("utf-8", "surrogatepass"), v.NULL)]),
    v.pairs("M", [(S("b"), D(1.0)), (D(2.0), S("a")), (v.seq("A", []), v.NULL), (D(float("nan")), v.TRUE)]),
    v.seq("S", [D(3.0), S("3"), Z(3), v.NULL, v.UNDEFINED]),
    v.seq("A", [nested(v.MAX_DEPTH - 2)]),
]

# JavaScript expressions and the reference value each must encode to.
LITERALS = {
    "-0": D(-0.0), "NaN": D(float("nan")), "1/0": D(float("inf")), "2**53 + 2": D(2.0**53 + 2),
    "-(2n**64n)": Z(-(2**64)), "'\\uD83D\\uDE00'": S("\U0001f600"), "'\\uDE00x'": S("\ude00x"),
    "[1, [2, [3]]]": v.seq("A", [D(1.0), v.seq("A", [D(2.0), v.seq("A", [D(3.0)])])]),
    "({b: 1, a: [null, undefined], 2: true, 1: false})":
        v.pairs("O", [(b"1", v.FALSE), (b"2", v.TRUE), (b"b", D(1.0)), (b"a", v.seq("A", [v.NULL, v.UNDEFINED]))]),
    "Object.assign(Object.create(null), {k: 'v'})": v.pairs("O", [(b"k", S("v"))]),
    "new Map([['x', 1], [2, 'y']])": v.pairs("M", [(S("x"), D(1.0)), (D(2.0), S("y"))]),
    "new Set([2, 1, 2])": v.seq("S", [D(2.0), D(1.0)]),
    "({get g() { return 7; }})": v.pairs("O", [(b"g", D(7.0))]),
    # What cannot be rebuilt crosses as X with its type's name (the whole value).
    "new Date(0)": v.Node("X", None, "Date"), "Symbol('s')": v.Node("X", None, "Symbol"),
    "() => 1": v.Node("X", None, "Function"), "[1, , 3]": v.Node("X", None, "Array with holes or extra properties"),
    "Object.assign([1], {extra: 2})": v.Node("X", None, "Array with holes or extra properties"),
    "[new (class Point {})()]": v.Node("X", None, "Point"), "new Uint8Array(2)": v.Node("X", None, "Uint8Array"),
    "Object(1)": v.Node("X", None, "Number"), "new (class Bag extends Map {})()": v.Node("X", None, "Bag"),
    "(() => { const a = []; let b = a; for (let i = 0; i < 200; i++) { const c = []; b.push(c); b = c; } return a; })()":
        v.Node("X", None, "deeply nested value"),
    "(() => { const a = []; a.push(a); return a; })()": v.Node("X", None, "deeply nested value"),
}


def _bytes(*parts: bytes | str) -> bytes:
    return b"".join(part.encode("latin-1") if isinstance(part, str) else part for part in parts)


U32 = lambda n: struct.pack(">I", n)  # noqa: E731
# Bytes a JavaScript receiver must refuse (Malformed), never coerce.
REFUSED = {
    "an int32 (JavaScript has none)": _bytes("i", U32(1)),
    "a character": _bytes("c", U32(65)),
    "a tuple": _bytes("P", U32(0)),
    "trailing bytes": _bytes("T", "T"),
    "truncated double": _bytes("d", b"\0\0\0"),
    "a count past the end": _bytes("A", U32(5), "n"),
    "an unknown tag": _bytes("?"),
    "empty": b"",
    "invalid UTF-8": _bytes("s", U32(1), b"\xff"),
    "an overlong form": _bytes("s", U32(2), b"\xc0\x80"),
    "a surrogate pair in two 3-byte forms": _bytes("s", U32(6), b"\xed\xa0\xbd\xed\xb8\x80"),
    "an integer not in its shortest form": _bytes("z", U32(2), b"\x00\x01"),
    "an object with a key twice": _bytes("O", U32(2), U32(1), "a", "n", U32(1), "a", "n"),
    "object keys out of the engine's order": _bytes("O", U32(2), U32(1), "b", "n", U32(1), "1", "n"),
    "a map with a key twice": _bytes("M", U32(2), "n", "n", "n", "n"),
    "a set with an item twice": _bytes("S", U32(2), "d", struct.pack(">d", float("nan")), "d", struct.pack(">d", float("nan"))),
    "nested too deeply": v.encode(nested(v.MAX_DEPTH + 1)),
}

SCRIPT = r"""
const wire = require('/opt/passk/javascript/wire.js');
const input = JSON.parse(process.argv[1]);
const hex = (b) => Buffer.from(b).toString('hex');
const out = { roundTrip: [], literals: [], refused: [] };
for (const c of input.roundTrip) {
  try { out.roundTrip.push(hex(wire.encode(wire.decode(Buffer.from(c, 'hex'), 0), 0))); }
  catch (e) { out.roundTrip.push(`${e.name}: ${e.message}`); }
}
for (const c of input.literals) out.literals.push(hex(wire.encode((0, eval)(c), 0)));
for (const c of input.refused) {
  try { wire.decode(Buffer.from(c, 'hex'), 0); out.refused.push('accepted'); }
  catch (e) { out.refused.push(e.name); }
}
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def image(docker_client) -> str:  # type: ignore[no-untyped-def]
    return ensure_language_image(docker_client, get("javascript"))


@pytest.mark.slow
def test_codec_matches_the_reference_byte_for_byte(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    payload = json.dumps({
        "roundTrip": [v.encode(node).hex() for node in ROUND_TRIP],
        "literals": list(LITERALS),
        "refused": [data.hex() for data in REFUSED.values()],
    })
    container = docker_client.containers.run(image, ["node", "-e", SCRIPT, payload], entrypoint=[], user="10002:10002",
                                             network_mode="none", detach=True)
    try:
        assert container.wait(timeout=120)["StatusCode"] == 0, container.logs()
        got = json.loads(container.logs(stdout=True, stderr=False))
    finally:
        container.remove(force=True)
    for node, back in zip(ROUND_TRIP, got["roundTrip"], strict=True):
        assert back == v.encode(node).hex(), (node, back)
        assert v.same(v.decode(bytes.fromhex(back)), node)
    for (expression, node), back in zip(LITERALS.items(), got["literals"], strict=True):
        assert back == v.encode(node).hex(), (expression, v.decode(bytes.fromhex(back)))
    refused = dict(zip(REFUSED, got["refused"], strict=True))
    assert all(result == "Malformed" for result in refused.values()), refused


# A problem whose tests hand every kind of value to the candidate and check, as one process would, what comes
# back; the candidate checks what it received the same way (and throws if anything differs).
ECHO_PROMPT = "// Returns its argument.\nfunction echo(value, kind) {\n"
ECHO_CHECK = """
const passkSame = (a, b) => {
  if (typeof a !== typeof b) return false;
  if (typeof a === 'number') return Object.is(a, b);
  if (a === null || typeof a !== 'object') return a === b;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (a instanceof Map || a instanceof Set) {
    const x = [...a.entries()], y = [...b.entries()];
    return x.length === y.length && x.every((e, i) => passkSame(e[0], y[i][0]) && passkSame(e[1], y[i][1]));
  }
  const ka = Object.keys(a), kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && passkSame(a[k], b[k]));
};
const passkValues = () => [undefined, null, true, false, -0, NaN, -Infinity, 2 ** 53 + 2, 12345678901234567890n, -1n,
  '', '\\uD800', 'x\\uDE00', '\\uD83D\\uDE00', [1, [undefined, [null]]], {b: 1, a: {}, 3: 'c', 1: 'd'},
  new Map([[1, 'a'], ['1', 'b'], [NaN, []]]), new Set(['x', 0, -1n]),
  {['__proto__']: 5}, JSON.parse('{"__proto__": {"polluted": true}}')];
"""
ECHO_COMPLETION = ECHO_CHECK + """
  const expected = passkValues()[kind];
  if (!passkSame(value, expected)) throw new Error('the candidate received ' + String(kind));
  return value;
}
"""
ECHO_TESTS = ECHO_CHECK + """
const values = passkValues();
for (let i = 0; i < values.length; i++) {
  const back = echo(values[i], i);
  if (!passkSame(back, values[i])) throw new Error('the tests received ' + i);
}
if ({}.polluted !== undefined || Object.prototype.polluted !== undefined) throw new Error('polluted');
if (JSON.stringify(echo({b: [1, {c: -0}], a: 'x'}, 'any')) !== '{"b":[1,{"c":0}],"a":"x"}') throw new Error('json');
// An object without a prototype crosses as a plain object (its keys and values; only a check of its prototype
// tells them apart, and the datasets' comparisons, JSON.stringify and assert.deepEqual, do not).
require('node:assert').deepEqual(echo(Object.assign(Object.create(null), {z: 1}), 'any'), {z: 1});
"""


@pytest.mark.slow
def test_every_kind_of_value_crosses_as_one_process_sees_it(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    language = get("javascript")
    version = toolchain_version(docker_client, image, language)
    # `kind` "any" is checked by the tests alone.
    completion = ECHO_COMPLETION.replace("const expected", "if (kind === 'any') return value;\n  const expected")
    jobs = [Job("echo", "", 5.0, 256 * MIB, language="javascript", native=native_jobs.tests_spec(
        language, split.TestSource("multipl-e", ECHO_PROMPT, ECHO_TESTS, completion), version, 256 * MIB))]
    # The same tests against a candidate that returns a copy through JSON (-0, undefined, Map... are lost).
    lossy = "  return kind === 'any' ? value : JSON.parse(JSON.stringify(value) ?? 'null');\n}\n"
    jobs.append(Job("lossy", "", 5.0, 256 * MIB, language="javascript", native=native_jobs.tests_spec(
        language, split.TestSource("multipl-e", ECHO_PROMPT, ECHO_TESTS, lossy), version, 256 * MIB)))
    box = image_sandbox(docker_client, image)
    try:
        echo, lossy_outcome = box.run(jobs)
    finally:
        box.close()
    assert echo.verdict is Verdict.PASSED, echo
    assert lossy_outcome.verdict is Verdict.ERROR and "the tests received 0" in (lossy_outcome.detail or ""), lossy_outcome
