"""Comparison policies: when does a program's answer count as the expected one.

This module is standard library only and has no `from __future__` import:
its source text is embedded verbatim in the programs passk runs in the
sandbox (see service/formats/harness.py), so the checker that runs there is
exactly the code tested here.

Printed output (stdin/stdout problems), `policy`:

- `exact`: the output must equal the expected text character for character
  (after UTF-8 decoding; a missing or extra final newline is a difference).
- `whitespace` (default): both texts are split into tokens on any run of
  ASCII white space (space, tab, line feed, carriage return, form feed,
  vertical tab) and the token sequences must be equal, character for
  character. Line structure, blank lines and trailing spaces are not
  significant; any other character, a no-break space or an ideographic space
  included, is part of a token.
- `numeric`: like `whitespace`, but two tokens that are both numbers are
  compared as numbers. A number is written with the ASCII digits 0-9, an
  optional sign, point and exponent (no other digits, no underscores). An
  expected integer needs an integer equal to it ("007" equals "7"; 10**18+1
  never equals 10**18, "1e18" or "1.0e18"). An expected number with a fraction
  or exponent matches any number within |got - want| <= max(abs_tol,
  rel_tol * |want|), as in the usual "absolute or relative error" checkers.
  "nan" and "inf" are not numbers here: they match only as identical text.

Returned values (call-based problems) are compared by type and value,
recursively. Expected values come from JSON, so: a bool matches only a bool,
an int only an int (not a bool or float), a float an int or float within the
tolerance above, a str only a str, None only None, a list a list or tuple
(JSON has no tuples) of matching elements, a dict a dict with the same keys
(int keys are compared as their decimal strings, since JSON keys are
strings; a dict holding both 1 and "1" matches nothing) and matching values.
Anything else (sets, custom classes, objects whose __eq__ always says yes)
never matches.
"""

import math
import re

POLICIES = ("exact", "whitespace", "numeric")
DEFAULT_POLICY = "whitespace"
DEFAULT_ABS_TOL = 1e-6
DEFAULT_REL_TOL = 1e-6

_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
# The separators of tokens: ASCII white space only (str.split() would also split at U+00A0, U+3000, ...).
_SEPARATORS = re.compile(r"[ \t\n\r\f\v]+")
_CLIP = 80


def clip(value: object, limit: int = _CLIP) -> str:
    """repr of a value, shortened: failure details are stored and shown, not the whole answer."""
    shown = repr(value)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def output_mismatch(got: str, want: str, policy: str, abs_tol: float, rel_tol: float) -> str | None:
    """None if `got` is accepted for `want` under `policy`, else where they first differ."""
    if policy == "exact":
        if got == want:
            return None
        at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        return f"output differs at character {at}: expected {clip(want[at:])}, got {clip(got[at:])}"
    got_tokens, want_tokens = tokens(got), tokens(want)
    for position, (g, w) in enumerate(zip(got_tokens, want_tokens)):
        if g == w or (policy == "numeric" and numbers_match(g, w, abs_tol, rel_tol)):
            continue
        return f"token {position + 1}: expected {clip(w)}, got {clip(g)}"
    if len(got_tokens) < len(want_tokens):
        missing = want_tokens[len(got_tokens)]
        return f"output ends after {len(got_tokens)} tokens; expected {len(want_tokens)} (next: {clip(missing)})"
    if len(got_tokens) > len(want_tokens):
        extra = got_tokens[len(want_tokens)]
        return f"output has {len(got_tokens)} tokens; expected {len(want_tokens)} (extra: {clip(extra)})"
    return None


def tokens(text: str) -> list:
    """The tokens of a text: what stands between runs of ASCII white space."""
    return [token for token in _SEPARATORS.split(text) if token]


def _canonical_integer(token: str) -> str:
    # No int(): CPython refuses to convert strings of more than 4300 digits.
    negative = token.startswith("-")
    digits = token.lstrip("+-").lstrip("0") or "0"
    return "-" + digits if negative and digits != "0" else digits


def numbers_match(got: str, want: str, abs_tol: float, rel_tol: float) -> bool:
    if not (_NUMBER.match(got) and _NUMBER.match(want)):
        return False
    if _INTEGER.match(want):
        # An expected integer needs an exactly equal integer: "1e18" or "1000000000000000000.0" is no
        # answer for 10**18+1, whatever a relative tolerance would say.
        return bool(_INTEGER.match(got)) and _canonical_integer(got) == _canonical_integer(want)
    return floats_match(float(got), float(want), abs_tol, rel_tol)


def floats_match(got: float, want: float, abs_tol: float, rel_tol: float) -> bool:
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    if math.isinf(want) or math.isinf(got):
        return got == want
    return abs(got - want) <= max(abs_tol, rel_tol * abs(want))


def _type_name(value: object) -> str:
    return type(value).__name__


def value_mismatch(got: object, want: object, abs_tol: float, rel_tol: float, path: str = "result") -> str | None:
    """None if `got` matches the JSON value `want` by type and value, else the first difference.

    `got` must be made of plain built-in values (the driver rebuilds it from
    its own encoding), so no method of the program's objects runs here.
    """

    def differs(why: str = "") -> str:
        detail = f" ({why})" if why else ""
        return (
            f"{path}: expected {clip(want)} ({_type_name(want)}), got {clip(got)} ({_type_name(got)}){detail}"
        )

    kind = type(want)
    if want is None:
        return None if got is None else differs()
    if kind is bool or kind is int or kind is str:
        return None if type(got) is kind and got == want else differs()
    if kind is float:
        if type(got) is float or type(got) is int:
            return None if floats_match(float(got), want, abs_tol, rel_tol) else differs()
        return differs()
    if kind is list:
        if type(got) is not list and type(got) is not tuple:
            return differs()
        if len(got) != len(want):  # type: ignore[arg-type]
            return differs(f"length {len(got)}, expected {len(want)}")  # type: ignore[arg-type]
        for index, (g, w) in enumerate(zip(got, want)):  # type: ignore[call-overload]
            found = value_mismatch(g, w, abs_tol, rel_tol, f"{path}[{index}]")
            if found:
                return found
        return None
    if kind is dict:
        if type(got) is not dict:
            return differs()
        normalised: dict[str, object] = {}
        for key, value in got.items():  # type: ignore[attr-defined]
            if type(key) is int:
                key = str(key)
            if type(key) is not str:
                return differs(f"key {clip(key)} is a {_type_name(key)}")
            if key in normalised:
                return differs(f"two keys stand for {clip(key)}")
            normalised[key] = value
        if set(normalised) != set(want):  # type: ignore[arg-type]
            return differs("different keys")
        for key, w in want.items():  # type: ignore[attr-defined]
            found = value_mismatch(normalised[key], w, abs_tol, rel_tol, f"{path}[{key!r}]")
            if found:
                return found
        return None
    return differs("unsupported expected type")
