"""Throughput per language: HumanEval-X x 10 samples through passk's API vs the original harness's commands.

    .venv/bin/python bench/languages.py --language cpp                  # 164 problems x 10 samples
    .venv/bin/python bench/languages.py --language cpp --problems 40    # a quicker subset

Workload per problem (10 samples, the same for both sides): 4 canonical (2 byte-identical, 2 distinct by a
trailing comment), 4 wrong (2 identical, 2 distinct), 2 identical infinite loops. The language module's
`bench_variants` (sandbox/languages/<name>.py, `extra["bench"]`) or the defaults below make the wrong and
looping completions.

Reference: the language's `reference_commands` (HumanEval-X's execution.py: compile, then run, one process
per sample), run in the language's own sandbox image, in one container, with as many parallel workers as
passk's worker has threads, each sample with the same time limit. passk: a LocalStack (API over HTTP, one
worker process), timed from POST /v1/runs to status `completed`. Both on this machine, in this run.

With --no-cache passk runs every sample (identical ones then hit the per-container compile cache);
by default identical samples share one execution (the result cache), as in normal use.

Prints samples/s of each, the ratio, passk's compile-cache hits (from the worker's sandbox stats) and every
verdict difference (pass vs not pass) with its sample.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox import languages  # noqa: E402
from sandbox.engine import connect  # noqa: E402
from sandbox.images import ensure_language_image  # noqa: E402
from service.formats.loader import to_problem  # noqa: E402
from passk_dev.localstack import LocalStack, wait_for_run  # noqa: E402

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "humaneval-x"
FILE_NAMES = {"cpp": "cpp", "java": "java", "javascript": "js", "go": "go", "rust": "rust"}

# Per language: (wrong completion, looping completion) from a row. C++ by default.
DEFAULT_VARIANTS = {
    "cpp": (
        lambda row: "    return {};\n" + row["canonical_solution"],
        lambda row: "    for (volatile long passk_spin = 0;; passk_spin++) {}\n" + row["canonical_solution"],
    ),
}
COMMENT = {"cpp": "//", "java": "//", "javascript": "//", "typescript": "//", "go": "//", "rust": "//"}

# The reference harness, run inside the language's image (python3 is there: the supervisor's).
REFERENCE = r'''
import json, os, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
job = json.load(open(sys.argv[1]))
def one(item):
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        with open(os.path.join(d, job["source_file"]), "w") as f:
            f.write(item)
        for i, command in enumerate(job["commands"]):
            last = i == len(job["commands"]) - 1
            # As execution.py: one process per step, killed (its whole group) at the timeout.
            # HumanEval-X's JavaScript harness also fails a program that writes to stderr.
            err = open(os.path.join(d, ".stderr"), "wb") if last and job.get("stderr_fails") else subprocess.DEVNULL
            p = subprocess.Popen(command, shell=True, cwd=d, stdout=subprocess.DEVNULL, stderr=err,
                                 start_new_session=True)
            try:
                code = p.wait(timeout=job["timeout"] if last else 60)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.wait()
                return "timeout"
            if code != 0:
                return "failed" if last else "compile_error"
            if last and job.get("stderr_fails") and os.path.getsize(os.path.join(d, ".stderr")) > 0:
                return "failed"
    return "passed"
started = time.monotonic()
with ThreadPoolExecutor(job["workers"]) as pool:
    verdicts = list(pool.map(one, job["programs"]))
print(json.dumps({"seconds": time.monotonic() - started, "verdicts": verdicts}))
'''


def workload(rows: list[dict], language: str) -> list[dict]:
    wrong, loop = DEFAULT_VARIANTS.get(language) or languages.get(language).extra["bench"]
    comment = COMMENT.get(language, "//")
    samples = []
    for row in rows:
        canonical, bad, spin = row["canonical_solution"], wrong(row), loop(row)
        for completion in (canonical, canonical, canonical + f"\n{comment} sample 2\n", canonical + f"\n{comment} sample 3\n",
                           bad, bad, bad + f"\n{comment} sample 6\n", bad + f"\n{comment} sample 7\n", spin, spin):
            samples.append({"problem_id": row["task_id"], "completion": completion})
    return samples


def run_reference(language: str, rows: dict[str, dict], samples: list[dict], time_limit_s: float, workers: int) -> tuple[float, list[str]]:
    lang = languages.get(language)
    client = connect()
    image = ensure_language_image(client, language)
    programs = [
        lang.humaneval_x_program(rows[s["problem_id"]]["prompt"], rows[s["problem_id"]]["declaration"], s["completion"],
                                 rows[s["problem_id"]]["test"])
        for s in samples
    ]
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "job.json").write_text(json.dumps({
            "programs": programs, "commands": list(lang.reference_commands), "source_file": lang.source_file,
            "timeout": time_limit_s, "workers": workers, "stderr_fails": bool(lang.extra.get("reference_stderr_fails")),
        }))
        Path(tmp, "reference.py").write_text(REFERENCE)
        # The container runs as the candidate's uid: the directory mkdtemp made (0700, ours) must be readable.
        for path in (Path(tmp), Path(tmp, "job.json"), Path(tmp, "reference.py")):
            path.chmod(0o755)
        started = time.monotonic()
        output = client.containers.run(
            image, ["python3", "/bench/reference.py", "/bench/job.json"], entrypoint=[], user="10001:10001",
            network_mode="none", remove=True, volumes={tmp: {"bind": "/bench", "mode": "ro"}},
            nano_cpus=int(workers * 1e9), tmpfs={"/tmp": "size=1g,exec"},
        )
        wall = time.monotonic() - started
    result = json.loads(output.decode().strip().splitlines()[-1])
    return wall, result["verdicts"]


def run_passk(language: str, problems: list[dict], samples: list[dict], time_limit_s: float, workers: int,
              cache: bool) -> tuple[float, list[dict], str]:
    log_path = Path(tempfile.mkdtemp()) / "stack.log"
    with LocalStack(prefix="passk_bench_lang", log_path=log_path) as stack:
        client = stack.client(timeout=600)
        dataset = client.post("/v1/datasets", json={
            "name": f"humaneval-x-{language}", "language": language, "time_limit_s": time_limit_s, "problems": problems,
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--language", action="append", default=None)
    parser.add_argument("--problems", type=int, default=164)
    parser.add_argument("--time-limit", type=float, default=2.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-cache", action="store_true",
                        help="run passk with the result cache off (identical samples then hit the compile cache)")
    args = parser.parse_args()
    for language in args.language or ["cpp"]:
        path = SHARED / f"humaneval_{FILE_NAMES[language]}.jsonl.gz"
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle if line.strip()][: args.problems]
        by_id = {row["task_id"]: row for row in rows}
        samples = workload(rows, language)
        ref_s, ref_verdicts = run_reference(language, by_id, samples, args.time_limit, args.workers)
        print(f"reference done: {ref_s:.1f} s for {len(samples)} samples", flush=True)
        passk_s, got, log = run_passk(language, [to_problem(row) for row in rows], samples, args.time_limit, args.workers,
                                      not args.no_cache)
        differences = [
            (s["problem_id"], i % 10, ref, mine["verdict"], (mine["detail"] or "")[:120])
            for i, (s, ref, mine) in enumerate(zip(samples, ref_verdicts, got, strict=True))
            if (ref == "passed") != (mine["verdict"] == "passed")
        ]
        counts: dict[str, int] = {}
        for mine in got:
            counts[mine["verdict"]] = counts.get(mine["verdict"], 0) + 1
        n = len(samples)
        print(f"\n== {language}: {len(rows)} problems x 10 = {n} samples, time limit {args.time_limit:g} s, "
              f"{args.workers} workers each")
        print(f"reference ({' && '.join(languages.get(language).reference_commands)}): {ref_s:.1f} s, {n / ref_s:.2f} samples/s")
        print(f"passk (API + worker, result cache {'off' if args.no_cache else 'on'}): {passk_s:.1f} s, "
              f"{n / passk_s:.2f} samples/s")
        print(f"ratio passk / reference: {ref_s / passk_s:.2f}x")
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
        print(f"verdict differences (pass vs not): {len(differences)}")
        for difference in differences[:20]:
            print("   ", difference)


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
