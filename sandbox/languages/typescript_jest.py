"""SandboxFusion's `jest` on /run_code: the program is a TypeScript test file (`main.test.ts`), run by Jest
(Debian's jest) with the types stripped by Babel, as SandboxFusion's babel-jest set-up does: nothing is
type-checked, a syntax error fails the test suite, and there is no compile step (no `compile_result`). It passes
when Jest exits 0 (every test passed). A /run_code mode of TypeScript, in an image of its own (Node.js, Jest and
Babel from Debian; no tsc), not a language for datasets.

Jest runs offline in the program's directory: in one process (no workers), without watchman, with its cache
under the program's own TMPDIR (the only place it may write). Debian's node modules are not under a
`node_modules` directory, so Jest's default would transform its own code through Babel on every run: nothing
under /usr is transformed."""

import dataclasses
import json

from sandbox.languages.typescript import LANGUAGE as TYPESCRIPT

NODE_MODULES = "/usr/share/nodejs"  # where Debian installs node packages (node and Jest resolve from there)
JEST = f"{NODE_MODULES}/jest/bin/jest.js"
# The program's files through babel-jest: @babel/preset-typescript strips the types, and ES modules become
# CommonJS. SandboxFusion's babel.config.js has @babel/preset-env for the current node for that; on node 18 its
# other transforms have nothing to do, and loading the modules plugin alone saves a third of Jest's start-up. No
# Babel configuration file of the program's directory is read.
CONFIG = {
    "transform": {r"\.[jt]sx?$": ["babel-jest", {
        "configFile": False, "babelrc": False,
        "plugins": [f"{NODE_MODULES}/@babel/plugin-transform-modules-commonjs"],
        "presets": [f"{NODE_MODULES}/@babel/preset-typescript"],
    }]},
    "transformIgnorePatterns": ["^/usr/"],
}

LANGUAGE = dataclasses.replace(
    TYPESCRIPT,
    name="typescript-jest",
    title="TypeScript (Jest)",
    # node-babel7 is a dependency of jest already; named for the presets used here.
    packages=("nodejs", "jest", "node-babel7"),
    npm_packages=(),
    image_setup=(
        # Proves it offline: a passing test file passes, a failing one fails.
        "mkdir /tmp/passk-jest-check && cd /tmp/passk-jest-check"
        " && printf 'const n: number = 1;\\ntest(\"one\", () => { expect(n).toBe(1); });\\n' > main.test.ts"
        f" && node {JEST} --ci --watchman=false --runInBand --config '{json.dumps(CONFIG)}'"
        " && printf 'test(\"two\", () => { expect(1).toBe(2); });\\n' > main.test.ts"
        f" && ! node {JEST} --ci --watchman=false --runInBand --config '{json.dumps(CONFIG)}'"
        " && cd / && rm -rf /tmp/passk-jest-check",
        # Documentation is dead weight in every container.
        "rm -rf /usr/share/doc/* /usr/share/man/*",
    ),
    context_files=(),
    source_file="main.test.ts",
    compile=None,
    # Every test file in the directory, as SandboxFusion's `jest` runs them (the program's, and any in `files`).
    run=("node", JEST, "--ci", "--watchman=false", "--runInBand", "--config", json.dumps(CONFIG)),
    version=("sh", "-c", f"echo jest $(node {JEST} --version), node $(node --version)"),
    aliases=(),
    run_code_names=("jest",),
    variant_of="typescript",
    run_code_only=True,
    notes="SandboxFusion's `jest` on /run_code: the program's tests run by Jest, TypeScript's types stripped by Babel.",
)
