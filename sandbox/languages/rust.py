"""Rust: Debian bookworm's rustc (1.63) with the `rand`, `regex` and `md5` crates (librust-*-dev).

HumanEval-X's Rust programs are a binary crate's `main.rs` (`fn main(){}` + declaration + prompt +
completion + tests) whose tests are libtest `#[test]` functions; the original harness runs `cargo check`
then `cargo test`. passk compiles once with `rustc --test` against rlibs of the three crates pre-built at
image build time (offline, cargo with Debian's sources as a directory source), linked to the shared
libstd (`-C prefer-dynamic`: half the link time), and runs the test binary with one test thread.
Not optimised (`-O` doubles the compile time), as `cargo test` builds: overflow checks stay on.

The pass token: the program gets a custom test runner (`#![test_runner]`, which needs RUSTC_BOOTSTRAP=1
with stable rustc) that calls libtest's own `test_main_static` and prints the token only when it
returned, which libtest does only once every test ran and passed (it exits 101 otherwise). Code of the
candidate's that runs before main (a static in `.init_array`) or ends the process from a test
(`std::process::exit(0)`) never reaches it. A program without `#[test]` functions (MultiPL-E's `fn main`
with asserts) gets one test that calls its `main`.
"""

from __future__ import annotations

import re

from sandbox.languages.base import MB, Language
PASS_TOKEN_ENV = "PASSK_PASS_TOKEN"

ROOT = "/opt/passk/rust"
REFERENCE = f"{ROOT}/reference"
CRATES = ("rand", "regex", "md5")

_HEAD = "#![feature(test, custom_test_frameworks)]\n#![test_runner(crate::passk_test_runner)]\n"
_LIBTEST = "\n#[cfg(test)]\nextern crate test as passk_libtest;\n"
_RUNNER = f"""
#[cfg(test)]
#[doc(hidden)]
pub fn passk_test_runner(passk_tests: &[&passk_libtest::TestDescAndFn]) {{
    passk_libtest::test_main_static(passk_tests);
    use std::io::Write;
    let passk_token = std::env::var("{PASS_TOKEN_ENV}").unwrap_or_default();
    let mut passk_out = std::io::stdout().lock();
    let _ = write!(passk_out, "\\n{{}}\\n", passk_token);
    let _ = passk_out.flush();
}}
"""
_MAIN_AS_TEST = "\n#[cfg(test)]\n#[test]\nfn passk_main() {\n    main();\n}\n"
_STDIO_HEAD = "#![feature(test, custom_test_frameworks)]\n#![test_runner(crate::passk_stdio_runner)]\n"
_STDIO_RUNNER = """
#[cfg(test)]
#[doc(hidden)]
pub fn passk_stdio_runner(_: &[&passk_libtest::TestDescAndFn]) {
    let _ = main();
}
"""
_HAS_TEST = re.compile(r"#\[\s*test\s*\]")


def tests_program(text: str) -> str:
    """The program with a test runner that prints the pass token after libtest reported every test passed."""
    extra = "" if _HAS_TEST.search(text) else _MAIN_AS_TEST
    return _HEAD + text + "\n" + extra + _LIBTEST + _RUNNER


def stdio_program(source: str) -> str:
    """A stdio solution built by the same `rustc --test` command: the test runner calls its `main`."""
    return _STDIO_HEAD + source + "\n" + _LIBTEST + _STDIO_RUNNER


def humaneval_x_program(prompt: str, declaration: str, completion: str, test: str) -> str:
    # As HumanEval-X's harness builds it (CodeGeeX): main + declaration + prompt + completion + test.
    return "\nfn main(){ \n } \n" + declaration + prompt + completion + test


_CARGO_ENV = f"CARGO_HOME=/tmp/passk-cargo-home CARGO_TARGET_DIR=/tmp/passk-reference/target"

LANGUAGE = Language(
    name="rust",
    title="Rust",
    packages=("rustc", "cargo", "librust-rand-dev", "librust-regex-dev", "librust-md5-dev",
              "librust-aho-corasick-dev", "librust-memchr-dev"),
    context_files=(
        ("sandbox/languages/rust/Cargo.toml", "rust/Cargo.toml"),
        ("sandbox/languages/rust/cargo-config.toml", "rust/cargo-config.toml"),
    ),
    image_setup=(
        # One crate depending on the three, built offline from Debian's sources: its rlibs are what passk
        # links programs against, and it stays (checked and built) for bench/languages.py's reference.
        f"mkdir -p {REFERENCE}/src {REFERENCE}/.cargo {ROOT}/deps",
        f"cp /passk-context/rust/Cargo.toml {REFERENCE}/ && cp /passk-context/rust/cargo-config.toml"
        f" {REFERENCE}/.cargo/config.toml && printf 'fn main() {{}}\\n' > {REFERENCE}/src/main.rs",
        f"cd {REFERENCE} && CARGO_HOME=/tmp/passk-cargo-home cargo build --offline -q"
        " && CARGO_HOME=/tmp/passk-cargo-home cargo check --offline -q",
        f"cp {REFERENCE}/target/debug/deps/*.rlib {ROOT}/deps/ && for c in {' '.join(CRATES)}; do"
        f" cp {ROOT}/deps/lib$c-*.rlib {ROOT}/lib$c.rlib; done",
        f"rm -rf /tmp/passk-cargo-home && chmod -R a+rX,go-w {ROOT}",
    ),
    source_file="main.rs",
    stdio_program=stdio_program,
    humaneval_x_program=humaneval_x_program,
    compile=(
        "rustc", "--edition", "2021", "--test", "-C", "prefer-dynamic", "-o", "main", "main.rs",
        "-L", f"dependency={ROOT}/deps",
        *(arg for crate in CRATES for arg in ("--extern", f"{crate}={ROOT}/lib{crate}.rlib")),
    ),
    # One test thread (tests run in order, as cargo test does for one test); --nocapture: a panic's message
    # goes to stderr, where stderr_verdicts tell an assertion (failed) from another panic (error).
    run=("./main", "--test-threads=1", "--nocapture"),
    version=("rustc", "--version"),
    compile_time_limit_s=30.0,
    compile_memory_bytes=2048 * MB,
    pids=64,
    stderr_verdicts=(
        (r"memory allocation of \d+ bytes failed", "memory"),
        (r"panicked at 'assertion failed", "failed"),
        (r"panicked at", "error"),
    ),
    aliases=("rs",),
    # HumanEval-X's execution.py: `cargo check --bin X` then `cargo test --bin X` in one crate whose
    # dependencies are built; here each sample is that crate's main.rs, sharing one warm target directory.
    reference_commands=(
        f"flock /tmp/passk-reference.lock sh -c '[ -d /tmp/passk-reference ] || cp -a {REFERENCE} /tmp/passk-reference'"
        f" && mkdir -p src .cargo && mv main.rs src/main.rs && cp {REFERENCE}/Cargo.toml {REFERENCE}/Cargo.lock ."
        f" && cp {REFERENCE}/.cargo/config.toml .cargo/ && {_CARGO_ENV} cargo check --offline --message-format json",
        # `cargo test` builds, then runs: the build is made a step of its own so that the run's time limit
        # (the bench applies it to the last command only) is not spent compiling.
        f"{_CARGO_ENV} cargo test --no-run --offline --message-format json",
        f"{_CARGO_ENV} cargo test --offline --message-format json",
    ),
    extra={
        "env": {"RUSTC_BOOTSTRAP": "1"},
        "bench": (
            lambda row: '    panic!("passk: wrong");\n' + row["canonical_solution"],
            lambda row: "    loop {}\n" + row["canonical_solution"],
        ),
    },
    notes="rustc --test once against pre-built rand/regex/md5 rlibs; the test binary runs with one thread",
)
