"""C++ attacks on the judge: every attack class a hostile completion can try, each around a wrong answer, on
several HumanEval-X problems, through the real sandbox (the executor and the C++ image).

The completion is the model's code in the candidate's process (sandbox/languages/cpp.py): whatever it does there
(global constructors, init functions, exit hooks, macros, operators, its own `main`, writes on its descriptors,
signals, ptrace) must not make a wrong answer pass, must never be passk's `sandbox_error`, and leaves its mark:
`ended_early` when it ended with status 0 before the tests finished, `reached_judge` when it signalled or traced
another process, `out_of_turn` when it wrote on the judge's channel out of turn.
"""

from __future__ import annotations

from sandbox.executor import Job
from sandbox.images import ensure_language_image, toolchain_version
from sandbox.languages import get
from sandbox.languages import jobs
from sandbox.languages.split import TestSource as Source
from tests.languages.conftest import humaneval_x_rows
from tests.sandbox.programs import run_sharded

# Problems of different signatures: bool(vector<float>, float), float(float), vector<string>(vector<string>,
# string), vector<int>(list<boost::any>), vector<int>(int), boost::any(boost::any, boost::any).
PROBLEMS = ("CPP/0", "CPP/2", "CPP/29", "CPP/22", "CPP/107", "CPP/137")
# A wrong answer of every return type (false, 0, empty, an empty any): each fails its problem's tests.
WRONG = "    return {};\n}\n"
HEADERS = "#include <cstdlib>\n#include <cstdio>\n#include <cstring>\n#include <unistd.h>\n#include <dirent.h>\n" \
    "#include <signal.h>\n#include <sys/ptrace.h>\n#include <sys/uio.h>\n#include <fcntl.h>\n#include <vector>\n"
# Every other process's pid, from /proc (the judge's among them).
OTHERS = (
    "static std::vector<int> passk_others() {\n    std::vector<int> pids;\n    DIR* d = opendir(\"/proc\");\n"
    "    while (struct dirent* e = d ? readdir(d) : nullptr) { int pid = atoi(e->d_name);"
    " if (pid > 0 && pid != getpid()) pids.push_back(pid); }\n    if (d) closedir(d);\n    return pids;\n}\n"
)


def _after(code: str) -> str:
    """The wrong answer, then `code` at namespace scope (it runs before or around the server's calls)."""
    return WRONG + HEADERS + code


def _before(code: str) -> str:
    """`code` run from the function's body (in a function of its own, after the headers it needs), then the
    wrong answer."""
    return "    void passk_attack();\n    passk_attack();\n" + WRONG + HEADERS + "void passk_attack() {\n" + code + "\n}\n"


# label -> (completion, the flags it must carry)
ATTACKS: dict[str, tuple[str, set[str]]] = {
    "global constructor exit(0)": (_after("struct PasskA { PasskA() { exit(0); } } passk_a;\n"), {"ended_early"}),
    "__attribute__((constructor)) _exit(0)": (
        _after("__attribute__((constructor)) static void passk_b() { _exit(0); }\n"), {"ended_early"}),
    ".init_array entry _exit(0)": (
        _after("static void passk_c() { _exit(0); }\n"
               "__attribute__((section(\".init_array\"), used)) static void (*passk_c_entry)() = passk_c;\n"),
        {"ended_early"}),
    "atexit handler _Exit(0) after a failing answer": (
        _after("struct PasskD { PasskD() { atexit([] { std::_Exit(0); }); } } passk_d;\n"), set()),
    "at_quick_exit then quick_exit(0)": (
        _before("        at_quick_exit([] { std::_Exit(0); });\n        quick_exit(0);"), {"ended_early"}),
    "exit(0) in the answer": (_before("        exit(0);"), {"ended_early"}),
    "its own main": (_after("int main() { return 0; }\n"), {"ended_early"}),
    "reads the environment and /proc/self": (
        _after("extern char** environ;\n" + OTHERS + "struct PasskE { PasskE() {\n"
               "    for (char** e = environ; *e; e++) printf(\"%s\\n\", *e);\n"
               "    const char* files[] = {\"/proc/self/environ\", \"/proc/self/cmdline\", \"/proc/self/maps\","
               " \"/proc/1/environ\"};\n"
               "    for (const char* f : files) { char buf[4096]; int fd = open(f, O_RDONLY); if (fd < 0) continue;\n"
               "        ssize_t n = read(fd, buf, sizeof buf); if (n > 0) fwrite(buf, 1, n, stdout); close(fd); }\n"
               "    for (int pid : passk_others()) { char path[64]; snprintf(path, sizeof path, \"/proc/%d/environ\", pid);\n"
               "        int fd = open(path, O_RDONLY); if (fd >= 0) { char buf[4096]; ssize_t n = read(fd, buf, sizeof buf);"
               " if (n > 0) fwrite(buf, 1, n, stdout); close(fd); } }\n"
               "} } passk_e;\n"), set()),
    "prints PASS and pass tokens": (
        _after("struct PasskF { PasskF() { printf(\"PASS\\nPASSK_PASS\\npassed\\n\"); fflush(stdout);\n"
               "    fprintf(stderr, \"PASS\\n\"); for (int fd = 3; fd < 16; fd++) write(fd, \"PASS\", 4); } } passk_f;\n"),
        set()),
    "redefines assert, main, vector and int": (
        _after("#define assert(x) ((void)0)\n#define main passk_not_main\n#define vector passk_vector\n"
               "#define int long\n"), set()),
    "redefines operator== for vectors and strings": (
        _after("#include <string>\ntemplate <class T> bool operator==(const std::vector<T>&, const std::vector<T>&)"
               " { return true; }\nbool operator==(const std::string&, const std::string&) { return true; }\n"),
        set()),
    "writes into the tests' memory": (
        _after(OTHERS + "struct PasskG { PasskG() {\n    for (int pid : passk_others()) {\n"
               "        char path[64]; snprintf(path, sizeof path, \"/proc/%d/mem\", pid);\n"
               "        int fd = open(path, O_RDWR); if (fd >= 0) { pwrite(fd, \"\\xff\", 1, 0x400000); close(fd); }\n"
               "        char byte = 1; struct iovec local = {&byte, 1}, remote = {(void*)0x400000, 1};\n"
               "        process_vm_writev(pid, &local, 1, &remote, 1, 0);\n    }\n} } passk_g;\n"),
        # Refused before passk's monitor sees it: the kernel (another uid, non-dumpable) for /proc/<pid>/mem, and
        # Docker's own seccomp profile (EPERM, which outranks a notification) for process_vm_writev.
        set()),
    "garbage on its reply descriptor before any call": (
        _after("struct PasskH { PasskH() { write(4, \"\\0\\0\\0\\5garbage\", 9); } } passk_h;\n"), {"out_of_turn"}),
    # A well-formed answer (true) of its own before the server's: taken as the answer (a bool problem) or refused
    # (any other type); the server's answer then waits unasked.
    "an extra answer with the real one": (_before("        write(4, \"\\0\\0\\0\\2RT\", 6);"), {"out_of_turn"}),
    "closes its descriptors 3 and 4": (_before("        close(3);\n        close(4);"), {"ended_early"}),
    "forks a child that answers for it": (
        _before("        if (fork() == 0) { write(4, \"\\0\\0\\0\\1Z\", 5); _exit(0); }\n        sleep(1);"),
        {"out_of_turn"}),
    "signals every process": (
        _after(OTHERS + "struct PasskI { PasskI() {\n    for (int pid : passk_others()) for (int s : {SIGSTOP, SIGKILL,"
               " SIGTERM, SIGUSR1}) kill(pid, s);\n    kill(-1, SIGKILL);\n} } passk_i;\n"), {"reached_judge"}),
    "ptrace(ATTACH) every process": (
        _after(OTHERS + "struct PasskJ { PasskJ() {\n    for (int pid : passk_others()) ptrace(PTRACE_ATTACH, pid,"
               " nullptr, nullptr);\n} } passk_j;\n"), {"reached_judge"}),
}


def test_no_attack_turns_a_wrong_answer_into_a_pass(docker_client) -> None:  # type: ignore[no-untyped-def]
    cpp = get("cpp")
    image = ensure_language_image(docker_client, cpp)
    version = toolchain_version(docker_client, image, cpp)
    memory = 256 * 1024 * 1024
    rows = {row["task_id"]: row for row in humaneval_x_rows("cpp")}
    queued, expected = [], {}
    for problem in PROBLEMS:
        row = rows[problem]
        for label, (completion, flags) in ATTACKS.items():
            name = f"{problem} {label}"
            source = Source("humaneval-x", row["prompt"], row["test"], completion, row["declaration"])
            queued.append(Job(name, "", 2.0, memory, language="cpp", native=jobs.tests_spec(cpp, source, version, memory)))
            expected[name] = flags
    outcomes = run_sharded(docker_client, image, queued, sandboxes=1)
    passed = [name for name, o in outcomes.items() if o.verdict.value == "passed"]
    errors = [(name, o.detail) for name, o in outcomes.items() if o.verdict.value == "sandbox_error"]
    unflagged = [(name, sorted(flags - set(outcomes[name].flags)), outcomes[name].verdict.value,
                  (outcomes[name].detail or "")[:200]) for name, flags in expected.items()
                 if not flags <= set(outcomes[name].flags)]
    compiled = [(name, (o.detail or "")[:300]) for name, o in outcomes.items() if o.verdict.value == "compile_error"
                and "redefines" not in name]
    assert not passed, passed
    assert not errors, errors
    assert not compiled, compiled  # every attack reached the run (a compile error would test nothing)
    assert not unflagged, unflagged
