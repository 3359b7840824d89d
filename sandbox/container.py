"""One hardened sandbox container and the framed conversation with its supervisor."""

from __future__ import annotations

import json
import logging
import os
import socket
import struct
import time
import uuid
from dataclasses import dataclass
from typing import Any

import docker
import requests
from docker.errors import DockerException, NotFound
from docker.types import LogConfig, Ulimit

from sandbox.runtime.job import Frame
from sandbox.runtime.process import BASE_ENVIRONMENT

log = logging.getLogger(__name__)

LABEL_ROLE = "passk.role"
ROLE_SANDBOX = "sandbox"
LABEL_OWNER = "passk.owner"
LABEL_CREATED = "passk.created"
# PID 1 starts as root with only these capabilities: it drops every other process to one of two
# unprivileged uids (sandbox/runtime/process.py), with an empty bounding set.
SUPERVISOR_USER = "0:0"
SUPERVISOR_CAPABILITIES = ["SETUID", "SETGID", "SETPCAP"]
# The container's memory cgroup is the program's limit plus this, for PID 1, its helpers (the zygote, the judge
# template) and the judge: the limit then holds for the program's whole process tree (and its files in /tmp and
# /dev/shm).
SUPERVISOR_HEADROOM_BYTES = 40 * 1024 * 1024
STDERR_KEEP = 8192
# What a call to the engine can raise when the engine itself is gone or restarting.
ENGINE_ERRORS = (DockerException, requests.RequestException, OSError)
# The supervisor retires itself after an hour (MAX_CONTAINER_SECONDS); anything older is a leftover.
MAX_CONTAINER_AGE_S = 3600 + 600


# Docker's default weight, kept: on a cgroup-v1/cgroupfs host (this one) a lower weight ranks sandboxes
# only against other containers, not against the API (a host process), so it cannot buy the API time there;
# where containers are systemd scopes beside the API's and database's services (cgroup v2), 256 would.
SANDBOX_CPU_SHARES = 1024


@dataclass(frozen=True)
class ContainerConfig:
    """Container-wide limits; per-program limits travel with each job."""

    image: str
    memory_bytes: int  # the per-program memory limit this container serves
    cpus: float = 1.0
    pids: int = 64
    scratch_bytes: int = 64 * 1024 * 1024
    owner: str = "passk"
    # Compiled languages: /tmp (the scratch directories) allows exec, and a compile cache of this size is
    # mounted at /var/cache/passk, owned by the judge's uid (sandbox/runtime/builds.py). 0: none (Python).
    exec_scratch: bool = False
    cache_bytes: int = 0
    # Relative CPU weight under contention against sibling cgroups (see SANDBOX_CPU_SHARES).
    cpu_shares: int = SANDBOX_CPU_SHARES
    # Docker's cgroup_parent (sandbox/cgroups.py makes one at a low weight); None: the engine's default.
    cgroup_parent: str | None = None


class ContainerBroken(RuntimeError):
    """The container stopped answering or died; `oom_killed` says whether memory was why."""

    def __init__(self, message: str, oom_killed: bool = False) -> None:
        super().__init__(message)
        self.oom_killed = oom_killed


class SandboxContainer:
    """A started container whose PID 1 is the supervisor, with an attached stdin/stdout socket."""

    def __init__(self, client: docker.DockerClient, config: ContainerConfig) -> None:
        self.client = client
        self.config = config
        self.name = f"passk-sbx-{uuid.uuid4().hex[:12]}"
        self.container: Any = None
        self._sock: socket.socket | None = None
        self._buffer = b""
        self._stdout_lines: list[bytes] = []
        self._partial_line = b""
        self.stderr_tail = b""

    # -- life cycle

    def start(self, ready_timeout: float = 30.0) -> None:
        cfg = self.config
        self.container = self.client.containers.create(
            cfg.image,
            name=self.name,
            labels={LABEL_ROLE: ROLE_SANDBOX, LABEL_OWNER: cfg.owner, LABEL_CREATED: str(int(time.time()))},
            user=SUPERVISOR_USER,
            network_mode="none",
            read_only=True,
            tmpfs=_tmpfs(cfg),
            shm_size=cfg.scratch_bytes,
            mem_limit=cfg.memory_bytes + cfg.cache_bytes + SUPERVISOR_HEADROOM_BYTES,
            memswap_limit=cfg.memory_bytes + cfg.cache_bytes + SUPERVISOR_HEADROOM_BYTES,
            pids_limit=cfg.pids,
            nano_cpus=int(cfg.cpus * 1e9),
            cpu_shares=cfg.cpu_shares,
            cgroup_parent=cfg.cgroup_parent,
            cap_drop=["ALL"],
            cap_add=SUPERVISOR_CAPABILITIES,
            # System V shared memory dies with the last process attached to it (and passk removes every
            # IPC object after each program in any case).
            sysctls={"kernel.shm_rmid_forced": "1"},
            security_opt=["no-new-privileges"],
            ulimits=[Ulimit(name="nofile", soft=1024, hard=1024), Ulimit(name="core", soft=0, hard=0)],
            # The programs' locale for PID 1's own interpreter too, whatever the base image sets: processes forked
            # from it (judges, candidates, /run_code's warm programs) then start as `python3` under that locale
            # would (without it, a C locale puts the interpreter in UTF-8 mode, and `open()` names its encoding
            # `utf-8` where a program's own `python3` says `UTF-8`).
            environment={"LANG": BASE_ENVIRONMENT["LANG"]},
            stdin_open=True,  # with detach=False the SDK also sets StdinOnce: EOF when we hang up
            detach=False,
            tty=False,
            hostname="sandbox",
            log_config=LogConfig(type=LogConfig.types.NONE),
            # PID 1 ignores SIGTERM by design (programs must not be able to stop it), and nothing in a
            # sandbox needs a graceful end: `docker stop` (an operator, a compose down) kills at once.
            stop_signal="SIGKILL",
        )
        attached = self.client.api.attach_socket(
            self.container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        )
        self._sock = getattr(attached, "_sock", attached)
        self._attached = attached  # keeps the HTTP response (and so the socket) alive
        self.container.start()
        message = self.read_message(time.monotonic() + ready_timeout)
        if message.get("type") != "ready":
            raise ContainerBroken(f"supervisor did not report ready: {message!r}")

    def close(self) -> None:
        """Kill and remove the container; safe to call twice and on a half-started one."""
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None
        if self.container is not None:
            try:
                self.container.remove(force=True)
            except NotFound:
                pass
            except ENGINE_ERRORS as exc:
                log.warning("could not remove %s: %s (the sweeper will)", self.name, exc)
            self.container = None

    def oom_killed(self) -> bool:
        try:
            self.container.reload()
            return bool(self.container.attrs["State"].get("OOMKilled"))
        except (*ENGINE_ERRORS, AttributeError):
            return False

    # -- conversation

    def send_frame(self, frame: Frame) -> None:
        body = frame.to_json()
        assert self._sock is not None
        try:
            self._sock.sendall(str(len(body)).encode() + b"\n" + body)
        except OSError as exc:
            raise ContainerBroken(f"could not send to the supervisor: {exc}") from exc

    def read_message(self, deadline: float) -> dict[str, Any]:
        """The next JSON line the supervisor wrote on stdout, or ContainerBroken."""
        while not self._stdout_lines:
            stream, payload = self._read_frame(deadline)
            if stream == 1:
                lines = (self._partial_line + payload).split(b"\n")
                self._partial_line = lines.pop()
                self._stdout_lines.extend(line for line in lines if line)
            else:
                self.stderr_tail = (self.stderr_tail + payload)[-STDERR_KEEP:]
        line = self._stdout_lines.pop(0)
        try:
            return json.loads(line)
        except json.JSONDecodeError as exc:
            raise ContainerBroken(f"garbled supervisor output: {line[:200]!r}") from exc

    def _read_frame(self, deadline: float) -> tuple[int, bytes]:
        header = self._read_exactly(8, deadline)
        stream, size = struct.unpack(">BxxxL", header)
        return stream, self._read_exactly(size, deadline)

    def _read_exactly(self, size: int, deadline: float) -> bytes:
        assert self._sock is not None
        while len(self._buffer) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ContainerBroken("the supervisor did not answer in time (host-side deadline)")
            self._sock.settimeout(remaining)
            try:
                chunk = self._sock.recv(1 << 16)
            except socket.timeout:
                continue
            except OSError as exc:
                raise ContainerBroken(f"lost the container's stream: {exc}") from exc
            if not chunk:
                tail = self.stderr_tail.decode("utf-8", "replace")[-500:]
                raise ContainerBroken(f"container exited unexpectedly{': ' + tail if tail else ''}")
            self._buffer += chunk
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data


def _tmpfs(cfg: ContainerConfig) -> dict[str, str]:
    mounts = {"/tmp": f"size={cfg.scratch_bytes},mode=1777,{'exec' if cfg.exec_scratch else 'noexec'},nosuid,nodev"}
    if cfg.cache_bytes:
        # The judge's uid's; traversable but not listable by others: bin/ (0700) holds compiled programs, pch/
        # (0711) precompiled headers the candidate's compiler reads (sandbox/runtime/builds.py).
        mounts["/var/cache/passk"] = f"size={cfg.cache_bytes},mode=0711,uid=10002,gid=10002,noexec,nosuid,nodev"
    return mounts


def listed_labels(container: docker.models.containers.Container) -> dict[str, str]:
    """The labels of a container from a sparse list (`container.labels` needs a full inspect)."""
    return container.attrs.get("Labels") or {}


def sweep(client: docker.DockerClient, max_age_s: float) -> int:
    """Remove sandbox containers that have exited or outlived any batch: leftovers of crashed workers."""
    removed = 0
    now = time.time()
    # Sparse: the list's own labels and state, with no inspect per container (another worker's sweep may remove
    # one between the list and an inspect, which would raise NotFound here).
    for container in client.containers.list(all=True, sparse=True, filters={"label": f"{LABEL_ROLE}={ROLE_SANDBOX}"}):
        labels = listed_labels(container)
        created = float(labels.get(LABEL_CREATED, "0") or 0)
        # A worker killed between create and start leaves a "created" one: remove it at once if its owner
        # is a dead process on this host, otherwise give a possibly live owner a minute to start it.
        owner_dead = _owner_is_dead(labels.get(LABEL_OWNER, ""))
        stale_created = container.status == "created" and (owner_dead or now - created > 60)
        if container.status in {"exited", "dead"} or stale_created or now - created > max_age_s:
            try:
                container.remove(force=True)
                removed += 1
            except ENGINE_ERRORS:
                pass
    return removed


def pid_space() -> str:
    """This host and PID namespace. A PID means something only inside its namespace: workers in
    containers can share a hostname (host networking) while each is PID 1 of its own."""
    try:
        namespace = os.readlink("/proc/self/ns/pid").rpartition("[")[2].rstrip("]")
    except OSError:
        namespace = "?"
    return f"{socket.gethostname()}.pidns{namespace}"


def owner_id() -> str:
    """`<host.pidns>-<pid>-<token>`: enough for a sweeper in the same PID space to tell whether the owner lives."""
    return f"{pid_space()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def _owner_is_dead(owner: str) -> bool:
    parts = owner.rsplit("-", 2)
    if len(parts) != 3 or parts[0] != pid_space() or not parts[1].isdigit():
        return False  # another host's or container's worker (or an unknown label): only age can tell
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
