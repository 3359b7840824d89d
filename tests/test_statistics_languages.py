"""service/statistics/languages.py: micro (pooled) and macro (mean of languages) pass@k, stratified bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from service.statistics.bootstrap import derive_seed, resample_means
from service.statistics.languages import language_intervals, micro_macro
from service.statistics.intervals import clt_standard_errors

# Seed 004's example, scaled down: 90 problems at 0.9 in one language, 10 at 0.6 in another.
BIG = np.array([[1.0]] * 81 + [[0.0]] * 9)
SMALL = np.array([[1.0]] * 6 + [[0.0]] * 4)


def test_micro_and_macro_exact_values() -> None:
    micro, macro = micro_macro({"cpp": BIG, "go": SMALL})
    assert micro[0] == pytest.approx(87 / 100)  # (81 + 6) / 100
    assert macro[0] == pytest.approx(0.75)  # (0.9 + 0.6) / 2
    summary = language_intervals({"go": SMALL, "cpp": BIG}, resamples=500, confidence=0.95, seed=3, method="percentile")
    assert [g.tag for g in summary.languages] == ["cpp", "go"] and [g.problems for g in summary.languages] == [90, 10]
    assert summary.micro[0].estimate == pytest.approx(0.87) and summary.macro[0].estimate == pytest.approx(0.75)
    assert summary.problems == 100 and "pooled" in summary.micro_label and "unweighted" in summary.macro_label


def test_stratified_percentile_intervals_by_hand() -> None:
    """Both averages come from per-language resamples with per-language derived seeds."""
    values = {"cpp": BIG, "go": SMALL}
    summary = language_intervals(values, resamples=2000, confidence=0.9, seed=11, method="percentile")
    dists = {name: resample_means(v, resamples=2000, seed=derive_seed(11, f"group:{name}")) for name, v in values.items()}
    micro = np.sort((90 * dists["cpp"] + 10 * dists["go"])[:, 0] / 100)
    macro = np.sort((dists["cpp"] + dists["go"])[:, 0] / 2)
    for interval, dist in ((summary.micro[0], micro), (summary.macro[0], macro)):
        assert interval.ci_low == pytest.approx(np.quantile(dist, 0.05, method="inverted_cdf"), abs=1e-9)
        assert interval.ci_high == pytest.approx(np.quantile(dist, 0.95, method="inverted_cdf"), abs=1e-9)
    # Standard errors of a stratified mean, against scipy's per-stratum standard error of the mean.
    se_cpp, se_go = stats.sem(BIG[:, 0]), stats.sem(SMALL[:, 0])
    assert summary.micro[0].standard_error == pytest.approx(np.hypot(0.9 * se_cpp, 0.1 * se_go))
    assert summary.macro[0].standard_error == pytest.approx(np.hypot(se_cpp, se_go) / 2)
    assert clt_standard_errors(SMALL)[0] == pytest.approx(se_go)


def test_seed_discipline_and_adding_a_language_moves_no_other() -> None:
    two = language_intervals({"cpp": BIG, "go": SMALL}, resamples=1000, confidence=0.95, seed=5, method="bca")
    again = language_intervals({"cpp": BIG, "go": SMALL}, resamples=1000, confidence=0.95, seed=5, method="bca")
    three = language_intervals({"cpp": BIG, "go": SMALL, "rust": SMALL[::-1]}, resamples=1000, confidence=0.95,
                               seed=5, method="bca")
    assert two == again
    assert three.languages[0] == two.languages[0] and three.languages[1] == two.languages[1]


def test_a_language_that_cannot_vary_is_bounded_honestly() -> None:
    summary = language_intervals({"cpp": BIG, "java": np.ones((5, 1))}, resamples=500, confidence=0.95, seed=0,
                                 method="bca")
    java = summary.languages[1].intervals[0]
    assert java.method_used == "clopper-pearson" and java.ci_high == 1.0
    assert summary.macro[0].ci_low is not None


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError):
        language_intervals({}, resamples=10, confidence=0.95, seed=0, method="bca")
    with pytest.raises(ValueError):
        language_intervals({"cpp": np.ones((2, 1)), "go": np.ones((2, 2))}, resamples=10, confidence=0.95, seed=0,
                           method="bca")
