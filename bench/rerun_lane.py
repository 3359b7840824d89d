"""Re-runs and everyone else: how long small runs wait while one sample sleeps through a long time limit.

    .venv/bin/python bench/rerun_lane.py                    # time_limit_s=60: about 4.5 minutes
    .venv/bin/python bench/rerun_lane.py --time-limit 10    # a quick look

A LocalStack on this machine (its own Postgres cluster, the API over HTTP, one worker with
--concurrency claiming threads). One run holds a single program that sleeps forever under
--time-limit: its wall-clock limit (2 x limit + 1 s) stops it, and the timeout is re-run before it is
final. Meanwhile, every --probe-every seconds, another run of --probe-samples quick programs (result
cache off) is submitted, and the time from its POST to `completed` is measured. The report gives
those latencies for the probes submitted during the sleeper's first attempt and during its re-run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from passk_dev.localstack import LocalStack  # noqa: E402

FINISHED = {"completed", "failed", "cancelled"}
PROBLEM = {"id": "sq", "prompt": "def sq(x):\n", "test": "def check(c):\n    assert c(3) == 9\n", "entry_point": "sq"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--probe-every", type=float, default=3.0)
    parser.add_argument("--probe-samples", type=int, default=4)
    args = parser.parse_args()

    log = Path(tempfile.mkstemp(prefix="passk-rerun-lane-", suffix=".log")[1])
    with LocalStack(prefix="passk_bench_rerun", log_path=log) as stack:
        stack.start_worker(concurrency=args.concurrency)
        client = stack.client()
        dataset_id = client.post("/v1/datasets", json={"name": "rerun-lane", "problems": [PROBLEM]}).raise_for_status().json()["id"]
        base = {"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 0.0}, "cache": False}

        started = time.monotonic()
        sleeper = "    import time\n    time.sleep(100000)\n    return x * x\n"
        sleeper_id = client.post(
            "/v1/runs", json={**base, "time_limit_s": args.time_limit, "samples": [{"problem_id": "sq", "completion": sleeper}]}
        ).raise_for_status().json()["id"]
        probes: dict[str, float] = {}  # run id -> submitted at (s since start)
        latencies: dict[str, float] = {}
        sleeper_done_at = None
        next_probe = 0.0
        counter = 0
        while sleeper_done_at is None or len(latencies) < len(probes):
            now = time.monotonic() - started
            if sleeper_done_at is None and now >= next_probe:
                counter += 1
                samples = [{"problem_id": "sq", "completion": f"    return x * x  # {counter}.{i}\n"} for i in range(args.probe_samples)]
                probes[client.post("/v1/runs", json={**base, "samples": samples}).raise_for_status().json()["id"]] = now
                next_probe = now + args.probe_every
            for run_id, submitted in probes.items():
                if run_id not in latencies and client.get(f"/v1/runs/{run_id}").json()["status"] in FINISHED:
                    latencies[run_id] = time.monotonic() - started - submitted
            if sleeper_done_at is None and client.get(f"/v1/runs/{sleeper_id}").json()["status"] in FINISHED:
                sleeper_done_at = time.monotonic() - started
            time.sleep(0.2)
        [sample] = client.get(f"/v1/runs/{sleeper_id}/samples").raise_for_status().json()["items"]

    wall = args.time_limit * 2 + 1
    phases = {"first attempt": (0.0, wall), "re-run": (wall, sleeper_done_at)}
    print(f"sleeper: time_limit_s={args.time_limit:g} (wall-clock limit {wall:g} s), verdict {sample['verdict']}, "
          f"rerun={sample['rerun']}, final after {sleeper_done_at:.1f} s; worker with {args.concurrency} claiming threads")
    print(f"{'probes submitted during':<26}{'runs':>6}{'median s':>10}{'max s':>9}")
    for name, (begin, end) in phases.items():
        during = [latencies[r] for r, at in probes.items() if begin <= at < end]
        if during:
            print(f"{name:<26}{len(during):>6}{statistics.median(during):>10.2f}{max(during):>9.2f}")
    print(f"(service log: {log})")


if __name__ == "__main__":
    main()
