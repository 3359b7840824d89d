"""Programs in other languages than Python: compile (cached), then run them under limits.

Runs in PID 1 (see supervisor.py); the job is a `job.Native`. Every step (a compile, a run, a stdio case)
is a process tree started by exec in a scratch directory of its own uid, with RLIMIT_CPU (and RLIMIT_AS
unless the runtime reserves address space it never uses), the container cgroup's CPU time for the whole
tree, and a wall-clock backstop. A compile runs under the language's compile limits, never the program's.

Self-checking programs (`tests`: HumanEval-X, MultiPL-E) run as two processes, as Python's do:

- the candidate (uid 10001): the model's code and passk's server for it, built from the candidate build, in
  its own scratch directory. It never held the tests, the expected values or anything that proves a pass;
- the judge (uid 10002): the problem's tests with stubs that call the candidate over two pipes (values.py),
  built from the judge build (the same for every sample of a problem, so its compile is cached), in a
  scratch directory the candidate cannot enter. Only the judge holds the report pipe (report.py): a pass is
  the judge writing PASS there and exiting with status 0. Nothing the candidate prints, exits with, or
  sends can make it.

The time limit holds for the candidate's processes (the container's CPU time less the judge's own); the
judge may use the language's allowance beyond it (its runtime's start-up, the tests' own work). Memory: the
container's memory cgroup is the job's limit plus the judge's allowance; the candidate's RLIMIT_AS (where
the runtime allows one) is the job's limit. A candidate carries the seccomp monitor (seccomp.py).

stdio programs: the candidate build runs once per case with the case's input; its output is compared here
(compare.py), where no program runs.

Compile cache (`bin/` of CACHE_ROOT, a tmpfs of the judge's uid): keyed by sha256(toolchain version, compile
argv, source files, compile limits); what a compile left is copied there by PID 1 as the judge's uid and
copied into the scratch directory of the next identical build. Only the judge's uid can read it: no
candidate, and no candidate's compiler, ever sees another program's files or another problem's tests.

Precompiled headers (C++; `pch/` of CACHE_ROOT, which the candidate's compiler may read but not list): a
build may carry `pch`, the indices of its source's leading `#include <...>` lines (chosen by the language so
that moving them, in order, to a header of their own leaves the program's meaning unchanged: see
sandbox/languages/cpp.py). The header is exactly those lines, precompiled once per container (as the
candidate's uid, in a fresh directory, under the compile limits, with the compile's own flags) under
pch-<key>, key = sha256(toolchain, build argv, compile limits, header text): a pure function of standard
header names, so no program can change what another program's header means. The program then compiles as
`#include "<that header>"`, `#line 1` and its text with those lines blank (every line keeps its number). The
image may hold headers precompiled when it was built, under the same keys, in PREBUILT_ROOT: used first.

Clean-up after every job: every process of both uids is killed, zombies are reaped, scratch directories and
IPC objects removed (process.py); a container that cannot be cleaned retires. Nothing a program does after
its code started (its output, exit status, signals, files, processes) can become `sandbox_error`: only a
failure of passk's own set-up before any of the program's code ran is one.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import re
import resource
import select
import signal
import socket
import time

from . import compare, failure, process, report, seccomp
from .job import Build, Frame, Job, Native, wall_limit_s
from .pchkey import PCH_HEADER, PREBUILT_ROOT, pch_key
from .streams import READ_CHUNK, Capture, HostGone, drain, read_ready, tree_cpu

CACHE_ROOT = "/var/cache/passk"
BIN_CACHE = f"{CACHE_ROOT}/bin"
PCH_CACHE = f"{CACHE_ROOT}/pch"
TREE_CPU_SLACK_S = 0.1
# stdout kept whole for stdio comparisons (beyond it the case fails as output too large).
STDIO_OUTPUT_CAP = 16 * 1024 * 1024
MAX_CACHED_BYTES = 64 * 1024 * 1024
# A compile whose processes used no CPU for this long is blocked (reading a device, sleeping), not slowed by
# load: stopped at once as the program's compile error. Under any load a runnable compiler gets some CPU.
COMPILE_IDLE_S = 5.0
COMPILE_IDLE_CPU_S = 0.01
# How long an ending candidate may take to finish its exit once the judge saw its channel close.
CANDIDATE_EXIT_WAIT_S = 1.0
BLOCKED = "blocked"

# Per container, for the host (reported with each result).
stats = {"compiles": 0, "compile_hits": 0, "pch_builds": 0, "pch_hits": 0, "pch_prebuilt": 0, "pch_rejected": 0}
# Header keys whose build failed or whose PCH is too big for the cache: compiled without a PCH.
_PCH_REFUSED: set = set()


class Step:
    """How one exec'd process tree (or a judge and its candidate) ended."""

    def __init__(self) -> None:
        self.status = 0
        self.cpu = 0.0
        self.duration = 0.0
        self.wall_timeout = False
        self.tree_cpu_timeout = False
        self.idle = False
        self.oom = False
        self.reached_judge = 0
        self.stdout: Capture | None = None
        self.stderr: Capture | None = None

    @property
    def exit_code(self) -> int:
        return os.waitstatus_to_exitcode(self.status)

    @property
    def signum(self) -> int | None:
        code = self.exit_code
        return -code if code < 0 else None

    def cpu_timeout(self, limit_s: float) -> bool:
        return self.tree_cpu_timeout or killed_at_cpu_limit(self.signum, self.cpu, limit_s)


def killed_at_cpu_limit(signum: int | None, cpu: float, limit_s: float) -> bool:
    """SIGXCPU at RLIMIT_CPU's soft limit, or SIGKILL at its hard one for a process that ignored SIGXCPU."""
    rlimit = max(1, math.ceil(limit_s))
    return signum == signal.SIGXCPU or (signum == signal.SIGKILL and cpu >= rlimit - 0.05)


class _Setup:
    """What a forked child does before exec: who it becomes, its limits and descriptors, its monitor."""

    def __init__(self, uid: int, cwd: str, env: dict, cpu_s: float, memory_bytes: int | None, file_bytes: int,
                 fds: dict, protected: list[int] | None = None, oom_score: int = 1000) -> None:
        self.uid, self.cwd, self.env, self.cpu_s = uid, cwd, env, cpu_s
        self.memory_bytes, self.file_bytes, self.fds = memory_bytes, file_bytes, fds
        self.protected, self.oom_score = protected, oom_score


def _spawn(argv: list, setup: _Setup) -> tuple[int, int | None]:
    """Fork and exec `argv` as `setup` says; returns (pid, the seccomp listener if the child carries one)."""
    channel = socket.socketpair() if setup.protected is not None and seccomp.available() else None
    pid = os.fork()
    if pid == 0:
        _child(argv, setup, channel[1] if channel else None)
    listener = None
    if channel is not None:
        channel[1].close()
        listener = seccomp.receive_listener(channel[0])
        channel[0].close()
    return pid, listener


def _child(argv: list, setup: _Setup, channel: socket.socket | None) -> None:
    """In the forked child: become the step's uid, set limits, exec. Never returns."""
    try:
        os.setsid()
        if channel is not None:
            seccomp.install_and_send(setup.protected or [], channel)
            channel.close()
        # Out of the way first, so that no target number overwrites a descriptor still to be placed.
        high = {target: fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for target, fd in setup.fds.items()}
        for target, fd in high.items():
            os.dup2(fd, target)
        top = max(setup.fds)
        for fd in range(top):
            if fd not in setup.fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
        os.closerange(top + 1, 1 << 16)
        process.oom_score(setup.oom_score)
        for signum in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        process.drop_to(setup.uid)
        os.chdir(setup.cwd)
        cpu = max(1, math.ceil(setup.cpu_s))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        if setup.memory_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (setup.memory_bytes, setup.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (setup.file_bytes, setup.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.execvpe(argv[0], argv, setup.env)
    except BaseException as exc:
        try:
            os.write(2, f"passk: could not start {argv[0]}: {exc}\n".encode())
        finally:
            os._exit(127)


class _Watch:
    """The poll loop shared by every step: output pipes, exits, the monitor's listeners, the host's stdin."""

    def __init__(self, host_stdin: int) -> None:
        self.poller = select.poll()
        self.captures: dict[int, Capture] = {}
        self.open_fds: set[int] = set()
        self.pidfds: dict[int, int] = {}  # pidfd -> pid
        self.listeners: set[int] = set()
        self.reached = 0
        self.host_stdin = host_stdin
        self.poller.register(host_stdin, select.POLLIN | select.POLLHUP)

    def capture(self, fd: int, limit: int) -> Capture:
        self.captures[fd] = capture = Capture(limit)
        self.open_fds.add(fd)
        self.poller.register(fd, select.POLLIN | select.POLLHUP)
        return capture

    def process(self, pid: int) -> None:
        pidfd = os.pidfd_open(pid)
        self.pidfds[pidfd] = pid
        self.poller.register(pidfd, select.POLLIN)

    def listen(self, listener: int | None) -> None:
        if listener is not None:
            self.listeners.add(listener)
            self.poller.register(listener, select.POLLIN)

    def wait(self, timeout_ms: float) -> list[int]:
        """Serve what is ready for at most `timeout_ms`; returns the pids whose process ended meanwhile."""
        ended = []
        for fd, event in self.poller.poll(timeout_ms):
            if fd == self.host_stdin:
                raise HostGone
            if fd in self.open_fds:
                read_ready(fd, self.captures, self.poller, self.open_fds)
            elif fd in self.pidfds:
                ended.append(self.pidfds[fd])
                self.poller.unregister(fd)
            elif fd in self.listeners:
                if event & select.POLLIN:
                    self.reached += seccomp.answer(fd)
                if event & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    self.poller.unregister(fd)
                    self.listeners.discard(fd)
                    os.close(fd)
        return ended

    def close(self) -> None:
        for fd in list(self.open_fds):
            drain(fd, self.captures[fd])
        for fd in (*self.captures, *self.pidfds, *self.listeners):
            try:
                os.close(fd)
            except OSError:
                pass
        self.listeners.clear()


def exec_step(argv: list, setup: _Setup, wall_s: float, stdin_data: bytes | None, out_limit: int, err_limit: int,
              host_stdin: int, cpus: float, idle_s: float | None = None) -> Step:
    """Run `argv` as `setup` says and wait for it (and for everything it started)."""
    step = Step()
    in_r, in_w = os.pipe() if stdin_data else (os.open("/dev/null", os.O_RDONLY), -1)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    setup.fds = {0: in_r, 1: out_w, 2: err_w}
    watch = _Watch(host_stdin)
    oom_before = process.oom_kills()
    cpu_before = process.cgroup_cpu_s()
    started = time.monotonic()
    pid, listener = _spawn(argv, setup)
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    step.stdout, step.stderr = watch.capture(out_r, out_limit), watch.capture(err_r, err_limit)
    watch.process(pid)
    watch.listen(listener)
    pending = memoryview(stdin_data) if stdin_data else None
    if in_w >= 0:
        os.set_blocking(in_w, False)
        watch.poller.register(in_w, select.POLLOUT)
    status: int | None = None
    usage = None
    idle_mark = (started, 0.0)
    try:
        while status is None:
            elapsed = time.monotonic() - started
            used = tree_cpu(cpu_before)
            if used is not None and used > setup.cpu_s + TREE_CPU_SLACK_S:
                step.tree_cpu_timeout = True
                break
            if elapsed >= wall_s:
                step.wall_timeout = True
                break
            if idle_s is not None and used is not None:
                if used - idle_mark[1] > COMPILE_IDLE_CPU_S:
                    idle_mark = (time.monotonic(), used)
                elif time.monotonic() - idle_mark[0] >= idle_s:
                    step.idle = True
                    break
            budget_s = (setup.cpu_s + TREE_CPU_SLACK_S - (used or 0.0)) / max(0.1, cpus)
            timeout_ms = max(5.0, min(wall_s - elapsed, budget_s + 0.005, idle_s or wall_s) * 1000)
            if in_w >= 0:
                for fd, event in watch.poller.poll(0):
                    if fd == in_w:
                        pending, done = _feed(in_w, pending, event)
                        if done:
                            watch.poller.unregister(in_w)
                            os.close(in_w)
                            in_w = -1
            for ended in watch.wait(timeout_ms):
                reaped, raw_status, raw_usage = os.wait4(ended, os.WNOHANG)
                if reaped == pid:
                    status, usage = raw_status, raw_usage
    except HostGone:
        process.reset_uid(setup.uid, wipe=False)
        raise
    finally:
        if in_w >= 0:
            os.close(in_w)
    step.duration = time.monotonic() - started
    tree_used = tree_cpu(cpu_before)
    # Nothing the step started may outlive it.
    if status is None or process.live_processes_other_than({1, *_keep()}):
        process.reset_uid(setup.uid, wipe=False)
    if status is None:
        _, status, usage = os.wait4(pid, 0)
    watch.close()
    step.reached_judge = watch.reached
    step.status = status
    own = (usage.ru_utime + usage.ru_stime) if usage is not None else 0.0
    step.cpu = max(tree_used, own) if tree_used is not None else own
    step.oom = oom_before >= 0 and process.oom_kills() > oom_before
    _reap_orphans()
    return step


def _feed(fd: int, pending: memoryview | None, event: int) -> tuple[memoryview | None, bool]:
    """Write what the step's stdin can take; (what is left, whether stdin is done)."""
    if event & (select.POLLERR | select.POLLHUP) or not pending:
        return None, True
    try:
        written = os.write(fd, pending[:READ_CHUNK])
        pending = pending[written:]
    except BlockingIOError:
        pass
    except OSError:  # the program closed its stdin: the rest of the input is not read
        return None, True
    return pending, not pending


_KEEP: set = set()
_ZYGOTE_GONE: list = []


def _keep() -> set:
    return _KEEP


def _reap_orphans() -> None:
    """Reap every child that ended (a program's orphans, reparented to PID 1, become zombies that would hold
    pids until the pids limit is full); note it if the zygote was one of them."""
    for reaped, _, _ in process.reap():
        if reaped in _KEEP:
            _ZYGOTE_GONE.append(reaped)


# ------------------------------------------------------------------ the compile cache


def cache_key(spec: Native, build: Build) -> str:
    files = sorted((name, text) for name, text in build.files.items())
    # The compile limits too: a compile that fit a generous limit says nothing about a tighter one.
    limits = [spec.compile_time_limit_s, spec.compile_memory_bytes]
    material = json.dumps([spec.toolchain, build.compile, files, limits], ensure_ascii=False)
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def _read_tree(root: str, max_bytes: int = MAX_CACHED_BYTES) -> list | None:
    """[(relative path, mode, bytes)] of the regular files under root (as the current uid); None if too big."""
    found, total = [], 0
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as handle:
                data = handle.read(max_bytes + 1)
            total += len(data)
            if total > max_bytes:
                return None
            found.append((os.path.relpath(path, root), os.stat(path).st_mode & 0o777, data))
    return found


def _write_tree(root: str, files: list) -> None:
    for relative, mode, data in files:
        path = os.path.join(root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
        os.chmod(path, mode)


def _cache_dirs() -> bool:
    """The cache's two parts, made on first use by the judge's uid: bin/ (0700) and pch/ (0711)."""
    if not os.path.isdir(CACHE_ROOT):
        return False
    with process.as_uid(process.JUDGE_UID):
        for path, mode in ((BIN_CACHE, 0o700), (PCH_CACHE, 0o711)):
            if not os.path.isdir(path):
                try:
                    os.mkdir(path, mode)
                except FileExistsError:
                    pass
                except OSError:
                    return False
    return True


def cache_store(key: str, scratch: str, owner: int, root: str = BIN_CACHE, max_bytes: int = MAX_CACHED_BYTES,
                readable: bool = False) -> bool:
    """Copy what `owner` left in `scratch` into the cache under `key` (0700, or 0755 when `readable`)."""
    if not _cache_dirs():
        return False
    with process.as_uid(owner):
        files = _read_tree(scratch, max_bytes)
    if files is None:
        return False
    target = os.path.join(root, key)
    partial = target + ".partial"
    directory_mode = 0o755 if readable else 0o700

    def mode(original: int) -> int:
        executable = original & 0o100
        if readable:
            return 0o755 if executable else 0o644
        return 0o700 if executable else 0o600

    with process.as_uid(process.JUDGE_UID):
        for attempt in range(2):
            try:
                if os.path.lexists(partial):
                    process.remove_tree(partial)
                os.mkdir(partial, directory_mode)
                _write_tree(partial, [(r, mode(m), d) for r, m, d in files])
                for directory, _, _ in os.walk(partial):
                    os.chmod(directory, directory_mode)
                os.rename(partial, target)
                return True
            except OSError:
                if os.path.lexists(partial):
                    process.remove_tree(partial)
                if attempt == 0:  # full: start the cache afresh
                    for part in (BIN_CACHE, PCH_CACHE):
                        for entry in os.listdir(part):
                            process.remove_tree(os.path.join(part, entry))
    return False


def cache_fetch(key: str, scratch: str, owner: int) -> bool:
    source = os.path.join(BIN_CACHE, key)
    if not os.path.isdir(CACHE_ROOT):
        return False
    with process.as_uid(process.JUDGE_UID):
        if not os.path.isdir(source):
            return False
        files = _read_tree(source)
    if files is None:
        return False
    with process.as_uid(owner):
        _write_tree(scratch, [(r, m | 0o600, d) for r, m, d in files])
    return True


# ------------------------------------------------------------------ precompiled headers


def pch_split(spec: Native, build: Build) -> tuple[str, str, str] | None:
    """(key, header text, the source with the header's lines blank) for a build with `pch`, else None."""
    pch = build.pch
    if pch is None or not pch.lines:
        return None
    lines = build.files[pch.file].split("\n")
    picked = sorted(set(int(index) for index in pch.lines))
    if picked[-1] >= len(lines):
        return None
    header = "".join(lines[index] + "\n" for index in picked)
    for index in picked:
        lines[index] = ""
    limits = [spec.compile_time_limit_s, spec.compile_memory_bytes]
    return pch_key(spec.toolchain, pch.build, limits, header), header, "\n".join(lines)


def prepare_pch(spec: Native, build: Build, scratch: str, owner: int, build_dir: str, run_step) -> tuple[str | None, Step | None]:
    """Rewrite the build's source to include its precompiled header; returns (how: "prebuilt" | "hit" | "built" |
    None, the header build's Step if one ran). Without a usable header the source is left as it came. A build
    of the judge's uid uses only headers from the image (its compile reads nothing a candidate's uid wrote)."""
    split = pch_split(spec, build)
    if split is None or not _cache_dirs():
        return None, None
    key, header, body = split
    prebuilt = os.path.join(PREBUILT_ROOT, key)
    entry = os.path.join(PCH_CACHE, key)
    how, step = "hit", None
    if os.path.isfile(os.path.join(prebuilt, PCH_HEADER + ".gch")):
        how, entry = "prebuilt", prebuilt
        stats["pch_prebuilt"] += 1
    elif key in _PCH_REFUSED or owner != process.CANDIDATE_UID:
        return None, None
    elif not _pch_present(entry):
        how = "built"
        # A fresh directory holding nothing but the header: the build sees only the header's own text.
        with process.as_uid(process.CANDIDATE_UID):
            os.mkdir(build_dir, 0o700)
            with open(os.path.join(build_dir, PCH_HEADER), "w", encoding="utf-8", errors="surrogatepass") as handle:
                handle.write(header)
        try:
            step = run_step(list(build.pch.build), build_dir)  # type: ignore[union-attr]
            built = (_compile_verdict(step, spec.compile_time_limit_s) is None
                     and cache_store(key, build_dir, process.CANDIDATE_UID, PCH_CACHE,
                                     int(build.pch.max_bytes or MAX_CACHED_BYTES), readable=True))  # type: ignore[union-attr]
        finally:
            process.remove_as(process.CANDIDATE_UID, build_dir)
        if not built or not _pch_present(entry):
            if not step.wall_timeout:  # a wall timeout may only measure the load: the next program tries again
                _PCH_REFUSED.add(key)
            return None, step
        stats["pch_builds"] += 1
    else:
        stats["pch_hits"] += 1
    name = build.pch.file  # type: ignore[union-attr]
    text = f'#include "{entry}/{PCH_HEADER}"\n#line 1 "{name}"\n' + body
    with process.as_uid(owner):
        with open(os.path.join(scratch, name), "w", encoding="utf-8", errors="surrogatepass") as handle:
            handle.write(text)
    return how, step


def _pch_present(entry: str) -> bool:
    with process.as_uid(process.JUDGE_UID):
        return os.path.isfile(os.path.join(entry, PCH_HEADER + ".gch"))


# ------------------------------------------------------------------ the job


def _env(home: str, spec: Native, extra: dict | None = None) -> dict:
    env = {"HOME": home, "TMPDIR": home, "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
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

    def flag(self, name: str) -> None:
        if name not in self.flags:
            self.flags.append(name)

    def compile_step(self, argv: list, cwd: str, owner: int) -> Step:
        spec = self.spec
        limit = float(spec.compile_time_limit_s)  # type: ignore[union-attr]
        setup = _Setup(owner, cwd, _env(cwd, spec), limit,  # type: ignore[arg-type]
                       int(spec.compile_memory_bytes) if self.limit_as else None, self.scratch_bytes, {})  # type: ignore[union-attr]
        return exec_step(argv, setup, wall_limit_s(limit, self.wall_factor), None, self.excerpt, 16384,
                         self.host_stdin, self.cpus, idle_s=COMPILE_IDLE_S)


def run_job(job: Job, frame: Frame, sequence: int, host_stdin: int, zygote_pid: int) -> tuple[dict, str | None]:
    """Compile (or fetch from the cache) and run one native program; returns its result and a retire reason."""
    _KEEP.clear()
    _KEEP.add(zygote_pid)
    _ZYGOTE_GONE.clear()
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
        verdict, outputs = _judge_build(ctx) if spec.judge is not None else (None, outputs)
        if verdict is None and spec.support is not None:
            verdict, outputs = _support_build(ctx)
        if verdict is None:
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
        **stats,
    })
    clean = _clean_up(ctx, zygote_pid)
    retire = None
    if result["verdict"] == "sandbox_error":
        retire = "sandbox error"
    elif _ZYGOTE_GONE:
        retire = "the zygote stopped answering"
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


def _clean_up(ctx: _Context, zygote_pid: int) -> bool:
    """Remove the job's scratch directories and anything either uid left; True if the container is clean."""
    for directory, owner in ((ctx.candidate_dir, process.CANDIDATE_UID), (ctx.judge_dir, process.JUDGE_UID),
                             (ctx.support_dir, process.JUDGE_UID), (ctx.pch_dir, process.CANDIDATE_UID)):
        if os.path.lexists(directory):
            try:
                process.remove_as(owner, directory)
            except OSError:
                pass
    if process.scratch_entries() or process.ipc_objects() or process.live_processes_other_than({1, zygote_pid}):
        process.reset_uid(process.CANDIDATE_UID, wipe=True)
        process.reset_uid(process.JUDGE_UID, wipe=True)
    process.reap(until_none_but={zygote_pid}, deadline_s=1.0)
    return (not process.scratch_entries() and process.ipc_objects() == 0
            and not process.live_processes_other_than({1, zygote_pid}))


def _compile(ctx: _Context, build: Build, scratch: str, owner: int, result: dict | None) -> tuple[Step | None, dict | None]:
    """Compile `build` in `scratch` as `owner` (or copy it from the cache); (the compile's Step if one ran, its
    verdict if it failed)."""
    spec = ctx.spec
    key = cache_key(spec, build)  # type: ignore[arg-type]
    if cache_fetch(key, scratch, owner):
        stats["compile_hits"] += 1
        if result is not None:
            result["compile_cached"], result["compile_ms"] = True, 0.0
        return None, None
    stats["compiles"] += 1
    how, pch_step = prepare_pch(spec, build, scratch, owner, ctx.pch_dir,  # type: ignore[arg-type]
                                lambda argv, cwd: ctx.compile_step(argv, cwd, process.CANDIDATE_UID))
    step = ctx.compile_step(list(build.compile or ()), scratch, owner)
    if how and "-Winvalid-pch" in step.stderr.text():  # type: ignore[union-attr]
        how = "rejected"
        stats["pch_rejected"] += 1
    compile_s = step.duration + (pch_step.duration if pch_step else 0.0)
    ctx.cpu += step.cpu + (pch_step.cpu if pch_step else 0.0)
    ctx.duration += compile_s
    if result is not None:
        result["pch"], result["compile_cached"], result["compile_ms"] = how, False, round(compile_s * 1000, 3)
    verdict = _compile_verdict(step, float(spec.compile_time_limit_s))  # type: ignore[union-attr]
    if verdict is None:
        cache_store(key, scratch, owner)
    return step, verdict


def _trusted_build(ctx: _Context, build: Build, directory: str, what: str) -> tuple[dict | None, tuple]:
    """Compile a build of trusted code as the judge's uid (the same for every sample of a problem: usually a
    cache hit). It holds none of the model's code, so one that does not build is passk's or the problem's
    failure, never the model's: `sandbox_error`, with the compiler's own words."""
    if not build.compile:
        return None, ("", "", False, False)
    step, verdict = _compile(ctx, build, directory, process.JUDGE_UID, None)
    if verdict is None:
        return None, ("", "", False, False)
    limit = float(ctx.spec.compile_time_limit_s)  # type: ignore[union-attr]
    if step is not None and (step.wall_timeout or step.cpu_timeout(limit) or step.oom):
        # The job's compile limits hold for every compile of its program, trusted ones included: one too tight
        # for the problem's own code is the job's compile error (or a wall timeout, re-run), as it was when the
        # tests and the solution were one program.
        return verdict, ("", "", False, False)
    shown = verdict.get("detail") or ""
    return ({"verdict": "sandbox_error", "detail": f"{what} did not build (not the program's fault): {shown}"},
            ("", step.stderr.text()[:ctx.excerpt] if step else "", False, False))  # type: ignore[union-attr]


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
            files = _read_tree(ctx.support_dir)
        if files is None:
            return {"verdict": "sandbox_error", "detail": "passk's server for this problem is too large"}, outputs
        with process.as_uid(process.CANDIDATE_UID):
            _write_tree(ctx.candidate_dir, [(r, m | 0o600, d) for r, m, d in files])
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


def _compile_verdict(step: Step, limit_s: float) -> dict | None:
    """None if the compile succeeded; else the job's verdict."""
    base = {"exit_code": step.exit_code if step.exit_code >= 0 else None, "signal": step.signum}
    if step.idle:
        return {**base, "verdict": "compile_error",
                "detail": f"compile: blocked, using no CPU for {COMPILE_IDLE_S:g} s (the program's compile waits on "
                          "something that never comes)"}
    if step.wall_timeout:
        # May only measure the machine's load: a wall timeout is re-run alone before it is final.
        return {**base, "verdict": "timeout", "timeout_kind": "wall",
                "detail": f"compile: wall-clock limit exceeded (compile CPU limit {limit_s:g} s)"}
    if step.cpu_timeout(limit_s):
        return {**base, "verdict": "compile_error", "detail": f"compile: CPU time limit of {limit_s:g} s exceeded"}
    if step.oom:
        return {**base, "verdict": "compile_error", "detail": "compile: memory limit exceeded"}
    if step.exit_code != 0:
        stderr = step.stderr.text()  # type: ignore[union-attr]
        errors = [line for line in stderr.splitlines() if "error" in line.lower()]
        shown = "\n".join(errors[:5]) if errors else stderr
        reason = f"killed by signal {process.signal_name(step.signum)}" if step.signum else f"status {step.exit_code}"
        return {**base, "verdict": "compile_error", "detail": f"compile failed ({reason}): " + _first_line(shown, 1500)}
    return None


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
        devnull = os.open("/dev/null", os.O_RDONLY)
        spec = ctx.spec
        judge_cpu = ctx.time_limit + float(spec.judge_cpu_allowance_s)  # type: ignore[union-attr]
        self.judge_cpu_limit = judge_cpu
        judge_memory = ctx.memory + int(spec.judge_memory_bytes) if ctx.limit_as else None  # type: ignore[union-attr]
        judge_setup = _Setup(process.JUDGE_UID, ctx.judge_dir, _env(ctx.judge_dir, spec), judge_cpu,  # type: ignore[arg-type]
                             judge_memory, ctx.scratch_bytes,
                             {0: devnull, 1: judge_out_w, 2: judge_err_w, 3: report_w, 4: calls_w, 5: replies_r},
                             oom_score=500)
        candidate_setup = _Setup(process.CANDIDATE_UID, ctx.candidate_dir, _env(ctx.candidate_dir, spec),  # type: ignore[arg-type]
                                 ctx.time_limit, ctx.memory if ctx.limit_as else None, ctx.scratch_bytes,
                                 {0: devnull, 1: cand_out_w, 2: cand_err_w, 3: calls_r, 4: replies_w})
        self.cpu_before = process.cgroup_cpu_s()
        self.oom_before = process.oom_kills()
        self.started = time.monotonic()
        try:
            self.judge_pid, _ = _spawn(list(spec.judge.run), judge_setup)  # type: ignore[union-attr]
            candidate_setup.protected = [self.judge_pid, 1, *_KEEP]
            self.candidate_pid, self.listener = _spawn(list(spec.candidate.run), candidate_setup)  # type: ignore[union-attr]
        finally:
            for fd in (report_w, calls_r, calls_w, replies_r, replies_w, judge_out_w, judge_err_w, cand_out_w,
                       cand_err_w, devnull):
                os.close(fd)


def _wait_for(pid: int, seconds: float) -> dict[int, tuple[int, float]]:
    """{pid: (status, CPU seconds)} if the child ends within `seconds`, else {}."""
    pidfd = os.pidfd_open(pid)
    try:
        select.select([pidfd], [], [], seconds)
    finally:
        os.close(pidfd)
    reaped, status, usage = os.wait4(pid, os.WNOHANG)
    return {pid: (status, usage.ru_utime + usage.ru_stime)} if reaped else {}


def _judge_cpu(pid: int) -> float:
    """CPU seconds of a live process (all its threads), from /proc/<pid>/stat."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def _run_tests(ctx: _Context) -> tuple[dict, tuple]:
    pair = _Pair(ctx)
    watch = _Watch(ctx.host_stdin)
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
                judge_cpu = _judge_cpu(pair.judge_pid)
            if used is not None and (used - judge_cpu > ctx.time_limit + TREE_CPU_SLACK_S
                                     or used > pair.judge_cpu_limit + TREE_CPU_SLACK_S):
                tree_timeout = True
                break
            if elapsed >= wall:
                wall_timeout = True
                break
            budget_s = (ctx.time_limit + TREE_CPU_SLACK_S - ((used or 0.0) - judge_cpu)) / max(0.1, ctx.cpus)
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
    if (pair.judge_pid in statuses and pair.candidate_pid not in statuses
            and report.parse(bytes(report_capture.data))[1] == b"ENDED"):
        # The judge saw the candidate's channel close: let an exiting candidate finish its exit, so that its own
        # status (not the kill below) tells how it ended.
        statuses.update(_wait_for(pair.candidate_pid, CANDIDATE_EXIT_WAIT_S))
    candidate_ended = pair.candidate_pid in statuses
    # The judge is done (or stopped at a limit): nothing of either side may run on.
    process.reset_uid(process.CANDIDATE_UID, wipe=False)
    process.reset_uid(process.JUDGE_UID, wipe=False)
    for pid in (pair.judge_pid, pair.candidate_pid):
        if pid not in statuses:
            _, status, usage = os.wait4(pid, 0)
            statuses[pid] = (status, usage.ru_utime + usage.ru_stime)
    total = tree_cpu(pair.cpu_before)
    watch.close()
    _reap_orphans()
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
        setup = _Setup(process.CANDIDATE_UID, ctx.candidate_dir, _env(ctx.candidate_dir, spec), limit,  # type: ignore[arg-type]
                       ctx.memory if ctx.limit_as else None, ctx.scratch_bytes, {}, protected=[1, *_KEEP])
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
