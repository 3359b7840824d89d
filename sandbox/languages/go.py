"""Go: Debian bookworm's golang-go (Go 1.19) with testify (golang-github-stretchr-testify-dev).

HumanEval-X's Go tests are `main_test.go` files in package main that import
github.com/stretchr/testify/assert; the original harness runs `go test main_test.go` in a module with
the dependencies vendored. MultiPL-E's are `<name>_test.go` files of a package `<name>_test` whose tests
compare `fmt.Sprintf("%v")` of each answer with the expected one. passk builds each as two test binaries
(GOPATH mode against Debian's sources in /usr/share/gocode, no module or network), in two processes
(sandbox/languages/split.py):

- the judge, `main_test.go`: the prompt's code before the function to complete, a stub with that function's
  signature that calls the candidate's process (passk/wire's Call), the tests, and a TestMain (passk/wire's
  Main) that reports a pass only when `m.Run()` returned 0. No code of the model's is in it;
- the candidate: the original program up to the tests (the prompt and the completion, `main_test.go`) and a
  generated `passk_serve_test.go` whose TestMain serves the function (passk/wire's Serve). Its own tests, if
  it declares any, never run.

passk/wire (sandbox/languages/go/wire: the codec, Call, Main and Serve) is compiled into the image once and
only linked: the model's package cannot redefine anything it uses (its imports are file-scoped, under names
the model's files cannot declare), and whatever the model's code does at run time (init functions,
package-level initialisers, os.Exit, goroutines, writes on the descriptors) happens in the candidate's
process, where it can only change the answers the judge checks.

Both programs are package main whatever the row's package clause (a MultiPL-E row's `<name>_test` package
would be an external test package, which only the slow path builds); the name shows nowhere in what the
tests compare (`%v` does not print type names).

The build cache: `image_setup` compiles a test file importing testify and the standard packages
HumanEval-X's programs use (sandbox/languages/go/warm_test.go) into GOCACHE=/opt/passk/go/cache, and
passk/wire with them, which is then made read-only. Every compile reads it (testify, passk/wire and the
standard library are never rebuilt) and cannot write it (Go 1.19 treats a cache it cannot write as a miss
to store nothing), so no program can plant a build result that a later program in the same container would
link.
"""

from __future__ import annotations

import os
import re

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language, own_heap
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource

CACHE = "/opt/passk/go/cache"
# The fast path's tool (sandbox/languages/go/gotest.go) and the compiled packages it links against.
GOTEST = "/opt/passk/go/bin/passk-gotest"
IMPORTCFG = "/opt/passk/go/importcfg"
# passk/wire's sources, in a GOPATH entry of their own after Debian's.
WIRE_GOPATH = "/opt/passk/go/gopath"
WIRE = "passk/wire"
GOPATH = f"/usr/share/gocode:{WIRE_GOPATH}"
ENV = {"GO111MODULE": "off", "GOPATH": GOPATH, "GOCACHE": CACHE, "CGO_ENABLED": "0", "GOFLAGS": ""}

# The packages HumanEval-X's harness imports when the completion uses them (CodeGeeX's IMPORT_HELPER["go"]).
HELPER_PACKAGES = ("math", "strings", "fmt", "strconv", "time", "bytes", "regexp", "sort", "math/rand",
                   "crypto/md5")
TESTIFY = "github.com/stretchr/testify/assert"
_ENV_ASSIGN = " ".join(f"{k}={v}" for k, v in ENV.items())
_WIRE_FILES = ("codec.go", "types.go", "frame.go", "judge.go", "server.go")

SYNTAX = Syntax(quotes="\"'", backtick_raw=True)

_PACKAGE = re.compile(r"^[ \t]*package[ \t]+(\w+)[ \t]*(?://[^\n]*)?\n", re.M)
_IMPORT_BLOCK = re.compile(r"^[ \t]*import[ \t]*\((.*?)\)[ \t]*(?://[^\n]*)?$", re.M | re.S)
_IMPORT_LINE = re.compile(r"^[ \t]*import[ \t]+((?:[\w.]+[ \t]+)?\"[^\"\n]+\")[ \t]*;?[ \t]*(?://[^\n]*)?$", re.M)
_SPEC = re.compile(r"(?:([\w.]+)[ \t]+)?\"([^\"\n]+)\"")

# The judge's and the candidate's own imports, under names no program's files declare (an import's name is
# the file's: a package-level declaration of the same name in another file fails the compile).
_JUDGE_IMPORTS = ('passk_testing "testing"', f'passk_wire "{WIRE}"')
_JUDGE_MAIN = """
func TestMain(passk_m *passk_testing.M) {
\tpassk_wire.Main(passk_m)
}
"""
_SERVE = """package main

import (
\tpassk_testing "testing"
\tpassk_wire "{wire}"
)

func TestMain(passk_m *passk_testing.M) {{
\tpassk_wire.Serve("{name}", {name})
}}
"""
SERVE_FILE = "passk_serve_test.go"

_STDIO_MAIN = """
func TestMain(passk_m *passk_testing.M) {
\tmain()
\tpassk_os.Exit(0)
}
"""
_STDIO_IMPORTS = ('passk_testing "testing"', 'passk_os "os"')


def _name(alias: str | None, path: str) -> str:
    if alias:
        return alias
    last = path.rstrip("/").rsplit("/", 1)[-1]
    return last.split(".", 1)[0] if last.startswith(("yaml.", "check.")) else last


# Comments and string/rune literals, left out when looking for `name.` (a docstring's "list of strings."
# is not a use of package strings).
_NOT_CODE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|`[^`]*`|'(?:\\.|[^'\\\n])+'", re.S)


def _code(text: str) -> str:
    return _NOT_CODE.sub(" ", text)


def _uses(body: str, name: str) -> bool:
    return re.search(r"(?<![\w.])" + re.escape(name) + r"\.", body) is not None


def assemble(text: str, extra_imports: tuple[str, ...] = (), add_helpers: bool = True, package: str | None = None) -> str:
    """One Go file from a program whose parts each brought imports (prompt, test setup, completion).

    The package clause (`package` if given, else the text's own, else `main`) comes first, then one import
    block: every import the text declared, those of HumanEval-X's helper packages (and testing, testify)
    the code uses without importing them, as the original harness adds them; an import the code never uses
    becomes a blank import (`_ "strings"`) instead of failing the compile with "imported and not used" (the
    original harness drops the prompt's imports and re-adds only the used ones).
    """
    found = _PACKAGE.search(text)
    own = "main"
    if found:
        own = found.group(1)
        text = text[: found.start()] + text[found.end():]
    package = package or own
    specs: list[tuple[str | None, str]] = []

    def take(match: re.Match) -> str:
        for spec in _SPEC.finditer(match.group(1)):
            specs.append((spec.group(1), spec.group(2)))
        return ""

    text = _IMPORT_BLOCK.sub(take, text)
    text = _IMPORT_LINE.sub(take, text)
    body = _code(text)
    lines: list[str] = []
    seen: set[tuple[str | None, str]] = set()
    imported_names: set[str] = set()
    for alias, path in specs:
        if (alias, path) in seen:
            continue
        seen.add((alias, path))
        name = _name(alias, path)
        if alias in ("_", ".") or _uses(body, name):
            lines.append(f'{alias} "{path}"' if alias else f'"{path}"')
            imported_names.add(name)
        else:
            lines.append(f'_ "{path}"')
    wanted = (*HELPER_PACKAGES, "testing", TESTIFY) if add_helpers else ()
    for path in wanted:
        name = _name(None, path)
        if name not in imported_names and _uses(body, name):
            lines.append(f'"{path}"')
            imported_names.add(name)
    lines.extend(extra_imports)
    block = "import (\n" + "".join(f"\t{line}\n" for line in lines) + ")\n" if lines else ""
    return f"package {package}\n\n{block}{text}"


# ------------------------------------------------------------------ the function to complete

_FUNC_LINE = re.compile(r"(?m)^[ \t]*func[ \t]")
_FUNC_NAME = re.compile(r"func[ \t]+([A-Za-z_]\w*)[ \t]*")
# Words that begin a type, never a parameter's name.
_TYPE_WORDS = {"chan", "func", "interface", "map", "struct"}
_NAMED = re.compile(r"([A-Za-z_]\w*)(?:[ \t\n]+(\S.*)|[ \t\n]*(\.\.\..*))", re.S)
_IDENT = re.compile(r"[A-Za-z_]\w*")


def _closing(code: str, opening: int) -> int:
    """The index of the bracket that closes the one at `opening` (blanked code)."""
    depth = 0
    for index in range(opening, len(code)):
        if code[index] in "([{":
            depth += 1
        elif code[index] in ")]}":
            depth -= 1
            if depth == 0:
                return index
    raise SplitError("the signature of the function to complete is not closed")


def parameters(text: str) -> list[tuple[str, str]]:
    """(name, type) of each parameter of a Go parameter list, as the spec reads it: either every entry names
    its parameters (`a, b int` gives a and b the type int) or none does (name "")."""
    entries = splitting.split_params(text, "()[]{}")
    named = [_NAMED.fullmatch(entry) for entry in entries]
    named = [match if match and match.group(1) not in _TYPE_WORDS else None for match in named]
    if not any(named):
        return [("", entry) for entry in entries]
    params: list[tuple[str, str]] = []
    waiting: list[str] = []
    for entry, match in zip(entries, named):
        if match is None:
            if not _IDENT.fullmatch(entry):
                raise SplitError(f"a parameter list that mixes named and unnamed parameters: ({text.strip()})")
            waiting.append(entry)
            continue
        kind = (match.group(2) or match.group(3)).strip()
        params += [(name, kind) for name in (*waiting, match.group(1))]
        waiting = []
    if waiting:
        raise SplitError(f"parameters without a type: {', '.join(waiting)}")
    return params


def results(returns: str) -> list[str]:
    """The types a Go function returns, from its result as written (none, a type, or a parenthesised list)."""
    returns = returns.strip()
    if not returns:
        return []
    if returns.startswith("(") and _closing(returns, 0) == len(returns) - 1:
        return [kind for _, kind in parameters(returns[1:-1])]
    return [returns]


def entry(head: str, code: str, brace: int) -> Entry:
    """The Go function whose body the prompt leaves open: `func <name>(<parameters>) <results>`."""
    starts = [found.start() for found in _FUNC_LINE.finditer(code, 0, brace)]
    if not starts:
        raise SplitError("the prompt does not end with a Go function's signature and its '{'")
    start = starts[-1]
    start += len(code[start:brace]) - len(code[start:brace].lstrip())
    signature = code[start:brace]
    named = _FUNC_NAME.match(signature)
    if not named:
        raise SplitError("the function to complete is a method (it has a receiver): passk calls functions only")
    after = named.end()
    if signature[after:after + 1] == "[":
        raise SplitError("the function to complete is generic: passk calls functions of concrete types only")
    if signature[after:after + 1] != "(":
        raise SplitError("the prompt does not end with a Go function's signature and its '{'")
    close = _closing(signature, after)
    params = parameters(signature[after + 1:close])
    if any(kind.startswith("...") for _, kind in params[:-1]):
        raise SplitError("only the last parameter may be variadic")
    returns = signature[close + 1:].strip()
    results(returns)  # refuses what it cannot read
    return Entry(start=start, brace=brace, name=named.group(1), params=tuple(params), returns=returns,
                 signature=head[start:brace].strip())


def stub(e: Entry) -> str:
    """The judge's stand-in for the function: the prompt's signature (its own parameter names replaced, so that
    none can be `_` or shadow the stub's names), sending its arguments to the candidate's process."""
    params = ", ".join(f"passk_a{index} {kind}" for index, (_, kind) in enumerate(e.params))
    kinds = results(e.returns)
    declared = "" if not kinds else kinds[0] if len(kinds) == 1 else "(" + ", ".join(kinds) + ")"
    lines = [f"func {e.name}({params}){' ' + declared if declared else ''} {{"]
    lines += [f"\tvar passk_r{index} {kind}" for index, kind in enumerate(kinds)]
    pointers = "nil" if not kinds else "[]interface{}{" + ", ".join(f"&passk_r{i}" for i in range(len(kinds))) + "}"
    args = "".join(f", &passk_a{index}" for index in range(len(e.params)))
    lines.append(f'\tpassk_wire.Call("{e.name}", {pointers}{args})')
    if kinds:
        lines.append("\treturn " + ", ".join(f"passk_r{i}" for i in range(len(kinds))))
    return "\n".join(lines) + "\n}\n"


def programs(source: TestSource) -> Programs:
    parts = splitting.split(source.prompt, source.completion, source.tests, SYNTAX, entry)
    e = parts.entry
    if e.name in ("main", "init", "TestMain"):
        raise SplitError(f"the function to complete is {e.name}(), which the test binaries declare themselves")
    judge = assemble(parts.before + "\n" + stub(e) + "\n" + parts.judge_tests, _JUDGE_IMPORTS, package="main")
    candidate = assemble(parts.candidate, package="main")
    return Programs(candidate={"main_test.go": candidate, SERVE_FILE: _SERVE.format(wire=WIRE, name=e.name)},
                    judge={"main_test.go": judge + _JUDGE_MAIN})


# ------------------------------------------------------------------ stdio, the reference harness


def _data_limit(memory_bytes: int) -> tuple[str, ...]:
    return (f"--data={memory_bytes}:{memory_bytes}",)


def stdio_program(source: str) -> str:
    """A stdio solution (package main, func main) built as a test binary whose TestMain runs main()."""
    return assemble(source, _STDIO_IMPORTS, add_helpers=False) + _STDIO_MAIN


def humaneval_x_program(prompt: str, declaration: str, completion: str, test: str) -> str:
    """The original harness's file: test_setup (package main; testing, testify and the packages the test
    uses) + the prompt (its imports moved up) + completion + "\n" + test, as one valid Go file."""
    return assemble(prompt + completion + "\n" + test)


def _build(output: str, *files: str) -> tuple[str, ...]:
    """The fast path (gotest.go: the compiler and linker run directly against the image's compiled packages,
    the test main cmd/go would generate, -s -w) for what it reproduces exactly; for anything else (a compile
    error, an import it does not hold, examples...) `go test -c` itself, with its own diagnostics.
    -vet=off: `go test` also vets the package (twice the compile time); passk judges what the program does,
    so a vet complaint (a Printf verb mismatch) does not fail a program that passes its tests."""
    names = " ".join(files)
    return ("sh", "-c", f"{GOTEST} {IMPORTCFG} {output} {names} || exec go test -c -vet=off -o {output} {names}")


LANGUAGE = Language(
    name="go",
    title="Go",
    packages=("golang-go", "golang-github-stretchr-testify-dev"),
    context_files=(("sandbox/languages/go/warm_test.go", "go/warm_test.go"),
                   ("sandbox/languages/go/gotest.go", "go/gotest.go"),
                   *((f"sandbox/languages/go/wire/{name}", f"go/wire/{name}") for name in _WIRE_FILES)),
    image_setup=(
        # passk/wire's sources in their GOPATH entry; warm the build cache with testify, passk/wire and the
        # standard packages HumanEval-X uses, build the fast path's tool, list every compiled package it may
        # link (the standard library, testify and passk/wire: each where the go command itself finds it, in
        # GOROOT or the cache), then freeze the cache and the sources.
        f"mkdir -p {CACHE} {os.path.dirname(GOTEST)} {WIRE_GOPATH}/src/{WIRE} /tmp/passk-go-warm"
        f" && cp /passk-context/go/*.go /tmp/passk-go-warm/ && cp /passk-context/go/wire/*.go {WIRE_GOPATH}/src/{WIRE}/",
        f"cd /tmp/passk-go-warm && export HOME=/tmp/passk-go-warm {_ENV_ASSIGN}"
        f" && go vet {WIRE} && go test -c -vet=off -o warm.test warm_test.go && ./warm.test"
        f" && go build -o {GOTEST} gotest.go"
        " && go list -export -deps -f '{{if .Export}}packagefile {{.ImportPath}}={{.Export}}{{end}}'"
        f" std {TESTIFY} {WIRE} > {IMPORTCFG}",
        f"rm -rf /tmp/passk-go-warm && chmod -R a+rX,go-w {CACHE} {os.path.dirname(GOTEST)} {IMPORTCFG} {WIRE_GOPATH}",
    ),
    source_file="main_test.go",
    programs=programs,
    stdio_program=stdio_program,
    humaneval_x_program=humaneval_x_program,
    compile=_build("main", "main_test.go"),
    candidate_compile=_build("main", "main_test.go", SERVE_FILE),
    judge_compile=_build("judge", "main_test.go"),
    run=("prlimit", "./main"),
    judge_run=("prlimit", "./judge"),
    # Room for the judges of many problems (~4 MB each, compiled once per problem and container) beside the
    # candidates' builds (~2 MB each): a full cache starts afresh and every judge is compiled again.
    compile_cache_bytes=256 * MB,
    version=("go", "version"),
    compile_time_limit_s=30.0,
    compile_memory_bytes=1024 * MB,
    # The Go runtime reserves far more address space than it uses (RLIMIT_AS makes it fail at start), so
    # memory is held by RLIMIT_DATA instead, which counts only what is mapped writable: `prlimit --data`
    # (util-linux) sets it, and a hog ends with the runtime's "fatal error: runtime: out of memory" at
    # once instead of thrashing against the container's memory cgroup.
    **own_heap(_data_limit, pids=128),
    # A candidate's process that ended while the tests needed it, or a judge that ended without a report
    # (its tests failed: their output is on its stderr, see passk/wire's Main), as `go test` would end.
    stderr_verdicts=(
        (r"fatal error: (runtime: )?out of memory", "memory"),
        (r"(?m)^panic: ", "error"),
        (r"--- FAIL", "failed"),
    ),
    aliases=("golang", "go_test.go"),
    run_code_names=("go",),
    # `go test main_test.go` as HumanEval-X's execution.py runs it, with testify from Debian's GOPATH (the
    # original's module vendors testify 1.8.0; Debian has 1.8.1) and a writable build cache of its own.
    # The reference's cache starts as a writable copy of the image's warm one (the original harness's cache
    # is warm after its first program). As for Rust, the build (vet included, as `go test` does) is a step
    # of its own so that the run's time limit (the bench applies it to the last command only) is not spent
    # compiling; the run is the test binary with the flags `go test` gives it.
    reference_commands=(
        f"flock /tmp/passk-reference.lock sh -c '[ -d /tmp/passk-reference-gocache ] || cp -r {CACHE}"
        " /tmp/passk-reference-gocache' && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=/tmp/passk-reference-gocache"
        " CGO_ENABLED=0 HOME=/tmp go test -c -o main.test main_test.go",
        "./main.test -test.paniconexit0 -test.timeout=10s",
    ),
    extra={
        "env": ENV,
        "bench": (
            lambda row: '    panic("passk: wrong")\n' + row["canonical_solution"],
            lambda row: "    for {\n    }\n" + row["canonical_solution"],
        ),
    },
    notes="two test binaries (GOPATH mode, Debian's testify, a read-only warm build cache): the judge runs the tests, "
          "calling the candidate's process over passk/wire",
)
