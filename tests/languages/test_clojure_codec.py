"""Clojure's value wire (sandbox/languages/clojure/passk/wire.clj) against the Python reference codec
(sandbox/runtime/values.py), in the real Clojure image: values round-trip byte for byte, Clojure's own values encode
to exactly the reference's bytes, and malformed bytes are refused. Then one problem through the real sandbox whose
tests see every kind of value cross both ways exactly as one process would."""

from __future__ import annotations

import pytest

from sandbox.images import ensure_language_image
from sandbox.languages import clojure, get
from sandbox.runtime import values as v
from sandbox.verdicts import Verdict
from tests.languages.codec import (
    D, S, U32, assert_matches_the_reference, bits, container_stdout, echo_outcomes, nested, raw,
)

Z = lambda n: v.integer(n, "z")  # noqa: E731
L = lambda n: v.integer(n, "l")  # noqa: E731
C = lambda n: v.Node("c", n)  # noqa: E731


def typed(name: str, node: v.Node) -> v.Node:
    return v.dynamic(name, node)


def pair(a: v.Node, b: v.Node) -> v.Node:
    return v.seq("P", [a, b])


def listed(*items: v.Node) -> v.Node:
    return typed("List", v.seq("A", list(items)))


# Values a Clojure receiver rebuilds and sends back unchanged (maps and sets of one item: their order is their own).
ROUND_TRIP = [
    v.NULL, v.TRUE, v.FALSE,
    L(0), L(1), L(-1), L(2**63 - 1), L(-(2**63)), v.integer(-5, "i"), v.integer(2**31 - 1, "i"), v.integer(-7, "h"),
    v.integer(-128, "b"),
    Z(0), Z(1), Z(-1), Z(127), Z(128), Z(-128), Z(-129), Z(255), Z(2**63), Z(-(2**63)), Z(2**64), Z(-(2**100) + 3),
    Z(2**1000),
    D(0.0), D(-0.0), D(1.5), D(float("inf")), D(float("-inf")), D(5e-324), D(1.7976931348623157e308),
    bits(0x7FF8000000000000), v.f32(1.5), v.f32(-0.0),
    S(""), S("abc"), S("h\u00e9llo"), S("\U0001f600"), S("a\x00b"), S("\ud800"), S("x\udfff"),
    C(0), C(65), C(0xE9), C(0xD800), C(0xFFFF),
    v.seq("A", []), nested(3), v.seq("A", [L(1), S("x"), D(2.5), v.seq("A", [v.TRUE])]),
    v.pairs("M", []), v.pairs("M", [(S("a"), v.seq("A", [L(1)]))]), v.seq("S", []), v.seq("S", [L(1)]),
    listed(), listed(L(1), listed(S("x"))),
    typed("Keyword", S("kw")), typed("Keyword", S("ns/kw")), typed("Symbol", S("sym")), typed("Symbol", S("a.b/c")),
    typed("Ratio", pair(Z(-3), Z(4))), typed("Ratio", pair(Z(2**70), Z(3))),
    typed("BigDecimal", S("1.50")), typed("BigDecimal", S("-1E+3")), typed("BigInteger", Z(5)),
    v.seq("A", [nested(v.MAX_DEPTH - 2)]),
]

# Clojure expressions and the reference value each must encode to.
LITERALS = {
    "nil": v.NULL, "true": v.TRUE, "1": L(1), "(int 1)": v.integer(1, "i"), "(short 2)": v.integer(2, "h"),
    "(byte -3)": v.integer(-3, "b"), "(count [1 2])": v.integer(2, "i"), "1N": Z(1),
    "100000000000000000000": Z(10**20),
    "(biginteger 5)": typed("BigInteger", Z(5)), "2.5": D(2.5), "-0.0": D(-0.0), "##Inf": D(float("inf")),
    "(float 1.5)": v.f32(1.5), "\\a": C(97), "\"\u00e9\"": S("\u00e9"), "[1 \"x\"]": v.seq("A", [L(1), S("x")]),
    "'(1 2)": listed(L(1), L(2)), "(range 3)": listed(L(0), L(1), L(2)), "(map inc [1 2])": listed(L(2), L(3)),
    "()": listed(), "(java.util.ArrayList. [1])": listed(L(1)), "(first {1 2})": v.seq("A", [L(1), L(2)]),
    "{\"a\" 1}": v.pairs("M", [(S("a"), L(1))]), "(sorted-map 1 [2])": v.pairs("M", [(L(1), v.seq("A", [L(2)]))]),
    "#{:k}": v.seq("S", [typed("Keyword", S("k"))]), ":kw": typed("Keyword", S("kw")),
    ":a/b": typed("Keyword", S("a/b")), "'sym": typed("Symbol", S("sym")), "6/4": typed("Ratio", pair(Z(3), Z(2))),
    "1.50M": typed("BigDecimal", S("1.50")),
    # What cannot be rebuilt crosses as X with its class (the whole value).
    "inc": v.Node("X", None, "function"), "(atom 1)": v.Node("X", None, "clojure.lang.Atom"),
    "(Object.)": v.Node("X", None, "java.lang.Object"),
    "(StringBuilder. \"x\")": v.Node("X", None, "java.lang.StringBuilder"),
    "(do (defrecord Point [x]) (->Point 1))": v.Node("X", None, "user.Point"),
    "[1 (atom 2)]": v.Node("X", None, "clojure.lang.Atom"),
    "(reduce (fn [acc _] [acc]) [] (range 200))": v.Node("X", None, "deeply nested value"),
}

# Bytes a Clojure receiver must refuse (malformed), never coerce.
REFUSED = {
    "JavaScript's undefined": raw("u"),
    "a JavaScript object": raw("O", U32(0)),
    "an optional": raw("Y", "n"),
    "an empty optional": raw("N"),
    "an unsigned integer": raw("L", b"\0" * 8),
    "a bare tuple": raw("P", U32(0)),
    "a dynamic value of another language": v.encode(typed("Vector", v.seq("A", []))),
    "trailing bytes": raw("T", "T"),
    "truncated long": raw("l", b"\0\0\0"),
    "truncated double": raw("d", b"\0\0\0"),
    "a count past the end": raw("A", U32(5), "T"),
    "a huge count past the end": raw("A", U32(0xFFFFFFFF), "T"),
    "an unknown tag": raw("?"),
    "an integer not in its shortest form": raw("z", U32(2), b"\x00\x01"),
    "a negative integer not in its shortest form": raw("z", U32(2), b"\xff\xff"),
    "zero not as the empty integer": raw("z", U32(1), b"\x00"),
    "a string that is not UTF-8": raw("s", U32(1), b"\xff"),
    "an overlong form": raw("s", U32(2), b"\xc0\x80"),
    "a surrogate pair as two 3-byte forms": raw("s", U32(6), b"\xed\xa0\xbd\xed\xb8\x80"),
    "a character past UTF-16's units": raw("c", U32(0x10000)),
    "a ratio that is an integer": v.encode(typed("Ratio", pair(Z(2), Z(1)))),
    "a ratio not in lowest terms": v.encode(typed("Ratio", pair(Z(2), Z(4)))),
    "a ratio with a negative denominator": v.encode(typed("Ratio", pair(Z(1), Z(-2)))),
    "a decimal not in its own form": v.encode(typed("BigDecimal", S("1.5e0"))),
    "a keyword that is not a name": v.encode(typed("Keyword", Z(1))),
    "a map with a key twice": v.encode(v.pairs("M", [(L(1), L(1)), (L(1), L(2))])),
    "a set with an item twice": v.encode(v.seq("S", [L(1), L(1)])),
    "a type Clojure does not rebuild": v.encode(typed("Range", pair(Z(1), Z(2)))),
    "nested too deeply": v.encode(nested(v.MAX_DEPTH + 1)),
}

# The payload in the environment (sections of hex, and expressions split by \x1f); each answer on a line of its own.
SCRIPT = r"""
(require '[passk.wire :as w] '[clojure.string :as string])
(defn unhex [h] (byte-array (map #(unchecked-byte (Integer/parseInt (apply str %) 16)) (partition 2 h))))
(defn hex [b] (apply str (map #(format "%02x" (bit-and % 0xff)) b)))
(defn hexes [name] (remove empty? (string/split (or (System/getenv name) "") #",")))
(doseq [h (hexes "ROUND")]
  (println "round" (try (hex (w/encode (w/decode (unhex h)))) (catch Exception e (str "raised " (ex-message e))))))
(doseq [code (string/split (System/getenv "LITERALS") #"\u001f")]
  (println "literal" (hex (w/encode (try (eval (read-string code)) (catch ArithmeticException e e))))))
(doseq [h (cons "" (hexes "REFUSED"))]
  (println "refused" (try (w/decode (unhex h)) "accepted"
                          (catch clojure.lang.ExceptionInfo e (if (w/malformed? e) "malformed" (ex-message e))))))
"""


@pytest.fixture(scope="module")
def image(docker_client) -> str:  # type: ignore[no-untyped-def]
    return ensure_language_image(docker_client, get("clojure"))


@pytest.mark.slow
def test_codec_matches_the_reference_byte_for_byte(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    environment = {"ROUND": ",".join(v.encode(node).hex() for node in ROUND_TRIP), "LITERALS": "\x1f".join(LITERALS),
                   "REFUSED": ",".join(data.hex() for data in REFUSED.values()), "LANG": "C.UTF-8"}
    out = container_stdout(docker_client, image, ["java", "-cp", clojure.CLASSPATH, "clojure.main", "-e", SCRIPT],
                           environment)
    got = {kind: [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith(kind + " ")]
           for kind in ("round", "literal", "refused")}
    assert_matches_the_reference(ROUND_TRIP, got["round"], LITERALS, got["literal"], {"empty": b"", **REFUSED},
                                 got["refused"], "malformed")


# A problem whose tests hand every kind of value to the candidate and check, as one process would, that what comes
# back is the same value of the same class (1 and 1N and 1.0 differ, and so do -0.0 and 0.0); the candidate checks
# what it received the same way. The values are the prompt's, so both programs have them.
ECHO_PROMPT = """(defn passk-values []
  [nil true false 0 -1 (int 7) (short 8) (byte 9) 100000000000000000000N 1N (biginteger 5) 1/3 1.5 -0.0 ##Inf
   (float 2.5) 2.50M "" "h\u00e9llo" \\a :kw :ns/kw 'sym [1 [2.5 []]] '(1 (2)) {"a" 1 :b [2]} #{1 "x"}
   (apply str (repeat 100000 "x"))])

(defn same? [a b]
  (and (= a b) (= (class a) (class b)) (= (pr-str a) (pr-str b))))

(defn echo
  "Returns its argument."
  [value kind]
"""
ECHO_COMPLETION = """  (cond (= kind :any) value
        (same? value (nth (passk-values) kind)) value
        :else (throw (ex-info (str "the candidate received " kind) {}))))
"""
ECHO_TESTS = """(require '[clojure.test :refer [deftest is run-test]])

(deftest test-humaneval
  (doseq [[index value] (map-indexed vector (passk-values))]
    (is (same? (echo value index) value)))
  (is (= (echo 3 :any) 3))
  (is (not= (echo 3 :any) 3.0)))

(run-test test-humaneval)
"""


@pytest.mark.slow
def test_every_kind_of_value_crosses_as_one_process_sees_it(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    # The same tests against a candidate that returns a keyword as its name: the tests see the difference.
    lossy = "  (if (and (keyword? value) (not= kind :any)) (name value) value))\n"
    echo, lossy_outcome = echo_outcomes(docker_client, image, "clojure", ECHO_PROMPT, ECHO_TESTS,
                                        [ECHO_COMPLETION, lossy])
    assert echo.verdict is Verdict.PASSED, echo
    said = lossy_outcome.detail or ""
    assert lossy_outcome.verdict is Verdict.FAILED and 'actual: (not (same? "kw" :kw))' in said, lossy_outcome
