"""SandboxFusion's `go_test` on /run_code: the program is a Go test file (package main, `func TestX(t
*testing.T)`), built by `go test -c` and its tests run, as `go test` runs them; it passes when every test passes.
A /run_code mode of Go, in Go's image, not a language for datasets."""

import dataclasses

from sandbox.languages.base import unchanged
from sandbox.languages.go import LANGUAGE as GO

LANGUAGE = dataclasses.replace(
    GO,
    name="go-test",
    title="Go (go test)",
    # The file is built as it is: Go's stdio wrapping (a TestMain that runs main()) is for programs with a main.
    stdio_program=unchanged,
    aliases=(),
    run_code_names=("go_test",),
    variant_of="go",
    run_code_only=True,
    notes="SandboxFusion's `go_test` on /run_code: the program's tests run by the test binary `go test -c` builds.",
)
