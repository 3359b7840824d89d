"""Rows of public datasets that become `stdio` or `call` problems: APPS, CodeContests, LiveCodeBench.

Each `from_*` takes one row as published and returns a problem in passk's
API form. Conventions of each source are kept where they decide pass/fail:

- APPS: call-based outputs are stored wrapped in a one-element list
  (`[[10, -65]]` for a function returning `[10, -65]`), which is unwrapped.
- CodeContests: public, private and generated tests all run; the problem's
  time limit becomes the per-case limit.
- LiveCodeBench: a functional case's input holds one JSON value per line
  (one per argument); programs get LiveCodeBench's own import header as
  setup code (it runs the programs with it); private tests stored as
  base64 + zlib + pickle are read with an unpickler that can only build
  plain values, never call anything.

Printed outputs of all three are compared with the `numeric` policy
(tokens; integers exactly, decimals within 1e-6), the closest to their own
checkers (APPS and LiveCodeBench fall back to comparing numbers, and
CodeContests problems with real-valued answers need a tolerance).
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import zlib
from typing import Any

LIVECODEBENCH_SETUP = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\nfrom random import *\n"
    "from statistics import *\nfrom itertools import *\nfrom functools import *\nfrom operator import *\n"
    "from io import *\nfrom sys import *\nfrom json import *\nfrom builtins import *\nfrom typing import *\n"
    "import string\nimport re\nimport datetime\nimport collections\nimport heapq\nimport bisect\nimport copy\n"
    "import math\nimport random\nimport statistics\nimport itertools\nimport functools\nimport operator\n"
    "import io\nimport sys\nimport json\nsys.setrecursionlimit(50000)\n"
)


class RowError(ValueError):
    """A row of a known source that cannot become a problem; the message says why."""


def _json_field(row: dict[str, Any], name: str) -> Any:
    value = row.get(name)
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise RowError(f"field '{name}' holds text that is not valid JSON ({exc.msg})") from None
    return value


def _text(value: Any, name: str) -> str:
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "\n".join(value)  # some APPS cases are stored as lists of lines
    if not isinstance(value, str):
        raise RowError(f"a case's {name} must be text, got {type(value).__name__}")
    return value


def _tags(row: dict[str, Any], *names: str) -> list[str]:
    return [f"{name}:{row[name]}" for name in names if row.get(name) not in (None, "")]


# ---------------------------------------------------------------- APPS


def is_apps(row: dict[str, Any]) -> bool:
    return "input_output" in row


def from_apps(row: dict[str, Any]) -> dict[str, Any]:
    tests = _json_field(row, "input_output")
    if not isinstance(tests, dict) or not tests.get("inputs"):
        raise RowError("field 'input_output' has no test cases")
    inputs, outputs = tests.get("inputs"), tests.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs):
        raise RowError("field 'input_output' needs lists 'inputs' and 'outputs' of the same length")
    solutions = _json_field(row, "solutions")
    problem: dict[str, Any] = {
        "id": row.get("problem_id", row.get("id")),
        "prompt": row.get("question", ""),
        "tags": _tags(row, "difficulty"),
    }
    if isinstance(solutions, list) and solutions and isinstance(solutions[0], str):
        problem["canonical_solution"] = solutions[0]
    fn_name = tests.get("fn_name")
    if fn_name:
        cases = []
        for args, expected in zip(inputs, outputs, strict=True):
            if not isinstance(args, list):
                raise RowError("call-based inputs must be lists of arguments")
            unwrapped = expected[0] if isinstance(expected, list) and len(expected) == 1 else expected
            cases.append({"input": args, "output": unwrapped})
        return {**problem, "format": "call", "fn_name": fn_name, "cases": cases}
    cases = [{"input": _text(i, "input"), "output": _text(o, "output")} for i, o in zip(inputs, outputs, strict=True)]
    return {**problem, "format": "stdio", "cases": cases, "comparison": "numeric"}


# -------------------------------------------------------- CodeContests


def is_code_contests(row: dict[str, Any]) -> bool:
    return "public_tests" in row and ("description" in row or "name" in row)


def from_code_contests(row: dict[str, Any]) -> dict[str, Any]:
    cases = []
    for group in ("public_tests", "private_tests", "generated_tests"):
        tests = row.get(group) or {}
        inputs, outputs = tests.get("input") or [], tests.get("output") or []
        if len(inputs) != len(outputs):
            raise RowError(f"field '{group}' has {len(inputs)} inputs but {len(outputs)} outputs")
        cases += [{"input": _text(i, "input"), "output": _text(o, "output")} for i, o in zip(inputs, outputs)]
    if not cases:
        raise RowError("no test cases in public_tests, private_tests or generated_tests")
    problem: dict[str, Any] = {
        "format": "stdio",
        "id": row.get("name", row.get("id")),
        "prompt": row.get("description", ""),
        "cases": cases,
        "comparison": "numeric",
        "tags": _tags(row, "difficulty", "source"),
    }
    limit = row.get("time_limit") or {}
    seconds = (limit.get("seconds") or 0) + (limit.get("nanos") or 0) / 1e9 if isinstance(limit, dict) else 0
    if seconds > 0:
        problem["time_limit_s"] = seconds
    solutions = row.get("solutions") or {}
    for language, source in zip(solutions.get("language") or [], solutions.get("solution") or []):
        if language == 3:  # PYTHON3 in CodeContests' enum
            problem["canonical_solution"] = source
            break
    return problem


# ------------------------------------------------------- LiveCodeBench


def is_livecodebench(row: dict[str, Any]) -> bool:
    return "public_test_cases" in row


class _PlainValues(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}: only plain values are read")


def _livecodebench_private(value: Any) -> list[Any]:
    if not value:
        return []
    if isinstance(value, list):
        return value
    try:
        return json.loads(value)
    except (json.JSONDecodeError, TypeError):
        pass
    try:
        unpickled = _PlainValues(io.BytesIO(zlib.decompress(base64.b64decode(value)))).load()
        return json.loads(unpickled) if isinstance(unpickled, str) else unpickled
    except Exception as exc:  # any corruption: name the field, not the codec
        raise RowError(f"field 'private_test_cases' could not be decoded ({type(exc).__name__})") from None


def _arguments(text: str) -> list[Any]:
    try:
        return [json.loads(line) for line in text.split("\n") if line.strip()]
    except json.JSONDecodeError as exc:
        raise RowError(f"a functional case's input is not one JSON value per line ({exc.msg})") from None


def from_livecodebench(row: dict[str, Any]) -> dict[str, Any]:
    public = _json_field(row, "public_test_cases") or []
    tests = [*public, *_livecodebench_private(row.get("private_test_cases"))]
    if not tests:
        raise RowError("no test cases in public_test_cases or private_test_cases")
    kinds = {test.get("testtype") for test in tests}
    problem: dict[str, Any] = {
        "id": row.get("question_id", row.get("id")),
        "prompt": row.get("question_content", ""),
        "setup_code": LIVECODEBENCH_SETUP,
        "tags": _tags(row, "difficulty", "platform"),
    }
    if kinds == {"functional"}:
        metadata = _json_field(row, "metadata") or {}
        if not metadata.get("func_name"):
            raise RowError("functional tests need metadata.func_name")
        try:
            cases = [{"input": _arguments(t["input"]), "output": json.loads(t["output"])} for t in tests]
        except json.JSONDecodeError as exc:
            raise RowError(f"a functional case's output is not JSON ({exc.msg})") from None
        return {**problem, "format": "call", "fn_name": metadata["func_name"], "cases": cases}
    if kinds == {"stdin"}:
        cases = [{"input": t["input"], "output": t["output"]} for t in tests]
        return {**problem, "format": "stdio", "cases": cases, "comparison": "numeric"}
    raise RowError(f"test types must all be 'stdin' or all 'functional', got {sorted(map(str, kinds))}")
