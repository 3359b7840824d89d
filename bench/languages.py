"""Throughput per language: passk's API against the original harness's commands, in the same image.

    .venv/bin/python bench/languages.py --language cpp                  # HumanEval-X: 164 problems x 10 samples
    .venv/bin/python bench/languages.py --language cpp --problems 40    # a quicker subset
    .venv/bin/python bench/languages.py --language lua                  # MultiPL-E's rows with stored completions
    .venv/bin/python bench/languages.py --language multipl-e            # each language below, one table row each
    .venv/bin/python bench/languages.py --language all                  # every language with a workload

The workload comes from the data a language has. HumanEval-X's languages (cpp, java, javascript, go, rust): its
published rows, from the canonical solution. The languages from MultiPL-E (csharp, d, lua, php, perl, r, ruby,
racket, scala, bash, elixir, haskell, ocaml, clojure): the MultiPL-E rows of tests/data/multipl-e/<code>.jsonl with
the completions of tests/data/multipl-e/solutions/<code>.json (written for the differential tests, each already
judged by MultiPL-E's own command), on every problem that has a right and a wrong one.

Workload per problem (10 samples, the same for both sides): 4 right (2 byte-identical, 2 distinct by a trailing
comment), 4 wrong (2 identical, 2 distinct), 2 identical infinite loops. HumanEval-X: the language module's
`bench_variants` (sandbox/languages/<name>.py, `extra["bench"]`) or the defaults below make the wrong and looping
completions. MultiPL-E: the stored wrong one, and the language's stored looping one (LOOPS where that one only
type-checks in its own problem).

Reference: the language's `reference_commands` and `reference_pass` (HumanEval-X's execution.py; MultiPL-E's
evaluation/src/eval_<language>.py), run by passk_dev/reference.py in the language's own sandbox image, in one
container, with as many parallel workers as passk's worker has threads, each sample's run with the same time
limit as passk's (the build with the harness's own timeout; HumanEval-X's: 60 s). passk: a LocalStack (API over
HTTP, one worker process), timed from POST /v1/runs to status `completed`. Both on this machine, in this run.
The reference's limit is wall-clock, passk's CPU (passk re-runs its own wall-clock timeouts alone): so that load
alone makes no difference in verdicts, the reference's timeouts of samples passk passed run again alone, after
the clock, before they count (as the differential tests do).

With --no-cache passk runs every sample (identical ones then hit the per-container compile cache);
by default identical samples share one execution (the result cache), as in normal use.

Prints samples/s of each, the ratio, passk's compile-cache hits (from the worker's sandbox stats) and every
verdict difference (pass vs not pass) with its sample; for MultiPL-E, differences listed with their reason in
tests/data/multipl_e_differences.json are counted apart from unexplained ones. With several languages, a table
of them all at the end (Markdown, as docs/benchmarks.md has it).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from passk_dev.localstack import LocalStack, wait_for_run  # noqa: E402
from passk_dev.reference import rerun_alone, run_reference  # noqa: E402
from sandbox import languages  # noqa: E402
from sandbox.engine import connect  # noqa: E402
from sandbox.images import ensure_language_image  # noqa: E402
from service.formats.loader import to_problem  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT / ".." / "shared" / "datasets" / "humaneval-x"
SHARED = SHARED if SHARED.exists() else Path("/work/shared/datasets/humaneval-x")  # from a git worktree
FILE_NAMES = {"cpp": "cpp", "java": "java", "javascript": "js", "go": "go", "rust": "rust"}
MULTIPL_E = ROOT / "tests" / "data" / "multipl-e"
MULTIPL_E_DIFFERENCES = ROOT / "tests" / "data" / "multipl_e_differences.json"
# MultiPL-E's file code of each language that has stored completions.
MULTIPL_E_CODES = {"csharp": "cs", "d": "d", "lua": "lua", "php": "php", "perl": "pl", "r": "r", "ruby": "rb",
                   "racket": "rkt", "scala": "scala", "bash": "sh", "elixir": "elixir", "haskell": "hs",
                   "ocaml": "ml", "clojure": "clj"}

# Per language: (wrong completion, looping completion) from a row. C++ by default.
DEFAULT_VARIANTS = {
    "cpp": (
        lambda row: "    return {};\n" + row["canonical_solution"],
        lambda row: "    for (volatile long passk_spin = 0;; passk_spin++) {}\n" + row["canonical_solution"],
    ),
}
# A line comment ("{}" is its text) that makes a sample distinct without changing what it does.
COMMENT = {"cpp": "// {}", "java": "// {}", "javascript": "// {}", "typescript": "// {}", "go": "// {}",
           "rust": "// {}", "csharp": "// {}", "d": "// {}", "scala": "// {}", "php": "// {}", "lua": "-- {}",
           "haskell": "-- {}", "perl": "# {}", "ruby": "# {}", "r": "# {}", "bash": "# {}", "elixir": "# {}",
           "racket": "; {}", "clojure": "; {}", "ocaml": "(* {} *)"}
# Looping completions for any problem where the stored one returns its own problem's type (Scala's `0L`,
# Haskell's `length`): `???` and a polymorphic loop have every type.
LOOPS = {
    "scala": "        while (true) {}\n        ???\n",
    "haskell": " let spin n = n `seq` spin (n + 1 :: Int) in spin 0\n",
}
# Default time limits (both sides): 2 s, or more where the harness's one run also starts a JVM or compiles
# (runghc, clojure.main, scala, elixir), which a run of a right answer must fit in on a loaded machine.
TIME_LIMITS = {"clojure": 5.0, "haskell": 5.0, "scala": 5.0, "elixir": 5.0}


@dataclass
class Workload:
    source: str  # "humaneval-x" or "multipl-e"
    problems: list[dict]  # the dataset's problems, in API form
    samples: list[dict] = field(default_factory=list)  # {"problem_id", "completion"}
    programs: list[str] = field(default_factory=list)  # each sample's program as the original harness runs it
    labels: list[str] = field(default_factory=list)  # "<problem> <kind>", as multipl_e_differences.json names them


def tenfold(language: str, right: str, wrong: str, loop: str) -> list[tuple[str, str]]:
    """(kind, completion) of one problem's 10 samples."""
    comment = COMMENT.get(language, "// {}")
    return [("correct", right), ("correct", right), ("correct", right + "\n" + comment.format("sample 2") + "\n"),
            ("correct", right + "\n" + comment.format("sample 3") + "\n"), ("wrong", wrong), ("wrong", wrong),
            ("wrong", wrong + "\n" + comment.format("sample 6") + "\n"),
            ("wrong", wrong + "\n" + comment.format("sample 7") + "\n"), ("loops", loop), ("loops", loop)]


def humaneval_x_workload(language: str, limit: int) -> Workload:
    lang = languages.get(language)
    with gzip.open(SHARED / f"humaneval_{FILE_NAMES[language]}.jsonl.gz", "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()][:limit]
    wrong, loop = DEFAULT_VARIANTS.get(language) or lang.extra["bench"]
    found = Workload("humaneval-x", [to_problem(row) for row in rows])
    for row in rows:
        for kind, completion in tenfold(language, row["canonical_solution"], wrong(row), loop(row)):
            found.samples.append({"problem_id": row["task_id"], "completion": completion})
            found.programs.append(lang.humaneval_x_program(row["prompt"], row["declaration"], completion, row["test"]))
            found.labels.append(f"{row['task_id']} {kind}")
    return found


def multipl_e_workload(language: str, limit: int) -> Workload:
    code = MULTIPL_E_CODES[language]
    rows = {}
    for line in (MULTIPL_E / f"{code}.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            rows[row["name"]] = row
    solutions = json.loads((MULTIPL_E / "solutions" / f"{code}.json").read_text())
    loop = LOOPS.get(language) or next(variants["loops"] for variants in solutions.values() if "loops" in variants)
    chosen = [name for name, variants in solutions.items()
              if isinstance(variants.get("correct"), str) and isinstance(variants.get("wrong"), str)][:limit]
    found = Workload("multipl-e", [to_problem(rows[name]) for name in chosen])
    for name in chosen:
        row = rows[name]
        for kind, completion in tenfold(language, solutions[name]["correct"], solutions[name]["wrong"], loop):
            found.samples.append({"problem_id": name, "completion": completion})
            found.programs.append(row["prompt"] + completion + "\n" + row["tests"])
            found.labels.append(f"{name} {kind}")
    return found


def workload(language: str, limit: int) -> Workload:
    """The language's workload from the data it has: HumanEval-X's canonical solutions, else MultiPL-E's rows
    with stored completions."""
    return humaneval_x_workload(language, limit) if language in FILE_NAMES else multipl_e_workload(language, limit)


def time_reference(language: str, work: Workload, time_limit_s: float, workers: int) -> tuple[float, dict]:
    """Seconds of the original harness's run of every sample (one container, `workers` at a time), and each
    sample's result ({"passed", "exit_code", "timed_out", ...}) by its index (a string)."""
    lang = languages.get(language)
    client = connect()
    image = ensure_language_image(client, lang)
    started = time.monotonic()
    results = run_reference(client, image, lang, reference_programs(work), workers=workers, timeout_s=time_limit_s,
                            build_timeout_s=reference_build_timeout(work))
    return time.monotonic() - started, results


def reference_programs(work: Workload) -> dict[str, str]:
    return {str(index): program for index, program in enumerate(work.programs)}


def reference_build_timeout(work: Workload) -> float | None:
    """HumanEval-X's execution.py gives a build 60 s; MultiPL-E's harness has its own (reference_pass)."""
    return 60.0 if work.source == "humaneval-x" else None


def rerun_reference_timeouts(language: str, work: Workload, results: dict, got: list[dict],
                             time_limit_s: float) -> int:
    """The reference's wall-clock timeouts of samples passk passed, run again alone (after the clock) before
    they count as differences: on a loaded machine a start-up alone can take the whole limit."""
    lang = languages.get(language)
    client = connect()
    passed = {str(index) for index, mine in enumerate(got) if mine["verdict"] == "passed"}
    return rerun_alone(client, ensure_language_image(client, lang), lang, reference_programs(work), results,
                       passed, timeout_s=time_limit_s, build_timeout_s=reference_build_timeout(work))


def run_passk(language: str, source: str, problems: list[dict], samples: list[dict], time_limit_s: float,
              workers: int, cache: bool) -> tuple[float, list[dict], str]:
    log_path = Path(tempfile.mkdtemp()) / "stack.log"
    with LocalStack(prefix="passk_bench_lang", log_path=log_path) as stack:
        client = stack.client(timeout=600)
        dataset = client.post("/v1/datasets", json={
            "name": f"{source}-{language}", "language": language, "time_limit_s": time_limit_s, "problems": problems,
        }).raise_for_status().json()
        # Warm: the worker builds or finds the image and probes the toolchain before the clock starts.
        stack.start_worker(concurrency=workers)
        warm = client.post("/v1/runs", json={"dataset_id": dataset["id"], "model": "warm", "sampling": {"temperature": 0.0},
                                             "samples": [samples[0]]}).raise_for_status().json()
        wait_for_run(client, warm["id"], timeout_s=1800)
        started = time.monotonic()
        run = client.post("/v1/runs", json={"dataset_id": dataset["id"], "model": "bench", "sampling": {"temperature": 0.0},
                                            "samples": samples, "cache": cache}).raise_for_status().json()
        wait_for_run(client, run["id"], timeout_s=7200)
        wall = time.monotonic() - started
        with stack.passk_client() as passk:
            got = list(passk.iter_samples(run["id"]))
        stack.stop_workers()
    return wall, got, log_path.read_text(errors="replace")


@dataclass
class Figures:
    language: str
    source: str
    problems: int
    samples: int
    time_limit_s: float
    reference_s: float
    passk_s: float
    listed: int  # verdict differences listed with their reason
    unexplained: int


def bench(language: str, args: argparse.Namespace) -> Figures:
    work = workload(language, args.problems)
    time_limit = args.time_limit or TIME_LIMITS.get(language, 2.0)
    ref_s, results = time_reference(language, work, time_limit, args.workers)
    print(f"reference done: {ref_s:.1f} s for {len(work.samples)} samples", flush=True)
    passk_s, got, log = run_passk(language, work.source, work.problems, work.samples, time_limit, args.workers,
                                  not args.no_cache)
    reruns = rerun_reference_timeouts(language, work, results, got, time_limit)
    reference = [results[str(index)] for index in range(len(work.samples))]
    known = json.loads(MULTIPL_E_DIFFERENCES.read_text()).get(language, {}) if work.source == "multipl-e" else {}
    differences = [
        (label, index % 10, "passed" if ref["passed"] else f"exit {ref['exit_code']}" + " timeout" * ref["timed_out"],
         mine["verdict"], (mine["detail"] or "")[:120])
        for index, (label, ref, mine) in enumerate(zip(work.labels, reference, got, strict=True))
        if ref["passed"] != (mine["verdict"] == "passed")
    ]
    listed = [difference for difference in differences if difference[0] in known]
    counts: dict[str, int] = {}
    for mine in got:
        counts[mine["verdict"]] = counts.get(mine["verdict"], 0) + 1
    n = len(work.samples)
    print(f"\n== {language} ({work.source}): {len(work.problems)} problems x 10 = {n} samples, time limit "
          f"{time_limit:g} s, {args.workers} workers each")
    print(f"reference ({' && '.join(languages.get(language).reference_commands)}): {ref_s:.1f} s, {n / ref_s:.2f} samples/s")
    print(f"passk (API + worker, result cache {'off' if args.no_cache else 'on'}): {passk_s:.1f} s, "
          f"{n / passk_s:.2f} samples/s")
    print(f"ratio passk / reference: {ref_s / passk_s:.2f}x")
    print(f"reference timeouts of samples passk passed, run again alone before they count: {reruns}")
    print(f"passk verdicts: {counts}; {sum(bool(m.get('rerun')) for m in got)} wall-clock timeouts re-run alone"
          " (under load)")
    # Where passk's time went: the sandboxes' CPU (compile + run of each executed sample), against the wall.
    executed = [mine for mine in got if not mine.get("cached")]
    cpu_s = sum(mine.get("cpu_ms") or 0.0 for mine in executed) / 1000
    loops_s = sum(mine.get("cpu_ms") or 0.0 for mine in executed if mine["verdict"] == "timeout") / 1000
    print(f"passk sandbox CPU: {cpu_s:.1f} s in {len(executed)} executed samples ({loops_s:.1f} s of it in timeouts,"
          f" {(cpu_s - loops_s) / max(1, len(executed) - sum(m['verdict'] == 'timeout' for m in executed)):.3f} s"
          f" per other sample); {cpu_s / args.workers:.1f} s of the {passk_s:.1f} s wall on {args.workers} cores")
    print(f"compile cache (worker threads, warm-up included): {compile_stats(log)}")
    print(f"verdict differences (pass vs not): {len(differences)}" + (
        f", {len(listed)} of them listed with their reason in {MULTIPL_E_DIFFERENCES.name},"
        f" {len(differences) - len(listed)} unexplained" if work.source == "multipl-e" else ""))
    for difference in differences[:20]:
        print("   ", "(listed)" * (difference in listed), difference)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    return Figures(language, work.source, len(work.problems), n, time_limit, ref_s, passk_s, len(listed),
                   len(differences) - len(listed))


def table(figures: list[Figures]) -> str:
    lines = ["| Language | Workload | Samples | Time limit | Reference (samples/s) | passk (samples/s) | passk / reference"
             " | Verdict differences |", "|---|---|---:|---:|---:|---:|---:|---|"]
    for f in figures:
        lines.append(f"| {f.language} | {f.source}, {f.problems} problems | {f.samples} | {f.time_limit_s:g} s"
                     f" | {f.samples / f.reference_s:.2f} | {f.samples / f.passk_s:.2f} | {f.reference_s / f.passk_s:.2f}x"
                     f" | {f.listed + f.unexplained} ({f.listed} listed, {f.unexplained} unexplained) |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--language", action="append", default=None,
                        help="a language (repeatable), `multipl-e` (the languages from MultiPL-E) or `all`")
    parser.add_argument("--problems", type=int, default=164, help="at most this many problems per language")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="seconds per sample, both sides (default: 2, or TIME_LIMITS' for the language)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-cache", action="store_true",
                        help="run passk with the result cache off (identical samples then hit the compile cache)")
    args = parser.parse_args()
    groups = {"all": [*FILE_NAMES, *MULTIPL_E_CODES], "multipl-e": list(MULTIPL_E_CODES)}
    chosen: list[str] = []
    for name in args.language or ["cpp"]:
        chosen += groups[name] if name in groups else [languages.resolve(name).name]
    unknown = [name for name in chosen if name not in FILE_NAMES and name not in MULTIPL_E_CODES]
    if unknown:
        parser.error(f"no workload for {', '.join(unknown)}: HumanEval-X's languages are {', '.join(FILE_NAMES)};"
                     f" MultiPL-E's, {', '.join(MULTIPL_E_CODES)}")
    figures = [bench(language, args) for language in chosen]
    if len(figures) > 1:
        print("\n" + table(figures))


def compile_stats(log: str) -> str:
    """Sum of the worker threads' 'compiles=N compile_hits=M pch_builds=...' lines (logged when they stop)."""
    names = ("compiles", "compile_hits", "pch_builds", "pch_hits", "pch_prebuilt", "pch_rejected")
    total = dict.fromkeys(names, 0)
    for line in log.splitlines():
        if "compile_hits=" in line:
            fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
            for name in names:
                total[name] += int(fields.get(name, 0))
    text = f"{total['compiles']} compiles, {total['compile_hits']} from the cache"
    if any(total[name] for name in names[2:]):
        text += (f"; precompiled headers: {total['pch_prebuilt']} from the image, {total['pch_builds']} built,"
                 f" {total['pch_hits']} reused, {total['pch_rejected']} rejected by the compiler")
    return text


if __name__ == "__main__":
    main()
