"""Racket: Racket 8.7 (CS) from Debian bookworm (`racket`), with rackunit, the library MultiPL-E's tests use. A
MultiPL-E Racket prompt is a `#lang racket` module ending with the function's open `(define (name params)`; the
completion closes it; the tests are top-level forms whose checks run as the module is instantiated.

Self-checking problems (MultiPL-E) run as two Racket modules (sandbox/languages/split.py, `split_sexp`):

- the candidate, `main.rkt`: the original program up to the tests (the prompt and the model's completion), then the
  forms that serve the function to the judge (racket/server.rkt), placed where the tests began in one module;
- the judge, `main.rkt` in a directory of its own, run by passk's judge runtime (racket/judge.rkt): the prompt's
  code before the function to complete, a stub for that function (the prompt's signature; its body calls the
  candidate's process through racket/call.rkt), then the tests. The runtime notes every failed check (rackunit
  reports one outside a test case on stderr and goes on) and reports the pass once the module ran to its end with
  none.

Values cross as data (racket/wire.rkt, the rule in sandbox/runtime/values.py), each with its own type: nothing the
model wrote (a redefined check, an exit handler, `(exit 0)`) ever runs in the judge. MultiPL-E passes a run with
exit status 0 and nothing on stderr, so `(exit 0)` in the function passes there; here only the judge's report does.

The runtime files are installed in the image under /opt/passk/racket and compiled there (raco make).
"""

from __future__ import annotations

import re

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language, ReferencePass, RuntimeFiles
from sandbox.languages.split import Programs, SplitError, Syntax, TestSource

RUNTIME_DIR = "/opt/passk/racket"
RUNTIME = RuntimeFiles("racket", ("wire.rkt", "server.rkt", "call.rkt", "judge.rkt"), RUNTIME_DIR)
# Racket's comments (`;` and `#| |#`) and strings ("..."); `'` quotes data, it opens no literal.
SYNTAX = Syntax(line_comments=(";",), block_comment=("#|", "|#"), nested_block_comments=True, quotes='"')
# `(define (name params)`: the form the prompt leaves open.
SIGNATURE = re.compile(r"\(define\s+\((?P<name>[^\s()\[\]{}\"';#|]+)(?P<params>[^()\[\]{}]*)\)\s*")
_PARAM = re.compile(r"[^\s()\[\]{}\"',`;#|.][^\s()\[\]{}\"',`;#|]*")


def split_problem(source: TestSource) -> splitting.Parts:
    parts = splitting.split_sexp(source.prompt, source.completion, source.tests, SYNTAX, SIGNATURE)
    for param, _ in parts.entry.params:
        if not _PARAM.fullmatch(param):
            raise SplitError(f"a parameter passk cannot pass on: {param!r}")
    return parts


def stub(parts: splitting.Parts) -> str:
    """The judge's function with the prompt's signature: it sends its arguments and returns what the candidate's
    function returned."""
    entry = parts.entry
    arguments = " ".join(param for param, _ in entry.params)
    return (f"(require (only-in (file \"{RUNTIME_DIR}/call.rkt\") passk-call))\n"
            f"{entry.signature}\n  (passk-call \"{entry.name}\" (list {arguments})))\n")


def serve_statement(name: str) -> str:
    """What follows the candidate's program: its function served to the judge (racket/server.rkt)."""
    return f"\n(require (only-in (file \"{RUNTIME_DIR}/server.rkt\") passk-serve))\n(passk-serve {name} \"{name}\")\n"


def programs(source: TestSource) -> Programs:
    parts = split_problem(source)
    return splitting.served(parts, "main.rkt", serve_statement(parts.entry.name), stub(parts))


STDERR_VERDICTS = (
    (r"out of memory", "memory"),
    # A failed check: the judge's line for the first (racket/judge.rkt), then rackunit's report.
    (r"(?m)^FAILURE\b", "failed"),
    # A check that raised (the judge's line, rackunit's report); an uncaught error of the tests (the judge's line) or
    # of a program (Racket's report: its context lines, or a reader's or the expander's error).
    (r"(?m)^ERROR\b|^uncaught |^\s*context\.\.\.:|read-syntax|unbound identifier|: bad syntax", "error"),
)

LANGUAGE = Language(
    name="racket",
    title="Racket",
    packages=("racket",),
    image_setup=(
        RUNTIME.install() + " && raco make -v " + " ".join(RUNTIME.installed)
        + " && chmod -R a+rX /opt/passk",
        "rm -rf /usr/share/doc/* /usr/share/racket/doc /usr/share/racket/pkgs/*/doc /usr/share/racket/pkgs/*-doc"
        " /usr/share/man",
    ),
    context_files=RUNTIME.context_files,
    source_file="main.rkt",
    programs=programs,
    run=("racket", "main.rkt"),
    judge_run=("racket", f"{RUNTIME_DIR}/judge.rkt"),
    # The judge holds rackunit and `#lang racket`'s expander on top of Racket's own.
    judge_memory_bytes=96 * MB,
    version=("racket", "-I", "racket/base", "-e", '(displayln (string-append "Racket " (version) " (" (symbol->string (system-type (quote vm))) ")"))'),
    stderr_verdicts=STDERR_VERDICTS,
    aliases=("rkt",),
    run_code_names=("racket",),
    # MultiPL-E's evaluation/src/eval_racket.py: `racket <file>` under safe_subprocess's default 15 s; a pass is exit
    # status 0 with nothing on stderr (rackunit's failed checks exit with 0).
    reference_commands=("racket main.rkt",),
    reference_pass=ReferencePass(quiet_stderr=True, timeout_s=15.0),
)
