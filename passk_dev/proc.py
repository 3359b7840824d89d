"""CPU seconds of host processes, from /proc (Linux), for the benches' "where did the CPU go" figures."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import NamedTuple

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


class Usage(NamedTuple):
    """A process's CPU seconds in user space and in the kernel, its own and its reaped children's, and the minor
    page faults of each."""

    user: float
    system: float
    reaped_user: float
    reaped_system: float
    faults: int
    reaped_faults: int


def usage(pid: int) -> Usage:
    fields = _stat(pid)
    return Usage(*(int(fields[i]) / _TICKS for i in (11, 12, 13, 14)), int(fields[7]), int(fields[8]))


def children(pid: int) -> list[int]:
    """The live children of a process (of its main thread)."""
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def real_uid(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])


def sandbox_helpers(supervisor: int) -> dict[str, int]:
    """A sandbox container's two long-lived helpers by role, given its PID 1 (host pid): PID 1's children that run
    as root, forked in this order: the zygote, then the judge template (a judge runs as its own uid)."""
    helpers = sorted(child for child in children(supervisor) if real_uid(child) == 0)
    return dict(zip(("zygote", "judge template"), helpers))


def cow_fault_us(pages: int = 16384, repeats: int = 5) -> float:
    """CPU microseconds of one copy-on-write page fault on this machine (median of `repeats`): a forked child
    writes one byte into each of `pages` pages it shares with its parent, less the same writes again (the pages
    are its own by then). Small pages only (transparent huge pages refused), as a forked interpreter's heap."""
    import mmap
    import statistics
    import struct

    size = pages * mmap.PAGESIZE
    area = mmap.mmap(-1, size)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):
        area.madvise(mmap.MADV_NOHUGEPAGE)
    view = memoryview(area)
    view[::mmap.PAGESIZE] = b"\1" * pages  # resident in the parent
    costs = []
    for _ in range(repeats):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                first = time.process_time()
                view[::mmap.PAGESIZE] = b"\2" * pages  # each write a copy-on-write fault
                second = time.process_time()
                view[::mmap.PAGESIZE] = b"\3" * pages  # the same writes, without faults
                third = time.process_time()
                os.write(write, struct.pack("=d", (second - first) - (third - second)))
            finally:
                os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as answer:
            (spent,) = struct.unpack("=d", answer.read())
        os.waitpid(pid, 0)
        costs.append(spent / pages * 1e6)
    view.release()
    area.close()
    return statistics.median(costs)
