"""Pure statistics for passk: unbiased pass@k / pass^k and bootstrap intervals."""

from service.statistics.bootstrap import Interval, bootstrap_means
from service.statistics.estimators import (
    KTooLarge,
    pass_at_k,
    pass_hat_k,
    per_problem_estimates,
    plugin_pass_at_k,
)

__all__ = [
    "Interval",
    "KTooLarge",
    "bootstrap_means",
    "pass_at_k",
    "pass_hat_k",
    "per_problem_estimates",
    "plugin_pass_at_k",
]
