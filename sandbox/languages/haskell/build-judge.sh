#!/bin/sh
# Compiles a Haskell judge (sandbox/languages/haskell.py) in its build directory: Main.hs against passk's wire.
#
# When GHC refuses the problem's own code (its first error is on a line that problem.lines, "first last" per line,
# gives as the prompt's or the tests'), no program can pass the problem, under the original harness either: the
# judge becomes a program that says so on its report channel, for every sample. Any other failure (in passk's stub,
# or a limit) fails the build, as passk's own fault.
#
# Usage: build-judge.sh GHC_ARGUMENTS...   (the flags, as the candidate's compile)
set -u
sh /opt/passk/haskell/build.sh "$@" -o judge Main.hs 2>ghc.log
status=$?
cat ghc.log >&2
[ "$status" -eq 1 ] || exit "$status"
line=$(sed -n 's/^Main\.hs:(\{0,1\}\([0-9][0-9]*\)[:,].*error.*/\1/p' ghc.log | head -n 1)
[ -n "$line" ] || exit 1
while read -r first last; do
    if [ "$line" -ge "$first" ] && [ "$line" -le "$last" ]; then
        {
            printf 'import qualified PasskWire\npasskMain :: IO ()\npasskMain = PasskWire.doesNotCompile "'
            sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' ghc.log | awk '{ printf "%s\\n", $0 }'
            printf '"\n'
        } > Broken.hs
        rm -rf build
        exec sh /opt/passk/haskell/build.sh "$@" -o judge Broken.hs
    fi
done < problem.lines
exit 1
