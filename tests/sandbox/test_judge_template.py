"""The judge template (sandbox/runtime/judge_template.py): it forks each judge as a child of PID 1, not of its own.

The protocol and process.fork_sibling run here on the host, the test process standing in for PID 1; the same
in the real image is shown by a program that checks its own parent and the container's processes."""

from __future__ import annotations

import os
import signal
import socket

import pytest

from sandbox.executor import Sandbox
from sandbox.runtime import judge_template, process
from sandbox.verdicts import Verdict
from tests.sandbox.programs import run_one
from tests.sandbox.test_isolation import checked


def test_a_sibling_fork_is_a_child_of_the_parent() -> None:
    read_end, write_end = os.pipe()
    middle = os.fork()
    if middle == 0:  # stands in for the template: forks a sibling and ends at once
        try:
            sibling = process.fork_sibling()
            if sibling == 0:
                os.write(write_end, f"{os.getpid()} {os.getppid()}".encode())
                os._exit(7)
            os._exit(0)
        finally:
            os._exit(1)
    os.close(write_end)
    assert os.waitpid(middle, 0)[1] == 0
    sibling, parent_seen = map(int, os.read(read_end, 64).split())
    os.close(read_end)
    assert parent_seen == os.getpid()
    _, status = os.waitpid(sibling, 0)  # ours to reap: it is our child
    assert os.waitstatus_to_exitcode(status) == 7


def test_the_order_carries_the_program_and_its_job_as_written() -> None:
    program = "print('é \\udcff')\n" * 50_000  # several memfd pages, a lone surrogate kept as it came
    fd = judge_template.write_order(program, True, b"ab" * 32, "/tmp/j1", {"time_limit_s": 3.0}, [3, 1, 2, 5])
    try:
        header, read_back = judge_template.read_order(fd)
    finally:
        os.close(fd)
    assert read_back == program
    assert header == {"judged": True, "nonce": "ab" * 32, "scratch": "/tmp/j1", "limits": {"time_limit_s": 3.0},
                      "targets": [3, 1, 2, 5]}


def _judge(order_fd: int, given: list) -> None:
    """A stand-in judge: writes its order's program and its parent to the first descriptor it was given."""
    header, program = judge_template.read_order(order_fd)
    os.write(given[0], f"{program}|{os.getppid()}|{header['nonce']}|{len(given)}".encode())
    os._exit(0)


def test_the_template_forks_judges_that_the_parent_reaps() -> None:
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    template = judge_template.start(child, parent, _judge)
    try:
        for n in range(3):
            read_end, write_end = os.pipe()
            order = judge_template.write_order(f"job {n}", True, b"%d" % n, "/tmp", {}, [3, 1])
            try:
                pid = judge_template.fork_judge(parent, order, [write_end, write_end])
            finally:
                os.close(order)
                os.close(write_end)
            reaped, status = os.waitpid(pid, 0)
            assert (reaped, os.waitstatus_to_exitcode(status)) == (pid, 0)
            assert os.read(read_end, 256).decode() == f"job {n}|{os.getpid()}|{n}|2"
            os.close(read_end)
    finally:
        parent.close()  # the template ends when PID 1 hangs up
        assert os.waitpid(template, 0)[1] == 0


def test_in_the_image_the_program_is_pid_1s_child_beside_its_two_helpers(sandbox: Sandbox) -> None:
    outcome = run_one(sandbox, checked(
        """
        import os

        def probe():
            others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]
            roots = [p for p in others if open(f'/proc/{p}/status').read().split('Uid:')[1].split()[0] == '0']
            return os.getppid() == 1 and sorted(roots) == sorted(others) and len(roots) == 3
        """
    ))
    assert outcome.verdict is Verdict.PASSED, outcome


def test_a_template_that_is_gone_is_said_so_not_waited_for() -> None:
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    template = judge_template.start(child, parent, _judge)
    os.kill(template, signal.SIGKILL)
    os.waitpid(template, 0)
    read_end, write_end = os.pipe()
    order = judge_template.write_order("", True, b"0", "/tmp", {}, [3])
    try:
        with pytest.raises(judge_template.TemplateGone):
            judge_template.fork_judge(parent, order, [write_end])
    finally:
        for fd in (order, read_end, write_end):
            os.close(fd)
        parent.close()
