"""Koopman's (1984) score test and interval for the ratio of two binomial proportions.

For counts ``x0`` of ``n0`` and ``x1`` of ``n1`` and ``H0: p0 / p1 = ratio``, the statistic is
``(x0 / n0 - ratio x1 / n1) / sqrt(q0 (1 - q0) / n0 + ratio^2 q1 (1 - q1) / n1)`` with ``q1`` the
maximum-likelihood ``p1`` under ``H0`` (a root of ``A q^2 + B q + C``) and ``q0 = ratio q1``
(no continuity correction; statsmodels' ``method="score"`` inverts the same statistic). The
interval is the set of ratios whose statistic lies within the normal quantile: it always holds
the estimate ``(x0 / n0) / (x1 / n1)``, where the statistic is 0.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

__all__ = ["score_statistic", "ratio_interval"]


def score_statistic(x1, n1, x0, n0, ratio) -> np.ndarray:
    """Koopman's score statistic for ``H0: p0 / p1 = ratio`` (vectorised, broadcasting)."""
    x1, x0 = np.asarray(x1, dtype=float), np.asarray(x0, dtype=float)
    n1, n0 = float(n1), float(n0)
    ratio = np.asarray(ratio, dtype=float)
    a = ratio * (n0 + n1)
    b = -(ratio * n0 + x0 + n1 + ratio * x1)
    c = x0 + x1
    with np.errstate(invalid="ignore", divide="ignore"):
        # the smaller root without cancellation: (-b - sqrt(D)) / 2a = 2c / (-b + sqrt(D))
        q1 = 2 * c / (-b + np.sqrt(np.maximum(b * b - 4 * a * c, 0.0)))
        q0 = ratio * q1
        numerator = x0 / n0 - ratio * x1 / n1
        variance = q0 * (1 - q0) / n0 + ratio**2 * q1 * (1 - q1) / n1
        z = numerator / np.sqrt(variance)
    # a degenerate null (variance 0) is consistent with the data only where they agree with it
    edge = np.where(numerator == 0, 0.0, np.copysign(np.inf, numerator))
    return np.where(variance > 0, z, edge)


def ratio_interval(x1: int, n1: int, x0: int, n0: int, alpha: float) -> tuple[float, float]:
    """Two-sided ``1 - alpha`` score interval for ``p0 / p1`` (ends may be 0 or ``inf``).

    Each end is the root of ``|statistic| = z_{1 - alpha/2}`` on its side of the estimate, found
    by Brent's method after bracketing geometrically; the statistic decreases in the ratio.
    """
    limit = -special.ndtri(alpha / 2)
    estimate = (x0 / n0) / (x1 / n1) if x1 > 0 else math.inf

    def excess(log_ratio: float, target: float) -> float:
        return float(score_statistic(x1, n1, x0, n0, math.exp(log_ratio))) - target

    if x0 == 0:
        low = 0.0
    else:
        top = math.log(estimate) if math.isfinite(estimate) else math.log(x0 / n0) + 50.0
        bottom = top - 1.0
        while excess(bottom, limit) < 0:
            bottom -= 2 * (top - bottom)
            if bottom < -700:
                break
        low = math.exp(optimize.brentq(excess, bottom, top, args=(limit,), xtol=1e-14))
    if x1 == 0:
        high = math.inf
    else:
        bottom = math.log(estimate) if estimate > 0 else math.log(x1 / n1) - 50.0
        top = bottom + 1.0
        while excess(top, -limit) > 0:
            top += 2 * (top - bottom)
            if top > 700:
                return low, math.inf
        high = math.exp(optimize.brentq(excess, bottom, top, args=(-limit,), xtol=1e-14))
    return low, high
