"""The judge template: where every judge process comes from.

PID 1 forks it when the container starts, with the zygote, before it has read
a job. For each new judge, PID 1 sends it the judge's descriptors; it forks the judge
with CLONE_PARENT (process.fork_sibling), so the judge is PID 1's child
exactly as if PID 1 had forked it: PID 1 waits for it, reads its status and
rusage, and kills it at a limit.

Why not fork in PID 1: after a fork, every page a process writes costs it a
page fault (a copy while the child shares the page). PID 1 does a job's
whole bookkeeping while the job's judge lives: some 300 faults per job. The
template's loop is kept to a few system calls, about 50 faults per judge.

It keeps root's CAP_SETUID/SETGID (the judge drops to its uid), is
non-dumpable, and has no children of its own: its forks are PID 1's.

Protocol, on a SOCK_SEQPACKET socket: PID 1 sends one byte with the
descriptors [the order, then one per target fd of the judge]; the template
answers the judge's pid in ASCII, or `E<errno> <why>` if it could not fork.
The order is a memfd PID 1 wrote (write_order): a JSON line {judged, nonce,
scratch, limits, targets[, live]}, then the program (for a kept judge, `live`
is the problem's side and the program the candidate's source: live_judge.py).
Only the judge reads it; a kept judge's next samples come as orders too. PID 1
closing the socket ends the template.
"""

from __future__ import annotations

import json
import os
import select
import socket
from collections.abc import Callable

from . import process

# How long PID 1 waits for the template to answer before it gives up on it (it answers in microseconds).
ANSWER_TIMEOUT_S = 10.0
_MAX_FDS = 8

# What a forked judge runs (supervisor.run_child) with the order's descriptor and the judge's descriptors in the
# order's `targets` order; it reads the order (read_order) and never returns.
RunJudge = Callable[[int, list], None]


class TemplateGone(OSError):
    """The judge template did not start a judge (it is gone, or the fork failed)."""


def start(control_child: socket.socket, control_parent: socket.socket, run_judge: RunJudge) -> int:
    """Fork the template (PID 1 calls this before reading any job); returns its pid."""
    return process.start_helper("judge template", control_child, control_parent,
                                lambda control: _serve(control, run_judge))


def _serve(control: socket.socket, run_judge: RunJudge) -> None:
    """Runs for ever in the template; returns when PID 1 closes the control socket. Every page this loop writes
    is a fault per judge: it does nothing but receive, fork, close and answer."""
    fork, close, answer, receive = process.fork_sibling, os.close, control.send, socket.recv_fds
    while True:
        data, fds, _, _ = receive(control, 1, _MAX_FDS)
        if not data:
            return
        try:
            pid = fork()
        except OSError as exc:
            answer(f"E{exc.errno or 0} {exc}".encode()[:512])
        else:
            if pid == 0:
                try:
                    run_judge(fds[0], fds[1:])
                finally:
                    os._exit(120)  # run_judge never returns
            answer(b"%d" % pid)
        for fd in fds:
            close(fd)


# ------------------------------------------------------------------- the order


def write_order(program: str, judged: bool, nonce: bytes, scratch: str, limits: dict, targets: list,
                live: str | None = None) -> int:
    """PID 1's side: a memfd holding what the judge needs, read from its start."""
    header = {"judged": judged, "nonce": nonce.decode(), "scratch": scratch, "limits": limits, "targets": targets}
    if live is not None:
        header["live"] = live
    fd = os.memfd_create("order", os.MFD_CLOEXEC)
    try:
        view = memoryview((json.dumps(header) + "\n" + program).encode("utf-8", "surrogatepass"))
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_order(fd: int) -> tuple[dict, str]:
    """The judge's side: (header, program) of the order PID 1 wrote (write_order)."""
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    header, _, program = b"".join(chunks).decode("utf-8", "surrogatepass").partition("\n")
    return json.loads(header), program


def fork_judge(control: socket.socket, order_fd: int, fds: list) -> int:
    """Have the template fork a judge (PID 1's child) with the order and `fds` (in the order's `targets`
    order); returns its pid. TemplateGone if the template did not answer or could not fork."""
    try:
        socket.send_fds(control, [b"J"], [order_fd, *fds])
        ready, _, _ = select.select([control], [], [], ANSWER_TIMEOUT_S)
        reply = control.recv(512) if ready else b""
    except OSError as exc:
        raise TemplateGone(exc.errno or 0, f"the judge template is gone: {exc}") from None
    if reply[:1].isdigit():
        return int(reply)
    if not reply:
        raise TemplateGone(0, "the judge template did not answer")
    number, _, why = reply[1:].decode("utf-8", "replace").partition(" ")
    raise TemplateGone(int(number) if number.isdigit() else 0, f"the judge template could not fork: {why}")
