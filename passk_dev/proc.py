"""CPU seconds of host processes, from /proc (Linux), for the benches' "where did the CPU go" figures."""

from __future__ import annotations

import os
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int | str) -> list[str]:
    """/proc/<pid>/stat's fields after the command name: [0] state, [1] ppid, [11:13] utime, stime,
    [13:15] cutime, cstime (the reaped children's)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def parent_pid(pid: int) -> int:
    return int(_stat(pid)[1])


def process_cpu_s(pid: int | None) -> float:
    """One process's own CPU seconds (utime + stime)."""
    if pid is None:
        return 0.0
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / _TICKS


def tree_cpu_s(pid: int | None) -> float:
    """CPU seconds of a process, its reaped children (cutime + cstime) and its live children: a postmaster
    and its backends, including backends that exited meanwhile."""
    if pid is None:
        return 0.0
    ticks = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat(entry.name)
        except OSError:  # gone meanwhile: its time is in its parent's cutime
            continue
        if int(entry.name) == pid:
            ticks += sum(int(f) for f in fields[11:15])
        elif int(fields[1]) == pid:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / _TICKS
