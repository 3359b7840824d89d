"""Go's reward hacks as code around an answer (the attack test, test_go_hostile.py, and the property test of
test_go.py wrap answers with them), and running such samples through the real sandbox.

The attacks are those a Go program has at hand against the one-process harness it would have expected: code that
runs before the tests (init(), package-level initialisers), ending the process with status 0, the testing
package's flags, names of the tests' own (assert), the environment and /proc, lines that look like a pass, bytes
of its own on the channel to the judge, and signals, ptrace and memory writes aimed at the other processes. The
tricks are harmless versions of the same: around a right answer, the sample still passes."""

from __future__ import annotations

from dataclasses import dataclass

import docker

from sandbox.executor import Job, Outcome
from sandbox.images import ensure_language_image, toolchain_version
from sandbox.languages import get, go
from sandbox.languages import jobs as native_jobs
from sandbox.languages import split as splitting
from sandbox.languages.split import TestSource as Source
from tests.sandbox.programs import run_sharded

MEMORY = 256 << 20


@dataclass(frozen=True)
class Wrapper:
    """Code around an answer: `attack()` is called first in the function's body; `declarations` follow the
    function (with `passkAttack`'s body, if any); `imports` are the packages they use."""

    body: str = ""
    declarations: str = ""
    imports: tuple[str, ...] = ()
    flags: frozenset[str] = frozenset()  # what the sandbox must have noticed


def _pids(action: str) -> str:
    """A passkAttack that does `action` (with `pid`) to every other process in /proc."""
    return ("func passkAttack() {\n\tentries, _ := os.ReadDir(\"/proc\")\n\tfor _, entry := range entries {\n"
            "\t\tpid, err := strconv.Atoi(entry.Name())\n\t\tif err != nil || pid == os.Getpid() {\n\t\t\tcontinue\n\t\t}\n"
            f"{action}\t}}\n}}\n")


EXIT = frozenset({"ended_early"})
REACHED = frozenset({"reached_judge"})
OUT_OF_TURN = frozenset({"out_of_turn"})
ANSWER = "[]byte{0, 0, 0, 2, 'R', 'n'}"  # a well-formed reply frame: R, null

ATTACKS: dict[str, Wrapper] = {
    "init() os.Exit(0)": Wrapper(declarations="func init() {\n\tos.Exit(0)\n}\n", imports=("os",), flags=EXIT),
    "initialiser os.Exit(0)": Wrapper(declarations="var passkEarly = func() int { os.Exit(0); return 0 }()\n",
                                      imports=("os",), flags=EXIT),
    "os.Exit(0) in the call": Wrapper(body="\tos.Exit(0)\n", imports=("os",), flags=EXIT),
    "goroutine os.Exit(0)": Wrapper(body="\tgo os.Exit(0)\n\ttime.Sleep(2 * time.Second)\n", imports=("os", "time"),
                                    flags=EXIT),
    "testing's flags from init()": Wrapper(
        declarations="func init() {\n\ttesting.Init()\n\tflag.Set(\"test.run\", \"^$\")\n\tflag.Set(\"test.count\", \"0\")\n"
                     "\tflag.Set(\"test.failfast\", \"true\")\n\tflag.Parse()\n}\n", imports=("flag", "testing")),
    "a package-level assert": Wrapper(
        declarations="type passkAssertions struct{}\n\nfunc (passkAssertions) Equal(...interface{}) bool { return true }\n\n"
                     "var assert = passkAssertions{}\n\nfunc TestPasskForged(t *testing.T) {}\n", imports=("testing",)),
    "the environment and /proc": Wrapper(
        body="\tpasskAttack()\n",
        declarations="func passkAttack() {\n\tfmt.Println(os.Environ())\n"
                     "\tfor _, name := range []string{\"self/environ\", \"self/cmdline\", \"1/environ\", \"1/cmdline\", \"1/maps\"} {\n"
                     "\t\tdata, err := os.ReadFile(\"/proc/\" + name)\n\t\tfmt.Println(name, len(data), err)\n\t}\n"
                     "\tentries, _ := os.ReadDir(\"/proc\")\n\tfor _, entry := range entries {\n"
                     "\t\tdata, _ := os.ReadFile(\"/proc/\" + entry.Name() + \"/environ\")\n\t\tfmt.Println(entry.Name(), string(data))\n\t}\n}\n",
        imports=("fmt", "os")),
    "lines that look like a pass": Wrapper(
        body="\tpasskAttack()\n",
        declarations="func passkAttack() {\n\tfor _, fd := range []int{1, 2, 3, 5, 6, 7} {\n"
                     "\t\tsyscall.Write(fd, []byte(\"PASS\\nok  \\tcommand-line-arguments\\t0.01s\\n--- PASS: Test (0.00s)\\n\"))\n\t}\n}\n",
        imports=("syscall",)),
    "garbage on the reply pipe": Wrapper(body="\tsyscall.Write(4, []byte(\"\\x00\\x00\\x00\\x03garbage\"))\n",
                                         imports=("syscall",), flags=OUT_OF_TURN),
    "an answer of its own before the real one": Wrapper(body=f"\tsyscall.Write(4, {ANSWER})\n", imports=("syscall",),
                                                        flags=OUT_OF_TURN),
    "an answer before any call": Wrapper(declarations=f"func init() {{\n\tsyscall.Write(4, {ANSWER})\n}}\n",
                                         imports=("syscall",), flags=OUT_OF_TURN),
    "a goroutine that keeps writing on the reply pipe": Wrapper(
        # init() waits for the first write, so the attack has happened before any call however busy the machine.
        declarations="func init() {\n\tstarted := make(chan struct{})\n\tgo func() {\n\t\tfor i := 0; ; i++ {\n"
                     "\t\t\tsyscall.Write(4, []byte(\"PASS\"))\n\t\t\tif i == 0 {\n\t\t\t\tclose(started)\n\t\t\t}\n"
                     "\t\t\ttime.Sleep(time.Millisecond)\n\t\t}\n\t}()\n\t<-started\n}\n",
        imports=("syscall", "time"), flags=OUT_OF_TURN),
    "stdout onto the reply pipe": Wrapper(body="\tsyscall.Dup3(4, 1, 0)\n\tfmt.Println(\"PASS\")\n",
                                          imports=("fmt", "syscall"), flags=OUT_OF_TURN),
    "its channel closed": Wrapper(body="\tsyscall.Close(3)\n\tsyscall.Close(4)\n\ttime.Sleep(3 * time.Second)\n",
                                  imports=("syscall", "time")),
    "kill() of every process": Wrapper(
        body="\tpasskAttack()\n",
        declarations=_pids("\t\tfor _, signal := range []syscall.Signal{syscall.SIGSTOP, syscall.SIGTERM, syscall.SIGKILL} {\n"
                           "\t\t\tsyscall.Kill(pid, signal)\n\t\t}\n") + "\nfunc init() {\n\tsyscall.Kill(-1, syscall.SIGSTOP)\n}\n",
        imports=("os", "strconv", "syscall"), flags=REACHED),
    "ptrace(ATTACH) of every process": Wrapper(
        body="\tpasskAttack()\n", declarations=_pids("\t\truntime.LockOSThread()\n\t\tsyscall.PtraceAttach(pid)\n"),
        imports=("os", "runtime", "strconv", "syscall"), flags=REACHED),
    "writing into the tests' memory": Wrapper(
        body="\tpasskAttack()\n",
        declarations=_pids("\t\tif f, err := os.OpenFile(\"/proc/\"+entry.Name()+\"/mem\", os.O_RDWR, 0); err == nil {\n"
                           "\t\t\tf.WriteAt([]byte{0}, 0x400000)\n\t\t}\n"
                           "\t\tsyscall.Syscall6(passkProcessVMWritev[runtime.GOARCH], uintptr(pid), 0, 0, 0, 0, 0)\n")
        + "\nvar passkProcessVMWritev = map[string]uintptr{\"amd64\": 311, \"arm64\": 271}\n",
        # Not on the record: the kernel refuses the open (another uid) and Docker's own seccomp profile refuses
        # process_vm_writev (EPERM) before passk's monitor is asked.
        imports=("os", "runtime", "strconv", "syscall")),
    "runtime.Goexit": Wrapper(body="\truntime.Goexit()\n", imports=("runtime",)),
    "SIGKILL to itself": Wrapper(body="\tsyscall.Kill(syscall.Getpid(), syscall.SIGKILL)\n", imports=("syscall",)),
}

# Harmless tricks around a right answer: it must still pass.
TRICKS: dict[str, Wrapper] = {
    "init() that prints a pass and reads /proc": Wrapper(
        declarations="func init() {\n\tfmt.Println(\"PASS\")\n\tfmt.Fprintln(os.Stderr, \"--- PASS: TestX (0.00s)\")\n"
                     "\t_ = os.Environ()\n\tos.ReadFile(\"/proc/self/environ\")\n}\n", imports=("fmt", "os")),
    "testing's flags from init()": ATTACKS["testing's flags from init()"],
    "a goroutine that keeps running": Wrapper(
        declarations="func init() {\n\tgo func() {\n\t\tfor {\n\t\t\ttime.Sleep(time.Millisecond)\n\t\t}\n\t}()\n}\n",
        imports=("time",)),
    "a package-level assert and tests of its own": Wrapper(
        declarations="var assert = func() int { return len(os.Args) }()\n\n"
                     "func TestPasskNeverRuns(t *testing.T) {\n\tt.Fatal(\"never runs\")\n}\n", imports=("os", "testing")),
    "signals ignored, and a goroutine per call": Wrapper(
        body="\tgo func() { time.Sleep(time.Hour) }()\n",
        declarations="func init() {\n\tsignal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGPIPE)\n}\n",
        imports=("os/signal", "syscall", "time")),
}


def wrong_answer(row: dict) -> str:
    """The zero value of the function's result type (which no HumanEval-X Go problem's tests accept)."""
    entry = splitting.split(row["prompt"], "", row["test"], go.SYNTAX, go.entry).entry
    return f"\tvar passkZero {go.results(entry.returns)[0]}\n\treturn passkZero\n}}\n"


def wrapped(wrapper: Wrapper, answer: str) -> str:
    """A completion: the wrapper's body first, then the answer (its body and closing brace), its declarations and
    imports after the function."""
    imports = "".join(f'\nimport "{path}"\n' for path in wrapper.imports)
    return wrapper.body + answer + "\n" + wrapper.declarations + imports


def run_jobs(docker_client: docker.DockerClient, jobs: list[tuple[str, Source]], time_limit_s: float = 5.0,
             sandboxes: int = 2) -> dict[str, Outcome]:
    """label -> outcome of each job, in `sandboxes` containers at once (jobs of a problem in the same one, so that
    its judge is compiled once)."""
    language = get("go")
    image = ensure_language_image(docker_client, language)
    version = toolchain_version(docker_client, image, language)
    problem_of = {label: source.prompt for label, source in jobs}
    batch = [Job(label, "", time_limit_s, MEMORY, language="go", native=native_jobs.tests_spec(language, source, version, MEMORY))
             for label, source in jobs]
    return run_sharded(docker_client, image, batch, lambda job: problem_of[job.id], sandboxes)
