#!/bin/sh
# Compiles a Rust judge (sandbox/languages/rust.py) in its build directory: judge.rs as a test crate whose
# custom test runner reports the pass. RUSTC_BOOTSTRAP is set here, for the judge's compile only: its
# runner is an unstable feature; no candidate is ever compiled with it.
#
# When rustc refuses the problem's own code (its first error is on a line that problem.lines, "first last"
# per line, gives as the prompt's or the tests'), no program can pass the problem, under the original
# harness either: the judge becomes a program that says so on its report channel, for every sample. Any
# other failure (in passk's stubs, or a limit) fails the build, as passk's own fault.
#
# Usage: build-judge.sh RUSTC_ARGUMENTS...   (the crates to link and the flags, as the candidate's compile)
set -u
RUSTC_BOOTSTRAP=1 rustc --test --error-format=short -A warnings "$@" -o judge judge.rs 2>rustc.log
status=$?
cat rustc.log >&2
[ "$status" -eq 1 ] || exit "$status"
line=$(sed -n 's/^judge\.rs:\([0-9][0-9]*\):[0-9][0-9]*: error.*/\1/p' rustc.log | head -n 1)
[ -n "$line" ] || exit 1
while read -r first last; do
    if [ "$line" -ge "$first" ] && [ "$line" -le "$last" ]; then
        printf 'fn main() { ::passk_wire::judge::tests_do_not_compile(include_str!("rustc.log")) }\n' > broken.rs
        exec rustc -A warnings "$@" -o judge broken.rs
    fi
done < problem.lines
exit 1
