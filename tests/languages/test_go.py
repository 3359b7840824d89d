"""Go end to end: HumanEval-X's 164 canonical solutions, broken variants, MultiPL-E rows imported with the CLI and a
stdio problem, through the API over HTTP, a worker process, and the Go sandbox image (built on demand); in the same
run, the hostile property: on every problem, the canonical solution inside a harmless trick passes and a wrong
answer inside a hostile wrapper (tests/languages/go_attacks.py) does not. And how a problem becomes the judge's
and the candidate's programs (no Docker)."""

from __future__ import annotations

import pytest

from sandbox.languages import go
from sandbox.languages.split import SplitError
from sandbox.languages.split import TestSource as Source
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import humaneval_x_rows, multipl_e_rows
from tests.languages.go_attacks import ATTACKS, TRICKS, wrapped, wrong_answer

# Broken completions of Go/0 (`func HasCloseElements(numbers []float64, threshold float64) bool {`, the
# prompt imports "math"), each with the verdict passk must give it.
WRONG = "    return false\n}\n"
EXITED_EARLY = "the program exited with status 0 before its tests finished"
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
    # A panic in a goroutine of the candidate's ends its process, as it ends `go test`'s.
    "goroutine panic": ("    go func() { panic(\"passk: late\") }()\n    time.Sleep(time.Second)\n    return false\n}\n",
                        "error"),
    "runtime.Goexit": ("    runtime.Goexit()\n    return false\n}\n\nimport \"runtime\"\n", "error"),
    "init() that does nothing": (endtoend.AfterCanonical("\nfunc init() {\n}\n"), "passed"),
    # Names of the test binary's own, declared by the candidate's package: its tests never run, its main is not
    # the binary's.
    "tests and a main of its own": (endtoend.AfterCanonical(
        "\nfunc TestPasskForged(t *testing.T) {\n}\n\nfunc main() {\n    panic(\"never called\")\n}\n"), "passed"),
}

# MultiPL-E rows (tests/data/multipl-e/go.jsonl): completions continue the prompt and close the function.
M_COMPLETIONS = {
    "HumanEval_53_add": {
        "add": ("    return x + y\n}\n", "passed"),
        "add wrong": ("    return x - y\n}\n", "failed"),
    },
    "HumanEval_2_truncate_number": {
        "truncate_number": ("    return number - math.Floor(number)\n}\n", "passed"),
        "truncate_number compile error": ("    return number\n", "compile_error"),
    },
    "HumanEval_8_sum_product": {
        "sum_product": ("    sum, product := 0, 1\n    for _, n := range numbers {\n        sum += n\n        product *= n\n"
                        "    }\n    return []interface{}{sum, product}\n}\n", "passed"),
    },
    "HumanEval_136_largest_smallest_integers": {
        "largest_smallest_integers": (
            "    var largest, smallest interface{}\n    for _, n := range lst {\n"
            "        if n < 0 && (largest == nil || n > largest.(int)) {\n            largest = n\n        }\n"
            "        if n > 0 && (smallest == nil || n < smallest.(int)) {\n            smallest = n\n        }\n"
            "    }\n    return []interface{}{largest, smallest}\n}\n", "passed"),
        "largest_smallest_integers zeros": ("    return []interface{}{0, 0}\n}\n", "failed"),
    },
    "HumanEval_22_filter_integers": {
        "filter_integers": ("    result := []int{}\n    for _, value := range values {\n"
                            "        if i, ok := value.(int); ok {\n            result = append(result, i)\n        }\n"
                            "    }\n    return result\n}\n", "passed"),
    },
    "HumanEval_20_find_closest_elements": {
        "find_closest_elements": (
            "    best, distance := []interface{}{}, -1.0\n    for i := range numbers {\n        for j := range numbers {\n"
            "            if d := math.Abs(numbers[i] - numbers[j]); i != j && (distance < 0 || d < distance) {\n"
            "                a, b := math.Min(numbers[i], numbers[j]), math.Max(numbers[i], numbers[j])\n"
            "                best, distance = []interface{}{a, b}, d\n            }\n        }\n    }\n    return best\n}\n",
            "passed"),
    },
}

STDIO_SOLUTION = (
    "package main\n\nimport (\n    \"bufio\"\n    \"fmt\"\n    \"os\"\n)\n\nfunc main() {\n"
    "    in := bufio.NewReader(os.Stdin)\n    var a, b int64\n    for {\n"
    "        if _, err := fmt.Fscan(in, &a, &b); err != nil {\n            return\n        }\n"
    "        fmt.Println(a + b)\n    }\n}\n"
)

# A MultiPL-E row whose tests do not compile under any harness ([]interface{} values in a [][]int literal): its
# judge does not build, and every sample of it is passk's `sandbox_error` (not the program's fault).
BROKEN_ROWS = {"HumanEval_87_get_row"}


def test_go_program_building() -> None:
    """Imports are merged into one block after the package clause, unused ones made blank, used helper
    packages added (as the original harness adds them)."""
    text = go.humaneval_x_program("import (\n    \"math\"\n    \"strings\"\n)\n\nfunc F(x float64) float64 {\n",
                                  "", "    return math.Abs(x) + float64(len(fmt.Sprint(x)))\n}\n",
                                  "func TestF(t *testing.T) {\n    assert := assert.New(t)\n    assert.Equal(1.0, F(-1))\n}\n")
    assert text.startswith("package main\n\nimport (\n")
    header = text.split(")\n", 1)[0]
    assert '"math"' in header and '_ "strings"' in header and '"fmt"' in header
    assert '"testing"' in header and '"github.com/stretchr/testify/assert"' in header
    assert "func main()" in go.stdio_program(STDIO_SOLUTION) and "main()\n\tpassk_os.Exit(0)" in go.stdio_program(STDIO_SOLUTION)
    assert go.assemble("package x_test\n\nfunc f() {}\n", package="main").startswith("package main\n")


def test_the_judge_holds_the_tests_and_a_stub_the_candidate_the_completion() -> None:
    row = humaneval_x_rows("go")[0]
    completion = row["canonical_solution"] + "\nfunc init() {}\n"
    programs = go.programs(Source("humaneval-x", row["prompt"], row["test"], completion, row["declaration"]))
    judge = programs.judge["main_test.go"]
    candidate = programs.candidate["main_test.go"]
    # The judge: the prompt's code (its imports, its docstring), a stub of the same signature, the tests, and a
    # TestMain that reports a pass; none of the completion.
    assert "func HasCloseElements(passk_a0 []float64, passk_a1 float64) bool {" in judge
    assert 'passk_wire.Call("HasCloseElements", []interface{}{&passk_r0}, &passk_a0, &passk_a1)' in judge
    assert row["test"] in judge and "passk_wire.Main(passk_m)" in judge
    assert row["canonical_solution"].strip() not in judge and "func init" not in judge
    # The candidate: the prompt and the completion, and a file of its own serving the function; no tests.
    assert row["canonical_solution"] in candidate and "func init() {}" in candidate
    assert "TestHasCloseElements" not in candidate and "TestHasCloseElements" not in programs.candidate[go.SERVE_FILE]
    assert 'passk_wire.Serve("HasCloseElements", HasCloseElements)' in programs.candidate[go.SERVE_FILE]


def test_signatures_are_read_as_go_reads_them() -> None:
    def entry(signature: str):  # type: ignore[no-untyped-def]
        source = Source("humaneval-x", f"import (\n    \"fmt\"\n)\n\n// doc {{\n{signature} {{\n", "", "}\n")
        return go.programs(source), next(iter(go.programs(source).judge.values()))

    cases = {
        "func AnyInt(x, y, z interface{}) bool": "func AnyInt(passk_a0 interface{}, passk_a1 interface{}, passk_a2 interface{}) bool {",
        "func F(a, b int, c ...string) (int, error)": "func F(passk_a0 int, passk_a1 int, passk_a2 ...string) (int, error) {",
        "func F(int, string) (result map[rune]int)": "func F(passk_a0 int, passk_a1 string) map[rune]int {",
        "func F(f func(a, b int) int, m map[string][]int) [2]interface{}":
            "func F(passk_a0 func(a, b int) int, passk_a1 map[string][]int) [2]interface{} {",
        "func F(\n    a int,\n    b chan int,\n)": "func F(passk_a0 int, passk_a1 chan int) {",
    }
    for signature, stub in cases.items():
        _, judge = entry(signature)
        assert stub in judge, (signature, judge)
    _, judge = entry("func F(a, b int) (int, error)")
    assert "var passk_r1 error" in judge and "return passk_r0, passk_r1" in judge
    _, judge = entry("func F()")
    assert 'passk_wire.Call("F", nil)' in judge
    for signature, reason in (("func (r T) Method() int", "method"), ("func G[T any](x T) T", "generic"),
                              ("func F(a int, []string) int", "mixes"), ("func main()", "main()")):
        with pytest.raises(SplitError, match=reason):
            entry(signature)


def test_every_humaneval_x_and_stored_multipl_e_row_splits() -> None:
    for row in humaneval_x_rows("go"):
        programs = go.programs(Source("humaneval-x", row["prompt"], row["test"], row["canonical_solution"],
                                          row["declaration"]))
        assert row["test"] in programs.judge["main_test.go"], row["task_id"]
    rows = multipl_e_rows("go")
    assert len(rows) >= 10 and BROKEN_ROWS <= {row["name"] for row in rows}
    for row in rows:
        programs = go.programs(Source("multipl-e", row["prompt"], row["tests"], "    panic(0)\n}\n"))
        judge, candidate = programs.judge["main_test.go"], programs.candidate["main_test.go"]
        # Both are package main (a `<name>_test` package is an external test package, built only by `go test`).
        assert judge.startswith("package main\n") and candidate.startswith("package main\n"), row["name"]
        assert row["tests"] in judge and "panic(0)" in candidate and "panic(0)" not in judge, row["name"]


def _humaneval_x_with_property() -> endtoend.Case:
    """The canonical solutions and variants, and after each canonical solution its two property samples (the
    samples of a problem together, so that its judge is compiled once per container)."""
    case = endtoend.humaneval_x_case("go", "go", VARIANTS, time_limit_s=5.0)
    tricks, attacks = list(TRICKS.items()), list(ATTACKS.items())
    samples = []
    for index, (row, canonical) in enumerate(zip(humaneval_x_rows("go"), case.samples, strict=False)):
        task, completion, verdict = canonical[1], canonical[2], canonical[3]
        trick, attack = tricks[index % len(tricks)], attacks[index % len(attacks)]
        samples += [canonical,
                    (f"trick {task}: {trick[0]}", task, wrapped(trick[1], completion), verdict),
                    (f"hostile {task}: {attack[0]}", task, wrapped(attack[1], wrong_answer(row)), endtoend.NOT_PASSED)]
    case.samples = samples + case.samples[len(humaneval_x_rows("go")):]
    return case


@pytest.fixture(scope="module")
def go_run(stack: Stack) -> tuple[dict[str, dict], endtoend.Case]:
    humaneval_x = _humaneval_x_with_property()
    results = endtoend.check_language(stack, "go", {
        "humaneval-x-go": humaneval_x,
        "multipl-e-go": endtoend.multipl_e_case("go", M_COMPLETIONS),
        "stdio-go": endtoend.stdio_case("go", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("a + b", "a - b"),
                                        compile_error="package main\n\nfunc main() { return 1 }\n"),
    })
    return results, humaneval_x


@pytest.mark.slow
def test_go_end_to_end(stack: Stack, go_run: tuple[dict[str, dict], endtoend.Case]) -> None:
    results, humaneval_x = go_run
    assert "undefinedName" in results["compile error"]["detail"], results["compile error"]
    for label in ("early os.Exit(0)", "init() os.Exit(0)", "initialiser os.Exit(0)", "goroutine os.Exit(0)"):
        assert EXITED_EARLY in results[label]["detail"], results[label]
    assert "runtime error: index out of range" in results["runtime panic"]["detail"], results["runtime panic"]
    assert "runtime.Goexit" in results["runtime.Goexit"]["detail"], results["runtime.Goexit"]
    assert "--- FAIL: TestHasCloseElements" in results["wrong answer"]["detail"], results["wrong answer"]
    assert sum(r["verdict"] == "compile_error" for r in endtoend.case_results(results, humaneval_x)) == 1
    assert "case 1 of 2" in results["stdio wrong"]["detail"], results["stdio wrong"]
    endtoend.assert_toolchain(stack, "go", "humaneval-x-go", "go version go1.19")


@pytest.mark.slow
def test_go_hostile_property(go_run: tuple[dict[str, dict], endtoend.Case]) -> None:
    """Every problem: its canonical solution inside a harmless trick passes (as the canonical solution itself
    does), a wrong answer inside a hostile wrapper does not; no sample is sandbox_error."""
    results, humaneval_x = go_run
    tricks = [(label, verdict) for label, _, _, verdict in humaneval_x.samples if label.startswith("trick ")]
    hostile = [label for label, *_ in humaneval_x.samples if label.startswith("hostile ")]
    assert len(tricks) == len(hostile) == 164
    assert all(results[label]["verdict"] == "passed" for label, verdict in tricks if verdict == "passed"), tricks
    assert not [label for label in hostile if results[label]["verdict"] in ("passed", "sandbox_error")]
    assert not [label for label, _ in tricks if results[label]["verdict"] == "sandbox_error"]
