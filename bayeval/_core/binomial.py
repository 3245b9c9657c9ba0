"""Confidence intervals for a binomial proportion, vectorised over counts.

Every function takes the number of successes ``r``, the number of trials ``n`` (arrays that
broadcast) and ``tail``, the probability left outside each reported bound; a two-sided
equal-tailed interval at probability ``prob`` uses ``tail = (1 - prob) / 2``. The formulas are
those of Webber (2013) §2.5-2.7 and Agresti & Coull (1998); they agree with
``statsmodels.stats.proportion.proportion_confint`` (methods ``normal``, ``wilson``,
``agresti_coull``, ``beta`` and ``jeffreys``) to rounding error.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["BINOMIAL_METHODS", "binomial_bounds"]


def _wald(r, n, z):
    p = r / n
    half = z * np.sqrt(p * (1 - p) / n)
    return p - half, p + half


def _wilson(r, n, z):
    # Webber Eq. 12: the score interval, inverting normal tests at the candidate bounds.
    p = r / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # at r = 0 (r = n) the lower (upper) end is exactly 0 (1); computed as centre -/+ half it
    # can land an ulp inside, excluding the estimate
    return np.where(r == 0, 0.0, centre - half), np.where(r == n, 1.0, centre + half)


def _agresti_coull(r, n, z):
    # Webber Eq. 13 generalised: add z^2/2 successes and z^2/2 failures, then Wald.
    n_adj = n + z * z
    p_adj = (r + z * z / 2) / n_adj
    half = z * np.sqrt(p_adj * (1 - p_adj) / n_adj)
    return p_adj - half, p_adj + half


def _clopper_pearson(r, n, tail):
    # Inverted one-sided binomial tests, through the beta-binomial tail identity.
    with np.errstate(invalid="ignore"):
        low = np.where(r > 0, special.betaincinv(np.maximum(r, 1e-300), n - r + 1, tail), 0.0)
        high = np.where(r < n, special.betainccinv(r + 1, np.maximum(n - r, 1e-300), tail), 1.0)
    return low, high


def _jeffreys(r, n, tail):
    # Quantiles of the Beta(r + 1/2, n - r + 1/2) posterior (Webber §2.7).
    a, b = r + 0.5, n - r + 0.5
    return special.betaincinv(a, b, tail), special.betainccinv(a, b, tail)


_NORMAL_BASED = {"wald": _wald, "wilson": _wilson, "agresti-coull": _agresti_coull}
_BETA_BASED = {"clopper-pearson": _clopper_pearson, "jeffreys": _jeffreys}
BINOMIAL_METHODS = ("wald", "wilson", "agresti-coull", "clopper-pearson", "jeffreys")


def binomial_bounds(r, n, method: str, tail):
    """Lower and upper bounds, each leaving probability ``tail`` outside.

    Parameters
    ----------
    r, n : array_like of int
        Successes and trials (``0 <= r <= n``, ``n >= 1``); broadcast together.
    method : {"wald", "wilson", "agresti-coull", "clopper-pearson", "jeffreys"}
        Interval family.
    tail : float or array_like
        Probability outside each bound, ``0 < tail < 0.5``.

    Returns
    -------
    low, high : numpy.ndarray
        Bounds; normal-based bounds are clipped to ``[0, 1]`` as statsmodels does.

    Examples
    --------
    >>> low, high = binomial_bounds(10, 20, "wilson", 0.025)
    >>> print(f"{float(low):.6f} {float(high):.6f}")
    0.299298 0.700702
    """
    r = np.asarray(r, dtype=float)
    n = np.asarray(n, dtype=float)
    tail = np.asarray(tail, dtype=float)
    if method in _NORMAL_BASED:
        z = -special.ndtri(tail)  # the upper-tail normal quantile
        low, high = _NORMAL_BASED[method](r, n, z)
        return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
    return _BETA_BASED[method](r, n, tail)
