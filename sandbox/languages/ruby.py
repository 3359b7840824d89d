"""Ruby: Ruby 3.1 from Debian bookworm (`ruby`), with test/unit (`ruby-test-unit`), the framework MultiPL-E's tests use.

Self-checking problems (MultiPL-E) run as two Ruby processes (sandbox/languages/split.py, blocks closed by `end`):

- the candidate, `main.rb`: the original program up to the tests (the prompt and the model's completion, which
  closes the function itself), then one statement that serves the function to the judge (ruby/server.rb, loaded
  with `-r` before any of the model's code), placed where the tests began in one program;
- the judge, `main.rb` in a directory of its own, loaded by passk's judge runtime (ruby/judge.rb): the prompt's
  code before the function to complete, a stub for that function (the prompt's signature; its body calls the
  candidate's process), then the tests. The runtime turns test/unit's automatic run off, runs the test cases
  itself and reports the pass once every test ran and passed.

Values cross as data (ruby/wire.rb, the rule in sandbox/runtime/values.py), each with its own class: nothing the
model wrote (a redefined `==` or `assert_equal`, an `at_exit` hook, `exit!`, a method_missing) ever runs in the
judge. In one process, test/unit runs the tests from an `at_exit` hook, so a model's own exit status or exit hook
decides what MultiPL-E sees (`exit 0` in the function passes there); here only the judge's report does.

The runtime files are installed in the image under /opt/passk/ruby.
"""

from __future__ import annotations

import re

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language, ReferencePass, RuntimeFiles
from sandbox.languages.split import Keywords, Programs, SplitError, Syntax, TestSource

RUNTIME_DIR = "/opt/passk/ruby"
RUNTIME = RuntimeFiles("ruby", ("wire.rb", "judge.rb", "server.rb"), RUNTIME_DIR)
SYNTAX = Syntax(line_comments=("#",), block_comment=("=begin", "=end"), quotes="\"'")
# `def name(params)` or `def name`, as the prompt's last line of code.
FAMILY = Keywords(
    syntax=SYNTAX,
    signature=re.compile(r"\s*def\s+(?P<name>[A-Za-z_]\w*[?!]?)\s*(?:\((?P<params>.*)\))?\s*"),
    opens=re.compile(r"^\s*(?:class|module|def)\b"),
)
_PARAM = re.compile(r"(?P<splat>\*)?(?P<name>[A-Za-z_]\w*)\s*(?:=.*)?", re.S)


def _argument(param: str) -> str:
    """How the stub passes one parameter on: `a` and `a = 1` as `a`, `*rest` as `*rest`."""
    found = _PARAM.fullmatch(param.strip())
    if found is None:
        raise SplitError(f"a parameter passk cannot pass on: {param.strip()!r} (keyword, block or pattern parameters)")
    return ("*" if found.group("splat") else "") + found.group("name")


def stub(parts: splitting.Parts) -> str:
    """The judge's method with the prompt's signature: it sends its arguments, as the tests passed them, and
    returns what the candidate's method returned."""
    entry = parts.entry
    arguments = ", ".join(_argument(param) for param, _ in entry.params)
    return f"{entry.signature}\n  ::PasskJudge.call({entry.name!r}, [{arguments}])\nend\n"


def serve_statement(name: str) -> str:
    """What follows the candidate's program: its method served to the judge (ruby/server.rb)."""
    return f"\n;::PasskServer.serve(:{name})\n"


def split_problem(source: TestSource) -> splitting.Parts:
    parts = splitting.split_keywords(source.prompt, source.completion, source.tests, FAMILY)
    if parts.open_blocks:
        raise SplitError("the method to complete is nested in a class or module; only top-level methods are served")
    for param, _ in parts.entry.params:
        _argument(param)
    return parts


def programs(source: TestSource) -> Programs:
    parts = split_problem(source)
    return splitting.served(parts, "main.rb", serve_statement(parts.entry.name), stub(parts), judge_end="")


STDERR_VERDICTS = (
    (r"NoMemoryError|failed to allocate memory", "memory"),
    (r"(?m)^Test::Unit::AssertionFailedError\b", "failed"),
    # Ruby's report of an uncaught exception ends its first line with the class: "... boom (RuntimeError)".
    (r"(?m)syntax error|\([A-Z]\w*(?:::[A-Z]\w*)*\)$|^[A-Z]\w*(?:::[A-Z]\w*)*(?:Error|Exception)\b", "error"),
)

LANGUAGE = Language(
    name="ruby",
    title="Ruby",
    packages=("ruby", "ruby-test-unit"),
    image_setup=(
        RUNTIME.install() + " && chmod -R a+rX /opt/passk",
        f"ruby -r{RUNTIME_DIR}/server.rb -e 'require \"test/unit\"; Test::Unit::AutoRunner.need_auto_run = false'",
    ),
    context_files=RUNTIME.context_files,
    source_file="main.rb",
    programs=programs,
    run=("ruby", "main.rb"),
    candidate_run=("ruby", f"-r{RUNTIME_DIR}/server.rb", "main.rb"),
    judge_run=("ruby", f"{RUNTIME_DIR}/judge.rb"),
    # The judge holds test/unit, the tests' data and the answers it rebuilds, on top of Ruby's own ~15 MB.
    judge_memory_bytes=64 * MB,
    version=("ruby", "--version"),
    stderr_verdicts=STDERR_VERDICTS,
    aliases=("rb",),
    run_code_names=("ruby",),
    # MultiPL-E's evaluation/src/eval_ruby.py: `ruby <file>` with a 5 s timeout; exit status 0 passes.
    reference_commands=("ruby main.rb",),
    reference_pass=ReferencePass(timeout_s=5.0),
)
