"""Rust end to end: HumanEval-X's 164 canonical solutions, broken variants and a stdio problem, through the
API over HTTP, a worker process, and the Rust sandbox image (built on demand)."""

from __future__ import annotations

import pytest

from sandbox.languages import get
from service.formats.loader import to_problem
from tests.e2e.conftest import Stack, wait_for_run
from tests.languages.conftest import exceptions, humaneval_x_rows

# Broken completions of Rust/0 (`fn has_close_elements(numbers:Vec<f32>, threshold: f32) -> bool{`), each
# with the verdict passk must give it.
WRONG = "    return false;\n}\n"
VARIANTS = {
    "wrong answer": (WRONG, "failed"),
    "compile error": ("    return undefined_name;\n}\n", "compile_error"),
    "runtime panic": ("    let v: Vec<i32> = Vec::new();\n    return v[numbers.len()] == 0;\n}\n", "error"),
    "infinite loop": ("    loop {}\n}\n", "timeout"),
    "memory hog": (
        "    let mut hog: Vec<Vec<u8>> = Vec::new();\n    loop { hog.push(vec![1u8; 1 << 24]); }\n}\n", "memory",
    ),
    "early process::exit(0)": ("    std::process::exit(0);\n}\n", "failed"),
    # The candidate's code that runs before the tests: a function in .init_array (what #[ctor] expands to).
    "static initialiser exit(0)": (
        WRONG + "\n#[used]\n#[link_section = \".init_array\"]\n"
        "static PASSK_EARLY: extern \"C\" fn() = { extern \"C\" fn early() { std::process::exit(0); } early };\n",
        "failed",
    ),
    # ... or from another thread while the tests run.
    "thread exit(0)": (
        "    std::thread::spawn(|| std::process::exit(0));\n"
        "    std::thread::sleep(std::time::Duration::from_secs(1));\n    false\n}\n",
        "failed",
    ),
    # A test of the candidate's own that passes does not make the failing ones pass.
    "extra passing test": (WRONG + "\n#[test]\nfn zzzz_passk_always() {}\n", "failed"),
}

STDIO_SOLUTION = (
    "use std::io::{self, Read};\n\nfn main() {\n    let mut s = String::new();\n"
    "    io::stdin().read_to_string(&mut s).unwrap();\n    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
    "    for pair in v.chunks(2) {\n        println!(\"{}\", pair[0] + pair[1]);\n    }\n}\n"
)
STDIO_CASES = [{"input": "1 2\n", "output": "3\n"}, {"input": "40 2\n5 5\n", "output": "42\n10\n"}]


def test_rust_program_building() -> None:
    rust = get("rust")
    text = rust.humaneval_x_program("/* doc */\n", "use rand::Rng;\nfn f(x: i32) -> i32{\n", "    x + 1\n}\n",
                                    "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn t() { assert_eq!(f(1), 2); }\n}\n")
    assert text.startswith("\nfn main(){ \n } \nuse rand::Rng;\nfn f(x: i32) -> i32{\n/* doc */\n")
    wrapped = rust.tests_program(text)
    assert wrapped.startswith("#![feature(test, custom_test_frameworks)]\n#![test_runner(crate::passk_test_runner)]\n")
    assert "test_main_static" in wrapped and "passk_main" not in wrapped
    # MultiPL-E's programs check in `fn main`: it becomes a test.
    assert "fn passk_main() {\n    main();\n}" in rust.tests_program("fn main() {\n    assert_eq!(1, 1);\n}\n")
    assert "let _ = main();" in rust.stdio_program(STDIO_SOLUTION)


@pytest.mark.slow
def test_rust_end_to_end(stack: Stack) -> None:
    client = stack.client(timeout=600)
    rows = humaneval_x_rows("rust")
    assert len(rows) == 164
    created = client.post("/v1/datasets", json={
        "name": "humaneval-x-rust", "language": "rust", "time_limit_s": 5.0, "memory_mb": 256,
        "problems": [to_problem(row) for row in rows],
    })
    assert created.status_code == 201, created.text
    assert created.json()["language"] == "rust"

    samples = [{"problem_id": row["task_id"], "completion": row["canonical_solution"]} for row in rows]
    expected = {}
    for label, (completion, verdict) in VARIANTS.items():
        samples.append({"problem_id": "Rust/0", "completion": completion})
        expected[len(samples) - 1] = (label, verdict)

    stdio = client.post("/v1/datasets", json={"name": "stdio-rust", "language": "rust", "problems": [
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
            {"problem_id": "sum", "completion": STDIO_SOLUTION.replace("pair[0] + pair[1]", "pair[0] - pair[1]")},
            {"problem_id": "sum", "completion": "fn main() { let x: i32 = \"no\"; }\n"},
        ],
    }).raise_for_status().json()["id"]

    run = wait_for_run(client, run_id, timeout_s=3000)
    s = wait_for_run(client, s_run, timeout_s=600)
    stack.stop_workers()
    assert run["status"] == "completed", run
    assert run["progress"]["by_verdict"].get("sandbox_error", 0) == 0, run["progress"]

    with stack.passk_client() as passk:
        got = list(passk.iter_samples(run_id))
        s_got = list(passk.iter_samples(s_run))
    allowed = exceptions("rust")
    wrong = []
    for index, (sample, mine) in enumerate(zip(samples, got, strict=True)):
        if index < 164:
            if (mine["verdict"] == "passed") == (sample["problem_id"] in allowed):
                wrong.append((sample["problem_id"], mine["verdict"], (mine["detail"] or "")[:300]))
        else:
            label, verdict = expected[index]
            if mine["verdict"] != verdict:
                wrong.append((label, verdict, mine["verdict"], (mine["detail"] or "")[:300]))
    assert not wrong, wrong
    by_variant = {expected[i][0]: got[i] for i in expected}
    assert "undefined_name" in by_variant["compile error"]["detail"], by_variant["compile error"]
    for label in ("early process::exit(0)", "static initialiser exit(0)", "thread exit(0)"):
        assert "pass token" in by_variant[label]["detail"], by_variant[label]
    # Rust/50's tests use rand 0.4's gen_range(low, high): a compile error with Debian's rand 0.8, as in cargo.
    assert {got[i]["verdict"] for i, s in enumerate(samples[:164]) if s["problem_id"] in allowed} == {"compile_error"}
    assert sum(x["verdict"] == "compile_error" for x in got) == 1 + len(allowed)

    assert s["status"] == "completed"
    assert [x["verdict"] for x in s_got] == ["passed", "failed", "compile_error"], s_got
    assert "case 1 of 2" in s_got[1]["detail"], s_got[1]

    languages = {entry["name"]: entry for entry in client.get("/v1/languages").raise_for_status().json()}
    assert languages["rust"]["toolchain"].startswith("rustc 1.63"), languages["rust"]
    detail = client.get(f"/v1/datasets/{created.json()['id']}").raise_for_status().json()
    assert detail["language"] == "rust" and detail["toolchain"] == languages["rust"]["toolchain"]
