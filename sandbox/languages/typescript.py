"""TypeScript: the `typescript` compiler from the npm registry (type-checked with tsc), run on Node.js 18.

As MultiPL-E's harness does (`tsc --target esnext main.ts`, then `node main.js`), a program that does not
type-check is a compile error. No tsconfig: tsc's defaults (not strict). The tests are wrapped as JavaScript's
(see javascript.py): the pass token is written once the tests' top-level code returned, and a failed
`console.assert` throws. node's `process` is reached through `globalThis` so the wrapper needs no node types.
"""

from __future__ import annotations

from sandbox.languages import javascript
from sandbox.languages.base import MB, Language

TYPESCRIPT = "typescript@5.6.3"
TSC = "/opt/typescript/lib/tsc.js"
TS_PRELUDE = javascript.prelude("(globalThis as any).process")


def tests_program(text: str) -> str:
    return javascript.wrap(text, TS_PRELUDE)


LANGUAGE = Language(
    name="typescript",
    title="TypeScript",
    packages=("nodejs",),
    npm_packages=(TYPESCRIPT,),
    image_setup=(
        # The npm tarball has no dependencies: unpacked as it is, no npm needed in the image.
        "mkdir -p /opt/typescript && tar -xzf /tmp/passk-npm/typescript-*.tgz -C /opt/typescript --strip-components=1",
        "chmod -R a+rX /opt/typescript && ln -s /opt/typescript/bin/tsc /usr/local/bin/tsc",
        "cd /tmp && printf 'const x: number = 1;\\nconsole.log(x);\\n' > warm.ts && tsc --target esnext warm.ts && node warm.js"
        " && rm -f warm.ts warm.js",
    ),
    source_file="main.ts",
    compile=("node", "--max-old-space-size=512", TSC, "--target", "esnext", "main.ts"),
    run=("node", "main.js"),
    version=("sh", "-c", "echo tsc $(tsc --version | cut -d' ' -f2), node $(node --version)"),
    compile_time_limit_s=30.0,
    compile_memory_bytes=1024 * MB,
    run_memory_flags=javascript.run_memory_flags,
    limit_address_space=False,
    pids=64,
    tests_program=tests_program,
    stderr_verdicts=javascript.STDERR_VERDICTS,
    aliases=("ts",),
    reference_commands=("tsc --target esnext main.ts", "node main.js"),
)
