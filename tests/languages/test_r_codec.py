"""R's value wire (sandbox/languages/r/wire.R) against the Python reference codec (sandbox/runtime/values.py), in
the real R image: values round-trip byte for byte, R's own values encode to exactly the reference's bytes, and
malformed bytes are refused. Then one problem through the real sandbox whose tests see every kind of value cross
both ways exactly as one process would (identical(), which compares types, names and NA bits)."""

from __future__ import annotations


import pytest

from sandbox.images import ensure_language_image
from sandbox.languages import get
from sandbox.runtime import values as v
from sandbox.verdicts import Verdict
from tests.languages.codec import (
    D, S, U32, assert_matches_the_reference, container_stdout, echo_outcomes, raw,
)

I = lambda n: v.integer(n, "i")  # noqa: E731, E741
NA_INTEGER = I(-(2**31))
NA_REAL = v.Node("d", 0x7FF00000000007A2)


def vec(kind: str, *items: v.Node) -> v.Node:
    """An R vector without names: `a <typeof> A[...]`."""
    return v.dynamic(kind, v.seq("A", list(items)))


def named(kind: str, *pairs: tuple[v.Node, v.Node]) -> v.Node:
    """An R vector with names: `a <typeof> M[(name, element) ...]`."""
    return v.dynamic(kind, v.pairs("M", list(pairs)))


def dbl(*values: float) -> v.Node:
    return vec("double", *(D(value) for value in values))


def lst(*items: v.Node) -> v.Node:
    return vec("list", *items)


def nested(depth: int) -> v.Node:
    node = lst()
    for _ in range(depth):
        node = lst(node)
    return node



# Values an R receiver rebuilds and sends back unchanged.
ROUND_TRIP = [
    v.NULL,
    vec("logical"), vec("logical", v.TRUE, v.FALSE, v.NULL),
    vec("integer"), vec("integer", I(0), I(1), I(-1), I(2**31 - 1), NA_INTEGER),
    vec("double"), dbl(0.0, -0.0, 1.5, float("inf"), float("-inf"), 5e-324, 1.7976931348623157e308),
    vec("double", NA_REAL, v.Node("d", 0x7FF8000000000000), v.Node("d", 0x7FF8000000000ABC), v.Node("d", 0xFFF8000000000001)),
    vec("character"), vec("character", S(""), S("abc"), S("h\u00e9llo"), S("\U0001f600"), v.NULL, S(b"\xff\xfe")),
    lst(), lst(v.NULL, dbl(1), vec("character", S("x")), lst(lst()), named("list", (S("k"), dbl(1)))),
    named("double", (S("a"), D(1)), (S(""), D(2)), (v.NULL, D(3)), (S("a"), D(4))),
    named("integer"), named("list"), named("character", (S("x"), v.NULL)),
    nested(3), nested(49),
]

# R expressions and the reference value each must encode to.
LITERALS = {
    "NULL": v.NULL, "1": dbl(1), "1L": vec("integer", I(1)), "c(1, 2.5)": dbl(1, 2.5), "-0": dbl(-0.0),
    "Inf": dbl(float("inf")), "NA": vec("logical", v.NULL), "NA_integer_": vec("integer", NA_INTEGER),
    "NA_real_": vec("double", NA_REAL), "NaN": vec("double", v.Node("d", 0x7FF8000000000000)),
    "c(TRUE, NA, FALSE)": vec("logical", v.TRUE, v.NULL, v.FALSE), "'\\u00e9'": vec("character", S("\u00e9")),
    "c('a', NA)": vec("character", S("a"), v.NULL), "character(0)": vec("character"), "c()": v.NULL,
    "integer(0)": vec("integer"), "list()": lst(), "1:3": vec("integer", I(1), I(2), I(3)),
    "c(a = 1, b = 2)": named("double", (S("a"), D(1)), (S("b"), D(2))),
    "setNames(1:2, c('x', NA))": named("integer", (S("x"), I(1)), (v.NULL, I(2))),
    "list(1, 'x', NULL)": lst(dbl(1), vec("character", S("x")), v.NULL),
    "list(a = 1, b = list())": named("list", (S("a"), dbl(1)), (S("b"), lst())),
    "list(c(1, 2), c(3))": lst(dbl(1, 2), dbl(3)),
    # What cannot be rebuilt crosses as X with its class (the whole value).
    "matrix(1:4, 2)": v.Node("X", None, "matrix"), "factor('a')": v.Node("X", None, "factor"),
    "data.frame(a = 1)": v.Node("X", None, "data.frame"), "sum": v.Node("X", None, "function"),
    "function(x) x": v.Node("X", None, "function"), "new.env()": v.Node("X", None, "environment"),
    "1i": v.Node("X", None, "complex"), "as.raw(1)": v.Node("X", None, "raw"),
    "list(1, sum)": v.Node("X", None, "function"), "structure(1, class = 'PASS')": v.Node("X", None, "PASS"),
    "structure(1, passk = TRUE)": v.Node("X", None, "numeric"), "quote(x)": v.Node("X", None, "name"),
    "Reduce(function(a, b) list(a), 1:60, list())": v.Node("X", None, "deeply nested value"),
}

# Bytes an R receiver must refuse (Malformed), never coerce.
REFUSED = {
    "a bare logical": raw("T"), "a bare double": raw("d", b"\0" * 8), "a bare string": v.encode(S("x")),
    "a bare sequence": raw("A", U32(0)), "a 64-bit integer": v.encode(vec("integer", v.integer(1, "l"))),
    "an integer of any size": v.encode(vec("double", v.integer(1, "z"))), "a binary32 float": raw("f", U32(0)),
    "a tuple": raw("P", U32(0)), "JavaScript's undefined": raw("u"), "an optional": raw("Y", "n"),
    "a set": v.encode(v.dynamic("list", v.seq("S", []))), "a type R does not rebuild": v.encode(vec("complex")),
    "a list element that is not a value": v.encode(vec("list", v.TRUE)),
    "an integer element tagged d": v.encode(vec("integer", D(1))),
    "a double element tagged i": v.encode(vec("double", I(1))),
    "a logical element tagged i": v.encode(vec("logical", I(1))),
    "a character element tagged T": v.encode(vec("character", v.TRUE)),
    "a name tagged T": v.encode(named("double", (v.TRUE, D(1)))),
    "a NUL in a string": v.encode(vec("character", S("a\x00b"))),
    "trailing bytes": v.encode(v.NULL) + b"n", "truncated double": raw("a", U32(6), "double", "A", U32(1), "d", b"\0\0"),
    "a count past the end": raw("a", U32(7), "logical", "A", U32(5), "T"),
    "a huge count past the end": raw("a", U32(7), "logical", "A", U32(0xFFFFFFFF), "T"),
    "an unknown tag": raw("?"), "a NUL tag": b"\0", "empty": b"",
    "nested too deeply": v.encode(nested(50)),
}


def _r_strings(items: list[str]) -> str:
    return "c(" + ", ".join(f"'{item}'" for item in items) + ")"


def script() -> str:
    """An R program that round-trips, encodes and refuses every case above, one result a line."""
    return f"""
wire <- new.env(parent = baseenv())
sys.source('/opt/passk/R/wire.R', envir = wire)
hex <- function(b) paste(as.character(b), collapse = '')
unhex <- function(h) if (nchar(h) == 0) raw(0) else as.raw(strtoi(substring(h, seq(1, nchar(h), 2), seq(2, nchar(h), 2)), 16L))
for (h in {_r_strings([v.encode(node).hex() for node in ROUND_TRIP])}) {{
  back <- tryCatch(hex(wire$encode(wire$decode(unhex(h)))), error = function(e) paste('failed', conditionMessage(e)))
  cat('R ', back, '\\n', sep = '')
}}
literals <- list({", ".join(f"function() {code}" for code in LITERALS)})
for (make in literals) cat('L ', hex(wire$encode(make())), '\\n', sep = '')
for (h in {_r_strings([data.hex() for data in REFUSED.values()])}) {{
  got <- tryCatch({{ wire$decode(unhex(h)); 'accepted' }}, passk_malformed = function(e) 'Malformed',
                  error = function(e) paste('error', conditionMessage(e)))
  cat('F ', got, '\\n', sep = '')
}}
"""


@pytest.fixture(scope="module")
def image(docker_client) -> str:  # type: ignore[no-untyped-def]
    return ensure_language_image(docker_client, get("r"))


@pytest.mark.slow
def test_codec_matches_the_reference_byte_for_byte(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    lines = container_stdout(docker_client, image, ["Rscript", "-e", script()], {"LANG": "C.UTF-8"}).splitlines()
    got = {kind: [line[2:] for line in lines if line.startswith(kind + " ")] for kind in "RLF"}
    assert_matches_the_reference(ROUND_TRIP, got["R"], LITERALS, got["L"], REFUSED, got["F"], "Malformed")


# A problem whose tests hand every kind of value to the candidate and check, as one process would, what comes back
# (identical() with num.eq = FALSE: types, names, NA against NaN, the sign of zero); the candidate checks what it
# received the same way. Arguments go by position, by name, through `...` and by the function's defaults.
ECHO_PROMPT = "# Returns its argument.\necho <- function(value, kind = 'any', ...) {"
ECHO_CHECK = r"""
passk_values <- function() {
  list(NULL, TRUE, NA, 0L, -1L, .Machine$integer.max, NA_integer_, 1.5, -0, NaN, NA_real_, -Inf, '', 'h\u00e9llo',
       c(1, 2), c(a = 1, b = 2), list(), list(1, list(2.5, 'x')), list(a = 1, b = list()), character(0), c('a', NA),
       setNames(1:2, c('x', NA)), strrep('x', 100000), seq(0.5, 5000, by = 0.5), list(NULL, NA, list(NULL)))
}
"""
ECHO_COMPLETION = ECHO_CHECK + """
  extra <- list(...)
  if (length(extra)) return(list(value, kind, extra))
  if (identical(kind, 'any')) return(value)
  if (!identical(value, passk_values()[[kind]], num.eq = FALSE)) stop('the candidate received ', kind)
  value
}
"""
ECHO_TESTS = ECHO_CHECK + """
values <- passk_values()
for (index in seq_along(values)) {
  back <- echo(values[[index]], index)
  if (!identical(back, values[[index]], num.eq = FALSE)) stop('the tests received ', index)
}
stopifnot(identical(echo(kind = 'any', value = 3L), 3L), identical(echo(2.5), 2.5), is.null(echo(NULL)))
stopifnot(identical(echo(1, 'k', 'x', b = 2L), list(1, 'k', list('x', b = 2L))))
"""


@pytest.mark.slow
def test_every_kind_of_value_crosses_as_one_process_sees_it(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    # The same tests against a candidate that turns integers into doubles: the tests see the difference.
    lossy = "\n  if (is.integer(value)) return(as.double(value))\n  value\n}\n"
    echo, lossy_outcome = echo_outcomes(docker_client, image, "r", ECHO_PROMPT, ECHO_TESTS,
                                        [ECHO_COMPLETION, lossy])
    assert echo.verdict is Verdict.PASSED, echo
    assert lossy_outcome.verdict is Verdict.ERROR and "the tests received 4" in (lossy_outcome.detail or ""), lossy_outcome
