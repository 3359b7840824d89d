#!/bin/sh
# Compiles an OCaml judge (sandbox/languages/ocaml.py) in its build directory: judge.ml against passk's wire.
#
# When the compiler refuses the problem's own code (its error is on a line that problem.lines, "first last" per
# line, gives as the prompt's or the tests'), no program can pass the problem, under the original harness either:
# the judge becomes a program that says so on its report channel, for every sample. Any other failure (in passk's
# stubs, or a limit) fails the build, as passk's own fault.
#
# Usage: build-judge.sh OCAMLC_ARGUMENTS...   (the libraries to link and the flags, as the candidate's compile)
set -u
ocamlc "$@" -o judge judge.ml 2>ocamlc.log
status=$?
cat ocamlc.log >&2
[ "$status" -eq 2 ] || exit "$status"
line=$(sed -n 's/^File "judge\.ml", lines\{0,1\} \([0-9][0-9]*\).*/\1/p' ocamlc.log | head -n 1)
[ -n "$line" ] || exit 1
while read -r first last; do
    if [ "$line" -ge "$first" ] && [ "$line" -le "$last" ]; then
        {
            printf 'let () = Passk_wire.Judge.does_not_compile {passk_log|'
            sed 's/|passk_log}/| passk_log}/g' ocamlc.log
            printf '|passk_log}\n'
        } > broken.ml
        rm -f judge.cmi judge.cmo
        exec ocamlc "$@" -o judge broken.ml
    fi
done < problem.lines
exit 1
