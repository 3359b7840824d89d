"""Haskell: GHC 9.0 from Debian bookworm (`ghc`), whose `runghc` MultiPL-E runs programs with. MultiPL-E's Haskell
tests are a `main` of `if candidate ... == expected then pure () else error "assertion failed"` lines.

Programs are compiled with `ghc -O0` (as runghc interprets them: unoptimised), linked to the shared Haskell
libraries (`-dynamic`: a fraction of the static link's time). Self-checking problems (MultiPL-E) run as two programs:

- the candidate: `Candidate.hs`, the original program up to the tests (the prompt and the model's completion) as a
  module of its own, and `Main.hs`, passk's server for it: `PasskWire.serve` with the function, whose arguments and
  result the type class `PasskWire.Wire` decodes and encodes by the types GHC infers from the prompt's signature
  (the whole result is evaluated: an `error` in it crosses as its exception's type and message). Nothing the model
  defines (a `main`, an instance, a shadowed Prelude name) changes what the server does;
- the judge, `Main.hs` (the same for every sample of a problem: compiled once per container): the prompt's code
  before the function to complete, a stub with the prompt's signature (its body calls the candidate's process), the
  tests, and `passkMain = main >> PasskWire.pass` as the program's entry (`-main-is`): the pass is reported once the
  tests' `main` returned. A problem whose own code does not compile gets a judge that reports so
  (haskell/build-judge.sh).

Values cross by type (haskell/PasskWire.hs, the rule in sandbox/runtime/values.py): Int, Integer, Double, Float,
Bool, Char, String, (), lists, Maybe and tuples. Nothing the model wrote ever runs in the judge.
"""

from __future__ import annotations

import re

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language, ReferencePass, own_heap
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource

ROOT = "/opt/passk/haskell"
BUILD = f"{ROOT}/build.sh"
BUILD_JUDGE = f"{ROOT}/build-judge.sh"
# Haskell's comments: `--` lines and nested `{- -}` blocks; strings in "". A `'` is a character literal or part of a
# name (x'), never a brace: not read as a quote.
SYNTAX = Syntax(line_comments=("--",), block_comment=("{-", "-}"), nested_block_comments=True, quotes='"')
# The function to complete: its signature `name :: type` at the start of a line, then its equation's head, which
# ends the prompt with `=`.
_SIGNATURE = re.compile(r"(?m)^(?P<name>[a-z_][\w']*)[ \t]*::(?P<type>[^\n]*(?:\n[ \t]+[^\n]*)*)\n")
# The types the wire carries (haskell/PasskWire.hs), and the punctuation of a type.
_CARRIED = frozenset(("Int", "Integer", "Double", "Float", "Bool", "Char", "String", "Maybe"))
_TYPE_TOKEN = re.compile(r"\s*(?:(?P<word>[A-Za-z_][\w'.]*)|(?P<punct>->|[()\[\],]))")


def arity(name: str, kind: str) -> int:
    """The number of arguments of a function of type `kind` (SplitError unless the wire carries every type)."""
    depth, arrows, at = 0, 0, 0
    text = kind.strip()
    while at < len(text):
        found = _TYPE_TOKEN.match(text, at)
        if not found:
            raise SplitError(f"cannot read the type of {name}: {text!r}")
        word, punct = found.group("word"), found.group("punct")
        if word is not None and word not in _CARRIED:
            what = "a type variable" if word[0].islower() else f"{word!r}, a type passk does not carry"
            raise SplitError(f"the type of {name}, {text!r}, uses {what} between the tests' process and the program's")
        if punct in ("(", "["):
            depth += 1
        elif punct in (")", "]"):
            depth -= 1
        elif punct == "->":
            if depth:
                raise SplitError(f"{name} takes or returns a function ({text!r}): passk cannot carry functions")
            arrows += 1
        at = found.end()
    if "=>" in text or depth:
        raise SplitError(f"cannot read the type of {name}: {text!r}")
    return arrows


def entry(head: str) -> tuple[Entry, int]:
    """The prompt's function to complete (its signature, then the head of its equation, `name args =`)."""
    code = splitting.blank(head, SYNTAX)
    if not code.rstrip().endswith("="):
        raise SplitError("the prompt does not end with the head of the function's equation (`name args =`)")
    if re.search(r"(?m)^module\b", code) or head.lstrip().startswith("{-#"):
        raise SplitError("the prompt has a module header or pragmas: passk places its own import first")
    signatures = list(_SIGNATURE.finditer(code))
    if not signatures:
        raise SplitError("the prompt has no type signature for the function to complete")
    found = signatures[-1]
    name = found.group("name")
    equation = code[found.end():].strip()
    if not re.fullmatch(rf"{re.escape(name)}\b[^\n=]*=", equation):
        raise SplitError(f"the prompt does not end with the equation of {name}, after its signature")
    kind = " ".join(head[found.start("type"):found.end("type")].split())
    count = arity(name, kind)
    e = Entry(start=found.start(), brace=len(code.rstrip()) - 1, name=name, params=(), returns=kind,
              signature=f"{name} :: {kind}")
    return e, count


_JUDGE_START = "import qualified PasskWire\n"
_JUDGE_END = "\n\npasskMain :: IO ()\npasskMain = main >> PasskWire.pass\n"


def judge_program(head: str, tests: str, e: Entry, count: int) -> tuple[str, str]:
    """(Main.hs of the judge, problem.lines: the lines of it that are the problem's own, "first last" a line)."""
    before = head[:e.start]
    params = "".join(f" passk{index}" for index in range(count))
    args = ", ".join(f"PasskWire.arg passk{index}" for index in range(count))
    stub = f"{e.signature}\n{e.name}{params} = PasskWire.call \"{e.name}\" [{args}]\n"
    first = _JUDGE_START.count("\n") + 1
    signature_line = first + before.count("\n")
    tests_first = signature_line + stub.count("\n")
    judge = _JUDGE_START + before + stub + tests + _JUDGE_END
    own = [(first, signature_line), (tests_first, tests_first + tests.count("\n"))]
    return judge, "".join(f"{a} {b}\n" for a, b in own)


def server_program(e: Entry, count: int) -> str:
    """passk's server for the candidate's `Candidate.<function>` (Main.hs)."""
    return (
        "-- passk's server for this program (sandbox/languages/haskell.py): it answers the tests' calls.\n"
        "import qualified Candidate\nimport qualified PasskWire\n\nmain :: IO ()\n"
        f'main = PasskWire.serve [("{e.name}", PasskWire.handler {count} Candidate.{e.name})]\n'
    )


def programs(source: TestSource) -> Programs:
    """The judge's and the candidate's files for a MultiPL-E problem and a completion."""
    if source.format != "multipl-e":
        raise SplitError(f"Haskell runs MultiPL-E's self-checking problems, not {source.format}'s")
    e, count = entry(source.prompt)
    judge, lines = judge_program(source.prompt, source.tests, e, count)
    return Programs(candidate={"Candidate.hs": "module Candidate where\n" + source.prompt + source.completion + "\n",
                               "Main.hs": server_program(e, count)},
                    judge={"Main.hs": judge, "problem.lines": lines})


def _heap(memory_bytes: int) -> tuple[str, ...]:
    # GHC's runtime reserves a terabyte of address space up front (no RLIMIT_AS); its heap is capped here, and the
    # container's memory cgroup holds the rest.
    return ("+RTS", f"-M{memory_bytes // MB}m", "-RTS")


_GHC = ("ghc", "-O0", "-v0", "-dynamic", "-rtsopts", "-outputdir", "build")
_WIRE = ("-i" + ROOT,)

LANGUAGE = Language(
    name="haskell",
    title="Haskell",
    packages=("ghc",),
    context_files=(
        ("sandbox/languages/haskell/PasskWire.hs", "haskell/PasskWire.hs"),
        ("sandbox/languages/haskell/build.sh", "haskell/build.sh"),
        ("sandbox/languages/haskell/build-judge.sh", "haskell/build-judge.sh"),
    ),
    image_setup=(
        f"mkdir -p {ROOT} && cp /passk-context/haskell/*.hs /passk-context/haskell/*.sh {ROOT}/",
        # passk's wire, compiled once with the programs' own flags (haskell/build.sh puts it in each build): a
        # sample's build compiles only its own modules.
        f"cd {ROOT} && {' '.join(_GHC)} -c PasskWire.hs",
        # GHC's documentation and its static libraries (~300 MB): programs link to the shared ones (-dynamic), and
        # runghc loads those too.
        "rm -rf /usr/share/doc/ghc* /usr/share/doc/libghc* && find /usr/lib/ghc -name '*.a' -delete",
        f"chmod -R a+rX,go-w {ROOT}",
        # The compiler and runghc work as passk and the harness run them.
        "cd /tmp && printf 'main :: IO ()\\nmain = print (1 + 1 :: Int)\\n' > t.hs && runghc t.hs"
        f" && printf 'import qualified PasskWire\\nmain :: IO ()\\nmain = print (PasskWire.encodeValue True)\\n' > Main.hs"
        f" && sh {BUILD} {' '.join(_GHC[1:])} -i{ROOT} -o t Main.hs && ./t && rm -rf t t.hs Main.hs build",
    ),
    source_file="main.hs",
    programs=programs,
    compile=(*_GHC, "-o", "main", "main.hs"),
    candidate_compile=("sh", BUILD, *_GHC[1:], *_WIRE, "-o", "main", "Main.hs", "Candidate.hs"),
    judge_compile=("sh", BUILD_JUDGE, *_GHC[1:], *_WIRE, "-main-is", "passkMain"),
    judge_run=("./judge",),
    run=("./main",),
    **own_heap(_heap, pids=64),
    judge_memory_bytes=64 * MB,
    compile_time_limit_s=30.0,
    compile_memory_bytes=2048 * MB,
    version=("ghc", "--version"),
    stderr_verdicts=(
        (r"heap overflow|Heap exhausted", "memory"),
        (r"(?m)^\S+: assertion failed", "failed"),
        (r"(?m)^\S+: ", "error"),
    ),
    aliases=("hs",),
    # SandboxFusion has no Haskell: /run_code takes it under passk's own name.
    run_code_names=("haskell",),
    # MultiPL-E's evaluation/src/eval_hs.py: `runghc <file>` under safe_subprocess's default 15 s; exit status 0
    # passes.
    reference_commands=("runghc main.hs",),
    reference_pass=ReferencePass(timeout_s=15.0),
    notes="ghc -O0 -dynamic against passk's precompiled PasskWire; the judge's stub has the prompt's signature, the "
          "candidate's server decodes and encodes by the types GHC infers from it",
)
