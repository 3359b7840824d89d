"""Go: Debian bookworm's golang-go (Go 1.19) with testify (golang-github-stretchr-testify-dev).

HumanEval-X's Go tests are `main_test.go` files in package main that import
github.com/stretchr/testify/assert; the original harness runs `go test main_test.go` in a module with
the dependencies vendored. passk compiles the test binary once with `go test -c` (GOPATH mode against
Debian's sources in /usr/share/gocode, no module or network) and runs the binary.

The build cache: `image_setup` compiles a test file importing testify and the standard packages
HumanEval-X's programs use (sandbox/languages/go/warm_test.go) into GOCACHE=/opt/passk/go/cache, which is
then made read-only. Every compile reads it (testify and the standard library are never rebuilt) and
cannot write it (Go 1.19 treats a cache it cannot write as a miss to store nothing), so no program can
plant a build result that a later program in the same container would link.

The pass token: a `TestMain` prints it only when `m.Run()` returned 0, i.e. after every test ran and
passed. Code of the candidate's that runs first (a package-level variable's initialiser, `init()`) or
ends the process from inside a test (`os.Exit(0)`) never reaches it.
"""

from __future__ import annotations

import os
import re

from sandbox.languages.base import MB, Language, own_heap
PASS_TOKEN_ENV = "PASSK_PASS_TOKEN"

CACHE = "/opt/passk/go/cache"
# The fast path's tool (sandbox/languages/go/gotest.go) and the compiled packages it links against.
GOTEST = "/opt/passk/go/bin/passk-gotest"
IMPORTCFG = "/opt/passk/go/importcfg"
GOPATH = "/usr/share/gocode"
ENV = {"GO111MODULE": "off", "GOPATH": GOPATH, "GOCACHE": CACHE, "CGO_ENABLED": "0", "GOFLAGS": ""}

# The packages HumanEval-X's harness imports when the completion uses them (CodeGeeX's IMPORT_HELPER["go"]).
HELPER_PACKAGES = ("math", "strings", "fmt", "strconv", "time", "bytes", "regexp", "sort", "math/rand",
                   "crypto/md5")
TESTIFY = "github.com/stretchr/testify/assert"
GO_TEST_C = ("go", "test", "-c", "-vet=off", "-o", "main", "main_test.go")
_ENV_ASSIGN = " ".join(f"{k}={v}" for k, v in ENV.items())

_PACKAGE = re.compile(r"^[ \t]*package[ \t]+(\w+)[ \t]*(?://[^\n]*)?\n", re.M)
_IMPORT_BLOCK = re.compile(r"^[ \t]*import[ \t]*\((.*?)\)[ \t]*(?://[^\n]*)?$", re.M | re.S)
_IMPORT_LINE = re.compile(r"^[ \t]*import[ \t]+((?:[\w.]+[ \t]+)?\"[^\"\n]+\")[ \t]*;?[ \t]*(?://[^\n]*)?$", re.M)
_SPEC = re.compile(r"(?:([\w.]+)[ \t]+)?\"([^\"\n]+)\"")

_TESTMAIN = f"""
func TestMain(passk_m *passk_testing.M) {{
\tpassk_code := passk_m.Run()
\tif passk_code == 0 {{
\t\tpasskfmt.Printf("\\n%s\\n", passk_os.Getenv("{PASS_TOKEN_ENV}"))
\t}}
\tpassk_os.Exit(passk_code)
}}
"""

_STDIO_MAIN = """
func TestMain(passk_m *passk_testing.M) {
\tmain()
\tpassk_os.Exit(0)
}
"""

_OWN_IMPORTS = ('passk_testing "testing"', 'passk_os "os"')


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


def assemble(text: str, extra_imports: tuple[str, ...] = (), add_helpers: bool = True) -> str:
    """One Go file from a program whose parts each brought imports (prompt, test setup, completion).

    The package clause (`main` when none) comes first, then one import block: every import the text
    declared, those of HumanEval-X's helper packages (and testing, testify) the code uses without
    importing them, as the original harness adds them; an import the code never uses becomes a blank
    import (`_ "strings"`) instead of failing the compile with "imported and not used" (the original
    harness drops the prompt's imports and re-adds only the used ones).
    """
    package = "main"
    found = _PACKAGE.search(text)
    if found:
        package = found.group(1)
        text = text[: found.start()] + text[found.end():]
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


def _data_limit(memory_bytes: int) -> tuple[str, ...]:
    return (f"--data={memory_bytes}:{memory_bytes}",)


def tests_program(text: str) -> str:
    """The tests' file with a TestMain that prints the pass token once every test ran and passed."""
    return assemble(text, (*_OWN_IMPORTS, 'passkfmt "fmt"')) + _TESTMAIN


def stdio_program(source: str) -> str:
    """A stdio solution (package main, func main) built as a test binary whose TestMain runs main()."""
    return assemble(source, _OWN_IMPORTS, add_helpers=False) + _STDIO_MAIN


def humaneval_x_program(prompt: str, declaration: str, completion: str, test: str) -> str:
    """The original harness's file: test_setup (package main; testing, testify and the packages the test
    uses) + the prompt (its imports moved up) + completion + "\n" + test, as one valid Go file."""
    return assemble(prompt + completion + "\n" + test)


LANGUAGE = Language(
    name="go",
    title="Go",
    packages=("golang-go", "golang-github-stretchr-testify-dev"),
    context_files=(("sandbox/languages/go/warm_test.go", "go/warm_test.go"),
                   ("sandbox/languages/go/gotest.go", "go/gotest.go")),
    image_setup=(
        # Warm the build cache with testify and the standard packages HumanEval-X uses, build the fast path's
        # tool, list every compiled package it may link (the standard library and testify: each where the go
        # command itself finds it, in GOROOT or the cache), then freeze the cache.
        f"mkdir -p {CACHE} {os.path.dirname(GOTEST)} /tmp/passk-go-warm && cp /passk-context/go/*.go /tmp/passk-go-warm/",
        f"cd /tmp/passk-go-warm && export HOME=/tmp/passk-go-warm {_ENV_ASSIGN}"
        " && go test -c -vet=off -o warm.test warm_test.go && ./warm.test"
        f" && go build -o {GOTEST} gotest.go"
        " && go list -export -deps -f '{{if .Export}}packagefile {{.ImportPath}}={{.Export}}{{end}}'"
        f" std {TESTIFY} > {IMPORTCFG}",
        f"rm -rf /tmp/passk-go-warm && chmod -R a+rX,go-w {CACHE} {os.path.dirname(GOTEST)} {IMPORTCFG}",
    ),
    source_file="main_test.go",
    stdio_program=stdio_program,
    humaneval_x_program=humaneval_x_program,
    # The fast path (gotest.go: the compiler and linker run directly against the image's compiled packages,
    # the test main cmd/go would generate, -s -w) for what it reproduces exactly; for anything else (a compile
    # error, an import it does not hold, examples...) `go test -c` itself, with its own diagnostics.
    # -vet=off: `go test` also vets the package (twice the compile time); passk judges what the program
    # does, so a vet complaint (a Printf verb mismatch) does not fail a program that passes its tests.
    compile=("sh", "-c", f"{GOTEST} {IMPORTCFG} main_test.go main || exec {' '.join(GO_TEST_C)}"),
    run=("prlimit", "./main"),
    version=("go", "version"),
    compile_time_limit_s=30.0,
    compile_memory_bytes=1024 * MB,
    # The Go runtime reserves far more address space than it uses (RLIMIT_AS makes it fail at start), so
    # memory is held by RLIMIT_DATA instead, which counts only what is mapped writable: `prlimit --data`
    # (util-linux) sets it, and a hog ends with the runtime's "fatal error: runtime: out of memory" at
    # once instead of thrashing against the container's memory cgroup.
    **own_heap(_data_limit, pids=128),
    stderr_verdicts=(
        (r"fatal error: (runtime: )?out of memory", "memory"),
        (r"(?m)^panic: ", "error"),
        (r"--- FAIL", "failed"),
    ),
    aliases=("golang", "go_test.go"),
    # `go test main_test.go` as HumanEval-X's execution.py runs it, with testify from Debian's GOPATH (the
    # original's module vendors testify 1.8.0; Debian has 1.8.1) and a writable build cache of its own.
    # The reference's cache starts as a writable copy of the image's warm one (the original harness's cache
    # is warm after its first program). As for Rust, the build (vet included, as `go test` does) is a step
    # of its own so that the run's time limit (the bench applies it to the last command only) is not spent
    # compiling; the run is the test binary with the flags `go test` gives it.
    reference_commands=(
        f"flock /tmp/passk-reference.lock sh -c '[ -d /tmp/passk-reference-gocache ] || cp -r {CACHE}"
        f" /tmp/passk-reference-gocache' && GO111MODULE=off GOPATH={GOPATH} GOCACHE=/tmp/passk-reference-gocache"
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
    notes="go test -c once (GOPATH mode, Debian's testify, a read-only warm build cache); the binary runs the tests",
)
