"""Coverage of every interval passk serves, on simulated runs with a known answer: one table.

    nice .venv/bin/python bench/coverage.py                          # 2,000 repetitions of every check
    nice .venv/bin/python bench/coverage.py --only pass,languages --repetitions 500

Each check (service.statistics.simulation.CHECKS) draws simulated runs of 164 problems from a population
whose answer is known, computes the interval exactly as the service does (the same functions, 2,000
bootstrap resamples by default) and counts how often it covers the answer, and on which side it misses:
"miss low" is an interval entirely below the truth (for a p95 latency: an upper bound that a release rule
would wrongly pass). A correct 95 % interval covers in 93-97 % of repetitions; with 2,000 repetitions the
Monte Carlo standard error of a coverage is about 0.5 points. Rows that passk serves with a warning (too
few problems, an estimate few problems carry, a percentile few samples lie above) say so in the last
column: their intervals are unreliable, and passk says so where it shows them. Checks run in parallel
processes (--jobs), in chunks of repetitions with their own seeds.

Exit status 1 if an interval served without a warning covers less than 93 %.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

# One BLAS thread per process: the checks run side by side, and a threaded matrix product on a busy
# two-core machine is several times slower than a single-threaded one.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from service.statistics.bootstrap import derive_seed  # noqa: E402
from service.statistics.simulation import CHECKS, IntervalCoverage  # noqa: E402

LOW, HIGH = 0.93, 0.97
CHUNK = 250


def _run(name: str, repetitions: int, resamples: int, seed: int) -> tuple[str, list[IntervalCoverage]]:
    return name, CHECKS[name](repetitions=repetitions, resamples=resamples, seed=seed)


def _merge(parts: list[list[IntervalCoverage]]) -> list[IntervalCoverage]:
    """Chunks of one check, row by row: counts add up, widths average by repetitions, warnings by majority."""
    merged: list[IntervalCoverage] = []
    for rows in zip(*parts, strict=True):
        total = sum(r.repetitions for r in rows)
        warned = [r.served_warning for r in rows if r.served_warning]
        merged.append(IntervalCoverage(
            truth=rows[0].truth, covered=sum(r.covered for r in rows), repetitions=total,
            mean_width=_mean([(r.mean_width, r.repetitions) for r in rows]),
            misses_low=sum(r.misses_low for r in rows), misses_high=sum(r.misses_high for r in rows),
            interval=rows[0].interval, setting=rows[0].setting,
            served_warning=warned[0] if len(warned) * 2 > len(rows) else "",
        ))
    return merged


def _mean(pairs: list[tuple[float, int]]) -> float:
    known = [(value, weight) for value, weight in pairs if not math.isnan(value)]
    return sum(v * w for v, w in known) / sum(w for _, w in known) if known else float("nan")


def _width(value: float) -> str:
    return "open" if math.isnan(value) else f"{value:.3g}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repetitions", type=int, default=2000, help="simulated runs per check (default 2000)")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples per interval (default 2000)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--only", default=",".join(CHECKS), help=f"comma-separated checks: {', '.join(CHECKS)}")
    args = parser.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        parser.error(f"unknown check(s) {', '.join(unknown)}; known: {', '.join(CHECKS)}")

    print(f"{args.repetitions:,} repetitions per check, {args.resamples:,} resamples per interval, 95 % intervals, "
          f"seed {args.seed}, {args.jobs} processes")
    started = time.perf_counter()
    jobs = []
    for name in names:
        for start in range(0, args.repetitions, CHUNK):
            count = min(CHUNK, args.repetitions - start)
            jobs.append((name, count, args.resamples, derive_seed(args.seed, f"{name}:{start}")))
    parts: dict[str, list[list[IntervalCoverage]]] = {name: [] for name in names}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for name, rows in pool.map(_run, *zip(*jobs, strict=True)):
            parts[name].append(rows)
    elapsed = time.perf_counter() - started

    header = ("check", "interval", "setting", "truth", "coverage", "± MC SE", "mean width", "miss low", "miss high",
              "93-97 %", "served with")
    table: list[tuple[str, ...]] = []
    ok = True
    for name in names:
        for r in _merge(parts[name]):
            se = math.sqrt(r.rate * (1 - r.rate) / r.repetitions)
            verdict = "yes" if LOW <= r.rate <= HIGH else ("above" if r.rate > HIGH else "BELOW")
            ok &= bool(r.served_warning) or r.rate >= LOW
            truth = "varies" if math.isnan(r.truth) else f"{r.truth:.4g}"
            table.append((name, r.interval, r.setting, truth, f"{r.rate:.2%}", f"{se:.2%}", _width(r.mean_width),
                          f"{r.misses_low / r.repetitions:.2%}", f"{r.misses_high / r.repetitions:.2%}", verdict,
                          r.served_warning or "-"))
    widths = [max(len(header[i]), *(len(row[i]) for row in table)) for i in range(len(header))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in table:
        print("| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |")
    print(f"{elapsed:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
