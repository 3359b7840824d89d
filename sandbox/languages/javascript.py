"""JavaScript: Node.js 18 from Debian bookworm (`nodejs`), run as CommonJS scripts.

Self-checking problems (HumanEval-X, MultiPL-E) run as two node processes (sandbox/languages/split.py):

- the candidate, `main.js`: the original program up to the tests (the prompt and the model's completion),
  then one statement that serves the function to complete to the judge (javascript/server.js), placed where the
  tests began in one program, after all of the model's top-level code;
- the judge, `main.js` in a directory of its own, loaded by passk's judge runtime (javascript/judge.js): the
  prompt's code before the function to complete, a stub for that function (the prompt's signature; its body
  calls the candidate's process), then the tests. The runtime reports the pass once the tests' top-level code
  returned.

Values cross as data (javascript/wire.js, the rule in sandbox/runtime/values.py), each with its own dynamic
type: nothing the model wrote (a prototype, a getter, a Proxy, an exit hook, a replaced console.assert or
assert module) ever runs in the judge. HumanEval-X's tests check with `console.assert`, which only prints, and
the original harness fails any program that writes to stderr: in the judge a failed `console.assert` throws
(an AssertionError), so no other stderr output fails a program.

The runtime files are installed in the image under /opt/passk/javascript (TypeScript's image has them too).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language, ReferencePass, RuntimeFiles, own_heap
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource

JS_MD5 = "js-md5@0.8.3"
# The V8 heap gets the job's memory limit less room for node itself (code, buffers, its own heap).
NODE_OVERHEAD_BYTES = 48 * MB
RUNTIME_DIR = "/opt/passk/javascript"
RUNTIME = RuntimeFiles("javascript", ("wire.js", "judge.js", "server.js"), RUNTIME_DIR)
SYNTAX = Syntax(template_literals=True, regex_literals=True)

_IDENT = r"[A-Za-z_$][\w$]*"
# A function declaration, or a variable bound to a function expression or an arrow function, up to the `(` of
# its parameters (or an arrow's single parameter), in blanked code.
_DECLARATION = re.compile(rf"function\s*(?P<star>\*)?\s*(?P<name>{_IDENT})\s*(?P<generics><[^(]*>)?\s*\(")
_BINDING = re.compile(
    rf"(?P<kind>const|let|var)\s+(?P<name>{_IDENT})\s*(?::[^=]*)?(?P<eq>=)\s*(?P<async>async\b\s*)?"
    rf"(?:(?P<function>function)\s*(?P<star>\*)?\s*(?:{_IDENT})?\s*)?(?P<generics><[^(]*>)?\s*(?P<open>\(|{_IDENT})"
)
_STARTS = re.compile(r"\b(?:function|const|let|var)\b")
_TAIL = re.compile(r"\s*(?::\s*(?P<returns>.+?))?\s*(?P<arrow>=>)?\s*", re.S)
_PARAM_NAME = re.compile(rf"\s*(?:\.\.\.)?\s*(?P<name>{_IDENT})")


@dataclass(frozen=True)
class _Parsed:
    entry: Entry
    binding: str  # "const f = " for a variable bound to the function, "" for a declaration
    params: str  # the parameter list's text, as written (without its parentheses)


def _close_paren(code: str, start: int, end: int) -> int | None:
    """The `)` matching the `(` at `start`, before `end` (blanked code: brackets of literals are gone)."""
    depth = 0
    for index in range(start, end):
        char = code[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index if char == ")" else None
    return None


def _param(text: str) -> tuple[str, str]:
    """(name, type as written) of one parameter: `a`, `a = 1`, `...rest`, `a?: number[]`, or a pattern."""
    named = _PARAM_NAME.match(text)
    name = named.group("name") if named else text.strip()
    depth, colon, stop = 0, None, len(text)
    for index, char in enumerate(text):
        if char in "([{<":
            depth += 1
        elif char in ")]}>" and not (char == ">" and text[index - 1:index] == "="):
            depth -= 1
        elif depth == 0 and char == ":" and colon is None:
            colon = index
        elif depth == 0 and char == "=" and text[index + 1:index + 2] != ">":
            stop = index
            break
    kind = text[colon + 1:stop].strip() if colon is not None and colon < stop else ""
    return name, kind


def _parse(head: str, code: str, start: int, brace: int) -> _Parsed | None:
    """The function whose body opens at `brace`, if its signature starts at `start`."""
    segment = code[start:brace]
    binding = ""
    found = _DECLARATION.match(segment)
    if found is None:
        found = _BINDING.match(segment)
        if found is None:
            return None
        binding = head[start:start + found.end("eq")] + " "
    if found.group("star") or found.groupdict().get("async"):
        raise SplitError("the function to complete is a generator or async function: its values cannot cross")
    if found.groupdict().get("open", "(") == "(":
        params_open = start + found.end() - 1
        params_close = _close_paren(code, params_open, brace)
        if params_close is None:
            return None
        params = head[params_open + 1:params_close]
        rest = code[params_close + 1:brace]
    else:  # an arrow's single parameter without parentheses: x => {
        params = found.group("open")
        rest = segment[found.end():]
    tail = _TAIL.fullmatch(rest)
    if tail is None:
        return None
    arrow = bool(tail.group("arrow"))
    if arrow != (binding != "" and not found.groupdict().get("function")):
        return None
    returns = (tail.group("returns") or "").strip()
    entry = Entry(start=start, brace=brace, name=found.group("name"),
                  params=tuple(_param(p) for p in splitting.split_params(params)), returns=returns,
                  signature=head[start:brace].strip())
    return _Parsed(entry=entry, binding=binding, params=params)


def _find(head: str, code: str, brace: int) -> _Parsed:
    # The last function keyword or binding before the body that parses as its signature (an `export` before
    # it stays in `before`, so the stub is exported too).
    for match in reversed(list(_STARTS.finditer(code, 0, brace))):
        parsed = _parse(head, code, match.start(), brace)
        if parsed is not None:
            if re.search(r"\basync\s*$", code[:match.start()]):
                raise SplitError("the function to complete is an async function: its values cannot cross")
            return parsed
    raise SplitError("the prompt does not end with a JavaScript function's signature and its '{'")


def entry(head: str, code: str, brace: int) -> Entry:
    """The JavaScript (or TypeScript) function whose body the prompt leaves open: `function f(a, b) {`,
    `const f = (a, b) => {`, `const f = function (a, b) {`, with TypeScript's types where they are written."""
    return _find(head, code, brace).entry


# The statement that makes the judge's stub call the candidate's process (judge.js defines it).
JS_CALL = "globalThis.__passk_call"


def stub(parsed: _Parsed, call: str = JS_CALL) -> str:
    """The judge's function with the prompt's signature: it sends its arguments, as the tests passed them, and
    returns what the candidate's function returned. A bound arrow function becomes a function expression (an
    arrow has no `arguments`); its parameters and types stay as written."""
    e = parsed.entry
    body = " {\n  return " + call + "(" + json.dumps(e.name) + ", arguments);\n}"
    if not parsed.binding:
        return e.signature + body + "\n"
    returns = f": {e.returns}" if e.returns else ""
    return parsed.binding + "function (" + parsed.params + ")" + returns + body + ";\n"


def serve_statement(name: str) -> str:
    """What follows the candidate's program: its function served to the judge (javascript/server.js)."""
    return f"\n;require({json.dumps(RUNTIME_DIR + '/server.js')}).serve({json.dumps(name)}, {name});\n"


def split_problem(source: TestSource) -> tuple[splitting.Parts, _Parsed]:
    found: list[_Parsed] = []

    def find_entry(head: str, code: str, brace: int) -> Entry:
        found.append(_find(head, code, brace))
        return found[-1].entry

    parts = splitting.top_level(splitting.split(source.prompt, source.completion, source.tests, SYNTAX, find_entry))
    return parts, found[-1]


def judge_source(parts: splitting.Parts, parsed: _Parsed, call: str = JS_CALL) -> str:
    return parts.before + stub(parsed, call) + "\n" + parts.judge_tests + "\n"


def programs(source: TestSource) -> Programs:
    parts, parsed = split_problem(source)
    return Programs(candidate={"main.js": parts.candidate + serve_statement(parsed.entry.name)},
                    judge={"main.js": judge_source(parts, parsed)})


def run_memory_flags(memory_bytes: int) -> tuple[str, ...]:
    heap = max(32 * MB, memory_bytes - NODE_OVERHEAD_BYTES)
    return (f"--max-old-space-size={heap // MB}",)


STDERR_VERDICTS = (
    (r"JavaScript heap out of memory|Reached heap limit|Allocation failed", "memory"),
    (r"(?m)^(?:Error \[AssertionError\]|AssertionError\b)", "failed"),
    (r"(?m)^\w*(?:Error|Exception)\b|^Uncaught|^\S+ thrown", "error"),
)

# Image set-up shared with TypeScript: passk's runtime under RUNTIME_DIR, proven to load.
RUNTIME_SETUP = (
    RUNTIME.install() + " && chmod -R a+rX /opt/passk",
    f"node -e \"require('{RUNTIME_DIR}/wire.js'); require('{RUNTIME_DIR}/server.js')\"",
)
JUDGE_RUN = ("node", f"{RUNTIME_DIR}/judge.js")
# The judge holds the tests' data and the answers it rebuilds, on top of node's own ~40 MB.
JUDGE_MEMORY_BYTES = 64 * MB

LANGUAGE = Language(
    name="javascript",
    title="JavaScript",
    # lodash: SandboxFusion's Node.js image has it, and its tests require it.
    packages=("nodejs", "node-lodash"),
    # HumanEval-X's JavaScript/162 requires js-md5 (no dependencies): unpacked where node looks for global modules.
    npm_packages=(JS_MD5,),
    image_setup=(
        "mkdir -p /usr/share/nodejs/js-md5"
        " && tar -xzf /tmp/passk-npm/js-md5-*.tgz -C /usr/share/nodejs/js-md5 --strip-components=1"
        " && chmod -R a+rX /usr/share/nodejs/js-md5",
        "node -e \"require('js-md5')('')\"",
        "node -e \"require('lodash').isEqual(1, 1)\"",
        *RUNTIME_SETUP,
    ),
    context_files=RUNTIME.context_files,
    source_file="main.js",
    programs=programs,
    judge_run=JUDGE_RUN,
    judge_memory_bytes=JUDGE_MEMORY_BYTES,
    run=("node", "main.js"),
    version=("sh", "-c", "echo node $(node --version)"),
    **own_heap(run_memory_flags),
    stderr_verdicts=STDERR_VERDICTS,
    aliases=("js", "node", "nodejs"),
    run_code_names=("nodejs",),
    reference_commands=("node main.js",),
    # The original harness fails a program that writes to stderr (its failed console.asserts only print).
    reference_pass=ReferencePass(quiet_stderr=True),
    extra={"bench": (
        lambda row: "  return undefined;\n" + row["canonical_solution"],
        lambda row: "  while (Date.now() > 0) { }\n" + row["canonical_solution"],
    )},
)
