"""The pid file an engine leaves when it dies: removed only when the process it names is no longer a dockerd."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.engine import EmbeddedEngine, EngineUnavailable
from tests.e2e.conftest import wait_until


def _engine(tmp_path: Path, pid: int) -> EmbeddedEngine:
    engine = EmbeddedEngine(tmp_path, tmp_path / "engine")
    engine.pidfile.parent.mkdir(parents=True)
    engine.pidfile.write_text(f"{pid}\n")
    return engine


def test_a_dead_pid_is_stale(tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()  # reaped: the PID names nothing now
    engine = _engine(tmp_path, process.pid)
    engine._remove_stale_pidfile()
    assert not engine.pidfile.exists()


def test_a_zombie_or_another_program_is_stale(tmp_path: Path) -> None:
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        # Not reaped yet: a zombie, which is what a dead engine's PID stays while nobody waits for it.
        wait_until(lambda: Path(f"/proc/{zombie.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z", 30,
                   "the child to exit", poll_s=0.05)
        engine = _engine(tmp_path, zombie.pid)
        engine._remove_stale_pidfile()
        assert not engine.pidfile.exists()
    finally:
        zombie.wait()
    engine = _engine(tmp_path / "reused", os.getpid())  # a live process, but not a dockerd
    engine._remove_stale_pidfile()
    assert not engine.pidfile.exists()


def test_a_live_dockerd_keeps_its_pid_file(tmp_path: Path) -> None:
    pids = subprocess.run(["pgrep", "-x", "dockerd"], capture_output=True, text=True).stdout.split()
    assert pids, "the tests' Docker engine is not running"
    engine = _engine(tmp_path, int(pids[0]))
    with pytest.raises(EngineUnavailable, match="live dockerd"):
        engine._remove_stale_pidfile()
    assert engine.pidfile.exists()
