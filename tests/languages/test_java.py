"""Java end to end: HumanEval-X's 164 canonical solutions, broken variants, MultiPL-E rows (javatuples) and stdio
problems, through the API over HTTP, a worker process, and the Java sandbox image (built on demand)."""

from __future__ import annotations

import pytest

from sandbox.languages.java import main_class, stdio_program
from sandbox.languages.java import tests_program as wrap_tests
from tests.e2e.conftest import Stack
from tests.languages import endtoend

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
}

STDIO_MAIN = (
    "import java.util.*;\n\npublic class Main {\n    public static void main(String[] args) {\n"
    "        Scanner in = new Scanner(System.in);\n"
    "        while (in.hasNextLong()) { long a = in.nextLong(), b = in.nextLong(); System.out.println(a + b); }\n"
    "    }\n}\n"
)
STDIO_OTHER_NAME = STDIO_MAIN.replace("public class Main", "public class Solution")


def test_main_class_and_wrapping() -> None:
    assert main_class("public class Main {\n public static void main(String[] a) {}\n}\n") == "Main"
    nested = 'class Problem {\n  static class P { String s = "}"; }\n  public static void main(String[] a) { }\n}\n'
    assert main_class(nested) == "Problem"
    assert main_class("class Outer { static class In { public static void main(String[] a) {} } }") == "Outer.In"
    wrapped = wrap_tests("class Problem { public static void main(String[] a) {} }")
    assert "Problem.main(args);" in wrapped and "PASSK_PASS_TOKEN" in wrapped
    assert "public class Solution" not in stdio_program(STDIO_OTHER_NAME)
    assert "Solution.main(args);" in stdio_program(STDIO_OTHER_NAME)


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
    assert "pass token" in results["early System.exit(0)"]["detail"]
    assert "OutOfMemoryError" in results["memory hog"]["detail"] or "memory" in results["memory hog"]["detail"]
    assert "case 1 of 2" in results["stdio wrong"]["detail"]
