"""Curves derived from an approximated precision function: yield, precision-recall and AP.

A :class:`~bayeval.curves.CurveResult` approximates the precision ``p(r)`` of the top ``r`` items
of a ranked list of ``N`` items. Three quantities follow from ``p`` alone:

- the *yield* ``Y(r) = r p(r)``, the number of positives among the top ``r`` items;
- the *recall* ``R(r) = Y(r) / Y(N)`` (the whole list is the retrievable set), so the
  precision-recall curve is ``r -> (R(r), p(r))``;
- the *average precision* ``AP = (1 / Y(N)) sum_{i positive} p(i)``, the area under the
  precision-recall step curve.

Everything here is evaluated at a set of ranks, never at all ``N`` of them, so lists of
``2 * 10**9`` items work. :func:`bayeval.curves.posterior.derived_from_posterior` turns the
posterior draws of :meth:`CurveResult.posterior_band` into draws of the same quantities.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from bayeval._constraints import Real, validate

__all__ = [
    "average_precision",
    "check_curve_result",
    "grid_average_precision",
    "pr_curve",
    "prefix_terms",
    "rank_grid",
    "yield_curve",
]


# --------------------------------------------------------------------------- validation


def check_curve_result(result: Any):
    """Return ``result`` if it is a :class:`~bayeval.curves.CurveResult`, else raise."""
    from bayeval.curves.result import CurveResult

    if not isinstance(result, CurveResult):
        raise ValueError(
            "`result` must be a bayeval.curves.CurveResult (from curves.paula, curves.logstrat "
            f"or curves.random_baseline); got {type(result).__name__}."
        )
    return result


def _grid_ranks(result, ranks: ArrayLike | None) -> np.ndarray:
    """Sorted distinct ranks from ``ranks`` (validated), or the default :func:`rank_grid`."""
    if ranks is None:
        return rank_grid(result)
    r = result._ranks(ranks).reshape(-1)
    if r.size == 0:
        raise ValueError("`ranks` must contain at least one rank; got an empty sequence.")
    return np.unique(r)


@validate(ratio=Real(above=1))
def rank_grid(result, ratio: float = 1.001) -> np.ndarray:
    """Build a rank grid for derived curves: every rank up to ``1 / (ratio - 1)``, then geometric.

    Parameters
    ----------
    result : CurveResult
        The run whose list the grid covers; its ``corners`` and ``exact_len`` are included.
    ratio : float, default 1.001
        Largest ``r_k / (r_{k-1} + 1)`` between consecutive grid ranks; must exceed 1.

    Returns
    -------
    numpy.ndarray of int64
        Increasing ranks from 1 to ``N`` (both included): ``1, ..., m`` with
        ``m = ceil(1 / (ratio - 1))``, then ``floor(m ratio^j)``, plus the corners of the step
        functions and ``exact_len``. About ``m + ln(N / m) / ln(ratio)`` ranks: 15,400 for
        ``N = 2 * 10**9`` at the default ratio.

    Notes
    -----
    For ``r_k = floor(m ratio^j)``, ``r_{k-1} + 1 > m ratio^(j-1)``, so
    ``r_k / (r_{k-1} + 1) < ratio``; adding ranks only lowers the ratios. This is the quantity
    that bounds the discretisation error of :func:`average_precision`.

    Examples
    --------
    >>> from bayeval import curves
    >>> from bayeval.oracles import CallableOracle
    >>> res = curves.paula(CallableOracle(lambda i: i % 3 != 2, n_items=10**6), 10**6)
    >>> grid = curves.rank_grid(res, ratio=1.01)
    >>> int(grid[0]), int(grid[-1]), bool(np.all(grid[1:] / (grid[:-1] + 1) <= 1.01))
    (1, 1000000, True)
    """
    result = check_curve_result(result)
    n = int(result.n_items)
    m = min(n, math.ceil(1.0 / (ratio - 1.0)))
    steps = math.ceil(math.log(max(n / m, 1.0)) / math.log(ratio)) + 1
    geometric = np.floor(m * ratio ** np.arange(steps + 1, dtype=np.float64))
    parts = [
        np.arange(1, m + 1, dtype=np.int64),
        geometric[geometric <= n].astype(np.int64),
        np.asarray(result.corners, dtype=np.int64),
        np.array([max(result.exact_len, 1), n], dtype=np.int64),
    ]
    grid = np.unique(np.concatenate(parts))
    return grid[(grid >= 1) & (grid <= n)]


# --------------------------------------------------------------------------- yield and PR


def yield_curve(result, ranks: ArrayLike):
    """Yield ``Y(r) = r p(r)`` (positives among the top ``r`` items) with its bounds.

    Parameters
    ----------
    result : CurveResult
        From :func:`~bayeval.curves.paula`, :func:`~bayeval.curves.logstrat` or
        :func:`~bayeval.curves.random_baseline`.
    ranks : int or array_like of int
        ``1 <= r <= N``; sorted and de-duplicated.

    Returns
    -------
    xarray.Dataset
        Variables ``estimate``, ``lower`` and ``upper`` with dim ``rank``.

    Notes
    -----
    ``estimate(r) = r * result.at(r)``, ``lower(r) = r * result.lower(r)`` and
    ``upper(r) = r * result.upper(r)``: multiplying by the known ``r`` keeps the guarantee of
    the envelope (``result.guarantee``) at each rank, with the same assumptions and probability.
    On the exact prefix the three are the true count.

    Examples
    --------
    >>> from bayeval import curves
    >>> from bayeval.oracles import CallableOracle
    >>> res = curves.paula(CallableOracle(lambda i: i % 4 != 3, n_items=10**6), 10**6)
    >>> ys = curves.yield_curve(res, [4, 10**6])
    >>> ys["estimate"].values.round(1).tolist()
    [3.0, 750000.0]
    >>> bool(ys["lower"][1] <= 750_000 <= ys["upper"][1])
    True
    """
    import xarray as xr

    result = check_curve_result(result)
    r = _grid_ranks(result, ranks)
    rf = r.astype(np.float64)
    return xr.Dataset(
        {
            "estimate": ("rank", rf * result.at(r)),
            "lower": ("rank", rf * result.lower(r)),
            "upper": ("rank", rf * result.upper(r)),
        },
        coords={"rank": r},
        attrs={"quantity": "yield", "method": result.method, "n_items": int(result.n_items)},
    )


def _recall_bounds(y_lo, y_hi, ranks, n, total_lo, total_hi):
    """Conservative recall bounds from yield bounds at ``ranks`` and at ``N`` (see pr_curve)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.maximum(y_lo / total_hi, y_lo / (y_lo + (n - ranks)))
        upper = y_hi / total_lo
    lower = np.where(np.isfinite(lower), lower, 0.0)
    upper = np.where(np.isfinite(upper), upper, 1.0)
    return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)


def pr_curve(result, ranks: ArrayLike | None = None):
    """Precision and recall at ranks, with bounds propagated from the envelope.

    Parameters
    ----------
    result : CurveResult
        From :func:`~bayeval.curves.paula`, :func:`~bayeval.curves.logstrat` or
        :func:`~bayeval.curves.random_baseline`.
    ranks : array_like of int, optional
        ``1 <= r <= N``, sorted and de-duplicated; default :func:`rank_grid`.

    Returns
    -------
    xarray.Dataset
        Dim ``rank``; variables ``precision``, ``precision_lower``, ``precision_upper``,
        ``recall``, ``recall_lower``, ``recall_upper``; attrs ``total_yield`` (the estimate
        ``N p(N)``), ``total_yield_lower`` and ``total_yield_upper``.

    Notes
    -----
    ``recall(r) = Y(r) / Y(N)`` with ``Y(r) = r p(r)``, estimated by plugging in
    ``result.estimate`` at ``r`` and at ``N`` (so the estimated recall is exactly 1 at
    ``N``; it need not be monotone, as the estimated yield of a step function may drop at a
    corner). NaN when the estimated total yield is 0.

    The bounds use only the envelope ``Y_lo(r) = r lower(r) <= Y(r) <= r upper(r) = Y_hi(r)``
    at ``r`` and at ``N``, and the facts ``Y(r) <= Y(N) <= Y(r) + N - r``:

    - ``recall_lower(r) = max(Y_lo(r) / Y_hi(N), Y_lo(r) / (Y_lo(r) + N - r))``,
    - ``recall_upper(r) = min(1, Y_hi(r) / Y_lo(N))``.

    Both hold whenever the envelope holds at ``r`` and at ``N``, so they carry
    ``result.guarantee`` (for the sampling methods, with its probability: the envelope holds at
    all ranks at once with probability at least ``1 - delta``). They are conservative: the
    errors at ``r`` and at ``N`` are treated as unrelated.

    Examples
    --------
    >>> from bayeval import curves
    >>> from bayeval.oracles import CallableOracle
    >>> n = 10**6
    >>> res = curves.paula(CallableOracle(lambda i: i < 1000 or i % 2 == 0, n_items=n), n)
    >>> pr = curves.pr_curve(res, [1000, 500_000, n])
    >>> pr["recall"].values.round(3).tolist()
    [0.002, 0.5, 1.0]
    >>> bool(np.all(pr["recall_lower"] <= pr["recall"])), float(pr["recall_upper"][-1])
    (True, 1.0)
    """
    import xarray as xr

    result = check_curve_result(result)
    r = _grid_ranks(result, ranks)
    n = int(result.n_items)
    rf = r.astype(np.float64)
    est, lo, hi = result.at(r), result.lower(r), result.upper(r)
    total = n * float(result.at(n))
    total_lo, total_hi = n * float(result.lower(n)), n * float(result.upper(n))
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = rf * est / total if total > 0 else np.full(r.shape, np.nan)
    recall_lower, recall_upper = _recall_bounds(rf * lo, rf * hi, rf, n, total_lo, total_hi)
    return xr.Dataset(
        {
            "precision": ("rank", est),
            "precision_lower": ("rank", lo),
            "precision_upper": ("rank", hi),
            "recall": ("rank", recall),
            "recall_lower": ("rank", recall_lower),
            "recall_upper": ("rank", recall_upper),
        },
        coords={"rank": r},
        attrs={
            "method": result.method,
            "n_items": n,
            "total_yield": total,
            "total_yield_lower": total_lo,
            "total_yield_upper": total_hi,
        },
    )


# --------------------------------------------------------------------------- average precision


def grid_average_precision(prefix_sum, y_prefix, ranks, precision, total):
    """``[c + sum_k p(r_k) (Y(r_k) - Y(r_{k-1}))] / Y(N)`` over grid ranks beyond the prefix.

    ``precision`` has shape ``(..., K)`` at ``ranks`` (all beyond the prefix ``1..e``,
    increasing, the last one ``N``); ``Y(r_0) = y_prefix`` at ``r_0 = e``; ``c = prefix_sum``.
    """
    ys = precision * ranks
    prev = np.concatenate([np.broadcast_to(y_prefix, ys.shape[:-1] + (1,)), ys[..., :-1]], -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (prefix_sum + np.sum(precision * (ys - prev), axis=-1)) / total


def prefix_terms(result, limit):
    """Exact ``sum_{i <= e, positive} p(i)`` and ``Y(e)`` for ``e = min(exact_len, limit)``."""
    e = int(min(result.exact_len, limit))
    counts = np.asarray(result.prefix_counts[: e + 1], dtype=np.float64)
    if e == 0:
        return 0.0, 0.0, 0
    r = np.arange(1, e + 1, dtype=np.float64)
    return float(np.sum(counts[1:] / r * np.diff(counts))), float(counts[e]), e


def _identity_sum(result, which):
    """``S(f) = sum_{r=1}^{N-1} (r f(r)^2 + f(r)) / (r + 1)`` for ``f`` = ``lower`` or ``upper``.

    Exact on the prefix (``f = p``) and in closed form on each constant piece of the step
    function ``result._steps(which)`` beyond it (the bound itself for step results, a step
    function below ``lower`` / above ``upper`` for AdaStrat), with
    ``sum_{r=a}^{b} 1 / (r + 1) = psi(b + 2) - psi(a + 1)``: O(exact_len + pieces).
    """
    from scipy.special import digamma

    n = int(result.n_items)
    e = int(min(result.exact_len, n - 1))
    total = 0.0
    if e > 0:
        r = np.arange(1, e + 1, dtype=np.float64)
        p = result.prefix_counts[1 : e + 1] / r
        total += float(np.sum((r * p**2 + p) / (r + 1)))
    if e < n - 1:
        starts, f = result._steps(which)
        ends = np.append(starts[1:] - 1, n - 1)
        a, b = starts.astype(np.float64), ends.astype(np.float64)
        harmonic = digamma(b + 2.0) - digamma(a + 1.0)
        total += float(np.sum(f**2 * ((b - a + 1.0) - harmonic) + f * harmonic))
    return total


def average_precision(result, ranks: ArrayLike | None = None):
    """Average precision: area under the estimated precision-recall curve, with bounds.

    Parameters
    ----------
    result : CurveResult
        From :func:`~bayeval.curves.paula`, :func:`~bayeval.curves.logstrat` or
        :func:`~bayeval.curves.random_baseline`.
    ranks : array_like of int, optional
        Grid of the discretisation beyond the exact prefix (ranks inside the prefix are
        ignored: it is summed exactly; ``N`` is added); default :func:`rank_grid`, whose
        consecutive ranks satisfy ``r_k / (r_{k-1} + 1) <= 1.001``.

    Returns
    -------
    xarray.Dataset
        Scalar variables ``estimate``, ``lower`` and ``upper``; attrs ``n_grid`` (grid ranks
        beyond the prefix), ``max_ratio`` (``rho`` below) and ``discretisation_bound``
        (the bound on ``|AP - AP_K|`` below).

    Notes
    -----
    **Definition.** The true average precision of the list is
    ``AP = (1 / Y(N)) sum_{i positive} p(i) = sum_{r=1}^N p(r) (R(r) - R(r - 1))``, which needs
    every rank. On a grid ``r_0 = e < r_1 < ... < r_K = N`` beyond the exact prefix
    ``1..e`` (summed rank by rank, exactly), ``estimate`` is

    ``AP_K = [sum_{i <= e positive} p(i) + sum_k p(r_k) (Y(r_k) - Y(r_{k-1}))] / Y(N)``,

    i.e. ``sum_k p(r_k) (R(r_k) - R(r_{k-1}))``, the right-endpoint area under the PR curve,
    evaluated with ``p = result.estimate`` and ``Y(r) = r p(r)``.

    **Discretisation error** (for the true ``p``; ``rho_k = r_k / (r_{k-1} + 1)``,
    ``rho = max_k rho_k``). Each positive item ``i`` in block ``(r_{k-1}, r_k]`` has
    ``Y(i) <= Y(r_k)`` and ``i >= r_{k-1} + 1``, so
    ``AP - AP_K <= sum_k (R(r_k) - R(r_{k-1})) p(r_k) (rho_k - 1) <= (rho - 1) AP_K``;
    the numerators ``Y(i)`` of the block's positives are ``Y(r_{k-1}) + 1, ..., Y(r_k)`` and
    ``i <= r_k``, so ``AP_K - AP <= (1 - 1 / rho) / 2``. Hence, with no assumption on ``p``,
    ``|AP - AP_K| <= max((rho - 1) AP_K, (1 - 1 / rho) / 2)`` (``discretisation_bound``;
    at most ``1e-3`` on the default grid). If ``p`` were non-increasing on each block the
    error would be one-sided, ``0 <= AP - AP_K <= (rho - 1) AP_K``; with 0/1 labels ``p``
    rises at every positive that follows a negative, so the two-sided bound is the one that
    applies. The plug-in ``estimate`` adds the envelope's approximation error to this.

    **Bounds.** Because labels are 0/1, ``Y(r) dY(r) = (Y(r)^2 - Y(r-1)^2 + dY(r)) / 2``, and
    summing by parts gives an identity in ``p`` alone:

    ``AP = p(N) / 2 + 1 / (2 N) + S(p) / (2 N p(N))``,
    ``S(p) = sum_{r=1}^{N-1} (r p(r)^2 + p(r)) / (r + 1)``.

    ``S`` increases with every ``p(r)``, so with the envelope ``lower <= p <= upper``:

    ``lower = L(N) / 2 + 1 / (2 N) + S(L) / (2 N U(N))``,
    ``upper = U(N) / 2 + 1 / (2 N) + S(U) / (2 N L(N))``,

    clipped to ``[0, 1]``, computed exactly (no grid) on the step functions in
    O(exact_len + corners) with digamma sums. They bound the true ``AP`` whenever the envelope
    holds at *every* rank, so they carry ``result.guarantee`` (its assumptions, and for
    LogStrat and the random baseline its probability ``1 - delta``); ranks where an assumption
    fails void them. They compound the envelope's relative width about three times, so they are
    wide; ``estimate`` need not lie between them where the envelope fails.

    Examples
    --------
    >>> from bayeval import curves
    >>> from bayeval.oracles import LabelOracle
    >>> labels = np.arange(200_000) % 10 < 7 - 3 * (np.arange(200_000) > 100_000)
    >>> res = curves.paula(LabelOracle(labels), labels.size)
    >>> ap = curves.average_precision(res)
    >>> p = np.cumsum(labels) / np.arange(1, labels.size + 1)
    >>> true_ap = p[labels].mean()
    >>> bool(ap["lower"] <= true_ap <= ap["upper"])
    True
    >>> bool(abs(ap["estimate"] - true_ap) < 0.01), ap.attrs["max_ratio"] <= 1.001
    (True, True)
    """
    import xarray as xr

    result = check_curve_result(result)
    n = int(result.n_items)
    grid = _grid_ranks(result, ranks)
    prefix_sum, y_prefix, e = prefix_terms(result, n)
    beyond = np.union1d(grid[grid > e], [n]) if e < n else np.empty(0, dtype=np.int64)
    total = n * float(result.at(n))
    if beyond.size:
        p_grid = result.at(beyond)
        estimate = float(
            grid_average_precision(prefix_sum, y_prefix, beyond.astype(np.float64), p_grid, total)
        )
        ratio = float(np.max(beyond / (np.concatenate([[e], beyond[:-1]]) + 1.0)))
    else:  # a census
        estimate = prefix_sum / y_prefix if y_prefix > 0 else math.nan
        ratio = 1.0

    lo_n, hi_n = float(result.lower(n)), float(result.upper(n))
    s_lo, s_hi = _identity_sum(result, "lower"), _identity_sum(result, "upper")
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = lo_n / 2 + 1 / (2 * n) + s_lo / (2 * n * hi_n) if hi_n > 0 else 0.0
        upper = hi_n / 2 + 1 / (2 * n) + s_hi / (2 * n * lo_n) if lo_n > 0 else 1.0
    return xr.Dataset(
        {
            "estimate": estimate,
            "lower": float(np.clip(lower, 0.0, 1.0)),
            "upper": float(np.clip(upper, 0.0, 1.0)),
        },
        attrs={
            "method": result.method,
            "n_items": n,
            "n_grid": int(beyond.size),
            "max_ratio": ratio,
            "discretisation_bound": max((ratio - 1.0) * estimate, (1.0 - 1.0 / ratio) / 2),
        },
    )
