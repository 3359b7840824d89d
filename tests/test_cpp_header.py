"""Which lines of a C++ program become its precompiled header (sandbox/languages/cpp.py), without Docker."""

from __future__ import annotations

import pytest

from sandbox.languages import cpp
from sandbox.languages.cpp import header_lines
from sandbox.runtime.native import pch_split


@pytest.mark.parametrize(("source", "expected"), [
    ("/* doc\n#include <set>\n*/\n#include<map>\n\nusing namespace std;\nint a;\n#include <set>\n", [3, 5]),
    ("// c\n#include <vector>\n#include <bits/stdc++.h>\n", [1, 2]),
    ("int x;\n#include <vector>\n", []),  # code first: nothing moves
    ("/* a */ int y;\n#include <vector>\n", []),  # code after a comment on its line
    ("#include <vector> // why\n", []),  # only whole lines
    ("// c \\\n#include <vector>\n", []),  # a continued comment swallows the include
    ('#include "local.h"\n', []),  # quoted: the program's own directory
    ("#include </etc/passwd>\n", []),
    ("#include <../x>\n", []),
    ("using namespace std;\n", []),  # no include: no header
])
def test_header_lines(source: str, expected: list[int]) -> None:
    assert header_lines(source) == expected


def test_split_keeps_every_line_number() -> None:
    source = cpp.tests_program("/* doc */\n#include<vector>\nusing namespace std;\nint f() { return 1; }\n")
    lines = header_lines(source)
    key, header, body = pch_split({"files": {"main.cpp": source}, "toolchain": "g++ 12", "compile_time_limit_s": 20,
                                   "pch": {"file": "main.cpp", "lines": lines, "build": ["g++"]}})
    assert header == "#include <cstdio>\n#include <cstdlib>\n#define main passk_tests_main\n#include<vector>\nusing namespace std;\n"
    assert body.count("\n") == source.count("\n") and "int f() { return 1; }" in body.split("\n")[6]
    assert "#include" not in body.split("int f()")[0] and "/* doc */" in body
    # The key is the header's text (and toolchain, flags, limits), not the rest of the program.
    other = source.replace("return 1", "return 2")
    assert pch_split({"files": {"main.cpp": other}, "toolchain": "g++ 12", "compile_time_limit_s": 20,
                      "pch": {"file": "main.cpp", "lines": lines, "build": ["g++"]}})[0] == key
