"""C++: g++ from Debian bookworm (GCC 12), with OpenSSL and the Boost headers HumanEval-X uses.

Self-checking problems run as three translation units in two processes (sandbox/languages/split.py):

- the candidate, `main.cpp`: the original program up to the tests (the prompt and the model's completion),
  linked with passk's server for it, `passk_server.o`;
- the server, `passk_server.cpp`, compiled once per problem (the support build): the prompt's code before
  the function to complete, that function's declaration, and the wire (cpp/passk_wire.hpp) answering the
  judge's calls. A translation unit of its own: no macro, declaration or operator of the model's code reaches
  it. Its symbols are made weak (objcopy --weaken), so the prompt's helper functions it repeats yield to the
  candidate's own copies at link time;
- the judge, `judge.cpp`: the prompt's code before the function, the function's declaration, the tests (their
  `main` renamed), then the wire and a stub for the function that calls the candidate's process, and a `main`
  that reports a pass once the tests' `main` returned.
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


def programs(source: TestSource) -> Programs:
    parts = splitting.split(source.prompt, source.completion, source.tests, SYNTAX, entry)
    e = parts.entry
    names = ", ".join(name for name, _ in e.params)
    types = ", ".join(kind for _, kind in e.params)
    judge = (
        parts.before + "\n" + e.signature + ";\n#define main passk_tests_main\n" + parts.judge_tests
        + f'\n#undef main\n#include "{WIRE}"\n'
        + e.signature + " {\n"
        + f'    return passk::judge::call<{e.returns}>("{e.name}"{", " + names if names else ""});\n}}\n'
        + "int main() {\n    passk_tests_main();\n    passk::judge::pass();\n}\n"
    )
    server = (
        parts.before + "\n" + e.signature + f';\n#include "{WIRE}"\n'
        + "int main() {\n"
        + f'    return passk::server::serve({{{{"{e.name}", &passk::server::Call<{e.returns} (*)({types})>::serve<&{e.name}>}}}});\n'
        + "}\n"
    )
    return Programs(candidate={"main.cpp": parts.candidate}, judge={"judge.cpp": judge},
                    support={"passk_server.cpp": server})


# The precompiled header (sandbox/runtime/native.py): the program's leading `#include <...>` lines and
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
# keys the supervisor computes for a job with the default compile limits (sandbox/runtime/native.py).
_PREBUILD = json.dumps({"build": list(_PRECOMPILE), "limits": [_COMPILE_TIME_LIMIT_S, _COMPILE_MEMORY_BYTES]})

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
    # -Winvalid-pch: g++ says when it could not use the precompiled header (native.py counts it).
    # -fuse-ld=gold: binutils' other linker (in the image already), the same libraries; a third of ld.bfd's time.
    compile=("g++", *_FLAGS, "-Winvalid-pch", "-fuse-ld=gold", "-o", "main", "main.cpp", "-lcrypto", "-lssl"),
    candidate_compile=("g++", *_FLAGS, "-Winvalid-pch", "-fuse-ld=gold", "-o", "main", "main.cpp", "passk_server.o",
                       "-lcrypto", "-lssl"),
    support_compile=("sh", "-c", f"g++ {' '.join(_FLAGS)} -c -o passk_server.o passk_server.cpp"
                     " && objcopy --weaken passk_server.o"),
    judge_compile=("g++", *_FLAGS, "-Winvalid-pch", "-fuse-ld=gold", "-o", "judge", "judge.cpp", "-lcrypto", "-lssl"),
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
    reference_commands=("g++ -std=c++11 main.cpp -lcrypto -lssl", "./a.out"),
)
