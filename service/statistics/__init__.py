"""Pure statistics for passk: unbiased pass@k / pass^k, bootstrap intervals, paired tests, groups."""

from service.statistics.bootstrap import MAX_RESAMPLES, bootstrap_means, resample_means
from service.statistics.estimators import (
    KTooLarge,
    pass_at_k,
    pass_hat_k,
    per_problem_estimates,
    plugin_estimates,
    plugin_pass_at_k,
)
from service.statistics.intervals import METHODS, Interval, Method, wilson_interval
from service.statistics.paired import mcnemar, paired_bootstrap, sign_flip_p_value

__all__ = [
    "MAX_RESAMPLES",
    "METHODS",
    "Interval",
    "KTooLarge",
    "Method",
    "bootstrap_means",
    "mcnemar",
    "paired_bootstrap",
    "pass_at_k",
    "pass_hat_k",
    "per_problem_estimates",
    "plugin_estimates",
    "plugin_pass_at_k",
    "resample_means",
    "sign_flip_p_value",
    "wilson_interval",
]
