"""What a language is to passk: its image, how a program is compiled and run, and how a pass is proven.

A language module (`sandbox/languages/<name>.py`) defines `LANGUAGE = Language(...)` and nothing
else is needed to register it (see `sandbox/languages/__init__.py`). Modules here are host-side data
plus small pure functions: no Docker calls. The sandbox side (sandbox/runtime/native.py) receives
what a job needs of them (files, argv, limits) in the job itself (sandbox/runtime/job.py).

A pass: self-checking problems (HumanEval-X, MultiPL-E) run as two programs, the judge (the problem's
tests, with stubs for the function the model wrote) and the candidate (the model's code, with passk's
server for it), in two processes under two uids; `programs` builds both from the problem's texts
(sandbox/languages/split.py), and the language's wire codec (sandbox/runtime/values.py has the rule)
carries the calls. Only the judge can report a pass (sandbox/runtime/report.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sandbox.languages.split import Programs, TestSource
from sandbox.runtime.job import DEFAULT_COMPILE_MEMORY_BYTES, DEFAULT_COMPILE_TIME_LIMIT_S, DEFAULT_JUDGE_CPU_ALLOWANCE_S, MB


def _no_flags(memory_bytes: int) -> tuple[str, ...]:
    return ()


def unchanged(text: str) -> str:
    return text


def _humaneval_x(prompt: str, declaration: str, completion: str, test: str) -> str:
    return prompt + completion + "\n" + test


# Where an image build finds the language's `context_files` (sandbox/image/language/Dockerfile copies them there).
BUILD_CONTEXT = "/passk-context"


@dataclass(frozen=True)
class RuntimeFiles:
    """A language's own runtime (its wire codec, judge and server), kept in sandbox/languages/<folder>/ and
    installed into `into` in its image: `context_files` ships them to the build, `install` copies them in place."""

    folder: str
    names: tuple[str, ...]
    into: str

    @property
    def context_files(self) -> tuple[tuple[str, str], ...]:
        return tuple((f"sandbox/languages/{self.folder}/{name}", f"{self.folder}/{name}") for name in self.names)

    @property
    def in_build(self) -> tuple[str, ...]:
        """Their paths during the image build."""
        return tuple(f"{BUILD_CONTEXT}/{self.folder}/{name}" for name in self.names)

    @property
    def installed(self) -> tuple[str, ...]:
        """Their paths in the image."""
        return tuple(f"{self.into}/{name}" for name in self.names)

    def install(self) -> str:
        """The `image_setup` command that copies them into `into`."""
        return f"mkdir -p {self.into} && cp " + " ".join(self.in_build) + f" {self.into}/"


@dataclass(frozen=True)
class ReferencePass:
    """The original harness's rule for a pass (MultiPL-E's evaluation/src/eval_<language>.py, HumanEval-X's
    execution.py), applied to a run of `Language.reference_commands` (passk_dev/reference.py): the differential
    tests and bench/languages.py compare passk's verdicts with it. The harnesses differ: most pass exit status 0;
    Racket's, Scala's and HumanEval-X's JavaScript also want nothing on stderr; Clojure's wants its test report's
    summary on stdout (its exit status is 0 either way); Perl's fails on "ERROR" anywhere in the output; C#'s
    ignores the exit status and fails on a failed Debug.Assert or an unhandled exception in stderr."""

    exit_zero: bool = True  # the exit status must be 0
    quiet_stderr: bool = False  # nothing at all on stderr
    stdout_has: str = ""  # text stdout must hold
    fails_on: tuple[str, ...] = ()  # text that fails the run, anywhere in stdout or stderr
    stderr_fails_on: tuple[str, ...] = ()  # text that fails the run in stderr
    # The harness's wall-clock timeout (a run still going then fails) and how much of stdout and of stderr it keeps
    # (MultiPL-E's safe_subprocess keeps 2048 bytes of each; 0: all).
    timeout_s: float = 15.0
    captured_bytes: int = 0
    # The harness's timeout of the commands before the last (the build), where it differs from timeout_s
    # (MultiPL-E's scalac: 45 s). 0: timeout_s.
    build_timeout_s: float = 0.0
    # Variables the harness's commands run with on top of PATH, HOME and LANG (as (name, value) pairs).
    env: tuple[tuple[str, str], ...] = ()

    def passes(self, exit_code: int, stdout: str, stderr: str, timed_out: bool = False) -> bool:
        if self.captured_bytes:
            stdout = stdout.encode()[:self.captured_bytes].decode("utf-8", "ignore")
            stderr = stderr.encode()[:self.captured_bytes].decode("utf-8", "ignore")
        return not (
            timed_out
            or (self.exit_zero and exit_code != 0)
            or (self.quiet_stderr and stderr)
            or (self.stdout_has and self.stdout_has not in stdout)
            or any(text in stdout or text in stderr for text in self.fails_on)
            or any(text in stderr for text in self.stderr_fails_on)
        )


def own_heap(run_memory_flags: Callable[[int], tuple[str, ...]], pids: int = 64) -> dict:
    """Language(**own_heap(...)) for runtimes that reserve far more address space than they use (JVM, node,
    Go): no RLIMIT_AS (they would fail at start); their own heap flags and the memory cgroup hold memory."""
    return {"limit_address_space": False, "run_memory_flags": run_memory_flags, "pids": pids}


@dataclass(frozen=True)
class Language:
    name: str  # "cpp": the value of a dataset's `language`
    title: str  # "C++"
    # Debian (bookworm) packages installed in the language's image.
    packages: tuple[str, ...] = ()
    # npm packages ("typescript@5.4.5"), fetched on the host with `npm pack` and installed offline.
    npm_packages: tuple[str, ...] = ()
    # Shell commands run at image build time (offline, as root), after the packages are installed.
    image_setup: tuple[str, ...] = ()
    # Extra files for the image's build context: (path inside the repository, path in the context).
    # Available to `image_setup` under BUILD_CONTEXT/<path in the context> during the build.
    context_files: tuple[tuple[str, str], ...] = ()
    # The file the program is written to in its scratch directory.
    source_file: str = "main.py"
    # argv run in the scratch directory to build the program, or None (interpreted). Part of the
    # compile-cache key, with the source bytes and the toolchain version.
    compile: tuple[str, ...] | None = None
    # POST /run_code's build, where it differs from `compile`: SandboxFusion's `D_ut` builds with -unittest, so a
    # program's unittest blocks run (in place of its main) there, while a stdio solution's main always runs.
    run_code_compile: tuple[str, ...] | None = None
    # Precompiled headers (sandbox/runtime/builds.py): which of a source's lines (indices) form its header,
    # and the argv that precompiles `passk_pch.h` into `passk_pch.h.gch` with the compile's own flags.
    header_lines: Callable[[str], list[int]] | None = None
    precompile: tuple[str, ...] = ()
    # Bytes of the per-container compile cache this language wants (0: the sandbox's default).
    compile_cache_bytes: int = 0
    # argv that runs the program (the tests of a self-checking program; the solution for stdio).
    run: tuple[str, ...] = ()
    # The candidate's run in a self-checking problem, where it differs from `run`: an interpreter that loads passk's
    # server before any of the model's code (`ruby -r`, `lua -l`, `perl -M`, `php -d auto_prepend_file=`,
    # `elixir -pa`: its compiled server on the code path), so that the builtins the server relies on are taken
    # before the model's code can change them.
    candidate_run: tuple[str, ...] = ()
    # argv whose output's first line is the toolchain version (probed once per image).
    version: tuple[str, ...] = ()
    compile_time_limit_s: float = DEFAULT_COMPILE_TIME_LIMIT_S
    compile_memory_bytes: int = DEFAULT_COMPILE_MEMORY_BYTES
    # A compile that gains no CPU for a while is blocked by the program (a C++ `#include` of a device that never
    # answers): `compile_error` at once (sandbox/runtime/builds.py). False for a compiler that reads nothing a
    # program names (scalac): its compile only stalls on a loaded machine, and waits, up to its wall-clock limit.
    watch_compile_idle: bool = True
    # Extra argv inserted after run[0] for runtimes that need their own heap cap (JVM -Xmx...).
    run_memory_flags: Callable[[int], tuple[str, ...]] = _no_flags
    # False for runtimes that reserve far more address space than they use (JVM, node, Go): RLIMIT_AS is
    # then not set, and the container's memory cgroup (and run_memory_flags) hold memory instead.
    limit_address_space: bool = True
    # Processes/threads the toolchain or runtime needs (the container's pids limit is at least this).
    pids: int = 64
    # Self-checking problems in two processes: the candidate's and the judge's files for a problem and a
    # completion (raises split.SplitError when the problem's prompt and tests cannot be split).
    programs: Callable[[TestSource], Programs] | None = None
    # The candidate's compile in a self-checking problem, where it differs from `compile` (which builds stdio
    # solutions): e.g. linking passk's server for it.
    candidate_compile: tuple[str, ...] | None = None
    # The judge's build, in a directory of its own holding the judge's files: argv to compile (None:
    # interpreted) and to run it (run_memory_flags apply, with judge_memory_bytes).
    judge_compile: tuple[str, ...] | None = None
    judge_run: tuple[str, ...] = ()
    # The support build's compile argv (Programs.support: trusted code the candidate's build uses).
    support_compile: tuple[str, ...] | None = None
    # What the judge may use beyond the job's limits: memory for its own runtime on top of the job's (the
    # container's cgroup grows by it, and so does the judge's RLIMIT_AS) and CPU seconds on top of the time
    # limit (its start-up, the tests' own work).
    judge_memory_bytes: int = 32 * MB
    judge_cpu_allowance_s: float = DEFAULT_JUDGE_CPU_ALLOWANCE_S
    # HumanEval-X's program as the original harness builds it, for bench/languages.py's reference:
    # (prompt, declaration, completion, test) -> text. Default prompt + completion + "\n" + test.
    humaneval_x_program: Callable[[str, str, str, str], str] = _humaneval_x
    # How a stdio solution becomes the source compiled (usually as it is).
    stdio_program: Callable[[str], str] = unchanged
    # (regex searched in stderr, verdict) for a failed run: which failures are the tests' assertions
    # ("failed") and which are other runtime errors ("error"). First match wins; no match: "failed".
    stderr_verdicts: tuple[tuple[str, str], ...] = ()
    # Names MultiPL-E and others use for the language ("cpp", "js", "rs"...).
    aliases: tuple[str, ...] = ()
    run_code_names: tuple[str, ...] = ()  # SandboxFusion's names for this language on /run_code ("cpp", "nodejs")
    # The original harness's commands, for bench/languages.py and the differential tests: shell lines run in a
    # directory holding `source_file` (HumanEval-X's execution.py; MultiPL-E's evaluation/src/eval_<language>.py
    # for the languages HumanEval-X lacks).
    reference_commands: tuple[str, ...] = ()
    # The original harness's rule for a pass from those commands' run (see ReferencePass).
    reference_pass: ReferencePass = ReferencePass()
    # Python and its variants: judged by passk's Python judges (sandbox/runtime), not compiled/run by argv.
    native: bool = True
    # A variant of another language (`python-science` of `python`): that language's formats, judges and
    # tracebacks, with this one's packages in an image of its own.
    variant_of: str = ""
    # A mode of /run_code under a name of SandboxFusion's (`pytest`, `go_test`), not a language a dataset may have.
    run_code_only: bool = False
    # /run_code's `args` go at the end of the run's command line (SandboxFusion passes them to pytest only).
    run_code_args: bool = False
    # /run_code's program (`run` is `python3 FILE`, the sandbox's own interpreter) is forked from the zygote's warm
    # interpreter and run there as a fresh one would (sandbox/runtime/script.py), not exec'd: no interpreter start.
    run_code_warm: bool = False
    notes: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def compiled(self) -> bool:
        return self.compile is not None

    @property
    def own_image(self) -> bool:
        """Runs in an image of its own; Python runs in the sandbox image itself."""
        return self.native or bool(self.packages)

    @property
    def family(self) -> str:
        """The language whose formats and judges this one uses: its own name, or the one it is a variant of."""
        return self.variant_of or self.name

    def run_argv(self, memory_bytes: int, argv: tuple[str, ...] | None = None) -> tuple[str, ...]:
        """`argv` (default: `run`) with the runtime's heap flags for `memory_bytes` after its first word."""
        argv = argv or self.run
        flags = self.run_memory_flags(memory_bytes)
        return (argv[0], *flags, *argv[1:]) if flags else argv

    def candidate_argv(self, memory_bytes: int) -> tuple[str, ...]:
        """The candidate's run in a self-checking problem (`candidate_run`, else `run`), with the heap flags."""
        return self.run_argv(memory_bytes, self.candidate_run or self.run)

    def judge_argv(self, memory_bytes: int) -> tuple[str, ...]:
        """The judge's run: it may hold as much as the candidate (the tests' data, the answers it receives)."""
        return self.run_argv(memory_bytes, self.judge_run)
