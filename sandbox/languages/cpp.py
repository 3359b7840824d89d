"""C++: g++ from Debian bookworm (GCC 12), with OpenSSL and the Boost headers HumanEval-X uses."""

from sandbox.languages.base import MB, PASS_TOKEN_ENV, Language

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


LANGUAGE = Language(
    name="cpp",
    title="C++",
    # OpenSSL for CPP/162 (md5), Boost headers for CPP/22 and CPP/137 (boost::any).
    packages=("g++", "libssl-dev", "libboost-dev"),
    source_file="main.cpp",
    compile=("g++", "-std=c++17", "-o", "main", "main.cpp", "-lcrypto", "-lssl"),
    run=("./main",),
    version=("g++", "--version"),
    compile_time_limit_s=20.0,
    compile_memory_bytes=1024 * MB,
    tests_program=tests_program,
    stderr_verdicts=(
        (r"std::bad_alloc", "memory"),
        (r"Assertion .* failed", "failed"),
        (r"terminate called", "error"),
    ),
    aliases=("c++", "cxx", "cc"),
    reference_commands=("g++ -std=c++11 main.cpp -lcrypto -lssl", "./a.out"),
)
