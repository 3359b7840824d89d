"""How PID 1 runs a program's process trees: fork, become a uid, set limits, carry the monitor, exec; then
watch the output pipes, the exits, the monitor's listeners and the host, until the tree ends or a limit stops it.

Used by native.py for every step of a native job (a compile, a run, a stdio case, a judge and its candidate).
Every step's tree runs under one uid; when the step is over, nothing it started may outlive it (process.py
kills every process of the uid), and the orphans it left are reaped here, so that zombies never hold pids.
"""

from __future__ import annotations

import fcntl
import os
import resource
import select
import signal
import socket
import time

from . import process, seccomp
from .streams import READ_CHUNK, Capture, HostGone, drain, read_ready, tree_cpu

# The tree's CPU time may run this far past the limit before PID 1 stops it (RLIMIT_CPU stops one busy process).
TREE_CPU_SLACK_S = 0.1
# A step watched for idleness (a compile) that gains less CPU than this over its idle window is blocked.
IDLE_CPU_S = 0.01


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
    rlimit = process.cpu_rlimit_s(limit_s)
    return signum == signal.SIGXCPU or (signum == signal.SIGKILL and cpu >= rlimit - 0.05)


class Setup:
    """What a forked child does before exec: who it becomes, its limits and descriptors, its monitor."""

    def __init__(self, uid: int, cwd: str, env: dict, cpu_s: float, memory_bytes: int | None, file_bytes: int,
                 fds: dict, protected: list[int] | None = None, oom_score: int = 1000) -> None:
        self.uid, self.cwd, self.env, self.cpu_s = uid, cwd, env, cpu_s
        self.memory_bytes, self.file_bytes, self.fds = memory_bytes, file_bytes, fds
        self.protected, self.oom_score = protected, oom_score


def spawn(argv: list, setup: Setup) -> tuple[int, int | None]:
    """Fork and exec `argv` as `setup` says; returns (pid, the seccomp listener if the child carries one)."""
    channel = socket.socketpair() if setup.protected is not None and seccomp.available() else None
    monitor = seccomp.prepare(setup.protected or []) if channel is not None else None
    pid = os.fork()
    if pid == 0:
        _child(argv, setup, monitor, channel[1] if channel else None)
    listener = None
    if channel is not None:
        channel[1].close()
        listener = seccomp.receive_listener(channel[0])
        channel[0].close()
    return pid, listener


def _child(argv: list, setup: Setup, monitor: object, channel: socket.socket | None) -> None:
    """In the forked child: become the step's uid, set limits, exec. Never returns."""
    try:
        os.setsid()
        if channel is not None:
            seccomp.install_and_send(monitor, channel)
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
        cpu = process.cpu_rlimit_s(setup.cpu_s)
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


class Launch:
    """How a step's process starts and how its end is collected: forked from PID 1 and exec'd (native.py has the
    other way, a Python program forked from the zygote's warm interpreter)."""

    def start(self, argv: list, setup: Setup) -> tuple[int, int | None]:
        """(pid, the seccomp listener if PID 1 is to answer the process's monitor)."""
        return spawn(argv, setup)

    def collect(self, pid: int, block: bool) -> tuple[int, float] | None:
        """(wait status, CPU seconds) of the process, once its pidfd said it ended (or, `block`, once it has been
        killed); None if that is not known yet."""
        reaped, status, usage = os.wait4(pid, 0 if block else os.WNOHANG)
        return (status, usage.ru_utime + usage.ru_stime) if reaped else None

    def close(self) -> None:
        """Let go of what starting processes this way holds (nothing, for exec)."""


EXEC = Launch()


class Watch:
    """The poll loop shared by every step: output pipes, exits, the monitor's listeners, the host's stdin."""

    def __init__(self, host_stdin: int) -> None:
        self.poller = select.poll()
        self.captures: dict[int, Capture] = {}
        self.open_fds: set[int] = set()
        self.pidfds: dict[int, int] = {}  # pidfd -> pid
        self.listeners: set[int] = set()
        self.ended: list[int] = []  # processes already gone when they were to be watched
        self.reached = 0
        self.host_stdin = host_stdin
        self.poller.register(host_stdin, select.POLLIN | select.POLLHUP)

    def capture(self, fd: int, limit: int) -> Capture:
        self.captures[fd] = capture = Capture(limit)
        self.open_fds.add(fd)
        self.poller.register(fd, select.POLLIN | select.POLLHUP)
        return capture

    def process(self, pid: int) -> None:
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:  # not our child (the zygote's), and it has already ended and been reaped
            self.ended.append(pid)
            return
        self.pidfds[pidfd] = pid
        self.poller.register(pidfd, select.POLLIN)

    def listen(self, listener: int | None) -> None:
        if listener is not None:
            self.listeners.add(listener)
            self.poller.register(listener, select.POLLIN)

    def wait(self, timeout_ms: float) -> list[int]:
        """Serve what is ready for at most `timeout_ms`; returns the pids whose process ended meanwhile."""
        ended, self.ended = self.ended, []
        for fd, event in self.poller.poll(0 if ended else timeout_ms):
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


def exec_step(argv: list, setup: Setup, wall_s: float, stdin_data: bytes | None, out_limit: int, err_limit: int,
              host_stdin: int, cpus: float, idle_s: float | None = None, launch: Launch = EXEC) -> Step:
    """Run `argv` as `setup` says (started by `launch`) and wait for it (and for everything it started)."""
    step = Step()
    in_r, in_w = os.pipe() if stdin_data else (os.open("/dev/null", os.O_RDONLY), -1)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    setup.fds = {0: in_r, 1: out_w, 2: err_w}
    watch = Watch(host_stdin)
    oom_before = process.oom_kills()
    cpu_before = process.cgroup_cpu_s()
    started = time.monotonic()
    pid, listener = launch.start(argv, setup)
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
    own = 0.0
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
            if idle_s is not None:
                gained = process.uid_cpu_s(setup.uid)
                if gained - idle_mark[1] > IDLE_CPU_S:
                    idle_mark = (time.monotonic(), gained)
                else:
                    # A process that ended unreaped by its own (a zombie, an orphan) took its CPU out of the count.
                    idle_mark = (idle_mark[0], min(idle_mark[1], gained))
                    if time.monotonic() - idle_mark[0] >= idle_s:
                        step.idle = True
                        break
            budget_s = (setup.cpu_s + TREE_CPU_SLACK_S - (used or 0.0)) / max(0.1, cpus)
            timeout_ms = max(5.0, min(wall_s - elapsed, budget_s + 0.005, idle_s or wall_s) * 1000)
            if in_w >= 0:
                for fd, event in watch.poller.poll(0):
                    if fd == in_w:
                        pending, done = feed(in_w, pending, event)
                        if done:
                            watch.poller.unregister(in_w)
                            os.close(in_w)
                            in_w = -1
            for ended in watch.wait(timeout_ms):
                collected = launch.collect(ended, block=False)
                if collected is not None:
                    status, own = collected
    except HostGone:
        process.reset_uid(setup.uid, wipe=False)
        raise
    finally:
        if in_w >= 0:
            os.close(in_w)
    step.duration = time.monotonic() - started
    tree_used = tree_cpu(cpu_before)
    # Nothing the step started may outlive it.
    if status is None or process.live_processes_other_than({1, *KEEP}):
        process.reset_uid(setup.uid, wipe=False)
    if status is None:
        status, own = launch.collect(pid, block=True) or (signal.SIGKILL, own)
    watch.close()
    step.reached_judge = watch.reached
    step.status = status
    step.cpu = max(tree_used, own) if tree_used is not None else own
    step.oom = oom_before >= 0 and process.oom_kills() > oom_before
    reap_orphans()
    return step


def feed(fd: int, pending: memoryview | None, event: int) -> tuple[memoryview | None, bool]:
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


# Children PID 1 keeps across steps (its helpers: the zygote and the judge template), and those of them found
# dead while reaping (one died).
KEEP: set = set()
GONE: list = []


def reap_orphans() -> None:
    """Reap every child that ended (a program's orphans, reparented to PID 1, become zombies that would hold
    pids until the pids limit is full); note it if the zygote was one of them."""
    for reaped, _, _ in process.reap():
        if reaped in KEEP:
            GONE.append(reaped)


def wait_for(pid: int, seconds: float) -> dict[int, tuple[int, float]]:
    """{pid: (status, CPU seconds)} if the child ends within `seconds`, else {}."""
    pidfd = os.pidfd_open(pid)
    try:
        select.select([pidfd], [], [], seconds)
    finally:
        os.close(pidfd)
    reaped, status, usage = os.wait4(pid, os.WNOHANG)
    return {pid: (status, usage.ru_utime + usage.ru_stime)} if reaped else {}
