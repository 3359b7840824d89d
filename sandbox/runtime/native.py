"""Programs in other languages than Python: build them (builds.py), then run them (steps.py) and judge.

Runs in PID 1 (see supervisor.py); the job is a `job.Native`. Every step (a compile, a run, a stdio case) is a
process tree started by exec in a scratch directory of its own uid, with RLIMIT_CPU (and RLIMIT_AS unless the
runtime reserves address space it never uses), the container cgroup's CPU time for the whole tree, and a
wall-clock backstop. A compile runs under the language's compile limits, never the program's.

Self-checking programs (`tests`: HumanEval-X, MultiPL-E) run as two processes, as Python's do:

- the candidate (uid 10001): the model's code and passk's server for it, built from the candidate build (and
  the support build's files, passk's server compiled apart), in its own scratch directory. It never held the
  tests, the expected values or anything that proves a pass;
- the judge (uid 10002): the problem's tests with stubs that call the candidate over two pipes (values.py),
  built from the judge build (the same for every sample of a problem, so its compile is cached), in a scratch
  directory the candidate cannot enter. Only the judge holds the report pipe (report.py): a pass is the judge
  writing PASS there and exiting with status 0. Nothing the candidate prints, exits with, or sends makes it.

Builds come first, in this order: the judge's and the support build (trusted code, compiled as the judge's uid:
one that does not build is passk's or the problem's failure, `sandbox_error`, never the model's), then the
candidate's (its failure is the model's `compile_error`).

The time limit holds for the candidate's processes (the container's CPU time less the judge's own); the judge
may use the language's allowance beyond it (its runtime's start-up, the tests' own work). Memory: the
container's memory cgroup is the job's limit plus the judge's allowance; the candidate's RLIMIT_AS (where the
runtime allows one) is the job's limit. A candidate carries the seccomp monitor (seccomp.py).

stdio programs: the candidate build runs once per case with the case's input; its output is compared here
(compare.py), where no program runs.

Clean-up after every job: every process of both uids is killed, zombies are reaped, scratch directories and
IPC objects removed (process.py); a container that cannot be cleaned retires. Nothing a program does after its
code started (its output, exit status, signals, files, processes) can become `sandbox_error`: only a failure of
passk's own set-up before any of the program's code ran is one.
"""

from __future__ import annotations

import base64
import os
import re
import select
import signal
import stat
import time

from typing import TYPE_CHECKING

from . import builds, compare, failure, process, report, steps, wire
from .builds import compile_verdict, read_tree, write_tree
from .job import Build, Frame, Job, Native, compile_wall_s, wall_limit_s
from .steps import EXEC, GONE, KEEP, Launch, Setup, Step, Watch, exec_step, reap_orphans, spawn, wait_for
from .streams import HostGone, tree_cpu
from .zygote import SpawnFailed, Spawner

if TYPE_CHECKING:
    from .supervisor import Container

# stdout kept whole for stdio comparisons (beyond it the case fails as output too large).
STDIO_OUTPUT_CAP = 16 * 1024 * 1024
# How long an ending candidate may take to finish its exit once the judge saw its channel close.
CANDIDATE_EXIT_WAIT_S = 1.0
# How long the candidate may take to end once the tests ended on their own (its server reads the end of the
# calls and returns): what it still sends or prints on its way out is seen (an answer nobody asked for is
# flagged, its buffered output kept); one that does not end by then is stopped.
CANDIDATE_FINISH_WAIT_S = 0.5


# ------------------------------------------------------------------ the job


def _env(home: str, spec: Native, extra: dict | None = None) -> dict:
    env = {"HOME": home, "TMPDIR": home, **process.BASE_ENVIRONMENT}
    env.update(spec.env or {})
    env.update(extra or {})
    return env


def _first_line(text: str, limit: int = 1500) -> str:
    return failure.clean(text.strip(), limit)


class _Context:
    """One job's limits, places and accounts while it runs."""

    def __init__(self, job: Job, frame: Frame, sequence: int, host_stdin: int) -> None:
        self.job, self.spec = job, job.native
        self.time_limit = float(job.time_limit_s)
        self.memory = int(job.memory_bytes)
        self.scratch_bytes = frame.scratch_bytes
        self.excerpt = frame.excerpt_bytes
        self.wall_factor = frame.wall_factor
        self.cpus = max(0.1, frame.cpus)
        self.host_stdin = host_stdin
        self.limit_as = bool(self.spec.limit_address_space)  # type: ignore[union-attr]
        self.candidate_dir = os.path.join(process.SCRATCH_ROOT, f"c{sequence}")
        self.judge_dir = os.path.join(process.SCRATCH_ROOT, f"j{sequence}")
        self.support_dir = os.path.join(process.SCRATCH_ROOT, f"s{sequence}")
        self.pch_dir = os.path.join(process.SCRATCH_ROOT, f"p{sequence}")
        self.cpu = self.duration = 0.0
        self.program_ran = False  # from here on, anything that goes wrong is the program's verdict
        self.flags: list[str] = []
        # A sandbox_error of the problem's own (its tests do not build), not of the container: it need not retire.
        self.container_ok = False

    def flag(self, name: str) -> None:
        if name not in self.flags:
            self.flags.append(name)

    def compile_step(self, argv: list, cwd: str, owner: int) -> Step:
        spec = self.spec
        limit = float(spec.compile_time_limit_s)  # type: ignore[union-attr]
        setup = Setup(owner, cwd, _env(cwd, spec), limit,  # type: ignore[arg-type]
                       int(spec.compile_memory_bytes) if self.limit_as else None, self.scratch_bytes, {})  # type: ignore[union-attr]
        return exec_step(argv, setup, compile_wall_s(spec, self.wall_factor), None, self.excerpt, 16384,
                         self.host_stdin, self.cpus,
                         idle_s=builds.COMPILE_IDLE_S if spec.watch_compile_idle else None)  # type: ignore[union-attr]


def run_job(job: Job, frame: Frame, sequence: int, host_stdin: int, box: "Container") -> tuple[dict, str | None]:
    """Compile (or fetch from the cache) and run one native program; returns its result and a retire reason."""
    helpers = box.helpers
    KEEP.clear()
    KEEP.update(helpers)
    GONE.clear()
    spec = job.native
    assert spec is not None
    ctx = _Context(job, frame, sequence, host_stdin)
    result: dict = {"type": "result", "id": job.id, "compile_cached": None, "compile_ms": None, "pch": None}
    outputs = ("", "", False, False)
    started = time.monotonic()
    try:
        with process.as_uid(process.CANDIDATE_UID):
            os.mkdir(ctx.candidate_dir, 0o700)
        _write_files(spec.candidate, ctx.candidate_dir, process.CANDIDATE_UID)
        if spec.judge is not None:
            with process.as_uid(process.JUDGE_UID):
                os.mkdir(ctx.judge_dir, 0o700)
            _write_files(spec.judge, ctx.judge_dir, process.JUDGE_UID)
        if spec.mode == "run":
            verdict, outputs = _run_code(ctx, result, box)
        else:
            verdict, outputs = _judge_build(ctx) if spec.judge is not None else (None, outputs)
        if verdict is None and spec.support is not None:
            verdict, outputs = _support_build(ctx)
        if verdict is None and spec.mode != "run":
            verdict, outputs = _candidate_build(ctx, result)
        if verdict is None:
            ctx.program_ran = True
            if spec.mode == "stdio":
                verdict, outputs = _run_cases(ctx)
            else:
                verdict, outputs = _run_tests(ctx)
    except HostGone:
        raise
    except Exception as exc:
        if ctx.program_ran:  # whatever went wrong, the program's code had run: its verdict, not ours
            verdict = {"verdict": "failed", "detail": f"the program left the sandbox unable to go on: {exc!r}"}
        else:
            verdict = {"verdict": "sandbox_error", "detail": f"native job: {exc!r}"}
    result.update(verdict)
    stdout_text, stderr_text, out_trunc, err_trunc = outputs
    result.update({
        "duration_ms": round((time.monotonic() - started) * 1000, 3),
        "cpu_ms": round(ctx.cpu * 1000, 3),
        "stdout": stdout_text, "stderr": stderr_text,
        "stdout_truncated": out_trunc, "stderr_truncated": err_trunc,
        "leftover_processes": False,
        "flags": ctx.flags,
        **builds.stats,
    })
    clean = _clean_up(ctx, helpers)
    retire = None
    if result["verdict"] == "sandbox_error" and not ctx.container_ok:
        retire = "sandbox error"
    elif GONE:
        retire = "a helper of PID 1 (the zygote or the judge template) stopped"
    elif not clean:
        retire = "the container could not be cleaned after the program"
    return result, retire


def _write_files(build: Build, directory: str, owner: int) -> None:
    with process.as_uid(owner):
        for name, text in build.files.items():
            if "/" in name or name in ("", ".", ".."):
                raise ValueError(f"bad file name {name!r}")
            with open(os.path.join(directory, name), "w", encoding="utf-8", errors="surrogatepass") as handle:
                handle.write(text)


def _clean_up(ctx: _Context, helpers: set) -> bool:
    """Remove the job's scratch directories and anything either uid left; True if the container is clean."""
    for directory, owner in ((ctx.candidate_dir, process.CANDIDATE_UID), (ctx.judge_dir, process.JUDGE_UID),
                             (ctx.support_dir, process.JUDGE_UID), (ctx.pch_dir, process.CANDIDATE_UID)):
        if os.path.lexists(directory):
            try:
                process.remove_as(owner, directory)
            except OSError:
                pass
    if process.scratch_entries() or process.ipc_objects() or process.live_processes_other_than({1, *helpers}):
        process.reset_uid(process.CANDIDATE_UID, wipe=True)
        process.reset_uid(process.JUDGE_UID, wipe=True)
    process.reap(until_none_but=helpers, deadline_s=1.0)
    return (not process.scratch_entries() and process.ipc_objects() == 0
            and not process.live_processes_other_than({1, *helpers}))


def _compile(ctx: _Context, build: Build, scratch: str, owner: int, result: dict | None) -> tuple[Step | None, dict | None]:
    """Compile `build` in `scratch` as `owner` (or copy it from the cache); (the compile's Step if one ran, its
    verdict if it failed)."""
    spec = ctx.spec
    key = builds.cache_key(spec, build)  # type: ignore[arg-type]
    if builds.cache_fetch(key, scratch, owner):
        builds.stats["compile_hits"] += 1
        if result is not None:
            result["compile_cached"], result["compile_ms"] = True, 0.0
        return None, None
    builds.stats["compiles"] += 1
    how, pch_step = builds.prepare_pch(spec, build, scratch, owner, ctx.pch_dir,  # type: ignore[arg-type]
                                lambda argv, cwd: ctx.compile_step(argv, cwd, process.CANDIDATE_UID))
    step = ctx.compile_step(list(build.compile or ()), scratch, owner)
    if how and "-Winvalid-pch" in step.stderr.text():  # type: ignore[union-attr]
        how = "rejected"
        builds.stats["pch_rejected"] += 1
    compile_s = step.duration + (pch_step.duration if pch_step else 0.0)
    ctx.cpu += step.cpu + (pch_step.cpu if pch_step else 0.0)
    ctx.duration += compile_s
    if result is not None:
        result["pch"], result["compile_cached"], result["compile_ms"] = how, False, round(compile_s * 1000, 3)
    verdict = compile_verdict(step, float(spec.compile_time_limit_s))  # type: ignore[union-attr]
    if verdict is None:
        builds.cache_store(key, scratch, owner)
    return step, verdict


def _trusted_build(ctx: _Context, build: Build, directory: str, what: str) -> tuple[dict | None, tuple]:
    """Compile a build of trusted code as the judge's uid (the same for every sample of a problem: usually a
    cache hit). It holds none of the model's code, so one that does not build within the job's compile limits is
    passk's or the problem's failure, never the model's: `sandbox_error`, with the compiler's own words. Stopped
    by those limits, it is the job's compile error (or a wall timeout), as when tests and solution were one
    program."""
    if not build.compile:
        return None, ("", "", False, False)
    key = builds.cache_key(ctx.spec, build)  # type: ignore[arg-type]
    if key in builds.FAILED_TRUSTED:  # this problem's build failed in this container already: the same answer
        ctx.container_ok = True
        return builds.FAILED_TRUSTED[key]
    step, verdict = _compile(ctx, build, directory, process.JUDGE_UID, None)
    if verdict is None:
        return None, ("", "", False, False)
    limit = float(ctx.spec.compile_time_limit_s)  # type: ignore[union-attr]
    if step is not None and step.idle:
        # Trusted code asks nothing of a device that never answers: a compile of it that gained no CPU stalled on
        # the machine (a loaded host), neither the model's failure nor the problem's. A wall-clock timeout, re-run
        # alone like any other; never remembered as this problem's failed build.
        return {**verdict, "verdict": "timeout", "timeout_kind": "wall",
                "detail": f"{what}: the compile stalled, using no CPU for {builds.COMPILE_IDLE_S:g} s"}, \
            ("", "", False, False)
    if step is not None and (step.wall_timeout or step.cpu_timeout(limit) or step.oom):
        # The job's compile limits hold for every compile of its program, trusted ones included: one too tight
        # for the problem's own code is the job's compile error (or a wall timeout, re-run), as it was when the
        # tests and the solution were one program.
        return verdict, ("", "", False, False)
    shown = verdict.get("detail") or ""
    failed = ({"verdict": "sandbox_error", "detail": f"{what} did not build (not the program's fault): {shown}"},
              ("", step.stderr.text()[:ctx.excerpt] if step else "", False, False))  # type: ignore[union-attr]
    # The container is fine: it keeps serving, and answers this problem's other samples without a compile.
    builds.FAILED_TRUSTED[key] = failed
    ctx.container_ok = True
    return failed


def _judge_build(ctx: _Context) -> tuple[dict | None, tuple]:
    return _trusted_build(ctx, ctx.spec.judge, ctx.judge_dir, "the problem's tests")  # type: ignore[union-attr, arg-type]


def _support_build(ctx: _Context) -> tuple[dict | None, tuple]:
    """Compile the support build and copy what it holds into the candidate's directory."""
    with process.as_uid(process.JUDGE_UID):
        os.mkdir(ctx.support_dir, 0o700)
    _write_files(ctx.spec.support, ctx.support_dir, process.JUDGE_UID)  # type: ignore[union-attr, arg-type]
    verdict, outputs = _trusted_build(ctx, ctx.spec.support, ctx.support_dir, "passk's server for this problem")  # type: ignore[union-attr, arg-type]
    if verdict is None:
        with process.as_uid(process.JUDGE_UID):
            files = read_tree(ctx.support_dir)
        if files is None:
            return {"verdict": "sandbox_error", "detail": "passk's server for this problem is too large"}, outputs
        with process.as_uid(process.CANDIDATE_UID):
            write_tree(ctx.candidate_dir, [(r, m | 0o600, d) for r, m, d in files])
    return verdict, outputs


def _candidate_build(ctx: _Context, result: dict) -> tuple[dict | None, tuple]:
    build = ctx.spec.candidate  # type: ignore[union-attr]
    if not build.compile:
        return None, ("", "", False, False)
    step, verdict = _compile(ctx, build, ctx.candidate_dir, process.CANDIDATE_UID, result)
    if verdict is None:
        return None, ("", "", False, False)
    stderr = step.stderr if step else None  # type: ignore[union-attr]
    return verdict, ("", stderr.text()[:ctx.excerpt] if stderr else "", False,
                     bool(stderr and stderr.total > ctx.excerpt))


def _classify_stderr(stderr: str, spec: Native) -> tuple[str, str] | None:
    """(verdict, the line that says so) from the language's stderr patterns, or None."""
    for pattern, verdict in spec.stderr_verdicts or ():
        found = re.search(pattern, stderr)
        if found:
            line_start = stderr.rfind("\n", 0, found.start()) + 1
            line_end = stderr.find("\n", found.end())
            return verdict, stderr[line_start: line_end if line_end >= 0 else len(stderr)]
    return None


def _ended_verdict(step: Step, limit_s: float, spec: Native, label: str = "", nonzero: str = "failed") -> dict:
    """How a process of the program ended on its own (a stdio case, or the candidate while the tests needed it),
    as if it were the whole program: signal, exit status and its own stderr decide, as in one process."""
    prefix = f"{label}: " if label else ""
    base = {"exit_code": step.exit_code if step.exit_code >= 0 else None, "signal": step.signum}
    if step.cpu_timeout(limit_s):
        return {**base, "verdict": "timeout", "timeout_kind": "cpu", "detail": f"{prefix}CPU time limit of {limit_s:g} s exceeded"}
    if step.oom:
        return {**base, "verdict": "memory", "detail": f"{prefix}memory limit exceeded"}
    stderr = step.stderr.text() if step.stderr else ""
    if step.exit_code != 0:
        found = _classify_stderr(stderr, spec)
        if found:
            return {**base, "verdict": found[0], "detail": prefix + _first_line(found[1], 500)}
        if step.signum is not None:
            return {**base, "verdict": "crashed", "detail": f"{prefix}killed by signal {process.signal_name(step.signum)}"}
        detail = f"{prefix}exited with status {step.exit_code}"
        if stderr.strip():
            detail += ": " + _first_line(stderr, 500)
        return {**base, "verdict": nonzero, "detail": detail}
    return {**base, "verdict": "passed", "detail": None}


# ------------------------------------------------------------------ tests: the judge and its candidate


class _Pair:
    """The judge's and the candidate's processes of one run, with their pipes."""

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx
        self.report_r, report_w = os.pipe()
        calls_r, calls_w = os.pipe()
        replies_r, replies_w = os.pipe()
        self.judge_out, judge_out_w = os.pipe()
        self.judge_err, judge_err_w = os.pipe()
        self.cand_out, cand_out_w = os.pipe()
        self.cand_err, cand_err_w = os.pipe()
        # A runtime that cannot use a descriptor by its number (R) opens it anew as /dev/fd/N, which checks the
        # pipe's own mode: os.pipe() makes it root's 0600. Read and write for all opens nothing to anyone else:
        # only a process that holds a descriptor reaches the pipe through /proc/self/fd (another uid's
        # /proc/<pid>/fd is closed to it, and judges are non-dumpable), so each side can reopen only its own ends.
        for pipe_end in (report_w, calls_r, replies_r):
            os.fchmod(pipe_end, 0o666)
        devnull = os.open("/dev/null", os.O_RDONLY)
        spec = ctx.spec
        judge_cpu = ctx.time_limit + float(spec.judge_cpu_allowance_s)  # type: ignore[union-attr]
        self.judge_cpu_limit = judge_cpu
        judge_memory = ctx.memory + int(spec.judge_memory_bytes) if ctx.limit_as else None  # type: ignore[union-attr]
        judge_setup = Setup(process.JUDGE_UID, ctx.judge_dir, _env(ctx.judge_dir, spec), judge_cpu,  # type: ignore[arg-type]
                             judge_memory, ctx.scratch_bytes,
                             {0: devnull, 1: judge_out_w, 2: judge_err_w, 3: report_w, 4: calls_w, 5: replies_r},
                             oom_score=500)
        candidate_setup = Setup(process.CANDIDATE_UID, ctx.candidate_dir, _env(ctx.candidate_dir, spec),  # type: ignore[arg-type]
                                 ctx.time_limit, ctx.memory if ctx.limit_as else None, ctx.scratch_bytes,
                                 {0: devnull, 1: cand_out_w, 2: cand_err_w, 3: calls_r, 4: replies_w})
        # PID 1's own read end of the replies, read only once the judge has ended: whatever is left there then
        # was sent unasked (every call's answer is read by the judge before it goes on).
        self.replies_left = os.dup(replies_r)
        self.cpu_before = process.cgroup_cpu_s()
        self.oom_before = process.oom_kills()
        self.started = time.monotonic()
        try:
            self.judge_pid, _ = spawn(list(spec.judge.run), judge_setup)  # type: ignore[union-attr]
            candidate_setup.protected = [self.judge_pid, 1, *KEEP]
            self.candidate_pid, self.listener = spawn(list(spec.candidate.run), candidate_setup)  # type: ignore[union-attr]
        finally:
            for fd in (report_w, calls_r, calls_w, replies_r, replies_w, judge_out_w, judge_err_w, cand_out_w,
                       cand_err_w, devnull):
                os.close(fd)


def _run_tests(ctx: _Context) -> tuple[dict, tuple]:
    pair = _Pair(ctx)
    watch = Watch(ctx.host_stdin)
    excerpt = ctx.excerpt
    report_capture = watch.capture(pair.report_r, 64 * 1024)
    judge_out, judge_err = watch.capture(pair.judge_out, excerpt), watch.capture(pair.judge_err, 64 * 1024)
    cand_out, cand_err = watch.capture(pair.cand_out, excerpt), watch.capture(pair.cand_err, 64 * 1024)
    watch.process(pair.judge_pid)
    watch.process(pair.candidate_pid)
    watch.listen(pair.listener)
    wall = wall_limit_s(pair.judge_cpu_limit, ctx.wall_factor)
    statuses: dict[int, tuple[int, float]] = {}
    judge_cpu = 0.0
    wall_timeout = tree_timeout = False
    try:
        while pair.judge_pid not in statuses:
            elapsed = time.monotonic() - pair.started
            used = tree_cpu(pair.cpu_before)
            if pair.judge_pid not in statuses:
                judge_cpu = process.process_cpu(pair.judge_pid)
            if used is not None and (used - judge_cpu > ctx.time_limit + steps.TREE_CPU_SLACK_S
                                     or used > pair.judge_cpu_limit + steps.TREE_CPU_SLACK_S):
                tree_timeout = True
                break
            if elapsed >= wall:
                wall_timeout = True
                break
            budget_s = (ctx.time_limit + steps.TREE_CPU_SLACK_S - ((used or 0.0) - judge_cpu)) / max(0.1, ctx.cpus)
            timeout_ms = max(5.0, min(wall - elapsed, budget_s + 0.005, 0.25) * 1000)
            for ended in watch.wait(timeout_ms):
                reaped, status, usage = os.wait4(ended, os.WNOHANG)
                if reaped:
                    statuses[reaped] = (status, usage.ru_utime + usage.ru_stime)
                    if reaped == pair.judge_pid:
                        judge_cpu = statuses[reaped][1]
    except HostGone:
        process.reset_uid(process.CANDIDATE_UID, wipe=False)
        process.reset_uid(process.JUDGE_UID, wipe=False)
        raise
    duration = time.monotonic() - pair.started
    if pair.judge_pid in statuses and pair.candidate_pid not in statuses and not (wall_timeout or tree_timeout):
        # ENDED: the judge saw the candidate's channel close; let an exiting candidate finish its exit, so that its
        # own status (not the kill below) tells how it ended. Otherwise the tests are done and the candidate's
        # turn ends as it reads the end of its calls.
        ended = report.parse(bytes(report_capture.data))[1] == b"ENDED"
        statuses.update(wait_for(pair.candidate_pid, CANDIDATE_EXIT_WAIT_S if ended else CANDIDATE_FINISH_WAIT_S))
    candidate_ended = pair.candidate_pid in statuses
    judge_ended = pair.judge_pid in statuses and not (wall_timeout or tree_timeout)
    # The judge is done (or stopped at a limit): nothing of either side may run on.
    process.reset_uid(process.CANDIDATE_UID, wipe=False)
    process.reset_uid(process.JUDGE_UID, wipe=False)
    if _unasked_left(pair.replies_left) and judge_ended:
        ctx.flag("out_of_turn")
    os.close(pair.replies_left)
    for pid in (pair.judge_pid, pair.candidate_pid):
        if pid not in statuses:
            _, status, usage = os.wait4(pid, 0)
            statuses[pid] = (status, usage.ru_utime + usage.ru_stime)
    total = tree_cpu(pair.cpu_before)
    watch.close()
    reap_orphans()
    oom = pair.oom_before >= 0 and process.oom_kills() > pair.oom_before
    ctx.cpu += total if total is not None else sum(cpu for _, cpu in statuses.values())
    ctx.duration += duration
    candidate_cpu = (total - statuses[pair.judge_pid][1]) if total is not None else statuses[pair.candidate_pid][1]
    if watch.reached:
        ctx.flag("reached_judge")
    candidate = Step()
    candidate.status, candidate.cpu = statuses[pair.candidate_pid]
    candidate.cpu = max(candidate.cpu, candidate_cpu)
    candidate.stderr, candidate.oom = cand_err, oom
    verdict = _tests_verdict(ctx, statuses[pair.judge_pid][0], candidate, candidate_ended, bytes(report_capture.data),
                             judge_err.text(), wall_timeout, tree_timeout, oom)
    stdout = (cand_out.text() + judge_out.text())[:excerpt]
    stderr = (cand_err.text() + judge_err.text())[:excerpt]
    return verdict, (stdout, stderr,
                     cand_out.total + judge_out.total > excerpt, cand_err.total + judge_err.total > excerpt)


def _unasked_left(fd: int) -> bool:
    """Whether the replies pipe still holds bytes (read without blocking: the descriptor is shared, its flags too)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    found = False
    while any(event & select.POLLIN for _, event in poller.poll(0)):
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        found = True
    return found


def _tests_verdict(ctx: _Context, judge_status: int, candidate: Step, candidate_ended: bool, report_bytes: bytes,
                   judge_stderr: str, wall_timeout: bool, tree_timeout: bool, oom: bool) -> dict:
    """The verdict of a judged run: the judge's report decides, with the limits and how the candidate ended."""
    limit = ctx.time_limit
    spec = ctx.spec
    flags, kind, text_bytes = report.parse(report_bytes)
    for name in flags:
        ctx.flag(name)
    text = failure.clean(text_bytes.decode("utf-8", "replace"), 1500)
    judge_code = os.waitstatus_to_exitcode(judge_status)
    base = {"exit_code": judge_code if judge_code >= 0 else None, "signal": -judge_code if judge_code < 0 else None}
    if wall_timeout:
        return {**base, "verdict": "timeout", "timeout_kind": "wall",
                "detail": f"wall-clock limit exceeded (CPU limit {limit:g} s)"}
    if tree_timeout or candidate.cpu_timeout(limit):
        return {**base, "verdict": "timeout", "timeout_kind": "cpu", "detail": f"CPU time limit of {limit:g} s exceeded"}
    if oom:
        return {**base, "verdict": "memory", "detail": "memory limit exceeded"}
    if kind == b"PASS" and judge_code == 0:
        if candidate.cpu > limit:
            return {**base, "verdict": "timeout", "timeout_kind": "cpu",
                    "detail": f"CPU time {candidate.cpu:.2f} s exceeds the limit of {limit:g} s"}
        return {**base, "verdict": "passed", "detail": None}
    if kind == b"ENDED":
        if not candidate_ended:
            return {**base, "verdict": "failed",
                    "detail": "the program stopped answering the tests (it closed its channel to them and went on)"}
        ended = _ended_verdict(candidate, limit, spec)  # type: ignore[arg-type]
        if ended["verdict"] == "passed":  # it exited with status 0 while the tests needed it
            ctx.flag("ended_early")
            return {**ended, "verdict": "failed",
                    "detail": "the program exited with status 0 before its tests finished"}
        return ended
    if kind == b"RAISED":
        return {**base, "verdict": report.raised_verdict(text), "detail": f"the solution raised {text}"}
    if kind == b"BROKEN":
        ctx.flag("out_of_turn")
        return {**base, "verdict": "failed", "detail": f"the solution's process broke its channel to the tests: {text}"}
    if kind == b"ERROR":
        return {**base, "verdict": "error", "detail": text}
    if judge_code == -signal.SIGXCPU:  # the tests' own CPU allowance ran out (the program's answers kept them busy)
        return {**base, "verdict": "timeout", "timeout_kind": "cpu", "detail": f"CPU time limit of {limit:g} s exceeded"}
    found = _classify_stderr(judge_stderr, spec)  # type: ignore[arg-type]
    if found:
        return {**base, "verdict": found[0], "detail": _first_line(found[1], 500)}
    if judge_code < 0:
        return {**base, "verdict": "crashed", "detail": f"the tests were killed by signal {process.signal_name(-judge_code)}"}
    detail = f"the tests exited with status {judge_code}"
    if judge_stderr.strip():
        detail += ": " + _first_line(judge_stderr, 500)
    return {**base, "verdict": "failed", "detail": detail}


# ------------------------------------------------------------------ stdio


def _run_cases(ctx: _Context) -> tuple[dict, tuple]:
    spec = ctx.spec
    limit = float(spec.case_time_limit_s)  # type: ignore[union-attr]
    cases = spec.cases  # type: ignore[union-attr]
    policy = spec.policy or compare.DEFAULT_POLICY  # type: ignore[union-attr]
    last: Step | None = None
    verdict: dict = {"verdict": "passed", "detail": None}
    for index, case in enumerate(cases):
        label = f"case {index + 1} of {len(cases)} (input {compare.clip(case.input, 40)})"
        setup = Setup(process.CANDIDATE_UID, ctx.candidate_dir, _env(ctx.candidate_dir, spec), limit,  # type: ignore[arg-type]
                       ctx.memory if ctx.limit_as else None, ctx.scratch_bytes, {}, protected=[1, *KEEP])
        try:
            step = exec_step(list(spec.candidate.run), setup, wall_limit_s(limit, ctx.wall_factor),  # type: ignore[union-attr]
                             case.input.encode("utf-8"), STDIO_OUTPUT_CAP, ctx.excerpt, ctx.host_stdin, ctx.cpus)
        except OSError as exc:  # no process could start: the earlier cases' processes exhausted something
            if index == 0:
                raise
            verdict = {"verdict": "failed", "detail": f"{label}: could not start: {exc}"}
            break
        ctx.cpu += step.cpu
        ctx.duration += step.duration
        last = step
        if step.reached_judge:
            ctx.flag("reached_judge")
        if step.wall_timeout:
            verdict = {"verdict": "timeout", "timeout_kind": "wall",
                       "detail": f"{label}: wall-clock limit exceeded (CPU limit {limit:g} s)"}
        else:
            verdict = _ended_verdict(step, limit, spec, label, nonzero="error")  # type: ignore[arg-type]
        if verdict["verdict"] == "passed":
            got = step.stdout.text()  # type: ignore[union-attr]
            if step.stdout.truncated:  # type: ignore[union-attr]
                verdict = {**verdict, "verdict": "failed", "detail": f"{label}: output too large"}
            else:
                mismatch = compare.output_mismatch(got, case.output, policy, float(spec.abs_tol), float(spec.rel_tol))  # type: ignore[union-attr]
                if mismatch is not None:
                    verdict = {**verdict, "verdict": "failed", "detail": f"{label}: {mismatch}"}
        if verdict["verdict"] != "passed":
            break
    out = last.stdout.text()[:ctx.excerpt] if last else ""  # type: ignore[union-attr]
    err = last.stderr.text() if last else ""  # type: ignore[union-attr]
    return verdict, (out, err,
                     bool(last and last.stdout.total > ctx.excerpt), bool(last and last.stderr.truncated))  # type: ignore[union-attr]


# ------------------------------------------------------------------ run (POST /run_code)


def _run_code(ctx: _Context, result: dict, box: "Container") -> tuple[dict, tuple]:
    """Compile and run the program once, as SandboxFusion's /run_code does: its verdict says how it ended (exit
    status 0: `passed`), and `failure` carries the answer's parts (kind `run_code`): the compile's and the run's
    results and the fetched files. The time limit is the run's wall-clock limit and its CPU limit. A `warm` job's
    program (Python) is forked from the zygote's interpreter instead of exec'd (_FromZygote)."""
    spec = ctx.spec
    build = spec.candidate  # type: ignore[union-attr]
    _write_inputs(spec.inputs, ctx.candidate_dir)  # type: ignore[union-attr]
    record: dict = {"kind": "run_code", "compile": None, "run": None, "files": {}, "files_skipped": []}
    nothing = ("", "", False, False)
    if build.compile:
        step, verdict = _compile(ctx, build, ctx.candidate_dir, process.CANDIDATE_UID, result)
        record["compile"] = _compile_record(step, verdict, float(spec.compile_time_limit_s))  # type: ignore[union-attr]
        if verdict is not None:
            if verdict["verdict"] == "timeout":  # the client's own limit: final, as SandboxFusion answers it
                verdict = {**verdict, "timeout_kind": "client"}
            return {**verdict, "failure": record}, nothing
    ctx.program_ran = True
    limit = ctx.time_limit
    cap = int(spec.output_bytes) or ctx.excerpt  # type: ignore[union-attr]
    setup = Setup(process.CANDIDATE_UID, ctx.candidate_dir, _env(ctx.candidate_dir, spec), limit,  # type: ignore[arg-type]
                  ctx.memory if ctx.limit_as else None, ctx.scratch_bytes, {}, protected=[1, *KEEP])
    launch = _FromZygote(ctx, box) if spec.warm else EXEC  # type: ignore[union-attr]
    try:
        step = exec_step(list(build.run), setup, limit, spec.stdin.encode("utf-8", "surrogatepass") or None,  # type: ignore[union-attr]
                         cap, cap, ctx.host_stdin, ctx.cpus, launch=launch)
    finally:
        launch.close()
    ctx.cpu += step.cpu
    ctx.duration += step.duration
    if step.reached_judge:
        ctx.flag("reached_judge")
    timed_out = step.wall_timeout or step.cpu_timeout(limit)
    record["run"] = {"return_code": None if timed_out else step.exit_code, "execution_time": round(step.duration, 4),
                     "timed_out": timed_out}
    if timed_out:
        how = "wall-clock" if step.wall_timeout else "CPU"
        verdict = {"verdict": "timeout", "timeout_kind": "client", "exit_code": None, "signal": None,
                   "detail": f"{how} time limit of {limit:g} s exceeded"}
    else:
        verdict = _ended_verdict(step, limit, spec, nonzero="error")  # type: ignore[arg-type]
    with process.as_uid(process.CANDIDATE_UID):
        record["files"], record["files_skipped"] = _fetch(ctx.candidate_dir, spec.fetch, int(spec.fetch_bytes))  # type: ignore[union-attr]
    out, err = step.stdout, step.stderr
    return {**verdict, "failure": record}, (out.text(), err.text(), out.truncated, err.truncated)  # type: ignore[union-attr]


class _FromZygote(Launch):
    """A Python program forked from the zygote's warm interpreter, where it runs as `python3 FILE` would
    (script.py), instead of a fresh `python3` exec'd from PID 1: the zygote never held a job, so the program finds
    nothing of anyone else's in its memory. Its limits are the session's (as the step's setup says), its monitor
    is the zygote's, and the zygote reaps it and reports how it ended."""

    # How long the zygote may take to report a candidate whose pidfd said it ended.
    REPORT_WAIT_S = 5.0

    def __init__(self, ctx: _Context, box: "Container") -> None:
        limits = {"time_limit_s": ctx.time_limit, "memory_bytes": ctx.memory, "scratch_bytes": ctx.scratch_bytes}
        session = box.open_session(limits, ctx.candidate_dir)
        self.spawner = Spawner(session.detach(), on_reached=lambda: ctx.flag("reached_judge"))

    def start(self, argv: list, setup: Setup) -> tuple[int, int | None]:
        assignment = wire.assignment_memfd({"kind": "script", "argv": list(argv[1:]), "env": setup.env})
        try:
            pid = self.spawner.spawn({**setup.fds, 3: assignment}, cpu_s=setup.cpu_s, file_bytes=setup.file_bytes)
        finally:
            os.close(assignment)
        return pid, None

    def collect(self, pid: int, block: bool) -> tuple[int, float] | None:
        try:
            return self.spawner.wait(pid, self.REPORT_WAIT_S)
        except SpawnFailed:  # the zygote is gone: the container retires
            GONE.append(pid)
            return None

    def close(self) -> None:
        self.spawner.sock.close()


def _compile_record(step: Step | None, verdict: dict | None, limit_s: float) -> dict:
    """A compile as SandboxFusion reports it (a cached build: finished at once, status 0)."""
    if step is None:
        return {"timed_out": False, "return_code": 0, "execution_time": 0.0, "stdout": "", "stderr": ""}
    timed_out = verdict is not None and (step.wall_timeout or step.cpu_timeout(limit_s))
    code = step.exit_code
    if verdict is not None and not timed_out and code == 0:
        code = 1  # stopped by a limit of its own (memory, blocked): failed, whatever its status said
    return {"timed_out": timed_out, "return_code": None if timed_out else code,
            "execution_time": round(step.duration, 4),
            "stdout": step.stdout.text() if step.stdout else "", "stderr": step.stderr.text() if step.stderr else ""}


def _write_inputs(inputs: dict[str, str], directory: str) -> None:
    """The request's files (relative path -> base64) in the program's directory, as the program's own uid."""
    with process.as_uid(process.CANDIDATE_UID):
        for name, content in inputs.items():
            parts = name.split("/")
            if not name or name.startswith("/") or any(part in ("", ".", "..") for part in parts):
                raise ValueError(f"bad file name {name!r}")
            path = os.path.join(directory, *parts)
            os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(base64.b64decode(content))


def _fetch(directory: str, paths: list[str], limit: int) -> tuple[dict[str, str], list[str]]:
    """The files the program left (paths relative to its directory, or absolute), base64, read as the program's
    uid (nothing it could not read itself), in order until `limit` bytes; the ones missing or over it are skipped."""
    found: dict[str, str] = {}
    skipped: list[str] = []
    room = limit
    for path in paths:
        full = path if path.startswith("/") else os.path.join(directory, path)
        try:
            fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError:
            skipped.append(path)
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                skipped.append(path)
                continue
            data = b""
            while len(data) <= room:
                chunk = os.read(fd, min(1 << 20, room + 1 - len(data)))
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(fd)
        if len(data) > room:
            skipped.append(path)
            continue
        room -= len(data)
        found[path] = base64.b64encode(data).decode("ascii")
    return found, skipped
