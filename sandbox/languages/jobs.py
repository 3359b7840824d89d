"""What the supervisor needs of a language to run one program: the `native` part of a sandbox Job.

The host builds it from the language module (sandbox/languages/<name>.py) and the program; the
supervisor (sandbox/runtime/native.py) receives it with the job. The fields are sandbox/runtime/job.py's.
"""

from __future__ import annotations

from sandbox.languages.base import Language
from sandbox.languages.split import TestSource
from sandbox.runtime.job import PCH_MAX_BYTES, Build, Case, Native, Pch


def _common(language: Language, mode: str, candidate: Build, judge: Build | None, toolchain: str,
            compile_time_limit_s: float | None, compile_memory_bytes: int | None) -> Native:
    return Native(
        language=language.name,
        mode=mode,
        candidate=candidate,
        judge=judge,
        toolchain=toolchain,
        compile_time_limit_s=float(compile_time_limit_s or language.compile_time_limit_s),
        compile_memory_bytes=int(compile_memory_bytes or language.compile_memory_bytes),
        limit_address_space=language.limit_address_space,
        pids=language.pids,
        env=dict(language.extra.get("env", {})),
        stderr_verdicts=[list(pair) for pair in language.stderr_verdicts],
        cache_bytes=language.compile_cache_bytes,
        watch_compile_idle=language.watch_compile_idle,
        judge_memory_bytes=language.judge_memory_bytes if judge is not None else 0,
        judge_cpu_allowance_s=language.judge_cpu_allowance_s,
    )


def _build(language: Language, files: dict[str, str], compile_argv: tuple[str, ...] | None,
           run_argv: tuple[str, ...]) -> Build:
    """A build of `files`, with its precompiled header where the language makes one of its main file's leading
    lines (the first file is the one compiled)."""
    pch = None
    main = next(iter(files))
    if language.header_lines is not None and compile_argv:
        lines = language.header_lines(files[main])
        if lines:
            pch = Pch(file=main, lines=lines, build=list(language.precompile), max_bytes=PCH_MAX_BYTES)
    return Build(files=dict(files), run=list(run_argv), compile=list(compile_argv) if compile_argv else None, pch=pch)


def tests_spec(language: Language, source: TestSource, toolchain: str, memory_bytes: int,
               compile_time_limit_s: float | None = None, compile_memory_bytes: int | None = None) -> Native:
    """A self-checking problem (HumanEval-X, MultiPL-E): the judge runs its tests, calling the candidate."""
    if language.programs is None:
        raise ValueError(f"{language.name} does not run self-checking problems")
    programs = language.programs(source)
    candidate = _build(language, programs.candidate, language.candidate_compile or language.compile,
                       language.candidate_argv(memory_bytes))
    judge = _build(language, programs.judge, language.judge_compile, language.judge_argv(memory_bytes))
    spec = _common(language, "tests", candidate, judge, toolchain, compile_time_limit_s, compile_memory_bytes)
    if programs.support:
        spec.support = _build(language, programs.support, language.support_compile, ())
    return spec


tests_spec.__test__ = False  # type: ignore[attr-defined]  # (a library function, not a pytest test)


def stdio_spec(language: Language, source: str, cases: list[dict[str, str]], case_time_limit_s: float,
               policy: str, abs_tol: float, rel_tol: float, toolchain: str, memory_bytes: int,
               compile_time_limit_s: float | None = None, compile_memory_bytes: int | None = None) -> Native:
    """A stdin/stdout solution: compiled once, then run once per case; each output compared (compare.py)."""
    candidate = _build(language, {language.source_file: language.stdio_program(source)}, language.compile,
                       language.run_argv(memory_bytes))
    spec = _common(language, "stdio", candidate, None, toolchain, compile_time_limit_s, compile_memory_bytes)
    spec.cases = [Case(input=case["input"], output=case["output"]) for case in cases]
    spec.case_time_limit_s = case_time_limit_s
    spec.policy, spec.abs_tol, spec.rel_tol = policy, abs_tol, rel_tol
    return spec


def run_spec(language: Language, source: str, stdin: str, inputs: dict[str, str], fetch: list[str], toolchain: str,
             memory_bytes: int, compile_time_limit_s: float, output_bytes: int, fetch_bytes: int,
             args: list[str] | tuple[str, ...] = ()) -> Native:
    """POST /run_code: the program compiled (as a stdio solution is, unless the language builds /run_code's programs
    its own way: `run_code_compile`) and run once on `stdin`, in a directory holding
    `inputs` (relative path -> base64); it reports how it ended and the files named in `fetch`. `args` end the
    run's command line (only where the language takes them: `run_code_args`)."""
    if args and not language.run_code_args:
        raise ValueError(f"{language.name} takes no arguments on /run_code")
    candidate = _build(language, {language.source_file: language.stdio_program(source)},
                       language.run_code_compile or language.compile, (*language.run_argv(memory_bytes), *args))
    spec = _common(language, "run", candidate, None, toolchain, compile_time_limit_s, None)
    spec.stdin, spec.inputs, spec.fetch = stdin, dict(inputs), list(fetch)
    spec.output_bytes, spec.fetch_bytes = output_bytes, fetch_bytes
    spec.warm = language.run_code_warm
    return spec
