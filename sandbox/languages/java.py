"""Java: OpenJDK 17 from Debian bookworm (default-jdk-headless), with javatuples for MultiPL-E's Java.

The program is written to `Main.java` and compiled with javac; an extra class `PasskMain` in the same file is
the entry point. It calls the tests' `main` (HumanEval-X's `public class Main`, MultiPL-E's `class Problem`:
the class whose body holds the last `static void main`) and prints the pass token only once it returned. A
static initialiser of the candidate that calls `System.exit(0)` runs before the tests' `main` and never reaches
the token; an uncaught exception (a failed test's AssertionError) ends the JVM with status 1.

Speed: javac is a Java program, so its start-up dominates a compile. The image holds a class-data-sharing
archive of javac's classes (dumped at build time by compiling a sample program), and javac and the programs run
with C1 only (`-XX:TieredStopAtLevel=1`), the serial collector and no perf-data file (which would also leave a
file in /tmp).
"""

from __future__ import annotations

import re

from sandbox.languages.base import MB, Language, own_heap
PASS_TOKEN_ENV = "PASSK_PASS_TOKEN"

ENTRY_CLASS = "PasskMain"
CLASSPATH = "/usr/share/java/javatuples.jar:."
JAVAC_ARCHIVE = "/opt/passk-java/javac.jsa"
# JVM flags for fast start-up of short programs: C1 only, one GC thread, no hsperfdata file in /tmp.
JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData", "-Xshare:auto")
JAVAC_HEAP = "-J-Xmx512m"
# The heap gets the job's memory limit less room for the JVM's own memory (metaspace, code, thread stacks).
JVM_OVERHEAD_BYTES = 64 * MB

_TOKENS = re.compile(
    r'"""(?:.|\n)*?"""|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*(?:.|\n)*?\*/'
    r"|\b(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)|\bstatic\s+void\s+main\s*\(|[{}]"
)


def _classes(text: str) -> tuple[str | None, list[tuple[str, int, int]]]:
    """The (dotted) class whose body declares the last `static void main`, and the top-level type
    declarations as (name, start of the keyword, depth 0)."""
    stack: list[tuple[str, int]] = []  # (name, brace depth of its body)
    pending: str | None = None
    depth = 0
    main_class: str | None = None
    top_level: list[tuple[str, int, int]] = []
    for found in _TOKENS.finditer(text):
        token = found.group(0)
        if found.group(1):
            pending = found.group(1)
            if depth == 0:
                top_level.append((pending, found.start(), depth))
        elif token == "{":
            depth += 1
            if pending is not None:
                stack.append((pending, depth))
                pending = None
        elif token == "}":
            if stack and stack[-1][1] == depth:
                stack.pop()
            depth = max(0, depth - 1)
        elif token.startswith("static"):
            if stack:
                main_class = ".".join(name for name, _ in stack)
    return main_class, top_level


def main_class(text: str) -> str:
    """The class whose `main` runs the program ("Main" when none is found: javac then says what is wrong)."""
    found, _ = _classes(text)
    return found or "Main"


def _entry(target: str, token: bool) -> str:
    body = f"        {target}.main(args);\n"
    if token:
        body += (
            "        System.out.flush();\n"
            f'        String passkToken = System.getenv("{PASS_TOKEN_ENV}");\n'
            '        System.out.print("\\n" + (passkToken == null ? "" : passkToken) + "\\n");\n'
            "        System.out.flush();\n"
        )
    return (
        f"\n\nfinal class {ENTRY_CLASS} {{\n"
        "    public static void main(String[] args) throws Throwable {\n"
        f"{body}"
        "    }\n"
        "}\n"
    )


def tests_program(text: str) -> str:
    return text + _entry(main_class(text), token=True)


def stdio_program(source: str) -> str:
    """A stdin/stdout solution: any class name works (`public` is dropped from top-level types, since the file
    is Main.java), run through the same entry class."""
    _, top_level = _classes(source)
    text = source
    for _, start, _ in reversed(top_level):
        head = text[max(0, start - 40):start]
        match = re.search(r"\bpublic\s+((?:final\s+|abstract\s+)*)$", head)
        if match:
            cut = max(0, start - 40) + match.start()
            text = text[:cut] + match.group(1) + text[start:]
    return text + _entry(main_class(text), token=False)


def run_memory_flags(memory_bytes: int) -> tuple[str, ...]:
    heap = max(32 * MB, memory_bytes - JVM_OVERHEAD_BYTES)
    return (f"-Xmx{heap // MB}m", "-Xss8m")


LANGUAGE = Language(
    name="java",
    title="Java",
    packages=("default-jdk-headless", "libjavatuples-java"),
    image_setup=(
        "mkdir -p /opt/passk-java/sample && cp /passk-context/java/Main.java /opt/passk-java/sample/",
        # A class-data-sharing archive of what javac loads: a compile starts in about half the time.
        "cd /opt/passk-java/sample && javac -J-XX:ArchiveClassesAtExit=" + JAVAC_ARCHIVE
        + " " + " ".join("-J" + flag for flag in JVM_FLAGS[:3]) + f" -cp {CLASSPATH} Main.java",
        "cd /opt/passk-java/sample && java -ea -cp " + CLASSPATH + " Problem",
        "rm -rf /opt/passk-java/sample && chmod -R a+rX /opt/passk-java",
    ),
    context_files=(("sandbox/languages/java/Main.java", "java/Main.java"),),
    source_file="Main.java",
    stdio_program=stdio_program,
    compile=(
        "javac", f"-J-XX:SharedArchiveFile={JAVAC_ARCHIVE}", *("-J" + flag for flag in JVM_FLAGS), JAVAC_HEAP,
        "-encoding", "UTF-8", "-nowarn", "-cp", CLASSPATH, "Main.java",
    ),
    run=("java", "-ea", *JVM_FLAGS, "-cp", CLASSPATH, ENTRY_CLASS),
    version=("javac", "-version"),
    compile_time_limit_s=30.0,
    compile_memory_bytes=1024 * MB,
    **own_heap(run_memory_flags, pids=128),
    stderr_verdicts=(
        (r"java\.lang\.OutOfMemoryError", "memory"),
        (r"java\.lang\.AssertionError", "failed"),
        (r"Exception in thread|java\.lang\.\w+Error", "error"),
    ),
    aliases=("jav",),
    reference_commands=("javac Main.java", "java -cp . Main"),
    extra={"bench": (
        # Java rejects unreachable code: `if (true)` keeps what follows reachable.
        lambda row: '        if (true) throw new IllegalStateException("wrong");\n' + row["canonical_solution"],
        lambda row: "        while (System.nanoTime() > 0) { }\n" + row["canonical_solution"],
    )},
)
