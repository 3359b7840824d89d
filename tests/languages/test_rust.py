"""Rust: how a problem is split into the judge and the candidate (no Docker), and end to end: HumanEval-X's 164
canonical solutions, broken variants, MultiPL-E rows imported with the CLI and a stdio problem, through the API
over HTTP, a worker process, and the Rust sandbox image (built on demand)."""

from __future__ import annotations

import pytest

from sandbox.languages import get, jobs, rust, split
from sandbox.languages.split import SplitError
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import exceptions, humaneval_x_rows, multipl_e_rows

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
    # A failed assertion of the program's own is a failure, as in one process (a panic with another message
    # is an error).
    "assertion in the program": ("    assert!(numbers.len() > 100);\n    false\n}\n", "failed"),
    "stack overflow": ("    fn deep(n: u64) -> u64 { if n == 0 { 0 } else { 1 + deep(n - 1) } }\n"
                       "    deep(u64::MAX) == 0\n}\n", "crashed"),
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
    # A test of the candidate's own is no test of the problem's (the candidate is no test crate).
    "extra passing test": (WRONG + "\n#[test]\nfn zzzz_passk_always() {}\n", "failed"),
    # A `fn main` of its own: the harness's program had one too, so it did not compile there either.
    "a main of its own": (WRONG + "\nfn main() {}\n", "compile_error"),
    # Code that looks hostile but is not: an initialiser and a macro named like the tests' do nothing to them.
    "initialiser and macro that do nothing": (endtoend.AfterCanonical(
        "\n#[used]\n#[link_section = \".init_array\"]\n"
        "static PASSK_QUIET: extern \"C\" fn() = { extern \"C\" fn quiet() {} quiet };\n"
        "#[allow(unused_macros)]\nmacro_rules! assert_eq { ($($t:tt)*) => {}; }\n"), "passed"),
}

# MultiPL-E stops a Rust completion at "\n}": it is the function's body, the tests close the function.
M_COMPLETIONS = {
    "HumanEval_23_strlen": {
        "strlen": ("    string.len() as isize\n", "passed"),
        "strlen wrong": ("    0\n", "failed"),
    },
    "HumanEval_8_sum_product": {
        "sum_product (a tuple)": ("    (numbers.iter().sum(), numbers.iter().product())\n", "passed"),
    },
    "HumanEval_12_longest": {
        "longest (an Option)": ("    let mut best: Option<String> = None;\n    for s in strings {\n"
                                "        if best.as_ref().map_or(true, |b| s.len() > b.len()) { best = Some(s); }\n"
                                "    }\n    best\n", "passed"),
    },
    "HumanEval_111_histogram": {
        "histogram (a HashMap)": ("    let mut counts: HashMap<String, isize> = HashMap::new();\n"
                                  "    for w in test.split_whitespace() { *counts.entry(w.to_string()).or_insert(0) += 1; }\n"
                                  "    let most = counts.values().cloned().max().unwrap_or(0);\n"
                                  "    counts.into_iter().filter(|(_, c)| *c == most).collect()\n", "passed"),
    },
    "HumanEval_136_largest_smallest_integers": {
        "largest_smallest_integers (Options in a tuple)": (
            "    (lst.iter().filter(|x| **x < 0).max().cloned(), lst.iter().filter(|x| **x > 0).min().cloned())\n",
            "passed"),
    },
    "HumanEval_2_truncate_number": {
        "truncate_number": ("    number % 1.0\n", "passed"),
        "truncate_number compile error": ("    number % 1.0 +\n", "compile_error"),
    },
}

STDIO_SOLUTION = (
    "use std::io::{self, Read};\n\nfn main() {\n    let mut s = String::new();\n"
    "    io::stdin().read_to_string(&mut s).unwrap();\n    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
    "    for pair in v.chunks(2) {\n        println!(\"{}\", pair[0] + pair[1]);\n    }\n}\n"
)


def _source(row: dict, completion: str | None = None) -> split.TestSource:
    return split.TestSource("humaneval-x", row["prompt"], row["test"],
                      row["canonical_solution"] if completion is None else completion, row["declaration"])


def test_every_humaneval_x_row_splits() -> None:
    """Every HumanEval-X problem splits; the judge holds the tests and none of the completion, the candidate the
    completion and none of the tests, and neither the harness's `fn main(){}`."""
    marker = "// passk-test: the completion's own text\n"
    for row in humaneval_x_rows("rust"):
        programs = rust.programs(_source(row, marker + row["canonical_solution"]))
        judge, candidate = programs.judge["judge.rs"], programs.candidate["main.rs"]
        assert row["test"] in judge and marker not in judge, row["task_id"]
        assert marker + row["canonical_solution"] in candidate and row["test"].strip() not in candidate, row["task_id"]
        assert "fn main(){" not in candidate and candidate.count("\nfn main() {\n") == 1, row["task_id"]
        assert programs.support is None


def test_every_stored_multipl_e_row_splits() -> None:
    rows = multipl_e_rows("rs")
    assert len(rows) >= 150
    for row in rows:
        programs = rust.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], "    todo!()\n"))
        judge = programs.judge["judge.rs"]
        assert "fn main() {\n    let candidate" in judge and "main();" in judge, row["name"]
        assert "todo!()" in programs.candidate["main.rs"] and "assert_eq!" not in programs.candidate["main.rs"]


def test_only_the_judge_compiles_with_unstable_features() -> None:
    """RUSTC_BOOTSTRAP is in no step's environment: only rust/build-judge.sh sets it, for the judge's compile."""
    language = get("rust")
    row = humaneval_x_rows("rust")[0]
    spec = jobs.tests_spec(language, _source(row), "rustc 1.63.0", 256 << 20)
    assert "RUSTC_BOOTSTRAP" not in spec.env and "RUSTC_BOOTSTRAP" not in " ".join(spec.candidate.compile or ())
    assert spec.judge is not None and spec.judge.compile[:2] == ["sh", rust.BUILD_JUDGE]
    assert spec.candidate.run == ["./main"] and spec.judge.run[0] == "./judge"
    stdio = jobs.stdio_spec(language, STDIO_SOLUTION, [], 1.0, "whitespace", 0.0, 0.0, "", 256 << 20)
    assert stdio.candidate.files["main.rs"] == STDIO_SOLUTION and "--test" not in (stdio.candidate.compile or ())


def test_signatures() -> None:
    source = "use std::collections::HashMap;\n/// Doc.\n#[allow(dead_code)]\npub fn f<'a>(mut a: i32, b: &'a str, c: Vec<&'a str>) -> HashMap<&'a str, (i64, Option<f64>)> {\n"
    programs = rust.programs(split.TestSource("multipl-e", source, "}\nfn main() { let _ = f; }\n", "    todo!()\n"))
    judge, candidate = programs.judge["judge.rs"], programs.candidate["main.rs"]
    assert ("pub fn f<'a>(passk_0: i32, passk_1: &'a str, passk_2: Vec<&'a str>) -> HashMap<&'a str, (i64, Option<f64>)> {\n"
            '    ::passk_wire::judge::call("f", &[&passk_0, &passk_1, &passk_2])\n}\n') in judge
    assert "#[allow(dead_code)]" not in judge and "/// Doc." in judge  # the attribute is the function's own
    # The server decodes owned values and passes references where the signature takes them.
    assert "let passk_a1: String = " in candidate and "let passk_a2: Vec<&'static str> = " in candidate
    assert "returned(&f(passk_a0, &passk_a1, passk_a2))" in candidate
    dynamic = rust.programs(split.TestSource("multipl-e", "use std::any::Any;\nfn g(x: &dyn Any, y: Box<dyn Any>, z: &[u8]) {\n",
                                       "}\nfn main() {}\n", "    todo!()\n"))
    assert "returned(&g(&*passk_a0, passk_a1, &passk_a2))" in dynamic.candidate["main.rs"]
    assert "let passk_a2: Vec<u8> = " in dynamic.candidate["main.rs"]


@pytest.mark.parametrize(("prompt", "reason"), [
    ("fn f<T: Clone>(x: T) -> T {\n", "generic over"),
    ("fn f(x: &mut Vec<i32>) {\n", "mutable reference"),
    ("struct P { x: i32 }\nfn f(p: P) -> i32 {\n", "'P'"),
    ("fn f(x: i32) -> impl Iterator<Item = i32> {\n", "'impl'"),
    ("fn f((a, b): (i32, i32)) -> i32 {\n", "not `name: type`"),
    ("const X: i32 = {\n", "signature"),
    ("fn main() {\n", "`main`"),
    ("async fn f() -> i32 {\n", "async"),
])
def test_what_cannot_be_split(prompt: str, reason: str) -> None:
    with pytest.raises(SplitError, match=reason):
        rust.programs(split.TestSource("multipl-e", prompt, "}\nfn main() {}\n", ""))


@pytest.mark.slow
def test_rust_end_to_end(stack: Stack) -> None:
    humaneval_x = endtoend.humaneval_x_case("rust", "rust", VARIANTS, time_limit_s=5.0)
    results = endtoend.check_language(stack, "rust", {
        "humaneval-x-rust": humaneval_x,
        "multipl-e-rust": endtoend.multipl_e_case("rs", M_COMPLETIONS),
        "stdio-rust": endtoend.stdio_case("rust", STDIO_SOLUTION,
                                 wrong=STDIO_SOLUTION.replace("pair[0] + pair[1]", "pair[0] - pair[1]"),
                                 compile_error="fn main() { let x: i32 = \"no\"; }\n"),
    }, timeout_s=3000)
    assert "undefined_name" in results["compile error"]["detail"], results["compile error"]
    for label in ("early process::exit(0)", "static initialiser exit(0)", "thread exit(0)"):
        assert "exited with status 0 before its tests finished" in results[label]["detail"], results[label]
    assert "index out of bounds" in results["runtime panic"]["detail"], results["runtime panic"]
    assert "assertion failed: numbers.len() > 100" in results["assertion in the program"]["detail"]
    # Rust/50's tests use rand 0.4's gen_range(low, high), which Debian's rand 0.8 lacks: they do not compile
    # (under cargo too), and every sample of it is an error that says so.
    allowed = exceptions("rust")
    for task_id in allowed:
        assert results[task_id]["verdict"] == "error", results[task_id]
        assert "tests do not compile" in results[task_id]["detail"], results[task_id]
    assert sum(r["verdict"] == "compile_error" for r in endtoend.case_results(results, humaneval_x)) == 2
    assert "case 1 of 2" in results["stdio wrong"]["detail"], results["stdio wrong"]
    endtoend.assert_toolchain(stack, "rust", "humaneval-x-rust", "rustc 1.63")
