"""Finding, and on a bare root machine installing, starting and keeping up, the Docker engine.

`passk up` on a root machine with no engine answering starts `dockerd` itself (an EmbeddedEngine) and owns
it: if the engine dies (an operator's `kill -9`, the OOM killer), `supervise` reaps it, so no zombie holds its
PID, removes the pid file it left only when that PID is no longer a live dockerd, and starts it again with
back-off. Workers notice the engine away on their own (service/worker/runner.py) and claim nothing meanwhile.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path

import docker
from docker.errors import DockerException
from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_delay, wait_exponential, wait_fixed

log = logging.getLogger(__name__)

# The machine's own engine: where a plain `dockerd` keeps its pid file.
DEFAULT_PIDFILE = Path("/var/run/docker.pid")
# Longest pause between two restarts of an engine that keeps dying.
RESTART_BACKOFF_MAX_S = 60.0


class EngineUnavailable(RuntimeError):
    pass


def host_under(root: Path) -> str:
    """The DOCKER_HOST of the engine kept under `root` (Settings.engine_root)."""
    return f"unix://{root}/docker.sock"


def connect(timeout: float = 120.0, base_url: str | None = None) -> docker.DockerClient:
    """A client for a live engine (base_url, else DOCKER_HOST or the local socket); raises if none answers."""
    try:
        if base_url:
            client = docker.DockerClient(base_url=base_url, timeout=timeout)
        else:
            client = docker.from_env(timeout=timeout)
        client.ping()
        return client
    except DockerException as exc:
        raise EngineUnavailable(f"no Docker engine answers: {exc}") from exc


class EmbeddedEngine:
    """A `dockerd` that passk starts. With a root directory it lives beside the machine's own engine:
    its data, exec state, socket and pid file are all under that root, and it has no bridge network
    (sandboxes have no network) so it cannot clash with the machine's."""

    def __init__(self, log_dir: Path, root: Path | None = None, backoff_s: float = 1.0) -> None:
        self.log_path = log_dir / "dockerd.log"
        self.root = root
        self.backoff_s = backoff_s
        self.pidfile = root / "docker.pid" if root else DEFAULT_PIDFILE
        self.host = host_under(root) if root else None
        self.process: subprocess.Popen | None = None
        self.restarts = 0
        # Set while the engine answers; cleared from its death until it answers again.
        self.up = threading.Event()
        self._stopping = threading.Event()

    def command(self) -> list[str]:
        if self.root is None:
            return ["dockerd"]
        return [
            "dockerd", "--data-root", str(self.root / "data"), "--exec-root", str(self.root / "exec"),
            "--host", str(self.host), "--pidfile", str(self.pidfile),
            "--bridge=none", "--iptables=false", "--ip-masq=false",
        ]

    def client(self, timeout: float = 120.0) -> docker.DockerClient:
        return connect(timeout, self.host)

    def start(self, wait_s: float = 60.0, die_with_parent: bool = False) -> docker.DockerClient:
        """Start dockerd and wait until it answers; raises EngineUnavailable (the process reaped) if it does not."""
        self._remove_stale_pidfile()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        if self.root is not None:
            self.root.mkdir(parents=True, exist_ok=True)
        log.warning("starting dockerd (log: %s)", self.log_path)
        with open(self.log_path, "ab") as out:
            self.process = subprocess.Popen(
                self.command(), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                preexec_fn=_terminate_with_parent if die_with_parent else None,
            )
        process = self.process

        def answers() -> docker.DockerClient:
            if process.poll() is not None:  # reaped by poll(): give up at once, no zombie left
                raise _Exited(f"dockerd exited with status {process.returncode}")
            return self.client()

        retrying = Retrying(
            retry=retry_if_exception_type(EngineUnavailable), stop=stop_after_delay(wait_s), wait=wait_fixed(0.5)
        )
        try:
            client = retrying(answers)
        except (RetryError, _Exited) as exc:
            self._end_process()
            tail = self.log_path.read_text(errors="replace")[-2000:]
            reason = exc if isinstance(exc, _Exited) else f"dockerd did not come up within {wait_s:.0f} s"
            raise EngineUnavailable(f"{reason}; log tail:\n{tail}") from None
        self.up.set()
        return client

    def supervise(self) -> None:
        """Until stop(): wait for the engine to exit (which reaps it), then start it again with back-off.

        Run in a thread of the process that started the engine: only the parent can reap its child.
        """
        while not self._stopping.is_set():
            process = self.process
            if process is None:
                return
            status = process.wait()
            if self._stopping.is_set():
                return
            self.up.clear()
            log.error("the Docker engine (pid %d) exited with status %d: starting it again", process.pid, status)
            retrying = Retrying(
                retry=retry_if_exception_type(EngineUnavailable),
                stop=lambda _state: self._stopping.is_set(),
                wait=wait_exponential(multiplier=self.backoff_s, min=self.backoff_s, max=RESTART_BACKOFF_MAX_S),
                before_sleep=lambda state: log.error(
                    "the Docker engine did not come back (%s); next try in %.0f s",
                    state.outcome.exception() if state.outcome else None,
                    state.next_action.sleep if state.next_action else 0,
                ),
                sleep=self._stopping.wait,
                reraise=True,
            )
            # The first start also waits one back-off: an engine that dies at once is not restarted in a loop.
            if self._stopping.wait(self.backoff_s):
                return
            try:
                retrying(self.start, die_with_parent=True)
            except EngineUnavailable:
                return  # stopping
            self.restarts += 1
            log.warning("the Docker engine is back (pid %d, restart %d)", self.process.pid, self.restarts)

    def stop(self, timeout_s: float = 30.0) -> None:
        """Stop supervising, then stop the engine (SIGTERM, SIGKILL after timeout_s) and reap it."""
        self._stopping.set()
        self._end_process(timeout_s)

    def _end_process(self, timeout_s: float = 30.0) -> None:
        self.up.clear()
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _remove_stale_pidfile(self) -> None:
        """dockerd refuses to start while its pid file names a live process: remove the file only when the
        process it names is gone, a zombie, or not a dockerd (its PID reused). A live dockerd is left alone."""
        try:
            pid = int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return
        if _is_live_dockerd(pid):
            raise EngineUnavailable(f"{self.pidfile} names a live dockerd (pid {pid}) that does not answer")
        log.warning("removing %s: pid %d is no longer a running dockerd", self.pidfile, pid)
        self.pidfile.unlink(missing_ok=True)


class _Exited(EngineUnavailable):
    pass


def _is_live_dockerd(pid: int) -> bool:
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return comm == "dockerd" and state not in ("Z", "X")


def _terminate_with_parent() -> None:
    # An engine `passk up` supervises ends with it, however it ends (uvicorn may skip a `finally`).
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6").prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def start_or_connect(
    log_dir: Path, root: Path | None = None, wait_s: float = 60.0, backoff_s: float = 1.0, own: bool = False,
) -> tuple[docker.DockerClient, EmbeddedEngine | None]:
    """A live engine's client, and the EmbeddedEngine when none answered and passk started one (root only).

    With `root`, the engine is the one under that directory (started there if it does not answer). `own`:
    the engine stops when this process ends (`passk up`, which supervises it); otherwise it outlives us.
    """
    engine = EmbeddedEngine(log_dir, root, backoff_s)
    try:
        return engine.client(), None
    except EngineUnavailable as first:
        if (root is None and os.environ.get("DOCKER_HOST")) or os.geteuid() != 0:
            raise EngineUnavailable(
                f"{first}; start the Docker engine (or run as root so passk can start it)"
            ) from first
    if shutil.which("dockerd") is None:
        log.warning("dockerd not found: installing Debian's docker.io")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "docker.io"], check=True, env=env)
    return engine.start(wait_s, die_with_parent=own), engine


def ensure_engine(log_dir: Path, wait_s: float = 60.0, root: Path | None = None) -> docker.DockerClient:
    """Return a client, installing docker.io and starting dockerd first when we are root and it is missing."""
    return start_or_connect(log_dir, root, wait_s)[0]
