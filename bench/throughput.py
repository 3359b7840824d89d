"""Throughput of passk against openai/human-eval's own harness, on the same machine, in one run.

    .venv/bin/python bench/throughput.py                 # all workloads
    .venv/bin/python bench/throughput.py --only passing  # one of: passing, mixed, x10, memory, metrics

Workloads (from the human-eval package, reproducible with --seed):
- distinct: the 164 canonical solutions x 20, every program text distinct (the cache never hits); also
           measured: the machine's limit for this work (see machine_limit) in the same invocation.
- passing: the 164 canonical solutions x 20 (each copy otherwise distinct by a trailing comment, a third byte-identical).
- mixed:   164 x 20 of passing, wrong-answer, exception, syntax-error and ~1% infinite-loop programs; printed
           beside it, its floor-adjusted ideal: the CPU time the loops must burn (3 s each) over the cores,
           plus the other programs at the distinct rate measured in the same invocation.
- x10:     164 x 10 of the mixed recipe (the end-to-end figure).
- memory:  worker RSS after a 1,640-sample and a 16,400-sample run (must stay flat).
- metrics: GET /metrics?k=1,10,100 on a stored run of 1,000 problems x 200 samples.
Reference: human_eval.evaluation.evaluate_functional_correctness with 2 workers and a 3 s timeout.
passk: POST dataset + run over HTTP, timed from POST /v1/runs to status `completed`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from human_eval.data import read_problems, write_jsonl  # noqa: E402
from human_eval.evaluation import evaluate_functional_correctness  # noqa: E402

from passk_dev.localstack import LocalStack, wait_for_run  # noqa: E402
from passk_dev.proc import cow_fault_us, process_cpu_s, sandbox_helpers, tree_cpu_s, usage  # noqa: E402

ENGINE_COMMANDS = ("dockerd", "containerd", "containerd-shim", "containerd-shim-runc-v2")
SANDBOX_CGROUPS = ("/sys/fs/cgroup/cpuacct/docker", "/sys/fs/cgroup/cpu,cpuacct/docker")


def make_workload(problems: dict, per_problem: int, mix: str, seed: int) -> list[dict]:
    rng = random.Random(seed)
    samples = []
    for task_id, problem in problems.items():
        for j in range(per_problem):
            roll = rng.random()
            tag = f"  # sample {j}\n"
            if mix == "distinct":
                completion = problem["canonical_solution"] + tag
            elif mix == "passing" or roll < 0.5:
                identical = rng.random() < 0.33
                completion = problem["canonical_solution"] + ("" if identical else tag)
            elif roll < 0.75:
                completion = f"    return None{tag}"
            elif roll < 0.85:
                completion = f"    raise ValueError('sample {j}')\n"
            elif roll < 0.99:
                completion = f"    return ({tag}"
            else:
                completion = f"    while True:{tag}        pass\n"
            samples.append({"task_id": task_id, "completion": completion})
    return samples


def run_reference(samples: list[dict], workdir: Path) -> tuple[float, list[bool]]:
    sample_file = workdir / "samples.jsonl"
    write_jsonl(str(sample_file), samples)
    started = time.perf_counter()
    evaluate_functional_correctness(str(sample_file), k=[1], n_workers=2, timeout=3.0)
    elapsed = time.perf_counter() - started
    with open(f"{sample_file}_results.jsonl") as handle:
        passed = [json.loads(line)["passed"] for line in handle]
    return elapsed, passed


class CpuSplit:
    """Where the machine's CPU went during passk's phase: API, Postgres, worker, the worker's sandbox containers
    (their cgroups: every process in them), the engine's daemons, and the rest (other users of the machine)."""

    # The processes inside a sandbox container, and what each one's CPU pays for. "judges" are PID 1's children
    # (the judge template forks them with CLONE_PARENT): a judged program's judge, or an unjudged one (a stdin
    # program) itself, which has no zygote-forked candidate. The judges' forks are the template's CPU.
    ROLES = {
        "supervisor": "PID 1: jobs, limits, output, clean-up, verdicts",
        "judge template": "forking the judges",
        "judges": "the tests and the call protocol, or an unjudged program itself; each one's exit",
        "zygote": "forking the candidates, the seccomp monitor",
        "candidates": "the programs, each one's exit",
    }

    def __init__(self, stack: LocalStack) -> None:
        self.stack = stack
        self.before, self.containers_before = self._read(), self._containers()
        self.roles_before = self._roles()

    def _sandboxes(self) -> list:
        """The live sandbox containers of this stack's workers (by the owner label)."""
        from sandbox.container import LABEL_OWNER
        from sandbox.engine import connect

        pids = {f"-{proc.pid}-" for proc in self.stack.workers}
        return [container for container in connect().containers.list(filters={"label": LABEL_OWNER})
                if any(pid in container.labels.get(LABEL_OWNER, "") for pid in pids)]

    def _roles(self) -> dict[tuple, tuple[float, float, int]]:
        """(user CPU seconds, kernel CPU seconds, minor page faults) by (container, process, role) inside the sandbox
        containers: the supervisor (PID 1) and the judges it reaped, the judge template, the zygote and the
        candidates it reaped (the helpers: proc.sandbox_helpers)."""
        found = {}
        for container in self._sandboxes():
            supervisor = container.attrs["State"]["Pid"]
            try:
                used = usage(supervisor)
                found[(container.id, supervisor, "supervisor")] = (used.user, used.system, used.faults)
                found[(container.id, supervisor, "judges")] = (used.reaped_user, used.reaped_system, used.reaped_faults)
                for role, child in sandbox_helpers(supervisor).items():
                    used = usage(child)
                    found[(container.id, child, role)] = (used.user, used.system, used.faults)
                    if role == "zygote":
                        found[(container.id, child, "candidates")] = (used.reaped_user, used.reaped_system,
                                                                      used.reaped_faults)
            except (OSError, StopIteration, ValueError):  # the container ended meanwhile
                continue
        return found

    def _containers(self) -> dict[str, float]:
        """CPU seconds of each live sandbox container of this stack's workers."""
        found = {}
        for container in self._sandboxes():
            for root in SANDBOX_CGROUPS:
                try:
                    found[container.id] = int(Path(root, container.id, "cpuacct.usage").read_text()) / 1e9
                    break
                except OSError:
                    continue
        return found

    def _read(self) -> dict[str, float]:
        fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        ticks = os.sysconf("SC_CLK_TCK")
        engine = 0.0
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and (entry / "comm").read_text().strip() in ENGINE_COMMANDS:
                    engine += process_cpu_s(int(entry.name))
            except OSError:
                continue
        own, busy = os.times(), (sum(fields) - fields[3] - fields[4]) / ticks
        workers = [proc.pid for proc in self.stack.workers if proc.poll() is None]
        return {"machine": busy, "docker daemons": engine, "this bench": own.user + own.system,
                "API": process_cpu_s(self.stack.api_pid), "Postgres": tree_cpu_s(self.stack.postgres_pid),
                "worker": sum(process_cpu_s(pid) for pid in workers)}

    def report(self, programs: int, wall_s: float, programs_cpu_s: float | None = None) -> dict[str, float]:
        """Prints the split (ms per program) and returns it (seconds by part). `programs_cpu_s`: the sum of the
        samples' `cpu_ms`, the container's CPU from each program's start to its end (its judge and candidate, and the
        supervisor and zygote serving them), printed as a share of the sandbox containers' CPU; the rest of theirs is
        spent between programs."""
        after, containers, roles = self._read(), self._containers(), self._roles()
        used = {name: after[name] - self.before[name] for name in after}
        used["sandbox containers"] = sum(cpu - self.containers_before.get(cid, 0.0) for cid, cpu in containers.items())
        parts = ["API", "Postgres", "worker", "sandbox containers", "docker daemons", "this bench"]
        used["rest"] = used["machine"] - sum(used[name] for name in parts)
        passk = sum(used[name] for name in parts[:5])
        print(f"CPU during passk's phase ({wall_s:.1f} s; machine busy {used['machine']:.1f} s; passk's own "
              f"{passk:.1f} s = {1000 * passk / programs:.2f} ms per program):")
        for name in [*parts, "rest"]:
            print(f"  {name:<20}{used[name]:7.1f} s  {1000 * used[name] / programs:6.2f} ms per program"
                  + ("  (other users of the machine, containers retired meanwhile)" if name == "rest" else ""))
            if name == "sandbox containers" and programs_cpu_s is not None:
                supervision = used[name] - programs_cpu_s
                print(f"    {'programs running':<18}{programs_cpu_s:7.1f} s  {1000 * programs_cpu_s / programs:6.2f} ms per "
                      "program  (start to end: judge, candidate, and the supervisor and zygote serving them)")
                print(f"    {'between programs':<18}{supervision:7.1f} s  {1000 * supervision / programs:6.2f} ms per "
                      "program  (reading jobs, resets, starting containers)")
            if name == "sandbox containers":
                used.update(self._report_roles(roles, programs))
        used["passk"] = passk
        if programs_cpu_s is not None:
            used["programs running"] = programs_cpu_s
        return used

    def _by_role(self, roles: dict) -> dict[str, tuple[float, float, int]]:
        """What each role gained over the phase (processes that started meanwhile count from zero)."""
        gained = {role: (0.0, 0.0, 0) for role in self.ROLES}
        for key, now in roles.items():
            before = self.roles_before.get(key, (0.0, 0.0, 0))
            gained[key[2]] = tuple(total + after - earlier for total, after, earlier in zip(gained[key[2]], now, before))
        return gained

    def _report_roles(self, roles: dict, programs: int) -> dict[str, float]:
        """The containers' CPU by process, in user space and in the kernel, with the minor page faults each took
        (nearly all copy-on-write: each of these processes is forked from a warm interpreter), priced at a
        copy-on-write fault measured here. Returns the processes' user and kernel seconds in all."""
        gained, fault_us = self._by_role(roles), cow_fault_us()
        print(f"    by process (containers retired meanwhile not counted; user + kernel CPU; faults: minor page faults, "
              f"{fault_us:.2f} µs each for a copy-on-write fault on this machine):")
        for role, (user, system, faults) in gained.items():
            print(f"      {role:<15}{1000 * (user + system) / programs:6.2f} ms = {1000 * user / programs:5.2f} + "
                  f"{1000 * system / programs:5.2f}  {faults / programs:6.0f} faults per program  ({self.ROLES[role]})")
        user, system = (sum(part[i] for part in gained.values()) for i in (0, 1))
        faults = sum(part[2] for part in gained.values()) / programs
        print(f"      {'faults':<15}{faults * fault_us / 1000:6.2f} ms {'':15} {faults:6.0f} faults per program in all "
              "(in the kernel's share of the rows above; at least this much: priced on a page kept hot, where "
              "bench/sandbox_faults.py measures them as the programs run)")
        return {"sandbox user": user, "sandbox kernel": system}


def run_passk(stack: LocalStack, problems: dict, samples: list[dict], name: str) -> tuple[float, list[dict]]:
    client = stack.client(timeout=300)
    dataset = client.post("/v1/datasets", json={"name": name, "problems": list(problems.values())}).raise_for_status().json()
    body = {
        "dataset_id": dataset["id"],
        "model": f"bench-{name}",
        "sampling": {"temperature": 0.8},
        "samples": [{"problem_id": s["task_id"], "completion": s["completion"]} for s in samples],
    }
    split = CpuSplit(stack)
    started = time.perf_counter()
    run = client.post("/v1/runs", json=body).raise_for_status().json()
    run = wait_for_run(client, run["id"], timeout_s=3600, poll_s=0.2)
    elapsed = time.perf_counter() - started
    assert run["status"] == "completed", run
    with stack.passk_client() as passk:
        rows = list(passk.iter_samples(run["id"]))  # in submission order
    LAST_SPLIT.update(split.report(len(samples), elapsed, sum(row.get("cpu_ms") or 0.0 for row in rows) / 1000))
    return elapsed, rows


# The CPU split of the last run_passk (seconds by part), for the per-program budget.
LAST_SPLIT: dict[str, float] = {}


def compare(name: str, stack: LocalStack, problems: dict, samples: list[dict], workdir: Path) -> float:
    """Both harnesses on the same samples; returns passk's samples/s."""
    ref_time, ref_passed = run_reference(samples, workdir)
    passk_time, rows = run_passk(stack, problems, samples, name)
    n = len(samples)
    differences = [
        (s["task_id"], row["verdict"], row["detail"], ref)
        for s, row, ref in zip(samples, rows, ref_passed, strict=True)
        if (row["verdict"] == "passed") != ref
    ]
    print(f"\n== {name}: {n} samples")
    print(f"reference human-eval : {ref_time:8.1f} s  {n / ref_time:7.1f} samples/s")
    print(f"passk over HTTP      : {passk_time:8.1f} s  {n / passk_time:7.1f} samples/s")
    print(f"speed-up             : {ref_time / passk_time:8.2f} x")
    print(f"verdict differences  : {len(differences)}")
    for task_id, verdict, detail, ref in differences[:20]:
        print(f"  {task_id}: passk={verdict} ({detail}) reference passed={ref}")
    if name == "distinct":
        print(f"target >= 3x the reference: {'met' if ref_time / passk_time >= 3 else 'MISSED'}")
    return n / passk_time


def mix_ideal(samples: list[dict], distinct_rate: float, cores: int, passk_rate: float, time_limit_s: float = 3.0) -> None:
    """The floor-adjusted ideal of a mix: the loops' CPU time over the cores plus the rest at the distinct rate."""
    loops = sum("while True:" in s["completion"] for s in samples)
    floor_s = loops * time_limit_s / cores
    ideal_s = floor_s + (len(samples) - loops) / distinct_rate
    measured_s = len(samples) / passk_rate
    print(f"floor-adjusted ideal : {ideal_s:8.1f} s  ({loops} infinite loops x {time_limit_s:.0f} s / {cores} cores = "
          f"{floor_s:.1f} s, plus {len(samples) - loops} programs at the distinct rate {distinct_rate:.1f}/s)")
    print(f"measured / ideal     : {measured_s / ideal_s:8.2f}  (target <= 1.10: "
          f"{'met' if measured_s <= 1.10 * ideal_s else 'MISSED'})")


LIMIT_SCRIPT = r"""
import json, os, resource, sys, time
programs = json.load(open(sys.argv[1]))
if sys.argv[2:] == ["as-pid-1"]:  # the loop holds what passk's PID 1 holds: its runtime and the modules it preloads
    import gc
    sys.path.insert(0, "/opt/passk")
    import passk_runtime.supervisor
    gc.freeze()
def faults():
    return sum(resource.getrusage(who).ru_minflt for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
faults_before = faults()
started = time.perf_counter()
passed = 0
for source in programs:
    read_end, write_end = os.pipe()
    judge = os.fork()
    if judge == 0:  # the judge forks the candidate, waits for it and reports one byte
        os.close(read_end)
        candidate = os.fork()
        if candidate == 0:
            try:
                exec(compile(source, "<program>", "exec"), {"__name__": "__main__"})
                code = 0
            except BaseException:
                code = 1
            os._exit(code)
        _, status = os.waitpid(candidate, 0)
        os.write(write_end, b"1" if status == 0 else b"0")
        os._exit(0)
    os.close(write_end)
    passed += os.read(read_end, 1) == b"1"
    os.close(read_end)
    os.waitpid(judge, 0)
times = os.times()
print(json.dumps({"programs": len(programs), "passed": passed, "seconds": time.perf_counter() - started,
                  "cpu_s": times.user + times.system + times.children_user + times.children_system,
                  "user_s": times.user + times.children_user,
                  "faults": faults() - faults_before}))
"""


def _limit_run(stack: LocalStack, shard_dir: Path, cores: int, *extra: str, pinned: bool = False) -> list[dict]:
    """LIMIT_SCRIPT in one container of the sandbox image per core (1 CPU each, no network; with `pinned`, each on
    a core of its own, as passk's worker places its sandboxes); each one's figures."""
    from sandbox.engine import connect

    client = connect()
    usable = sorted(os.sched_getaffinity(0))
    containers = [
        client.containers.run(
            stack.image, ["python3", "/bench/limit.py", f"/bench/shard{i}.json", *extra], entrypoint=[], user="10001:10001",
            network_mode="none", nano_cpus=1_000_000_000, detach=True, volumes={str(shard_dir): {"bind": "/bench", "mode": "ro"}},
            tmpfs={"/tmp": "size=64m"}, read_only=True, labels={"passk.role": "bench"},
            **({"cpuset_cpus": str(usable[i % len(usable)])} if pinned else {}),
        )
        for i in range(cores)
    ]
    results = []
    try:
        for container in containers:
            container.wait(timeout=3600)
            results.append(json.loads(container.logs(stdout=True, stderr=False).decode().strip().splitlines()[-1]))
    finally:
        for container in containers:
            container.remove(force=True)
    return results


def machine_limit(stack: LocalStack, problems: dict, samples: list[dict], cores: int, workdir: Path) -> float:
    """Programs/s of the bare work: in the sandbox image, one container per core (1 CPU each, no network),
    each forking a judge and a candidate per program and doing nothing else (no supervisor, no database); as the
    kernel places the containers and with each pinned to a core, the faster of the two counting.
    Measured a second time with the loop holding what passk's PID 1 holds (its runtime and the modules it
    preloads for programs, frozen): the bare work as fast as it goes when programs' imports are already loaded."""
    programs = [
        problems[s["task_id"]]["prompt"] + s["completion"] + "\n" + problems[s["task_id"]]["test"]
        + f"\ncheck({problems[s['task_id']]['entry_point']})\n"
        for s in samples
    ]
    shard_dir = workdir / "limit"
    shard_dir.mkdir(exist_ok=True)
    (shard_dir / "limit.py").write_text(LIMIT_SCRIPT)
    for i in range(cores):
        (shard_dir / f"shard{i}.json").write_text(json.dumps(programs[i::cores]))
    # Measured as the kernel places the containers and with each on a core of its own (as passk's worker pins its
    # sandboxes): the limit is the faster of the two, so pinning never makes the target easier.
    placements = {}
    for pinned in (False, True):
        run = _limit_run(stack, shard_dir, cores, pinned=pinned)
        placements[pinned] = (run, max(r["seconds"] for r in run))
        print(f"the limit {'pinned' if pinned else 'unpinned':<10} : {placements[pinned][1]:8.1f} s  "
              f"{sum(r['programs'] for r in run) / placements[pinned][1]:7.1f} programs/s")
    results, seconds = min(placements.values(), key=lambda placement: placement[1])
    total = sum(r["programs"] for r in results)
    print(f"machine limit        : {seconds:8.1f} s  {total / seconds:7.1f} programs/s "
          f"({cores} containers of 1 CPU forking a judge and a candidate per program, the faster placement; "
          f"{sum(r['passed'] for r in results)} of {total} passed)")
    limit_cpu_ms = 1000 * sum(r["cpu_s"] for r in results) / total
    limit_user_ms = 1000 * sum(r["user_s"] for r in results) / total
    print(f"the limit's faults   : {sum(r['faults'] for r in results) / total:8.0f} minor page faults per program "
          "(the loop, its judges and candidates)")
    preloaded = _limit_run(stack, shard_dir, cores, "as-pid-1")
    preloaded_s = max(r["seconds"] for r in preloaded)
    print(f"the limit as PID 1   : {preloaded_s:8.1f} s  {total / preloaded_s:7.1f} programs/s, "
          f"{1000 * sum(r['cpu_s'] for r in preloaded) / total:.2f} ms and "
          f"{sum(r['faults'] for r in preloaded) / total:.0f} faults per program (the loop holding passk's runtime and "
          "preloaded modules; not the target's limit)")
    if LAST_SPLIT:
        per = {name: 1000 * value / total for name, value in LAST_SPLIT.items()}
        print(f"CPU per program      : passk {per['passk']:.2f} ms, the limit {limit_cpu_ms:.2f} ms; passk's budget: "
              f"API {per['API']:.2f}, database {per['Postgres']:.2f}, worker {per['worker']:.2f}, "
              f"sandbox {per['sandbox containers']:.2f} (of which programs running "
              f"{per.get('programs running', float('nan')):.2f}), engine {per['docker daemons']:.2f}")
        if "sandbox user" in per:
            print(f"user + kernel        : passk's sandbox processes {per['sandbox user']:.2f} + "
                  f"{per['sandbox kernel']:.2f} ms per program, the limit's {limit_user_ms:.2f} + "
                  f"{limit_cpu_ms - limit_user_ms:.2f} ms")
    return total / seconds


def worker_rss_mib(stack: LocalStack) -> float:
    """Resident memory of the worker processes (MiB), from /proc."""
    total = 0
    for proc in stack.workers:
        with open(f"/proc/{proc.pid}/status") as handle:
            total += next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:"))
    return total / 1024


def bench_memory(stack: LocalStack, problems: dict, seed: int) -> None:
    """Worker memory must not grow with run size: RSS after a small run and after a 10x larger one."""
    print("\n== memory: worker RSS against run size (all-passing programs, every text distinct)")
    for per_problem in (10, 100):
        samples = [
            {"task_id": s["task_id"], "completion": s["completion"] + f"  # {i}\n"}
            for i, s in enumerate(make_workload(problems, per_problem, "passing", seed))
        ]
        elapsed, _ = run_passk(stack, problems, samples, f"memory-{per_problem}")
        print(f"{len(samples):6d} samples in {elapsed:6.1f} s ({len(samples) / elapsed:5.0f}/s); "
              f"worker RSS after it {worker_rss_mib(stack):6.1f} MiB")


def bench_metrics(stack: LocalStack) -> None:
    """Store a 1,000 x 200 run directly (finished verdicts), then time GET /metrics over HTTP."""
    import numpy as np
    import psycopg
    from sqlalchemy.engine import make_url

    client = stack.client(timeout=300)
    problems = [{"id": f"p{i}", "prompt": "", "test": "def check(c):\n    pass\n", "entry_point": "f"} for i in range(1000)]
    dataset = client.post("/v1/datasets", json={"name": "metrics-bench", "problems": problems}).raise_for_status().json()
    samples = [{"problem_id": f"p{i}", "completion": "x"} for i in range(1000) for _ in range(200)]
    run = client.post("/v1/runs", json={"dataset_id": dataset["id"], "model": "m", "sampling": {"temperature": 1}, "samples": samples})
    run_id = run.raise_for_status().json()["id"]
    rng = np.random.default_rng(0)
    rates = np.where(rng.random(1000) < 0.5, rng.beta(0.5, 4, 1000), rng.beta(4, 0.5, 1000))
    url = make_url(stack.database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(url) as conn:
        ids = conn.execute("SELECT id FROM samples WHERE run_id = %s ORDER BY id", (run_id,)).fetchall()
        verdicts = ["passed" if rng.random() < rates[i // 200] else "failed" for i in range(len(ids))]
        with conn.cursor() as cur:
            cur.execute("CREATE TEMP TABLE v (id bigint, verdict text)")
            with cur.copy("COPY v FROM STDIN") as copy:
                for (sample_id,), verdict in zip(ids, verdicts):
                    copy.write_row((sample_id, verdict))
            cur.execute("UPDATE samples s SET state = 'done', verdict = v.verdict FROM v WHERE s.id = v.id")
            cur.execute("UPDATE runs SET status = 'completed' WHERE id = %s", (run_id,))
            cur.execute("ANALYZE samples")
    times = []
    for _ in range(5):
        started = time.perf_counter()
        client.get(f"/v1/runs/{run_id}/metrics", params={"k": "1,10,100"}).raise_for_status()
        times.append(time.perf_counter() - started)
    print("\n== metrics: GET /v1/runs/{id}/metrics?k=1,10,100 on 1,000 problems x 200 samples, 10,000 resamples")
    print(f"median {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms over {len(times)} requests")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["distinct", "passing", "mixed", "x10", "memory", "metrics"], action="append")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    chosen = args.only or ["distinct", "passing", "mixed", "memory", "metrics"]
    problems = read_problems()
    print(f"machine: {os.cpu_count()} cores; passk worker concurrency {args.concurrency}")
    with LocalStack(prefix="passk_bench") as stack, tempfile.TemporaryDirectory() as tmp:
        stack.start_worker(concurrency=args.concurrency)
        cores = os.cpu_count() or 1
        distinct_rate = None
        for name in ("distinct", "passing", "mixed", "x10"):
            if name in chosen:
                per_problem = 10 if name == "x10" else 20
                mix = name if name in ("distinct", "passing") else "mixed"
                samples = make_workload(problems, per_problem, mix, args.seed)
                rate = compare(name, stack, problems, samples, Path(tmp))
                if name == "distinct":
                    distinct_rate = rate
                    limit = machine_limit(stack, problems, samples, args.concurrency, Path(tmp))
                    print(f"passk / machine limit: {rate / limit:8.2f}  (target >= 0.6: {'met' if rate >= 0.6 * limit else 'MISSED'})")
                elif mix == "mixed" and distinct_rate is not None:
                    mix_ideal(samples, distinct_rate, cores, rate)
        if "memory" in chosen:
            bench_memory(stack, problems, args.seed)
        if "metrics" in chosen:
            stack.stop_workers()  # the stored run must not be picked up and executed
            bench_metrics(stack)


if __name__ == "__main__":
    main()
