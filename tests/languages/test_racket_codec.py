"""Racket's value wire (sandbox/languages/racket/wire.rkt) against the Python reference codec
(sandbox/runtime/values.py), in the real Racket image: values round-trip byte for byte, Racket's own values encode
to exactly the reference's bytes, and malformed bytes are refused. Then one problem through the real sandbox whose
tests see every kind of value cross both ways exactly as one process would."""

from __future__ import annotations

import pytest

from sandbox.images import ensure_language_image
from sandbox.languages import get
from sandbox.runtime import values as v
from sandbox.verdicts import Verdict
from tests.languages.codec import (
    D, S, U32, assert_matches_the_reference, bits, container_stdout, echo_outcomes, nested, raw,
)

Z = lambda n: v.integer(n, "z")  # noqa: E731
C = lambda n: v.Node("c", n)  # noqa: E731


def typed(name: str, node: v.Node) -> v.Node:
    return v.dynamic(name, node)


def pair(a: v.Node, b: v.Node) -> v.Node:
    return v.seq("P", [a, b])


# Values a Racket receiver rebuilds and sends back unchanged (hash tables of one pair: their order is their own).
ROUND_TRIP = [
    v.TRUE, v.FALSE,
    Z(0), Z(1), Z(-1), Z(127), Z(128), Z(-128), Z(-129), Z(255), Z(2**63), Z(-(2**63)), Z(2**64), Z(-(2**100) + 3),
    Z(2**1000),
    D(0.0), D(-0.0), D(1.5), D(float("inf")), D(float("-inf")), D(5e-324), D(1.7976931348623157e308),
    bits(0x7FF8000000000000),
    S(""), S("abc"), S("h\u00e9llo"), S("\U0001f600"), S("a\x00b"), C(0), C(65), C(0x1F600),
    v.seq("A", []), nested(3), v.seq("A", [Z(1), S("x"), D(2.5), v.seq("A", [v.TRUE])]),
    typed("Rational", pair(Z(-3), Z(4))), typed("Rational", pair(Z(2**70), Z(3))),
    typed("Symbol", S("sym")), typed("Symbol", S("h\u00e9 llo")), typed("Keyword", S("kw")),
    typed("Pair", pair(Z(1), Z(2))), typed("Pair", pair(Z(1), typed("Pair", pair(Z(2), S("x"))))),
    typed("Vector", v.seq("A", [])), typed("Vector", v.seq("A", [Z(1), typed("Vector", v.seq("A", [S("x")]))])),
    typed("Bytes", S(b"\xff\x00")), typed("Void", v.NULL),
    typed("Hash:equal", v.pairs("M", [])), typed("Hash:equal", v.pairs("M", [(S("a"), v.seq("A", [Z(1)]))])),
    typed("Hash:eqv-mutable", v.pairs("M", [(Z(1), D(2.0))])), typed("Hash:eq", v.pairs("M", [(typed("Symbol", S("k")), Z(1))])),
    v.seq("A", [nested(v.MAX_DEPTH - 2)]),
]

# Racket expressions and the reference value each must encode to.
LITERALS = {
    "#t": v.TRUE, "'()": v.seq("A", []), "(list 1 2.5 \"x\")": v.seq("A", [Z(1), D(2.5), S("x")]),
    "(expt 2 100)": Z(2**100), "-0.0": D(-0.0), "+inf.0": D(float("inf")), "6/4": typed("Rational", pair(Z(3), Z(2))),
    "\"\u00e9\"": S("\u00e9"), "#\\a": C(97), "'sym": typed("Symbol", S("sym")), "'#:kw": typed("Keyword", S("kw")),
    "(cons 1 2)": typed("Pair", pair(Z(1), Z(2))), "(vector 1 \"x\")": typed("Vector", v.seq("A", [Z(1), S("x")])),
    "#(1)": typed("Vector", v.seq("A", [Z(1)])), "#\"ab\"": typed("Bytes", S("ab")), "(void)": typed("Void", v.NULL),
    "#hash((\"a\" . 1))": typed("Hash:equal", v.pairs("M", [(S("a"), Z(1))])),
    "(make-hash (list (cons 1 2)))": typed("Hash:equal-mutable", v.pairs("M", [(Z(1), Z(2))])),
    "(hasheqv 1 'x)": typed("Hash:eqv", v.pairs("M", [(Z(1), typed("Symbol", S("x")))])),
    # What cannot be rebuilt crosses as X with its type (the whole value).
    "car": v.Node("X", None, "procedure"), "(box 1)": v.Node("X", None, "box"), "(mcons 1 2)": v.Node("X", None, "mpair"),
    "(make-weak-hash)": v.Node("X", None, "weak hash"), "1+2i": v.Node("X", None, "number"),
    "(string->uninterned-symbol \"u\")": v.Node("X", None, "uninterned symbol"),
    "(let () (struct point (x y)) (point 1 2))": v.Node("X", None, "point"),
    "(list 1 (box 2))": v.Node("X", None, "box"),
    "(for/fold ([acc '()]) ([i 200]) (list acc))": v.Node("X", None, "deeply nested value"),
}

# Bytes a Racket receiver must refuse (malformed), never coerce.
REFUSED = {
    "an int32 (Racket's integers cross as z)": raw("i", U32(1)),
    "null (Racket's void crosses as a Void)": raw("n"),
    "JavaScript's undefined": raw("u"),
    "a JavaScript object": raw("O", U32(0)),
    "an optional": raw("Y", "n"),
    "an empty optional": raw("N"),
    "a binary32 float": raw("f", U32(0)),
    "a set": raw("S", U32(0)),
    "a bare map (a hash table names its kind)": raw("M", U32(0)),
    "a bare tuple": raw("P", U32(0)),
    "trailing bytes": raw("T", "T"),
    "truncated double": raw("d", b"\0\0\0"),
    "a count past the end": raw("A", U32(5), "T"),
    "a huge count past the end": raw("A", U32(0xFFFFFFFF), "T"),
    "an unknown tag": raw("?"),
    "an integer not in its shortest form": raw("z", U32(2), b"\x00\x01"),
    "a negative integer not in its shortest form": raw("z", U32(2), b"\xff\xff"),
    "zero not as the empty integer": raw("z", U32(1), b"\x00"),
    "a string that is not UTF-8": raw("s", U32(1), b"\xff"),
    "a surrogate as a character": raw("c", U32(0xD800)),
    "a character past Unicode": raw("c", U32(0x110000)),
    "a rational that is an integer": v.encode(typed("Rational", pair(Z(2), Z(1)))),
    "a rational not in lowest terms": v.encode(typed("Rational", pair(Z(2), Z(4)))),
    "a pair whose cdr is a list": v.encode(typed("Pair", pair(Z(1), v.seq("A", [])))),
    "a hash table with a key twice": v.encode(typed("Hash:equal", v.pairs("M", [(Z(1), Z(1)), (Z(1), Z(2))]))),
    "a hash table of an unknown kind": v.encode(typed("Hash:weak", v.pairs("M", []))),
    "a type Racket does not rebuild": v.encode(typed("Range", pair(Z(1), Z(2)))),
    "nested too deeply": v.encode(nested(v.MAX_DEPTH + 1)),
}

# The payload in the environment (sections of hex, and expressions split by \x1f); each answer on a line of its own.
SCRIPT = r"""
(require (file "/opt/passk/racket/wire.rkt") file/sha1)
(define ns (make-base-namespace))
(define (hexes name) (filter (lambda (s) (positive? (string-length s))) (regexp-split #rx"," (getenv name))))
(for ([h (hexes "ROUND")])
  (displayln (string-append "round " (with-handlers ([exn:fail? exn-message])
                                        (bytes->hex-string (encode (decode (hex-string->bytes h))))))))
(for ([code (regexp-split #rx"\u001f" (getenv "LITERALS"))])
  (displayln (string-append "literal " (bytes->hex-string (encode (eval (read (open-input-string code)) ns))))))
(for ([data (cons #"" (map hex-string->bytes (hexes "REFUSED")))])
  (displayln (string-append "refused " (with-handlers ([exn:fail:passk-malformed? (lambda (e) "malformed")]
                                                       [exn:fail? exn-message])
                                          (decode data)
                                          "accepted"))))
"""


@pytest.fixture(scope="module")
def image(docker_client) -> str:  # type: ignore[no-untyped-def]
    return ensure_language_image(docker_client, get("racket"))


@pytest.mark.slow
def test_codec_matches_the_reference_byte_for_byte(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    environment = {"ROUND": ",".join(v.encode(node).hex() for node in ROUND_TRIP), "LITERALS": "\x1f".join(LITERALS),
                   "REFUSED": ",".join(data.hex() for data in REFUSED.values()), "LANG": "C.UTF-8"}
    out = container_stdout(docker_client, image, ["racket", "-e", SCRIPT], environment)
    got = {kind: [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith(kind + " ")]
           for kind in ("round", "literal", "refused")}
    assert_matches_the_reference(ROUND_TRIP, got["round"], LITERALS, got["literal"], {"empty": b"", **REFUSED},
                                 got["refused"], "malformed")


# A problem whose tests hand every kind of value to the candidate and check with equal?, as one process would, what
# comes back (1 and 1.0 differ, and so do -0.0 and 0.0, and hash tables of another mutability); the candidate checks
# what it received the same way. The values are the prompt's, so both programs have them.
ECHO_PROMPT = """#lang racket

(define (passk-values)
  (list #t #f 0 -1 (expt 2 100) 1/3 1.5 -0.0 +inf.0 "" "h\u00e9llo" #\\a 'sym '#:kw (cons 1 2) (list 1 (list 2.5 '()))
        (vector 1 "x") #"by" (void) (hash "a" 1) (make-hash (list (cons 1 2))) (hasheq 'k (list 1))
        (make-string 100000 #\\x)))

;; Returns its argument.
(define (echo value kind)
"""
ECHO_COMPLETION = """  (cond [(eq? kind 'any) value]
        [(equal? value (list-ref (passk-values) kind)) value]
        [else (error 'echo "the candidate received ~a" kind)]))
"""
ECHO_TESTS = """(require rackunit)
(for ([value (passk-values)] [index (in-naturals)])
  (unless (equal? (echo value index) value) (error 'tests "the tests received ~a" index)))
(check-equal? (echo 3 'any) 3)
(check-false (equal? (echo 3 'any) 3.0))
"""


@pytest.mark.slow
def test_every_kind_of_value_crosses_as_one_process_sees_it(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    # The same tests against a candidate that returns a symbol as its name: the tests see the difference.
    lossy = "  (if (and (symbol? value) (not (eq? kind 'any))) (symbol->string value) value))\n"
    echo, lossy_outcome = echo_outcomes(docker_client, image, "racket", ECHO_PROMPT, ECHO_TESTS,
                                        [ECHO_COMPLETION, lossy])
    assert echo.verdict is Verdict.PASSED, echo
    assert lossy_outcome.verdict is Verdict.ERROR and "the tests received" in (lossy_outcome.detail or ""), lossy_outcome
