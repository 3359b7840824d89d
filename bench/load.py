"""Load: 20 concurrent clients submit small runs and poll while the workers keep both cores busy.

    .venv/bin/python bench/load.py                  # 3 minutes
    .venv/bin/python bench/load.py --seconds 30     # a quick look
    .venv/bin/python bench/load.py --slowdown 3280 --loop 20000   # one run alone, then under 20 pollers
    .venv/bin/python bench/load.py --slowdown 3280 --loop 20000 --sandbox-cgroup-parent passk-sandboxes
                                                    # the same, then again with the sandboxes' parent cgroup

Everything runs on this machine against 127.0.0.1: a LocalStack started here (its own Postgres
cluster, the API over HTTP, one worker with a sandbox per core). Each client, in a loop until the
time is up: POST /v1/runs (a few CPU-bound programs, some wrong on purpose, result cache off so
each one really runs), then every --poll-interval GET /v1/runs/{id}, GET /v1/status and, every
other time, GET /metrics, until its run ends; then GET /v1/runs/{id}/metrics once. Latencies count
the requests started within the time limit; after it, clients only wait for their last run.

At the end every submitted sample is checked in the database: state done, one attempt, the
verdict its program deserves; and every run's progress adds up to what was submitted. The exit
status is non-zero if any check fails or if status polls miss the target (p95 < 100 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httptools
import httpx
import psycopg
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from passk_dev.localstack import LocalStack, wait_for_run  # noqa: E402
from passk_dev.proc import process_cpu_s, tree_cpu_s  # noqa: E402

PROBLEMS = 4
PROMPT = "def work(n):\n"
TEST = "def check(candidate):\n    assert candidate(3) == 9\n"
STATUS_P95_TARGET_MS = 100.0
FINISHED = {"completed", "failed", "cancelled"}


def completion(loop: int, tag: str, passes: bool) -> str:
    """A CPU-bound program: `loop` iterations of arithmetic, then a right or a wrong answer."""
    answer = "n * n" if passes else "n + n"
    return f"    s = 0\n    for i in range({loop}):\n        s += i * i\n    return {answer}  # {tag}\n"


@dataclass
class Submitted:
    run_id: str
    samples: int
    passing: int
    expected: dict[tuple[str, int], str]  # (problem id, index) -> verdict


@dataclass
class Stats:
    deadline: float
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    requests: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)
    fresh: Counter = field(default_factory=Counter)  # answered 200 (not 304) to a revalidation
    runs: list[Submitted] = field(default_factory=list)

    async def call(self, name: str, client: httpx.AsyncClient | KeepAliveClient, method: str, url: str,
                   **kwargs) -> httpx.Response | _Response | None:
        started = time.perf_counter()
        try:
            response = await client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            self.errors[f"{name}: {type(exc).__name__}"] += 1
            return None
        elapsed = time.perf_counter() - started
        if time.monotonic() < self.deadline:  # only the loaded period counts
            self.latencies[name].append(elapsed)
            self.requests[name] += 1
        if response.status_code >= 400:
            self.errors[f"{name}: HTTP {response.status_code}"] += 1
        return response


async def client_loop(number: int, stack: LocalStack, dataset_id: str, args: argparse.Namespace, stats: Stats) -> None:
    headers = {"Authorization": f"Bearer {stack.api_key}"}
    async with httpx.AsyncClient(base_url=stack.api_url, headers=headers, timeout=60) as client:
        run_number = 0
        while time.monotonic() < stats.deadline:
            samples, expected = [], {}
            per_problem: Counter = Counter()
            for j in range(args.samples):
                problem = f"p{(number + j) % PROBLEMS}"
                passes = (number + run_number + j) % 4 != 3
                samples.append({"problem_id": problem, "completion": completion(args.loop, f"c{number} r{run_number} s{j}", passes)})
                expected[(problem, per_problem[problem])] = "passed" if passes else "failed"
                per_problem[problem] += 1
            body = {"dataset_id": dataset_id, "model": f"load-{number}", "sampling": {"temperature": 0.8},
                    "samples": samples, "cache": False}
            response = await stats.call("POST /v1/runs", client, "POST", "/v1/runs", json=body)
            if response is None or response.status_code != 202:
                await asyncio.sleep(1.0)
                continue
            run_id = response.json()["id"]
            stats.runs.append(Submitted(run_id, len(samples), sum(v == "passed" for v in expected.values()), expected))
            run_number += 1
            polls = 0
            while True:
                await asyncio.sleep(args.poll_interval)
                response = await stats.call("GET /v1/runs/{id}", client, "GET", f"/v1/runs/{run_id}")
                if time.monotonic() < stats.deadline:
                    await stats.call("GET /v1/status", client, "GET", "/v1/status")
                    if polls % 2 == 0:
                        await stats.call("GET /metrics", client, "GET", "/metrics")
                polls += 1
                if response is not None and response.status_code == 200 and response.json()["status"] in FINISHED:
                    break
                if time.monotonic() > stats.deadline + args.drain_seconds:
                    stats.errors["a run did not finish in time"] += 1
                    return
            await stats.call("GET /v1/runs/{id}/metrics", client, "GET", f"/v1/runs/{run_id}/metrics",
                             params={"k": "1", "resamples": 1000})


class _Response:
    """What the pollers read of an answer: the status, the headers (lower-case names) and the JSON body."""

    def __init__(self) -> None:
        self.status_code = 0
        self.headers: dict[str, str] = {}
        self.body = bytearray()
        self.complete = False

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_body(self, chunk: bytes) -> None:
        self.body += chunk

    def on_message_complete(self) -> None:
        self.complete = True

    def json(self) -> object:
        return json.loads(self.body)


class KeepAliveClient:
    """One keep-alive HTTP/1.1 connection, parsed by httptools (uvicorn's parser): a GET costs this process
    a fraction of httpx's CPU, so the pollers take less of the machine from the run they measure. Requests
    and latencies are the same; httpx.HTTPError stands for any failure, as with httpx."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout: float = 60) -> None:
        url = httpx.URL(base_url)
        self.host, self.port, self.timeout = url.host, url.port or 80, timeout
        self.fixed = "".join(f"{name}: {value}\r\n" for name, value in {"Host": f"{self.host}:{self.port}", **headers}.items())
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def __aenter__(self) -> KeepAliveClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None

    async def request(self, method: str, url: str, params: dict[str, object] | None = None,
                      headers: dict[str, str] | None = None) -> _Response:
        if method != "GET":
            raise ValueError("the pollers only GET")
        target = str(httpx.URL(url, params=params)) if params else url
        extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        head = f"GET {target} HTTP/1.1\r\n{self.fixed}{extra}\r\n".encode("latin-1")
        try:
            return await asyncio.wait_for(self._exchange(head), self.timeout)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, httptools.HttpParserError) as exc:
            await self.aclose()
            raise httpx.TransportError(f"{type(exc).__name__}: {exc}") from exc

    async def _exchange(self, head: bytes) -> _Response:
        if self._streams is None:
            self._streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._streams
        writer.write(head)
        response = _Response()
        parser = httptools.HttpResponseParser(response)
        while not response.complete:
            chunk = await reader.read(65536)
            if not chunk:
                raise asyncio.IncompleteReadError(b"", None)
            parser.feed_data(chunk)
        response.status_code = parser.get_status_code()
        if not parser.should_keep_alive():
            await self.aclose()
        return response


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)  # nearest rank
    return ordered[max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))]


class CpuMeter:
    """Where the machine's CPU went during a phase: API, Postgres, worker, this process (the pollers), the rest."""

    def __init__(self, stack: LocalStack) -> None:
        self.stack = stack
        self.before = self._read()

    def _read(self) -> dict[str, float]:
        total, idle = cpu_times()
        ticks = os.sysconf("SC_CLK_TCK")
        own = os.times()
        return {
            "machine": (total - idle) / ticks,
            "API": process_cpu_s(self.stack.api_pid),
            "Postgres": tree_cpu_s(self.stack.postgres_pid),
            "worker": sum(process_cpu_s(proc.pid) for proc in self.stack.workers if proc.poll() is None),
            "pollers (this process)": own.user + own.system,
        }

    def report(self, label: str, wall_s: float, requests: int) -> None:
        after = self._read()
        used = {name: after[name] - self.before[name] for name in after}
        rest = used["machine"] - sum(v for name, v in used.items() if name != "machine")
        cores = os.cpu_count() or 1
        print(f"CPU {label} ({wall_s:.1f} s, {cores} cores, machine busy {100 * used['machine'] / (wall_s * cores):.0f} %):")
        for name in ("API", "Postgres", "worker", "pollers (this process)"):
            per_request = f", {1000 * used[name] / requests:.2f} ms per request" if requests else ""
            print(f"  {name:<24}{used[name]:7.1f} s = {100 * used[name] / wall_s:5.1f} % of a core{per_request}")
        print(f"  {'sandboxes and the rest':<24}{rest:7.1f} s = {100 * rest / wall_s:5.1f} % of a core "
              f"(containers, dockerd, other users of the machine)")


def cpu_times() -> tuple[int, int]:
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields), idle


def verify(stack: LocalStack, runs: list[Submitted]) -> list[str]:
    """Every submitted sample finished exactly once, with the verdict its program deserves."""
    problems: list[str] = []
    url = make_url(stack.database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(url) as conn, httpx.Client(base_url=stack.api_url, timeout=60,
                                                    headers={"Authorization": f"Bearer {stack.api_key}"}) as client:
        ids = [run.run_id for run in runs]
        rows = conn.execute(
            "SELECT s.run_id::text, p.key, s.index, s.state, s.verdict, s.attempts, s.cached "
            "FROM samples s JOIN problems p ON p.id = s.problem_id WHERE s.run_id = ANY(%s::uuid[])", (ids,)
        ).fetchall()
        by_run: dict[str, list[tuple]] = defaultdict(list)
        for row in rows:
            by_run[row[0]].append(row)
        for run in runs:
            found = by_run.get(run.run_id, [])
            if len(found) != run.samples:
                problems.append(f"run {run.run_id}: {len(found)} samples stored, {run.samples} submitted")
            seen = Counter((key, index) for _, key, index, *_ in found)
            if any(count > 1 for count in seen.values()) or set(seen) != set(run.expected):
                problems.append(f"run {run.run_id}: samples missing or duplicated")
            for _, key, index, state, verdict, attempts, cached in found:
                if state != "done" or attempts != 1 or cached:
                    problems.append(f"run {run.run_id} {key}#{index}: state={state} attempts={attempts} cached={cached}")
                elif verdict != run.expected.get((key, index)):
                    problems.append(f"run {run.run_id} {key}#{index}: {verdict}, expected {run.expected.get((key, index))}")
            api = client.get(f"/v1/runs/{run.run_id}").raise_for_status().json()
            progress = api["progress"]
            if (
                api["status"] != "completed"
                or not progress["total"] == progress["done"] == api["sample_count"] == run.samples
                or sum(progress["by_verdict"].values()) != run.samples
                or progress["by_state"]["done"] != run.samples
                or progress["passed"] != run.passing
                or progress["by_verdict"]["failed"] != run.samples - run.passing
            ):
                problems.append(f"run {run.run_id}: progress does not add up: {api['status']} {progress}")
        leftover = conn.execute("SELECT count(*) FROM samples WHERE state IN ('queued', 'leased')").fetchone()[0]
        if leftover:
            problems.append(f"{leftover} samples still queued or leased")
    return problems


async def drive(stack: LocalStack, dataset_id: str, args: argparse.Namespace) -> Stats:
    stats = Stats(deadline=time.monotonic() + args.seconds)
    await asyncio.gather(*(client_loop(i, stack, dataset_id, args, stats) for i in range(args.clients)))
    return stats


async def _poll_run(stack: LocalStack, run_id: str, args: argparse.Namespace, stats: Stats, done: asyncio.Event) -> None:
    """One client: the run's status, /v1/status and the run's metrics (both revalidated with their ETag), until it ends."""
    headers = {"Authorization": f"Bearer {stack.api_key}"}
    etag = status_etag = ""
    async with KeepAliveClient(stack.api_url, headers, timeout=60) as client:
        while not done.is_set():
            response = await stats.call("GET /v1/runs/{id}", client, "GET", f"/v1/runs/{run_id}",
                                        headers={"If-None-Match": status_etag} if status_etag else {})
            if response is not None and response.status_code == 200:
                status_etag = response.headers.get("etag", "")
                stats.fresh["GET /v1/runs/{id}"] += 1
                if response.json()["status"] in FINISHED:
                    done.set()
            await stats.call("GET /v1/status", client, "GET", "/v1/status")
            metrics = await stats.call(
                "GET /v1/runs/{id}/metrics", client, "GET", f"/v1/runs/{run_id}/metrics",
                params={"k": "1,10"}, headers={"If-None-Match": etag} if etag else {},
            )
            if metrics is not None and metrics.status_code == 200:
                etag = metrics.headers.get("etag", "")
                stats.fresh["GET /v1/runs/{id}/metrics"] += 1
            await asyncio.sleep(args.poll_interval)


def _big_run(client: httpx.Client, dataset_id: str, args: argparse.Namespace, tag: str) -> str:
    samples = [{"problem_id": f"p{j % PROBLEMS}", "completion": completion(args.loop, f"{tag} {j}", j % 4 != 3)}
               for j in range(args.slowdown)]
    body = {"dataset_id": dataset_id, "model": tag, "sampling": {"temperature": 0.8}, "samples": samples, "cache": False}
    return client.post("/v1/runs", json=body).raise_for_status().json()["id"]


def slowdown(args: argparse.Namespace, log_path: Path) -> int:
    """One run of --slowdown samples alone, then the same under --clients pollers: latencies and the slowdown.

    With --sandbox-cgroup-parent, both again with the worker's sandboxes under that parent cgroup, in the
    same invocation (same stack and database), so the two settings are compared under the same load.
    """
    settings = [""] + ([args.sandbox_cgroup_parent] if args.sandbox_cgroup_parent else [])
    missed = False
    with LocalStack(prefix="passk_load", private_postgres=True, log_path=log_path) as stack:
        with stack.client(timeout=120) as client:
            body = {"name": "load", "problems": [
                {"id": f"p{i}", "prompt": PROMPT, "test": TEST, "entry_point": "work"} for i in range(PROBLEMS)
            ]}
            dataset_id = client.post("/v1/datasets", json=body).raise_for_status().json()["id"]
            for parent in settings:
                worker_env = {}
                if parent:
                    worker_env = {"PASSK_SANDBOX_CGROUP_PARENT": parent,
                                  "PASSK_SANDBOX_CGROUP_CPU_SHARES": str(args.sandbox_cgroup_shares)}
                print(f"\n== sandbox cgroup parent: {parent or '(the engine default)'}"
                      + (f", cpu.shares {args.sandbox_cgroup_shares}" if parent else "")
                      + f"; load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
                stack.start_worker(concurrency=args.concurrency, **worker_env)
                missed |= _alone_then_polled(stack, client, dataset_id, args, parent or "default")
                stack.stop_workers()
    return 1 if missed else 0


def _alone_then_polled(stack: LocalStack, client: httpx.Client, dataset_id: str, args: argparse.Namespace,
                       tag: str) -> bool:
    """One setting's two runs and its report; True if the status target was missed."""
    meter = CpuMeter(stack)
    started = time.monotonic()
    wait_for_run(client, _big_run(client, dataset_id, args, f"alone {tag}"), timeout_s=3600)
    alone_s = time.monotonic() - started
    meter.report("alone", alone_s, 0)
    meter = CpuMeter(stack)
    stats = Stats(deadline=float("inf"))
    started = time.monotonic()
    run_id = _big_run(client, dataset_id, args, f"loaded {tag}")

    async def poll_all() -> None:
        done = asyncio.Event()
        await asyncio.gather(*(_poll_run(stack, run_id, args, stats, done) for _ in range(args.clients)))

    asyncio.run(poll_all())
    loaded_s = time.monotonic() - started
    meter.report(f"under {args.clients} pollers", loaded_s, sum(stats.requests.values()))
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"a run of {args.slowdown} samples: {alone_s:.1f} s alone, {loaded_s:.1f} s under {args.clients} pollers "
          f"(slowdown {100 * (loaded_s / alone_s - 1):+.0f} %, target <= +20 %)")
    print(f"{'endpoint':<26}{'requests':>9}{'req/s':>8}{'p50 ms':>9}{'p95 ms':>9}")
    for name in sorted(stats.latencies):
        values = [v * 1000 for v in stats.latencies[name]]
        print(f"{name:<26}{len(values):>9}{len(values) / loaded_s:>8.1f}{statistics.median(values):>9.1f}"
              f"{percentile(values, 95):>9.1f}")
    for name in ("GET /v1/runs/{id}", "GET /v1/runs/{id}/metrics"):
        print(f"{name}: {stats.requests[name] - stats.fresh[name]} of {stats.requests[name]} answered 304")
    p95 = percentile([v * 1000 for v in stats.latencies.get("GET /v1/runs/{id}", [])], 95)
    print(f"run status p95 {p95:.1f} ms (target < {STATUS_P95_TARGET_MS:.0f} ms): {'met' if p95 < STATUS_P95_TARGET_MS else 'MISSED'}")
    return not p95 < STATUS_P95_TARGET_MS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=180.0, help="how long clients submit and poll (default 180)")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--samples", type=int, default=8, help="samples per submitted run")
    parser.add_argument("--loop", type=int, default=1_500_000, help="iterations of work per program (~0.1 s of CPU)")
    parser.add_argument("--poll-interval", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 2, help="sandboxes of the worker")
    parser.add_argument("--drain-seconds", type=float, default=300.0, help="how long to wait for the last runs")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--log", type=Path, help="the API's and worker's output (default: a temporary file, removed)")
    parser.add_argument("--slowdown", type=int, metavar="SAMPLES",
                        help="instead: one run of SAMPLES alone, then under --clients pollers of its status, "
                             "/v1/status and its metrics; prints their latencies and the run's slowdown")
    parser.add_argument("--sandbox-cgroup-parent", default="", metavar="NAME",
                        help="with --slowdown: measure again with the worker's PASSK_SANDBOX_CGROUP_PARENT set to NAME")
    parser.add_argument("--sandbox-cgroup-shares", type=int, default=256,
                        help="its PASSK_SANDBOX_CGROUP_CPU_SHARES (default 256; a host process weighs 1024)")
    args = parser.parse_args()

    log_path = args.log or Path(tempfile.mkstemp(prefix="passk-load-", suffix=".log")[1])
    try:
        return slowdown(args, log_path) if args.slowdown else run(args, log_path)
    finally:
        if args.log is None:
            log_path.unlink(missing_ok=True)


def run(args: argparse.Namespace, log_path: Path) -> int:
    with LocalStack(prefix="passk_load", private_postgres=True, log_path=log_path) as stack:
        with stack.client() as client:
            body = {"name": "load", "problems": [
                {"id": f"p{i}", "prompt": PROMPT, "test": TEST, "entry_point": "work"} for i in range(PROBLEMS)
            ]}
            dataset_id = client.post("/v1/datasets", json=body).raise_for_status().json()["id"]
        stack.start_worker(concurrency=args.concurrency)
        busy_before, api_cpu_before, load_before = cpu_times(), process_cpu_s(stack.api_pid), os.getloadavg()[0]
        started = time.monotonic()
        stats = asyncio.run(drive(stack, dataset_id, args))
        wall = time.monotonic() - started
        busy_after, api_cpu_after, load_after = cpu_times(), process_cpu_s(stack.api_pid), os.getloadavg()[0]
        with stack.client() as client:
            final_status = client.get("/v1/status").raise_for_status().json()
        stack.stop_workers()
        problems = verify(stack, stats.runs)

    total, idle = busy_after[0] - busy_before[0], busy_after[1] - busy_before[1]
    cpu_busy = 100.0 * (1 - idle / total) if total else float("nan")
    samples = sum(run.samples for run in stats.runs)
    loaded = min(args.seconds, wall)
    all_requests = sum(stats.requests.values())
    api_ms_per_request = 1000 * (api_cpu_after - api_cpu_before) / max(1, all_requests)
    report: dict[str, object] = {
        "seconds": args.seconds, "clients": args.clients, "cores": os.cpu_count(), "worker_sandboxes": args.concurrency,
        "runs": len(stats.runs), "samples": samples, "samples_per_s": round(samples / wall, 1),
        "machine_cpu_busy_percent": round(cpu_busy, 1), "load_average_1min": [load_before, load_after],
        "api_cpu_ms_per_request": round(api_ms_per_request, 2), "requests_per_s": round(all_requests / loaded, 1),
        "endpoints": {}, "errors": dict(stats.errors), "verification_problems": problems[:20],
        "final_status": final_status,
    }
    print(f"\n{args.clients} clients for {args.seconds:.0f} s on {os.cpu_count()} cores; worker with "
          f"{args.concurrency} sandboxes; machine CPU busy {cpu_busy:.1f}% over the whole run "
          f"(1-min load average {load_before:.2f} before, {load_after:.2f} after)")
    print(f"{len(stats.runs)} runs, {samples} samples ({samples / wall:.1f}/s end to end, {wall:.0f} s with drain); "
          f"{all_requests / loaded:.1f} requests/s while loaded; API process CPU {api_ms_per_request:.2f} ms per request\n")
    print(f"{'endpoint':<26}{'requests':>9}{'req/s':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for name in sorted(stats.latencies):
        values = [v * 1000 for v in stats.latencies[name]]
        figures = {
            "requests": len(values), "per_s": round(len(values) / loaded, 1),
            "p50_ms": round(statistics.median(values), 1), "p95_ms": round(percentile(values, 95), 1),
            "p99_ms": round(percentile(values, 99), 1), "max_ms": round(max(values), 1),
        }
        report["endpoints"][name] = figures  # type: ignore[index]
        print(f"{name:<26}{figures['requests']:>9}{figures['per_s']:>8}{figures['p50_ms']:>9}"
              f"{figures['p95_ms']:>9}{figures['p99_ms']:>9}{figures['max_ms']:>9}")
    if stats.errors:
        print(f"\nerrors: {dict(stats.errors)}")
    status_p95 = report["endpoints"].get("GET /v1/status", {}).get("p95_ms", float("inf"))  # type: ignore[union-attr]
    print(f"\nGET /v1/status p95 {status_p95} ms (target < {STATUS_P95_TARGET_MS:.0f} ms): "
          f"{'met' if status_p95 < STATUS_P95_TARGET_MS else 'MISSED'}")
    if problems:
        print(f"verification FAILED ({len(problems)} problems):")
        for problem in problems[:20]:
            print(f"  {problem}")
    else:
        print(f"verification: all {samples} samples of {len(stats.runs)} runs done exactly once (1 attempt each), "
              f"with their expected verdicts; every run's progress adds up")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0 if not problems and not stats.errors and status_p95 < STATUS_P95_TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
