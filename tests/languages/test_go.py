"""Go end to end: HumanEval-X's 164 canonical solutions, broken variants and a stdio problem, through the API
over HTTP, a worker process, and the Go sandbox image (built on demand)."""

from __future__ import annotations

import pytest

from sandbox.languages import get
from service.formats.loader import to_problem
from tests.e2e.conftest import Stack, wait_for_run
from tests.languages.conftest import exceptions, humaneval_x_rows

# Broken completions of Go/0 (`func HasCloseElements(numbers []float64, threshold float64) bool {`, the
# prompt imports "math"), each with the verdict passk must give it.
WRONG = "    return false\n}\n"
VARIANTS = {
    "wrong answer": (WRONG, "failed"),
    "compile error": ("    return undefinedName\n}\n", "compile_error"),
    "runtime panic": ("    var xs []int\n    return xs[len(numbers)] == 0\n}\n", "error"),
    "infinite loop": ("    for {\n    }\n}\n", "timeout"),
    "memory hog": (
        "    hog := [][]byte{}\n    for {\n        b := make([]byte, 1<<24)\n        for i := range b { b[i] = 1 }\n"
        "        hog = append(hog, b)\n    }\n}\n",
        "memory",
    ),
    "early os.Exit(0)": ("    os.Exit(0)\n    return false\n}\n\nimport \"os\"\n", "failed"),
    # The candidate's code that runs before the tests: init() and a package-level variable's initialiser.
    "init() os.Exit(0)": (WRONG + "\nfunc init() {\n    os.Exit(0)\n}\n\nimport \"os\"\n", "failed"),
    "initialiser os.Exit(0)": (WRONG + "\nvar passkEarly = func() int { os.Exit(0); return 0 }()\n\nimport \"os\"\n",
                               "failed"),
    # ... or ends the process with status 0 from a goroutine while the tests run.
    "goroutine os.Exit(0)": ("    go func() { os.Exit(0) }()\n    time.Sleep(time.Second)\n    return false\n}\n\nimport \"os\"\n",
                             "failed"),
}

STDIO_SOLUTION = (
    "package main\n\nimport (\n    \"bufio\"\n    \"fmt\"\n    \"os\"\n)\n\nfunc main() {\n"
    "    in := bufio.NewReader(os.Stdin)\n    var a, b int64\n    for {\n"
    "        if _, err := fmt.Fscan(in, &a, &b); err != nil {\n            return\n        }\n"
    "        fmt.Println(a + b)\n    }\n}\n"
)
STDIO_CASES = [{"input": "1 2\n", "output": "3\n"}, {"input": "40 2\n5 5\n", "output": "42\n10\n"}]


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
    client = stack.client(timeout=600)
    rows = humaneval_x_rows("go")
    assert len(rows) == 164
    created = client.post("/v1/datasets", json={
        "name": "humaneval-x-go", "language": "go", "time_limit_s": 5.0, "memory_mb": 256,
        "problems": [to_problem(row) for row in rows],
    })
    assert created.status_code == 201, created.text
    assert created.json()["language"] == "go"

    samples = [{"problem_id": row["task_id"], "completion": row["canonical_solution"]} for row in rows]
    expected = {}
    for label, (completion, verdict) in VARIANTS.items():
        samples.append({"problem_id": "Go/0", "completion": completion})
        expected[len(samples) - 1] = (label, verdict)
    samples.append({"problem_id": "Go/0", "completion": rows[0]["canonical_solution"] + "\nfunc init() {\n}\n"})
    expected[len(samples) - 1] = ("init() that does nothing", "passed")

    stdio = client.post("/v1/datasets", json={"name": "stdio-go", "language": "go", "problems": [
        {"format": "stdio", "id": "sum", "cases": STDIO_CASES}]})
    assert stdio.status_code == 201, stdio.text

    stack.start_worker(concurrency=2)
    run_id = client.post("/v1/runs", json={
        "dataset_id": created.json()["id"], "model": "canonical+broken", "sampling": {"temperature": 0.0},
        "samples": samples,
    }).raise_for_status().json()["id"]
    s_run = client.post("/v1/runs", json={
        "dataset_id": stdio.json()["id"], "model": "s", "sampling": {"temperature": 0.0}, "samples": [
            {"problem_id": "sum", "completion": STDIO_SOLUTION},
            {"problem_id": "sum", "completion": STDIO_SOLUTION.replace("a + b", "a - b")},
            {"problem_id": "sum", "completion": "package main\n\nfunc main() { return 1 }\n"},
        ],
    }).raise_for_status().json()["id"]

    run = wait_for_run(client, run_id, timeout_s=2400)
    s = wait_for_run(client, s_run, timeout_s=600)
    stack.stop_workers()
    assert run["status"] == "completed", run
    assert run["progress"]["by_verdict"].get("sandbox_error", 0) == 0, run["progress"]

    with stack.passk_client() as passk:
        got = list(passk.iter_samples(run_id))
        s_got = list(passk.iter_samples(s_run))
    allowed = exceptions("go")
    # Canonical solutions whose verdict depends on Go's randomised map order: either verdict is right.
    either = {task_id for task_id, why in allowed.items() if why.startswith("nondeterministic")}
    wrong = []
    for index, (sample, mine) in enumerate(zip(samples, got, strict=True)):
        if index < 164:
            if sample["problem_id"] in either:
                continue
            if (mine["verdict"] == "passed") == (sample["problem_id"] in allowed):
                wrong.append((sample["problem_id"], mine["verdict"], (mine["detail"] or "")[:300]))
        else:
            label, verdict = expected[index]
            if mine["verdict"] != verdict:
                wrong.append((label, verdict, mine["verdict"], (mine["detail"] or "")[:300]))
    assert not wrong, wrong
    by_variant = {expected[i][0]: got[i] for i in expected}
    assert "undefinedName" in by_variant["compile error"]["detail"], by_variant["compile error"]
    for label in ("early os.Exit(0)", "init() os.Exit(0)", "initialiser os.Exit(0)", "goroutine os.Exit(0)"):
        assert "pass token" in by_variant[label]["detail"], by_variant[label]
    assert sum(x["verdict"] == "compile_error" for x in got) == 1

    assert s["status"] == "completed"
    assert [x["verdict"] for x in s_got] == ["passed", "failed", "compile_error"], s_got
    assert "case 1 of 2" in s_got[1]["detail"], s_got[1]

    languages = {entry["name"]: entry for entry in client.get("/v1/languages").raise_for_status().json()}
    assert languages["go"]["toolchain"].startswith("go version go1.19"), languages["go"]
    detail = client.get(f"/v1/datasets/{created.json()['id']}").raise_for_status().json()
    assert detail["language"] == "go" and detail["toolchain"] == languages["go"]["toolchain"]
