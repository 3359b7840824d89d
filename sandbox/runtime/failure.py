"""What failed, as the judges record it: a JSON object after a mark at the end of a judge's message.

The message travels on the judge's private report channel (supervisor.py), which splits the record off
(`split`) and sends it to the host beside the verdict, never inside its text. Text that came from the
candidate never carries the mark (`clean`), so the record is always the judge's own.
"""

import json as _json

MARK = "\x1e"
HUMAN_LIMIT = 300
VALUE_LIMIT = 120


def clean(text: str, limit: int = HUMAN_LIMIT) -> str:
    text = str(text).replace(MARK, " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def clip(value: object, limit: int = VALUE_LIMIT) -> str:
    text = value if isinstance(value, str) else repr(value)
    return clean(text, limit)


def mark(info: dict) -> str:
    return MARK + _json.dumps(info, separators=(",", ":"), ensure_ascii=False)


def split(text: str) -> "tuple[str, dict | None]":
    """(the human text, the record) of a judge's message; the record only where one follows the mark."""
    if MARK not in text:
        return text, None
    human, _, payload = text.rpartition(MARK)
    try:
        record = _json.loads(payload)
    except ValueError:
        return human, None
    return human, record if type(record) is dict else None


def plain(value: object, depth: int = 0) -> bool:
    """A value shown as expected/actual: numbers, strings, None, and containers of them."""
    if depth > 6:
        return False
    if value is None or type(value) in (bool, int, float, complex, str, bytes):
        return True
    if type(value) in (list, tuple, set, frozenset):
        return all(plain(item, depth + 1) for item in value)
    if type(value) is dict:
        return all(plain(k, depth + 1) and plain(v, depth + 1) for k, v in value.items())
    return False
