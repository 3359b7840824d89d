"""How C++ problems split into the judge's, the server's and the candidate's files (sandbox/languages/cpp.py),
without Docker: every HumanEval-X problem and every stored MultiPL-E row, MultiPL-E's unions, and the problems
passk refuses when the dataset is created."""

from __future__ import annotations

import pytest

from sandbox.languages import cpp
from sandbox.languages.split import SplitError
from sandbox.languages.split import TestSource as Source
from service.api.datasets.schemas import DatasetCreate
from service.api.datasets.service import _validate_split
from service.core.exceptions import InvalidInput
from tests.languages.conftest import humaneval_x_rows, multipl_e_rows

UNION = ("union Union_std_string_long{\n    std::string f0;\n    long f1;    Union_std_string_long(std::string _f0) : "
         "f0(_f0) {}\n    Union_std_string_long(long _f1) : f1(_f1) {}\n    ~Union_std_string_long() {}\n    bool "
         "operator==(std::string f) {\n        return f0 == f ;\n    }    bool operator==(long f) {\n        return f1 "
         "== f ;\n    }\n};\n")
HEAD = "#include<assert.h>\n#include<bits/stdc++.h>\n"
# HumanEval_137's kind: a member of "type" std::nullopt, which is a value.
NULLOPT = UNION.replace("long f1", "std::nullopt f1").replace("(long _f1)", "(std::nullopt _f1)").replace(
    "operator==(long f)", "operator==(std::nullopt f)")
TESTS = "}\nint main() {\n    auto candidate = rounded_avg;\n    assert(candidate((7), (5)) == -1);\n}\n"


def test_every_humaneval_x_problem_splits() -> None:
    for row in humaneval_x_rows("cpp"):
        programs = cpp.programs(Source("humaneval-x", row["prompt"], row["test"], row["canonical_solution"],
                                           row["declaration"]))
        # The candidate holds the model's code and nothing of the tests; the judge the tests, not the model's code.
        assert programs.candidate["main.cpp"] == row["prompt"] + row["canonical_solution"] + "\n"
        assert f'#line 1 "tests"\n{row["test"]}' in programs.judge["judge.cpp"]
        assert row["canonical_solution"] not in programs.judge["judge.cpp"]


def test_every_stored_multipl_e_row_splits() -> None:
    rows = multipl_e_rows("cpp")
    assert len(rows) >= 20
    for row in rows:
        programs = cpp.programs(Source("multipl-e", row["prompt"], row["tests"], "    return {};"))
        assert programs.candidate["main.cpp"].endswith("    return {};\n}")
        # The `}` that closes the function in the tests is blanked in place: the tests keep their line numbers.
        assert '#line 1 "tests"\n \nint main() {' in programs.judge["judge.cpp"]


def test_a_union_becomes_a_struct_that_knows_its_member_on_the_same_lines() -> None:
    prompt = HEAD + UNION + "// doc\nUnion_std_string_long rounded_avg(long n, long m) {\n"
    programs = cpp.programs(Source("multipl-e", prompt, TESTS, "    return -1;"))
    candidate = programs.candidate["main.cpp"]
    assert "union Union_std_string_long{" not in candidate and "struct Union_std_string_long {" in candidate
    assert "passk_member(1)" in candidate and "return passk_member == 0 && f0 == f;" in candidate
    # Every line after the union keeps its number (compile errors point at the model's own lines).
    assert candidate.split("\n").index("Union_std_string_long rounded_avg(long n, long m) {") == \
        prompt.split("\n").index("Union_std_string_long rounded_avg(long n, long m) {")
    # The same struct in all three files (one definition in the candidate's program, which links the server).
    struct = candidate[candidate.index("struct"):candidate.index("};") + 2]
    assert struct in programs.judge["judge.cpp"] and struct in programs.support["passk_server.cpp"]
    assert "struct Codec<Union_std_string_long>" in programs.judge["judge.cpp"]


@pytest.mark.parametrize(("prompt", "reason"), [
    (HEAD + NULLOPT + "Union_std_string_long f(long x) {\n", "std::nullopt"),
    (HEAD + "union U { long a; float b; };\nU f(long x) {\n", "does not record which member"),
    (HEAD + UNION.replace("    ~Union", "    int extra;\n    ~Union") + "Union_std_string_long f(long x) {\n",
     "not MultiPL-E's generated union"),
    (HEAD + UNION + "long f(Union_std_string_long x) {\n", "return value only"),
    (HEAD + UNION + "std::vector<Union_std_string_long> f(long x) {\n", "whole return value"),
])
def test_unions_passk_cannot_carry_are_refused(prompt: str, reason: str) -> None:
    with pytest.raises(SplitError, match=reason):
        cpp.programs(Source("multipl-e", prompt, TESTS))


def test_a_dataset_with_a_problem_passk_cannot_split_is_refused_when_created() -> None:
    good = {"format": "multipl-e", "id": "good", "language": "cpp", "prompt": HEAD + "long f(long x) {\n",
            "tests": "}\nint main() {\n    assert(f(1) == 1);\n}\n"}
    bad = {**good, "id": "HumanEval_137_compare_one",
           "prompt": HEAD + NULLOPT + "Union_std_string_long f(long x) {\n"}
    _validate_split(DatasetCreate(name="ok", language="cpp", problems=[good]))
    with pytest.raises(InvalidInput) as refused:
        _validate_split(DatasetCreate(name="bad", language="cpp", problems=[good, bad]))
    error = refused.value.detail[0]
    assert error["loc"] == ["body", "problems", 1] and "HumanEval_137_compare_one" in error["msg"]
    assert "std::nullopt" in error["msg"]
