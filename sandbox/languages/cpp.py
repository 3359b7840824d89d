"""C++: g++ from Debian bookworm (GCC 12), with OpenSSL and the Boost headers HumanEval-X uses.

Self-checking problems (HumanEval-X, MultiPL-E) run as two processes built from three translation units
(sandbox/languages/split.py splits the texts; cpp/passk_wire.hpp is the wire):

- the candidate, `main.cpp`: the original program's text up to the tests (the prompt and the model's
  completion), linked with passk's server for it, `passk_server.o`. Nothing of passk is in this file.
- the server, `passk_server.cpp` (the support build: compiled once per problem, as the judge's uid): the
  prompt's code before the function to complete, that function's declaration, the wire, and a `main` that
  answers the judge's calls. A translation unit of its own: no macro, declaration or operator of the model's
  code reaches it. Its symbols are made weak (objcopy --weaken), so that the prompt's helper functions, which
  the candidate's file holds too, are the candidate's at link time. A completion that defines `main` (or any
  of the server's functions) only replaces code of its own process: the judge then sees a candidate that does
  not answer, and how that process ended decides, as for any candidate that ends early.
- the judge, `judge.cpp`: the prompt's code before the function, the function's declaration, the tests as the
  problem gives them (after `#line 1 "tests"`, so that a failed assertion names the tests' own line), then the
  wire and a stub for the function that calls the candidate's process. It is linked with `--wrap=main`: it
  starts in passk's `__wrap_main`, which runs the tests' own `main` and reports a pass only once it returned 0.

Unions. MultiPL-E translates Python's Union[...] into a generated `union Union_<types>` with a constructor per
member and an `operator==` per member (HumanEval_103's `Union_std_string_long`). A C++ union does not record which
member holds its value, so as the prompt writes it no process could tell which value to send. passk replaces that
generated union, in all three files and on the same lines, by a struct of the same name: the same members (in an
anonymous union, so `u.f0` means what it meant, and the struct can be copied exactly when the union could), the
same constructors and destructor, plus the index of the member a constructor set; its `operator==` compares the
member that holds the value, and is false for any other (reading another member was undefined behaviour). A union
value crosses as `a <member's type as the prompt spells it> <value>`, and the judge rebuilds it with that member's
constructor. The rule's limits, each a SplitError when the dataset is created:
- only MultiPL-E's generated union (its exact text) is replaced; another union in a prompt is refused;
- a union is carried as the function's return value only: as a parameter (and inside another type) its
  members, which may be neither copied nor moved, could not be rebuilt for the call;
- every member must be a type the wire carries: HumanEval_137's `Union_..._std_nullopt` has a member of
  "type" `std::nullopt`, which is not a type, so that problem compiles under no harness, MultiPL-E's included.
"""

import json
import re
import shlex

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource
from sandbox.runtime.pchkey import PCH_HEADER

SYNTAX = Syntax(cpp_raw_strings=True)
WIRE = "/opt/passk/cpp/passk_wire.hpp"
# The name the judge gives the tests' text in its assertion messages and compile errors (`tests:5: ...`).
TESTS_FILE = "tests"
_SIGNATURE = re.compile(r"\s*(?P<returns>[^()]*?[\w>*&\s])\s*\b(?P<name>[A-Za-z_]\w*)\s*\((?P<params>.*)\)\s*", re.S)
_PARAM = re.compile(r"(?P<type>.*?[\w>*&\s])\s*(?P<name>[A-Za-z_]\w*)\s*", re.S)


def entry(head: str, code: str, brace: int) -> Entry:
    """The C++ function whose body the prompt leaves open: `<return type> <name>(<parameters>)`."""
    start = splitting.statement_start(code, brace, directive_lines=True)
    found = _SIGNATURE.fullmatch(code[start:brace])
    if not found or not found.group("returns").strip():
        raise SplitError("the prompt does not end with a C++ function's signature and its '{'")
    params = []
    listed = found.group("params").strip()
    for param in splitting.split_params("" if listed == "void" else listed):
        named = _PARAM.fullmatch(param)
        if not named or not named.group("type").strip():
            raise SplitError(f"a parameter of the function to complete has no name: {param!r}")
        params.append((named.group("name"), named.group("type").strip()))
    signature = head[start:brace].strip()
    return Entry(start=start, brace=brace, name=found.group("name"), params=tuple(params),
                 returns=found.group("returns").strip(), signature=signature)


# ------------------------------------------------------------------ MultiPL-E's unions

_UNION = re.compile(r"^union[ \t]+(?P<name>\w+)[ \t]*\{.*?^\};[ \t]*$", re.S | re.M)
_MEMBER = re.compile(r"[ \t]*(?P<type>[^;{}\n]+?)[ \t]+f(?P<index>\d+);")
# The member types the wire carries inside a union (a subset of passk_wire.hpp's codecs, spelled as MultiPL-E does).
_SCALARS = {"long", "float", "bool", "double", "int", "std::string"}
_TEMPLATES = {"std::vector": 1, "std::optional": 1, "std::map": 2, "std::tuple": 0}


def _generated_union(name: str, members: list[str]) -> str:
    """The text MultiPL-E's C++ translator (dataset_builder/humaneval_to_cpp.py) writes for a union."""
    text = f"union {name}{{\n" + "\n".join(f"    {kind} f{index};" for index, kind in enumerate(members))
    for index, kind in enumerate(members):
        text += f"    {name}({kind} _f{index}) : f{index}(_f{index}) {{}}\n"
    text += f"    ~{name}() {{}}\n"
    for index, kind in enumerate(members):
        text += f"    bool operator==({kind} f) {{\n        return f{index} == f ;\n    }}"
    return text + "\n};"


def _tagged_union(name: str, members: list[str], lines: int) -> str:
    """passk's struct for a generated union: the same interface, plus the member that holds the value; exactly
    `lines` lines, so that every later line of the prompt keeps its number."""
    declared = " ".join(f"{kind} f{index};" for index, kind in enumerate(members))
    out = [f"struct {name} {{", f"    union {{ {declared} }};", "    int passk_member;"]
    out += [f"    {name}({kind} _f{index}) : f{index}(_f{index}), passk_member({index}) {{}}"
            for index, kind in enumerate(members)]
    out.append(f"    ~{name}() {{}}")
    out += [f"    bool operator==({kind} f) {{ return passk_member == {index} && f{index} == f; }}"
            for index, kind in enumerate(members)]
    out.append("};")
    assert len(out) <= lines
    return "\n".join(out) + "\n" * (lines - len(out))


def _carried(kind: str) -> bool:
    """Whether the wire carries a union member of this type (as MultiPL-E spells types)."""
    kind = kind.strip()
    if kind in _SCALARS:
        return True
    found = re.fullmatch(r"(std::\w+)\s*<(.*)>", kind, re.S)
    if not found or found.group(1) not in _TEMPLATES:
        return False
    args = splitting.split_params(found.group(2))
    wanted = _TEMPLATES[found.group(1)]
    return bool(args) and (wanted == 0 or len(args) == wanted) and all(_carried(arg) for arg in args)


def _union_codec(name: str, members: list[str]) -> str:
    """The wire's Codec for passk's struct: `a <member type> <value>`, rebuilt with that member's constructor."""
    encode = "".join(
        f'            case {index}: w.byte(\'a\'); w.bytes("{kind}", {len(kind.encode())}); '
        f"Codec<{kind}>::encode(w, v.f{index}); return;\n" for index, kind in enumerate(members))
    decode = "".join(f'        if (held == "{kind}") return {name}(Codec<{kind}>::decode(r));\n' for kind in members)
    return (
        f"namespace passk {{\ntemplate <>\nstruct Codec<{name}> {{\n"
        f"    static void encode(Writer& w, const {name}& v) {{\n        switch (v.passk_member) {{\n{encode}"
        f'            default: w.byte(\'X\'); w.bytes("{name} with no member", {len(name) + 15}); return;\n'
        "        }\n    }\n"
        f"    static {name} decode(Reader& r) {{\n        r.expect('a');\n        Reader::Nest nest(r);\n"
        f"        std::string held = r.bytes();\n{decode}"
        f'        throw Malformed("a {name} holding another type");\n    }}\n}};\n}}  // namespace passk\n'
    )


def _tag_unions(prompt: str) -> tuple[str, dict[str, list[str]]]:
    """The prompt with MultiPL-E's unions replaced by passk's structs, and each union's member types."""
    unions: dict[str, list[str]] = {}
    code = splitting.blank(prompt, SYNTAX)
    out, at = [], 0
    for found in _UNION.finditer(code):
        name, text = found.group("name"), prompt[found.start():found.end()]
        members = [(int(m.group("index")), m.group("type").strip()) for m in _MEMBER.finditer(text)]
        kinds = [kind for _, kind in members]
        if [index for index, _ in members] != list(range(len(members))) or text != _generated_union(name, kinds):
            raise SplitError(f"the prompt defines union {name}, which is not MultiPL-E's generated union: a C++ "
                             "union does not record which member holds its value, so no process could tell which "
                             "value to send")
        for kind in kinds:
            if not _carried(kind):
                raise SplitError(f"union {name} has a member of type {kind!r}, which the wire cannot carry"
                                 + (" (std::nullopt is a value, not a type: no program of this problem compiles)"
                                    if kind == "std::nullopt" else ""))
        unions[name] = kinds
        out += [prompt[at:found.start()], _tagged_union(name, kinds, text.count("\n") + 1)]
        code = code[:found.start()] + " " * (found.end() - found.start()) + code[found.end():]
        at = found.end()
    if re.search(r"\bunion\b", code):
        raise SplitError("the prompt defines a union passk does not know: a C++ union does not record which member "
                         "holds its value, so no process could tell which value to send")
    return "".join(out) + prompt[at:], unions


def _check_unions(e: Entry, unions: dict[str, list[str]]) -> None:
    for name in unions:
        uses = re.compile(rf"\b{re.escape(name)}\b")
        for param, kind in e.params:
            if uses.search(kind):
                raise SplitError(f"parameter {param} of {e.name} has the union type {kind}: passk carries a union "
                                 "as the function's return value only")
        if uses.search(e.returns) and e.returns.strip() != name:
            raise SplitError(f"{e.name} returns {e.returns}: passk carries a union as the whole return value only")


# ------------------------------------------------------------------ the three files


def _tests_at(parts: splitting.Parts, tests: str) -> tuple[str, str]:
    """(the blocks split() closes before the tests, the tests' text as the judge compiles it)."""
    if parts.judge_tests != tests and parts.judge_tests.endswith(tests):
        return parts.judge_tests[:-len(tests)], tests
    return "", parts.judge_tests


def programs(source: TestSource) -> Programs:
    prompt, unions = _tag_unions(source.prompt)
    parts = splitting.split(prompt, source.completion, source.tests, SYNTAX, entry)
    e = parts.entry
    _check_unions(e, unions)
    names = ", ".join(name for name, _ in e.params)
    types = ", ".join(kind for _, kind in e.params)
    codecs = "".join(_union_codec(name, members) for name, members in unions.items())
    closers, tests = _tests_at(parts, source.tests)
    judge = parts.before + "\n" + e.signature + ";\n" + closers + f'#line 1 "{TESTS_FILE}"\n' + tests + "\n"
    judge += f'#line {judge.count(chr(10)) + 2} "judge.cpp"\n'
    judge += (
        f'#include "{WIRE}"\n' + codecs
        + e.signature + " {\n"
        + f'    return passk::judge::call<{e.returns}>("{e.name}"{", " + names if names else ""});\n}}\n'
        + "// The program starts here (the link's --wrap=main): the tests' own main, then the only way to a pass.\n"
        + 'extern "C" int __real_main(int, char**, char**);\n'
        + 'extern "C" int __wrap_main(int argc, char** argv, char** envp) {\n'
        + "    int status = __real_main(argc, argv, envp);\n"
        + "    if (status != 0) return status;\n"
        + "    passk::judge::pass();\n}\n"
    )
    server = (
        parts.before + "\n" + e.signature + f';\n#include "{WIRE}"\n' + codecs
        + "int main() {\n"
        + f'    return passk::server::serve({{{{"{e.name}", &passk::server::Call<{e.returns} (*)({types})>::serve<&{e.name}>}}}});\n'
        + "}\n"
    )
    return Programs(candidate={"main.cpp": parts.candidate}, judge={"judge.cpp": judge},
                    support={"passk_server.cpp": server})


# The precompiled header (sandbox/runtime/builds.py): the program's leading `#include <...>` lines and
# `using namespace std;`, in their order. Between them only blank lines and
# whole comments may stand (a comment is whitespace to the compiler, so the token sequence is unchanged when
# those lines move, in order, to a header included first); the scan stops at the first other line, at a
# line ending in a backslash (a continuation), and at a comment with code after it. Only <...> names made of
# ordinary characters: never a quoted include (the program's directory), an absolute path or "..".
_INCLUDE = re.compile(r"[ \t]*#[ \t]*include[ \t]*<[\w+-][\w./+-]*>[ \t\r]*")
_USING_STD = re.compile(r"[ \t]*using[ \t]+namespace[ \t]+std[ \t]*;[ \t\r]*")


def header_lines(source: str) -> list[int]:
    """Indices of the source's lines that form its precompiled header (none: no header)."""
    picked: list[int] = []
    includes = 0
    in_comment = False
    for index, line in enumerate(source.split("\n")):
        if line.rstrip().endswith("\\") or "??/" in line:
            break
        stripped = line.strip()
        if in_comment or stripped.startswith("/*"):
            start = 0 if in_comment else stripped.index("/*") + 2
            end = stripped.find("*/", start)
            in_comment = end < 0
            if not in_comment and stripped[end + 2:].strip():
                break
            continue
        if not stripped or stripped.startswith("//"):
            continue
        include = bool(_INCLUDE.fullmatch(line)) and ".." not in line
        if include or _USING_STD.fullmatch(line):
            picked.append(index)
            includes += include
            continue
        break
    return picked if includes else []


# The compile's language flags: the precompiled header is built with exactly these.
_FLAGS = ("-std=c++17",)
_PRECOMPILE = ("g++", *_FLAGS, "-x", "c++-header", "-o", f"{PCH_HEADER}.gch", PCH_HEADER)
_COMPILE_TIME_LIMIT_S = 20.0
_COMPILE_MEMORY_BYTES = 1024 * MB
# Headers precompiled into the image (cpp/headers.json: HumanEval-X's and MultiPL-E's include blocks), under the
# keys the supervisor computes for a job with the default compile limits (sandbox/runtime/builds.py).
_PREBUILD = json.dumps({"build": list(_PRECOMPILE), "limits": [_COMPILE_TIME_LIMIT_S, _COMPILE_MEMORY_BYTES]})
# -Winvalid-pch: g++ says when it could not use the precompiled header (native.py counts it).
# -fuse-ld=gold: binutils' other linker (in the image already), the same libraries; a third of ld.bfd's time.
_LINK = ("-Winvalid-pch", "-fuse-ld=gold")

LANGUAGE = Language(
    name="cpp",
    title="C++",
    # OpenSSL for CPP/162 (md5), Boost headers for CPP/22 and CPP/137 (boost::any).
    packages=("g++", "libssl-dev", "libboost-dev"),
    context_files=(("sandbox/languages/cpp/prebuild.py", "cpp/prebuild.py"),
                   ("sandbox/languages/cpp/headers.json", "cpp/headers.json"),
                   ("sandbox/runtime/pchkey.py", "cpp/pchkey.py"),
                   ("sandbox/languages/cpp/passk_wire.hpp", "cpp/passk_wire.hpp")),
    image_setup=(f"python3 /passk-context/cpp/prebuild.py {shlex.quote(_PREBUILD)}",
                 f"mkdir -p {WIRE.rsplit('/', 1)[0]} && cp /passk-context/cpp/passk_wire.hpp {WIRE} && chmod -R a+rX /opt/passk"),
    source_file="main.cpp",
    programs=programs,
    compile=("g++", *_FLAGS, *_LINK, "-o", "main", "main.cpp", "-lcrypto", "-lssl"),
    candidate_compile=("g++", *_FLAGS, *_LINK, "-o", "main", "main.cpp", "passk_server.o", "-lcrypto", "-lssl"),
    support_compile=("sh", "-c", f"g++ {' '.join(_FLAGS)} -Winvalid-pch -c -o passk_server.o passk_server.cpp"
                     " && objcopy --weaken passk_server.o"),
    judge_compile=("g++", *_FLAGS, *_LINK, "-Wl,--wrap=main", "-o", "judge", "judge.cpp", "-lcrypto", "-lssl"),
    judge_run=("./judge",),
    header_lines=header_lines,
    precompile=_PRECOMPILE,
    # Room for several headers' PCHs (~20-30 MB each) beside the compiled programs.
    compile_cache_bytes=256 * MB,
    run=("./main",),
    version=("g++", "--version"),
    compile_time_limit_s=_COMPILE_TIME_LIMIT_S,
    compile_memory_bytes=_COMPILE_MEMORY_BYTES,
    stderr_verdicts=(
        (r"std::bad_alloc", "memory"),
        (r"Assertion .* failed", "failed"),
        (r"terminate called", "error"),
    ),
    aliases=("c++", "cxx", "cc"),
    run_code_names=("cpp",),
    reference_commands=("g++ -std=c++11 main.cpp -lcrypto -lssl", "./a.out"),
)
