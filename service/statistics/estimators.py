"""Per-problem pass@k and pass^k estimators.

Given n samples for a problem of which c passed, the unbiased estimators
(Chen et al. 2021, "Evaluating Large Language Models Trained on Code") are

    pass@k = 1 - C(n - c, k) / C(n, k)   (some k-subset contains a pass)
    pass^k =     C(c, k)     / C(n, k)   (a random k-subset is all passes)

Both are computed as short products of ratios: the binomials themselves
overflow floats long before realistic n, while their ratio stays in [0, 1].
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

__all__ = [
    "KTooLarge",
    "pass_at_k",
    "pass_hat_k",
    "plugin_pass_at_k",
    "per_problem_estimates",
    "plugin_estimates",
]

# Upper bound on elements of one (problems x max k) factor matrix, so the
# vectorized path stays a few MB however many problems or how large k is.
_MAX_CHUNK_ELEMENTS = 1 << 18


class KTooLarge(ValueError):
    """k exceeds the number of samples available for at least one problem.

    The unbiased estimators need k <= n for every problem; answering anyway
    (e.g. reporting 1.0) would silently overstate the metric.
    """

    def __init__(self, k: int, min_n: int, problem_ids: Sequence[str] = ()) -> None:
        self.k = k
        self.min_n = min_n
        self.problem_ids: tuple[str, ...] = tuple(problem_ids)
        if self.problem_ids:
            where = f"e.g. problem {self.problem_ids[0]!r}"
            if len(self.problem_ids) > 1:
                others = len(self.problem_ids) - 1
                where += f" and {others} other{'s' if others > 1 else ''}"
            message = (
                f"k={k} exceeds the smallest number of samples per problem "
                f"(n={min_n}, {where}); choose k <= {min_n}"
            )
        else:
            message = f"k={k} exceeds the number of samples (n={min_n}); choose k <= {min_n}"
        super().__init__(message)

    def __reduce__(self) -> tuple[type[KTooLarge], tuple[int, int, tuple[str, ...]]]:
        # The default reduce would call __init__(message) and fail; keep the
        # exception picklable so it survives process pools.
        return (type(self), (self.k, self.min_n, self.problem_ids))


def _as_int(value: object, name: str) -> int:
    # bool is an int subclass; pass_at_k(True, ...) is almost surely a bug.
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be an integer, got bool")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None


def _validate(n: object, c: object, k: object) -> tuple[int, int, int]:
    """Check one (n, c, k) triple and return it as plain ints."""
    n_, c_, k_ = _as_int(n, "n"), _as_int(c, "c"), _as_int(k, "k")
    if n_ < 1:
        raise ValueError(f"n must be >= 1, got n={n_}")
    if not 0 <= c_ <= n_:
        raise ValueError(f"c must satisfy 0 <= c <= n, got c={c_}, n={n_}")
    if k_ < 1:
        raise ValueError(f"k must be >= 1, got k={k_}")
    if k_ > n_:
        raise KTooLarge(k_, n_)
    return n_, c_, k_


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k = 1 - C(n-c, k)/C(n, k) for c passes out of n samples.

    Raises ValueError for invalid counts and KTooLarge (a ValueError) if k > n.
    Same code path as per_problem_estimates, so the two agree bit for bit.
    """
    n, c, k = _validate(n, c, k)
    return float(_binomial_ratio(np.array([n - c]), np.array([n]), k)[1][0])


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k = C(c, k)/C(n, k): chance a random k-subset all passes.

    Raises ValueError for invalid counts and KTooLarge (a ValueError) if k > n.
    """
    n, c, k = _validate(n, c, k)
    return float(_binomial_ratio(np.array([c]), np.array([n]), k)[0][0])


def plugin_pass_at_k(n: int, c: int, k: int) -> float:
    """Plug-in estimate 1 - (1 - c/n)^k. BIASED: do not report it.

    Kept only to show the bias. 1 - (1 - p)^k is concave in p for k >= 2, so
    by Jensen's inequality the plug-in underestimates pass@k on average
    (worst when k is close to n). Validated like pass_at_k, including k <= n.
    """
    n, c, k = _validate(n, c, k)
    return 1.0 - (1.0 - c / n) ** k


def _as_count_array(values: object, name: str) -> np.ndarray:
    """Coerce a 1-D array-like of counts to int64, rejecting non-integers."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype == np.bool_:
        raise ValueError(f"{name} must contain integers, got booleans")
    if np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.int64, copy=False)
    if np.issubdtype(arr.dtype, np.floating):
        # Counts read back from JSON or a DataFrame often arrive as floats.
        if arr.size and not (np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
            raise ValueError(f"{name} must contain whole numbers")
        return arr.astype(np.int64)
    raise ValueError(f"{name} must contain integers, got dtype {arr.dtype}")


def _products(factors: np.ndarray, complements: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: r = prod(f) and 1 - r, where complements holds 1 - f formed exactly.

    1 - r is summed as sum_i x_i * prod_{l<i} f_l (telescoping), a sum of non-negative
    terms, so it is accurate relative to its own size: subtracting r from 1 would lose
    the digits of a small pass@k (1 - 199/200 is 0.0050000000000000044, not 0.005).
    """
    running = np.cumprod(factors, axis=1)
    before = np.empty_like(running)
    before[:, 0] = 1.0
    before[:, 1:] = running[:, :-1]
    # Sequential sums (cumsum), not pairwise: trailing padding terms of 0 then cannot change the
    # rounding, so a problem gets the same bits whatever other problems share its batch.
    # The sum is 1 - r <= 1 in exact arithmetic; keep rounding from stepping past it.
    return running[:, -1], np.minimum(np.cumsum(complements * before, axis=1)[:, -1], 1.0)


def _binomial_ratio(tops: np.ndarray, ns: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """r = C(top, k) / C(n, k) per row (top <= n, k <= n), and 1 - r, as the shorter exact product.

    Form A has k factors:       prod_{i<k}         (top - i) / (n - i),  1 - factor = (n - top) / (n - i)
    Form B has n - top factors: prod_{j=top+1}^{n}  (j - k) / j,          1 - factor = k / j   (Codex form)
    Every factor and complement is one correctly rounded division of integers, so fewer
    factors means less rounding: one pass in n = 200 samples gives pass@k = k/200 exactly
    (e.g. 0.5 at k = 100, where 100 factors of form A drift by a few ulps).
    top < k gives exactly r = 0 (no k-subset fits); top == n exactly r = 1; 1 - r likewise.
    """
    ratio = np.zeros(tops.shape[0], dtype=np.float64)
    complement = np.ones(tops.shape[0], dtype=np.float64)
    full = tops == ns
    ratio[full], complement[full] = 1.0, 0.0
    live = (tops >= k) & ~full
    short_b = (ns - tops) < k
    for rows_all, form_b in ((np.flatnonzero(live & ~short_b), False), (np.flatnonzero(live & short_b), True)):
        if not rows_all.size:
            continue
        # Form B rows have different factor counts; pad with exact factor 1, complement 0.
        width = int((ns[rows_all] - tops[rows_all]).max()) if form_b else k
        steps = np.arange(width, dtype=np.float64)
        chunk = max(1, _MAX_CHUNK_ELEMENTS // width)
        for start in range(0, rows_all.size, chunk):
            rows = rows_all[start : start + chunk]
            top = tops[rows, None].astype(np.float64)
            n = ns[rows, None].astype(np.float64)
            if form_b:
                j = top + 1.0 + steps
                used = steps < (n - top)
                factors = np.where(used, (j - k) / j, 1.0)
                complements = np.where(used, k / j, 0.0)
            else:
                factors = (top - steps) / (n - steps)  # n - i >= 1 since k <= n
                complements = (n - top) / (n - steps)
            ratio[rows], complement[rows] = _products(factors, complements)
    return ratio, complement


def _ratio_products(top: np.ndarray, ns: np.ndarray, ks: np.ndarray, *, complement: bool) -> np.ndarray:
    """C(top, k)/C(n, k) (or 1 minus it) for every row and every k in ks, shape (rows, len(ks))."""
    return np.column_stack([_binomial_ratio(top, ns, int(k))[1 if complement else 0] for k in ks])


def per_problem_estimates(
    ns: np.ndarray,
    cs: np.ndarray,
    ks: Sequence[int],
    problem_ids: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-problem pass@k and pass^k, each of shape (problems, len(ks)).

    Problems may have different n. Raises KTooLarge if any k exceeds min(ns),
    naming the largest k and the problems that bound it; ValueError for other
    invalid input. Averaging a column over problems gives the dataset metric.
    Boundary values (0.0, 1.0) are exact, and results equal pass_at_k and
    pass_hat_k bit for bit (same code); relative error is about
    min(k, c) * 1e-16 for pass@k and min(k, n - c) * 1e-16 for pass^k
    (relative to the value itself, small values included).
    """
    ns_arr = _as_count_array(ns, "ns")
    cs_arr = _as_count_array(cs, "cs")
    if ns_arr.shape != cs_arr.shape:
        raise ValueError(
            f"ns and cs must have the same length, got {ns_arr.size} and {cs_arr.size}"
        )
    if ns_arr.size == 0:
        raise ValueError("at least one problem is required")
    ids = None if problem_ids is None else [str(p) for p in problem_ids]
    if ids is not None and len(ids) != ns_arr.size:
        raise ValueError(f"problem_ids has {len(ids)} entries for {ns_arr.size} problems")

    def label(i: int) -> str:
        return ids[i] if ids is not None else f"#{i}"

    bad = np.flatnonzero(ns_arr < 1)
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"n must be >= 1, got n={ns_arr[i]} for problem {label(i)!r}")
    bad = np.flatnonzero((cs_arr < 0) | (cs_arr > ns_arr))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"c must satisfy 0 <= c <= n, got c={cs_arr[i]}, n={ns_arr[i]} for problem {label(i)!r}"
        )

    k_list = [_as_int(k, "k") for k in ks]
    if not k_list:
        raise ValueError("ks must contain at least one k")
    if min(k_list) < 1:
        raise ValueError(f"k must be >= 1, got k={min(k_list)}")
    min_n = int(ns_arr.min())
    largest_k = max(k_list)
    if largest_k > min_n:
        bounding = np.flatnonzero(ns_arr == min_n)
        raise KTooLarge(largest_k, min_n, [label(int(i)) for i in bounding])

    k_arr = np.asarray(k_list, dtype=np.int64)
    # 1 - pass@k = C(n-c, k)/C(n, k) and pass^k = C(c, k)/C(n, k): the same ratio with
    # a different numerator, whatever mix of n values the problems have.
    pass_at = _ratio_products(ns_arr - cs_arr, ns_arr, k_arr, complement=True)
    pass_hat = _ratio_products(cs_arr, ns_arr, k_arr, complement=False)
    return pass_at, pass_hat


def plugin_estimates(ns: np.ndarray, cs: np.ndarray, ks: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """BIASED plug-in estimates per problem, each of shape (problems, len(ks)).

    1 - (1 - c/n)^k (biased low: concave in c/n) and (c/n)^k (biased high: convex).
    Only for showing users the gap to the unbiased estimators; inputs must
    already have passed per_problem_estimates' validation.
    """
    p_hat = np.asarray(cs, dtype=np.float64) / np.asarray(ns, dtype=np.float64)
    k_arr = np.asarray(list(ks), dtype=np.float64)
    return 1.0 - (1.0 - p_hat[:, None]) ** k_arr, p_hat[:, None] ** k_arr
