"""The host-to-container contract: what a frame of jobs holds, its defaults, and the rule for time limits.

The host (sandbox/executor.py, sandbox/languages/jobs.py) builds these and sends them as JSON; PID 1
(supervisor.py, native.py) reads them back into the same types. Standard library only, imported by both
sides, so a field, its default and the limits rule exist once.

A frame is `<decimal length>\\n<JSON of Frame>` on the container's stdin (supervisor.py).

Limits. Every step a job runs (a compile, a run, one stdio case) has a CPU limit and a wall-clock backstop of
`wall_limit_s(cpu_s, wall_factor)`; the host gives a job `budget_s(job, wall_factor)` (the sum of its
steps' backstops) plus a grace before it calls the container broken.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from dataclasses import dataclass, field

MB = 1024 * 1024

# Frame defaults (the worker passes its Settings; these are what a frame without them means).
DEFAULT_CPUS = 1.0
DEFAULT_SCRATCH_BYTES = 64 * MB
DEFAULT_EXCERPT_BYTES = 4096
DEFAULT_WALL_FACTOR = 2.0
# Compile defaults of a language that sets none (sandbox/languages/base.py).
DEFAULT_COMPILE_TIME_LIMIT_S = 10.0
DEFAULT_COMPILE_MEMORY_BYTES = 1024 * MB
# What a precompiled header may weigh in the container's compile cache (<bits/stdc++.h>: ~100 MB is refused).
PCH_MAX_BYTES = 48 * MB
# CPU a judge process may use beyond the job's time limit (its runtime's start-up and the tests' own work).
DEFAULT_JUDGE_CPU_ALLOWANCE_S = 5.0

MODES = ("tests", "stdio", "run")
# `run` (POST /run_code): a compile may run this long past its CPU limit in wall-clock time (the machine's load),
# and its program's time limit is its wall-clock limit too (the client's own; SandboxFusion's meaning).
RUN_COMPILE_GRACE_S = 5.0


def wall_limit_s(cpu_s: float, wall_factor: float) -> float:
    """The wall-clock backstop of a step with `cpu_s` of CPU."""
    return cpu_s * wall_factor + 1.0


def compile_wall_s(spec: "Native", wall_factor: float) -> float:
    """The wall-clock limit of a compile step: the usual backstop, or (`run`) the client's limit plus a grace."""
    limit = float(spec.compile_time_limit_s)
    return limit + RUN_COMPILE_GRACE_S if spec.mode == "run" else wall_limit_s(limit, wall_factor)


@dataclass
class Pch:
    """A precompiled header for a build (C++): the indices of the source's leading lines that form it, the
    argv that precompiles it, and the largest PCH worth keeping."""

    file: str
    lines: list[int]
    build: list[str]
    max_bytes: int = PCH_MAX_BYTES


@dataclass
class Build:
    """One program of a native job: its files, the argv that compiles them (None: interpreted) and runs it."""

    files: dict[str, str]
    run: list[str]
    compile: list[str] | None = None
    pch: Pch | None = None


@dataclass
class Case:
    input: str
    output: str


@dataclass
class Native:
    """A job in another language than Python (sandbox/runtime/native.py).

    "Native" means one thing across passk: a program run by its language's own toolchain (compiled or
    interpreted) rather than by passk's Python judges. A Language is `native` when its programs are such jobs;
    service/formats/native.py builds them, this type carries them, sandbox/runtime/native.py runs them.

    `tests`: the candidate build is the model's code and passk's server; the judge build is the problem's
    tests with stubs that call the candidate's process (the judge decides the verdict: see report.py). A
    language may also give a support build: trusted code the candidate's build uses (its server, compiled
    apart so that nothing in the model's code can change it), the same for every sample of a problem, so it
    is compiled once (as the judge's uid, cached) and its files copied into the candidate's directory before
    the candidate's compile.
    `stdio`: the candidate build runs once per case, its output compared by PID 1 (compare.py).
    `run` (POST /run_code): the candidate build runs once on `stdin`, in a directory holding `inputs` first, and
    reports how it ended (compile and run, SandboxFusion's shapes) with the files named in `fetch`; no judge.
    """

    language: str
    mode: str
    candidate: Build
    judge: Build | None = None
    support: Build | None = None
    toolchain: str = ""
    compile_time_limit_s: float = DEFAULT_COMPILE_TIME_LIMIT_S
    compile_memory_bytes: int = DEFAULT_COMPILE_MEMORY_BYTES
    watch_compile_idle: bool = True  # sandbox/languages/base.py: Language.watch_compile_idle
    # False for runtimes that reserve far more address space than they use (JVM, node, Go): no RLIMIT_AS.
    limit_address_space: bool = True
    pids: int = 64
    env: dict[str, str] = field(default_factory=dict)
    # (regex searched in stderr, verdict) for a run that failed; first match wins (sandbox/languages/base.py).
    stderr_verdicts: list[list[str]] = field(default_factory=list)
    # Bytes of the container's compile cache this language wants (0: the sandbox's default).
    cache_bytes: int = 0
    # Memory the judge process may use on top of the job's limit (the container's cgroup grows by it).
    judge_memory_bytes: int = 0
    judge_cpu_allowance_s: float = DEFAULT_JUDGE_CPU_ALLOWANCE_S
    # stdio only
    cases: list[Case] = field(default_factory=list)
    case_time_limit_s: float = 0.0
    policy: str = "whitespace"
    abs_tol: float = 1e-6
    rel_tol: float = 1e-6
    # run only: standard input, files written first (relative path -> base64), files read back after the run
    # (paths), and what of stdout and stderr (each) and of the fetched files (together) is kept.
    stdin: str = ""
    inputs: dict[str, str] = field(default_factory=dict)
    fetch: list[str] = field(default_factory=list)
    output_bytes: int = 0
    fetch_bytes: int = 0
    # Python only (Language.run_code_warm): the zygote forks the program's process, which runs `run` (`python3
    # FILE`) as a fresh interpreter would (script.py), instead of PID 1 exec'ing it.
    warm: bool = False

    @property
    def builds(self) -> list[Build]:
        return [build for build in (self.judge, self.support, self.candidate) if build is not None]

    @property
    def compiled(self) -> bool:
        return any(build.compile for build in self.builds)


@dataclass
class Job:
    id: str
    # Python: the program text (a call of one of the judges' entry points when `judged`). Native: the JSON of
    # `native`, which is also the verdict cache's program bytes.
    program: str
    time_limit_s: float
    memory_bytes: int
    # True: `program` calls one of passk's judges (sandbox/runtime), which runs the tests and starts the
    # candidate's code in processes of its own. False (passk's own sandbox tests only): `program` runs as one
    # process of the candidate's uid and passes by running to its end.
    judged: bool = False
    language: str = "python"
    native: Native | None = None

    @property
    def container_memory_bytes(self) -> int:
        """The memory the container must serve for this job: its run limit (and its judge's), or its compile
        limit if larger."""
        spec = self.native
        if spec is None:
            return self.memory_bytes
        run = self.memory_bytes + (spec.judge_memory_bytes if spec.judge is not None else 0)
        return max(run, spec.compile_memory_bytes if spec.compiled else 0)


@dataclass
class Frame:
    jobs: list[Job]
    cpus: float = DEFAULT_CPUS
    scratch_bytes: int = DEFAULT_SCRATCH_BYTES
    excerpt_bytes: int = DEFAULT_EXCERPT_BYTES
    wall_factor: float = DEFAULT_WALL_FACTOR
    # The core the container's processes run on (the worker thread's own), None: wherever the kernel puts them
    # (a container pinned for an earlier frame is unpinned).
    # A program's processes hand the CPU to each other many times (PID 1, the judge, the zygote, the
    # candidate); on one core each hand-over is a context switch, across cores a wake-up of another.
    core: int | None = None

    def to_json(self) -> bytes:
        return json.dumps(to_dict(self), separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")

    @classmethod
    def from_json(cls, data: bytes) -> "Frame":
        return from_dict(cls, json.loads(data.decode("utf-8", "surrogatepass")))


# ------------------------------------------------------------------ a judged Python job's program

# A judged Python job's program is one call of a judge's entry point (supervisor.JUDGE_ENTRY_POINTS) with its
# configuration, JSON in a string literal: the judge runs it as it is, and it is the verdict cache's bytes.
TESTS_ENTRY_POINT = "_passk_tests_main"  # trusted_tests.main: HumanEval and MBPP tests
DRIVER_ENTRY_POINT = "_passk_main"  # driver.main: stdin/stdout and call cases


def judge_call(entry_point: str, config: dict) -> str:
    """The program that calls the judge's `entry_point` with `config`."""
    payload = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"{entry_point}({payload!r})\n"


def tests_parts(program: str) -> tuple[str, str] | None:
    """(the problem's side of a tests job, as JSON: its tests, prompt and entry point; the candidate's source),
    what a kept judge (live_judge.py) is chosen by and what it is sent; None for any other program."""
    head, tail = TESTS_ENTRY_POINT + "(", ")\n"
    if not (program.startswith(head) and program.endswith(tail)):
        return None
    import ast  # only PID 1 needs it, and only once the helpers are forked

    try:
        config = json.loads(ast.literal_eval(program[len(head):-len(tail)]))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if type(config) is not dict or type(config.get("candidate")) is not str:
        return None
    source = config.pop("candidate")
    return json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False), source


def budget_s(job: Job, wall_factor: float) -> float:
    """Wall-clock seconds PID 1 may take for `job`: the backstops of every step it can run, summed.

    A native job compiles each of its builds (a C++ build may precompile its header first: two compile steps),
    then runs once (tests) or once per case (stdio)."""
    spec = job.native
    if spec is None:
        return wall_limit_s(job.time_limit_s, wall_factor)
    compile_steps = sum((2 if build.pch is not None else 1) for build in spec.builds if build.compile)
    total = compile_steps * compile_wall_s(spec, wall_factor)
    if spec.mode == "run":
        return total + job.time_limit_s + 1.0
    if spec.mode == "stdio":
        return total + len(spec.cases) * wall_limit_s(spec.case_time_limit_s, wall_factor)
    cpu = job.time_limit_s + (spec.judge_cpu_allowance_s if spec.judge is not None else 0.0)
    return total + wall_limit_s(cpu, wall_factor)


# ------------------------------------------------------------------ JSON <-> dataclasses


def to_dict(value: object) -> object:
    """A dataclass as plain JSON-able data (None fields kept, so both sides read the same keys)."""
    if dataclasses.is_dataclass(value):
        return {f.name: to_dict(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [to_dict(item) for item in value]
    if isinstance(value, dict):
        return {key: to_dict(item) for key, item in value.items()}
    return value


def from_dict(cls: type, data: object) -> typing.Any:
    """The dataclass `cls` rebuilt from `to_dict`'s form; missing fields take their defaults, unknown ones are
    refused (a host and a runtime of different versions fail loudly, not silently)."""
    if not isinstance(data, dict):
        raise ValueError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    hints = _field_hints(cls)
    unknown = data.keys() - hints.keys()
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown fields {sorted(unknown)}")
    return cls(**{name: _typed(hints[name], item) for name, item in data.items()})


@functools.cache
def _field_hints(cls: type) -> dict[str, object]:
    """Each field of the dataclass `cls` with its type hint, resolved once per class (get_type_hints evaluates
    the annotations' text: done per job, it cost PID 1 more than parsing the frame's JSON)."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _typed(hint: object, item: object) -> object:
    if item is None:
        return None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        inner = [arg for arg in args if arg is not type(None)]
        return _typed(inner[0], item) if len(inner) == 1 else item
    if dataclasses.is_dataclass(hint):
        return from_dict(hint, item)  # type: ignore[arg-type]
    if origin is list and args and isinstance(item, list):
        return [_typed(args[0], element) for element in item]
    if origin is dict and len(args) == 2 and isinstance(item, dict):
        return {key: _typed(args[1], element) for key, element in item.items()}
    if hint is float and isinstance(item, int):
        return float(item)
    return item
