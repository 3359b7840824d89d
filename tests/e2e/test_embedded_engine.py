"""`passk up` keeps the Docker engine it started: SIGKILLed mid-run, the engine is reaped and started again.

The whole stack is `passk up` itself (API, worker, and the engine it starts as root), with its engine under a
directory of this test (Settings.engine_root: data, exec state, socket and pid file there), so killing it
disturbs no other test's engine. While the engine is away, /v1/status and /metrics say so; the samples it was
running go back to the queue and the run ends with every sample exactly once, none counted against the model.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import docker
import httpx
import pytest

from passk_dev.localstack import create_database, end_process, postgres_server, wait_for_run
from sandbox.engine import EmbeddedEngine
from sandbox.images import LOCAL_BASE, ensure_sandbox_image, image_exists
from service.core.embedded_postgres import _free_port
from service.core.migrate import REPO_ROOT
from service.core.settings import Settings
from tests.e2e.conftest import wait_until
from tests.e2e.test_faults import PROMPT, TEST, _assert_true_verdicts, _mounts_under, _submit

pytestmark = pytest.mark.slow


def _preload(root: Path, image: str) -> None:
    """The sandbox image (and its local base) in the engine under `root`, copied from the machine's engine,
    so that `passk up` finds them there instead of building them."""
    private = EmbeddedEngine(root, root / "engine")
    client = private.start()
    try:
        main = docker.from_env(timeout=300)
        for name in (LOCAL_BASE, image):
            if image_exists(main, name) and not image_exists(client, name):
                client.api.load_image(main.api.get_image(name))
        assert image_exists(client, image), f"{image} did not load into the private engine"
    finally:
        private.stop()


def _pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _process(pid: int) -> tuple[str, str, int] | None:
    """(command name, state, parent pid) of a process, None once it is gone."""
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return comm, fields[0], int(fields[1])


class Up:
    """A `passk up` process with its engine under root/engine and its data under root/data."""

    def __init__(self, root: Path, database_url: str) -> None:
        self.root = root
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # Every dockerd seen: all must be gone once passk up has stopped.
        self.engine_pids: set[int] = set()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PASSK_") and k != "DOCKER_HOST"}
        env |= {
            "PASSK_ENV": "test", "PASSK_DATABASE_URL": database_url, "PASSK_DATA_DIR": str(root / "data"),
            "PASSK_ENGINE_ROOT": str(root / "engine"), "PASSK_API_PORT": str(self.port),
            # A short heartbeat tick (lease / 4), and an engine that stays away long enough to be seen away.
            "PASSK_LEASE_SECONDS": "8", "PASSK_ENGINE_RESTART_BACKOFF_S": "8", "PASSK_WORKER_CONCURRENCY": "2",
        }
        with open(root / "up.log", "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "service.cli", "up"],
                env=env, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT,
            )

    def log_tail(self) -> str:
        return (self.root / "up.log").read_text(errors="replace")[-3000:]

    def healthy(self) -> bool:
        assert self.process.poll() is None, f"passk up exited:\n{self.log_tail()}"
        try:
            return httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def client(self) -> httpx.Client:
        key = (self.root / "data" / "api-key").read_text().strip()
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=30)

    def engine_pid(self) -> int | None:
        return _pid(self.root / "engine" / "docker.pid")


@pytest.fixture()
def up() -> Iterator[Up]:
    image = ensure_sandbox_image(docker.from_env(timeout=300), Settings().sandbox_base_image)
    root = Path(tempfile.mkdtemp(prefix="passk-up-"))
    try:
        _preload(root, image)
        with postgres_server("passk_up") as server:
            running = Up(root, create_database(server, "passk_up"))
            try:
                wait_until(running.healthy, 180, "passk up to serve", poll_s=0.3)
                yield running
            finally:
                end_process(running.process, 60)
        # The engine ended with `passk up` (and so did every dockerd it started).
        gone = lambda: all(_process(pid) is None for pid in running.engine_pids)  # noqa: E731
        wait_until(gone, 60, "the engine to stop with passk up")
    finally:
        for _ in range(10):  # dockerd bind-mounts its data root onto itself, once more after each crash
            mounts = _mounts_under(root)
            if not mounts:
                break
            for mount in sorted(mounts, reverse=True):
                subprocess.run(["umount", mount], check=False, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
    assert not root.exists(), "the test's engine directory was left behind"


def _engine_figures(client: httpx.Client) -> tuple[int, str]:
    """(workers whose engine is down per /v1/status, the passk_engine_up lines of /metrics)."""
    status = client.get("/v1/status").raise_for_status().json()
    metrics = client.get("/metrics").raise_for_status().text
    lines = "\n".join(line for line in metrics.splitlines() if line.startswith("passk_engine_up{"))
    return status["workers"]["engines_down"], lines


def test_passk_up_restarts_its_engine_after_a_sigkill(up: Up) -> None:
    client = up.client()
    up_pid = up.process.pid
    first = up.engine_pid()
    assert first is not None and (p := _process(first)) is not None and p[0] == "dockerd" and p[2] == up_pid, p
    up.engine_pids.add(first)
    wait_until(lambda: (f := _engine_figures(client))[0] == 0 and " 1.0" in f[1], 30, "the worker's engine up")

    body = {"name": "engine", "problems": [{"id": "p0", "prompt": PROMPT, "test": TEST, "entry_point": "square"}]}
    dataset_id = client.post("/v1/datasets", json=body).raise_for_status().json()["id"]
    run_id, expected = _submit(client, dataset_id, n=64, sleep_s=0.25)
    done = lambda: client.get(f"/v1/runs/{run_id}").raise_for_status().json()["progress"]["done"]  # noqa: E731
    wait_until(lambda: done() >= 8, 90, "the first verdicts")

    os.kill(first, signal.SIGKILL)

    # Said while it is away: a worker whose engine is down, in the status and as passk_engine_up 0.
    engines_down, lines = wait_until(
        lambda: (f := _engine_figures(client))[0] == 1 and f, 30, "/v1/status to say the engine is down", poll_s=0.2
    )
    assert lines.endswith(" 0.0") and len(lines.splitlines()) == 1, lines
    # Reaped by passk up: no zombie holds the PID (and so the pid file) of the dead engine.
    wait_until(lambda: (p := _process(first)) is None or p[2] != up_pid, 10, "the dead engine to be reaped")

    second = wait_until(lambda: (pid := up.engine_pid()) != first and pid, 120, "a new engine", poll_s=0.3)
    up.engine_pids.add(second)
    assert _process(second) is not None and _process(second)[0] == "dockerd" and _process(second)[2] == up_pid
    run = wait_for_run(client, run_id, timeout_s=240)
    assert run["status"] == "completed", (run, up.log_tail())
    # Every sample exactly once with its true verdict, no sandbox_error among them, pass@1 the pass rate.
    rows = _assert_true_verdicts(client, run_id, expected)
    attempts = [row["attempts"] for row in rows]
    # Killed mid-run: the samples its sandboxes were running went back to the queue and passed on their retry.
    assert set(attempts) <= {1, 2} and 2 in attempts, attempts
    wait_until(lambda: (f := _engine_figures(client))[0] == 0 and f[1].endswith(" 1.0"), 30, "the engine up again")
    status = client.get("/v1/status").raise_for_status().json()
    assert status["sandbox_errors"]["total"] == 0 and status["queue"]["queued"] == 0, status
    assert up.process.poll() is None, up.log_tail()
