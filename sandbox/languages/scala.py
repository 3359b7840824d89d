"""Scala: Scala 2.11 from Debian bookworm (the `scala` package, on OpenJDK 17), as MultiPL-E's Scala is judged.

Self-checking problems (MultiPL-E) run as two programs in two JVMs (sandbox/languages/split.py), on Java's value
wire (sandbox/languages/java/passk/: Wire, Judge, Server, compiled into a jar when the image is built):

- the candidate: `Main.scala`, the original program up to the tests (the prompt and the model's completion,
  closed as the tests close it), and `PasskMain.scala`, generated from the prompt's signature: its `passkCall`
  takes and returns the Java types Java's wire carries (java.util.ArrayList for List, LinkedHashMap for Map,
  Optional for Option, javatuples' tuples for TupleN, boxed scalars), converts them to the prompt's Scala types
  and calls the function. Both compile together, so a completion that changes the signature fails to compile as
  it would beside the tests; PasskMain's `main` runs passk's Java server;
- the judge: `Main.scala`, the prompt's code before the function, a stub with the prompt's signature that
  converts its arguments and calls `PasskJudgeWire`'s method of the same shape in Java types (whose generic
  signature guides `passk.Judge.call`), the tests, and a launcher `PasskJudge` that runs the tests' `main` and
  reports a pass once it returned. No byte of the model's code is in it.

The generated Scala sits after the prompt's own imports (MultiPL-E's import scala.collection.mutable._), so a
`Map[String,Long]` in the conversions is the same type as in the prompt.

Speed: scalac is slow to start, so it runs with C1 only, the serial collector and a class-data-sharing archive of
its own classes (dumped when the image is built); what is the same for every program (the conversions of `Any`,
scala/Dynamic.scala) is compiled into passk's jar then, not with each program. Programs run on `java` with the Scala
library on the class path (not the `scala` runner script), with C1 only and the serial collector, as Java's do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language, ReferencePass, own_heap
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource

SYNTAX = Syntax(quotes="\"")
ENTRY_CLASS = "PasskMain"
JUDGE_CLASS = "PasskJudge"
JUDGE_WIRE = "PasskJudgeWire"
PASSK_HOME = "/opt/passk-scala"
PASSK_JAR = f"{PASSK_HOME}/passk.jar"
SCALA_LIBRARY = "/usr/share/scala/lib/scala-library.jar"
CLASSPATH = f"/usr/share/java/javatuples.jar:{PASSK_JAR}"
# The runs' class-data-sharing archive (dumped when the image is built, running Sample.scala): the Scala library's
# usual classes; its class path is a prefix of the runs' (the program's directory comes last).
RUN_ARCHIVE = f"{PASSK_HOME}/run.jsa"
ARCHIVED_CLASSPATH = f"{SCALA_LIBRARY}:{CLASSPATH}"
RUN_CLASSPATH = f"{ARCHIVED_CLASSPATH}:."
JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData", "-Xshare:auto")
RUN_FLAGS = (*JVM_FLAGS, f"-XX:SharedArchiveFile={RUN_ARCHIVE}")
OPEN_IO = "--add-opens=java.base/java.io=ALL-UNNAMED"
JVM_OVERHEAD_BYTES = 64 * MB
RUNTIME_SOURCES = ("Wire.java", "Judge.java", "Server.java")
SCALAC_ARCHIVE = f"{PASSK_HOME}/scalac.jsa"
_CONTEXT = "/passk-context/scala"

# ------------------------------------------------------------------ types

_TUPLES = {2: "Pair", 3: "Triplet", 4: "Quartet", 5: "Quintet", 6: "Sextet", 7: "Septet", 8: "Octet",
           9: "Ennead", 10: "Decade"}
_SCALARS = {  # Scala type -> the boxed Java type the wire carries
    "Long": "java.lang.Long", "Int": "java.lang.Integer", "Short": "java.lang.Short", "Byte": "java.lang.Byte",
    "Float": "java.lang.Float", "Double": "java.lang.Double", "Boolean": "java.lang.Boolean",
    "Char": "java.lang.Character", "String": "java.lang.String", "BigInt": "java.math.BigInteger",
}


@dataclass(frozen=True)
class Kind:
    """A Scala type of a signature: its head (`List`, `Long`, `Tuple2`...) and type arguments."""

    head: str
    args: tuple[Kind, ...] = ()

    @property
    def scala(self) -> str:
        return self.head + (f"[{', '.join(a.scala for a in self.args)}]" if self.args else "")


def parse_type(text: str) -> Kind:
    """`List[Tuple2[Long, Option[String]]]`, `(Long, Long)` -> Kind; SplitError for a type the wire cannot carry."""
    kind, rest = _parse(text.strip())
    if rest.strip():
        raise SplitError(f"the wire cannot carry the Scala type {text!r}")
    return kind


def _parse(text: str) -> tuple[Kind, str]:
    text = text.lstrip()
    if text.startswith("("):
        items, rest = _parse_list(text[1:], ")")
        kind = Kind(f"Tuple{len(items)}", tuple(items))
    else:
        found = re.match(r"[A-Za-z_][\w.]*", text)
        if not found:
            raise SplitError(f"the wire cannot carry the Scala type {text!r}")
        name, rest = found.group(0).split(".")[-1], text[found.end():].lstrip()
        args: list[Kind] = []
        if rest.startswith("["):
            args, rest = _parse_list(rest[1:], "]")
        kind = Kind(name, tuple(args))
    _check(kind)
    return kind, rest


def _parse_list(text: str, closer: str) -> tuple[list[Kind], str]:
    items = []
    while True:
        item, text = _parse(text)
        items.append(item)
        text = text.lstrip()
        if text.startswith(","):
            text = text[1:]
        elif text.startswith(closer):
            return items, text[1:]
        else:
            raise SplitError(f"the wire cannot carry the Scala type near {text[:30]!r}")


def _check(kind: Kind) -> None:
    arity = {"List": 1, "Option": 1, "Map": 2}
    if kind.head in _SCALARS or kind.head in ("Any", "Unit"):
        ok = not kind.args
    elif kind.head in arity:
        ok = len(kind.args) == arity[kind.head]
    elif kind.head.startswith("Tuple") and kind.head[5:].isdigit():
        ok = int(kind.head[5:]) in _TUPLES and len(kind.args) == int(kind.head[5:])
    else:
        ok = False
    if not ok:
        raise SplitError(f"the wire cannot carry the Scala type {kind.scala!r}")


def java_type(kind: Kind) -> str:
    """The Java type (written in Scala) that carries `kind` on Java's wire."""
    if kind.head in _SCALARS:
        return _SCALARS[kind.head]
    if kind.head == "Any":
        return "java.lang.Object"
    if kind.head == "List":
        return f"java.util.ArrayList[{java_type(kind.args[0])}]"
    if kind.head == "Option":
        return f"java.util.Optional[{java_type(kind.args[0])}]"
    if kind.head == "Map":
        return f"java.util.LinkedHashMap[{java_type(kind.args[0])}, {java_type(kind.args[1])}]"
    if kind.head.startswith("Tuple"):
        return f"org.javatuples.{_TUPLES[len(kind.args)]}[{', '.join(java_type(a) for a in kind.args)}]"
    raise SplitError(f"the wire cannot carry the Scala type {kind.scala!r}")


def to_java(kind: Kind, value: str, depth: int = 0) -> str:
    """A Scala expression converting `value` (of `kind`) to java_type(kind)."""
    if kind.head in _SCALARS:
        if kind.head == "String":
            return value
        if kind.head == "BigInt":
            return f"{value}.bigInteger"
        return f"({value}: {_SCALARS[kind.head]})"
    if kind.head == "Any":
        return f"passk.Dynamic.toJava({value})"
    if kind.head == "List":
        return (f"{{ val passkOut{depth} = new {java_type(kind)}(); {value}.foreach(passkItem{depth} => "
                f"passkOut{depth}.add({to_java(kind.args[0], f'passkItem{depth}', depth + 1)})); passkOut{depth} }}")
    if kind.head == "Option":
        return (f"{{ val passkValue{depth} = {value}; if (passkValue{depth}.isEmpty) java.util.Optional.empty[{java_type(kind.args[0])}]()"
                f" else java.util.Optional.of[{java_type(kind.args[0])}]({to_java(kind.args[0], f'passkValue{depth}.get', depth + 1)}) }}")
    if kind.head == "Map":
        return (f"{{ val passkOut{depth} = new {java_type(kind)}(); {value}.foreach(passkItem{depth} => passkOut{depth}.put("
                f"{to_java(kind.args[0], f'passkItem{depth}._1', depth + 1)}, {to_java(kind.args[1], f'passkItem{depth}._2', depth + 1)})); passkOut{depth} }}")
    if kind.head.startswith("Tuple"):
        items = ", ".join(to_java(a, f"passkValue{depth}._{i + 1}", depth + 1) for i, a in enumerate(kind.args))
        return f"{{ val passkValue{depth} = {value}; new {java_type(kind)}({items}) }}"
    raise SplitError(f"the wire cannot carry the Scala type {kind.scala!r}")


def to_scala(kind: Kind, value: str, depth: int = 0) -> str:
    """A Scala expression converting `value` (of java_type(kind)) to `kind`, as the prompt's imports name it."""
    if kind.head in _SCALARS:
        if kind.head == "String":
            return value
        if kind.head == "BigInt":
            return f"BigInt({value})"
        return f"({value}: {kind.head})"
    if kind.head == "Any":
        return f"passk.Dynamic.toScala({value})"
    if kind.head == "List":
        return (f"{{ val passkIn{depth} = {value}; val passkOut{depth} = new scala.collection.mutable.ListBuffer[{kind.args[0].scala}]();"
                f" val passkIt{depth} = passkIn{depth}.iterator(); while (passkIt{depth}.hasNext) {{ val passkItem{depth} = passkIt{depth}.next();"
                f" passkOut{depth} += {to_scala(kind.args[0], f'passkItem{depth}', depth + 1)} }}; passkOut{depth}.toList }}")
    if kind.head == "Option":
        return (f"{{ val passkIn{depth} = {value}; if (passkIn{depth}.isPresent) Some({to_scala(kind.args[0], f'passkIn{depth}.get', depth + 1)})"
                f" else None }}")
    if kind.head == "Map":
        key, item = kind.args
        return (f"{{ val passkIn{depth} = {value}; val passkOut{depth} = new scala.collection.mutable.ArrayBuffer[({key.scala}, {item.scala})]();"
                f" val passkIt{depth} = passkIn{depth}.entrySet.iterator(); while (passkIt{depth}.hasNext) {{ val passkItem{depth} = passkIt{depth}.next();"
                f" passkOut{depth} += (({to_scala(key, f'passkItem{depth}.getKey', depth + 1)}, {to_scala(item, f'passkItem{depth}.getValue', depth + 1)})) }};"
                f" {kind.scala}(passkOut{depth}: _*) }}")
    if kind.head.startswith("Tuple"):
        getters = ["getValue0", "getValue1", "getValue2", "getValue3", "getValue4", "getValue5", "getValue6",
                   "getValue7", "getValue8", "getValue9"]
        items = ", ".join(to_scala(a, f"passkIn{depth}.{getters[i]}", depth + 1) for i, a in enumerate(kind.args))
        return f"{{ val passkIn{depth} = {value}; ({items}) }}"
    raise SplitError(f"the wire cannot carry the Scala type {kind.scala!r}")


# ------------------------------------------------------------------ splitting

_SIGNATURE = re.compile(
    r"def\s+(?P<name>[A-Za-z_][\w]*)\s*\((?P<params>[^()]*(?:\([^()]*\)[^()]*)*)\)\s*:\s*(?P<returns>.+?)\s*=\s*", re.S)
_PARAM = re.compile(r"(?P<name>[A-Za-z_]\w*)\s*:\s*(?P<type>.+)", re.S)
_OBJECT = re.compile(r"\bobject\s+([A-Za-z_]\w*)")
_IMPORT = re.compile(r"(?m)^[ \t]*import\s+[^\n;]+")


def entry(head: str, code: str, brace: int) -> Entry:
    """The Scala method whose body the prompt leaves open: `def <name>(<p> : <T>, ...) : <R> = {`."""
    start = code.rfind("def", 0, brace)
    found = _SIGNATURE.fullmatch(code[start:brace]) if start >= 0 else None
    if not found:
        raise SplitError("the prompt does not end with a Scala method's signature and its '= {'")
    params = []
    for param in splitting.split_params(found.group("params").strip(), "()[]{}"):
        named = _PARAM.fullmatch(param.strip())
        if not named:
            raise SplitError(f"a parameter of the function to complete is not `<name> : <type>`: {param!r}")
        params.append((named.group("name"), named.group("type").strip()))
    return Entry(start=start, brace=brace, name=found.group("name"), params=tuple(params),
                 returns=found.group("returns").strip(), signature=head[start:brace].strip())


def _owner(head: str) -> str:
    code = splitting.blank(head, SYNTAX)
    stack = splitting.open_braces(code)
    if len(stack) != 2:
        raise SplitError("the function to complete is not in a top-level object")
    found = list(_OBJECT.finditer(code, 0, stack[0]))
    if not found:
        raise SplitError("the function to complete is not in an object")
    return found[-1].group(1)


def _imports(head: str) -> str:
    code = splitting.blank(head, SYNTAX)
    return "".join(head[f.start():f.end()].strip() + "\n" for f in _IMPORT.finditer(code))


def programs(source: TestSource) -> Programs:
    parts = splitting.split(source.prompt, source.completion, source.tests, SYNTAX, entry)
    e = parts.entry
    kinds = [(name, parse_type(text)) for name, text in e.params]
    returns = parse_type(e.returns)
    owner = _owner(parts.head)
    imports = _imports(parts.head)
    java_params = ", ".join(f"{name}: {java_type(kind)}" for name, kind in kinds)
    names = ", ".join(name for name, _ in kinds)
    void = returns.head == "Unit"
    java_returns = "Unit" if void else java_type(returns)
    # The judge: a stub with the prompt's signature, converting to the wire's Java types and back.
    wire_args = ", ".join(to_java(kind, name) for name, kind in kinds)
    called = f"{JUDGE_WIRE}.{e.name}({wire_args})"
    stub = f"    {e.signature} {{\n        {called if void else to_scala(returns, called)}\n    }}\n"
    call_args = ", ".join(names.split(", ")) if names else ""
    wire = (f"\nobject {JUDGE_WIRE} {{\n"
            f"  def {e.name}({java_params}): {java_returns} = "
            f"passk.Judge.call[{'AnyRef' if void else java_returns}](new Object() {{}}"
            f"{', ' + call_args if call_args else ''})\n}}\n")
    judge = (parts.before + "\n" + stub + parts.judge_tests + "\n" + wire
             + f"\nobject {JUDGE_CLASS} {{\n  def main(args: Array[String]): Unit = {{\n"
             f"    passk.Judge.start()\n    {owner}.main(args)\n    passk.Judge.pass()\n  }}\n}}\n")
    # The candidate's server: passkCall in the wire's Java types, calling the model's function.
    scala_args = ", ".join(to_scala(kind, name) for name, kind in kinds)
    result = f"{owner}.{e.name}({scala_args})"
    server = (imports + f"\nobject {ENTRY_CLASS} {{\n"
              f"  def main(args: Array[String]): Unit = passk.Server.serve(Class.forName(\"{ENTRY_CLASS}\"), \"{e.name}\")\n"
              f"  def passkCall({java_params}): {java_returns} = {result if void else to_java(returns, result)}\n"
              "}\n")
    return Programs(candidate={"Main.scala": parts.candidate, f"{ENTRY_CLASS}.scala": server},
                    judge={"Main.scala": judge})


_MAIN_OBJECT = re.compile(r"\bobject\s+([A-Za-z_]\w*)(?:\s+extends\s+App\b|[^{]*\{(?:(?!\bobject\s).)*?\bdef\s+main\s*\()",
                          re.S)


def stdio_program(source: str) -> str:
    """A stdin/stdout solution: its object with a `main` (or that `extends App`) runs through the entry object."""
    found = _MAIN_OBJECT.findall(splitting.blank(source, SYNTAX))
    target = found[-1] if found else "Main"
    return (source + f"\n\nobject {ENTRY_CLASS} {{\n  def main(args: Array[String]): Unit = {target}.main(args)\n}}\n")


def run_memory_flags(memory_bytes: int) -> tuple[str, ...]:
    heap = max(32 * MB, memory_bytes - JVM_OVERHEAD_BYTES)
    return (f"-Xmx{heap // MB}m", "-Xss8m")


# scalac's JVM: the runs' flags, a class-data-sharing archive of what scalac loads (dumped when the image is built,
# by compiling passk's Dynamic.scala: a compile then takes about a fifth less CPU), and a heap of its own.
SCALAC_JVM_FLAGS = (*JVM_FLAGS[:3], "-Xmx512m")


def _scalac(*files: str, archive: str = f"-XX:SharedArchiveFile={SCALAC_ARCHIVE}") -> tuple[str, ...]:
    return ("scalac", *("-J" + flag for flag in (*SCALAC_JVM_FLAGS, archive)), "-nowarn", "-encoding", "UTF-8",
            "-cp", CLASSPATH, "-d", ".", *files)


LANGUAGE = Language(
    name="scala",
    title="Scala",
    packages=("scala", "default-jdk-headless", "libjavatuples-java"),
    image_setup=(
        # passk's runtime: Java's wire, judge and server, and the conversions of dynamic values (Dynamic.scala),
        # compiled once into a jar every build of the image's programs has on its class path; compiling them dumps
        # scalac's class-data-sharing archive, and running Sample.scala the runs'.
        f"mkdir -p {PASSK_HOME}/build && cd {PASSK_HOME} && javac -encoding UTF-8 -nowarn -d build"
        f" -cp /usr/share/java/javatuples.jar " + " ".join(f"{_CONTEXT}/passk/{name}" for name in RUNTIME_SOURCES)
        + " && cd build && " + " ".join(_scalac(f"{_CONTEXT}/Dynamic.scala", f"{_CONTEXT}/Sample.scala",
                                                archive=f"-XX:ArchiveClassesAtExit={SCALAC_ARCHIVE}"))
        + f" && cd .. && jar cf {PASSK_JAR} -C build . && rm -rf build"
        + f" && java {' '.join(JVM_FLAGS[:3])} {OPEN_IO} -XX:ArchiveClassesAtExit={RUN_ARCHIVE}"
        + f" -cp {ARCHIVED_CLASSPATH} passk.Sample"
        + f" && chmod -R a+rX {PASSK_HOME}",
    ),
    context_files=(("sandbox/languages/scala/Dynamic.scala", "scala/Dynamic.scala"),
                   ("sandbox/languages/scala/Sample.scala", "scala/Sample.scala"),
                   *((f"sandbox/languages/java/passk/{name}", f"scala/passk/{name}") for name in RUNTIME_SOURCES)),
    source_file="Main.scala",
    stdio_program=stdio_program,
    programs=programs,
    compile=_scalac("Main.scala"),
    candidate_compile=_scalac("Main.scala", f"{ENTRY_CLASS}.scala"),
    judge_compile=_scalac("Main.scala"),
    run=("java", "-ea", *RUN_FLAGS, OPEN_IO, "-cp", RUN_CLASSPATH, ENTRY_CLASS),
    judge_run=("java", "-ea", *RUN_FLAGS, OPEN_IO, "-cp", RUN_CLASSPATH, JUDGE_CLASS),
    judge_memory_bytes=96 * MB,
    version=("sh", "-c", "scala -version 2>&1"),
    compile_time_limit_s=60.0,
    compile_memory_bytes=1024 * MB,
    # scalac reads no file a program names: a compile gaining no CPU stalled on a loaded machine, and waits.
    watch_compile_idle=False,
    **own_heap(run_memory_flags, pids=128),
    stderr_verdicts=(
        (r"java\.lang\.OutOfMemoryError", "memory"),
        (r"java\.lang\.AssertionError", "failed"),
        (r"Exception in thread|java\.lang\.\w+Error|scala\.\w+Error", "error"),
    ),
    run_code_names=("scala",),
    # MultiPL-E's eval_scala.py: scalac (45 s), then `scala -cp . Problem` (15 s); a pass wants status 0 and an
    # empty stderr.
    reference_commands=("scalac Main.scala", "scala -cp . Problem"),
    # MultiPL-E's JVMs start as passk's do (C1 only, the serial collector, scalac's class-data-sharing archive):
    # flags that change nothing a program prints or returns, and take scalac's CPU from about 4 s a program to
    # about 1.3 s.
    reference_pass=ReferencePass(quiet_stderr=True, build_timeout_s=45.0, env=(
        ("JAVA_OPTS", f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:SharedArchiveFile={SCALAC_ARCHIVE}"),)),
)
