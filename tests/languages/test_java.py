"""Java end to end: HumanEval-X's 164 canonical solutions, broken variants, MultiPL-E rows (javatuples) and stdio
problems, through the API over HTTP, a worker process, and the Java sandbox image (built on demand)."""

from __future__ import annotations

import pytest

from sandbox.languages.java import carried, main_class, programs, stdio_program
from sandbox.languages.split import SplitError
from sandbox.languages.split import TestSource as Source
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import humaneval_x_rows, multipl_e_rows

# Broken completions of Java/0 (`public boolean hasCloseElements(List<Double> numbers, double threshold) {` in
# `class Solution`), each with the verdict passk must give it.
WRONG = "        return false;\n    }\n}\n"
VARIANTS = {
    **endtoend.broken_variants(
        wrong=WRONG,
        compile_error="        return undefinedName;\n    }\n}\n",
        runtime='        throw new IllegalStateException("boom");\n    }\n}\n',
        loop="        while (true) { }\n    }\n}\n",
        memory="        List<long[]> hog = new ArrayList<>();\n        while (true) hog.add(new long[1 << 20]);\n    }\n}\n",
    ),
    "early System.exit(0)": ("        System.exit(0);\n        return false;\n    }\n}\n", "failed"),
    "a candidate's own AssertionError": ("        assert false : \"mine\";\n        return true;\n    }\n}\n", "failed"),
    "stack overflow": ("        return hasCloseElements(numbers, threshold);\n    }\n}\n", "error"),
    # The candidate's code that runs before the tests: Solution's static initialiser, run when the tests'
    # main first uses the class.
    "static initialiser System.exit(0)": ("        return false;\n    }\n    static { System.exit(0); }\n}\n", "failed"),
    # ... or a shutdown hook that turns the failed tests' status 1 into 0 (Java's atexit).
    "shutdown hook halt(0)": (
        "        return false;\n    }\n"
        "    static { Runtime.getRuntime().addShutdownHook(new Thread(() -> Runtime.getRuntime().halt(0))); }\n}\n",
        "failed",
    ),
}

# MultiPL-E stops a Java completion at "\n    }\n": it is the method's body, the tests close the method.
M_COMPLETIONS = {
    "HumanEval_23_strlen": {
        "strlen": ("        return string.length();\n", "passed"),
        "strlen wrong": ("        return 0L;\n", "failed"),
    },
    "HumanEval_8_sum_product": {
        "sum_product (javatuples)": ("        long s = 0, p = 1;\n        for (long x : numbers) { s += x; p *= x; }\n"
            "        return Pair.with(s, p);\n", "passed"),
        "sum_product type error": ("        return 0;\n", "compile_error"),
    },
    "HumanEval_2_truncate_number": {
        "truncate_number": ("        return number % 1.0f;\n", "passed"),
        "truncate_number wrong (-ea asserts run)": ("        return number;\n", "failed"),
    },
    # ArrayList<Object>: each element crosses with its runtime type (Long, Float, String, a map, a list).
    "HumanEval_22_filter_integers": {
        "filter_integers (dynamic values)": (
            "        ArrayList<Long> out = new ArrayList<>();\n"
            "        for (Object v : values) if (v instanceof Long) out.add((Long) v);\n        return out;\n", "passed"),
        "filter_integers takes Integer for Long": (
            "        ArrayList<Long> out = new ArrayList<>();\n"
            "        for (Object v : values) if (v instanceof Integer) out.add(0L);\n        return out;\n", "failed"),
    },
    "HumanEval_111_histogram": {
        "histogram (HashMap)": (
            "        HashMap<String, Long> counts = new HashMap<>();\n"
            "        for (String w : test.split(\" \")) if (!w.isEmpty()) counts.merge(w, 1L, Long::sum);\n"
            "        long best = counts.values().stream().mapToLong(Long::longValue).max().orElse(0L);\n"
            "        HashMap<String, Long> out = new HashMap<>();\n"
            "        for (Map.Entry<String, Long> e : counts.entrySet()) if (e.getValue() == best) out.put(e.getKey(), best);\n"
            "        return out;\n", "passed"),
    },
    "HumanEval_95_check_dict_case": {
        "check_dict_case (HashMap argument)": (
            "        if (dict.isEmpty()) return false;\n"
            "        boolean lower = dict.keySet().stream().allMatch(k -> k.chars().allMatch(Character::isLowerCase));\n"
            "        boolean upper = dict.keySet().stream().allMatch(k -> k.chars().allMatch(Character::isUpperCase));\n"
            "        return lower || upper;\n", "passed"),
    },
    "HumanEval_112_reverse_delete": {
        "reverse_delete (Pair<String, Boolean>)": (
            "        StringBuilder sb = new StringBuilder();\n"
            "        for (char ch : s.toCharArray()) if (c.indexOf(ch) < 0) sb.append(ch);\n"
            "        String r = sb.toString();\n"
            "        return Pair.with(r, new StringBuilder(r).reverse().toString().equals(r));\n", "passed"),
    },
    "HumanEval_128_prod_signs": {
        "prod_signs (Optional<Long>)": (
            "        if (arr.isEmpty()) return Optional.empty();\n        long sign = 1, sum = 0;\n"
            "        for (long x : arr) { sum += Math.abs(x); sign *= Long.signum(x); }\n"
            "        return Optional.of(sign * sum);\n", "passed"),
    },
    "HumanEval_12_longest": {
        "longest (Optional<String>)": (
            "        String best = null;\n"
            "        for (String s : strings) if (best == null || s.length() > best.length()) best = s;\n"
            "        return Optional.ofNullable(best);\n", "passed"),
    },
    "HumanEval_20_find_closest_elements": {
        "find_closest_elements (Pair<Float, Float>)": (
            "        float a = 0, b = 0, d = Float.MAX_VALUE;\n"
            "        for (int i = 0; i < numbers.size(); i++) for (int j = i + 1; j < numbers.size(); j++) {\n"
            "            float x = numbers.get(i), y = numbers.get(j);\n"
            "            if (Math.abs(x - y) < d) { d = Math.abs(x - y); a = Math.min(x, y); b = Math.max(x, y); }\n"
            "        }\n        return Pair.with(a, b);\n", "passed"),
    },
    # Its published tests compare a Pair with an Optional: no answer passes them, under MultiPL-E's harness too.
    "HumanEval_136_largest_smallest_integers": {
        "largest_smallest_integers (tests that never pass)": (
            "        return Pair.with(Optional.empty(), Optional.empty());\n", "failed"),
    },
}

STDIO_MAIN = (
    "import java.util.*;\n\npublic class Main {\n    public static void main(String[] args) {\n"
    "        Scanner in = new Scanner(System.in);\n"
    "        while (in.hasNextLong()) { long a = in.nextLong(), b = in.nextLong(); System.out.println(a + b); }\n"
    "    }\n}\n"
)
STDIO_OTHER_NAME = STDIO_MAIN.replace("public class Main", "public class Solution")


def test_main_class_and_stdio_wrapping() -> None:
    assert main_class("public class Main {\n public static void main(String[] a) {}\n}\n") == "Main"
    nested = 'class Problem {\n  static class P { String s = "}"; }\n  public static void main(String[] a) { }\n}\n'
    assert main_class(nested) == "Problem"
    assert main_class("class Outer { static class In { public static void main(String[] a) {} } }") == "Outer.In"
    assert "public class Solution" not in stdio_program(STDIO_OTHER_NAME)
    assert "Solution.main(args);" in stdio_program(STDIO_OTHER_NAME)


def test_every_humaneval_x_problem_splits_and_the_judge_holds_none_of_the_completion() -> None:
    marker = "/* the model's own code \\u007d */"
    for row in humaneval_x_rows("java"):
        split = programs(Source("humaneval-x", row["prompt"], row["test"], marker + row["canonical_solution"],
                                    row["declaration"]))
        judge = split.judge["Main.java"]
        assert marker not in judge and marker in split.candidate["Main.java"], row["task_id"]
        assert "passk.Judge.call(new Object() {}" in judge and "passk.Judge.pass();" in judge
        assert "Main.main(args);" in judge and "passk.Server.serve(PasskMain.class" in split.candidate["PasskMain.java"]
        assert split.support is None


def test_every_stored_multipl_e_row_splits() -> None:
    rows = multipl_e_rows("java")
    assert rows
    for row in rows:
        split = programs(Source("multipl-e", row["prompt"], row["tests"], "        return null;\n"))
        judge = split.judge["Main.java"]
        assert "Problem.main(args);" in judge and "public static void main" in judge, row["name"]
        assert split.candidate["Main.java"].endswith("return null;\n\n}}"), row["name"]


def test_signatures_and_refusals() -> None:
    prompt = "import java.util.*;\nclass Problem {\n    public static Pair<Long, Optional<String>> f(ArrayList<Long> xs, float y) {\n"
    tests = "    }\n    public static void main(String[] args) {\n    assert(f(null, 1f) == null);\n    }\n\n}\n"
    split = programs(Source("multipl-e", prompt, tests, "        return null;\n"))
    server = split.candidate["PasskMain.java"]
    assert "static Pair<Long, Optional<String>> passkCall(ArrayList<Long> xs, float y)" in server
    assert "return Problem.f(xs, y);" in server and "import java.util.*;" in server
    for kind in ("int", "List<List<Integer>>", "Map<String, Integer>", "Optional<Object>", "int[]", "long...",
                 "java.util.List<String>", "Triplet<Long, Long, Long>"):
        assert carried(kind), kind
    for kind in ("Thread", "List<?>", "Function<Long, Long>", "T"):
        assert not carried(kind), kind
    with pytest.raises(SplitError, match="cannot carry"):
        programs(Source("multipl-e", prompt.replace("float y", "Runnable y"), tests, ""))
    with pytest.raises(SplitError, match="not in a class"):
        programs(Source("multipl-e", "static long f(long x) {\n", "}\n", ""))
    with pytest.raises(SplitError, match="plain return type"):
        programs(Source("multipl-e", "class P {\n    static <T> T f(T x) {\n", "    }\n}\n", ""))


@pytest.mark.slow
def test_java_end_to_end(stack: Stack) -> None:
    results = endtoend.check_language(stack, "java", {
        "humaneval-x-java": endtoend.humaneval_x_case("java", "java", VARIANTS, time_limit_s=5.0),
        "multipl-e-java": endtoend.multipl_e_case("java", M_COMPLETIONS),
        "stdio-java": endtoend.stdio_case(
            "java", STDIO_MAIN, wrong=STDIO_MAIN.replace("a + b", "a - b"),
            compile_error="public class Main { void main( }\n",
            more=(("stdio, public class of another name", STDIO_OTHER_NAME, "passed"),), time_limit_s=5.0,
        ),
    })
    assert "cannot find symbol" in results["compile error"]["detail"]
    assert "before its tests finished" in results["early System.exit(0)"]["detail"]
    assert "AssertionError" in results["a candidate's own AssertionError"]["detail"]
    assert "StackOverflowError" in results["stack overflow"]["detail"]
    assert "OutOfMemoryError" in results["memory hog"]["detail"] or "memory" in results["memory hog"]["detail"]
    assert "case 1 of 2" in results["stdio wrong"]["detail"]
