"""Coverage curves of binomial proportion intervals (Webber 2013, §2.5-2.7, Figures 4-7).

A sample of ``n`` items from a population with prevalence ``pi`` holds ``r ~ Binomial(n, pi)``
positives, and an interval method turns each outcome ``r`` into an interval ``[l_r, h_r]``. The
coverage at ``pi`` is the probability that the interval contains ``pi``:

    C(pi) = sum_{r=0}^{n} Binom(r; n, pi) 1[l_r <= pi <= h_r]      (closed intervals).

``C`` is a sum of polynomials switched on and off at the ``2 (n + 1)`` interval ends, so it is
smooth between consecutive ends and can jump only at an end ("discontinuities are shown in gray",
captions of Figures 4-7). Its average over a uniform ``pi`` has a closed form through regularized
incomplete beta functions.

Functions
---------
binomial_coverage
    The coverage curve of one method at one sample size, as an :class:`xarray.Dataset`.

:func:`bayeval.plots.coverage.plot_binomial_coverage` draws a curve in the style of Webber's
Figures 4-7 (importable from here too).

References
----------
.. [1] W. Webber. Approximate recall confidence intervals. ACM Transactions on Information
   Systems 31(1), 2013, §2.5-2.7 and Figures 4-7.
.. [2] A. Agresti and B. A. Coull. Approximate is better than "exact" for interval estimation of
   binomial proportions. The American Statistician 52(2), 1998.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike
from scipy import special, stats

from bayeval._constraints import Array, OneOf, Optional, Prob, Whole, validate
from bayeval._core.binomial import BINOMIAL_METHODS, binomial_bounds
from bayeval.plots.coverage import plot_binomial_coverage

__all__ = ["binomial_coverage", "plot_binomial_coverage"]

#: Evenly spaced points of the default prevalence grid (both ends included).
GRID_POINTS = 2001

#: Upper limit on the elements of one ``outcomes x prevalences`` block, to bound memory.
_BLOCK = 2_000_000

_METHOD_NAMES = {
    "wald": "Wald",
    "wilson": "Wilson",
    "agresti-coull": "Agresti-Coull",
    "clopper-pearson": "Clopper-Pearson",
    "jeffreys": "Jeffreys",
}


def _intervals(n: int, method: str, prob: float) -> tuple[np.ndarray, np.ndarray]:
    """Compute the ``n + 1`` two-sided intervals as :func:`bayeval.binomial_interval` does."""
    r = np.arange(n + 1)
    low, high = binomial_bounds(r, n, method, (1.0 - prob) / 2.0)
    low, high = np.array(low, dtype=np.float64), np.array(high, dtype=np.float64)
    if method == "jeffreys":
        # Webber §2.7 (L229): "setting its lower end to 0 if r = 0, and the upper end to 1 if
        # r = n"; the same forcing as bayeval.intervals._engines.BinomialBounds.
        low[0], high[n] = 0.0, 1.0
    return low, high


def _covered_mass(low, high, n, pis, rule: Literal["at", "below", "above"]) -> np.ndarray:
    """``sum_r Binom(r; n, pi) 1[r covers pi]``, in blocks over ``pis``.

    ``rule="at"`` is the closed interval; ``"below"`` and ``"above"`` give the limits of ``C``
    as the prevalence tends to ``pi`` from below and from above (the binomial pmf is continuous
    in ``pi``, so only the indicators change: ``l_r < pi <= h_r`` and ``l_r <= pi < h_r``).
    """
    r = np.arange(n + 1)[:, None]
    lo, hi = low[:, None], high[:, None]
    out = np.empty(pis.shape, dtype=np.float64)
    step = max(1, _BLOCK // (n + 1))
    for start in range(0, pis.size, step):
        p = pis[None, start : start + step]
        if rule == "at":
            covered = (lo <= p) & (p <= hi)
        elif rule == "below":
            covered = (lo < p) & (p <= hi)
        else:
            covered = (lo <= p) & (p < hi)
        pmf = stats.binom.pmf(r, n, p)
        out[start : start + step] = np.where(covered, pmf, 0.0).sum(axis=0)
    return np.minimum(out, 1.0)  # a sum of pmf values may exceed 1 by rounding


def _default_grid(ends: np.ndarray) -> np.ndarray:
    """``GRID_POINTS`` even points in [0, 1], each end, and the floats either side of it."""
    parts = [
        np.linspace(0.0, 1.0, GRID_POINTS),
        ends,
        np.nextafter(ends, -np.inf),
        np.nextafter(ends, np.inf),
    ]
    return np.unique(np.clip(np.concatenate(parts), 0.0, 1.0))


@validate(
    n=Whole(minimum=1),
    method=OneOf(BINOMIAL_METHODS),
    prevalences=Optional(Array(at_least=0, at_most=1, atleast_1d=True)),
    prob=Prob(),
)
def binomial_coverage(
    n: int,
    method: Literal["wald", "wilson", "agresti-coull", "clopper-pearson", "jeffreys"],
    prevalences: ArrayLike | None = None,
    prob: float = 0.95,
) -> xr.Dataset:
    """Compute the coverage curve of a binomial proportion interval over the prevalence.

    For a sample of ``n`` and each prevalence ``pi``, the coverage is the probability, over
    ``r ~ Binomial(n, pi)``, that the interval computed from ``r`` contains ``pi``:
    ``C(pi) = sum_r Binom(r; n, pi) 1[l_r <= pi <= h_r]`` (Webber 2013, §2.5-2.7, Figures 4-7).

    Parameters
    ----------
    n : int
        Sample size (number of trials), at least 1. Webber's figures use ``n = 20``.
    method : {"wald", "wilson", "agresti-coull", "clopper-pearson", "jeffreys"}
        Interval method, as in :func:`bayeval.binomial_interval`: Wald (Figure 5), Wilson score
        (Figure 6, Eq. 12), Agresti-Coull (Eq. 13, no figure), Clopper-Pearson exact
        (Figure 4), Jeffreys (Figure 7, forced to 0 at ``r = 0`` and to 1 at ``r = n``).
    prevalences : array_like of float, optional
        Prevalences in ``[0, 1]`` to evaluate the curve at, kept in the given order. Default:
        2,001 evenly spaced points in ``[0, 1]`` plus every interval end and the floating-point
        numbers either side of it, sorted, so each jump is drawn as a vertical step.
    prob : float, default 0.95
        Nominal confidence level, in ``(0, 1)``; each bound leaves ``(1 - prob) / 2`` outside.

    Returns
    -------
    xarray.Dataset
        Dimensions ``prevalence``, ``r`` (the outcomes ``0..n``) and ``endpoint``, with

        - ``coverage`` (``prevalence``): ``C(pi)``;
        - ``lower``, ``upper`` (``r``): the interval computed from each outcome ``r``;
        - coordinate ``endpoint``: the distinct interval ends, sorted; ``C`` is smooth between
          consecutive ends and can jump only at one (the grey lines of Figures 4-7);
        - ``coverage_below``, ``coverage_at``, ``coverage_above`` (``endpoint``): the limit of
          ``C`` from the left (NaN at 0), its value, and its limit from the right (NaN at 1);

        and attributes ``method``, ``n``, ``prob`` and ``mean_coverage``, the exact average of
        ``C`` over a uniform prevalence on ``[0, 1]`` (not an average over the grid).

    Raises
    ------
    ValueError
        If ``n`` is not a positive whole number, ``method`` is not one of the five methods,
        ``prevalences`` is not a non-empty 1-d array in ``[0, 1]``, or ``prob`` is not in
        ``(0, 1)``.

    See Also
    --------
    bayeval.binomial_interval : One interval of the same methods.
    plot_binomial_coverage : Draw the curve as Webber's Figures 4-7 do.

    Notes
    -----
    The ``n + 1`` intervals are computed once, and the curve is vectorised over prevalences.
    Because the covered prevalences of outcome ``r`` form the interval ``[l_r, h_r]``, and
    ``int_a^b Binom(r; n, pi) dpi = (I_b(r + 1, n - r + 1) - I_a(r + 1, n - r + 1)) / (n + 1)``
    with ``I`` the regularized incomplete beta function, the mean coverage is exactly

    ``sum_r (I_{h_r}(r + 1, n - r + 1) - I_{l_r}(r + 1, n - r + 1)) / (n + 1)``.

    At ``n = 20`` and 95% this gives Clopper-Pearson 0.977, Wilson 0.953 and Jeffreys 0.951,
    Webber's figures to the printed digit, and Wald 0.8458 where Figure 5 prints 85.1%: the
    paper does not state its prevalence grid, and grid averages differ from the integral
    because of the steep jumps near 0 and 1 (0.856 on the 101 points ``0, 0.01, ..., 1``).
    Agresti-Coull, described by Webber without a figure, gives 0.9618.

    The default grid holds about ``2001 + 6 (n + 1)`` points and the work grows as ``n`` times
    that; for large ``n`` pass a coarser ``prevalences``.

    Examples
    --------
    >>> from bayeval.simulate.binomial import binomial_coverage
    >>> cov = binomial_coverage(20, "wilson")
    >>> print(f"mean coverage {cov.attrs['mean_coverage']:.3f}")
    mean coverage 0.953
    >>> print(f"C(0.5) = {float(cov.coverage.sel(prevalence=0.5)):.4f}")
    C(0.5) = 0.9586
    >>> cov.sizes["r"], cov.sizes["endpoint"]
    (21, 42)

    A few prevalences of the Wald interval, which covers badly near the edges (Figure 5):

    >>> wald = binomial_coverage(20, "wald", prevalences=[0.01, 0.1, 0.5])
    >>> print(wald.coverage.values.round(3))
    [0.182 0.876 0.959]
    """
    low, high = _intervals(n, method, prob)
    ends = np.unique(np.concatenate([low, high]))
    pis = _default_grid(ends) if prevalences is None else prevalences

    r = np.arange(n + 1)
    # Exact mean over a uniform prevalence: the binomial pmf integrated over each [l_r, h_r].
    mass = special.betainc(r + 1, n - r + 1, high) - special.betainc(r + 1, n - r + 1, low)
    mean_coverage = float(mass.sum() / (n + 1))

    below = _covered_mass(low, high, n, ends, "below")
    above = _covered_mass(low, high, n, ends, "above")
    below[ends == 0.0] = np.nan
    above[ends == 1.0] = np.nan
    name = _METHOD_NAMES[method]
    return xr.Dataset(
        data_vars={
            "coverage": (
                "prevalence",
                _covered_mass(low, high, n, pis, "at"),
                {"long_name": "coverage probability C(pi)"},
            ),
            "lower": ("r", low, {"long_name": "lower end of the interval from r positives"}),
            "upper": ("r", high, {"long_name": "upper end of the interval from r positives"}),
            "coverage_below": (
                "endpoint",
                below,
                {"long_name": "limit of C from below (left) at the endpoint"},
            ),
            "coverage_at": (
                "endpoint",
                _covered_mass(low, high, n, ends, "at"),
                {"long_name": "C at the endpoint (closed intervals)"},
            ),
            "coverage_above": (
                "endpoint",
                above,
                {"long_name": "limit of C from above (right) at the endpoint"},
            ),
        },
        coords={
            "prevalence": ("prevalence", pis, {"long_name": "population prevalence pi"}),
            "r": ("r", r, {"long_name": "positives in the sample"}),
            "endpoint": ("endpoint", ends, {"long_name": "distinct interval ends l_r, h_r"}),
        },
        attrs={
            "method": method,
            "method_name": name,
            "n": n,
            "prob": prob,
            "mean_coverage": mean_coverage,
            "reference": "Webber (2013), Approximate recall confidence intervals, §2.5-2.7, "
            "Figures 4-7",
        },
    )
