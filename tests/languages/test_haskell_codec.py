"""Haskell's value wire (sandbox/languages/haskell/PasskWire.hs) against the Python reference codec
(sandbox/runtime/values.py), in the real Haskell image: values round-trip byte for byte through each type's Wire
instance, Haskell's own values encode to exactly the reference's bytes, and bytes that are not a value of the type are
refused. Then one problem through the real sandbox whose tests see every kind of value cross both ways exactly as one
process would."""

from __future__ import annotations

import pytest

from sandbox.images import ensure_language_image
from sandbox.languages import get
from sandbox.runtime import values as v
from sandbox.verdicts import Verdict
from tests.languages.codec import (
    D, S, U32, assert_matches_the_reference, bits, container_stdout, echo_outcomes, raw,
)

L = lambda n: v.integer(n, "l")  # noqa: E731
Z = lambda n: v.integer(n, "z")  # noqa: E731
C = lambda n: v.Node("c", n)  # noqa: E731


def f32(value: float) -> v.Node:
    return v.f32(value)


def seq(*items: v.Node) -> v.Node:
    return v.seq("A", list(items))


def tup(*items: v.Node) -> v.Node:
    return v.seq("P", list(items))


# (Haskell type, value) a receiver of that type rebuilds and sends back unchanged.
ROUND_TRIP = [
    ("Int", L(0)), ("Int", L(-1)), ("Int", L(2**63 - 1)), ("Int", L(-(2**63))),
    ("Integer", Z(0)), ("Integer", Z(1)), ("Integer", Z(-1)), ("Integer", Z(127)), ("Integer", Z(128)),
    ("Integer", Z(-128)), ("Integer", Z(-129)), ("Integer", Z(2**100)), ("Integer", Z(-(2**100))),
    ("Double", D(0.0)), ("Double", D(-0.0)), ("Double", D(1.5)), ("Double", D(float("inf"))),
    ("Double", D(5e-324)), ("Double", bits(0x7FF8000000000ABC)), ("Double", bits(0xFFF8000000000001)),
    ("Float", f32(1.5)), ("Float", f32(-0.0)), ("Float", v.Node("f", 0x7FC00001)),
    ("Bool", v.TRUE), ("Bool", v.FALSE), ("()", v.NULL), ("Char", C(0)), ("Char", C(0x1F600)), ("Char", C(0xD800)),
    ("String", S("")), ("String", S("abc")), ("String", S("h\u00e9llo \U0001f600")), ("String", S("a\x00b")),
    ("String", S(b"\xed\xa0\x80")),
    ("[Int]", seq()), ("[[String]]", seq(seq(S("a"), S("")), seq())), ("[Double]", seq(D(2.5), D(-0.0))),
    ("Maybe Int", v.EMPTY), ("Maybe Int", v.present(L(5))), ("Maybe (Maybe Int)", v.present(v.EMPTY)),
    ("(Int, String)", tup(L(1), S("x"))),
    ("(Int, Double, String, Char, Bool)", tup(L(1), D(0.5), S("y"), C(65), v.TRUE)),
    ("[(String, Int)]", seq(tup(S("a"), L(1)), tup(S("b"), L(2)))),
    ("(Maybe Int, Maybe Int)", tup(v.EMPTY, v.present(L(-3)))),
]

# (Haskell type, expression) -> the reference value each must encode to.
LITERALS = {
    ("Int", "maxBound"): L(2**63 - 1), ("Integer", "2 ^ 70"): Z(2**70), ("Integer", "negate (2 ^ 64)"): Z(-(2**64)),
    ("Double", "1 / 0"): D(float("inf")), ("Double", "1 / 3"): D(1 / 3), ("Double", "negate 0"): D(-0.0),
    ("Float", "0.1"): f32(0.1), ("Char", "'A'"): C(65), ("String", '"h\\233"'): S("h\u00e9"),
    ("String", "['\\55296']"): S(b"\xed\xa0\x80"), ("()", "()"): v.NULL, ("Bool", "1 < (2 :: Int)"): v.TRUE,
    ("[Int]", "[1, 2]"): seq(L(1), L(2)), ("[Char]", "\"ab\""): S("ab"),
    ("Maybe (Maybe Int)", "Just (Just 3)"): v.present(v.present(L(3))),
    ("(Int, String, [Bool])", '(1, "x", [True])'): tup(L(1), S("x"), seq(v.TRUE)),
}

# (Haskell type, bytes) a receiver of that type must refuse, never coerce.
REFUSED = {
    "an integer of any size as an Int": ("Int", raw("z", U32(1), b"\x01")),
    "an int32": ("Int", raw("i", U32(1))),
    "an Int as an Integer": ("Integer", v.encode(L(1))),
    "a double as a Float": ("Float", v.encode(D(1.0))),
    "a Float as a Double": ("Double", v.encode(f32(1.0))),
    "a character past Unicode": ("Char", raw("c", U32(0x110000))),
    "a string as a Char": ("Char", v.encode(S("a"))),
    "a list of characters as a String": ("String", v.encode(seq(C(65)))),
    "a string that is not UTF-8": ("String", v.encode(S(b"\xff"))),
    "a truncated UTF-8 sequence": ("String", v.encode(S(b"\xc3"))),
    "an overlong UTF-8 form": ("String", v.encode(S(b"\xc0\x80"))),
    "null as a Bool": ("Bool", v.encode(v.NULL)),
    "an empty optional as ()": ("()", raw("N")),
    "null as a Maybe": ("Maybe Int", v.encode(v.NULL)),
    "a tuple as a list": ("[Int]", v.encode(tup(L(1)))),
    "a list of the wrong items": ("[Int]", v.encode(seq(S("x")))),
    "a tuple of three as a pair": ("(Int, Int)", v.encode(tup(L(1), L(2), L(3)))),
    "trailing bytes": ("Bool", raw("T", "T")),
    "truncated double": ("Double", raw("d", b"\0\0\0")),
    "a string past the end": ("String", raw("s", U32(5), "ab")),
    "an Integer past the end": ("Integer", raw("z", U32(5), b"\x01")),
    "a huge count past the end": ("[Bool]", raw("A", U32(0xFFFFFFFF), "T")),
    "an unknown tag": ("Int", raw("?")),
    "empty": ("Int", b""),
}


def script() -> str:
    """A Haskell program that round-trips, encodes and refuses every case above, one result a line."""
    lines = [
        "import qualified Data.ByteString as B",
        "import qualified PasskWire as W",
        "import Numeric (showHex)",
        "hex :: B.ByteString -> String",
        "hex = concatMap (\\b -> (if b < 16 then \"0\" else \"\") ++ showHex b \"\") . B.unpack",
        "unhex :: String -> B.ByteString",
        "unhex (a : b : rest) = B.cons (fst (head (Numeric.readHex [a, b]))) (unhex rest)",
        "unhex _ = B.empty",
        "roundAs :: W.Wire a => a -> String -> IO ()",
        "roundAs witness h = putStrLn $ case W.decodeValue (unhex h) `asTypeOf` Right witness of",
        "  Right x -> \"R \" ++ hex (W.encodeValue x)",
        "  Left why -> \"R failed \" ++ why",
        "literal :: W.Wire a => a -> IO ()",
        "literal x = putStrLn (\"L \" ++ hex (W.encodeValue x))",
        "refuse :: W.Wire a => a -> String -> IO ()",
        "refuse witness h = putStrLn $ case W.decodeValue (unhex h) `asTypeOf` Right witness of",
        "  Right _ -> \"F accepted\"",
        "  Left _ -> \"F Malformed\"",
        "main :: IO ()",
        "main = do",
    ]
    lines = [line.replace("Numeric.readHex", "readHex") for line in lines]
    lines[2] = "import Numeric (showHex, readHex)"
    lines += [f'  roundAs (undefined :: {kind}) "{v.encode(node).hex()}"' for kind, node in ROUND_TRIP]
    lines += [f"  literal (({expression}) :: {kind})" for kind, expression in LITERALS]
    lines += [f'  refuse (undefined :: {kind}) "{data.hex()}"' for kind, data in REFUSED.values()]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def image(docker_client) -> str:  # type: ignore[no-untyped-def]
    return ensure_language_image(docker_client, get("haskell"))


@pytest.mark.slow
def test_codec_matches_the_reference_byte_for_byte(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    command = ("mkdir -p /tmp/codec && cd /tmp/codec && cat > Main.hs <<'PASSK_EOF'\n" + script() + "PASSK_EOF\n"
               "HOME=/tmp/codec sh /opt/passk/haskell/build.sh -O0 -v0 -dynamic -outputdir build -i/opt/passk/haskell"
               " -o codec Main.hs && ./codec")
    lines = container_stdout(docker_client, image, ["sh", "-c", command]).splitlines()
    got = {kind: [line[2:] for line in lines if line.startswith(kind + " ")] for kind in "RLF"}
    assert_matches_the_reference([node for _, node in ROUND_TRIP], got["R"], LITERALS, got["L"],
                                 {label: data for label, (_, data) in REFUSED.items()}, got["F"], "Malformed")


# A problem whose tests hand every kind of value to the candidate and check what comes back; the candidate checks
# what it received the same way. Doubles are compared by their bits (NaN, the other zero).
ECHO_PROMPT = """import GHC.Float (castDoubleToWord64)

passkRows :: [(Int, Double, String, Char, Bool)]
passkRows = [(0, 0, "", '\\0', False), (maxBound, -0.0, "h\\233llo", '\\128512', True),
  (minBound, 0 / 0, "\\55296", 'a', True), (-1, 1 / 0, replicate 100000 'x', 'z', False)]

passkBits :: [(Int, Double, String, Char, Bool)] -> [(Int, Integer, String, Char, Bool)]
passkBits = map (\\(a, b, c, d, e) -> (a, toInteger (castDoubleToWord64 b), c, d, e))

passkMore :: [Maybe Integer]
passkMore = [Nothing, Just 1, Just (negate (2 ^ 80))]

-- | Returns its arguments.
echo :: [(Int, Double, String, Char, Bool)] -> [Maybe Integer] -> () -> ([(Int, Double, String, Char, Bool)], [Maybe Integer], [[String]])
echo rows more nothing ="""
ECHO_COMPLETION = (" if passkBits rows /= passkBits passkRows || more /= passkMore || nothing /= () then"
                   " error \"the candidate received another value\" else (rows, more, [[\"a\", \"\"], []])\n")
ECHO_TESTS = """
main :: IO ()
main = do
  let candidate = echo
  let (rows, more, lists) = candidate passkRows passkMore ()
  if passkBits rows == passkBits passkRows then pure () else error "assertion failed"
  if more == passkMore then pure () else error "assertion failed"
  if lists == [["a", ""], []] then pure () else error "assertion failed"
  pure ()
"""


@pytest.mark.slow
def test_every_kind_of_value_crosses_as_one_process_sees_it(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    # The same tests against a candidate that loses the sign of -0.0: the tests see the difference.
    lossy = " (map (\\(a, b, c, d, e) -> (a, if b == 0 then 0 else b, c, d, e)) rows, more, [[\"a\", \"\"], []])\n"
    echo, lossy_outcome = echo_outcomes(docker_client, image, "haskell", ECHO_PROMPT, ECHO_TESTS,
                                        [ECHO_COMPLETION, lossy])
    assert echo.verdict is Verdict.PASSED, echo
    assert lossy_outcome.verdict is Verdict.FAILED and "assertion failed" in (lossy_outcome.detail or ""), lossy_outcome
