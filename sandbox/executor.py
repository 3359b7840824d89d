"""Run batches of programs in reusable sandbox containers and return one outcome per program.

A container serves batch after batch until its supervisor retires it (a
program hit a limit, crashed or left something behind) or it breaks; then it is
thrown away and the rest of the batch goes to a fresh one. Infrastructure
failures end as `sandbox_error`, never as a verdict against the program.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import docker

from sandbox.container import (
    ENGINE_ERRORS,
    ContainerBroken,
    ContainerConfig,
    SandboxContainer,
)
from sandbox.verdicts import Verdict

log = logging.getLogger(__name__)

# Host-side backstop on top of the supervisor's own wall-clock limit.
HOST_GRACE_S = 5.0


@dataclass(frozen=True)
class Job:
    id: str
    program: str
    time_limit_s: float
    memory_bytes: int
    # True: `program` calls one of passk's judges (sandbox/runtime), which runs the tests and starts the
    # candidate's code in processes of its own. False (passk's own sandbox tests only): `program` runs as
    # one process of the candidate's uid and passes by running to its end.
    judged: bool = False


@dataclass
class Outcome:
    id: str
    verdict: Verdict
    detail: str | None = None
    exit_code: int | None = None
    signal: int | None = None
    duration_ms: float | None = None
    cpu_ms: float | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    leftover_processes: bool = False
    # For timeouts: "cpu" (the program's own CPU time; independent of load) or "wall" (may be load).
    timeout_kind: str | None = None

    @classmethod
    def from_supervisor(cls, message: dict[str, Any]) -> Outcome:
        return cls(
            id=message["id"],
            verdict=Verdict(message["verdict"]),
            detail=message.get("detail"),
            exit_code=message.get("exit_code"),
            signal=message.get("signal"),
            duration_ms=message.get("duration_ms"),
            cpu_ms=message.get("cpu_ms"),
            stdout=message.get("stdout", ""),
            stderr=message.get("stderr", ""),
            stdout_truncated=bool(message.get("stdout_truncated")),
            stderr_truncated=bool(message.get("stderr_truncated")),
            leftover_processes=bool(message.get("leftover_processes")),
            timeout_kind=message.get("timeout_kind"),
        )


@dataclass
class SandboxSettings:
    image: str
    cpus: float = 1.0
    pids: int = 64
    scratch_bytes: int = 64 * 1024 * 1024
    excerpt_bytes: int = 4096
    # Wall-clock backstop inside the container: time_limit * wall_factor + 1 s.
    wall_factor: float = 2.0
    owner: str = "passk"
    # How often one program may break a container before it is given up as our fault.
    max_breaks_per_job: int = 2
    stats: dict[str, int] = field(default_factory=lambda: {"containers": 0, "retired": 0, "broken": 0})


class Sandbox:
    """What a worker thread holds: at most one live container, reused while it is healthy."""

    def __init__(self, client: docker.DockerClient, settings: SandboxSettings) -> None:
        self.client = client
        self.settings = settings
        self._container: SandboxContainer | None = None

    def close(self) -> None:
        if self._container is not None:
            self._container.close()
            self._container = None

    def run(self, jobs: list[Job]) -> list[Outcome]:
        """Run every job; the result list is in the same order as `jobs`."""
        outcomes: dict[str, Outcome] = {}
        breaks: dict[str, int] = {}
        pending = list(jobs)
        solo: Job | None = None  # after a break, the suspect runs alone
        while pending:
            # A container's memory cgroup is sized to one limit: jobs with another wait for their own.
            memory_bytes = pending[0].memory_bytes
            try:
                container = self._container_for(memory_bytes)
            except (*ENGINE_ERRORS, ContainerBroken) as exc:
                log.error("could not start a sandbox container: %s", exc)
                for job in pending:
                    if job.memory_bytes == memory_bytes:
                        outcomes[job.id] = _sandbox_error(job, f"could not start a sandbox container: {exc}")
                pending = [job for job in pending if job.id not in outcomes]
                continue
            batch = [solo] if solo is not None else [job for job in pending if job.memory_bytes == memory_bytes]
            solo = None
            try:
                retired = self._converse(container, batch, outcomes)
            except ContainerBroken as exc:
                self.settings.stats["broken"] += 1
                suspect = next((job for job in batch if job.id not in outcomes), None)
                oom = exc.oom_killed or container.oom_killed()
                self.close()
                if suspect is None:
                    pass  # every result was in before it broke
                elif oom:
                    outcomes[suspect.id] = Outcome(suspect.id, Verdict.MEMORY, "the container ran out of memory while running this program")
                else:
                    breaks[suspect.id] = breaks.get(suspect.id, 0) + 1
                    if breaks[suspect.id] >= self.settings.max_breaks_per_job:
                        outcomes[suspect.id] = _sandbox_error(suspect, f"sandbox broke {breaks[suspect.id]} times: {exc}")
                    else:
                        # Run the suspect alone next time, so a second break is unambiguous.
                        solo = suspect
                pending = [job for job in pending if job.id not in outcomes]
                continue
            if retired:
                self.settings.stats["retired"] += 1
                self.close()
            pending = [job for job in pending if job.id not in outcomes]
        return [outcomes[job.id] for job in jobs]

    def _container_for(self, memory_bytes: int) -> SandboxContainer:
        current = self._container
        if current is not None and current.config.memory_bytes == memory_bytes:
            return current
        self.close()
        cfg = self.settings
        container = SandboxContainer(
            self.client,
            ContainerConfig(
                image=cfg.image, memory_bytes=memory_bytes, cpus=cfg.cpus, pids=cfg.pids,
                scratch_bytes=cfg.scratch_bytes, owner=cfg.owner,
            ),
        )
        try:
            container.start()
        except BaseException:
            container.close()
            raise
        self.settings.stats["containers"] += 1
        self._container = container
        return container

    def _converse(self, container: SandboxContainer, batch: list[Job], outcomes: dict[str, Outcome]) -> bool:
        """Send one frame and collect results until batch_done (False) or retire (True)."""
        cfg = self.settings
        container.send_frame(
            {
                "jobs": [
                    {
                        "id": job.id, "program": job.program, "time_limit_s": job.time_limit_s,
                        "memory_bytes": job.memory_bytes, "judged": job.judged,
                    }
                    for job in batch
                ],
                "cpus": cfg.cpus,
                "scratch_bytes": cfg.scratch_bytes,
                "excerpt_bytes": cfg.excerpt_bytes,
                "wall_factor": cfg.wall_factor,
            }
        )
        expected = {job.id: job for job in batch}
        for job in batch:
            # Results arrive in order, so each program gets its own host-side deadline.
            deadline = time.monotonic() + job.time_limit_s * cfg.wall_factor + 1.0 + HOST_GRACE_S
            message = container.read_message(deadline)
            kind = message.get("type")
            if kind == "retire":
                log.debug("container retired: %s", message.get("reason"))
                return True
            if kind != "result" or message.get("id") not in expected:
                raise ContainerBroken(f"unexpected supervisor message: {message!r}")
            outcomes[message["id"]] = Outcome.from_supervisor(message)
        message = container.read_message(time.monotonic() + HOST_GRACE_S)
        if message.get("type") == "retire":
            log.debug("container retired: %s", message.get("reason"))
            return True
        if message.get("type") != "batch_done":
            raise ContainerBroken(f"unexpected supervisor message: {message!r}")
        return False


def _sandbox_error(job: Job, detail: str) -> Outcome:
    return Outcome(job.id, Verdict.SANDBOX_ERROR, detail)
