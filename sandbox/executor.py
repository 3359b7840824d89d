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
from collections.abc import Callable
from typing import Any

import docker

from sandbox import languages
from sandbox.container import (
    SANDBOX_CPU_SHARES,
    ContainerBroken,
    ContainerConfig,
    SandboxContainer,
)
from sandbox.runtime.builds import STATS as BUILD_STATS
from sandbox.runtime.report import FLAGS
from sandbox.runtime.job import (
    DEFAULT_CPUS,
    DEFAULT_EXCERPT_BYTES,
    DEFAULT_SCRATCH_BYTES,
    DEFAULT_WALL_FACTOR,
    Frame,
    Job,
    budget_s,
)
from sandbox.verdicts import Verdict

__all__ = ["Job", "Outcome", "Sandbox", "SandboxSettings"]

log = logging.getLogger(__name__)

# Host-side backstop on top of the supervisor's own wall-clock limit.
HOST_GRACE_S = 5.0


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
    # Compiled languages: whether the compile came from the container's compile cache, and how long it took.
    compile_cached: bool | None = None
    compile_ms: float | None = None
    # How a precompiled header served the compile: "prebuilt" (from the image), "hit", "built", "rejected" (by
    # g++), or None (not used).
    pch: str | None = None
    # What failed, as the judge recorded it (runtime/failure.py), and the reward-hack flags (runtime/report.py).
    failure: dict[str, Any] | None = None
    flags: tuple[str, ...] = ()

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
            compile_cached=message.get("compile_cached"),
            compile_ms=message.get("compile_ms"),
            pch=message.get("pch"),
            failure=message.get("failure") if isinstance(message.get("failure"), dict) else None,
            flags=tuple(flag for flag in message.get("flags") or () if flag in FLAGS),
        )


@dataclass
class SandboxSettings:
    image: str
    cpus: float = DEFAULT_CPUS
    pids: int = 64
    scratch_bytes: int = DEFAULT_SCRATCH_BYTES
    excerpt_bytes: int = DEFAULT_EXCERPT_BYTES
    # Wall-clock backstop inside the container: time_limit * wall_factor + 1 s (sandbox/runtime/job.py).
    wall_factor: float = DEFAULT_WALL_FACTOR
    owner: str = "passk"
    # How often one program may break a container before it is given up as our fault.
    max_breaks_per_job: int = 2
    stats: dict[str, int] = field(
        default_factory=lambda: {"containers": 0, "retired": 0, "broken": 0, **dict.fromkeys(BUILD_STATS, 0)}
    )
    # The image of a language other than Python (built on demand); None: every job runs in `image`.
    images: Callable[[str], str] | None = None
    # Size of the per-container compile cache of compiled languages (/var/cache/passk).
    compile_cache_bytes: int = 64 * 1024 * 1024
    # Relative CPU weight of the containers (Docker's cpu_shares; the worker passes its setting).
    cpu_shares: int = SANDBOX_CPU_SHARES
    # Docker's cgroup_parent for the containers (see sandbox/cgroups.py); None: the engine's default.
    cgroup_parent: str | None = None
    # The core this sandbox's containers run their programs on (Frame.core) when a run asks for it; None: any.
    core: int | None = None


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

    def forget(self) -> None:
        """Drop the live container without removing it (when the engine cannot be asked): the sweep removes it."""
        self._container = None

    @property
    def container_id(self) -> str | None:
        """The engine's id of the live container, None when there is none."""
        return self._container.container.id if self._container is not None else None

    @property
    def container_name(self) -> str | None:
        """The name of the live container, None when there is none."""
        return self._container.name if self._container is not None else None

    def run(self, jobs: list[Job], pinned: bool = True) -> list[Outcome]:
        """Run every job; the result list is in the same order as `jobs`. Unless `pinned` is False, on the
        sandbox's core (SandboxSettings.core)."""
        outcomes: dict[str, Outcome] = {}
        breaks: dict[str, int] = {}
        pending = list(jobs)
        solo: Job | None = None  # after a break, the suspect runs alone
        while pending:
            # A container's memory cgroup is sized to one limit, and its image is one language's: jobs with
            # another wait for their own.
            group = _group(pending[0])
            try:
                container = self._container_for(pending[0])
            except Exception as exc:  # the engine, a broken container, or a language image that failed to build
                log.error("could not start a sandbox container: %s", exc)
                for job in pending:
                    if _group(job) == group:
                        outcomes[job.id] = _sandbox_error(job, f"could not start a sandbox container: {exc}")
                pending = [job for job in pending if job.id not in outcomes]
                continue
            batch = [solo] if solo is not None else [job for job in pending if _group(job) == group]
            solo = None
            try:
                retired = self._converse(container, batch, outcomes, self.settings.core if pinned else None)
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

    def _container_for(self, job: Job) -> SandboxContainer:
        cfg = self.settings
        image = cfg.image
        if languages.get(job.language).own_image:  # Python's jobs, /run_code's too, run in the sandbox image
            if cfg.images is None:
                raise RuntimeError(f"no image for language {job.language!r}: the sandbox has no image resolver")
            image = cfg.images(job.language)
        spec = job.native
        wanted = ContainerConfig(
            image=image, memory_bytes=job.container_memory_bytes, cpus=cfg.cpus,
            pids=max(cfg.pids, spec.pids if spec is not None else 0),
            scratch_bytes=cfg.scratch_bytes, owner=cfg.owner,
            exec_scratch=spec is not None,
            cache_bytes=max(cfg.compile_cache_bytes, spec.cache_bytes) if spec is not None and spec.compiled else 0,
            cpu_shares=cfg.cpu_shares, cgroup_parent=cfg.cgroup_parent,
        )
        current = self._container
        if current is not None and current.config == wanted:
            return current
        self.close()
        container = SandboxContainer(self.client, wanted)
        try:
            container.start()
        except BaseException:
            container.close()
            raise
        self.settings.stats["containers"] += 1
        self._container = container
        return container

    def _converse(self, container: SandboxContainer, batch: list[Job], outcomes: dict[str, Outcome],
                  core: int | None) -> bool:
        """Send one frame and collect results until batch_done (False) or retire (True)."""
        cfg = self.settings
        container.send_frame(Frame(jobs=batch, cpus=cfg.cpus, scratch_bytes=cfg.scratch_bytes,
                                   excerpt_bytes=cfg.excerpt_bytes, wall_factor=cfg.wall_factor, core=core))
        expected = {job.id: job for job in batch}
        for job in batch:
            # Results arrive in order, so each program gets its own host-side deadline.
            deadline = time.monotonic() + budget_s(job, cfg.wall_factor) + HOST_GRACE_S
            message = container.read_message(deadline)
            kind = message.get("type")
            if kind == "retire":
                log.debug("container retired: %s", message.get("reason"))
                return True
            if kind != "result" or message.get("id") not in expected:
                raise ContainerBroken(f"unexpected supervisor message: {message!r}")
            outcome = Outcome.from_supervisor(message)
            if outcome.compile_cached is not None:
                cfg.stats["compiles"] += 1
                cfg.stats["compile_hits"] += int(outcome.compile_cached)
            if outcome.pch is not None:
                key = {"hit": "pch_hits", "built": "pch_builds", "prebuilt": "pch_prebuilt"}.get(outcome.pch, "pch_rejected")
                cfg.stats[key] = cfg.stats.get(key, 0) + 1
            outcomes[message["id"]] = outcome
        message = container.read_message(time.monotonic() + HOST_GRACE_S)
        if message.get("type") == "retire":
            log.debug("container retired: %s", message.get("reason"))
            return True
        if message.get("type") != "batch_done":
            raise ContainerBroken(f"unexpected supervisor message: {message!r}")
        return False


def _group(job: Job) -> tuple[str, int]:
    return job.language, job.container_memory_bytes


def _sandbox_error(job: Job, detail: str) -> Outcome:
    return Outcome(job.id, Verdict.SANDBOX_ERROR, detail)
