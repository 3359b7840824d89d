"""A judge kept for one problem's samples within a frame.

A tests job (trusted_tests.py) is the problem's side (its tests, prompt and
entry point) and the sample's side (the candidate's source): job.tests_parts.
A frame holds one problem's samples, so PID 1 keeps the judge it forked for
the first of them and sends it the next sample instead of forking a new one:
the judge compiles the tests once, and its fork, set-up and copy-on-write
faults are paid once per frame instead of once per program.

What a sample can leave in the judge is bounded: its candidate ran in another
process (another uid, forked from the zygote), only values crossed, and each
sample's tests run in a new namespace. PID 1 replaces the judge (kills it; the
next sample gets a new one) after a sample that did not end `passed`, `failed`
or `error` with the judge's end message, that raised a reward-hack flag, or
that left anything behind; when the judge holds more than GROWTH_BYTES beyond
a new judge (the template it was forked from); after MAX_JOBS samples; and at
the frame's end. Each sample's CPU is read from the container's cgroup, and
the judge's soft RLIMIT_CPU moves per sample (serve).

Protocol, on a SOCK_SEQPACKET socket at CONTROL_FD of the judge: the first
sample comes with the fork (judge_template's order, with `live`: the problem's
side as JSON; the program is the candidate's source). For each next one PID 1
sends one byte with [an order ({nonce, scratch}, then the candidate's source),
then the sample's descriptors for TARGETS]. The judge answers `D<exit status>`
once the sample's report is written and it holds none of those descriptors.
PID 1 closing the socket ends the judge. Having answered, a judge waits for
PID 1's next word and never exits on its own (but after SETUP, which PID 1
never keeps a judge past): PID 1 may send the next sample as soon as it has
the answer, and a judge that left meanwhile would take that sample with it.
"""

from __future__ import annotations

import os
import signal
import socket
import sys

from . import candidate, judge_template, process, report, trusted_tests

CONTROL_FD = 6
MAX_JOBS = 64
GROWTH_BYTES = 8 << 20
# Where the sample's descriptors go in the judge, in the order PID 1 sends them after the order.
TARGETS = (report.FD, 1, 2, trusted_tests.SPAWN_FD)


def cpu_hard_limit_s(cpu_s: int) -> int:
    """The judge's RLIMIT_CPU hard limit: room for MAX_JOBS samples' soft limits (serve raises the soft one
    before each to what the judge used so far, at most its previous soft limit, plus one second and the job's)."""
    return (cpu_s + 2) * (MAX_JOBS + 1)


# ------------------------------------------------------------------ PID 1's side


class LiveJudge:
    """PID 1's handle on a kept judge: its pid, its control socket, what it judges and how much it did."""

    def __init__(self, pid: int, control: socket.socket, key: tuple) -> None:
        self.pid, self.control, self.key = pid, control, key
        self.jobs = 1

    def send(self, order_fd: int, fds: list) -> bool:
        """Give the judge its next sample; False if it is gone."""
        try:
            socket.send_fds(self.control, [b"J"], [order_fd, *fds])
        except OSError:
            return False
        self.jobs += 1
        return True

    def ended(self) -> int | None:
        """The exit status the judge gave its sample (`D<status>`), once it says it; None if it hung up."""
        try:
            data = self.control.recv(16)
        except OSError:
            return None
        if data[:1] == b"D" and data[1:].isdigit():
            return int(data[1:])
        return None

    def reusable(self, template_pid: int) -> bool:
        """Still worth keeping: fewer than MAX_JOBS samples, and its memory within GROWTH_BYTES of a new judge's
        (the template's, which every judge is forked from): no sample starts with less memory than it would
        with a new judge, whatever the one before it made the judge hold."""
        if self.jobs >= MAX_JOBS:
            return False
        rss, new = _rss_bytes(self.pid), _rss_bytes(template_pid)
        return rss is not None and new is not None and rss <= new + GROWTH_BYTES

    def end(self) -> int | None:
        """Kill and reap the judge; returns its wait status (None if it was reaped already)."""
        self.control.close()
        with process.as_uid(process.JUDGE_UID):  # PID 1 signals only as the uid it signals
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            return os.waitpid(self.pid, 0)[1]
        except ChildProcessError:
            return None


def _rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


# ------------------------------------------------------------------ the judge's side


def serve(problem: str, source: str, nonce: bytes, cpu_s: int, run_sample) -> None:  # noqa: ANN001
    """Runs in a kept judge after its set-up (supervisor.run_child), the first sample given; never returns.

    `run_sample(body, nonce)` runs one sample's tests and returns its exit status (supervisor.run_reported).
    """
    import json

    control = socket.socket(fileno=CONTROL_FD)
    null = os.open("/dev/null", os.O_RDWR | os.O_CLOEXEC)
    streams = candidate.output_streams(stdio=False)
    try:
        prepared, failed = trusted_tests.Prepared(json.loads(problem)), None
    except BaseException as exc:  # the tests do not compile: each sample says so, as a new judge would
        prepared, failed = None, exc

    def body() -> None:
        if failed is not None:
            raise failed
        trusted_tests.run(prepared, source)

    while True:
        sys.stdout, sys.stderr = streams  # as the tests found them, whatever the last sample's did
        report.NOTED.clear()
        status = run_sample(body, nonce)
        for target in TARGETS:  # PID 1 sees the sample's pipes end, and the zygote its session
            os.dup2(null, target)
        control.send(b"D%d" % status)
        if status == report.SETUP_STATUS:  # sandbox_error: PID 1 replaces the judge, so it may go now
            os._exit(status)
        data, fds, _, _ = socket.recv_fds(control, 16, len(TARGETS) + 1)
        if not data or len(fds) != len(TARGETS) + 1:
            os._exit(0)  # PID 1 is done with this judge
        order_fd, *given = fds
        try:
            source, nonce = _next_sample(order_fd, given, cpu_s)
        except BaseException as exc:  # ours, not the sample's: its report pipe is in place by then
            report.setup_failed(report.FD, exc)


def _next_sample(order_fd: int, given: list, cpu_s: int) -> tuple[str, bytes]:
    """Place the next sample's descriptors, read its order, give it its scratch directory and its CPU limit;
    returns (the candidate's source, the nonce)."""
    import resource

    for target, fd in zip(TARGETS, given):  # the report pipe first, so that a failure here can be told
        os.dup2(fd, target)
        os.close(fd)
    header, source = judge_template.read_order(order_fd)
    os.close(order_fd)
    scratch = header["scratch"]
    os.mkdir(scratch, 0o700)
    os.chdir(scratch)
    process.clean_environment(scratch)
    # RLIMIT_CPU counts the process's whole life: the soft limit moves to what the judge used so far plus the
    # job's limit (and the second it may have started), as a new judge's would stand.
    used = resource.getrusage(resource.RUSAGE_SELF)
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    soft = int(used.ru_utime + used.ru_stime) + 1 + cpu_s
    if soft > hard:  # PID 1 replaces the judge after MAX_JOBS samples, so never
        raise OSError("the kept judge has no CPU limit left to give")
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    return source, header["nonce"].encode()
