"""Clojure: Clojure 1.11 on OpenJDK 17 from Debian bookworm (`clojure`), with clojure.test, the library MultiPL-E's
tests use. A MultiPL-E Clojure prompt is the function's open definition: `(defn name`, its docstring, and its
parameter vector `[params]` as the last line; the completion closes the form; the tests are top-level forms ending
with `(run-test test-humaneval)`, whose summary line ("0 failures, 0 errors.") is MultiPL-E's pass.

Self-checking problems (MultiPL-E) run as two Clojure programs:

- the candidate, `main.clj`: the original program up to the tests (the prompt and the model's completion), then the
  form that serves the function to the judge (clojure/passk/server.clj), placed where the tests began in one file;
- the judge, `main.clj` in a directory of its own, loaded by passk's judge runtime (clojure/passk/judge.clj): the
  prompt's code before the function to complete, a stub for that function (the prompt's parameters; its body calls
  the candidate's process), then the tests. The runtime notes clojure.test's reports and reports the pass once the
  file ran to its end with a summary and no failed or erring assertion.

The split reads the prompt by lines (`split_problem`), not as s-expressions: MultiPL-E's Clojure translator leaves
the docstring's double quotes unescaped, so many prompts do not read as Clojure at all (those problems fail in both
harnesses whatever the completion; tests/data/multipl-e/solutions/clj.json marks them unsolvable). The judge's stub
has no docstring, so the judge always reads.

Values cross as data (clojure/passk/wire.clj, the rule in sandbox/runtime/values.py), each with its own class:
nothing the model wrote (a redefined `is` or `=`, a shutdown hook, `(System/exit 0)`) ever runs in the judge.

The runtime is compiled ahead of time when the image is built into /opt/passk/clojure/passk.jar, on both
programs' class path, and a class-data-sharing archive of what a judge and a server load (Clojure's core,
clojure.test, passk's runtime) is dumped then: a JVM with Clojure starts in about half the time. The JVMs run with
C1 only, the serial collector and no perf-data file, as Java's do. A program runs under clojure/passk/run.clj,
which loads it as `clojure.main main.clj` does and reports an uncaught error by clojure.main's own summary on stderr
(clojure.main would also write the full report in a file under /tmp).
"""

from __future__ import annotations

import re

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language, ReferencePass, own_heap
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource

RUNTIME_DIR = "/opt/passk/clojure"
PASSK_JAR = f"{RUNTIME_DIR}/passk.jar"
CLOJURE_JAR = "/usr/share/java/clojure-1.11.jar"
CLASSPATH = f"{CLOJURE_JAR}:{PASSK_JAR}"
RUN_ARCHIVE = f"{RUNTIME_DIR}/run.jsa"
RUNTIME_FILES = ("wire.clj", "server.clj", "judge.clj", "run.clj")
# JVM flags for fast start-up of short programs (as Java's), no error report in a file under /tmp, java.io open to
# passk's runtime (it names the inherited descriptors 3-5 through FileDescriptor's field).
JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData", "-Xshare:auto",
             "-Dclojure.main.report=stderr", "--add-opens=java.base/java.io=ALL-UNNAMED")
RUN_FLAGS = (*JVM_FLAGS, f"-XX:SharedArchiveFile={RUN_ARCHIVE}", "-cp", CLASSPATH)
# The heap gets the job's memory limit less room for the JVM's own memory (metaspace with Clojure's classes, code).
JVM_OVERHEAD_BYTES = 80 * MB
SYNTAX = Syntax(line_comments=(";",), block_comment=None, quotes='"')
_DEFN = re.compile(r"\(defn-?\s+(?P<name>[^\s()\[\]{}\"';@^`~\\]+)")
_PARAMS = re.compile(r"\s*\[(?P<params>[^\[\]{}()\"]*)\]\s*")
_PARAM = re.compile(r"[^\s()\[\]{}\"';@^`~\\&#:0-9][^\s()\[\]{}\"';@^`~\\]*")
_NAME = re.compile(r"[^\s()\[\]{}\"';@^`~\\]+")


def split_problem(source: TestSource) -> splitting.Parts:
    """The judge's and the candidate's parts of `prompt + completion + "\\n" + tests`, read by lines (only the prompt
    and the tests, trusted text, are read):

    - the prompt's last line of code is the function's parameter vector `[a b]` (plain names only);
    - the function's definition opens on the last line before it that starts with `(defn name`; what precedes
      that line is `before`, which must be balanced code (its own forms, closed);
    - the tests are top-level forms: the completion closes the definition itself. The candidate is
      `prompt + completion + "\\n"`; the judge is `before`, the stub, then the tests.
    """
    prompt = source.prompt
    lines = prompt.splitlines(keepends=True)
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line)
    last = next((index for index in range(len(lines) - 1, -1, -1) if lines[index].strip()), None)
    found = _PARAMS.fullmatch(lines[last]) if last is not None else None
    if found is None:
        raise SplitError("the prompt does not end with the function's parameter vector")
    start_line = next((index for index in range(last - 1, -1, -1) if _DEFN.match(lines[index])), None)
    if start_line is None:
        raise SplitError("no `(defn name` line opens the function to complete")
    start = offsets[start_line]
    before = prompt[:start]
    depth = 0
    for char in splitting.blank(before, SYNTAX):
        depth += (char in "([{") - (char in ")]}")
        if depth < 0:
            raise SplitError("the prompt's code before the function closes a form it did not open")
    if depth:
        raise SplitError("the prompt's code before the function leaves a form open")
    params = found.group("params").split()
    for param in params:
        if not _PARAM.fullmatch(param):
            raise SplitError(f"a parameter passk cannot pass on: {param!r}")
    name = _DEFN.match(lines[start_line]).group("name")  # type: ignore[union-attr]
    entry = Entry(start=start, brace=len(prompt), name=name, params=tuple((param, "") for param in params),
                  returns="", signature=f"(defn {name} [{' '.join(params)}]")
    return splitting.Parts(head=prompt, before=before, entry=entry, open_blocks=0, judge_tests=source.tests,
                           candidate=prompt + source.completion + "\n")


def stub(parts: splitting.Parts) -> str:
    """The judge's function with the prompt's parameters: it sends its arguments and returns what the candidate's
    function returned."""
    entry = parts.entry
    arguments = " ".join(param for param, _ in entry.params)
    return f"{entry.signature}\n  (passk.judge/call \"{entry.name}\" [{arguments}]))\n"


def serve_statement(name: str) -> str:
    """What follows the candidate's program: its function served to the judge (clojure/passk/server.clj)."""
    if not _NAME.fullmatch(name):
        raise SplitError(f"a function name passk cannot serve: {name!r}")
    return f"\n(passk.server/serve {name} \"{name}\")\n"


def programs(source: TestSource) -> Programs:
    parts = split_problem(source)
    return splitting.served(parts, "main.clj", serve_statement(parts.entry.name), stub(parts))


def run_memory_flags(memory_bytes: int) -> tuple[str, ...]:
    heap = max(32 * MB, memory_bytes - JVM_OVERHEAD_BYTES)
    return (f"-Xmx{heap // MB}m", "-Xss8m")


STDERR_VERDICTS = (
    (r"OutOfMemoryError", "memory"),
    # The judge's line for the first failed assertion (passk/judge.clj); clojure.test's report is on stdout.
    (r"(?m)^FAIL\b", "failed"),
    # An erring assertion or an uncaught error of the tests (the judge's line), or of a program (clojure.main's
    # summary, passk/run.clj: "Syntax error reading source at ...", "Execution error (ArithmeticException) at ...").
    (r"(?m)^ERROR\b|^Syntax error|^Execution error|^Exception in thread|Exception\b|java\.lang\.\w+Error", "error"),
)

_CONTEXT = "/passk-context/clojure"
# What the class-data-sharing archive is dumped from: Clojure, clojure.test and passk's runtime loaded and the codec
# used once.
_ARCHIVE_SAMPLE = ("(require 'clojure.test 'passk.server 'passk.judge 'passk.run)"
                   " (passk.wire/decode (passk.wire/encode [1 2.5 \\\\c \\\"s\\\" :k 'x 1/2 (list 1) {1 #{2}} nil true 1N]))")

LANGUAGE = Language(
    name="clojure",
    title="Clojure",
    packages=("clojure",),
    image_setup=(
        # passk's runtime, compiled ahead of time into a jar every run has on its class path.
        f"mkdir -p {RUNTIME_DIR}/src/passk {RUNTIME_DIR}/classes && cp "
        + " ".join(f"{_CONTEXT}/passk/{name}" for name in RUNTIME_FILES) + f" {RUNTIME_DIR}/src/passk/"
        + f" && cd {RUNTIME_DIR} && java -cp {CLOJURE_JAR}:src -Dclojure.compile.path=classes clojure.main -e"
        " \"(compile 'passk.wire) (compile 'passk.server) (compile 'passk.judge) (compile 'passk.run)\""
        f" && cd classes && python3 -m zipfile -c {PASSK_JAR} passk && cd / && rm -rf {RUNTIME_DIR}/src"
        f" {RUNTIME_DIR}/classes",
        # The runs' archive: what a judge and a server load.
        f"cd /tmp && java {' '.join(JVM_FLAGS)} -XX:ArchiveClassesAtExit={RUN_ARCHIVE} -cp {CLASSPATH} clojure.main"
        f" -e \"{_ARCHIVE_SAMPLE}\" && chmod -R a+rX /opt/passk",
        "rm -rf /usr/share/doc/* /usr/share/man /usr/lib/jvm/*/man /usr/lib/jvm/*/legal",
    ),
    context_files=tuple((f"sandbox/languages/clojure/passk/{name}", f"clojure/passk/{name}") for name in RUNTIME_FILES),
    source_file="main.clj",
    programs=programs,
    run=("java", *RUN_FLAGS, "clojure.main", "-m", "passk.run", "main.clj"),
    # passk's server is loaded before any of the model's code.
    candidate_run=("java", *RUN_FLAGS, "clojure.main", "-e", "(require 'passk.server)", "-m", "passk.run", "main.clj"),
    judge_run=("java", *RUN_FLAGS, "clojure.main", "-m", "passk.judge"),
    # The judge's JVM (its own heap, metaspace with Clojure's classes, code) beside the candidate's.
    judge_memory_bytes=160 * MB,
    version=("java", "-cp", CLOJURE_JAR, "clojure.main", "-e",
             '(println (str "Clojure " (clojure-version) " (OpenJDK " (System/getProperty "java.version") ")"))'),
    **own_heap(run_memory_flags, pids=128),
    stderr_verdicts=STDERR_VERDICTS,
    aliases=("clj",),
    # SandboxFusion has no Clojure: /run_code takes the language's own name.
    run_code_names=("clojure",),
    # MultiPL-E's evaluation/src/eval_clj.py: `clojure -J-Dclojure.main.report=stderr -M <file>` (the Clojure CLI;
    # Debian's `clojure` script takes neither option, so the same JVM command is written out) under safe_subprocess's
    # default 15 s; a pass is exit status 0 with clojure.test's summary "0 failures, 0 errors." on stdout.
    reference_commands=(f"java -Dclojure.main.report=stderr -cp {CLOJURE_JAR} clojure.main main.clj",),
    reference_pass=ReferencePass(stdout_has="\n0 failures, 0 errors.\n", timeout_s=15.0),
)
