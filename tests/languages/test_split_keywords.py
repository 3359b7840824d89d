"""The split family of languages whose blocks close with a keyword (split.Keywords: Ruby, Lua, Elixir), on MultiPL-E's
stored rows of all three: the entry is the prompt's last line, the blocks around it are counted, the tests stay
top-level, and the candidate is the original program up to its tests (no container)."""

from __future__ import annotations

import re

import pytest

from sandbox.languages import elixir, ruby, split
from sandbox.languages.split import Keywords, Syntax
from tests.languages.conftest import multipl_e_rows

LUA = Keywords(syntax=Syntax(line_comments=("--",), block_comment=None, quotes="\"'"),
               signature=re.compile(r"\s*(?:local\s+)?function\s+(?P<name>\w+)\s*\((?P<params>.*)\)\s*"))


@pytest.mark.parametrize(("code", "family", "around"), [("rb", ruby.FAMILY, 0), ("lua", LUA, 0), ("elixir", elixir.FAMILY, 1)])
def test_every_stored_row_splits(code: str, family: Keywords, around: int) -> None:
    for row in multipl_e_rows(code):
        completion = "  passk_completion\n"
        parts = split.split_keywords(row["prompt"], completion, row["tests"], family)
        name = row["name"].split("_", 2)[2]
        assert parts.entry.name == name and parts.open_blocks == around, row["name"]
        assert parts.candidate == row["prompt"] + completion + "\n"
        assert parts.judge_tests == "end\n" * around + row["tests"]
        assert row["prompt"].startswith(parts.before) and parts.entry.signature in row["prompt"][len(parts.before):]
        assert all(param for param, _ in parts.entry.params)


def test_what_is_not_an_entry() -> None:
    for head in ("", "# only a comment\n", "def f(a)\n  x = 1\n", "x = 1\n", "end\ndef f(a)\n"):
        with pytest.raises(split.SplitError):
            split.split_keywords(head, "end\n", "p 1\n", ruby.FAMILY)
    # Comments and strings are not code: a `def` in them is not the entry.
    parts = split.split_keywords("# def g(x)\ndef f(a, b = 'def h(c)')\n", "end\n", "p 1\n", ruby.FAMILY)
    assert (parts.entry.name, [p for p, _ in parts.entry.params]) == ("f", ["a", "b = 'def h(c)'"])
