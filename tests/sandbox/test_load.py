"""Limits that hold under load, and programs that hit them leave nothing for the next one."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import docker
import pytest

from sandbox.container import LABEL_ROLE, ROLE_SANDBOX
from sandbox.executor import Sandbox
from sandbox.verdicts import Verdict
from tests.sandbox.programs import run_many, run_one

# About half a second of CPU on this class of machine (a pure-Python loop).
CPU_BOUND = """
def busy():
    total = 0
    for i in range(25_000_000):
        total += i & 7
    return total

def check(candidate):
    assert candidate() > 0

check(busy)
"""


@pytest.fixture
def every_core_busy(docker_client: docker.DockerClient, sandbox_image: str) -> Iterator[None]:
    """Busy loops in containers of their own, so the scheduler really shares the cores with the sandbox."""
    spinners = [
        docker_client.containers.run(
            sandbox_image, entrypoint=["python3", "-c", "while True: pass"], detach=True, network_mode="none",
            labels={LABEL_ROLE: ROLE_SANDBOX, "passk.created": str(int(time.time()))}, auto_remove=False,
        )
        for _ in range(3 * (os.cpu_count() or 1))
    ]
    try:
        yield
    finally:
        for container in spinners:
            container.remove(force=True)


def test_cpu_bound_correct_program_passes_while_every_core_is_busy(sandbox: Sandbox, every_core_busy: None) -> None:
    outcome = run_one(sandbox, CPU_BOUND, time_limit_s=3.0)
    assert outcome.verdict is Verdict.PASSED, outcome
    # The load was real (it waited for a core well over its CPU time), and it was judged on CPU time.
    assert outcome.cpu_ms is not None and outcome.duration_ms is not None
    assert outcome.duration_ms > 1.5 * outcome.cpu_ms and outcome.cpu_ms < 3000


def test_programs_that_hit_limits_do_not_affect_the_next(sandbox: Sandbox) -> None:
    scratch_probe = (
        "def probe():\n    data = b'z' * (32 << 20)\n    with open('f', 'wb') as handle:\n        handle.write(data)\n"
        "    import os\n    return os.listdir('.') == ['f']\n"
        "def check(candidate):\n    assert candidate()\ncheck(probe)\n"
    )
    outcomes = run_many(
        sandbox,
        [
            "with open('/tmp/fill', 'wb') as f:\n    while True:\n        f.write(b'x' * (1 << 20))\n",
            scratch_probe,
            "x = bytearray(1 << 30)\n",
            scratch_probe,
            "while True:\n    pass\n",
            scratch_probe,
        ],
        time_limit_s=1.0,
    )
    assert outcomes[0].verdict in (Verdict.ERROR, Verdict.CRASHED)  # EFBIG / ENOSPC, or SIGXFSZ
    assert outcomes[2].verdict is Verdict.MEMORY
    assert outcomes[4].verdict is Verdict.TIMEOUT
    for probe in outcomes[1::2]:
        assert probe.verdict is Verdict.PASSED, probe
    # The clean-up after each program, not a fresh container, is what made the probes pass.
    assert sandbox.settings.stats["retired"] == 0 and sandbox.settings.stats["broken"] == 0
