"""Go end to end: HumanEval-X's 164 canonical solutions, broken variants and a stdio problem, through the API
over HTTP, a worker process, and the Go sandbox image (built on demand)."""

from __future__ import annotations

import pytest

from sandbox.languages import get
from tests.e2e.conftest import Stack
from tests.languages import endtoend

# Broken completions of Go/0 (`func HasCloseElements(numbers []float64, threshold float64) bool {`, the
# prompt imports "math"), each with the verdict passk must give it.
WRONG = "    return false\n}\n"
VARIANTS = {
    **endtoend.broken_variants(
        wrong=WRONG,
        compile_error="    return undefinedName\n}\n",
        runtime="    var xs []int\n    return xs[len(numbers)] == 0\n}\n",
        runtime_label="runtime panic",
        loop="    for {\n    }\n}\n",
        memory="    hog := [][]byte{}\n    for {\n        b := make([]byte, 1<<24)\n        for i := range b { b[i] = 1 }\n"
        "        hog = append(hog, b)\n    }\n}\n",
    ),
    "early os.Exit(0)": ("    os.Exit(0)\n    return false\n}\n\nimport \"os\"\n", "failed"),
    # The candidate's code that runs before the tests: init() and a package-level variable's initialiser.
    "init() os.Exit(0)": (WRONG + "\nfunc init() {\n    os.Exit(0)\n}\n\nimport \"os\"\n", "failed"),
    "initialiser os.Exit(0)": (WRONG + "\nvar passkEarly = func() int { os.Exit(0); return 0 }()\n\nimport \"os\"\n",
                               "failed"),
    # ... or ends the process with status 0 from a goroutine while the tests run.
    "goroutine os.Exit(0)": ("    go func() { os.Exit(0) }()\n    time.Sleep(time.Second)\n    return false\n}\n\nimport \"os\"\n",
                             "failed"),
    "init() that does nothing": (endtoend.AfterCanonical("\nfunc init() {\n}\n"), "passed"),
}

STDIO_SOLUTION = (
    "package main\n\nimport (\n    \"bufio\"\n    \"fmt\"\n    \"os\"\n)\n\nfunc main() {\n"
    "    in := bufio.NewReader(os.Stdin)\n    var a, b int64\n    for {\n"
    "        if _, err := fmt.Fscan(in, &a, &b); err != nil {\n            return\n        }\n"
    "        fmt.Println(a + b)\n    }\n}\n"
)


def test_go_program_building() -> None:
    """Imports are merged into one block after the package clause, unused ones made blank, used helper
    packages added (as the original harness adds them), and the TestMain prints the token last."""
    go = get("go")
    text = go.humaneval_x_program("import (\n    \"math\"\n    \"strings\"\n)\n\nfunc F(x float64) float64 {\n",
                                  "", "    return math.Abs(x) + float64(len(fmt.Sprint(x)))\n}\n",
                                  "func TestF(t *testing.T) {\n    assert := assert.New(t)\n    assert.Equal(1.0, F(-1))\n}\n")
    assert text.startswith("package main\n\nimport (\n")
    header = text.split(")\n", 1)[0]
    assert '"math"' in header and '_ "strings"' in header and '"fmt"' in header
    assert '"testing"' in header and '"github.com/stretchr/testify/assert"' in header
    wrapped = go.tests_program(text)
    assert wrapped.count("package main") == 1 and wrapped.count("import (") == 1
    assert wrapped.rstrip().endswith("passk_os.Exit(passk_code)\n}")
    assert "func main()" in go.stdio_program(STDIO_SOLUTION) and "main()\n\tpassk_os.Exit(0)" in go.stdio_program(STDIO_SOLUTION)


@pytest.mark.slow
def test_go_end_to_end(stack: Stack) -> None:
    humaneval_x = endtoend.humaneval_x_case("go", "go", VARIANTS, time_limit_s=5.0)
    results = endtoend.check_language(stack, "go", {
        "humaneval-x-go": humaneval_x,
        "stdio-go": endtoend.stdio_case("go", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("a + b", "a - b"),
                               compile_error="package main\n\nfunc main() { return 1 }\n"),
    })
    assert "undefinedName" in results["compile error"]["detail"], results["compile error"]
    for label in ("early os.Exit(0)", "init() os.Exit(0)", "initialiser os.Exit(0)", "goroutine os.Exit(0)"):
        assert "pass token" in results[label]["detail"], results[label]
    assert sum(r["verdict"] == "compile_error" for r in endtoend.case_results(results, humaneval_x)) == 1
    assert "case 1 of 2" in results["stdio wrong"]["detail"], results["stdio wrong"]
    endtoend.assert_toolchain(stack, "go", "humaneval-x-go", "go version go1.19")
