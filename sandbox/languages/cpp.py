"""C++: g++ from Debian bookworm (GCC 12), with OpenSSL and the Boost headers HumanEval-X uses."""

import json
import re
import shlex

from sandbox.languages.base import MB, PASS_TOKEN_ENV, Language
from sandbox.runtime.pchkey import PCH_HEADER

# Before the program: the tests' `main` becomes an ordinary function (only <cstdio> and <cstdlib> are added:
# <iostream> alone would add a third to a small program's compile time)...
_PRELUDE = "#include <cstdio>\n#include <cstdlib>\n#define main passk_tests_main\n"
# ...and after it, the real `main` calls it and prints the pass token only once it returned. The candidate's
# code that runs earlier (global constructors) or later (atexit handlers, exit(0) from inside the tests)
# never reaches the token. The tests' main is called for its effect only: one that falls off its end has no
# defined return value in an ordinary function, and HumanEval-X/MultiPL-E tests fail by assert (abort).
# std::_Exit after the token: nothing (an atexit handler, a static destructor) may print after it. (Output
# a program left in std::cout's own buffer after sync_with_stdio(false) is then not shown.)
_EPILOGUE = (
    "\n#undef main\n"
    "int main() {\n"
    "    passk_tests_main();\n"
    f"    const char* passk_token = std::getenv(\"{PASS_TOKEN_ENV}\");\n"
    "    std::fflush(stdout);\n"
    "    std::printf(\"\\n%s\\n\", passk_token ? passk_token : \"\");\n"
    "    std::fflush(stdout);\n"
    "    std::_Exit(0);\n"
    "}\n"
)


def tests_program(text: str) -> str:
    return _PRELUDE + text + _EPILOGUE


# The precompiled header (sandbox/runtime/native.py): the program's leading `#include <...>` lines, the
# prelude's `#define main`, and `using namespace std;`, in their order. Between them only blank lines and
# whole comments may stand (a comment is whitespace to the compiler, so the token sequence is unchanged when
# those lines move, in order, to a header included first); the scan stops at the first other line, at a
# line ending in a backslash (a continuation), and at a comment with code after it. Only <...> names made of
# ordinary characters: never a quoted include (the program's directory), an absolute path or "..".
_INCLUDE = re.compile(r"[ \t]*#[ \t]*include[ \t]*<[\w+-][\w./+-]*>[ \t\r]*")
_USING_STD = re.compile(r"[ \t]*using[ \t]+namespace[ \t]+std[ \t]*;[ \t\r]*")
_MAIN_DEFINE = "#define main passk_tests_main"


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
        if include or _USING_STD.fullmatch(line) or line == _MAIN_DEFINE:
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
                   ("sandbox/runtime/pchkey.py", "cpp/pchkey.py")),
    image_setup=(f"python3 /passk-context/cpp/prebuild.py {shlex.quote(_PREBUILD)}",),
    source_file="main.cpp",
    tests_program=tests_program,
    # -Winvalid-pch: g++ says when it could not use the precompiled header (native.py counts it).
    # -fuse-ld=gold: binutils' other linker (in the image already), the same libraries; a third of ld.bfd's time.
    compile=("g++", *_FLAGS, "-Winvalid-pch", "-fuse-ld=gold", "-o", "main", "main.cpp", "-lcrypto", "-lssl"),
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
