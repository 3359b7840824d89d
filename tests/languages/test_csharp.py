"""C# end to end: MultiPL-E's C# rows with right and wrong completions, broken variants (an exception, an infinite
loop, an early exit), a compile error and a stdio problem, through the API over HTTP, a worker process and the C#
sandbox image (built on demand); /run_code under SandboxFusion's name `csharp` (a right, a wrong, a looping, a
failing-to-compile and a stdin program); and the split of every stored MultiPL-E C# row into a judge and a candidate
(no container)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import csharp, get, resolve, split
from sandbox.languages.base import ReferencePass
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import DATA, multipl_e_rows

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "cs.json").read_text())
# The verdict of each kind of completion in tests/data/multipl-e/solutions/cs.json.
VERDICTS = {"correct": "passed", "wrong": "failed", "throws": "error", "loops": "timeout", "exits": "failed"}


def completions() -> dict[str, dict[str, tuple[str, str]]]:
    """problem -> label -> (completion, verdict): every completion of the solutions file (a row no completion can
    pass, whose tests compare lists by reference, fails its right answer too)."""
    found: dict[str, dict[str, tuple[str, str]]] = {}
    for problem, variants in SOLUTIONS.items():
        found[problem] = {f"{problem} {kind}": (text, "failed" if kind == "correct" and "unsolvable" in variants
                                                else VERDICTS[kind])
                          for kind, text in variants.items() if kind in VERDICTS}
    found["HumanEval_23_strlen"]["HumanEval_23_strlen compile error"] = ("        return str.Lenght;\n", "compile_error")
    found["HumanEval_23_strlen"]["HumanEval_23_strlen memory"] = (
        "        var all = new List<long[]>();\n        while (true) all.Add(new long[1 << 20]);\n", "memory")
    return found


STDIO_SOLUTION = (
    "using System;\nclass Sum {\n    static void Main() {\n        string line;\n"
    "        while ((line = Console.ReadLine()) != null) {\n            var v = line.Split(' ');\n"
    "            Console.WriteLine(long.Parse(v[0]) + long.Parse(v[1]));\n        }\n    }\n}\n"
)
# /run_code: SandboxFusion's request, a case per program (as tests/e2e/test_run_code_sandboxfusion.py's).
def test_every_row_splits_into_a_judge_and_a_candidate() -> None:
    rows = multipl_e_rows("cs")
    assert len(rows) == 25
    for row in rows:
        completion = SOLUTIONS.get(row["name"], {}).get("correct", "        return default;\n")
        programs = csharp.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], completion))
        candidate, judge = programs.candidate["main.cs"], programs.judge["main.cs"]
        # The candidate is the original program up to its tests, closed; the tests are the judge's alone.
        assert candidate == row["prompt"] + completion + "\n" + "}" * 2
        assert row["tests"].split("\n", 1)[1] in judge and completion not in judge
        assert judge.startswith(row["prompt"][:row["prompt"].rindex("public static")])
        assert "Passk.Judge.Call<" in judge and "Passk.Judge.Run(typeof(PasskJudge)" in judge
        server = programs.candidate["PasskMain.cs"]
        name = row["prompt"].rsplit("(", 1)[0].split()[-1]
        assert f'Passk.Server.Serve(typeof(PasskMain), "{name}")' in server and f"Problem.{name}(" in server


def test_stub_keeps_the_signature() -> None:
    head = ("using System;\nusing System.Collections.Generic;\nnamespace N {\nclass Problem {\n"
            "    // A comment with a { and a Fake(long x) {\n    static string s = \"{\";\n"
            "    public static Tuple<long, List<string>> F(List<long> a, Dictionary<string,long> b, long c = 3) {\n")
    parts = csharp.split_problem(split.TestSource("multipl-e", head, "    }\n}\n}\n", "        return null;\n"))
    assert parts.entry.name == "F" and [name for name, _ in parts.entry.params] == ["a", "b", "c"]
    assert parts.entry.returns == "Tuple<long, List<string>>"
    assert csharp.stub(parts) == (
        "    public static Tuple<long, List<string>> F(List<long> a, Dictionary<string,long> b, long c = 3) {\n"
        "        return Passk.Judge.Call<Tuple<long, List<string>>>(System.Reflection.MethodBase.GetCurrentMethod(),"
        " new object[] {a, b, c});\n    }\n")
    server = csharp.server(parts)
    assert "static Tuple<long, List<string>> PasskCall(List<long> a, Dictionary<string,long> b, long c = 3)" in server
    assert "return N.Problem.F(a, b, c);" in server and server.startswith("using System;\nusing System.Collections.Generic;\n")
    for bad in ("class P {\n    static void F(ref long a) {\n", "class P {\n    static void F(out long a) {\n",
                "static long F(long a) {\n", "class P {\n    long x = 1; {\n"):
        with pytest.raises(split.SplitError):
            csharp.programs(split.TestSource("multipl-e", bad, "    }\n}\n", "        return 0;\n"))


def test_reference_rule() -> None:
    language = get("csharp")
    assert resolve("cs") is language and resolve("C#") is language and language.run_code_names == ("csharp",)
    rule = language.reference_pass
    assert rule == ReferencePass(timeout_s=5.0, stderr_fails_on=(
        "System.Diagnostics.DefaultTraceListener.Fail", "Unhandled Exception"))
    assert rule.passes(0, "", "") and not rule.passes(0, "", "Unhandled Exception:\nSystem.Exception: boom")
    assert not rule.passes(1, "main.cs(3,1): error CS1525", "") and not rule.passes(0, "", "", timed_out=True)
    assert language.candidate_argv(256 << 20) == ("env", "MONO_PATH=/opt/passk/csharp", "mono", "main.exe")
    assert language.run_argv(256 << 20) == ("mono", "main.exe")


@pytest.mark.slow
def test_csharp_end_to_end(stack: Stack) -> None:
    multipl_e = endtoend.multipl_e_case("cs", completions())
    results = endtoend.check_language(stack, "csharp", {
        "multipl-e-cs": multipl_e,
        "stdio-cs": endtoend.stdio_case("csharp", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace(") + long", ") - long"),
                                        compile_error=STDIO_SOLUTION.replace("Console.", "Consol.", 1), more=(
            ("stdio exception", "class P { static void Main() { throw new System.Exception(\"boom\"); } }", "error"),
        )),
    })
    assert "Debug.Assert failed" in results["HumanEval_23_strlen wrong"]["detail"]
    assert "System.Exception: boom" in results["HumanEval_23_strlen throws"]["detail"]
    exits = results["HumanEval_23_strlen exits"]
    assert "before its tests finished" in exits["detail"] and "ended_early" in exits["flags"]
    endtoend.assert_toolchain(stack, "csharp", "multipl-e-cs", "Mono JIT compiler version 6.8")
    # /run_code as SandboxFusion answers it.
    answers = endtoend.check_run_code(
        stack, "csharp", prints="class P { static void Main() { System.Console.WriteLine(123); } }",
        raises="class P { static void Main() { throw new System.Exception(\"boom\"); } }",
        loops="class P { static void Main() { long i = 0; while (true) { i++; } } }",
        broken="class P { static void Main() { int x = ; } }", compile_timeout=30,
        echoes="class P { static void Main() { System.Console.WriteLine(long.Parse(System.Console.ReadLine())); } }")
    assert "System.Exception: boom" in answers["raises"]["run_result"]["stderr"], answers["raises"]
