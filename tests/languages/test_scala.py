"""Scala end to end: MultiPL-E's Scala rows with right and wrong completions, broken variants (an exception, an
infinite loop, a memory hog, an early exit, a compile error) and a stdio problem (right and wrong), through the API
over HTTP, a worker process and the Scala sandbox image (built on demand); /run_code under SandboxFusion's name
`scala` (a printing, a throwing, a looping, a failing-to-compile and a stdin-reading program); and the split of
every stored MultiPL-E Scala row into a judge and a candidate (no container)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import get, scala, split
from sandbox.languages.base import ReferencePass
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import DATA, multipl_e_rows

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "scala.json").read_text())
# The verdict of each kind of completion in tests/data/multipl-e/solutions/scala.json.
VERDICTS = {"correct": "passed", "wrong": "failed", "throws": "error", "loops": "timeout", "exits": "failed"}
# Right answers for the rows whose types the stored solutions lack: a Map, a List[Any] and a tuple cross the wire.
MORE_TYPES = {
    "HumanEval_111_histogram": (
        "        val words = test.split(\" \").filter(_.nonEmpty)\n"
        "        if (words.isEmpty) Map[String,Long]() else { val counts = words.groupBy(identity).mapValues(_.length.toLong);"
        " val m = counts.values.max; Map[String,Long](counts.filter(_._2 == m).toSeq: _*) }\n"),
    "HumanEval_22_filter_integers": "        values.collect { case x: Long => x }\n",
    "HumanEval_107_even_odd_palindrome": (
        "        val p = (1L to n).filter(i => i.toString == i.toString.reverse)\n"
        "        (p.count(_ % 2 == 0).toLong, p.count(_ % 2 == 1).toLong)\n"),
}


# The problems whose right and wrong answers run end to end (a Long from a String, a Float): each sample costs two
# scalac runs of seconds each, and the other stored problems' signatures add no type these and MORE_TYPES (a Map, a
# List[Any] to a List[Long], a tuple) lack.
PROBLEMS = ("HumanEval_23_strlen", "HumanEval_2_truncate_number")


def completions() -> dict[str, dict[str, tuple[str, str]]]:
    """problem -> label -> (completion, verdict): two problems' right and wrong completions (a Long, a String, a
    Float), the other kinds on one problem, more broken ones, and right answers of other types (maps, lists, a
    tuple)."""
    found = {problem: {f"{problem} {kind}": (text, VERDICTS[kind]) for kind, text in SOLUTIONS[problem].items()
                       if isinstance(text, str) and (kind in ("correct", "wrong") or problem == "HumanEval_23_strlen")}
             for problem in PROBLEMS}
    found["HumanEval_23_strlen"].update({
        "HumanEval_23_strlen compile error": ("        string.lenght.toLong\n", "compile_error"),
        "HumanEval_23_strlen memory": (
            "        val all = new java.util.ArrayList[Array[Long]]()\n"
            "        while (true) all.add(new Array[Long](1 << 20))\n        0L\n", "memory"),
    })
    for problem, text in MORE_TYPES.items():
        found[problem] = {f"{problem} correct": (text, "passed")}
    return found


STDIO_SOLUTION = (
    "object Main {\n  def main(args: Array[String]): Unit = {\n"
    "    for (line <- scala.io.Source.stdin.getLines()) {\n      val v = line.trim.split(\" \").map(_.toLong)\n"
    "      println(v(0) + v(1))\n    }\n  }\n}\n"
)
def test_every_row_splits_into_a_judge_and_a_candidate() -> None:
    rows = multipl_e_rows("scala")
    assert len(rows) == 25 and set(SOLUTIONS) <= {row["name"] for row in rows} and len(SOLUTIONS) >= 10
    for row in rows:
        completion = SOLUTIONS.get(row["name"], {}).get("correct", "        ???\n")
        programs = scala.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], completion))
        # The candidate is the original program up to its tests; the tests are the judge's alone.
        assert programs.candidate["Main.scala"] == row["prompt"] + completion + "\n}}"
        judge = programs.judge["Main.scala"]
        assert completion not in judge and "passk.Judge.pass()" in judge
        signature = row["prompt"].rstrip().splitlines()[-1].strip()
        before = row["prompt"][:row["prompt"].rindex(signature)]
        assert judge.startswith(before + "\n    " + signature[:-1].rstrip() + " {\n")
        assert "passk.Server.serve(Class.forName(\"PasskMain\")" in programs.candidate["PasskMain.scala"]


def test_types() -> None:
    cases = {
        "List[List[Long]]": "java.util.ArrayList[java.util.ArrayList[java.lang.Long]]",
        "Tuple2[Option[Long], Option[Long]]": "org.javatuples.Pair[java.util.Optional[java.lang.Long], "
                                              "java.util.Optional[java.lang.Long]]",
        "(Long, String)": "org.javatuples.Pair[java.lang.Long, java.lang.String]",
        "Map[String,Long]": "java.util.LinkedHashMap[java.lang.String, java.lang.Long]",
        "List[Any]": "java.util.ArrayList[java.lang.Object]",
        "Float": "java.lang.Float",
    }
    for text, java in cases.items():
        assert scala.java_type(scala.parse_type(text)) == java
    for bad in ("Array[Long]", "List[Long, Long]", "Either[Long, String]", "List[", "Tuple2[Long]"):
        with pytest.raises(split.SplitError):
            scala.parse_type(bad)


def test_reference_rule() -> None:
    language = get("scala")
    assert language.run_code_names == ("scala",)
    assert language.reference_commands == ("scalac Main.scala", "scala -cp . Problem")
    # MultiPL-E's JVMs run with the flags passk's have, which change nothing a program prints or returns.
    assert language.reference_pass == ReferencePass(quiet_stderr=True, build_timeout_s=45.0, env=(
        ("JAVA_OPTS", f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:SharedArchiveFile={scala.SCALAC_ARCHIVE}"),))
    assert not language.reference_pass.passes(0, "", "warning")


@pytest.mark.slow
def test_scala_end_to_end(stack: Stack) -> None:
    multipl_e = endtoend.multipl_e_case("scala", completions())
    results = endtoend.check_language(stack, "scala", {
        "multipl-e-scala": multipl_e,
        "stdio-scala": endtoend.stdio_case("scala", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("v(0) + v", "v(0) - v"),
                                           time_limit_s=5.0),
    })
    assert "AssertionError" in results["HumanEval_23_strlen wrong"]["detail"]
    assert "boom" in results["HumanEval_23_strlen throws"]["detail"]
    exits = results["HumanEval_23_strlen exits"]
    assert "ended_early" in exits["flags"]
    endtoend.assert_toolchain(stack, "scala", "multipl-e-scala", "Scala code runner version 2.11")

    # /run_code under SandboxFusion's name, after the runs (so that no request waits behind their samples).
    answers = endtoend.check_run_code(
        stack, "scala", compile_timeout=60,
        prints="object Main extends App {\n  println(123)\n}\n",
        raises="object Main extends App {\n  throw new RuntimeException(\"boom\")\n}\n",
        loops="object Main extends App {\n  var i = 0L\n  while (true) { i += 1 }\n}\n",
        broken="object Main extends App {\n  val x: Int = \n}\n",
        echoes="object Main extends App {\n  println(scala.io.StdIn.readLine().trim.toLong)\n}\n")
    assert "boom" in answers["raises"]["run_result"]["stderr"], answers["raises"]
