"""Perl: Perl 5.36 from Debian bookworm (`perl`), with Test::Deep (`libtest-deep-perl`), whose `eq_deeply` MultiPL-E's
tests use.

Self-checking problems (MultiPL-E) run as two Perl processes (sandbox/languages/split.py, brace blocks):

- the candidate, `main.pl`: the original program up to the tests (the prompt and the model's completion, which
  closes the sub itself), then one statement that serves the sub to the judge (perl/PasskServer.pm, loaded with
  `-M` before any of the model's code is compiled), placed where the tests began in one program;
- the judge, `main.pl` in a directory of its own, run by passk's judge runtime (perl/judge.pl): the prompt's code
  before the sub to complete, a stub for that sub (the prompt's `sub name`; its body calls the candidate's
  process), then the tests. The runtime runs them with `do`: they pass once they ran to their end; MultiPL-E's
  checks end them with `exit 1` at the first failure, which the runtime turns into a failed test.

Values cross as data (perl/PasskWire.pm, the rule in sandbox/runtime/values.py), each as what Perl knows it to be
(undef, a boolean, a number made as an integer or as a float, a string, an array or hash reference): nothing the
model wrote (a redefined `eq_deeply`, an END block, `exit 0`, a `$SIG{__DIE__}` hook, an overloaded object) ever
runs in the judge. Perl gives every call a context: the stub sends its own (list, scalar or void) as the call's
first value, so the sub runs in the context the tests called it in, and a list comes back whole. In one process a
model's `exit 0` (or an END block setting `$?`) decides what MultiPL-E sees; here only the judge's report does.

The runtime files are installed in the image under /opt/passk/perl.
"""

from __future__ import annotations

import re

from sandbox.languages import split as splitting
from sandbox.languages.base import Language, ReferencePass, RuntimeFiles
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource

RUNTIME_DIR = "/opt/passk/perl"
RUNTIME = RuntimeFiles("perl", ("PasskWire.pm", "PasskServer.pm", "judge.pl"), RUNTIME_DIR)
# `#` comments and quoted strings. (POD and `$#array` do not occur in MultiPL-E's prompts and tests; only those
# trusted texts are read.)
SYNTAX = Syntax(line_comments=("#",), block_comment=None, quotes="\"'")
# `sub name`, with a prototype or signature and attributes as written, before the body's `{`.
_SIGNATURE = re.compile(r"sub\s+(?P<name>[A-Za-z_]\w*(?:::\w+)*)\s*(?P<params>\([^)]*\))?\s*(?::\s*\w+(?:\([^)]*\))?\s*)*")


def entry(head: str, code: str, brace: int) -> Entry:
    """The sub whose body the prompt leaves open: `sub name {`."""
    start = splitting.statement_start(code, brace)
    found = _SIGNATURE.fullmatch(code[start:brace].rstrip())
    if found is None:
        raise SplitError(f"the prompt does not end inside a sub: {head[start:brace].strip()!r}")
    return Entry(start=start, brace=brace, name=found.group("name"), params=(), returns="",
                 signature=head[start:brace].strip())


def stub(parts: splitting.Parts) -> str:
    """The judge's sub with the prompt's signature: it sends its context and its arguments, as the tests passed
    them, and returns what the candidate's sub returned in that context."""
    name = parts.entry.name
    return f"{parts.entry.signature} {{\n    return PasskJudge::call('{name}', @_);\n}}\n"


def serve_statement(name: str) -> str:
    """What follows the candidate's program: its sub served to the judge (perl/PasskServer.pm)."""
    return f"\n;PasskServer::serve(\\&{name});\n"


def split_problem(source: TestSource) -> splitting.Parts:
    parts = splitting.split(source.prompt, source.completion, source.tests, SYNTAX, entry)
    if parts.open_blocks:
        raise SplitError("the sub to complete is nested in another block; only top-level subs are served")
    return parts


def programs(source: TestSource) -> Programs:
    parts = split_problem(source)
    return splitting.served(parts, "main.pl", serve_statement(parts.entry.name), stub(parts))


STDERR_VERDICTS = (
    (r"Out of memory", "memory"),
    (r"(?m)^passk: a test failed", "failed"),
    # Perl's report of a `die` (and of a compile error) names where: "... at main.pl line 3."
    (r"(?m)syntax error|compilation errors| at \S+ line \d+(?:, <[^>]*> (?:line|chunk) \d+)?\.$", "error"),
)

LANGUAGE = Language(
    name="perl",
    title="Perl",
    packages=("perl", "libtest-deep-perl"),
    image_setup=(
        RUNTIME.install() + " && chmod -R a+rX /opt/passk",
        f"perl -I{RUNTIME_DIR} -MPasskServer -MTest::Deep -c {RUNTIME_DIR}/judge.pl",
    ),
    context_files=RUNTIME.context_files,
    source_file="main.pl",
    programs=programs,
    run=("perl", "main.pl"),
    candidate_run=("perl", f"-I{RUNTIME_DIR}", "-MPasskServer", "main.pl"),
    judge_run=("perl", f"{RUNTIME_DIR}/judge.pl"),
    version=("perl", "-e", "printf qq(perl %vd\\n), $^V"),
    stderr_verdicts=STDERR_VERDICTS,
    aliases=("pl",),
    run_code_names=("perl",),
    # MultiPL-E's evaluation/src/eval_pl.py: `perl <file>` with safe_subprocess's 15 s timeout and 2048 bytes of
    # each output kept; exit status 0 passes unless "ERROR" is in stdout or stderr.
    reference_commands=("perl main.pl",),
    reference_pass=ReferencePass(fails_on=("ERROR",), timeout_s=15.0, captured_bytes=2048),
)
