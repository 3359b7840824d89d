"""Clojure end to end: MultiPL-E's Clojure rows with right and wrong completions, broken variants (an exception, an
infinite loop, a memory hog, an early exit, a syntax error) and a stdio problem, through the API over HTTP, a worker
process and the Clojure sandbox image (built on demand); and the split of every stored MultiPL-E Clojure row into a
judge and a candidate (no container)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import clojure, get, split
from sandbox.languages.base import ReferencePass
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import DATA, multipl_e_rows

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "clj.json").read_text())
# The verdict of each kind of completion in tests/data/multipl-e/solutions/clj.json. A problem marked unsolvable has a
# prompt that does not read (its docstring's quotes are not escaped): every completion is an error.
VERDICTS = {"correct": "passed", "wrong": "failed", "throws": "error", "loops": "timeout", "exits": "failed",
            "memory": "memory", "syntax_error": "error"}
# Broken completions of a problem whose prompt reads (HumanEval_53_add: x + y).
BROKEN = {
    "throws": "  (throw (IllegalStateException. \"boom\")))\n",
    "loops": "  (loop [] (recur)))\n",
    "exits": "  (System/exit 0))\n",
    "memory": "  (loop [acc []] (recur (conj acc (long-array 100000)))))\n",
    "syntax_error": "  (+ x y)\n",
}
# Problems whose right and wrong answers run end to end: an integer, a float, a vector, a vector of nils, and one
# whose prompt does not read.
END_TO_END = ("HumanEval_53_add", "HumanEval_2_truncate_number", "HumanEval_25_factorize",
              "HumanEval_136_largest_smallest_integers", "HumanEval_12_longest")

STDIO_SOLUTION = ("(doseq [line (line-seq (java.io.BufferedReader. *in*))]\n"
                  "  (let [[a b] (map parse-long (clojure.string/split line #\" +\"))]\n"
                  "    (println (+ a b))))\n")


def completions() -> dict[str, dict[str, tuple[str, str]]]:
    """problem -> label -> (completion, verdict)."""
    found = {problem: {f"{problem} {kind}": (text, "error" if "unsolvable" in SOLUTIONS[problem] else VERDICTS[kind])
                       for kind, text in SOLUTIONS[problem].items()
                       if kind == "correct" or (kind == "wrong" and "unsolvable" not in SOLUTIONS[problem])}
             for problem in END_TO_END}
    found["HumanEval_53_add"].update({f"HumanEval_53_add {kind}": (text, VERDICTS[kind])
                                      for kind, text in BROKEN.items()})
    return found


def test_every_row_splits_into_a_judge_and_a_candidate() -> None:
    rows = multipl_e_rows("clj")
    assert len(rows) == 25 and set(SOLUTIONS) <= {row["name"] for row in rows} and len(SOLUTIONS) >= 10
    for row in rows:
        completion = SOLUTIONS.get(row["name"], {}).get("correct", "  nil)\n")
        programs = clojure.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], completion))
        candidate, judge = programs.candidate["main.clj"], programs.judge["main.clj"]
        name = row["name"].split("_", 2)[2]
        # The candidate is the original program up to its tests; the tests are the judge's alone.
        assert candidate == row["prompt"] + completion + "\n" + clojure.serve_statement(name)
        assert row["tests"] in judge and completion not in judge and "clojure.test" not in candidate
        assert judge.startswith(f"(defn {name} [") and f'(passk.judge/call "{name}" [' in judge
        # The judge has no docstring: it reads even where the prompt's does not.
        assert '"""' not in judge and judge.count('"') % 2 == 0


def test_stub_keeps_the_parameters() -> None:
    cases = {
        "(defn f\n  \"Doc with \"quotes\" and (parens.\"\n  [a b]\n  ":
            '(defn f [a b]\n  (passk.judge/call "f" [a b]))\n',
        "(defn g\n  [ ]\n": '(defn g []\n  (passk.judge/call "g" []))\n',
        "(defn h?\n  \"doc\"\n  [x-y z*]\n": '(defn h? [x-y z*]\n  (passk.judge/call "h?" [x-y z*]))\n',
    }
    for signature, stub in cases.items():
        head = "(ns user)\n;; A comment with (defn x and a )\n(def s \"(\")\n" + signature
        parts = clojure.split_problem(split.TestSource("multipl-e", head, "(f 1)\n", "  1)\n"))
        assert clojure.stub(parts) == stub
        assert parts.before == head[:head.index(signature)]
    for bad in ("(defn f\n  [a & rest]\n", "(defn f\n  [{:keys [a]}]\n", "(defn f\n  [[a b]]\n", "", "(def x 1)\n",
                "(let [x 1]\n(defn f\n  [a]\n", ")\n(defn f\n  [a]\n", "(defn f\n  [a]\n  (let [x 1]\n"):
        with pytest.raises(split.SplitError):
            clojure.programs(split.TestSource("multipl-e", bad, "(f 1)\n", ")\n"))


def test_reference_rule() -> None:
    language = get("clojure")
    assert language.reference_commands == (
        "java -Dclojure.main.report=stderr -cp /usr/share/java/clojure-1.11.jar clojure.main main.clj",)
    assert language.reference_pass == ReferencePass(stdout_has="\n0 failures, 0 errors.\n", timeout_s=15.0)
    summary = "\nRan 1 tests containing 3 assertions.\n0 failures, 0 errors.\n"
    assert language.reference_pass.passes(0, summary, "")
    assert not language.reference_pass.passes(0, summary.replace("0 failures", "1 failures"), "")
    assert not language.reference_pass.passes(1, summary, "")
    assert language.run_argv(256 << 20)[:3] == ("java", "-Xmx176m", "-Xss8m")
    assert language.run_code_names == ("clojure",) and get("clojure").aliases == ("clj",)


@pytest.mark.slow
def test_clojure_end_to_end(stack: Stack) -> None:
    multipl_e = endtoend.multipl_e_case("clj", completions())
    results = endtoend.check_language(stack, "clojure", {
        "multipl-e-clj": multipl_e,
        "stdio-clj": endtoend.stdio_case("clojure", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("(+ ", "(- "),
                                         time_limit_s=5.0, more=(
            ("stdio syntax error", "(println (+ 1\n", "error"),
            ("stdio exception", "(throw (ex-info \"boom\" {}))\n", "error"),
        )),
    })
    assert "FAIL expected: (= (candidate 0 1) 1), actual: (not (= -1 1))" in results["HumanEval_53_add wrong"]["detail"]
    assert "java.lang.IllegalStateException: boom" in results["HumanEval_53_add throws"]["detail"]
    exits = results["HumanEval_53_add exits"]
    assert "before its tests finished" in exits["detail"] and "ended_early" in exits["flags"]
    assert "Syntax error reading source" in results["HumanEval_53_add syntax_error"]["detail"]
    assert "Syntax error macroexpanding clojure.core/defn" in results["HumanEval_12_longest correct"]["detail"]
    endtoend.assert_toolchain(stack, "clojure", "multipl-e-clj", "Clojure 1.11.1 (OpenJDK 17")
    endtoend.check_run_code(stack, "clojure", prints="(println 123)\n", raises="(throw (ex-info \"boom\" {}))\n",
                            loops="(loop [] (recur))\n", broken="(println (+ 1\n",
                            echoes="(println (parse-long (read-line)))\n")
