"""How soon POST /run_code answers a timeout, against what SandboxFusion's clients wait (verl: compile_timeout +
run_timeout + 10 s), with sleeping and spinning programs sent at once.

    .venv/bin/python bench/run_code_timeouts.py [--programs 24] [--run-timeout 2] [--concurrency 2]

Sends `--programs` Python programs at once (half sleep, half spin), each with `run_timeout` as given, and reports
the time from sending to answer, the answers' run statuses and how many arrived after verl would have given up.
The worker runs `--concurrency` threads plus its interactive sandboxes (PASSK_INTERACTIVE_SANDBOXES).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from passk_dev.localstack import LocalStack  # noqa: E402

VERL_SLACK_S = 10.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=24)
    parser.add_argument("--run-timeout", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=2, help="worker threads")
    args = parser.parse_args()
    with LocalStack(prefix="passk_rc_timeouts", log_path=Path("/tmp/passk-rc-timeouts.log")) as stack:
        stack.start_worker(concurrency=args.concurrency)
        client = stack.client(timeout=120)
        client.post("/run_code", json={"code": "print(1)", "language": "python"}).raise_for_status()  # warm

        def one(i: int) -> tuple[float, str]:
            code = f"import time\ntime.sleep(60)  # {i}" if i % 2 == 0 else f"while True: pass  # {i}"
            started = time.perf_counter()
            response = client.post("/run_code", json={"code": code, "language": "python",
                                                      "run_timeout": args.run_timeout, "compile_timeout": 10})
            elapsed = time.perf_counter() - started
            if response.status_code != 200:
                return elapsed, f"HTTP {response.status_code}"
            return elapsed, response.json()["run_result"]["status"]

        with ThreadPoolExecutor(args.programs) as pool:
            results = list(pool.map(one, range(args.programs)))
        times = sorted(elapsed for elapsed, _ in results)
        verl_gives_up = 10 + args.run_timeout + VERL_SLACK_S
        print(f"{args.programs} programs at once, run_timeout {args.run_timeout:g} s, "
              f"{args.concurrency} worker threads + interactive sandboxes")
        print(f"answers: {dict(Counter(status for _, status in results))}")
        print(f"send-to-answer: min {times[0]:.2f} s, median {statistics.median(times):.2f} s, max {times[-1]:.2f} s")
        print(f"after verl gives up ({verl_gives_up:g} s): {sum(t > verl_gives_up for t in times)}")


if __name__ == "__main__":
    main()
