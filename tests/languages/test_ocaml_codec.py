"""OCaml's value wire (sandbox/languages/ocaml/passk_wire.ml) against the Python reference codec
(sandbox/runtime/values.py), in the real OCaml image: values round-trip byte for byte through each type's codec,
OCaml's own values encode to exactly the reference's bytes, and bytes that are not a value of the type are refused.
Then one problem through the real sandbox whose tests see every kind of value cross both ways exactly as one process
would."""

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
C = lambda n: v.Node("c", n)  # noqa: E731
W = "Passk_wire."
INT, FLOAT, STRING = W + "int", W + "float", W + "string"


def seq(*items: v.Node) -> v.Node:
    return v.seq("A", list(items))


def tup(*items: v.Node) -> v.Node:
    return v.seq("P", list(items))


# (codec, value) a receiver of that type rebuilds and sends back unchanged.
ROUND_TRIP = [
    (INT, L(0)), (INT, L(-1)), (INT, L(2**62 - 1)), (INT, L(-(2**62))),
    (FLOAT, D(0.0)), (FLOAT, D(-0.0)), (FLOAT, D(1.5)), (FLOAT, D(float("inf"))), (FLOAT, D(float("-inf"))),
    (FLOAT, D(5e-324)), (FLOAT, D(1.7976931348623157e308)), (FLOAT, bits(0x7FF8000000000000)),
    (FLOAT, bits(0x7FF8000000000ABC)), (FLOAT, bits(0xFFF8000000000001)),
    (W + "bool", v.TRUE), (W + "bool", v.FALSE), (W + "unit", v.NULL), (W + "char", C(0)), (W + "char", C(255)),
    (STRING, S("")), (STRING, S("abc")), (STRING, S("h\u00e9llo")), (STRING, S("a\x00b")), (STRING, S(b"\xff\xfe")),
    (f"({W}list {INT})", seq()), (f"({W}list ({W}list {STRING}))", seq(seq(S("a"), S("")), seq())),
    (f"({W}array {FLOAT})", seq(D(2.5), D(-0.0))),
    (f"({W}option {INT})", v.EMPTY), (f"({W}option {INT})", v.present(L(5))),
    (f"({W}option ({W}option {INT}))", v.present(v.EMPTY)),
    (f"({W}tuple2 {INT} {STRING})", tup(L(1), S("x"))),
    (f"({W}tuple5 {INT} {FLOAT} {STRING} {W}char {W}bool)", tup(L(1), D(0.5), S("y"), C(65), v.TRUE)),
    (f"({W}list ({W}tuple2 {STRING} {INT}))", seq(tup(S("a"), L(1)), tup(S("b"), L(2)))),
]

# (codec, OCaml expression) -> the reference value each must encode to.
LITERALS = {
    (INT, "max_int"): L(2**62 - 1), (INT, "min_int"): L(-(2**62)), (INT, "7 / 2"): L(3),
    (FLOAT, "-0.0"): D(-0.0), (FLOAT, "infinity"): D(float("inf")), (FLOAT, "1. /. 3."): D(1 / 3),
    (W + "char", "'A'"): C(65), (W + "char", "'\\255'"): C(255), (STRING, '"h\\xc3\\xa9"'): S("h\u00e9"),
    (W + "unit", "()"): v.NULL, (W + "bool", "1 < 2"): v.TRUE,
    (f"({W}list {INT})", "[1; 2]"): seq(L(1), L(2)), (f"({W}array {FLOAT})", "[|1.5|]"): seq(D(1.5)),
    (f"({W}option ({W}option {INT}))", "Some (Some 3)"): v.present(v.present(L(3))),
    (f"({W}tuple3 {INT} {STRING} ({W}list {W}bool))", '(1, "x", [true])'): tup(L(1), S("x"), seq(v.TRUE)),
}

# (codec, bytes) a receiver of that type must refuse (Malformed), never coerce.
REFUSED = {
    "an integer of any size": (INT, raw("z", U32(1), b"\x01")),
    "an int32": (INT, raw("i", U32(1))),
    "a float as an int": (INT, v.encode(D(1.0))),
    "an integer past OCaml's 63 bits": (INT, v.encode(L(2**62))),
    "a negative integer past OCaml's 63 bits": (INT, v.encode(L(-(2**62) - 1))),
    "an int as a float": (FLOAT, v.encode(L(1))),
    "a binary32 float": (FLOAT, raw("f", U32(0))),
    "a character past a byte": (W + "char", raw("c", U32(256))),
    "a string as a char": (W + "char", v.encode(S("a"))),
    "null as a bool": (W + "bool", v.encode(v.NULL)),
    "an empty optional as unit": (W + "unit", raw("N")),
    "null as an option": (f"({W}option {INT})", v.encode(v.NULL)),
    "a tuple as a list": (f"({W}list {INT})", v.encode(tup(L(1)))),
    "a list of the wrong items": (f"({W}list {INT})", v.encode(seq(S("x")))),
    "a tuple of three as a pair": (f"({W}tuple2 {INT} {INT})", v.encode(tup(L(1), L(2), L(3)))),
    "a list as a pair": (f"({W}tuple2 {INT} {INT})", v.encode(seq(L(1), L(2)))),
    "a map": (f"({W}list {INT})", v.encode(v.pairs("M", []))),
    "trailing bytes": (W + "bool", raw("T", "T")),
    "truncated double": (FLOAT, raw("d", b"\0\0\0")),
    "truncated integer": (INT, raw("l", b"\0\0\0\0")),
    "a string past the end": (STRING, raw("s", U32(5), "ab")),
    "a count past the end": (f"({W}list {INT})", raw("A", U32(5), "l")),
    "a huge count past the end": (f"({W}list {W}bool)", raw("A", U32(0xFFFFFFFF), "T")),
    "an unknown tag": (INT, raw("?")),
    "empty": (INT, b""),
}


def script() -> str:
    """An OCaml program that round-trips, encodes and refuses every case above, one result a line."""
    lines = [
        "let hex s = String.concat \"\" (List.map (fun c -> Printf.sprintf \"%02x\" (Char.code c))"
        " (List.of_seq (String.to_seq s)))",
        "let unhex h = String.init (String.length h / 2) (fun i -> Char.chr (int_of_string (\"0x\" ^ String.sub h (2 * i) 2)))",
        "let round codec h = print_endline (match Passk_wire.encode codec (Passk_wire.decode codec (unhex h)) with"
        " s -> \"R \" ^ hex s | exception Passk_wire.Malformed why -> \"R failed \" ^ why)",
        "let literal codec x = print_endline (\"L \" ^ hex (Passk_wire.encode codec x))",
        "let refuse codec h = print_endline (match Passk_wire.decode codec (unhex h) with _ -> \"F accepted\""
        " | exception Passk_wire.Malformed _ -> \"F Malformed\")",
    ]
    lines += [f'let () = round {codec} "{v.encode(node).hex()}"' for codec, node in ROUND_TRIP]
    lines += [f"let () = literal {codec} ({expression})" for codec, expression in LITERALS]
    lines += [f'let () = refuse {codec} "{data.hex()}"' for codec, data in REFUSED.values()]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def image(docker_client) -> str:  # type: ignore[no-untyped-def]
    return ensure_language_image(docker_client, get("ocaml"))


@pytest.mark.slow
def test_codec_matches_the_reference_byte_for_byte(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    command = ("cd /tmp && cat > codec.ml <<'PASSK_EOF'\n" + script() + "PASSK_EOF\n"
               "ocamlc -w -a -I /opt/passk/ocaml unix.cma /opt/passk/ocaml/passk_wire.cmo codec.ml -o codec && ./codec")
    lines = container_stdout(docker_client, image, ["sh", "-c", command]).splitlines()
    got = {kind: [line[2:] for line in lines if line.startswith(kind + " ")] for kind in "RLF"}
    assert_matches_the_reference([node for _, node in ROUND_TRIP], got["R"], LITERALS, got["L"],
                                 {label: data for label, (_, data) in REFUSED.items()}, got["F"], "Malformed")


# A problem whose tests hand every kind of value to the candidate and check, bit for bit, what comes back; the
# candidate checks what it received the same way.
ECHO_TYPE = "(int * float * string * char * bool) list"
ECHO_PROMPT = (f"(** Returns its arguments. *)\nlet echo (rows : {ECHO_TYPE}) (more : int option array) (nothing : unit)"
               f" : {ECHO_TYPE} * int option array * string list list =")
ECHO_VALUES = """
let passk_rows = [(0, 0.0, "", '\\000', false); (max_int, -0.0, "h\\xc3\\xa9llo", '\\255', true);
  (min_int, nan, "\\xff\\x00", 'a', true); (-1, infinity, String.make 100000 'x', 'z', false);
  (42, 5e-324, "\\n", ' ', false)]
let passk_more = [| None; Some 1; Some min_int |]
let passk_bits rows = List.map (fun (a, b, c, d, e) -> (a, Int64.bits_of_float b, c, d, e)) rows
"""
ECHO_COMPLETION = ("\n  if passk_bits rows <> passk_bits passk_rows || more <> passk_more || nothing <> () then"
                   " failwith \"the candidate received another value\";\n  (rows, more, [[\"a\"; \"\"]; []])\n")
ECHO_TESTS = """
let assertions =
  let candidate = echo in
  let (rows, more, lists) = candidate passk_rows passk_more () in
  assert (passk_bits rows = passk_bits passk_rows);
  assert (more = passk_more);
  assert (lists = [["a"; ""]; []]);
  ()
"""


@pytest.mark.slow
def test_every_kind_of_value_crosses_as_one_process_sees_it(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    # The same tests against a candidate that loses the sign of -0.0: the tests see the difference.
    lossy = ("\n  (List.map (fun (a, b, c, d, e) -> (a, (if b = 0.0 then 0.0 else b), c, d, e)) rows, more,"
             " [[\"a\"; \"\"]; []])\n")
    echo, lossy_outcome = echo_outcomes(docker_client, image, "ocaml", ECHO_VALUES + ECHO_PROMPT, ECHO_TESTS,
                                        [ECHO_COMPLETION, lossy])
    assert echo.verdict is Verdict.PASSED, echo
    assert lossy_outcome.verdict is Verdict.FAILED and "Assert_failure" in (lossy_outcome.detail or ""), lossy_outcome
