"""Elixir: Elixir 1.14 on Erlang/OTP 25 from Debian bookworm (`elixir`), with ExUnit, the framework MultiPL-E's
tests use. MultiPL-E's Elixir prompt opens `defmodule HumanEval do`, defines `candidate` to call the function to
complete, and ends with that function's `def name(params) do`; the completion closes the function and the module.

Self-checking problems (MultiPL-E) run as two Elixir programs (sandbox/languages/split.py, blocks closed by `end`):

- the candidate, `main.exs`: the original program up to the tests (the prompt and the model's completion), then
  one statement that serves the function to the judge (elixir/server.ex), placed where the tests began in one
  program;
- the judge, `main.exs` in a directory of its own, loaded by passk's judge runtime (elixir/judge.ex): the prompt's
  code before the function to complete, a stub for that function (the prompt's signature; its body calls the
  candidate's process), the `end` of the prompt's module, then the tests. The runtime turns ExUnit's run at exit
  off, runs the tests itself and reports the pass once every test ran and passed.

Values cross as data (elixir/wire.ex, the rule in sandbox/runtime/values.py), each with its own type: nothing the
model wrote (a redefined module, an `at_exit` hook, `System.halt`) ever runs in the judge. In one program ExUnit
runs the tests when the script ends, so `System.halt(0)` anywhere in the model's code ends it with status 0 before
any test ran, which MultiPL-E passes; here only the judge's report does.

The runtime: the three files are compiled when the image is built (elixirc) into /opt/passk/elixir/ebin, on both
programs' code path. The BEAM reserves far more address space than it uses (its JIT maps its code twice, its
literal area is a 1 GB reservation), so it runs without RLIMIT_AS: the container's memory cgroup holds memory,
and +hmax caps each Erlang process's heap at the job's memory (the process is killed, the runtime exits and
prints `** (EXIT from #PID<...>) killed`). One scheduler of each kind: a sandbox has a core or less.
"""

from __future__ import annotations

import re

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language, ReferencePass, RuntimeFiles, own_heap
from sandbox.languages.split import Keywords, Programs, SplitError, Syntax, TestSource

RUNTIME_DIR = "/opt/passk/elixir"
EBIN = f"{RUNTIME_DIR}/ebin"
# Compiled into EBIN at the image build, not copied.
RUNTIME = RuntimeFiles("elixir", ("wire.ex", "server.ex", "judge.ex"), EBIN)
SYNTAX = Syntax(line_comments=("#",), block_comment=None, quotes="\"'")
# `def name(params) do` as the prompt's last line of code; blocks open with a `do` that ends its line.
FAMILY = Keywords(
    syntax=SYNTAX,
    signature=re.compile(r"\s*def\s+(?P<name>[a-z_]\w*[?!]?)\s*\((?P<params>.*)\)\s+do\s*"),
    opens=re.compile(r"\bdo\s*$"),
)
_MODULE = re.compile(r"(?m)^\s*defmodule\s+(?P<name>[A-Z]\w*(?:\.[A-Z]\w*)*)\s+do\s*$")
# A parameter passed on by its name: `a`, or `a \\ default`.
_PARAM = re.compile(r"(?P<name>[a-z_]\w*)\s*(?:\\\\.*)?", re.S)


def _argument(param: str) -> str:
    found = _PARAM.fullmatch(param.strip())
    if found is None:
        raise SplitError(f"a parameter passk cannot pass on: {param.strip()!r} (a pattern)")
    return found.group("name")


def _module(parts: splitting.Parts) -> str:
    """The module around the function to complete (MultiPL-E's `HumanEval`)."""
    modules = list(_MODULE.finditer(splitting.blank(parts.before, SYNTAX)))
    if parts.open_blocks != 1 or not modules:
        raise SplitError("the function to complete is not directly inside a module; only a module's functions are served")
    return modules[-1].group("name")


def stub(parts: splitting.Parts) -> str:
    """The judge's function with the prompt's signature: it sends its arguments, as the tests passed them, and
    returns what the candidate's function returned."""
    entry = parts.entry
    arguments = ", ".join(_argument(param) for param, _ in entry.params)
    return f"  {entry.signature}\n    PasskJudge.call(\"{entry.name}\", [{arguments}])\n  end\n"


def serve_statement(module: str, name: str) -> str:
    """What follows the candidate's program: its function served to the judge (elixir/server.ex)."""
    return f"\nPasskServer.serve({module}, :{name})\n"


def split_problem(source: TestSource) -> splitting.Parts:
    parts = splitting.split_keywords(source.prompt, source.completion, source.tests, FAMILY)
    _module(parts)
    for param, _ in parts.entry.params:
        _argument(param)
    return parts


def programs(source: TestSource) -> Programs:
    parts = split_problem(source)
    return splitting.served(parts, "main.exs", serve_statement(_module(parts), parts.entry.name), stub(parts),
                            judge_end="")


def _heap_cap(memory_bytes: int) -> tuple[str, ...]:
    """Each Erlang process's heap at most the job's memory, in words (+hmax; the process is killed past it)."""
    return ("--erl", f"+hmax {memory_bytes // 8}")


STDERR_VERDICTS = (
    # A process killed at +hmax ends the runtime with this line; the runtime's own allocator failing prints the other.
    (r"\*\* \(EXIT from #PID<[\d.]+>\) killed|Cannot allocate \d+ bytes of memory", "memory"),
    # The judge's line for a failed assertion (judge.ex).
    (r"(?m)^ExUnit\.AssertionError\b", "failed"),
    # An uncaught exception or a compile error: "** (RuntimeError) boom", "** (SyntaxError) main.exs:3:...".
    (r"(?m)^\*\* \(|^[A-Z]\w*(?:\.[A-Z]\w*)*(?:Error|Exception)\b", "error"),
)

LANGUAGE = Language(
    name="elixir",
    title="Elixir",
    packages=("elixir",),
    image_setup=(
        f"mkdir -p {EBIN} && elixirc --ignore-module-conflict -o {EBIN} "
        + " ".join(RUNTIME.in_build) + " && chmod -R a+rX /opt/passk",
        "rm -rf /usr/share/doc/* /usr/lib/erlang/man /usr/lib/erlang/lib/*/doc /usr/lib/erlang/lib/*/src",
    ),
    context_files=RUNTIME.context_files,
    source_file="main.exs",
    programs=programs,
    run=("elixir", "main.exs"),
    candidate_run=("elixir", "-pa", EBIN, "main.exs"),
    judge_run=("elixir", "-pa", EBIN, "-e", "PasskJudge.main()"),
    # The judge holds ExUnit and the compiler it loads the tests with, on top of the runtime's own ~40 MB.
    judge_memory_bytes=96 * MB,
    version=("elixir", "-e", 'IO.puts("Elixir " <> System.version())'),
    **own_heap(_heap_cap),
    stderr_verdicts=STDERR_VERDICTS,
    aliases=("ex", "exs"),
    # SandboxFusion has no Elixir: /run_code takes the language's own name.
    run_code_names=("elixir",),
    # MultiPL-E's evaluation/src/eval_elixir.py: `elixir <file>` with a 5 s timeout; exit status 0 passes.
    reference_commands=("elixir main.exs",),
    reference_pass=ReferencePass(timeout_s=5.0),
    extra={"env": {
        "ELIXIR_ERL_OPTIONS": "+S 1:1 +SDcpu 1:1 +SDio 1 +A 1 +sbwt none +sbwtdcpu none +sbwtdio none",
        "ERL_CRASH_DUMP_SECONDS": "0",
    }},
)
