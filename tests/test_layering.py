"""The layering, checked rather than remembered: which parts of passk may import which.

- sandbox/runtime is copied into the image alone: the standard library and its siblings (relative imports).
- sandbox/ (the host side of the sandbox) never imports service/: the service uses the sandbox, never the reverse.
- service/statistics is pure: the standard library, numpy, scipy and its own modules, nothing that reads a
  database, the network or the clock of a request.
- service/client (the CLI's user commands and the Python client) never loads the server: its settings, database,
  models, the API or the worker.
- No import circle between the modules of service/ and sandbox/, and no import of the project's own packages
  inside a function unless a comment says why (on the line, above its block of imports, or once in the module
  as "# Imported on use: ...").
"""

from __future__ import annotations

import ast
import subprocess
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


def test_the_runtime_never_loads_random() -> None:
    """PID 1 and the zygote fork a judge and a candidate per program, and `random` reseeds itself after every
    fork (about forty copy-on-write page faults in each). A program that uses it imports it fresh, seeded anew."""
    probe = "import sys, sandbox.runtime.supervisor\nprint(sorted({'random', 'secrets'} & set(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]", loaded


def test_the_sandbox_never_imports_the_service() -> None:
    assert not _offences("sandbox", lambda module: module.split(".")[0] != "service")


def test_statistics_are_pure() -> None:
    pure = STDLIB - {"socket", "http", "urllib", "sqlite3", "subprocess", "asyncio"} | {"numpy", "scipy"}
    assert not _offences(
        "service/statistics",
        lambda module: module == "." or module.split(".")[0] in pure or module.startswith("service.statistics"),
    )


def test_the_client_never_loads_the_server() -> None:
    server = ("service.core.settings", "service.core.database", "service.core.models", "service.api", "service.worker",
              "sqlalchemy", "fastapi", "docker")
    probe = (
        "import sys, service.client, service.client.commands, service.client.report, service.client.report_command\n"
        f"print(sorted(m for m in sys.modules if m.startswith({server!r})))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]", loaded


OWN = ("service", "sandbox")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _own_imports(path: Path) -> Iterator[tuple[ast.stmt, list[str], bool]]:
    """(statement, the own modules or names it imports, whether it runs inside a function) for every import
    of service/ or sandbox/ that runs (not under TYPE_CHECKING)."""
    module = _module_name(path)

    def visit(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.stmt, list[str], bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                    base = ".".join(package[: len(package) - child.level + 1] + ([child.module] if child.module else []))
                names = [f"{base}.{alias.name}" for alias in child.names] + [base]
            elif isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            else:
                yield from visit(child, nested)
                continue
            own = [name for name in names if name.split(".")[0] in OWN]
            if own:
                yield child, own, nested

    yield from visit(ast.parse(path.read_text(), str(path)), False)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for folder in OWN for path in sorted((ROOT / folder).rglob("*.py"))}


def test_no_import_circle() -> None:
    modules = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph[name] = set()
        for _statement, imported, nested in _own_imports(path):
            if not nested:
                # "from package import module" names the module; "from module import name", the module.
                target = next((found for found in map(resolve, imported) if found and found != name), None)
                if target:
                    graph[name].add(target)
    # Tarjan's strongly connected components: any with more than one module is a circle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for node in graph:
        if node not in index:
            connect(node)
    assert not circles, circles


def test_imports_inside_functions_say_why() -> None:
    unexplained = []
    for path in _modules().values():
        lines = path.read_text().splitlines()
        module_reason = any(line.startswith("# Imported on use:") for line in lines)
        for statement, _imported, nested in _own_imports(path):
            if not nested or module_reason or "#" in lines[statement.lineno - 1]:
                continue
            above = statement.lineno - 2  # the lines above, past the block of imports this one belongs to
            while above >= 0 and lines[above].strip().startswith(("from ", "import ")):
                above -= 1
            if above < 0 or not lines[above].strip().startswith("#"):
                unexplained.append(f"{path.relative_to(ROOT)}:{statement.lineno}")
    assert not unexplained, unexplained
