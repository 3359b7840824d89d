"""D end to end: MultiPL-E's D rows with right and wrong completions, broken variants (an exception, an infinite
loop, a memory hog, a crash, an early exit, a compile error) and a stdio problem, through the API over HTTP, a worker
process and the D sandbox image (built on demand); /run_code under SandboxFusion's name `D_ut` (a right, a wrong, a
looping, a failing-to-compile, a throwing and a stdin program, unittest blocks that pass and fail); and the split of
every stored MultiPL-E D row into a judge and a candidate (no container)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import d, get, resolve, split
from sandbox.languages.base import ReferencePass
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import DATA, multipl_e_rows

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "d.json").read_text())
# The verdict of each kind of completion in tests/data/multipl-e/solutions/d.json.
VERDICTS = {"correct": "passed", "wrong": "failed", "throws": "error", "loops": "timeout", "exits": "failed"}


def completions() -> dict[str, dict[str, tuple[str, str]]]:
    """problem -> label -> (completion, verdict): every problem's right and wrong completions, the other kinds of
    the solutions file on one problem (test_d_reference.py runs them all), and more broken ones."""
    found = {problem: {f"{problem} {kind}": (text, VERDICTS[kind]) for kind, text in variants.items()
                       if isinstance(text, str) and (kind in ("correct", "wrong") or problem == "HumanEval_23_strlen")}
             for problem, variants in SOLUTIONS.items()}
    found["HumanEval_23_strlen"].update({
        "HumanEval_23_strlen compile error": ("{\n    return string.lenght;\n}\n", "compile_error"),
        "HumanEval_23_strlen memory": ("{\n    long[][] all;\n    while (true) all ~= new long[1 << 20];\n}\n", "memory"),
        "HumanEval_23_strlen crash": ("{\n    int* p = null;\n    return *p;\n}\n", "crashed"),
        "HumanEval_23_strlen index error": ("{\n    long[] none;\n    return none[5];\n}\n", "error"),
    })
    # Its prompt uses Nullable without importing std.typecons: no program compiles, under MultiPL-E either.
    found["HumanEval_95_check_dict_case"] = {
        "HumanEval_95_check_dict_case without its import": ("{\n    return false;\n}\n", "compile_error")}
    return found


STDIO_SOLUTION = (
    "import std.stdio, std.array, std.conv;\n\nvoid main() {\n    foreach (line; stdin.byLine) {\n"
    "        auto v = line.split;\n        writeln(v[0].to!long + v[1].to!long);\n    }\n}\n"
)
# /run_code: SandboxFusion's request, a case per program (as tests/e2e/test_run_code_sandboxfusion.py's).
def test_every_row_splits_into_a_judge_and_a_candidate() -> None:
    rows = multipl_e_rows("d")
    assert len(rows) == 24 and set(SOLUTIONS) <= {row["name"] for row in rows} and len(SOLUTIONS) >= 10
    for row in rows:
        completion = SOLUTIONS.get(row["name"], {}).get("correct", "{\n    return typeof(return).init;\n}\n")
        programs = d.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], completion))
        # The candidate is the original program up to its tests; the tests are the judge's alone.
        assert programs.candidate["main.d"] == row["prompt"] + completion + "\n"
        judge = programs.judge["judge.d"]
        assert judge.endswith('#line 1 "tests"\n' + row["tests"] + "\n") and completion not in judge
        name = row["name"].split("_", 2)[2]
        signature = row["prompt"].rstrip().splitlines()[-1].strip()
        before = row["prompt"][:row["prompt"].rindex(signature)]
        # A prompt that uses Nullable without importing std.typecons: the judge imports it (the candidate does not).
        imports = "" if "std.typecons" in before else "import std.typecons;\n"
        assert judge.startswith(before + imports + signature + " {\n")
        assert f'passkCall!(typeof(return))("{name}"' in judge
        server = programs.candidate["passk_main.d"]
        assert f"&passkCandidate.{name};" in server and "unittest" not in server


def test_entry_reads_the_signature() -> None:
    head = "import std.typecons;\n/* long fake(long x) { */\n// string g(\n"
    cases = {
        "long f(long a, long b)": ("f", "long", [("a", "long"), ("b", "long")]),
        "Tuple!(Nullable!(long), Nullable!(long)) g(long[] lst)": (
            "g", "Tuple!(Nullable!(long), Nullable!(long))", [("lst", "long[]")]),
        "Nullable!(string[string]) h(Nullable!(string[string]) dict, float[] x)": (
            "h", "Nullable!(string[string])", [("dict", "Nullable!(string[string])"), ("x", "float[]")]),
        "string k(string string)": ("k", "string", [("string", "string")]),
        "long none()": ("none", "long", []),
    }
    for signature, (name, returns, params) in cases.items():
        entry = d.entry(head + signature + " \n")
        assert (entry.name, entry.returns, list(entry.params)) == (name, returns, params)
        assert entry.signature == signature
    for bad in ("long f(long a) {\n", "import std.math;\n", "long f(long)\n", "f(long a)\n"):
        with pytest.raises(split.SplitError):
            d.entry(bad)


def test_reference_rule() -> None:
    language = get("d")
    assert resolve("dlang") is language and language.run_code_names == ("D_ut",)
    assert language.reference_commands == ("ldmd2 -unittest -main -of=main.bin main.d", "./main.bin")
    assert language.reference_pass == ReferencePass(timeout_s=15.0)
    assert language.reference_pass.passes(0, "1 modules passed unittests", "")
    assert not language.reference_pass.passes(1, "", "core.exception.AssertError@main.d(20): unittest failure")
    assert language.run_argv(256 << 20) == ("./main",) and language.judge_argv(256 << 20) == ("./judge",)


@pytest.mark.slow
def test_d_end_to_end(stack: Stack) -> None:
    multipl_e = endtoend.multipl_e_case("d", completions())
    results = endtoend.check_language(stack, "d", {
        "multipl-e-d": multipl_e,
        "stdio-d": endtoend.stdio_case("d", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("long + v", "long - v"),
                                       compile_error=STDIO_SOLUTION.replace("writeln", "writln"), more=(
            ("stdio exception", "void main() { throw new Exception(\"boom\"); }", "error"),
        )),
    })
    assert "AssertError@tests(" in results["HumanEval_23_strlen wrong"]["detail"]
    assert "object.Exception: boom" in results["HumanEval_23_strlen throws"]["detail"]
    assert "ArrayIndexError" in results["HumanEval_23_strlen index error"]["detail"]
    exits = results["HumanEval_23_strlen exits"]
    assert "before its tests finished" in exits["detail"] and "ended_early" in exits["flags"]
    endtoend.assert_toolchain(stack, "d", "multipl-e-d", "LDC - the LLVM D compiler (1.30")
    # /run_code as SandboxFusion answers it.
    answers = endtoend.check_run_code(
        stack, "D_ut", prints="import std.stdio;\nvoid main() { writeln(123); }",
        raises="void main() { throw new Exception(\"boom\"); }", loops="void main() { long i = 0; while (true) { i++; } }",
        broken="void main() { int x = ; }", compile_timeout=30,
        echoes="import std.stdio, std.conv, std.string;\nvoid main() { writeln(readln.strip.to!long); }",
        more={"unittest passes": "unittest\n{\n    assert(0 == 0);\n}\nvoid main(){}",
              "unittest fails": "unittest\n{\n    assert(0 == 1);\n}\nvoid main(){}"})
    assert "object.Exception@main.d(1): boom" in answers["raises"]["run_result"]["stderr"], answers["raises"]
    # D_ut builds with -unittest: the unittest blocks run in place of main, as under SandboxFusion's dmd.
    passes, fails = answers["unittest passes"], answers["unittest fails"]
    assert passes["status"] == "Success" and passes["run_result"]["stderr"] == "1 modules passed unittests\n", passes
    assert fails["status"] == "Failed" and fails["run_result"]["status"] == "Finished", fails
    assert fails["run_result"]["return_code"] == 1, fails
