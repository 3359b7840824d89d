"""OCaml: OCaml 4.13 from Debian bookworm (`ocaml`: ocamlc, and the `ocaml` toplevel MultiPL-E runs programs with).

Programs are compiled to bytecode with `ocamlc` (a small program's compile and link take a tenth of ocamlopt's,
which assembles and links through gcc; MultiPL-E's `ocaml` toplevel runs bytecode too). MultiPL-E's OCaml tests are
one top-level `let assertions = let candidate = f in (assert (...)); ...; ()`: a failed `assert` ends the program
with an uncaught Assert_failure.

Self-checking problems (MultiPL-E) run as two programs:

- the candidate: `main.ml`, the original program up to the tests (the prompt and the model's completion), and
  `passk_server.ml`, passk's server for it, generated from the prompt's signature: it decodes the arguments by
  type, calls `Main.<function>` and encodes what it returned (an exception crosses as its name and message). It is
  a compilation unit of its own, so nothing the model defines (a module, a shadowed operator) changes what it does;
- the judge, `judge.ml` (the same for every sample of a problem: compiled once per container): the prompt's code
  before the function to complete, a stub with the function's signature (its body calls the candidate's process),
  the tests, and the pass, reported once the tests' top-level code returned. ocaml/build-judge.sh compiles it; a
  problem whose own code does not compile (some of MultiPL-E's OCaml prompts and tests do not type-check: a
  `(string, string) list`, `Some(None)` compared with a string option) gets a judge that reports so.

Values cross by type (ocaml/passk_wire.ml, the rule in sandbox/runtime/values.py): int, float, bool, char, string,
unit, lists, arrays, options and tuples, as the signature names them. Nothing the model wrote (a redefined `=` or
`assert`, `exit 0`, at_exit handlers) ever runs in the judge; in one program, `exit 0` in the function ends the tests
with status 0 before they finish, which MultiPL-E passes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language, ReferencePass
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource

ROOT = "/opt/passk/ocaml"
BUILD_JUDGE = f"{ROOT}/build-judge.sh"
# OCaml's comments nest, and hold string literals (which may hold `*)`): blank() reads comments first, so a quote
# inside a comment is the comment's. Character literals are not in MultiPL-E's signatures.
SYNTAX = Syntax(line_comments=(), block_comment=("(*", "*)"), nested_block_comments=True, quotes='"')
# The function to complete: the prompt's last top-level `let`, whose `=` ends the prompt.
_LET = re.compile(r"(?m)^let[ \t]+(?:rec[ \t]+)?(?P<name>[a-z_][\w']*)\b")
_IDENT = re.compile(r"[a-z_][\w']*")

# ------------------------------------------------------------------ types


@dataclass(frozen=True)
class Type:
    """A type as the signature writes it: a constructor and its arguments (`*` for a tuple)."""

    name: str
    args: tuple[Type, ...] = ()


_SCALARS = ("int", "float", "bool", "char", "string", "unit")
_CONTAINERS = ("list", "array", "option")
_TOKEN = re.compile(r"\s*(?:(?P<word>'?[A-Za-z_][\w']*(?:\.[A-Za-z_][\w']*)*)|(?P<punct>->|[()*,]))")


def parse_type(text: str) -> Type:
    """The type `text` writes (SplitError if it is not one passk's wire carries or if it is not a type)."""
    tokens = []
    at = 0
    while at < len(text.rstrip()):
        found = _TOKEN.match(text, at)
        if not found:
            raise SplitError(f"cannot read the type {text.strip()!r}")
        tokens.append(found.group("word") or found.group("punct"))
        at = found.end()
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def advance() -> str:
        nonlocal position
        position += 1
        return tokens[position - 1]

    def tuple_type() -> Type:
        items = [applied()]
        while peek() == "*":
            advance()
            items.append(applied())
        if peek() == "->":
            raise SplitError(f"the type {text.strip()!r} is a function's: passk cannot carry functions")
        return items[0] if len(items) == 1 else Type("*", tuple(items))

    def applied() -> Type:
        if peek() == "(":
            advance()
            inner = [tuple_type()]
            while peek() == ",":
                advance()
                inner.append(tuple_type())
            if advance() != ")":
                raise SplitError(f"cannot read the type {text.strip()!r}")
            if len(inner) > 1:  # `(a, b) t`: a constructor applied to several types
                if peek() is None or not _IDENT.fullmatch(peek() or ""):
                    raise SplitError(f"cannot read the type {text.strip()!r}")
                node = Type(advance(), tuple(inner))
            else:
                node = inner[0]
        else:
            word = peek()
            if word is None or not re.fullmatch(r"'?[A-Za-z_][\w'.]*", word):
                raise SplitError(f"cannot read the type {text.strip()!r}")
            advance()
            node = Type(word)
        while peek() is not None and re.fullmatch(r"'?[A-Za-z_][\w'.]*", peek() or ""):
            node = Type(advance(), (node,))
        return node

    if not tokens:
        raise SplitError("an empty type")
    result = tuple_type()
    if position != len(tokens):
        raise SplitError(f"cannot read the type {text.strip()!r}")
    _check(result, text)
    return result


def _check(node: Type, text: str) -> None:
    for arg in node.args:
        _check(arg, text)
    if node.name == "*":
        if len(node.args) > 5:
            raise SplitError(f"a tuple of {len(node.args)} in {text.strip()!r}: passk carries tuples of up to 5")
    elif node.name.startswith("'"):
        raise SplitError(f"the type {text.strip()!r} is polymorphic: passk cannot choose the type of its values")
    elif node.name not in _SCALARS + _CONTAINERS:
        raise SplitError(f"the type {text.strip()!r} uses {node.name!r}: a type passk does not carry between the "
                         "tests' process and the program's")


def codec(node: Type) -> str:
    """The OCaml expression of passk_wire's codec for the type. A constructor applied to the wrong number of types
    (`(string, string) list`) is the problem's own type error: the compiler refuses the signature before the body
    where this codec stands, so any expression does there."""
    if node.name == "*":
        return f"(Passk_wire.tuple{len(node.args)} {' '.join(codec(arg) for arg in node.args)})"
    wanted = 1 if node.name in _CONTAINERS else 0
    if len(node.args) != wanted:
        return "(assert false)"
    if node.name in _CONTAINERS:
        return f"(Passk_wire.{node.name} {codec(node.args[0])})"
    return f"Passk_wire.{node.name}"


# ------------------------------------------------------------------ the function to complete


def _closing(text: str, start: int) -> int:
    depth = 0
    for index in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return index
    return -1


def entry(head: str) -> tuple[Entry, tuple[Type, ...], Type]:
    """The prompt's function to complete, `let [rec] name (a : t) ... : r =`, with its parameter and return types."""
    code = splitting.blank(head, SYNTAX)
    if not code.rstrip().endswith("="):
        raise SplitError("the prompt does not end with a function's `let ... =`")
    lets = list(_LET.finditer(code))
    if not lets:
        raise SplitError("the prompt has no top-level `let` for the function to complete")
    found = lets[-1]
    equals = len(code.rstrip()) - 1
    rest = code[found.end():equals]
    params: list[tuple[str, str]] = []
    at = 0
    while True:
        while at < len(rest) and rest[at].isspace():
            at += 1
        if at >= len(rest) or rest[at] != "(":
            break
        close = _closing(rest, at)
        if close < 0:
            raise SplitError(f"a parameter of {found.group('name')} does not close")
        inner = head[found.end() + at + 1:found.end() + close]
        if not inner.strip():
            params.append(("()", "unit"))
        else:
            name, colon, kind = inner.partition(":")
            if not colon or not _IDENT.fullmatch(name.strip()):
                raise SplitError(f"a parameter of {found.group('name')} is not `(name : type)`: ({inner.strip()})")
            params.append((name.strip(), " ".join(kind.split())))
        at = close + 1
    tail = rest[at:].strip()
    if not tail.startswith(":"):
        raise SplitError(f"{found.group('name')} has {tail!r} where a typed parameter or its return type would be"
                         if tail else f"{found.group('name')} has no return type: passk needs it to rebuild its values")
    returns = " ".join(head[found.end() + at:equals].strip()[1:].split())
    types = tuple(parse_type(kind) for _, kind in params)
    e = Entry(start=found.start(), brace=equals, name=found.group("name"), params=tuple(params), returns=returns,
              signature=" ".join(head[found.start():equals + 1].split()))
    return e, types, parse_type(returns)


# ------------------------------------------------------------------ the two programs

_JUDGE_START = "let () = Passk_wire.Judge.start ()\n"
_JUDGE_END = "\nlet () = Passk_wire.Judge.pass ()\n"


def judge_program(head: str, tests: str, e: Entry, types: tuple[Type, ...], returns: Type) -> tuple[str, str]:
    """(judge.ml, problem.lines: the lines of judge.ml that are the problem's own, "first last" a line)."""
    before = head[:e.start]
    names = [f"passk_{index}" if name != "()" else "()" for index, (name, _) in enumerate(e.params)]
    signature = f"let {e.name} " + " ".join(
        "()" if name == "()" else f"({name} : {kind})" for name, (_, kind) in zip(names, e.params, strict=True)
    ) + f" : {e.returns} =\n"
    args = "; ".join(f"Passk_wire.arg {codec(kind)} {name}" for name, kind in zip(names, types, strict=True))
    stub = signature + f'  Passk_wire.Judge.call "{e.name}" [{args}] {codec(returns)}\n'
    first = _JUDGE_START.count("\n") + 1
    signature_line = first + before.count("\n")
    tests_first = signature_line + stub.count("\n")
    judge = _JUDGE_START + before + stub + tests + _JUDGE_END
    own = [(first, signature_line), (tests_first, tests_first + tests.count("\n"))]
    return judge, "".join(f"{a} {b}\n" for a, b in own)


def server_program(e: Entry, types: tuple[Type, ...], returns: Type) -> str:
    """passk's server for the candidate's `Main.<function>` (passk_server.ml)."""
    decode = "".join(f"      let passk_{index} = Passk_wire.read {codec(kind)} passk_r in\n"
                     for index, kind in enumerate(types))
    args = " ".join(f"passk_{index}" for index in range(len(types))) or "()"
    return (
        "(* passk's server for this program (sandbox/languages/ocaml.py): it answers the tests' calls. *)\n"
        "let () =\n  Passk_wire.Server.serve [\n"
        f'    ("{e.name}", fun passk_r ->\n'
        f"      Passk_wire.Server.arguments passk_r {len(types)};\n"
        f"{decode}"
        "      Passk_wire.finish passk_r;\n"
        f"      Passk_wire.Server.answer {codec(returns)} (fun () -> Main.{e.name} {args}));\n"
        "  ]\n"
    )


def programs(source: TestSource) -> Programs:
    """The judge's and the candidate's files for a MultiPL-E problem and a completion."""
    if source.format != "multipl-e":
        raise SplitError(f"OCaml runs MultiPL-E's self-checking problems, not {source.format}'s")
    head = source.prompt
    e, types, returns = entry(head)
    judge, lines = judge_program(head, source.tests, e, types, returns)
    return Programs(candidate={"main.ml": head + source.completion + "\n",
                               "passk_server.ml": server_program(e, types, returns)},
                    judge={"judge.ml": judge, "problem.lines": lines})


_OCAMLC = ("ocamlc", "-w", "-a")
_WIRE = ("-I", ROOT, "unix.cma", f"{ROOT}/passk_wire.cmo")

LANGUAGE = Language(
    name="ocaml",
    title="OCaml",
    packages=("ocaml",),
    context_files=(
        ("sandbox/languages/ocaml/passk_wire.ml", "ocaml/passk_wire.ml"),
        ("sandbox/languages/ocaml/build-judge.sh", "ocaml/build-judge.sh"),
    ),
    image_setup=(
        f"mkdir -p {ROOT} && cp /passk-context/ocaml/passk_wire.ml /passk-context/ocaml/build-judge.sh {ROOT}/",
        # passk's wire, compiled once: a sample's compile pays only for its own code and the server's dispatch.
        f"cd {ROOT} && ocamlc -w +a-4-9-40-41-42-44-45-70 -c passk_wire.ml && rm passk_wire.ml",
        # What ocamlc and the toplevel never use (~450 MB): the native-code compiler, OCaml's other tools and their
        # bytecode twins, the compiler's own libraries, native and source files of the libraries, and the C
        # compiler proper that `ocaml` depends on for ocamlopt (ocamlc links bytecode without it).
        "cd /usr/bin && rm -f ocamlopt* ocamldebug ocamlobjinfo* ocamlc.byte ocamldumpobj ocamldep* ocamldoc*"
        " ocamlcmt ocamlprof* ocamloptp* ocamlcp* ocamlmktop* ocamlmklib* ocamllex* x86_64-linux-gnu-lto-dump-12"
        " && rm -rf /usr/lib/ocaml/compiler-libs /usr/lib/ocaml/ocamldoc /usr/lib/ocaml/expunge"
        " /usr/lib/ocaml/extract_crc /usr/share/doc/ocaml* /usr/lib/gcc/x86_64-linux-gnu/12/cc1"
        " /usr/lib/gcc/x86_64-linux-gnu/12/lto1"
        " && find /usr/lib/ocaml \\( -name '*.cmt' -o -name '*.cmti' -o -name '*.cmx' -o -name '*.cmxa'"
        " -o -name '*.cmxs' -o -name '*.a' -o -name '*.o' -o -name '*.ml' \\) -delete",
        f"chmod -R a+rX,go-w {ROOT}",
        # The toplevel and the compiler work as the harness and passk run them.
        f"cd /tmp && printf 'let () = print_string (Passk_wire.encode Passk_wire.int 1)\\n' > t.ml"
        f" && ocamlc -w -a -I {ROOT} unix.cma {ROOT}/passk_wire.cmo t.ml -o t && ./t > /dev/null"
        " && printf 'let () = assert (1 + 1 = 2)\\n' > t.ml && ocaml t.ml && rm -f t t.ml t.cm*",
    ),
    source_file="main.ml",
    programs=programs,
    compile=(*_OCAMLC, "-o", "main", "main.ml"),
    candidate_compile=(*_OCAMLC, *_WIRE, "-o", "main", "main.ml", "passk_server.ml"),
    judge_compile=("sh", BUILD_JUDGE, *_OCAMLC[1:], *_WIRE),
    judge_run=("./judge",),
    run=("./main",),
    judge_memory_bytes=32 * MB,
    version=("ocaml", "-version"),
    stderr_verdicts=(
        (r"Fatal error: exception Out_of_memory|Fatal error: out of memory", "memory"),
        (r"Fatal error: exception Assert_failure", "failed"),
        (r"Fatal error: exception", "error"),
    ),
    aliases=("ml",),
    # SandboxFusion has no OCaml: /run_code takes it under passk's own name.
    run_code_names=("ocaml",),
    # MultiPL-E's evaluation/src/eval_ocaml.py: `ocaml <file>` (the toplevel) under safe_subprocess's default 15 s;
    # exit status 0 passes.
    reference_commands=("ocaml main.ml",),
    reference_pass=ReferencePass(timeout_s=15.0),
    notes="ocamlc (bytecode) against passk's precompiled wire; the judge's stubs and the candidate's server are "
          "typed from the prompt's signature",
)
