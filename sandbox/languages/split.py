"""Splitting a self-checking program in two: the judge (the problem's tests) and the candidate (the model's code).

HumanEval-X and MultiPL-E build one program, `prompt + completion + "\\n" + tests`, in which the model's code
and the tests are compiled together. passk builds two instead, from the same texts:

- the candidate: the original program's text up to the tests (the prompt and the completion), closed as the
  tests would close it, followed by the language's server (which answers calls from the judge);
- the judge: the prompt's own code before the function to complete (trusted: the problem's), a stub for that
  function with the prompt's signature (it calls the candidate's process), and the tests.

Only trusted text is ever parsed here (prompts and tests); the completion is copied, never read, so nothing a
model writes can steer how its program is split. One set of rules per syntax family: languages whose blocks close
with a keyword (Ruby, Lua, Elixir) have `Keywords` below, languages of s-expressions (Racket) `split_sexp`; the
rules for brace languages:

- The function to complete (the entry) is the innermost block still open at the end of the prompt. The
  language finds its signature before that `{` (`Language.entry`); what precedes the signature is `before`.
- The tests close `e` blocks in all (their net brace depth is -e): MultiPL-E's C++ tests start with the `}`
  of the entry, Java's close the entry and then the class; HumanEval-X's tests are top-level code (e = 0)
  because the completion closes everything itself.
- The candidate is `head + completion + "\\n" + "}" * e`: balanced exactly when the original program is.
- The judge is `before + stub` followed by the tests placed at the depth the original program has them:
  with the `}` that closed the entry dropped (e = open + 1), as they are (e = open), or after closing the
  blocks the completion closed in the original (e < open), where `open` counts the blocks around the entry.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


class SplitError(ValueError):
    """The problem's prompt and tests cannot be split into a judge and a candidate (the reason says why)."""


@dataclass(frozen=True)
class TestSource:
    """A self-checking problem's texts as published, and one completion of it."""

    __test__ = False  # (not a pytest test class)

    format: str  # "humaneval-x" | "multipl-e"
    prompt: str
    tests: str
    completion: str = ""
    declaration: str = ""  # HumanEval-X's declaration (its prompt's code without the docstring)


@dataclass(frozen=True)
class Programs:
    """The two programs of a sample: file name -> text, each compiled in a directory of its own."""

    candidate: dict[str, str]
    judge: dict[str, str]
    # Trusted files the candidate's build uses, compiled once per problem (sandbox/runtime/job.py, Native.support).
    support: dict[str, str] | None = None


@dataclass(frozen=True)
class Syntax:
    """Where comments and literals are in a language's source (so that braces inside them do not count)."""

    line_comments: tuple[str, ...] = ("//",)
    block_comment: tuple[str, str] | None = ("/*", "*/")
    nested_block_comments: bool = False  # Rust
    quotes: str = "\"'"  # quote characters of string and character literals (backslash escapes)
    backtick_raw: bool = False  # Go: `raw strings`
    template_literals: bool = False  # JavaScript / TypeScript: `text ${expression} text`
    regex_literals: bool = False  # JavaScript / TypeScript
    cpp_raw_strings: bool = False  # C++: R"delimiter(...)delimiter"
    rust_raw_strings: bool = False  # Rust: r"...", r#"..."#, b"...", and 'a lifetimes beside 'c' characters
    text_blocks: bool = False  # Java: """ ... """


@dataclass(frozen=True)
class Entry:
    """The function to complete, as the prompt declares it."""

    start: int  # where its signature begins in the head
    brace: int  # index of the `{` that opens its body
    name: str
    params: tuple[tuple[str, str], ...]  # (name, type as written; "" where untyped)
    returns: str  # the return type as written ("" where untyped or none)
    signature: str  # head[start:brace], as written


@dataclass(frozen=True)
class Parts:
    head: str
    before: str  # the trusted code before the entry's signature
    entry: Entry
    open_blocks: int  # blocks around the entry (a Java class: 1)
    judge_tests: str  # the tests as they follow the judge's complete stub
    candidate: str  # the original program's text up to the tests, balanced as the tests would balance it


EntryFinder = Callable[[str, str, int], Entry]


def top_level(parts: Parts) -> Parts:
    """`parts`, if the function to complete is at the top level (the judge's stub and the candidate's server stand
    beside it there); a SplitError otherwise."""
    if parts.open_blocks:
        raise SplitError("the function to complete is nested in another block; only top-level functions are served")
    return parts


def served(parts: Parts, file: str, serve: str, stub: str, *, judge_end: str = "\n") -> Programs:
    """An interpreted language's two programs in one file each: the candidate's code then `serve` (the statement
    that serves its function to the judge); the judge's the prompt's code before the function, `stub` (the
    function, calling the candidate) and the tests."""
    return Programs(candidate={file: parts.candidate + serve},
                    judge={file: parts.before + stub + "\n" + parts.judge_tests + judge_end})


def blank(text: str, syntax: Syntax) -> str:
    """`text` with every comment and the inside of every literal replaced by spaces (line breaks kept), so
    that positions in the result are positions in `text` and only code remains."""
    out = list(text)
    n = len(text)
    i = 0
    template_depth: list[int] = []  # brace depth at each open `${` of a template literal
    depth = 0
    previous = ""  # the last code character (regex literal detection)

    def wipe(start: int, end: int) -> None:
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        two = text[i:i + 2]
        if any(text.startswith(prefix, i) for prefix in syntax.line_comments):
            end = text.find("\n", i)
            end = n if end < 0 else end
            wipe(i, end)
            i = end
            continue
        if syntax.block_comment and text.startswith(syntax.block_comment[0], i):
            opener, closer = syntax.block_comment
            level, j = 1, i + len(opener)
            while j < n and level:
                if syntax.nested_block_comments and text.startswith(opener, j):
                    level, j = level + 1, j + len(opener)
                elif text.startswith(closer, j):
                    level, j = level - 1, j + len(closer)
                else:
                    j += 1
            wipe(i, j)
            i = j
            continue
        if syntax.cpp_raw_strings and c == "R" and text[i + 1:i + 2] == '"' and not _word(text, i - 1):
            match = re.match(r'R"([^()\\ \n]{0,16})\(', text[i:])
            if match:
                closer = ")" + match.group(1) + '"'
                end = text.find(closer, i + match.end())
                end = n if end < 0 else end + len(closer)
                wipe(i + 1, end)
                i, previous = end, '"'
                continue
        if syntax.rust_raw_strings and c in "rb" and not _word(text, i - 1):
            match = re.match(r'(?:br|rb|r)(#*)"', text[i:])
            if match:
                closer = '"' + match.group(1)
                end = text.find(closer, i + match.end())
                end = n if end < 0 else end + len(closer)
                wipe(i + 1, end)
                i, previous = end, '"'
                continue
        if syntax.text_blocks and text.startswith('"""', i):
            end = text.find('"""', i + 3)
            end = n if end < 0 else end + 3
            wipe(i, end)
            i, previous = end, '"'
            continue
        if syntax.backtick_raw and c == "`":
            end = text.find("`", i + 1)
            end = n if end < 0 else end + 1
            wipe(i, end)
            i, previous = end, '"'
            continue
        if syntax.template_literals and (c == "`" or (c == "}" and template_depth and template_depth[-1] == depth)):
            if c == "}":
                template_depth.pop()
            j = i + 1
            while j < n and text[j] != "`":
                if text[j] == "\\":
                    j += 2
                    continue
                if text.startswith("${", j):
                    break
                j += 1
            wipe(i, j + (1 if j < n and text[j] == "`" else 0))
            if j < n and text.startswith("${", j):
                template_depth.append(depth)
                i = j + 2
            else:
                i = j + 1
            previous = '"'
            continue
        if syntax.regex_literals and c == "/" and two not in ("//", "/*") and (previous == "" or previous in "(,=:[!&|?{};+-*%<>~^"):
            j, in_class = i + 1, False
            while j < n and text[j] != "\n":
                if text[j] == "\\":
                    j += 2
                    continue
                if text[j] == "[":
                    in_class = True
                elif text[j] == "]":
                    in_class = False
                elif text[j] == "/" and not in_class:
                    break
                j += 1
            if j < n and text[j] == "/":
                wipe(i + 1, j)
                i, previous = j + 1, "/"
                continue
        if c in syntax.quotes:
            if syntax.rust_raw_strings and c == "'" and not re.match(r"'(?:\\.[^']*|[^\\'\n])'", text[i:]):
                i += 1  # a lifetime or a loop label, not a character literal
                previous = c
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            wipe(i + 1, j)
            i, previous = j + 1, '"'
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if not c.isspace():
            previous = c
        i += 1
    return "".join(out)


def _word(text: str, index: int) -> bool:
    return index >= 0 and (text[index].isalnum() or text[index] == "_")


def open_braces(code: str) -> list[int]:
    """Positions of the `{` still open at the end of blanked code, outermost first (SplitError if a `}`
    closes nothing)."""
    stack: list[int] = []
    for index, char in enumerate(code):
        if char == "{":
            stack.append(index)
        elif char == "}":
            if not stack:
                raise SplitError(f"a '}}' at offset {index} closes no block")
            stack.pop()
    return stack


def net_depth(code: str) -> int:
    return code.count("{") - code.count("}")


def statement_start(code: str, end: int, directive_lines: bool = False) -> int:
    """Where the declaration ending at `end` begins in blanked code: after the previous `;`, `{` or `}` (or,
    with `directive_lines`, after a preprocessor line), skipping white space."""
    start = max(code.rfind(";", 0, end), code.rfind("{", 0, end), code.rfind("}", 0, end)) + 1
    if directive_lines:
        for line in re.finditer(r"(?m)^[ \t]*#[^\n]*$", code[:end]):
            start = max(start, line.end())
    while start < end and code[start].isspace():
        start += 1
    return start


def split_params(text: str, brackets: str = "()[]{}<>") -> list[str]:
    """A parameter list's parameters, split at the commas outside the pairs of `brackets` (Go's `<-chan` wants
    no angle brackets); a trailing comma ends the list (empty list: no parameters), an empty parameter before it
    is a SplitError."""
    openers, closers = brackets[0::2], brackets[1::2]
    parts, depth, current = [], 0, []
    for char in text:
        if char in openers:
            depth += 1
        elif char in closers:
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    last = "".join(current).strip()
    if last:
        parts.append(last)
    if any(not part for part in parts):
        raise SplitError(f"an empty parameter in ({text.strip()})")
    return parts


def split(head: str, completion: str, tests: str, syntax: Syntax, find_entry: EntryFinder) -> Parts:
    """The judge's and the candidate's parts of `head + completion + "\\n" + tests` (see the module's rules)."""
    head_code = blank(head, syntax)
    stack = open_braces(head_code)
    if not stack:
        raise SplitError("the prompt does not end inside the function to complete (no open '{')")
    entry = find_entry(head, head_code, stack[-1])
    before = head[:entry.start]
    around = len(stack) - 1
    tests_code = blank(tests, syntax)
    closes = -net_depth(tests_code)
    if closes == around + 1:
        first = _first_closer(tests_code)
        if first is None:
            raise SplitError("the tests close the function to complete, but not with their first code")
        judge_tests = tests[:first] + " " + tests[first + 1:]
    elif closes == around:
        judge_tests = tests
    elif 0 <= closes < around:
        judge_tests = "}" * (around - closes) + "\n" + tests
    else:
        raise SplitError(f"the tests close {closes} blocks; the prompt leaves {around + 1} open")
    candidate = head + completion + "\n" + "}" * max(0, closes)
    return Parts(head=head, before=before, entry=entry, open_blocks=around, judge_tests=judge_tests, candidate=candidate)


def _first_closer(code: str) -> int | None:
    """The first code character of the tests, if it is a `}`."""
    stripped = len(code) - len(code.lstrip())
    return stripped if stripped < len(code) and code[stripped] == "}" else None


# ------------------------------------------------------------------ blocks closed by a keyword (Ruby, Lua, Elixir)


@dataclass(frozen=True)
class Keywords:
    """A language whose blocks close with a keyword (`end`): how the split finds the function to complete.

    The rules (only the prompt and the tests, trusted text, are read):

    - The entry is the prompt's last line of code: a signature (`signature`, matched against that line of blanked
      code, with the groups `name` and `params`) whose body the prompt leaves open. What precedes that line is
      `before`.
    - The blocks around it are the lines of `before` that open one (`opens`) less the lines that are `closer`
      alone (Elixir's `defmodule HumanEval do`: 1).
    - The tests are top-level code: the completion closes the entry and every block around it itself (MultiPL-E's
      Ruby, Lua and Elixir tests close nothing).
    - The candidate is `head + completion + "\\n"`, the original program up to its tests. The judge is `before`,
      the stub, a `closer` line per block around the entry, then the tests as they are.
    """

    syntax: Syntax
    signature: re.Pattern[str]
    opens: re.Pattern[str] | None = None
    closer: str = "end"


def split_keywords(head: str, completion: str, tests: str, family: Keywords) -> Parts:
    """The judge's and the candidate's parts of `head + completion + "\\n" + tests` (see `Keywords`)."""
    code = blank(head, family.syntax)
    lines = code.splitlines(keepends=True)
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line)
    last = next((index for index in range(len(lines) - 1, -1, -1) if lines[index].strip()), None)
    if last is None:
        raise SplitError("the prompt has no code: no function to complete")
    found = family.signature.fullmatch(lines[last].rstrip("\n").rstrip())
    if found is None:
        raise SplitError(f"the prompt does not end with a function's signature: {head.splitlines()[last].strip()!r}")
    start = offsets[last]
    before_code = code[:start]
    around = 0
    for line in before_code.splitlines():
        if family.opens is not None and family.opens.search(line):
            around += 1
        elif line.strip() == family.closer:
            around -= 1
    if around < 0:
        raise SplitError(f"an '{family.closer}' in the prompt closes no block")
    params = found.group("params") or ""
    entry = Entry(start=start, brace=start + found.end(), name=found.group("name"),
                  params=tuple((param, "") for param in split_params(head[start + found.start("params"):start + found.end("params")])) if params.strip() else (),
                  returns="", signature=head[start:start + found.end()].strip())
    judge_tests = (family.closer + "\n") * around + tests
    return Parts(head=head, before=head[:start], entry=entry, open_blocks=around, judge_tests=judge_tests,
                 candidate=head + completion + "\n")


# ------------------------------------------------------------------ s-expressions (Racket)


def split_sexp(head: str, completion: str, tests: str, syntax: Syntax, signature: re.Pattern[str]) -> Parts:
    """The judge's and the candidate's parts of `head + completion + "\\n" + tests` for a language of s-expressions.

    The rules (only the prompt and the tests, trusted text, are read):

    - The entry is the one form the prompt leaves open: its `(` is the only one still open at the end of the
      blanked prompt (`(` and `[` count alike), and its text from there matches `signature` (groups `name` and
      `params`, the parameters separated by white space). What precedes it is `before`.
    - The tests are top-level forms: the completion closes the entry itself (MultiPL-E's Racket tests close
      nothing). The candidate is `head + completion + "\\n"`; the judge is `before`, the stub, then the tests.
    """
    code = blank(head, syntax)
    stack: list[int] = []
    for index, char in enumerate(code):
        if char in "([":
            stack.append(index)
        elif char in ")]":
            if not stack:
                raise SplitError(f"a '{char}' at offset {index} closes no form")
            stack.pop()
    if len(stack) != 1:
        raise SplitError(f"the prompt leaves {len(stack)} forms open; it must leave one, the function to complete")
    start = stack[0]
    found = signature.fullmatch(code[start:].rstrip())
    if found is None:
        raise SplitError(f"the prompt does not end with a function's definition: {head[start:].strip()!r}")
    params = head[start + found.start("params"):start + found.end("params")].split()
    entry = Entry(start=start, brace=start + found.end(), name=found.group("name"),
                  params=tuple((param, "") for param in params), returns="",
                  signature=head[start:start + found.end()].strip())
    return Parts(head=head, before=head[:start], entry=entry, open_blocks=0, judge_tests=tests,
                 candidate=head + completion + "\n")
