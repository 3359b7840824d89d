"""passk's own frames leave a program's traceback; the program's frames and its error stay.

The tracebacks are real: the Python ones printed by the sandbox image's candidate (a HumanEval program whose
completion raises, divides by zero or does not parse), the JavaScript one by node 20 running passk's judge.js
on tests whose console.assert fails.
"""

from __future__ import annotations

from sandbox.tracebacks import strip_runtime_frames

PYTHON_RAISES = """Traceback (most recent call last):
  File "/opt/passk/passk_runtime/candidate.py", line 126, in _serve_tests
    reply = {"value": wire.encode(function(*args, **kwargs), 0, iterators)}
                                  ^^^^^^^^^^^^^^^^^^^^^^^^^
  File "<program>", line 3, in add
  File "<program>", line 5, in helper
ValueError: boom 2
"""

PYTHON_SYNTAX = """Traceback (most recent call last):
  File "/opt/passk/passk_runtime/candidate.py", line 88, in _serve_tests
    exec(compile(source, "<program>", "exec"), namespace)
         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "<program>", line 3
    return a +
              ^
SyntaxError: invalid syntax
"""

NODE_ASSERT = """/opt/passk/javascript/wire.js:521
  throw failure;
  ^

Error [AssertionError]: Assertion failed
    at console.throwingAssert [as assert] (/opt/passk/javascript/wire.js:519:19)
    at testAdd (/judge/main.js:3:11)
    at Object.<anonymous> (/judge/main.js:5:1)
    at Module._compile (node:internal/modules/cjs/loader:1521:14)
    at Module._extensions..js (node:internal/modules/cjs/loader:1623:10)
    at Module.load (node:internal/modules/cjs/loader:1266:32)
    at Module._load (node:internal/modules/cjs/loader:1091:12)
    at Module.require (node:internal/modules/cjs/loader:1289:19)
    at require (node:internal/modules/helpers:182:18)
    at Object.<anonymous> (/opt/passk/javascript/judge.js:169:1)

Node.js v20.20.2
"""

NODE_PROGRAM_ONLY = """/sandbox/main.js:2
  return a + c;
             ^

ReferenceError: c is not defined
    at add (/sandbox/main.js:2:14)
    at Object.<anonymous> (/sandbox/main.js:4:13)
    at Module._compile (node:internal/modules/cjs/loader:1521:14)

Node.js v20.20.2
"""


def test_python_keeps_the_programs_frames_and_error() -> None:
    assert strip_runtime_frames(PYTHON_RAISES, "python") == """Traceback (most recent call last):
  File "<program>", line 3, in add
  File "<program>", line 5, in helper
ValueError: boom 2
"""


def test_python_syntax_error_keeps_its_caret() -> None:
    stripped = strip_runtime_frames(PYTHON_SYNTAX, "python")
    assert "candidate.py" not in stripped and "compile(source" not in stripped
    assert stripped.endswith('  File "<program>", line 3\n    return a +\n              ^\nSyntaxError: invalid syntax\n')


def test_node_drops_the_judges_location_and_frames() -> None:
    stripped = strip_runtime_frames(NODE_ASSERT, "javascript")
    assert "/opt/passk" not in stripped and "throw failure" not in stripped
    assert stripped.startswith("Error [AssertionError]: Assertion failed\n    at testAdd (/judge/main.js:3:11)\n")
    assert "node:internal/modules/cjs/loader:1521:14" in stripped and stripped.endswith("Node.js v20.20.2\n")


def test_a_traceback_without_passk_frames_is_unchanged() -> None:
    assert strip_runtime_frames(NODE_PROGRAM_ONLY, "javascript") == NODE_PROGRAM_ONLY
    assert strip_runtime_frames(NODE_PROGRAM_ONLY, "typescript") == NODE_PROGRAM_ONLY
    plain = "Traceback (most recent call last):\n  File \"<program>\", line 1, in <module>\nKeyError: 1\n"
    assert strip_runtime_frames(plain, "python") == plain
    assert strip_runtime_frames(None, "python") is None and strip_runtime_frames("", "python") == ""
    assert strip_runtime_frames("just output\n", "ruby") == "just output\n"
