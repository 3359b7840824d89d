"""What crosses between a candidate's process and its judge: frames and values.

Framing: a 4-byte big-endian length, then that many bytes of JSON, written
in one call. Values: a tagged JSON form that keeps the types JSON would lose. The candidate side encodes whatever it
returns (`encode`); the judge side rebuilds it (`decode`) from data only, so
no method the candidate wrote ever runs in the judge.

The rule (README, "How programs run"): a value crosses if it is built from

- None, bool, int, float, complex, str, bytes, bytearray, list, tuple, dict,
  set, frozenset;
- the standard library's value types: `collections.Counter`, `OrderedDict`,
  `defaultdict` (its `default_factory` when it is a built-in type, else
  None), `deque` (with its `maxlen`), dict views (`keys()`, `values()`,
  `items()`: rebuilt as views of an equal dict), `range`,
  `fractions.Fraction`, `decimal.Decimal`, and `datetime`'s `date`,
  `datetime` (naive or with a fixed offset), `time` and `timedelta`;
- iterators (generators, `map`, `filter`, `zip`, ...): the judge gets a
  proxy that asks the candidate for each next item when the test asks for
  it, so tests that call `next()` see the same laziness as in one process.

All by exact type: a subclass, or any other class, is reported by name and
judged an `error` ("returned a value of type X"). Values are rebuilt as the
same standard types, so a test compares them exactly as it would have.
"""

import collections as _collections
import datetime as _datetime
import decimal as _decimal
import fractions as _fractions
import json as _json
import os as _os
import struct as _struct

from .messages import encode as _encode

MAX_DEPTH = 100
MAX_MESSAGE = 1 << 30
_LENGTH = _struct.Struct(">I")

_type, _len, _hex, _float_hex, _dict_items = type, len, hex, float.hex, dict.items
_bool, _int, _float, _str, _list, _tuple, _dict = bool, int, float, str, list, tuple, dict
_set, _frozenset, _bytes, _bytearray, _complex, _range = set, frozenset, bytes, bytearray, complex, range
_Counter, _OrderedDict, _defaultdict, _deque = (
    _collections.Counter, _collections.OrderedDict, _collections.defaultdict, _collections.deque,
)
_dict_keys, _dict_values, _dict_itemsview = type({}.keys()), type({}.values()), type({}.items())
_Fraction, _Decimal = _fractions.Fraction, _decimal.Decimal
_date, _datetime_t, _time_t, _timedelta, _timezone = (
    _datetime.date, _datetime.datetime, _datetime.time, _datetime.timedelta, _datetime.timezone,
)
# default_factory values that can be named and rebuilt.
_FACTORIES = {t.__name__: t for t in (int, float, str, list, dict, set, frozenset, tuple, bool, bytes, complex)}


# ------------------------------------------------------------------ framing


def send(fd: int, message: dict) -> None:
    data = _encode(message).encode("utf-8", "surrogatepass")
    view = memoryview(_LENGTH.pack(_len(data)) + data)
    while view:
        view = view[_os.write(fd, view):]


def assignment_memfd(message: dict) -> int:
    """A memfd holding `message` as send() frames it, read from its start: a candidate's assignment (fd 3)."""
    fd = _os.memfd_create("assignment")
    send(fd, message)
    _os.lseek(fd, 0, 0)
    return fd


def receive(fd: int) -> "dict | None":
    """One message, or None if the other side closed the pipe (or sent garbage)."""
    header = _read_exactly(fd, 4)
    if header is None:
        return None
    body = _read_exactly(fd, _LENGTH.unpack(header)[0])
    if body is None:
        return None
    try:
        message = _json.loads(body.decode("utf-8", "surrogatepass"))
    except ValueError:
        return None
    return message if _type(message) is _dict else None


def _read_exactly(fd: int, size: int) -> "bytes | None":
    if size > MAX_MESSAGE:
        return None
    parts, remaining = [], size
    while remaining > 0:
        chunk = _os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        remaining -= _len(chunk)
    return b"".join(parts)


# ------------------------------------------------------------------ values


def class_name(kind: type) -> str:
    try:
        name = _type.__dict__["__name__"].__get__(kind, _type)
        return name if _type(name) is _str else "object"
    except BaseException:
        return "object"


def encode(value: object, depth: int = 0, iterators: "dict | None" = None) -> list:
    """The tagged form of `value`. Iterators are registered in `iterators` (handle -> iterator) when given."""
    kind = _type(value)
    if depth > MAX_DEPTH:
        return ["o", "deeply nested value"]
    if value is None:
        return ["n"]
    if kind is _bool:
        return ["b", value]
    if kind is _int:
        return ["i", _hex(value)]  # not str(): CPython refuses > 4300 decimal digits
    if kind is _float:
        return ["f", _float_hex(value)]
    if kind is _str:
        return ["s", value]
    d = depth + 1
    if kind is _list or kind is _tuple:
        return ["l" if kind is _list else "t", [encode(item, d, iterators) for item in value]]
    if kind is _dict or kind is _OrderedDict or kind is _Counter:
        tag = "d" if kind is _dict else ("O" if kind is _OrderedDict else "C")
        return [tag, [[encode(k, d, iterators), encode(v, d, iterators)] for k, v in _dict_items(value)]]
    if kind is _set or kind is _frozenset:
        return ["S" if kind is _set else "F", [encode(item, d, iterators) for item in value]]
    if kind is _bytes:
        return ["y", value.hex()]
    if kind is _bytearray:
        return ["Y", value.hex()]
    if kind is _complex:
        return ["c", [_float_hex(value.real), _float_hex(value.imag)]]
    if kind is _defaultdict:
        factory = value.default_factory
        name = factory.__name__ if factory in _FACTORIES.values() else None
        return ["D", name, [[encode(k, d, iterators), encode(v, d, iterators)] for k, v in _dict_items(value)]]
    if kind is _deque:
        return ["Q", [encode(item, d, iterators) for item in value], value.maxlen]
    if kind is _dict_keys or kind is _dict_values or kind is _dict_itemsview:
        tag = "dk" if kind is _dict_keys else ("dv" if kind is _dict_values else "di")
        return [tag, [encode(item, d, iterators) for item in value]]
    if kind is _range:
        return ["r", [_hex(value.start), _hex(value.stop), _hex(value.step)]]
    if kind is _Fraction:
        return ["fr", [_hex(value.numerator), _hex(value.denominator)]]
    if kind is _Decimal:
        return ["dec", _str(value)]
    if kind is _timedelta:
        return ["td", [value.days, value.seconds, value.microseconds]]
    if kind is _datetime_t or kind is _time_t:
        zone = value.tzinfo
        if zone is None or _type(zone) is _timezone:
            return ["dt" if kind is _datetime_t else "tm", value.isoformat()]
        return ["o", f"{class_name(kind)} with tzinfo {class_name(_type(zone))}"]
    if kind is _date:
        return ["da", value.isoformat()]
    if iterators is not None and _is_iterator(kind):
        handle = _len(iterators) + 1
        iterators[handle] = value
        return ["it", handle, class_name(kind)]
    return ["o", class_name(kind)]


def _is_iterator(kind: type) -> bool:
    try:
        return callable(_type.__dict__["__getattribute__"](kind, "__next__"))
    except BaseException:
        return False


def unsendable(node: list) -> "str | None":
    """The type name of the first part of an encoded value that no test may see, or None."""
    tag = node[0]
    if tag == "o":
        return _str(node[1])
    if tag in ("l", "t", "S", "F", "dk", "dv", "di"):
        parts = node[1]
    elif tag in ("d", "O", "C"):
        parts = [part for pair in node[1] for part in pair]
    elif tag == "D":
        parts = [part for pair in node[2] for part in pair]
    elif tag == "Q":
        parts = node[1]
    else:
        return None
    for part in parts:
        found = unsendable(part)
        if found is not None:
            return found
    return None


def decode(node: list, iterator: "object | None" = None) -> object:
    """Rebuild a value from data alone. `iterator(handle, type name)` makes the proxy for an iterator."""
    tag = node[0]
    if tag == "n":
        return None
    if tag == "b":
        return _bool(node[1])
    if tag == "i":
        return _int(node[1], 16)
    if tag == "f":
        return _float.fromhex(node[1])
    if tag == "s":
        return _str(node[1])
    if tag == "l":
        return [decode(item, iterator) for item in node[1]]
    if tag == "t":
        return _tuple(decode(item, iterator) for item in node[1])
    if tag in ("d", "O", "C"):
        pairs = [(decode(k, iterator), decode(v, iterator)) for k, v in node[1]]
        return _dict(pairs) if tag == "d" else (_OrderedDict(pairs) if tag == "O" else _Counter(_dict(pairs)))
    if tag == "S" or tag == "F":
        items = [decode(item, iterator) for item in node[1]]
        return _set(items) if tag == "S" else _frozenset(items)
    if tag == "y":
        return _bytes.fromhex(node[1])
    if tag == "Y":
        return _bytearray.fromhex(node[1])
    if tag == "c":
        return _complex(_float.fromhex(node[1][0]), _float.fromhex(node[1][1]))
    if tag == "D":
        factory = _FACTORIES.get(node[1]) if _type(node[1]) is _str else None
        return _defaultdict(factory, [(decode(k, iterator), decode(v, iterator)) for k, v in node[2]])
    if tag == "Q":
        maxlen = node[2] if _type(node[2]) is _int else None
        return _deque([decode(item, iterator) for item in node[1]], maxlen)
    if tag == "dk":
        return _dict.fromkeys(decode(item, iterator) for item in node[1]).keys()
    if tag == "dv":
        return _dict(enumerate(decode(item, iterator) for item in node[1])).values()
    if tag == "di":
        return _dict(decode(item, iterator) for item in node[1]).items()
    if tag == "r":
        return _range(*(_int(part, 16) for part in node[1]))
    if tag == "fr":
        return _Fraction(_int(node[1][0], 16), _int(node[1][1], 16))
    if tag == "dec":
        return _Decimal(_str(node[1]))
    if tag == "td":
        return _timedelta(days=_int(node[1][0]), seconds=_int(node[1][1]), microseconds=_int(node[1][2]))
    if tag == "dt":
        return _datetime_t.fromisoformat(_str(node[1]))
    if tag == "tm":
        return _time_t.fromisoformat(_str(node[1]))
    if tag == "da":
        return _date.fromisoformat(_str(node[1]))
    if tag == "it" and iterator is not None:
        return iterator(_int(node[1]), _str(node[2]))
    return Unsupported(_str(node[1]) if _len(node) > 1 else "object")


class Unsupported:
    """Stands in for a value of a type that cannot cross (only ever compared, never called)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name} object>"
