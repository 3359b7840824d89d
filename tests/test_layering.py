"""The layering, checked rather than remembered: which parts of passk may import which.

- sandbox/runtime is copied into the image alone: the standard library and its siblings (relative imports).
- sandbox/ (the host side of the sandbox) never imports service/: the service uses the sandbox, never the reverse.
- service/statistics is pure: the standard library, numpy, scipy and its own modules, nothing that reads a
  database, the network or the clock of a request.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STDLIB = sys.stdlib_module_names | {"__future__"}


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, top-level module) of every absolute import in a file, nested ones (in functions) included;
    relative imports as (line, "."), with their level."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            yield node.lineno, "." if node.level else (node.module or "")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name


def _offences(folder: str, allowed) -> list[str]:  # noqa: ANN001
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for line, module in _imports(path):
            if not allowed(module):
                found.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return found


def test_the_runtime_imports_only_the_standard_library_and_itself() -> None:
    assert not _offences("sandbox/runtime", lambda module: module == "." or module.split(".")[0] in STDLIB)


def test_the_sandbox_never_imports_the_service() -> None:
    assert not _offences("sandbox", lambda module: module.split(".")[0] != "service")


def test_statistics_are_pure() -> None:
    pure = STDLIB - {"socket", "http", "urllib", "sqlite3", "subprocess", "asyncio"} | {"numpy", "scipy"}
    assert not _offences(
        "service/statistics",
        lambda module: module == "." or module.split(".")[0] in pure or module.startswith("service.statistics"),
    )
