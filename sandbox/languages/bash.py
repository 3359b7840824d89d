"""Bash: GNU Bash 5.2, Debian bookworm's own shell (in every image already: the Bash image adds only passk's files).

A Bash function has no return value: it is called with strings (its arguments) and what it gives back is what it
prints on stdout and its exit status. MultiPL-E's Bash tests call it as `$(candidate "arg")` and compare the text
with `[[ ... = "expected" ]]` under `set -e`, so the first check that fails ends the program with status 1. Its
values (numbers, lists as space- or newline-separated words, CSV rows) are all such text.

Self-checking problems (MultiPL-E) run as two Bash processes (sandbox/languages/split.py, brace blocks: the tests'
first line is the `}` that closes the function):

- the candidate, `main.sh`: the original program up to the tests (the prompt and the model's completion, closed by
  the `}` the tests would have closed it with), then one line that serves the function to the judge
  (bash/server.sh, which `BASH_ENV` makes Bash source before any of the model's code);
- the judge, `main.sh` in a directory of its own, sourced by passk's judge runtime (bash/judge.sh): the prompt's
  code before the function to complete, a stub for that function (its name; its body calls the candidate's
  process), then the tests. They pass once they ran to their end; a failed check ends them with its status.

The call: the stub sends its arguments as strings; the server runs the function as the tests' command substitution
would (in a subshell, `set -e` off, so `exit` ends that call only) and answers with the function's stdout, every
byte, and its exit status (bash/wire.sh); the stub prints those bytes and returns that status, so `$(candidate ...)`
in the judge holds exactly the text it holds in one program (Bash itself drops NUL bytes and the trailing newlines
there, as it does in one program). Nothing the model wrote (an EXIT trap, `exit 0`, functions named like the
tests' own `candidate` and `run_test`) ever runs in the judge: in one process an EXIT trap of the model's can turn
the failed tests' status into 0, which is what MultiPL-E reads; here only the judge's report counts.

The runtime files are installed in the image under /opt/passk/bash.
"""

from __future__ import annotations

import re

from sandbox.languages import split as splitting
from sandbox.languages.base import Language, ReferencePass, RuntimeFiles
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource

RUNTIME_DIR = "/opt/passk/bash"
RUNTIME = RuntimeFiles("bash", ("wire.sh", "judge.sh", "server.sh"), RUNTIME_DIR)
# `#` comments and quoted strings (only the prompt and the tests, trusted texts, are read: MultiPL-E's hold no `$#`
# or `${#...}` outside comments).
SYNTAX = Syntax(line_comments=("#",), block_comment=None, quotes="\"'")
# `name() {`, `function name() {` or `function name {`.
_SIGNATURE = re.compile(r"(?:function\s+(?P<keyword>[A-Za-z_][\w:.-]*)\s*(?:\(\s*\))?|(?P<plain>[A-Za-z_][\w:.-]*)\s*\(\s*\))")


def entry(head: str, code: str, brace: int) -> Entry:
    """The function whose body the prompt leaves open."""
    start = splitting.statement_start(code, brace)
    line_start = code.rfind("\n", 0, brace) + 1
    start = max(start, line_start + len(code[line_start:brace]) - len(code[line_start:brace].lstrip()))
    found = _SIGNATURE.fullmatch(code[start:brace].rstrip())
    if found is None:
        raise SplitError(f"the prompt does not end inside a function: {head[start:brace].strip()!r}")
    name = found.group("keyword") or found.group("plain")
    return Entry(start=start, brace=brace, name=name, params=(), returns="", signature=head[start:brace].strip())


def stub(parts: splitting.Parts) -> str:
    """The judge's function: it sends its arguments and prints what the candidate's function printed, returning its
    exit status."""
    return f"{parts.entry.signature} {{\n    passk_call {parts.entry.name} \"$@\"\n}}\n"


def serve_statement(name: str) -> str:
    """What follows the candidate's program: its function served to the judge (bash/server.sh)."""
    return f"\npassk_serve {name}\n"


def split_problem(source: TestSource) -> splitting.Parts:
    return splitting.top_level(splitting.split(source.prompt, source.completion, source.tests, SYNTAX, entry))


def programs(source: TestSource) -> Programs:
    parts = split_problem(source)
    return splitting.served(parts, "main.sh", serve_statement(parts.entry.name), stub(parts))


STDERR_VERDICTS = (
    (r"cannot allocate \d+ bytes|Cannot allocate memory", "memory"),
    (r"(?m)^passk: a test failed", "failed"),
    (r"syntax error|unexpected end of file|bad substitution|unbound variable", "error"),
)

LANGUAGE = Language(
    name="bash",
    title="Bash",
    image_setup=(
        RUNTIME.install() + " && chmod -R a+rX /opt/passk",
        " && ".join(f"bash -n {path}" for path in RUNTIME.installed),
    ),
    context_files=RUNTIME.context_files,
    source_file="main.sh",
    programs=programs,
    run=("bash", "main.sh"),
    candidate_run=("env", f"BASH_ENV={RUNTIME_DIR}/server.sh", "bash", "main.sh"),
    judge_run=("bash", f"{RUNTIME_DIR}/judge.sh"),
    version=("bash", "-c", "echo \"bash $BASH_VERSION\""),
    stderr_verdicts=STDERR_VERDICTS,
    aliases=("sh", "shell"),
    run_code_names=("bash",),
    # MultiPL-E's evaluation/src/eval_sh.py: `bash <file>` with safe_subprocess's 15 s timeout; exit status 0 passes.
    reference_commands=("bash main.sh",),
    reference_pass=ReferencePass(timeout_s=15.0),
)
