"""Java: OpenJDK 17 from Debian bookworm (default-jdk-headless), with javatuples for MultiPL-E's Java.

Self-checking problems (HumanEval-X, MultiPL-E) run as two programs in two JVMs (sandbox/languages/split.py):

- the candidate: `Main.java`, the original program up to the tests (the prompt and the model's completion,
  closed as the tests would close it), and `PasskMain.java`, generated from the prompt's signature: its
  `passkCall` has the function's parameters and return type and calls it (on one instance, made at the first
  call, as the tests make one, for HumanEval-X's instance methods). They compile together, so a completion
  that changes the function's signature fails to compile as it would beside the tests. PasskMain's `main` runs
  passk's server (java/passk/Server.java), which reads the judge's calls and answers them by reflection on
  `passkCall`'s generic types;
- the judge: `Main.java`, the prompt's code before the function (its imports, its class, the helper methods the
  tests may call), a stub with the prompt's signature that calls `passk.Judge` (java/passk/Judge.java), the tests,
  and a launcher `PasskJudge` that calls the tests' `main` and reports a pass once it returned. No byte of the
  model's code is in it: a static initialiser, a shutdown hook, a class of the model's named `Main`, `Solution`,
  `PasskJudge` or `passk.*`, a Unicode escape that javac reads as a brace, an `equals` of the model's own classes:
  all of it compiles and runs in the candidate's JVM only, and only values cross (java/passk/Wire.java).

passk's classes are compiled into /opt/passk-java/passk.jar when the image is built, so a sample's compile is
javac of the model's file and the small PasskMain only; the judge's compile is the same for every sample of a
problem (cached per container).

Speed: javac is a Java program, so its start-up dominates a compile. The image holds a class-data-sharing
archive of javac's classes (dumped at build time by compiling a sample program) and one of what the runs load
(passk's runtime and the classes its codec uses), and javac and the programs run with C1 only (`-XX:TieredStopAtLevel=1`), the serial collector and no perf-data file (which would also leave a
file in /tmp).
"""

from __future__ import annotations

import re

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language, own_heap
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource

SYNTAX = Syntax(text_blocks=True)
ENTRY_CLASS = "PasskMain"  # the candidate's main class: the server (tests) or the solution's main (stdio)
JUDGE_CLASS = "PasskJudge"
PASSK_HOME = "/opt/passk-java"
PASSK_JAR = f"{PASSK_HOME}/passk.jar"
CLASSPATH = f"/usr/share/java/javatuples.jar:{PASSK_JAR}:."  # ARCHIVED_CLASSPATH and the program's directory
JAVAC_ARCHIVE = f"{PASSK_HOME}/javac.jsa"
# The runs' class-data-sharing archive: the JDK's classes, javatuples' and passk's runtime (dumped at build time from
# CdsSample.java's class list); its class path is a prefix of the runs' (the program's directory comes last).
RUN_ARCHIVE = f"{PASSK_HOME}/run.jsa"
ARCHIVED_CLASSPATH = f"/usr/share/java/javatuples.jar:{PASSK_JAR}"
# JVM flags for fast start-up of short programs: C1 only, one GC thread, no hsperfdata file in /tmp.
JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData", "-Xshare:auto")
RUN_FLAGS = (*JVM_FLAGS, f"-XX:SharedArchiveFile={RUN_ARCHIVE}")
JAVAC_HEAP = "-J-Xmx512m"
# passk's runtime names the inherited descriptors 3-5 through java.io.FileDescriptor's field (Wire.descriptor).
OPEN_IO = "--add-opens=java.base/java.io=ALL-UNNAMED"
# The heap gets the job's memory limit less room for the JVM's own memory (metaspace, code, thread stacks).
JVM_OVERHEAD_BYTES = 64 * MB
# passk's runtime sources (sandbox/languages/java/passk/), compiled into PASSK_JAR at image build time.
RUNTIME_SOURCES = ("Wire.java", "Judge.java", "Server.java")

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


def _entry_class(text: str) -> str:
    return (
        f"\n\nfinal class {ENTRY_CLASS} {{\n"
        "    public static void main(String[] args) throws Throwable {\n"
        f"        {main_class(text)}.main(args);\n"
        "    }\n"
        "}\n"
    )


def without_public(source: str) -> str:
    """The source with `public` dropped from its top-level types, so that it compiles as Main.java whatever its
    classes are named."""
    _, top_level = _classes(source)
    text = source
    for _, start, _ in reversed(top_level):
        head = text[max(0, start - 40):start]
        match = re.search(r"\bpublic\s+((?:final\s+|abstract\s+)*)$", head)
        if match:
            cut = max(0, start - 40) + match.start()
            text = text[:cut] + match.group(1) + text[start:]
    return text


def stdio_program(source: str) -> str:
    """A stdin/stdout solution: any class name works (without_public), run through the same entry class."""
    text = without_public(source)
    return text + _entry_class(text)


# ------------------------------------------------------------------ self-checking problems

_MODIFIERS = ("public", "protected", "private", "static", "final", "synchronized", "strictfp")
_SIGNATURE = re.compile(
    r"(?P<head>[^()]*?)\b(?P<name>[A-Za-z_$][\w$]*)\s*\((?P<params>[^()]*)\)\s*(?:throws\s+[\w$.,\s]+)?", re.S)
_PARAM = re.compile(r"(?:final\s+)?(?P<type>.*?)\s*\b(?P<name>[A-Za-z_$][\w$]*)\s*", re.S)
_TYPE_DECLARATION = re.compile(r"\b(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)[^{;]*$")
_IMPORT = re.compile(r"(?m)^[ \t]*import\s+(?:static\s+)?[\w$.]+(?:\.\*)?\s*;")

# The types the wire carries (Wire.java), by their simple names: a signature with any other is refused here.
_CARRIED = {
    "boolean", "byte", "short", "int", "long", "float", "double", "char",
    "Boolean", "Byte", "Short", "Integer", "Long", "Float", "Double", "Character", "String", "Object", "BigInteger",
    "List", "ArrayList", "LinkedList", "Collection", "Iterable", "Set", "HashSet", "LinkedHashSet", "TreeSet",
    "Map", "HashMap", "LinkedHashMap", "TreeMap", "Optional",
    "Unit", "Pair", "Triplet", "Quartet", "Quintet", "Sextet", "Septet", "Octet", "Ennead", "Decade",
}
_TYPE_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*")


def carried(type_text: str) -> bool:
    """Whether the wire carries values of a Java type as written (`List<Optional<Integer>>`, `int[]`...)."""
    text = re.sub(r"\s+", " ", type_text.strip())
    if text.endswith("..."):
        text = text[:-3] + "[]"
    names = _TYPE_NAME.findall(text)
    rest = _TYPE_NAME.sub("", text)
    if not names or re.search(r"[^<>,\[\] ]", rest) or "?" in text:
        return False
    return all(name.split(".")[-1].strip() in _CARRIED for name in names)


def entry(head: str, code: str, brace: int) -> Entry:
    """The Java method whose body the prompt leaves open: `[modifiers] <return type> <name>(<parameters>)
    [throws ...]`."""
    start = splitting.statement_start(code, brace)
    found = _SIGNATURE.fullmatch(code[start:brace].rstrip())
    if not found:
        raise SplitError("the prompt does not end with a Java method's signature and its '{'")
    words = found.group("head").split()
    while words and words[0] in _MODIFIERS:
        words.pop(0)
    returns = " ".join(words)
    if not returns or returns.startswith("<") or "@" in returns:
        raise SplitError(f"the function to complete has no plain return type: {found.group('head').strip()!r}")
    params = []
    for param in splitting.split_params(found.group("params").strip()):
        named = _PARAM.fullmatch(param)
        if not named or not named.group("type").strip() or "@" in param:
            raise SplitError(f"a parameter of the function to complete is not `<type> <name>`: {param!r}")
        params.append((named.group("name"), named.group("type").strip()))
    return Entry(start=start, brace=brace, name=found.group("name"), params=tuple(params), returns=returns,
                 signature=head[start:brace].strip())


def _enclosing_class(head: str) -> str:
    """The (dotted) name of the class around the function to complete: every block around it is a type's body."""
    code = splitting.blank(head, SYNTAX)
    stack = splitting.open_braces(code)
    names = []
    for position in stack[:-1]:
        found = _TYPE_DECLARATION.search(code, max(code.rfind("}", 0, position), code.rfind(";", 0, position), 0), position)
        if not found:
            raise SplitError("the function to complete is inside a block that is not a class's body")
        names.append(found.group(1))
    if not names:
        raise SplitError("the function to complete is not in a class")
    return ".".join(names)


def _imports(head: str) -> str:
    code = splitting.blank(head, SYNTAX)
    return "".join(head[found.start():found.end()].strip() + "\n" for found in _IMPORT.finditer(code))


def programs(source: TestSource) -> Programs:
    parts = splitting.split(source.prompt, source.completion, source.tests, SYNTAX, entry)
    e = parts.entry
    for kind in [e.returns, *(kind for _, kind in e.params)]:
        if kind != "void" and not carried(kind):
            raise SplitError(f"the wire cannot carry the type {kind!r} of {e.name}()")
    owner = _enclosing_class(parts.head)
    modifiers = e.signature[:e.signature.find(e.name)].split()
    static = "static" in modifiers
    names = ", ".join(name for name, _ in e.params)
    returning = "" if e.returns == "void" else "return "
    stub = (f"    {e.signature} {{\n"
            f"        {returning}passk.Judge.call(new Object() {{}}{', ' + names if names else ''});\n    }}\n")
    judge = parts.before + "\n" + stub + parts.judge_tests
    judge += (f"\n\nfinal class {JUDGE_CLASS} {{\n"
              "    public static void main(String[] args) throws Throwable {\n"
              "        passk.Judge.start();\n"
              f"        {main_class(judge)}.main(args);\n"
              "        passk.Judge.pass();\n"
              "    }\n"
              "}\n")
    params = ", ".join(f"{kind} {name}" for name, kind in e.params)
    if static:
        body = f"        {returning}{owner}.{e.name}({names});\n"
        self_field = ""
    else:
        body = (f"        if (passkSelf == null) passkSelf = new {owner}();\n"
                f"        {returning}passkSelf.{e.name}({names});\n")
        self_field = f"    private static {owner} passkSelf;\n\n"
    server = (
        _imports(parts.head)
        + f"\nfinal class {ENTRY_CLASS} {{\n"
        + "    public static void main(String[] args) throws Throwable {\n"
        + f'        passk.Server.serve({ENTRY_CLASS}.class, "{e.name}");\n'
        + "    }\n\n"
        + self_field
        + f"    static {e.returns} passkCall({params}) throws Throwable {{\n"
        + body
        + "    }\n}\n"
    )
    return Programs(candidate={"Main.java": parts.candidate, f"{ENTRY_CLASS}.java": server},
                    judge={"Main.java": judge})


def run_memory_flags(memory_bytes: int) -> tuple[str, ...]:
    heap = max(32 * MB, memory_bytes - JVM_OVERHEAD_BYTES)
    return (f"-Xmx{heap // MB}m", "-Xss8m")


def javac(*files: str, classpath: str = CLASSPATH) -> tuple[str, ...]:
    return ("javac", f"-J-XX:SharedArchiveFile={JAVAC_ARCHIVE}", *("-J" + flag for flag in JVM_FLAGS), JAVAC_HEAP,
            "-encoding", "UTF-8", "-nowarn", "-cp", classpath, *files)


_CONTEXT = "/passk-context/java"

LANGUAGE = Language(
    name="java",
    title="Java",
    packages=("default-jdk-headless", "libjavatuples-java"),
    image_setup=(
        # passk's runtime: compiled once into a jar every build of the image's programs has on its class path.
        f"mkdir -p {PASSK_HOME}/build && cd {PASSK_HOME} && javac -encoding UTF-8 -nowarn -d build"
        f" -cp /usr/share/java/javatuples.jar " + " ".join(f"{_CONTEXT}/passk/{name}" for name in RUNTIME_SOURCES)
        + f" && jar cf {PASSK_JAR} -C build . && rm -rf build",
        # The runs' archive: what a judge and a server load, from a sample that exercises the codec.
        f"mkdir -p {PASSK_HOME}/cds && cd {PASSK_HOME}/cds && cp {_CONTEXT}/CdsSample.java ."
        f" && javac -nowarn -cp {ARCHIVED_CLASSPATH} CdsSample.java"
        f" && java {OPEN_IO} -XX:DumpLoadedClassList=loaded.lst -cp {ARCHIVED_CLASSPATH}:. CdsSample"
        " && grep / loaded.lst | grep -v CdsSample > archived.lst"
        f" && java -Xshare:dump -XX:SharedClassListFile=archived.lst -XX:SharedArchiveFile={RUN_ARCHIVE}"
        f" -cp {ARCHIVED_CLASSPATH} && cd / && rm -rf {PASSK_HOME}/cds",
        f"mkdir -p {PASSK_HOME}/sample && cp {_CONTEXT}/Main.java {PASSK_HOME}/sample/",
        # A class-data-sharing archive of what javac loads: a compile starts in about half the time.
        f"cd {PASSK_HOME}/sample && javac -J-XX:ArchiveClassesAtExit=" + JAVAC_ARCHIVE
        + " " + " ".join("-J" + flag for flag in JVM_FLAGS[:3]) + f" -cp {CLASSPATH} Main.java",
        f"cd {PASSK_HOME}/sample && java -ea -cp {CLASSPATH} Problem",
        f"rm -rf {PASSK_HOME}/sample && chmod -R a+rX {PASSK_HOME}",
    ),
    context_files=(("sandbox/languages/java/Main.java", "java/Main.java"),
                   ("sandbox/languages/java/CdsSample.java", "java/CdsSample.java"),
                   *((f"sandbox/languages/java/passk/{name}", f"java/passk/{name}") for name in RUNTIME_SOURCES)),
    source_file="Main.java",
    stdio_program=stdio_program,
    programs=programs,
    compile=javac("Main.java"),
    candidate_compile=javac("Main.java", f"{ENTRY_CLASS}.java"),
    judge_compile=javac("Main.java"),
    run=("java", "-ea", *RUN_FLAGS, OPEN_IO, "-cp", CLASSPATH, ENTRY_CLASS),
    judge_run=("java", "-ea", *RUN_FLAGS, OPEN_IO, "-cp", CLASSPATH, JUDGE_CLASS),
    # The judge's JVM (its own heap, metaspace and code) beside the candidate's, in the container's cgroup.
    judge_memory_bytes=96 * MB,
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
    run_code_names=("java",),
    reference_commands=("javac Main.java", "java -cp . Main"),
    extra={"bench": (
        # Java rejects unreachable code: `if (true)` keeps what follows reachable.
        lambda row: '        if (true) throw new IllegalStateException("wrong");\n' + row["canonical_solution"],
        lambda row: "        while (System.nanoTime() > 0) { }\n" + row["canonical_solution"],
    )},
)
