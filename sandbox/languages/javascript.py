"""JavaScript: Node.js 18 from Debian bookworm (`nodejs`), run as a CommonJS script.

The program is wrapped so that a pass needs its tests to have run to their end:
- before it, a prelude (one statement on the program's first line, so line numbers in stack traces stay
  the program's own) takes the pass token out of `process.env`, keeps `process.stdout.write`, and makes a
  failed `console.assert` throw. HumanEval-X's JavaScript tests check with `console.assert`, which only prints
  on stderr, and the original harness fails any program that writes to stderr; here the failed assertion ends
  the program with status 1 (and its message), so no other stderr output fails a program;
- after it, the token is written (synchronously: stdout is a pipe) once the tests' top-level code returned.
Top-level code of the candidate that calls `process.exit(0)` runs before the tests and never reaches the token.
"""

from __future__ import annotations

from sandbox.languages.base import MB, Language, own_heap
PASS_TOKEN_ENV = "PASSK_PASS_TOKEN"

JS_MD5 = "js-md5@0.8.3"
# The V8 heap gets the job's memory limit less room for node itself (code, buffers, its own heap).
NODE_OVERHEAD_BYTES = 48 * MB



def prelude(process: str = "process") -> str:
    """The first line: `process` is how the program reaches node's process object (TypeScript without node's
    types reaches it through globalThis)."""
    return (
        "const __passk = (() => { "
        f"const token = {process}.env.{PASS_TOKEN_ENV} || ''; delete {process}.env.{PASS_TOKEN_ENV}; "
        f"const write = {process}.stdout.write.bind({process}.stdout); "
        "Object.defineProperty(console, 'assert', { value: __passkAssert, writable: false, configurable: false }); "
        "return Object.freeze({ done: () => { write('\\n' + token + '\\n'); } }); })();"
    )


PRELUDE = prelude()
# After the program (a function declaration is hoisted, so the prelude can install it): a failed assertion
# throws from here, and the stack trace's source line is this one, not the program's first.
EPILOGUE = (
    "\n;__passk.done();\n"
    "function __passkAssert(value, ...message) {\n"
    "  if (value) return;\n"
    "  const failure = new Error('Assertion failed' + (message.length ? ': ' + message.join(' ') : ''));\n"
    "  failure.name = 'AssertionError';\n"
    "  throw failure;\n"
    "}\n"
)


def wrap(text: str, first_line: str = PRELUDE) -> str:
    # A leading "use strict" directive stays the program's first statement.
    stripped = text.lstrip()
    for directive in ('"use strict";', "'use strict';"):
        if stripped.startswith(directive):
            return directive + " " + first_line + stripped[len(directive):] + EPILOGUE
    return first_line + text + EPILOGUE


def tests_program(text: str) -> str:
    return wrap(text)


def run_memory_flags(memory_bytes: int) -> tuple[str, ...]:
    heap = max(32 * MB, memory_bytes - NODE_OVERHEAD_BYTES)
    return (f"--max-old-space-size={heap // MB}",)


STDERR_VERDICTS = (
    (r"JavaScript heap out of memory|Reached heap limit|Allocation failed", "memory"),
    (r"(?m)^(?:Error \[AssertionError\]|AssertionError\b)", "failed"),
    (r"(?m)^\w*(?:Error|Exception)\b|^Uncaught|^\S+ thrown", "error"),
)

LANGUAGE = Language(
    name="javascript",
    title="JavaScript",
    packages=("nodejs",),
    # HumanEval-X's JavaScript/162 requires js-md5 (no dependencies): unpacked where node looks for global modules.
    npm_packages=(JS_MD5,),
    image_setup=(
        "mkdir -p /usr/share/nodejs/js-md5"
        " && tar -xzf /tmp/passk-npm/js-md5-*.tgz -C /usr/share/nodejs/js-md5 --strip-components=1"
        " && chmod -R a+rX /usr/share/nodejs/js-md5",
        "node -e \"require('js-md5')('')\"",
    ),
    source_file="main.js",
    run=("node", "main.js"),
    version=("sh", "-c", "echo node $(node --version)"),
    **own_heap(run_memory_flags),
    stderr_verdicts=STDERR_VERDICTS,
    aliases=("js", "node", "nodejs"),
    reference_commands=("node main.js",),
    # The original harness fails a program that writes to stderr (its failed console.asserts only print).
    extra={"reference_stderr_fails": True, "bench": (
        lambda row: "  return undefined;\n" + row["canonical_solution"],
        lambda row: "  while (Date.now() > 0) { }\n" + row["canonical_solution"],
    )},
)
