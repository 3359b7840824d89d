"""A parent cgroup for sandbox containers, at a lower CPU weight than the host's own processes.

Docker's `cpu_shares` ranks a container only against its siblings. With the cgroupfs driver every
container is a child of one `docker` cgroup, so a lower `cpu_shares` cannot give time to a process that
runs on the host (the API, PostgreSQL). A parent cgroup created here, beside the host's processes, with
a weight below theirs, can: under contention the scheduler gives the sandboxes, together, the share that
weight buys, and the rest to everything else. When the host is idle the weight costs the sandboxes nothing.

Supported:
- cgroup v1 with the cgroupfs driver: `/sys/fs/cgroup/cpu/<name>` with `cpu.shares`;
- cgroup v2 with the cgroupfs driver: `/sys/fs/cgroup/<name>` with `cpu.weight` (shares converted the
  way runc converts them);
- the systemd driver (a name ending in `.slice`): systemd owns the slice; set its weight there
  (`systemctl set-property <name> CPUWeight=...`). Nothing is created here.
Inside a container (the worker of docker-compose.yml) the host's hierarchy is not writable: the parent is
then left to the engine, which creates it at the default weight. There, the compose file gives the API
and the database a higher `cpu_shares` instead, since they are the sandboxes' siblings.
"""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger(__name__)

CGROUP_ROOT = Path("/sys/fs/cgroup")


def cgroup_version(root: Path = CGROUP_ROOT) -> int:
    """2 on a unified hierarchy, else 1."""
    return 2 if (root / "cgroup.controllers").exists() else 1


def shares_to_weight(shares: int) -> int:
    """cgroup v1 cpu.shares (2..262144, default 1024) to v2 cpu.weight (1..10000, default 100), as runc does."""
    return 1 + ((max(2, min(262144, shares)) - 2) * 9999) // 262142


def docker_parent(name: str) -> str:
    """The value for Docker's cgroup_parent: a systemd slice as is, a cgroupfs path from the root."""
    return name if name.endswith(".slice") else "/" + name.strip("/")


def ensure_parent(name: str, cpu_shares: int, root: Path = CGROUP_ROOT) -> Path | None:
    """Create the parent cgroup `name` (if missing) and set its CPU weight; the directory, or None if not ours.

    Returns None (with a warning) where the hierarchy cannot be written, and for systemd slices.
    """
    if name.endswith(".slice"):
        log.info("sandbox cgroup parent %s is a systemd slice: its weight is systemd's to set", name)
        return None
    relative = name.strip("/")
    if not relative or ".." in relative.split("/"):
        raise ValueError(f"not a cgroup name: {name!r}")
    if cgroup_version(root) == 2:
        directory, knob, value = root / relative, "cpu.weight", shares_to_weight(cpu_shares)
    else:
        directory, knob, value = root / "cpu" / relative, "cpu.shares", cpu_shares
    try:
        if knob == "cpu.weight":
            # The weight file exists once the root hands the cpu controller down (Docker does so to run containers).
            control = root / "cgroup.subtree_control"
            if "cpu" not in control.read_text().split():
                control.write_text("+cpu\n")
        directory.mkdir(parents=True, exist_ok=True)
        (directory / knob).write_text(f"{value}\n")
    except OSError as exc:
        log.warning("cannot set up sandbox cgroup parent %s (%s): sandboxes run at the engine's default weight",
                    directory, exc)
        return None
    log.warning("sandbox containers run under cgroup %s (%s = %d)", directory, knob, value)
    return directory
