"""service/statistics/languages.py: micro (pooled) and macro (mean of languages) pass@k, stratified bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from service.statistics import bootstrap_means
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
    """Both averages come from per-language resamples with per-language derived seeds, each stretched by
    sqrt(m / (m - 1)) about its language's mean (the bootstrap of a mean of m values is that much too narrow)."""
    values = {"cpp": BIG, "go": SMALL}
    summary = language_intervals(values, resamples=2000, confidence=0.9, seed=11, method="percentile")
    dists = {}
    for name, v in values.items():
        raw = resample_means(v, resamples=2000, seed=derive_seed(11, f"group:{name}"))
        m = v.shape[0]
        dists[name] = v.mean() + np.sqrt(m / (m - 1)) * (raw - v.mean())
    micro = np.sort((90 * dists["cpp"] + 10 * dists["go"])[:, 0] / 100)
    macro = np.sort((dists["cpp"] + dists["go"])[:, 0] / 2)
    for interval, dist in ((summary.micro[0], micro), (summary.macro[0], macro)):
        assert interval.ci_low == pytest.approx(np.quantile(dist, 0.05), abs=1e-9)
        assert interval.ci_high == pytest.approx(np.quantile(dist, 0.95), abs=1e-9)
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


# --- the same problems translated: resampled together -------------------------------------------------------


def _translated(seed: int = 0, problems: int = 164) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    """Three languages of one set of problems: a problem's difficulty p is shared, each language sees p^power."""
    rng = np.random.default_rng(seed)
    p = rng.beta(0.4, 0.4, problems)
    values = {name: (rng.binomial(10, p**power) / 10.0)[:, None] for name, power in (("cpp", 1.0), ("go", 1.4),
                                                                                      ("rust", 0.7))}
    prefixes = {"cpp": "CPP", "go": "Go", "rust": "Rust"}
    ids = {name: [f"{prefixes[name]}/{i}" for i in range(problems)] for name in values}
    return values, ids


def test_translated_problems_are_resampled_as_one_unit() -> None:
    values, ids = _translated()
    keys = {name: [f"HumanEval/{i}" for i in range(164)] for name in values}
    paired = language_intervals(values, resamples=4000, confidence=0.95, seed=2, method="bca", keys_by_language=keys,
                                ids_by_language=ids)
    assert paired.pairing is not None and paired.pairing.joint and paired.pairing.units == 164
    assert paired.pairing.keys[:2] == ["HumanEval/0", "HumanEval/1"] and paired.pairing.unmatched == {}
    # Every problem in all three: micro = macro = the mean of the per-problem averages over languages, and its
    # interval is that column's own bootstrap over problems (the units), with the same seed.
    unit = np.mean([values[name] for name in sorted(values)], axis=0)
    (reference,) = bootstrap_means(unit, resamples=4000, seed=derive_seed(2, "micro:joint"))
    micro = paired.micro[0]
    assert micro.estimate == pytest.approx(reference.estimate, rel=1e-12)
    assert (micro.ci_low, micro.ci_high) == pytest.approx((reference.ci_low, reference.ci_high), rel=1e-9)
    assert micro.standard_error == pytest.approx(stats.sem(unit[:, 0]), rel=1e-9)
    # Treated as independent strata, the shared difficulty is averaged away: the standard error is far too small.
    strata = language_intervals(values, resamples=4000, confidence=0.95, seed=2, method="bca")
    assert strata.pairing is None
    assert strata.micro[0].standard_error < 0.7 * micro.standard_error
    assert paired.macro[0].standard_error == pytest.approx(micro.standard_error, rel=1e-9)


def test_unmatched_problems_are_named_and_warned_about() -> None:
    values, ids = _translated(problems=40)
    values["go"], ids["go"] = values["go"][:35], ids["go"][:35]
    keys = {name: [i.split("/")[1] for i in ids[name]] for name in values}
    keys["rust"][39] = "extra"
    summary = language_intervals(values, resamples=500, confidence=0.95, seed=0, method="percentile",
                                 keys_by_language=keys, ids_by_language=ids)
    assert summary.pairing is not None and summary.pairing.joint
    # 35..38 are still shared by cpp and rust; cpp's 39 and rust's renamed one have no counterpart
    assert summary.pairing.unmatched == {"cpp": ["CPP/39"], "rust": ["Rust/39"]}
    assert summary.pairing.units == 41 and len(summary.pairing.keys) == 39
    assert any("1 of the rust problems (Rust/39) match no problem" in w for w in summary.warnings)


def test_languages_that_share_no_problem_stay_independent_strata_and_say_so() -> None:
    values = {"cpp": BIG, "go": SMALL}
    keys = {"cpp": [f"a{i}" for i in range(90)], "go": [f"b{i}" for i in range(10)]}
    summary = language_intervals(values, resamples=2000, confidence=0.9, seed=11, method="percentile",
                                 keys_by_language=keys)
    plain = language_intervals(values, resamples=2000, confidence=0.9, seed=11, method="percentile")
    assert summary.pairing is not None and not summary.pairing.joint
    assert (summary.micro, summary.macro) == (plain.micro, plain.macro)
    assert any("no problem id matches across the languages" in w for w in summary.warnings)
    assert any("fewer than 30 problems in go" in w for w in summary.warnings)
