"""PHP: PHP 8.2 from Debian bookworm (`php8.2-cli`). MultiPL-E's PHP tests are plain PHP: each check throws
`Exception("Test failed!")`.

Self-checking problems (MultiPL-E) run as two PHP processes (sandbox/languages/split.py, brace blocks):

- the candidate, `main.php`: the original program up to the tests (the prompt and the model's completion, which
  closes the function itself), then one statement that serves the function to the judge (php/server.php, loaded
  with `-d auto_prepend_file=` before any of the model's code), placed where the tests began in one program;
- the judge, `main.php` in a directory of its own, loaded by passk's judge runtime (php/judge.php): the prompt's
  code before the function to complete, a stub for that function (the prompt's signature; its body calls the
  candidate's process), then the tests. The runtime reports the pass once the tests' top-level code returned.

Values cross as data (php/wire.php, the rule in sandbox/runtime/values.py): nothing the model wrote (an object, an
exit or shutdown hook, `exit(0)`, a class with `__toString`) ever runs in the judge. In one process, `exit(0)`
in the function ends the tests with status 0, which MultiPL-E passes; here only the judge's report does.

A completion that leaves PHP mode (`?>`) leaves the serving statement as text: the candidate then ends with status
0 while the tests wait, failed and flagged `ended_early` (MultiPL-E's stop tokens cut completions at `?>`).

PHP's own memory limit is off (Debian's php.ini for the command line: `memory_limit = -1`), as under MultiPL-E's
harness: the job's limit holds the process, as in every language. Errors go to stderr (`log_errors`), not stdout.
The runtime files are installed in the image under /opt/passk/php.
"""

from __future__ import annotations

import re

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language, ReferencePass, RuntimeFiles
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource

RUNTIME_DIR = "/opt/passk/php"
RUNTIME = RuntimeFiles("php", ("wire.php", "judge.php", "server.php"), RUNTIME_DIR)
# PHP's comments (`//`, `#`, `/* */`) and quoted strings; heredocs are not in MultiPL-E's prompts or tests.
SYNTAX = Syntax(line_comments=("//", "#"), block_comment=("/*", "*/"), quotes="\"'")
_SIGNATURE = re.compile(
    r"function\s+(?P<name>[A-Za-z_]\w*)\s*\((?P<params>.*)\)\s*(?::\s*(?P<returns>[?\w\\|]+)\s*)?", re.S)
# A parameter: an optional type, `...` for a variadic, the variable, an optional default.
_PARAM = re.compile(r"(?P<type>[?\w\\|]+\s+)?(?P<variadic>\.\.\.\s*)?\$(?P<name>[A-Za-z_]\w*)\s*(?:=.*)?", re.S)


def entry(head: str, code: str, brace: int) -> Entry:
    """The top-level function whose body the prompt leaves open: `function name($a, $b) {` (types as written)."""
    keywords = list(re.finditer(r"\bfunction\b", code[:brace]))
    start = keywords[-1].start() if keywords else -1
    found = _SIGNATURE.fullmatch(code[start:brace].rstrip()) if keywords else None
    if found is None:
        raise SplitError("the prompt does not end with a PHP function's signature and its '{'")
    params_at = start + found.start("params")
    params = []
    for param in splitting.split_params(head[params_at:start + found.end("params")]):
        matched = _PARAM.fullmatch(param.strip())
        if matched is None:
            raise SplitError(f"a parameter passk cannot pass on: {param.strip()!r} (by reference, or not a variable)")
        params.append((matched.group("name"), (matched.group("type") or "").strip()))
    return Entry(start=start, brace=brace, name=found.group("name"), params=tuple(params),
                 returns=(found.group("returns") or "").strip(), signature=head[start:brace].strip())


def stub(parts: splitting.Parts) -> str:
    """The judge's function with the prompt's signature: it sends the arguments the tests passed (not the defaults
    they left out: the candidate's own function applies those) and returns what the candidate's returned."""
    e = parts.entry
    return f"{e.signature} {{\n    return \\PasskJudge::call({e.name!r}, func_get_args());\n}}\n"


def serve_statement(name: str) -> str:
    """What follows the candidate's program: its function served to the judge (php/server.php)."""
    return f"\n;\\PasskServer::serve({name!r});\n"


def split_problem(source: TestSource) -> splitting.Parts:
    parts = splitting.top_level(splitting.split(source.prompt, source.completion, source.tests, SYNTAX, entry))
    if parts.entry.returns in ("void", "never"):
        raise SplitError(f"the function to complete returns {parts.entry.returns}: there is no value to compare")
    return parts


def programs(source: TestSource) -> Programs:
    parts = split_problem(source)
    return splitting.served(parts, "main.php", serve_statement(parts.entry.name), stub(parts))


STDERR_VERDICTS = (
    (r"Allowed memory size of \d+ bytes exhausted|Out of memory \(allocated \d+", "memory"),
    # MultiPL-E's failed check, uncaught: the judge reports it as PHP itself would (php/judge.php).
    (r"(?m)^PHP Fatal error:  Uncaught Exception: Test failed!", "failed"),
    # Any other uncaught throwable, a fatal error, a syntax error.
    (r"(?m)^PHP (?:Fatal|Parse) error: ", "error"),
)

LANGUAGE = Language(
    name="php",
    title="PHP",
    packages=("php8.2-cli",),
    image_setup=(
        RUNTIME.install() + " && chmod -R a+rX /opt/passk",
        "echo '<?php exit(class_exists(\"PasskServer\") ? 0 : 1);' > /tmp/passk-check.php",
        f"php -d auto_prepend_file={RUNTIME_DIR}/server.php /tmp/passk-check.php",
    ),
    context_files=RUNTIME.context_files,
    source_file="main.php",
    programs=programs,
    run=("php", "main.php"),
    candidate_run=("php", "-d", f"auto_prepend_file={RUNTIME_DIR}/server.php", "main.php"),
    judge_run=("php", f"{RUNTIME_DIR}/judge.php"),
    judge_memory_bytes=32 * MB,
    version=("php", "--version"),
    stderr_verdicts=STDERR_VERDICTS,
    run_code_names=("php",),
    # MultiPL-E's evaluation/src/eval_php.py: `php <file>` under safe_subprocess's default 15 s; exit status 0
    # passes ("PHP Parse error" in stdout is a syntax error, which exits non-zero too).
    reference_commands=("php main.php",),
    reference_pass=ReferencePass(timeout_s=15.0),
)
