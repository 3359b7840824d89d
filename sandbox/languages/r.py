"""R: R 4.2 from Debian bookworm (`r-base-core`, without its recommended packages). MultiPL-E's R tests are plain
R: `stopifnot(isTRUE(all.equal(candidate(...), expected)))` inside `test_humaneval()`, which the program calls last.

Self-checking problems (MultiPL-E) run as two R processes (sandbox/languages/split.py, brace blocks):

- the candidate, `main.R`: the original program up to the tests (the prompt and the model's completion, which
  closes the function itself), then one statement that serves the function to the judge (r/server.R, read by
  Rscript as the user profile before any of the model's code), placed where the tests began in one program;
- the judge, `main.R` in a directory of its own, run by passk's judge runtime (r/judge.R): the prompt's code
  before the function to complete, a stub for that function (the prompt's signature; its body calls the
  candidate's process), then the tests. The runtime runs them one top-level expression at a time, as Rscript
  does, and reports the pass once every one of them ran without an error.

Values cross as data (r/wire.R, the rule in sandbox/runtime/values.py). R has no scalars: `1` is a double vector
of length one, `c(1, 2)` one of length two, `list(...)` a list, and names are an attribute. So every value crosses
as what `identical()` compares: `a <typeof> A[elements]` (no names) or `a <typeof> M[name, element ...]` (names),
typeof one of logical, integer, double, character, list; NULL as n; NA as R holds it (n in logical and character
vectors, R's own bits in integer and double ones). `c(1L, 2L)` and `c(1, 2)` stay apart, and so do `list(1, 2)`
and `c(1, 2)`; any other attribute (a matrix's dim, a factor, a data frame) and any other type (a function, an
environment) crosses as X and fails the sample as an error. The arguments of a call cross as one named list: the
formals the tests passed, by name (those left out are left out, so the candidate's defaults apply), then those of
`...`; the server calls the function with do.call.

Nothing the model wrote (a redefined stopifnot, identical or all.equal, a .Last or a finalizer run on exit, a
quit() hook, `quit(status = 0)`) ever runs in the judge. In one process `quit(status = 0)` in the function ends the
tests with status 0 before they finish, which MultiPL-E passes; here only the judge's report does.

Descriptors: R cannot read or write a descriptor by its number, so wire.R opens /dev/fd/N as a fifo() connection
(unbuffered read(2) and write(2) on the same pipe) and closes the judge's calls descriptor with the parallel
package's closeFD once its connection holds it. Reopening checks the pipe's own mode, so PID 1 makes the report,
calls and replies pipes readable and writable by all (sandbox/runtime/native.py: only a process holding an end
reaches it through /proc/self/fd). A fifo() connection reads what is there, so wire.R reads in a loop; the judge
looks for unasked data through a second, non-blocking, connection on the replies. The runtime files are installed
in the image under /opt/passk/R.
"""

from __future__ import annotations

import re

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language, ReferencePass, RuntimeFiles
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource

RUNTIME_DIR = "/opt/passk/R"
RUNTIME = RuntimeFiles("r", ("wire.R", "judge.R", "server.R"), RUNTIME_DIR)
# R's comments (`#`) and quotes: strings in "" and '', names in ``; raw strings r"(...)" are not in MultiPL-E's
# prompts or tests.
SYNTAX = Syntax(line_comments=("#",), block_comment=None, quotes="\"'`")
# `name <- function(` (or `=`) at the start of a line: the function whose body the prompt leaves open.
_HEAD = re.compile(r"(?m)^[ \t]*(?P<name>[A-Za-z.][\w.]*)[ \t]*(?:<-|=)[ \t]*function[ \t]*\(")
_PARAM = re.compile(r"(?P<name>[A-Za-z.][\w.]*|\.\.\.)\s*(?:=.*)?", re.S)


def entry(head: str, code: str, brace: int) -> Entry:
    """The top-level function whose body the prompt leaves open: `name <- function(a, b = 1) {`."""
    heads = list(_HEAD.finditer(code, 0, brace))
    if not heads:
        raise SplitError("the prompt does not end with an R function's assignment and its '{'")
    found = heads[-1]
    close = code.rfind(")", found.end() - 1, brace)
    if close < 0 or code[close + 1:brace].strip():
        raise SplitError("the prompt does not end with an R function's signature and its '{'")
    params = []
    for param in splitting.split_params(head[found.end():close], brackets="()[]{}"):
        matched = _PARAM.fullmatch(param.strip())
        if matched is None or (matched.group("name") == "..." and "=" in param):
            raise SplitError(f"a parameter passk cannot pass on: {param.strip()!r}")
        params.append((matched.group("name"), ""))
    start = found.start() + len(found.group(0)) - len(found.group(0).lstrip())
    return Entry(start=start, brace=brace, name=found.group("name"), params=tuple(params), returns="",
                 signature=head[start:brace].strip())


def stub(parts: splitting.Parts) -> str:
    """The judge's function with the prompt's signature: it sends the arguments the tests passed (r/judge.R's
    arguments()) and returns the value the candidate's function returned."""
    e = parts.entry
    formals = ", ".join(f'"{name}"' for name, _ in e.params)
    return (f"{e.signature} {{\n  PasskJudge$call({e.name!r}, PasskJudge$arguments(environment(), c({formals})))\n"
            "}\n")


def serve_statement(name: str) -> str:
    """What follows the candidate's program: its function served to the judge (r/server.R)."""
    return f"\nPasskServer$serve({name!r}, {name})\n"


def split_problem(source: TestSource) -> splitting.Parts:
    return splitting.top_level(splitting.split(source.prompt, source.completion, source.tests, SYNTAX, entry))


def programs(source: TestSource) -> Programs:
    parts = split_problem(source)
    return splitting.served(parts, "main.R", serve_statement(parts.entry.name), stub(parts))


STDERR_VERDICTS = (
    (r"cannot allocate (?:vector|memory)|memory exhausted|vector memory limit", "memory"),
    # A failed stopifnot, as R reports it at the top level (r/judge.R reports the tests' the same way).
    (r"(?m)(?:is not TRUE|are not all TRUE)$", "failed"),
    # Any other error, a syntax error too: "Error in f() : ...", "Error: unexpected '}' in ...".
    (r"(?m)^Error", "error"),
)

LANGUAGE = Language(
    name="r",
    title="R",
    packages=("r-base-core",),
    image_setup=(
        RUNTIME.install() + " && chmod -R a+rX /opt/passk",
        # R's manuals and its packages' HTML help and vignettes: nothing a program reads.
        "rm -rf /usr/share/R/doc /usr/lib/R/library/*/doc /usr/lib/R/library/*/html /usr/share/doc/r-base-core",
        # The runtime parses, and closeFD is where wire.R expects it.
        f"Rscript -e 'for (f in dir(\"{RUNTIME_DIR}\", full.names = TRUE)) parse(f); "
        "stopifnot(is.function(parallel:::closeFD))'",
    ),
    context_files=RUNTIME.context_files,
    source_file="main.R",
    programs=programs,
    run=("Rscript", "main.R"),
    candidate_run=("env", f"R_PROFILE_USER={RUNTIME_DIR}/server.R", "Rscript", "main.R"),
    judge_run=("Rscript", f"{RUNTIME_DIR}/judge.R"),
    judge_memory_bytes=64 * MB,
    version=("Rscript", "--version"),
    stderr_verdicts=STDERR_VERDICTS,
    run_code_names=("R",),
    # MultiPL-E's evaluation/src/eval_r.py: `Rscript <file>` under safe_subprocess's default 15 s; exit status 0
    # passes.
    reference_commands=("Rscript main.R",),
    reference_pass=ReferencePass(timeout_s=15.0),
)
