"""C#: Mono 6.8 from Debian bookworm (`mono-mcs`, the mcs compiler, and `mono-runtime`), with System.Numerics.

Self-checking problems (MultiPL-E) run as two Mono programs (sandbox/languages/split.py, brace rules):

- the candidate, `main.cs` + `PasskMain.cs`: the original program up to the tests (the prompt and the model's
  completion), closed as the tests would close it, and a generated class `PasskMain` whose Main serves the function
  (csharp/Server.cs) and whose `PasskCall` has the prompt's signature and calls it; built with `-main:PasskMain`, so a
  Main of the model's own never runs;
- the judge, `main.cs` in a directory of its own: the prompt's code before the function to complete, a stub with the
  prompt's signature whose body calls `Passk.Judge.Call` (csharp/Judge.cs), the tests, and a launcher `PasskJudge`
  that runs the tests' Main and reports a pass once it returned. It is compiled with DEBUG, as MultiPL-E compiles the
  one program, and its Debug.Assert failures end the tests (a listener of passk's replaces Mono's default one).

Values cross as data (csharp/Wire.cs, the rule in sandbox/runtime/values.py), rebuilt by the declared types: nothing
the model wrote (an `Equals` override, a static constructor, an exit, a class named like passk's) runs in the judge.
In one process, MultiPL-E's harness ignores the exit status and fails a run only on a failed Debug.Assert or an
unhandled exception in stderr, so `Environment.Exit(0)` in the function passes there; here only the judge's report
does.

passk's runtime is compiled into /opt/passk/csharp/passk.dll when the image is built; the candidate's and the
judge's runs find it through MONO_PATH.
"""

from __future__ import annotations

import re

from sandbox.languages import split as splitting
from sandbox.languages.base import Language, ReferencePass
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource

RUNTIME_DIR = "/opt/passk/csharp"
RUNTIME_SOURCES = ("Wire.cs", "Judge.cs", "Server.cs")
PASSK_DLL = f"{RUNTIME_DIR}/passk.dll"
ENTRY_CLASS = "PasskMain"
JUDGE_CLASS = "PasskJudge"
# C#'s verbatim strings (@"...") hold backslashes as they are; `quotes` treats them as escapes, which only matters
# for a backslash right before the closing quote (none in MultiPL-E's prompts and tests).
SYNTAX = Syntax(quotes="\"'")

_MODIFIERS = ("public", "protected", "private", "internal", "static", "unsafe", "new", "extern", "virtual",
              "override", "sealed", "abstract")
_SIGNATURE = re.compile(r"(?P<head>[^()]*?)\b(?P<name>@?[A-Za-z_]\w*)\s*\((?P<params>[^()]*)\)\s*", re.S)
_PARAM = re.compile(r"(?:params\s+)?(?P<type>\S.*?)\s*\b(?P<name>@?[A-Za-z_]\w*)\s*(?:=.*)?", re.S)
_CONTAINER = re.compile(r"\b(?:class|struct|namespace)\s+(?P<name>[A-Za-z_][\w.]*)[^{;]*$")
_USING = re.compile(r"(?m)^[ \t]*using\s+(?:static\s+)?[\w.]+(?:\s*=\s*[\w.<>, ]+)?\s*;")


def entry(head: str, code: str, brace: int) -> Entry:
    """The C# method whose body the prompt leaves open: `[modifiers] <return type> <name>(<parameters>)`."""
    start = splitting.statement_start(code, brace)
    found = _SIGNATURE.fullmatch(code[start:brace].rstrip())
    if not found or "=>" in found.group("head"):
        raise SplitError("the prompt does not end with a C# method's signature and its '{'")
    words = found.group("head").split()
    while words and words[0] in _MODIFIERS:
        words.pop(0)
    returns = " ".join(words)
    if not returns or returns.startswith("["):  # none, or an attribute passk does not read
        raise SplitError(f"the function to complete has no plain return type: {found.group('head').strip()!r}")
    params = []
    for param in splitting.split_params(found.group("params").strip()):
        named = _PARAM.fullmatch(param)
        if not named or re.match(r"(?:ref|out|in|this)\b|\[", named.group("type")):
            raise SplitError(f"a parameter passk cannot pass on: {param!r} (ref, out, in, this or attributes)")
        params.append((named.group("name"), named.group("type").strip()))
    return Entry(start=start, brace=brace, name=found.group("name"), params=tuple(params), returns=returns,
                 signature=head[start:brace].strip())


def enclosing(head: str) -> str:
    """The dotted name of the type around the function to complete (namespaces, classes and structs)."""
    code = splitting.blank(head, SYNTAX)
    names = []
    for position in splitting.open_braces(code)[:-1]:
        previous = max(code.rfind("}", 0, position), code.rfind(";", 0, position), code.rfind("{", 0, position), 0)
        found = _CONTAINER.search(code, previous, position)
        if not found:
            raise SplitError("the function to complete is inside a block that is not a class's body")
        names.append(found.group("name"))
    if not names:
        raise SplitError("the function to complete is not in a class")
    return ".".join(names)


def usings(head: str) -> str:
    code = splitting.blank(head, SYNTAX)
    return "".join(head[found.start():found.end()].strip() + "\n" for found in _USING.finditer(code))


def split_problem(source: TestSource) -> splitting.Parts:
    return splitting.split(source.prompt, source.completion, source.tests, SYNTAX, entry)


def stub(parts: splitting.Parts) -> str:
    """The judge's method with the prompt's signature: it sends its arguments (typed by its own parameters) and
    returns what the candidate's method returned, rebuilt as its return type."""
    e = parts.entry
    arguments = ", ".join(name for name, _ in e.params)
    call = (f"Passk.Judge.Call<{'object' if e.returns == 'void' else e.returns}>"
            f"(System.Reflection.MethodBase.GetCurrentMethod(), new object[] {{{arguments}}})")
    return f"    {e.signature} {{\n        {'' if e.returns == 'void' else 'return '}{call};\n    }}\n"


def server(parts: splitting.Parts) -> str:
    """The candidate's PasskMain.cs: serves the function through PasskCall, which has the prompt's signature."""
    e = parts.entry
    owner = enclosing(parts.head)
    static = "static" in e.signature[:e.signature.index("(")].split()
    names = ", ".join(name for name, _ in e.params)
    params = e.signature[e.signature.index("(") + 1:e.signature.rindex(")")]
    target = f"{owner}.{e.name}" if static else f"new {owner}().{e.name}"
    returning = "" if e.returns == "void" else "return "
    return (usings(parts.head)
            + f"\nstatic class {ENTRY_CLASS} {{\n"
            + f'    static void Main() {{\n        Passk.Server.Serve(typeof({ENTRY_CLASS}), "{e.name}");\n    }}\n\n'
            + f"    static {e.returns} PasskCall({params}) {{\n        {returning}{target}({names});\n    }}\n}}\n")


def programs(source: TestSource) -> Programs:
    parts = split_problem(source)
    judge = (parts.before + "\n" + stub(parts) + parts.judge_tests
             + f"\n\nstatic class {JUDGE_CLASS} {{\n"
             + f"    static void Main(string[] args) {{\n        Passk.Judge.Run(typeof({JUDGE_CLASS}), args);\n    }}\n}}\n")
    return Programs(candidate={"main.cs": parts.candidate, f"{ENTRY_CLASS}.cs": server(parts)},
                    judge={"main.cs": judge})


def _mcs(*args: str) -> tuple[str, ...]:
    return ("mcs", "-nologo", "-r:System.Numerics.dll", "-out:main.exe", *args)


_PASSK = ("-d:DEBUG", f"-r:{PASSK_DLL}")
_MONO_PATH = f"MONO_PATH={RUNTIME_DIR}"

STDERR_VERDICTS = (
    (r"System\.OutOfMemoryException|Out of memory", "memory"),
    (r"DefaultTraceListener\.Fail", "failed"),
    (r"Unhandled Exception|error CS\d+|\[ERROR\] FATAL UNHANDLED EXCEPTION", "error"),
)

LANGUAGE = Language(
    name="csharp",
    title="C#",
    packages=("mono-mcs", "mono-runtime", "libmono-system-numerics4.0-cil"),
    image_setup=(
        f"mkdir -p {RUNTIME_DIR} && cd {RUNTIME_DIR} && mcs -nologo -target:library -r:System.Numerics.dll"
        f" -out:{PASSK_DLL} " + " ".join(f"/passk-context/csharp/{name}" for name in RUNTIME_SOURCES),
        f"chmod -R a+rX {RUNTIME_DIR}",
        # Manuals and the compiler's documentation: nothing a program reads.
        "rm -rf /usr/share/doc/mono* /usr/share/doc/libmono* /usr/share/man/man1/mono* /usr/share/man/man1/mcs*",
    ),
    context_files=tuple((f"sandbox/languages/csharp/{name}", f"csharp/{name}") for name in RUNTIME_SOURCES),
    source_file="main.cs",
    programs=programs,
    compile=_mcs("main.cs"),
    candidate_compile=_mcs(*_PASSK, f"-main:{ENTRY_CLASS}", "main.cs", f"{ENTRY_CLASS}.cs"),
    judge_compile=_mcs(*_PASSK, f"-main:{JUDGE_CLASS}", "main.cs"),
    run=("mono", "main.exe"),
    candidate_run=("env", _MONO_PATH, "mono", "main.exe"),
    judge_run=("env", _MONO_PATH, "mono", "main.exe"),
    version=("mono", "--version"),
    compile_time_limit_s=30.0,
    stderr_verdicts=STDERR_VERDICTS,
    aliases=("cs", "c#"),
    run_code_names=("csharp",),
    # MultiPL-E's evaluation/src/eval_cs.py: compiled with DEBUG and System.Numerics (a failed compile fails), run
    # with `mono` for 5 s with Debug's listener on stderr; the run's exit status is ignored (`|| true` here): it fails
    # on a failed Debug.Assert or an unhandled exception in stderr.
    reference_commands=("mcs -d:DEBUG -r:System.Numerics.dll -out:main.exe main.cs",
                        "MONO_TRACE_LISTENER=Console.Error mono main.exe || true"),
    reference_pass=ReferencePass(timeout_s=5.0,
                                 stderr_fails_on=("System.Diagnostics.DefaultTraceListener.Fail", "Unhandled Exception")),
)
