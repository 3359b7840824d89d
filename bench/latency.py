"""Submit-to-verdict latency of one-sample runs on an idle, warm worker.

    .venv/bin/python bench/latency.py [--runs 300] [--concurrency 2]

Each run is `POST /v1/runs?wait=30` with one HumanEval-style sample (every program distinct, so nothing
comes from the result cache); the clock runs from sending the POST to receiving the finished run. Runs go
one after another, so the worker is idle when each arrives (woken by LISTEN/NOTIFY). The same for
`POST /run_code` (SandboxFusion's shape). Targets: p50 <= 50 ms, p95 <= 150 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from passk_dev.localstack import LocalStack  # noqa: E402

PROBLEM = {"id": "add", "prompt": "def add(a, b):\n", "entry_point": "add",
           "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n"}


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return f"p50 {q[49]:6.1f} ms   p95 {q[94]:6.1f} ms   p99 {q[98]:6.1f} ms   (n={len(values)}, max {ordered[-1]:.1f} ms)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--concurrency", type=int, default=2, help="worker threads")
    args = parser.parse_args()
    with LocalStack(prefix="passk_latency", log_path=Path("/tmp/passk-latency.log")) as stack:
        stack.start_worker(concurrency=args.concurrency)
        client = stack.client(timeout=60)
        dataset = client.post("/v1/datasets", json={"name": "latency", "problems": [PROBLEM]}).raise_for_status().json()

        def one(i: int) -> float:
            body = {"dataset_id": dataset["id"], "model": "latency", "sampling": {"temperature": 0},
                    "priority": "interactive",
                    "samples": [{"problem_id": "add", "completion": f"    return a + b  # {i}\n"}]}
            started = time.perf_counter()
            response = client.post("/v1/runs", params={"wait": 30}, json=body)
            elapsed = (time.perf_counter() - started) * 1000
            assert response.status_code == 200 and response.json()["progress"]["passed"] == 1, response.text
            return elapsed

        def run_code(i: int) -> float:
            started = time.perf_counter()
            response = client.post("/run_code", json={"code": f"print(sum(map(int, input().split())))  # {i}",
                                                      "language": "python", "stdin": f"{i} 1\n"})
            elapsed = (time.perf_counter() - started) * 1000
            assert response.json()["run_result"]["stdout"] == f"{i + 1}\n", response.text
            return elapsed

        for i in range(args.warmup):
            one(-1 - i)
            run_code(-1000 - i)
        runs = [one(i) for i in range(args.runs)]
        codes = [run_code(i) for i in range(args.runs)]
        print(f"POST /v1/runs?wait (1 sample, HumanEval judge): {percentiles(runs)}")
        print(f"POST /run_code (stdin program)               : {percentiles(codes)}")


if __name__ == "__main__":
    main()
