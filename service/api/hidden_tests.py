"""Hidden tests: what another project sees of a sample whose problem hides its tests.

A dataset (or one problem) may hide its tests from other projects (it is then usually shared: a public
benchmark with a private test set). For a caller who is not the dataset's project, a sample of such a problem
keeps its verdict, its reward-hack flags and which case failed and how (`failure.kind`, `failure.index`); its
`detail`, `stdout`, `stderr`, exit status, signal and timings are withheld, since each can carry a test's text
or data: the judge's messages quote assertions and cases, and the program itself was handed the inputs and can
print them, raise them, exit with them or spend time by them. The dataset's own project (and an operator) sees
everything, as for any dataset.
"""

from __future__ import annotations

import ast
import re
from typing import Any

# What a withheld sample shows instead of each field.
WITHHELD: dict[str, Any] = {
    "detail": None, "stdout": None, "stderr": None, "stdout_truncated": False, "stderr_truncated": False,
    "exit_code": None, "signal": None, "duration_ms": None, "cpu_ms": None,
}
# The timings an event of the live stream carries (the rest of WITHHELD it never carries).
WITHHELD_EVENT_FIELDS = ("duration_ms", "cpu_ms")
NOTE = "the tests are hidden: their inputs, expected outputs and text are shown to the dataset's project only"

_VERDICT_WORDS = {
    "failed": "wrong answer", "error": "the program raised an error", "timeout": "time limit exceeded",
    "memory": "memory limit exceeded", "crashed": "the program crashed", "compile_error": "the program did not compile",
    "sandbox_error": "the sandbox failed (not counted)",
}
# How the judges name a case in their messages ("case 2 of 5 (input ...)"): the index is read from passk's own
# prefix, before anything of the program's.
_CASE_LABEL = re.compile(r"^case (\d+) of \d+\b")


def assertion_index(tests: str, line: int | None) -> int | None:
    """The 0-based position, in source order, of the assert statement spanning `line` of the tests."""
    if line is None:
        return None
    try:
        tree = ast.parse(tests)
    except (SyntaxError, ValueError):
        return None
    asserts = sorted((node for node in ast.walk(tree) if isinstance(node, ast.Assert)),
                     key=lambda node: (node.lineno, node.col_offset))
    for position, node in enumerate(asserts):
        if node.lineno <= line <= (node.end_lineno or node.lineno):
            return position
    return None


def failing_case(failure: dict[str, Any] | None, detail: str | None, tests: str | None) -> tuple[str | None, int | None]:
    """(kind, 0-based index) of what failed, from the judge's record or its message; what cannot be told is None."""
    if failure:
        kind = failure.get("kind")
        if kind == "case" and isinstance(failure.get("index"), int):
            return "case", failure["index"]
        if kind == "assertion":
            line = failure.get("line")
            return "assertion", assertion_index(tests or "", line if isinstance(line, int) else None)
        if kind == "run":
            return kind, None
    if detail and (match := _CASE_LABEL.match(detail)):
        return "case", int(match.group(1)) - 1
    return None, None


def withheld(sample: dict[str, Any], tests: str | None) -> dict[str, Any]:
    """A sample's fields as a caller who is not its dataset's project sees them when the tests are hidden."""
    kind, index = failing_case(sample.get("failure"), sample.get("detail"), tests)
    verdict = sample.get("verdict")
    shown = dict(sample, **WITHHELD, hidden=True)
    shown["failure"] = None if verdict in (None, "passed") else {"kind": kind, "index": index, "hidden": True}
    if verdict not in (None, "passed"):
        where = f" at {kind} {index + 1}" if kind is not None and index is not None else ""
        shown["detail"] = f"{_VERDICT_WORDS.get(verdict, verdict)}{where}; {NOTE}"
    return shown
