"""A program's traceback as its author needs it: without the frames of passk's own code.

A candidate's program runs under passk's runtime (the Python candidate and judge in sandbox/runtime, the judge
and server files of sandbox/languages/*, installed under /opt/passk*), so a traceback printed in the sandbox
names passk's frames too: `candidate.py` calling the function, `wire.encode` carrying its value,
`judge.js` loading the tests. They say nothing about the program and read as if passk had failed.
`strip_runtime_frames` removes them and keeps everything else, in order: the program's frames, the
language runtime's own (`node:internal/...`), the error and its message.

Pure text in, text out: the problem page's stderr and /run_code's stderr both go through it.
"""

from __future__ import annotations

import re

from sandbox import languages

# Where passk's code lives in a sandbox image: /opt/passk/passk_runtime (Python), /opt/passk/javascript,
# /opt/passk/ruby, /opt/passk/go, /opt/passk/rust, /opt/passk/cpp, /opt/passk-java, /opt/passk-ts.
_RUNTIME_PATH = re.compile(r"/opt/passk(?:-[a-z]+)?/")
# Java's judge and server classes are in package `passk` (sandbox/languages/java/passk).
_JAVA_RUNTIME_FRAME = re.compile(r"^\s+at passk\.")

# Python: `  File "path", line N[, in name]`, then its source line and caret lines, indented deeper.
_PYTHON_FRAME = re.compile(r'^(\s*)File "([^"]*)", line \d+')
# node: the thrown-at location that heads an uncaught exception (`/opt/passk/javascript/wire.js:521`),
# followed by its source line and a caret line, then a blank line.
_NODE_HEAD = re.compile(r"^(/\S+):\d+$")
# A frame line of node (`    at f (/path:1:2)`), Ruby (`\tfrom /path:3:in 'f'`), Java (`\tat passk.X(X.java:3)`).
_FRAME_LINE = re.compile(r"^\s+(?:at|from)\s")


def _is_runtime(path_or_line: str) -> bool:
    return bool(_RUNTIME_PATH.search(path_or_line))


def _strip_python(lines: list[str]) -> list[str]:
    out: list[str] = []
    skipping_indent: int | None = None  # inside a removed frame: its indent; its deeper lines go with it
    for line in lines:
        if skipping_indent is not None:
            indent = len(line) - len(line.lstrip(" "))
            if line.strip() and indent > skipping_indent and not _PYTHON_FRAME.match(line):
                continue
            skipping_indent = None
        frame = _PYTHON_FRAME.match(line)
        if frame and _is_runtime(frame.group(2)):
            skipping_indent = len(frame.group(1))
            continue
        out.append(line)
    return out


def _strip_lines(lines: list[str]) -> list[str]:
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        head = _NODE_HEAD.match(line)
        if head and _is_runtime(head.group(1)):
            # The location, its source line and caret, up to the blank line that ends the block.
            index += 1
            while index < len(lines) and lines[index].strip():
                index += 1
            index += 1  # the blank line itself
            continue
        if (_FRAME_LINE.match(line) and _is_runtime(line)) or _JAVA_RUNTIME_FRAME.match(line):
            index += 1
            continue
        out.append(line)
        index += 1
    return out


def strip_runtime_frames(text: str | None, language: str = "python") -> str | None:
    """`text` (a program's stderr) without the frames of passk's own code; everything else kept as it was.

    `language` is the program's (a registry name, "python", "javascript", ...): Python's multi-line
    frames are removed whole, other languages' frames line by line. None stays None.
    """
    if not text:
        return text
    lines = text.split("\n")
    family = languages.get(language).family if language in languages.all_languages() else language
    kept = _strip_python(lines) if family == "python" else _strip_lines(lines)
    return "\n".join(kept)
