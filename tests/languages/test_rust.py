"""Rust end to end: HumanEval-X's 164 canonical solutions, broken variants and a stdio problem, through the
API over HTTP, a worker process, and the Rust sandbox image (built on demand)."""

from __future__ import annotations

import pytest

from sandbox.languages import get
from tests.e2e.conftest import Stack
from tests.languages.conftest import exceptions
from tests.languages import endtoend

# Broken completions of Rust/0 (`fn has_close_elements(numbers:Vec<f32>, threshold: f32) -> bool{`), each
# with the verdict passk must give it.
WRONG = "    return false;\n}\n"
VARIANTS = {
    **endtoend.broken_variants(
        wrong=WRONG,
        compile_error="    return undefined_name;\n}\n",
        runtime="    let v: Vec<i32> = Vec::new();\n    return v[numbers.len()] == 0;\n}\n",
        runtime_label="runtime panic",
        loop="    loop {}\n}\n",
        memory="    let mut hog: Vec<Vec<u8>> = Vec::new();\n    loop { hog.push(vec![1u8; 1 << 24]); }\n}\n",
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
    humaneval_x = endtoend.humaneval_x_case("rust", "rust", VARIANTS, time_limit_s=5.0)
    results = endtoend.check_language(stack, "rust", {
        "humaneval-x-rust": humaneval_x,
        "stdio-rust": endtoend.stdio_case("rust", STDIO_SOLUTION,
                                 wrong=STDIO_SOLUTION.replace("pair[0] + pair[1]", "pair[0] - pair[1]"),
                                 compile_error="fn main() { let x: i32 = \"no\"; }\n"),
    }, timeout_s=3000)
    assert "undefined_name" in results["compile error"]["detail"], results["compile error"]
    for label in ("early process::exit(0)", "static initialiser exit(0)", "thread exit(0)"):
        assert "pass token" in results[label]["detail"], results[label]
    # Rust/50's tests use rand 0.4's gen_range(low, high): a compile error with Debian's rand 0.8, as in cargo.
    allowed = exceptions("rust")
    assert {results[task_id]["verdict"] for task_id in allowed} == {"compile_error"}
    assert sum(r["verdict"] == "compile_error" for r in endtoend.case_results(results, humaneval_x)) == 1 + len(allowed)
    assert "case 1 of 2" in results["stdio wrong"]["detail"], results["stdio wrong"]
    endtoend.assert_toolchain(stack, "rust", "humaneval-x-rust", "rustc 1.63")
