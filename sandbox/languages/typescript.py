"""TypeScript: the `typescript` compiler from the npm registry (type-checked as tsc does), run on Node.js 18.

As MultiPL-E's harness does (`tsc --target esnext main.ts`, then `node main.js`), a program that does not
type-check is a compile error. No tsconfig: tsc's defaults (not strict).

Self-checking problems run as JavaScript's do (javascript.py: a judge and a candidate, two node processes,
passk's runtime in /opt/passk/javascript), each compiled from its own `main.ts` in its own directory:

- the candidate: the original program up to the tests (the prompt and the completion), type-checked and
  compiled exactly as it is; the statement that serves its function to the judge is JavaScript, appended to
  the compiled main.js, so it adds nothing to what tsc checks;
- the judge: the prompt's code before the function, the stub with the prompt's typed signature, the tests,
  type-checked against that signature once per problem (the judge's build is cached). Tests that do not
  type-check against their own prompt are the problem's failure (`sandbox_error`), never the model's.

Speed: tsc spends nearly all its time loading itself and parsing and binding the default libraries (lib.dom.d.ts
alone is 1.3 MB). The compile step is typescript/compile.js run from a V8 start-up snapshot (node
--build-snapshot, made at image build time) that already holds the compiler with those libraries parsed and
bound; a compile then parses, checks and emits only the program (diagnostics as tsc prints them, on stderr).
"""

from __future__ import annotations

from sandbox.languages import javascript
from sandbox.languages.base import MB, Language, own_heap
from sandbox.languages.split import Programs, TestSource

TYPESCRIPT = "typescript@5.6.3"
SNAPSHOT = "/opt/passk-ts/tsc.blob"
# V8 flags are part of a snapshot's check: the compile runs with exactly the flags it was built with.
COMPILER_FLAGS = ("--max-old-space-size=512", "--snapshot-blob", SNAPSHOT)
_NODE = "node " + " ".join(COMPILER_FLAGS)
# The judge's stub reaches judge.js's call through globalThis (no node types needed).
TS_CALL = "(globalThis as any).__passk_call"
SERVE_FILE = "passk_serve.js"


def programs(source: TestSource) -> Programs:
    parts, parsed = javascript.split_problem(source)
    return Programs(candidate={"main.ts": parts.candidate, SERVE_FILE: javascript.serve_statement(parsed.entry.name)},
                    judge={"main.ts": javascript.judge_source(parts, parsed, TS_CALL)})


LANGUAGE = Language(
    name="typescript",
    title="TypeScript",
    packages=("nodejs",),
    npm_packages=(TYPESCRIPT,),
    image_setup=(
        # The npm tarball has no dependencies: unpacked as it is, no npm needed in the image.
        "mkdir -p /opt/typescript && tar -xzf /tmp/passk-npm/typescript-*.tgz -C /opt/typescript --strip-components=1",
        "chmod -R a+rX /opt/typescript && ln -s /opt/typescript/bin/tsc /usr/local/bin/tsc",
        # The snapshot's entry: typescript.js (made to export into `module`), then passk's compile script.
        "mkdir -p /opt/passk-ts && (echo 'var module = { exports: {} };'; cat /opt/typescript/lib/typescript.js;"
        " cat /passk-context/typescript/compile.js) > /opt/passk-ts/entry.js",
        f"cd /opt/passk-ts && {_NODE} --build-snapshot entry.js && rm entry.js",
        # Proves it: a program that type-checks compiles and runs, one that does not is refused.
        "mkdir /tmp/passk-ts-check && cd /tmp/passk-ts-check"
        " && printf 'const x: number = 1;\\nconsole.log(x);\\n' > main.ts"
        f" && {_NODE} main.ts && node main.js"
        " && printf 'const x: number = \"a\";\\n' > main.ts"
        f" && ! {_NODE} main.ts && cd / && rm -rf /tmp/passk-ts-check",
        "chmod -R a+rX /opt/passk-ts",
        *javascript.RUNTIME_SETUP,
    ),
    context_files=(("sandbox/languages/typescript/compile.js", "typescript/compile.js"), *javascript.RUNTIME.context_files),
    source_file="main.ts",
    # compile.js compiles as `tsc --target esnext main.ts` (its arguments are fixed in the script).
    compile=("node", *COMPILER_FLAGS, "main.ts"),
    programs=programs,
    candidate_compile=("sh", "-c", f"{_NODE} main.ts && cat {SERVE_FILE} >> main.js"),
    judge_compile=("node", *COMPILER_FLAGS, "main.ts"),
    judge_run=javascript.JUDGE_RUN,
    judge_memory_bytes=javascript.JUDGE_MEMORY_BYTES,
    run=("node", "main.js"),
    version=("sh", "-c", "echo tsc $(tsc --version | cut -d' ' -f2), node $(node --version)"),
    compile_time_limit_s=30.0,
    compile_memory_bytes=1024 * MB,
    **own_heap(javascript.run_memory_flags),
    stderr_verdicts=javascript.STDERR_VERDICTS,
    aliases=("ts",),
    run_code_names=("typescript",),
    reference_commands=("tsc --target esnext main.ts", "node main.js"),
)
