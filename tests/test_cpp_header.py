"""Which lines of a C++ program become its precompiled header (sandbox/languages/cpp.py), without Docker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.languages import cpp
from sandbox.languages.cpp import header_lines
from sandbox.languages import jobs
from sandbox.languages.split import TestSource as Source
from sandbox.runtime.job import Build, Native, Pch
from sandbox.runtime.builds import pch_split
from tests.languages.conftest import humaneval_x_rows, multipl_e_rows


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


def _spec(source: str, toolchain: str = "g++ 12", compile_time_limit_s: float | None = 20) -> Native:
    build = Build(files={"main.cpp": source}, run=["./main"], compile=["g++"],
                  pch=Pch(file="main.cpp", lines=header_lines(source), build=["g++"]))
    return Native(language="cpp", mode="tests", candidate=build, toolchain=toolchain,
                  compile_time_limit_s=compile_time_limit_s)  # type: ignore[arg-type]


def test_split_keeps_every_line_number() -> None:
    source = "/* doc */\n#include<vector>\nusing namespace std;\nint f() { return 1; }\n"
    spec = _spec(source)
    key, header, body = pch_split(spec, spec.candidate)
    assert header == "#include<vector>\nusing namespace std;\n"
    assert body.count("\n") == source.count("\n") and "int f() { return 1; }" in body.split("\n")[3]
    assert "#include" not in body.split("int f()")[0] and "/* doc */" in body
    # The key is the header's text (and toolchain, flags, limits), not the rest of the program.
    other = _spec(source.replace("return 1", "return 2"))
    assert pch_split(other, other.candidate)[0] == key
    # The limits as numbers: 20.0 is 20; another limit is another key.
    same = _spec(source, compile_time_limit_s=20.0)
    assert pch_split(same, same.candidate)[0] == key
    tighter = _spec(source, compile_time_limit_s=19)
    assert pch_split(tighter, tighter.candidate)[0] != key


def test_the_three_builds_of_a_problem_share_the_prompts_header() -> None:
    """The candidate, the judge and the server each start with the prompt's include block: one header for all."""
    from sandbox.languages import get

    row = humaneval_x_rows("cpp")[0]
    spec = jobs.tests_spec(get("cpp"), Source("humaneval-x", row["prompt"], row["test"], row["canonical_solution"],
                                             row["declaration"]), "g++ 12", 256 << 20)
    headers = {pch_split(spec, build)[1] for build in spec.builds}  # type: ignore[index]
    assert headers == {"#include<stdio.h>\n#include<vector>\n#include<math.h>\nusing namespace std;\n"}


def test_prebuilt_headers_are_the_datasets_include_blocks() -> None:
    """The image's prebuilt headers (sandbox/languages/cpp/headers.json) are exactly the distinct headers of the
    judge, server and candidate builds of HumanEval-X's 164 problems (in order of first use) and of the MultiPL-E
    rows in tests/data. A change to header_lines or to how the builds start that changes them fails here:
    regenerate the file with `headers_json()` below."""
    assert json.loads(HEADERS_JSON.read_text())["headers"] == prebuilt_headers()


HEADERS_JSON = Path(cpp.__file__).parent / "cpp" / "headers.json"


def prebuilt_headers() -> list[str]:
    from sandbox.languages import get

    language = get("cpp")
    sources = [Source("humaneval-x", row["prompt"], row["test"], row["canonical_solution"], row["declaration"])
               for row in humaneval_x_rows("cpp")]
    sources += [Source("multipl-e", row["prompt"], row["tests"]) for row in multipl_e_rows("cpp")]
    headers: list[str] = []
    for source in sources:
        spec = jobs.tests_spec(language, source, "g++ 12", 256 << 20)
        for build in spec.builds:
            split = pch_split(spec, build)
            if split is not None and split[1] not in headers:
                headers.append(split[1])
    return headers


def headers_json() -> str:
    note = ("Headers precompiled into the C++ image (sandbox/languages/cpp/prebuild.py): the distinct include blocks "
            "of the judge, server and candidate builds of HumanEval-X's C++ problems and of MultiPL-E's C++ rows, as "
            "passk's jobs make them. Generated by tests/test_cpp_header.py headers_json().")
    return json.dumps({"note": note, "headers": prebuilt_headers()}, indent=1) + "\n"
