"""D: LDC 1.30 from Debian bookworm (`ldc`, the LLVM D compiler on DMD 2.100's front end), gcc and libc6-dev to link.

LDC rather than GDC: MultiPL-E runs D with `rdmd -unittest -main` (DMD's driver), and LDC's `ldmd2` takes the
same flags, with the same front end; LDC also compiles a MultiPL-E program in about half a second.

MultiPL-E's D prompts end with the function's signature (the completion starts with its `{`) and its tests are a
`unittest` block followed by `void main(){}`. Self-checking problems run as two D programs:

- the candidate: `main.d`, the original program up to the tests (the prompt and the model's completion, as
  written), compiled with passk's `passk_main.d`: the prompt's imports and a `main` that takes the model's
  function at the prompt's signature (a function pointer of that type picks it among any overloads) and serves it
  to the judge (d/passk/server.d). A completion that defines `main` fails to link, as it does under MultiPL-E
  (whose tests define one too).
- the judge: `judge.d`, the prompt's code before the function, a stub with the prompt's signature whose body
  calls the candidate's process (d/passk/judge.d), then the tests (after `#line 1 "tests"`, so that a failed
  assertion names the tests' own line). It is compiled with `-unittest`; passk's module replaces druntime's
  unit-test runner, runs every unittest block and reports the pass only once all of them ran and passed.

Values cross as data (d/passk/wire.d, the rule in sandbox/runtime/values.py), encoded and rebuilt by their static
type at compile time: nothing the model wrote (an `opEquals`, a module destructor, `exit(0)`) runs in the judge.
The candidate is compiled without `-unittest`: a unittest block of the model's own would otherwise run in place
of the server; under MultiPL-E such a block runs beside the tests.

passk's modules are compiled into /opt/passk/d/libpassk.a when the image is built; programs import them with
`-I/opt/passk/d`.
"""

from __future__ import annotations

import re

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language, ReferencePass
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource

RUNTIME_DIR = "/opt/passk/d"
RUNTIME_FILES = ("wire.d", "judge.d", "server.d")
LIBRARY = f"{RUNTIME_DIR}/libpassk.a"
# D's comments: //, /* */ and the nesting /+ +/ (blank() knows one block-comment pair; /+ +/ holds no brace in
# MultiPL-E's prompts). Backquoted strings are raw.
SYNTAX = Syntax(backtick_raw=True)
TESTS_FILE = "tests"
_PARAM = re.compile(r"(?P<type>.*?\S)\s+(?P<name>[A-Za-z_]\w*)", re.S)


def entry(prompt: str) -> Entry:
    """The function the prompt ends with: `<return type> <name>(<parameters>)` and no body (MultiPL-E's D)."""
    code = splitting.blank(prompt, SYNTAX)
    if splitting.net_depth(code) != 0:
        raise SplitError("the prompt leaves a block open; MultiPL-E's D prompts end with the function's signature")
    end = len(code.rstrip())
    start = splitting.statement_start(code, end)
    signature = code[start:end]
    opened = _parameters_start(signature)
    name = re.search(r"(?<![\w.!])([A-Za-z_]\w*)\s*$", signature[:opened]) if opened is not None else None
    returns = signature[:name.start()].strip() if name else ""
    if not name or not returns:
        raise SplitError("the prompt does not end with a D function's signature")
    params = []
    for param in splitting.split_params(signature[opened + 1:-1], "()[]"):
        named = _PARAM.fullmatch(param)
        if not named:
            raise SplitError(f"a parameter of the function to complete has no name: {param!r}")
        params.append((named.group("name"), named.group("type").strip()))
    return Entry(start=start, brace=end, name=name.group(1), params=tuple(params), returns=returns,
                 signature=prompt[start:end].strip())


def _parameters_start(signature: str) -> int | None:
    """Where the parameter list that ends the blanked signature opens (None: it does not end with one)."""
    if not signature.endswith(")"):
        return None
    depth = 0
    for index in range(len(signature) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(signature[index], 0)
        if depth == 0:
            return index
    return None


def programs(source: TestSource) -> Programs:
    e = entry(source.prompt)
    before = source.prompt[:e.start]
    # MultiPL-E's translator writes some prompts that use Nullable without importing std.typecons (HumanEval_95): no
    # program of theirs compiles, under MultiPL-E either. The judge imports it, so that its tests build and the
    # candidate's compile (the prompt as written) decides: a compile_error, as under MultiPL-E, not passk's failure.
    typecons = "" if "std.typecons" in before else "import std.typecons;\n"
    names = "".join(", " + name for name, _ in e.params)
    types = ", ".join(kind for _, kind in e.params)
    judge = (
        before + typecons + e.signature + " {\n"
        + "    import passk.judge : passkCall = call;\n"
        + f'    return passkCall!(typeof(return))("{e.name}"{names});\n}}\n'
        + f'#line 1 "{TESTS_FILE}"\n' + source.tests + "\n"
    )
    server = (
        before + "\nimport passk.server : passkServe = serve;\nimport passkCandidate = main;\n\n"
        + "int main() {\n"
        + f"    {e.returns} function({types}) passkEntry = &passkCandidate.{e.name};\n"
        + f'    return passkServe("{e.name}", passkEntry);\n}}\n'
    )
    return Programs(candidate={"main.d": source.prompt + source.completion + "\n", "passk_main.d": server},
                    judge={"judge.d": judge})


STDERR_VERDICTS = (
    (r"core\.exception\.OutOfMemoryError|Memory allocation failed", "memory"),
    (r"core\.exception\.AssertError|\[unittest\] ", "failed"),
    # An uncaught throwable as druntime prints it ("object.Exception@main.d(5): boom"), a compile error too.
    (r"(?m)^[\w.]+(?:Exception|Error)@|Error: ", "error"),
)

_COMPILE = ("ldc2", f"-I{RUNTIME_DIR}")

LANGUAGE = Language(
    name="d",
    title="D",
    packages=("ldc", "gcc", "libc6-dev"),
    image_setup=(
        f"mkdir -p {RUNTIME_DIR}/passk && cp " + " ".join(f"/passk-context/d/{name}" for name in RUNTIME_FILES)
        + f" {RUNTIME_DIR}/passk/",
        f"cd {RUNTIME_DIR} && ldc2 -lib -od=/tmp -of={LIBRARY} " + " ".join(f"passk/{n}" for n in RUNTIME_FILES),
        "chmod -R a+rX /opt/passk",
        # What linking D programs never uses: gcc's C compilers (ldc2 calls gcc to link only), its LTO tools and
        # sanitizer runtimes, Phobos' debug builds, manuals.
        "rm -rf /usr/lib/gcc/*/12/cc1 /usr/lib/gcc/*/12/lto1 /usr/bin/*-lto-dump-12 /usr/lib/gcc/*/12/lib*san*"
        " /usr/lib/*/lib*san.so* /usr/lib/*/lib*-ldc-debug* /usr/share/doc/* /usr/share/man/*",
        # A program links and runs.
        "cd /tmp && printf 'import std.stdio; void main() { writeln(1); }' > t.d && ldc2 -of=t t.d && ./t && rm t*",
    ),
    context_files=tuple((f"sandbox/languages/d/passk/{name}", f"d/{name}") for name in RUNTIME_FILES),
    source_file="main.d",
    programs=programs,
    compile=("ldc2", "-of=main", "main.d"),
    # SandboxFusion's D_ut: `dmd <file> -unittest`, then the program (its unittest blocks, else its main).
    run_code_compile=("ldc2", "-unittest", "-of=main", "main.d"),
    candidate_compile=(*_COMPILE, "-of=main", "main.d", "passk_main.d", LIBRARY),
    judge_compile=(*_COMPILE, "-unittest", "-of=judge", "judge.d", LIBRARY),
    judge_run=("./judge",),
    run=("./main",),
    version=("ldc2", "--version"),
    # Phobos' templates (std.regex, std.algorithm) take seconds of CPU to compile.
    compile_time_limit_s=30.0,
    compile_memory_bytes=1024 * MB,
    stderr_verdicts=STDERR_VERDICTS,
    aliases=("dlang", "ldc"),
    run_code_names=("D_ut",),
    # MultiPL-E's evaluation/src/eval_dlang.py: `rdmd -unittest -main <file>` with a 15 s timeout; exit status 0
    # passes. Debian ships no rdmd: LDC's DMD-compatible driver compiles the file with the same flags, then it runs,
    # each with its 15 s (rdmd's one 15 s covers both, which a compile alone can take on a loaded machine).
    reference_commands=("ldmd2 -unittest -main -of=main.bin main.d", "./main.bin"),
    reference_pass=ReferencePass(timeout_s=15.0),
)
