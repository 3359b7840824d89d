"""The zygote: where every candidate process comes from.

PID 1 forks the zygote when the container starts, before it has read a single
job, so the zygote's memory never held a test, an expected output, a pass
nonce, or another sample's program. Candidates are forked from it, not from
their judge, and start from that clean copy: there is nothing in them to find.

It keeps root's CAP_SETUID/SETGID (to drop each child to the candidate uid),
is non-dumpable, and is a child subreaper, so every descendant of a candidate
is reaped here and never lingers as a zombie holding a pid.

Protocol (SOCK_SEQPACKET, JSON messages, descriptors by SCM_RIGHTS):

- PID 1 -> zygote on the control socket:
  `session` {time_limit_s, memory_bytes, scratch_bytes, scratch, helpers} + [socket]:
  the socket the current program's judge will use; and `reset` {wipe}:
  kill every candidate process, reap them, and with `wipe` remove their IPC
  objects and files; answered by `reset_done` {killed}.
- judge -> zygote on its session socket (client: `Spawner`):
  `spawn` {targets, cpu_s, file_bytes} + [the child's descriptors] ->
  `spawned` {pid} or `spawn_failed` {error}; `reset` -> `reset_done`;
  and, unasked, `exited` {pid, status, cpu_s} when a candidate ends.

The session's limits come from PID 1; a judge can only ask for lower ones.
"""

import _signal
import fcntl
import os
import select
import signal
import socket

from . import messages, process, report, seccomp

# ------------------------------------------------------------------- server


class Zygote:
    def __init__(self, control: socket.socket, run_candidate: object) -> None:
        self.control = control
        self.run_candidate = run_candidate  # what a forked candidate executes (candidate.main)
        self.session: "socket.socket | None" = None
        self.limits: dict = {}
        self.live: set = set()
        # The monitor (seccomp.py): each candidate's listener -> the candidate, and the candidates caught at it.
        self.listeners: dict = {}
        self.reached: set = set()
        self.poller: "select.poll | None" = None

    def serve(self) -> None:
        """Runs forever in the zygote process (process.start_helper made it non-dumpable, its standard descriptors
        /dev/null); exits when PID 1 closes the control socket."""
        process.become_subreaper()
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        poller = self.poller = select.poll()
        poller.register(self.control, select.POLLIN)
        poller.register(wake_r, select.POLLIN)
        while True:
            for fd, event in poller.poll():
                if fd == wake_r:
                    os.read(wake_r, 4096)
                    self._reap()
                elif fd == self.control.fileno():
                    message, fds = messages.receive(self.control)
                    if message is None:
                        os._exit(0)
                    self._on_control(message, fds, poller)
                elif fd in self.listeners:
                    self._on_listener(fd, event)
                elif self.session is not None and fd == self.session.fileno():
                    message, fds = messages.receive(self.session)
                    if message is None:
                        poller.unregister(self.session)
                        self.session.close()
                        self.session = None
                        continue
                    self._on_request(message, fds)

    def _on_control(self, message: dict, fds: list, poller: select.poll) -> None:
        if message.get("op") == "session" and fds:
            if self.session is not None:
                poller.unregister(self.session)
                self.session.close()
            self.session = socket.socket(fileno=fds[0])
            for fd in fds[1:]:
                os.close(fd)
            self.limits = message
            poller.register(self.session, select.POLLIN)
        elif message.get("op") == "reset":
            if self.session is not None:
                poller.unregister(self.session)
                self.session.close()
                self.session = None
            killed = self._reset(bool(message.get("wipe")))
            messages.send(self.control, {"op": "reset_done", "killed": killed})
        else:
            for fd in fds:
                os.close(fd)

    def _on_request(self, message: dict, fds: list) -> None:
        op = message.get("op")
        if op == "spawn":
            try:
                pid = self._spawn(message, fds)
                reply = {"op": "spawned", "pid": pid}
            except OSError as exc:
                reply = {"op": "spawn_failed", "error": f"{type(exc).__name__}: {exc}", "errno": exc.errno}
            finally:
                for fd in fds:
                    os.close(fd)
            self._tell(reply)
        elif op == "reset":
            for fd in fds:
                os.close(fd)
            self._reset(False)
            self._tell({"op": "reset_done"})

    def _tell(self, message: dict) -> None:
        if self.session is not None:
            try:
                messages.send(self.session, message)
            except OSError:
                pass

    def _spawn(self, request: dict, fds: list) -> int:
        limits = self.limits
        targets = [int(t) for t in request.get("targets", [])]
        if len(targets) != len(fds) or not limits or sorted(targets)[:3] != [0, 1, 2]:
            raise OSError(22, "spawn request without a session or with mismatched descriptors")
        cpu_s = float(limits["time_limit_s"])
        if request.get("cpu_s") is not None:
            cpu_s = min(cpu_s, float(request["cpu_s"]))
        file_bytes = int(limits["scratch_bytes"])
        if request.get("file_bytes") is not None:
            file_bytes = min(file_bytes, int(request["file_bytes"]))
        protected = [1, os.getpid(), *[int(pid) for pid in limits.get("helpers", ())]]
        protected += [int(request["judge"])] if request.get("judge") else []
        channel = socket.socketpair() if seccomp.available() else None
        monitor = seccomp.prepare(protected) if channel is not None else None
        pid = os.fork()
        if pid == 0:
            self._become_candidate(fds, targets, cpu_s, int(limits["memory_bytes"]), file_bytes, str(limits["scratch"]),
                                   monitor, channel[1] if channel else None)
        self.live.add(pid)
        if channel is not None:
            channel[1].close()
            listener = seccomp.receive_listener(channel[0])
            channel[0].close()
            if listener is not None and self.poller is not None:
                self.listeners[listener] = pid
                self.poller.register(listener, select.POLLIN)
        return pid

    def _on_listener(self, fd: int, event: int) -> None:
        """A candidate's monitor: answer its attempts (EPERM) and remember who made them."""
        if event & select.POLLIN and seccomp.answer(fd):
            self.reached.add(self.listeners[fd])
        if event & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
            self._drop_listener(fd)

    def _drop_listener(self, fd: int) -> None:
        self.listeners.pop(fd, None)
        if self.poller is not None:
            try:
                self.poller.unregister(fd)
            except KeyError:
                pass
        os.close(fd)

    def _become_candidate(self, fds: list, targets: list, cpu_s: float, memory: int, file_bytes: int, scratch: str,
                          monitor: object, channel: "socket.socket | None") -> None:
        """In the forked child: become the candidate and run it; never returns."""
        try:
            # _signal's own functions: signal.signal's wrapper converts handlers to enum members, and that
            # machinery alone touched about a hundred inherited pages (each a copy-on-write fault) per candidate.
            _signal.set_wakeup_fd(-1)
            _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
            os.setsid()
            if channel is not None:
                seccomp.install_and_send(monitor, channel)
                channel.close()
            process.oom_score(1000)  # if memory runs out, the candidate goes first
            process.drop_to(process.CANDIDATE_UID)
            # Out of the way first, so that no target number overwrites a descriptor still to be placed.
            moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in fds]
            for fd, target in zip(moved, targets):
                os.dup2(fd, target)
            os.closerange(max(targets) + 1, 1 << 16)
            try:
                os.mkdir(scratch, 0o700)
            except FileExistsError:
                pass
            os.chdir(scratch)
            process.clean_environment(scratch)
            process.set_limits(cpu_s, memory, file_bytes)
            _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)
        except BaseException as exc:
            try:
                os.write(2, f"passk: the candidate's process could not start: {exc!r}\n".encode())
            finally:
                os._exit(121)
        try:
            self.run_candidate()
        finally:
            os._exit(1)

    def _reap(self) -> None:
        for pid, status, usage in process.reap():
            if pid in self.live:
                self.live.discard(pid)
                cpu = usage.ru_utime + usage.ru_stime
                self._tell({"op": "exited", "pid": pid, "status": status, "cpu_s": cpu, "reached": pid in self.reached})

    def _reset(self, wipe: bool) -> bool:
        killed = process.reset_uid(process.CANDIDATE_UID, wipe)
        for pid, status, usage in process.reap(until_none_but=set(), deadline_s=2.0):
            if pid in self.live:
                self.live.discard(pid)
                self._tell({"op": "exited", "pid": pid, "status": status, "cpu_s": usage.ru_utime + usage.ru_stime,
                            "reached": pid in self.reached})
        if self.reached:
            self._tell({"op": "reached"})
        for fd in list(self.listeners):
            self._drop_listener(fd)
        self.reached.clear()
        return killed


def start(control_child: socket.socket, control_parent: socket.socket, run_candidate: object) -> int:
    """Fork the zygote (call before reading any job); returns its pid."""
    return process.start_helper("zygote", control_child, control_parent,
                                lambda control: Zygote(control, run_candidate).serve())


# ------------------------------------------------------------------- client


class SpawnFailed(OSError):
    """The zygote could not start a candidate (`errno` says why)."""


class Spawner:
    """A judge's handle on the zygote: start candidates, learn how they ended, kill them all."""

    def __init__(self, fd: int, on_reached: "object | None" = None) -> None:
        self.sock = socket.socket(fileno=fd)
        self.exited: dict = {}  # pid -> (status, cpu_s)
        # What a candidate caught at the monitor sets off: by default (a judge) the flag noted for its report.
        self.on_reached = on_reached or (lambda: report.note("reached_judge"))

    def spawn(self, child_fds: dict, cpu_s: "float | None" = None, file_bytes: "int | None" = None) -> int:
        """Start a candidate with `child_fds` ({target fd: our fd}); returns its pid."""
        targets = sorted(child_fds)
        messages.send(self.sock, {"op": "spawn", "targets": targets, "cpu_s": cpu_s, "file_bytes": file_bytes, "judge": os.getpid()},
              [child_fds[t] for t in targets])
        reply = self._next({"spawned", "spawn_failed"})
        if reply["op"] == "spawn_failed":
            raise SpawnFailed(int(reply.get("errno") or 0), str(reply.get("error")))
        return int(reply["pid"])

    def wait(self, pid: int, timeout_s: "float | None" = None) -> "tuple[int, float] | None":
        """(wait status, CPU seconds) once `pid` has ended, or None after `timeout_s`."""
        import time

        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while pid not in self.exited:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None
            ready, _, _ = select.select([self.sock], [], [], remaining)
            if ready:
                self._take_one()
        return self.exited[pid]

    def reset(self) -> None:
        """Kill every candidate process and wait until they are reaped (their `exited` arrive first)."""
        messages.send(self.sock, {"op": "reset"})
        self._next({"reset_done"})

    def _next(self, wanted: set) -> dict:
        while True:
            message = self._take_one()
            if message["op"] in wanted:
                return message

    def _take_one(self) -> dict:
        message, fds = messages.receive(self.sock)
        for fd in fds:
            os.close(fd)
        if message is None:
            raise SpawnFailed(0, "the zygote is gone")
        if message.get("op") == "exited":
            self.exited[int(message["pid"])] = (int(message["status"]), float(message["cpu_s"]))
        if message.get("reached") or message.get("op") == "reached":
            self.on_reached()
        return message
