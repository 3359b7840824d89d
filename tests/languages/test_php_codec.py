"""PHP's value wire (sandbox/languages/php/wire.php) against the Python reference codec (sandbox/runtime/values.py),
in the real PHP image: values round-trip byte for byte, PHP's own values encode to exactly the reference's bytes,
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

L = lambda n: v.integer(n, "l")  # noqa: E731




def array(*pairs: tuple[v.Node, v.Node]) -> v.Node:
    return v.pairs("M", list(pairs))



# Values a PHP receiver rebuilds and sends back unchanged.
ROUND_TRIP = [
    v.NULL, v.TRUE, v.FALSE,
    L(0), L(1), L(-1), L(255), L(2**63 - 1), L(-(2**63)),
    D(0.0), D(-0.0), D(1.5), D(float("inf")), D(float("-inf")), D(5e-324), D(1.7976931348623157e308),
    bits(0x7FF8000000000000), bits(0x7FF8000000000ABC), bits(0xFFF8000000000001),
    S(""), S("abc"), S("h\u00e9llo"), S("\U0001f600"), S("a\x00b"), S(b"\xff\xfe"), S("05"), S("-0"), S("1.5"),
    v.seq("A", []), nested(3), v.seq("A", [L(1), S("x"), v.NULL, D(2.5), v.seq("A", [v.TRUE]), array((S("k"), L(1)))]),
    # An array that is not a list, its pairs in its own order.
    array((S("b"), L(1)), (S("a"), v.seq("A", [])), (L(3), S("c")), (L(-1), v.NULL), (S("05"), L(5)), (L(0), v.FALSE)),
    array((L(1), S("a")), (L(0), S("b"))), array((L(1), S("a"))), array((S("9223372036854775808"), L(1))),
    v.seq("A", [nested(v.MAX_DEPTH - 2)]),
]

# PHP expressions and the reference value each must encode to.
LITERALS = {
    "null": v.NULL, "-0.0": D(-0.0), "INF": D(float("inf")), "3 / 2": D(1.5), "4 / 2": L(2), "PHP_INT_MAX": L(2**63 - 1),
    "PHP_INT_MIN": L(-(2**63)), "PHP_INT_MAX + 1": D(2.0**63), "'\u00e9'": S("\u00e9"), "\"\\xff\"": S(b"\xff"),
    "[]": v.seq("A", []), "[1, [2.5, 'x']]": v.seq("A", [L(1), v.seq("A", [D(2.5), S("x")])]),
    "['a' => 1, 'b' => []]": array((S("a"), L(1)), (S("b"), v.seq("A", []))),
    # PHP's own key rules: "5" is the int 5, true is 1, 1.7 is 1; "05" stays a string.
    "['5' => 'x', '05' => 'y']": array((L(5), S("x")), (S("05"), S("y"))),
    "[true => 'a', 1.7 => 'b']": array((L(1), S("b"))), "[0 => 'a', 1 => 'b']": v.seq("A", [S("a"), S("b")]),
    "[1 => 'a', 0 => 'b']": array((L(1), S("a")), (L(0), S("b"))),
    "(function () { $a = [1, 2, 3]; unset($a[1]); return $a; })()": array((L(0), L(1)), (L(2), L(3))),
    "array_values(array_filter([1, 0, 2]))": v.seq("A", [L(1), L(2)]),
    # What cannot be rebuilt crosses as X with its type (the whole value).
    "new stdClass()": v.Node("X", None, "stdClass"), "fn() => 1": v.Node("X", None, "Closure"),
    "new class {}": v.Node("X", None, "class@anonymous"), "STDOUT": v.Node("X", None, "resource (stream)"),
    "[1, new ArrayObject([])]": v.Node("X", None, "ArrayObject"),
    "(function () { $a = []; $a[0] = &$a; return $a; })()": v.Node("X", None, "deeply nested value"),
    "(function () { $a = []; for ($i = 0; $i < 200; $i++) { $a = [$a]; } return $a; })()":
        v.Node("X", None, "deeply nested value"),
}

# Bytes a PHP receiver must refuse (PasskMalformed), never coerce.
REFUSED = {
    "an integer of any size (PHP's cross as l)": raw("z", U32(1), b"\x01"),
    "an int32": raw("i", U32(1)),
    "a character": raw("c", U32(65)),
    "a bare tuple": raw("P", U32(0)),
    "JavaScript's undefined": raw("u"),
    "a JavaScript object": raw("O", U32(0)),
    "an optional": raw("Y", "n"),
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
    "an empty map": v.encode(array()),
    "a map that is a list": v.encode(array((L(0), S("a")), (L(1), S("b")))),
    "a map key twice": v.encode(array((S("a"), L(1)), (S("a"), L(2)))),
    "a string key PHP stores as an int": v.encode(array((S("5"), L(1)))),
    "a negative string key PHP stores as an int": v.encode(array((S("-7"), L(1)))),
    "a float key": v.encode(array((D(0.5), L(1)))),
    "a null key": v.encode(array((v.NULL, L(1)))),
    "a boolean key": v.encode(array((v.TRUE, L(1)))),
    "an array as a key": v.encode(array((v.seq("A", []), L(1)))),
    "nested too deeply": v.encode(nested(v.MAX_DEPTH + 1)),
}


def script() -> str:
    """A PHP program that round-trips, encodes and refuses every case above (its input: JSON in argv[1])."""
    literals = ", ".join(f"fn() => {code}" for code in LITERALS)
    return f"""<?php
require '/opt/passk/php/wire.php';
$input = json_decode($argv[1], true);
$out = ['roundTrip' => [], 'literals' => [], 'refused' => []];
foreach ($input['roundTrip'] as $hex) {{
    try {{
        $out['roundTrip'][] = bin2hex(PasskWire::encode(PasskWire::decode(hex2bin($hex))));
    }} catch (Throwable $e) {{
        $out['roundTrip'][] = get_class($e) . ': ' . $e->getMessage();
    }}
}}
foreach ([{literals}] as $make) {{
    $out['literals'][] = bin2hex(PasskWire::encode($make()));
}}
foreach ($input['refused'] as $hex) {{
    try {{
        PasskWire::decode(hex2bin($hex));
        $out['refused'][] = 'accepted';
    }} catch (Throwable $e) {{
        $out['refused'][] = get_class($e);
    }}
}}
echo json_encode($out);
"""


@pytest.fixture(scope="module")
def image(docker_client) -> str:  # type: ignore[no-untyped-def]
    return ensure_language_image(docker_client, get("php"))


@pytest.mark.slow
def test_codec_matches_the_reference_byte_for_byte(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    payload = json.dumps({
        "roundTrip": [v.encode(node).hex() for node in ROUND_TRIP],
        "refused": [data.hex() for data in REFUSED.values()],
    })
    command = ["sh", "-c", 'printf "%s" "$0" > /tmp/codec.php && php /tmp/codec.php "$1"', script(), payload]
    got = json.loads(container_stdout(docker_client, image, command))
    assert_matches_the_reference(ROUND_TRIP, got["roundTrip"], LITERALS, got["literals"], REFUSED, got["refused"],
                                 "PasskMalformed")


# A problem whose tests hand every kind of value to the candidate and check, as one process would (===, and the
# bits of floats), what comes back; the candidate checks what it received the same way.
ECHO_PROMPT = "<?php\n// Returns its argument.\nfunction echo_value($value, $kind) {\n"
ECHO_CHECK = r"""
function passk_same($a, $b): bool {
    if (is_float($a) && is_float($b)) { return pack('E', $a) === pack('E', $b); }
    if (is_array($a) && is_array($b)) {
        if (array_keys($a) !== array_keys($b)) { return false; }
        foreach ($a as $key => $item) { if (!passk_same($item, $b[$key])) { return false; } }
        return true;
    }
    return $a === $b;
}

function passk_values(): array {
    return [null, true, false, 0, -1, PHP_INT_MAX, PHP_INT_MIN, 1.5, -0.0, NAN, -INF, '', "h\u{e9}llo", "\xff", [],
        [1, [2.5, 'x', null]], ['b' => 1, 'a' => []], [3 => 'c', 1 => 'a'], [1 => 'x'], ['5' => 'x', '05' => 'y'],
        [4, [], [], 23.2, 9, 'adasd'], str_repeat('x', 100000)];
}
"""
ECHO_COMPLETION = """    if ($kind === 'any') { return $value; }
    if (!passk_same($value, passk_values()[$kind])) { throw new Exception("the candidate received $kind"); }
    return $value;
}
""" + ECHO_CHECK
ECHO_TESTS = ECHO_CHECK + """
foreach (passk_values() as $index => $value) {
    if (!passk_same(echo_value($value, $index), $value)) { throw new RuntimeException("the tests received $index"); }
}
if (echo_value(3, 'any') !== 3 || echo_value([1 => 'a', 0 => 'b'], 'any') === ['b', 'a']) {
    throw new RuntimeException('equal but not the same');
}
"""


@pytest.mark.slow
def test_every_kind_of_value_crosses_as_one_process_sees_it(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    # The same tests against a candidate that turns ints into floats: the tests see the difference.
    lossy = "    return is_int($value) ? (float) $value : $value;\n}\n"
    echo, lossy_outcome = echo_outcomes(docker_client, image, "php", ECHO_PROMPT, ECHO_TESTS,
                                        [ECHO_COMPLETION, lossy])
    assert echo.verdict is Verdict.PASSED, echo
    assert lossy_outcome.verdict is Verdict.ERROR and "the tests received 3" in (lossy_outcome.detail or ""), lossy_outcome
