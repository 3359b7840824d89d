"""Groups by tag: micro and macro averages, the stratified bootstrap, fallbacks."""

from __future__ import annotations

import numpy as np
import pytest

from service.statistics import bootstrap_means
from service.statistics.groups import MAX_GROUPS, TooManyGroups, group_intervals


def _run(values: np.ndarray, tags: list[list[str]], **kwargs: object):  # type: ignore[no-untyped-def]
    options = {"resamples": 2000, "confidence": 0.95, "seed": 0, "method": "bca", **kwargs}
    return group_intervals(values, tags, **options)  # type: ignore[arg-type]


def test_micro_and_macro_differ_and_are_labelled() -> None:
    # The seed's multilingual example: 900 items at 90%, 100 items at 60%.
    values = np.array([1.0] * 810 + [0.0] * 90 + [1.0] * 60 + [0.0] * 40)[:, None]
    tags = [["lang:en"]] * 900 + [["lang:hi"]] * 100
    result = _run(values, tags)
    assert [g.tag for g in result.groups] == ["lang:en", "lang:hi"]
    assert [g.problems for g in result.groups] == [900, 100]
    assert result.micro[0].estimate == pytest.approx(0.87)
    assert result.macro[0].estimate == pytest.approx(0.75)
    assert "micro" in result.micro_label and "macro" in result.macro_label
    assert (result.untagged_problems, result.overlapping) == (0, False)
    # Macro weighs the small, noisier group as much as the big one: wider interval.
    micro_width = result.micro[0].ci_high - result.micro[0].ci_low
    macro_width = result.macro[0].ci_high - result.macro[0].ci_low
    assert macro_width > micro_width
    assert result.macro[0].ci_low < 0.75 < result.macro[0].ci_high
    # Stratified SE: sqrt(SE_en^2 + SE_hi^2) / 2.
    se_en, se_hi = (g.intervals[0].standard_error for g in result.groups)
    assert result.macro[0].standard_error == pytest.approx(np.hypot(se_en, se_hi) / 2)


def test_micro_is_the_runs_interval_when_every_problem_is_tagged() -> None:
    values = np.random.default_rng(1).random((120, 2))
    tags = [["a"] if i % 3 else ["b"] for i in range(120)]
    result = _run(values, tags, seed=7)
    assert result.micro == bootstrap_means(values, resamples=2000, seed=7)


def test_tag_prefix_selects_one_facet_and_counts_untagged() -> None:
    values = np.random.default_rng(2).random((60, 1))
    tags = [[f"difficulty:{'easy' if i % 2 else 'hard'}", "topic:strings"] if i < 50 else ["topic:math"] for i in range(60)]
    result = _run(values, tags, tag_prefix="difficulty:")
    assert [g.tag for g in result.groups] == ["difficulty:easy", "difficulty:hard"]
    assert result.untagged_problems == 10 and result.micro_problems == 50
    assert result.micro[0].estimate == pytest.approx(values[:50, 0].mean())
    everything = _run(values, tags)
    assert everything.overlapping and everything.untagged_problems == 0


def test_a_group_interval_does_not_depend_on_the_other_groups() -> None:
    values = np.random.default_rng(3).random((90, 1))
    tags = [["x"] if i < 40 else ["y"] for i in range(90)]
    alone = _run(values[:40], tags[:40])
    together = _run(values, tags)
    assert alone.groups[0] == together.groups[0]


def test_all_solved_groups_get_exact_bounds() -> None:
    values = np.ones((30, 1))
    result = _run(values, [["a"]] * 10 + [["b"]] * 20)
    for group, m in zip(result.groups, (10, 20), strict=True):
        assert group.intervals[0].method_used == "clopper-pearson"
        assert group.intervals[0].ci_low == pytest.approx(0.025 ** (1 / m))
    macro = result.macro[0]
    assert (macro.estimate, macro.ci_high, macro.method_used) == (1.0, 1.0, "clopper-pearson")
    # Bonferroni over the two groups: each bound at alpha / 2.
    assert macro.ci_low == pytest.approx((0.0125 ** (1 / 10) + 0.0125 ** (1 / 20)) / 2)


def test_groups_of_single_problems_have_no_macro_interval() -> None:
    values = np.array([[0.2], [0.9], [0.4]])
    result = _run(values, [["a"], ["b"], ["c"]])
    assert result.macro[0].method_used == "none" and "no group varies" in (result.macro[0].fallback_reason or "")
    assert result.macro[0].estimate == pytest.approx(0.5)


def test_no_tags_and_too_many_tags() -> None:
    empty = _run(np.ones((3, 1)), [[], [], []])
    assert (empty.groups, empty.micro, empty.macro, empty.untagged_problems) == ([], [], [], 3)
    with pytest.raises(TooManyGroups):
        _run(np.ones((MAX_GROUPS + 1, 1)), [[f"t{i}"] for i in range(MAX_GROUPS + 1)])


def test_small_groups_are_named_in_a_warning() -> None:
    values = np.random.default_rng(4).random((164, 1))
    tags = [["a"]] * 4 + [["b"]] * 10 + [["c"]] * 150
    result = _run(values, tags)
    assert result.warnings == [
        "fewer than 30 problems in tag 'a' (4), 'b' (10): intervals over so few problems are unreliable (bootstrap "
        "intervals tend to be too narrow), and the macro average weighs each as much as any other"
    ]
    assert _run(values, [["c"]] * 164).warnings == []


def test_a_small_group_is_stretched_by_its_bootstrap_shrinkage() -> None:
    # The bootstrap distribution of a mean of m values has variance (m - 1)/m s^2/m; stretched by sqrt(m/(m - 1))
    # its percentile interval is as wide as s/sqrt(m) calls for. The exact bootstrap variance of 4 values:
    x = np.array([0.1, 0.4, 0.5, 0.9])
    (interval,) = group_intervals(x[:, None], [["a"]] * 4, resamples=20_000, confidence=0.95, seed=1,
                                  method="percentile").groups[0].intervals
    from service.statistics import resample_means
    from service.statistics.bootstrap import derive_seed

    raw = resample_means(x[:, None], resamples=20_000, seed=derive_seed(1, "group:a"))[:, 0]
    stretched = x.mean() + np.sqrt(4 / 3) * (raw - x.mean())
    assert interval.ci_low == pytest.approx(np.quantile(stretched, 0.025), abs=1e-12)
    assert interval.ci_high == pytest.approx(np.quantile(stretched, 0.975), abs=1e-12)
    assert stretched.var() == pytest.approx(x.var(ddof=1) / 4, rel=0.03)  # the CLT variance it reports
    assert interval.standard_error == pytest.approx(x.std(ddof=1) / 2, rel=1e-12)


def test_a_frozen_group_gives_the_macro_a_standard_error_that_matches_its_widened_interval() -> None:
    # 80 + 80 problems, plus a group of one problem at 0.3: the widened interval is honest, and its standard
    # error says as much (the bootstrap's own, 0.016, would claim the single problem's group is known).
    rng = np.random.default_rng(5)
    values = np.vstack([rng.binomial(1, 0.5, (160, 1)).astype(float), [[0.3]]])
    tags = [["a"]] * 80 + [["b"]] * 80 + [["c"]]
    macro = _run(values, tags, resamples=4000).macro[0]
    assert macro.method_used == "widened"
    assert macro.standard_error == pytest.approx((macro.ci_high - macro.ci_low) / (2 * 1.959964), rel=1e-6)
    assert macro.standard_error > 0.08  # the truth at k = 1 is about 0.085
    assert "widened interval's width" in (macro.standard_error_note or "")
    # and the frozen group's own interval: none, so no standard error either
    frozen = _run(values, tags, resamples=4000).groups[2].intervals[0]
    assert frozen.standard_error is None and frozen.standard_error_note
