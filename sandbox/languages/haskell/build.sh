#!/bin/sh
# Runs `ghc ARGUMENTS...` (--make, -outputdir build) with passk's precompiled wire in the build's output directory:
# GHC finds PasskWire's source in /opt/passk/haskell, and its interface and object, as old as the image's copy and
# built with the same flags, up to date there, so it compiles only the program's own modules.
set -eu
mkdir -p build
cp -p /opt/passk/haskell/build/PasskWire.hi /opt/passk/haskell/build/PasskWire.o build/
exec ghc "$@"
