"""Exact (Clopper-Pearson) binomial bounds for the review rates.

A QA sample finds few or no missed identifiers, which is exactly where the
normal approximation fails (it gives a zero-width interval at x = 0). The
release gate compares an *upper* bound with its limit, so that a small
sample with no findings does not pass as "zero residual PHI": the exact
bound shrinks only as more tokens are reviewed (about 3/n at x = 0, the
rule of three).
"""

from __future__ import annotations

import operator

from scipy.stats import beta


def _check(x: int, n: int, confidence: float) -> tuple[int, int, float]:
    """Counts must be whole numbers; bools are refused because True would silently count as 1."""
    if isinstance(x, bool) or isinstance(n, bool):
        raise ValueError("x and n must be integers, not booleans")
    try:
        x, n = operator.index(x), operator.index(n)
    except TypeError:
        raise ValueError("x and n must be integers") from None
    if n < 0 or x < 0 or x > n:
        raise ValueError(f"need 0 <= x <= n, got x={x}, n={n}")
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    return x, n, confidence


def clopper_pearson_upper(x: int, n: int, confidence: float = 0.95) -> float:
    """One-sided exact upper bound of a proportion after `x` events in `n` trials.

    With no trials nothing is known, so the bound is 1.0 (a gate then fails
    safe instead of passing an unreviewed sample).
    """
    x, n, confidence = _check(x, n, confidence)
    if n == 0 or x >= n:
        return 1.0
    return float(beta.ppf(confidence, x + 1, n - x))


def clopper_pearson_interval(x: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided exact interval, `(1 - confidence) / 2` in each tail.

    The ends are pinned at 0 (x == 0) and 1 (x == n) because the beta
    quantile is undefined there; n == 0 gives the uninformative (0, 1).
    """
    x, n, confidence = _check(x, n, confidence)
    tail = (1.0 - confidence) / 2.0
    lower = 0.0 if x == 0 else float(beta.ppf(tail, x, n - x + 1))
    upper = 1.0 if x == n else float(beta.ppf(1.0 - tail, x + 1, n - x))
    return lower, upper
