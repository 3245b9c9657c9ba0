"""Bounds engines: each answers ``bounds(prob, kind) -> (low, high)`` for one way of computing.

Each also has ``estimate``, its point estimate.

They are the memory of an :class:`~bayeval.intervals.result.IntervalResult`, so intervals at other
probabilities and of other kinds are recomputed from what was stored, never resampled.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import numpy as np

from bayeval._core.binomial import binomial_bounds
from bayeval._core.koopman import ratio_interval
from bayeval._core.normal import normal_bounds
from bayeval._core.yields import force_recall_ends, measure_ppf

_TWO_SIDED_ONLY = "kind='hdi' needs a posterior; {method!r} is not a posterior method"


def _tails(prob: float, kind: str) -> tuple[float | None, float | None]:
    """Probability left below the lower and above the upper bound (None: no bound)."""
    if kind == "lower":
        return 1 - prob, None
    if kind == "upper":
        return None, 1 - prob
    tail = (1 - prob) / 2
    return tail, tail


class Forced:
    """Webber's forced recall bounds (§3.3-3.6).

    0 below when no retrieved positive was sampled, 1 above when no unretrieved one was.
    """

    def __init__(self, inner, *, low_zero: bool, high_one: bool):
        self.inner, self.low_zero, self.high_one = inner, low_zero, high_one

    def bounds(self, prob, kind):
        low, high = self.inner.bounds(prob, kind)
        return force_recall_ends(low, high, 0 if self.low_zero else 1, 0 if self.high_one else 1)

    def __getattr__(self, name):  # posterior, mc_error, estimate ... come from the inner engine
        if name.startswith("__") or name == "inner":  # unpickling asks before `inner` is set
            raise AttributeError(name)
        return getattr(self.inner, name)


class NormalBounds:
    """``centre -/+ z se`` clipped to ``[0, 1]`` (normal-approximation methods)."""

    def __init__(self, centre: float, se: float, method: str):
        self.centre, self.se, self.method = centre, se, method
        self.estimate = float(centre)

    def bounds(self, prob, kind):
        if kind == "hdi":
            raise ValueError(_TWO_SIDED_ONLY.format(method=self.method))
        low, high = normal_bounds(self.centre, self.se, *_tails(prob, kind))
        return float(low), float(high)


class BinomialBounds:
    """A binomial-proportion interval for ``r`` of ``n`` (Webber §2.5-2.7).

    ``jeffreys`` is forced to 0 at ``r = 0`` and 1 at ``r = n``, as Webber §2.7 does.
    """

    def __init__(self, r: int, n: int, method: str):
        self.r, self.n, self.method = r, n, method
        self.estimate = r / n

    def bounds(self, prob, kind):
        if kind == "hdi":
            raise ValueError(_TWO_SIDED_ONLY.format(method=self.method))
        lower_tail, upper_tail = _tails(prob, kind)
        low = high = None
        if lower_tail is not None:
            low = float(binomial_bounds(self.r, self.n, self.method, lower_tail)[0])
        if upper_tail is not None:
            high = float(binomial_bounds(self.r, self.n, self.method, upper_tail)[1])
        if self.method == "jeffreys":
            low = 0.0 if self.r == 0 and low is not None else low
            high = 1.0 if self.r == self.n and high is not None else high
        return (0.0 if low is None else low), (1.0 if high is None else high)


class KoopmanBounds:
    """Koopman's score interval on ``p0 / p1`` mapped to recall ``1 / (1 + (N0/N1) p0/p1)``.

    The ratio interval inverts Koopman's (1984) score statistic
    (:func:`bayeval._core.koopman.ratio_interval`): the same interval as statsmodels'
    ``confint_proportions_2indep(compare="ratio", method="score", correction=False)`` except when
    a sample is all positive, where statsmodels' polynomial roots turn complex and its interval
    can exclude the estimate. Recall decreases in the ratio, so the ends swap (Webber §3.4).
    """

    method = "koopman"

    def __init__(self, r1, n1, N1, r0, n0, N0):
        self.counts = (int(r1), int(n1), int(r0), int(n0))
        self.scale = N0 / N1
        y1, y0 = N1 * r1 / n1, N0 * r0 / n0  # the plug-in estimates of the segment yields
        self.estimate = y1 / (y1 + y0) if y1 + y0 > 0 else float("nan")

    def _ratio_bounds(self, alpha):
        return ratio_interval(*self.counts, alpha)

    def _to_recall(self, ratio):
        return 1.0 / (1.0 + self.scale * ratio) if np.isfinite(ratio) else 0.0

    def bounds(self, prob, kind):
        if kind == "hdi":
            raise ValueError(_TWO_SIDED_ONLY.format(method=self.method))
        lower_tail, upper_tail = _tails(prob, kind)
        # A one-sided bound at level prob is one end of the two-sided interval at 2 prob - 1.
        alpha = 2 * (lower_tail if lower_tail is not None else upper_tail)
        ratio_low, ratio_high = self._ratio_bounds(alpha)
        low = 0.0 if lower_tail is None else self._to_recall(ratio_high)
        high = 1.0 if upper_tail is None else self._to_recall(max(ratio_low, 0.0))
        return low, high


class QuadratureBounds:
    """Posterior quantiles by quadrature over two independent segment-yield laws (exact engine).

    Parameters
    ----------
    measure : str
    retrieved, unretrieved : DiscreteYield or ContinuousYield
    n1_population : int
    make_posterior : callable returning an ``xarray.DataTree`` of exact posterior draws
    """

    def __init__(self, measure, retrieved, unretrieved, n1_population, make_posterior):
        self.measure = measure
        self.laws = (retrieved, unretrieved, n1_population)
        self._make_posterior = make_posterior
        self._tree = None

    def ppf(self, q):
        return measure_ppf(self.measure, q, *self.laws)

    @cached_property
    def estimate(self) -> float:
        """The posterior median."""
        return float(self.ppf(0.5)[0])

    def bounds(self, prob, kind):
        if kind == "hdi":
            return _hdi_from_ppf(self.ppf, prob)
        lower_tail, upper_tail = _tails(prob, kind)
        levels = [0.5 if lower_tail is None else lower_tail]
        levels.append(0.5 if upper_tail is None else 1 - upper_tail)
        if "estimate" not in self.__dict__:  # solved with the bounds, in the same vector
            levels.append(0.5)
        values = self.ppf(levels)
        if len(levels) == 3:
            self.__dict__["estimate"] = float(values[2])
        low = 0.0 if lower_tail is None else float(values[0])
        high = 1.0 if upper_tail is None else float(values[1])
        return low, high

    def posterior(self):
        """Return the exact posterior draws (drawn on first use)."""
        if self._tree is None:
            self._tree = self._make_posterior()
        return self._tree

    def use_posterior(self, tree) -> None:
        """Adopt ``tree`` as the posterior draws (a result read back from a file)."""
        self._tree = tree


def _hdi_from_ppf(ppf: Callable, prob: float) -> tuple[float, float]:
    """Shortest interval ``[Q(u), Q(u + prob)]`` over ``u``: a grid, then a finer grid."""
    lo, hi = 0.0, 1.0 - prob
    for _ in range(3):
        u = np.linspace(lo, hi, 21)
        ends = ppf(np.concatenate([u, u + prob]))
        widths = ends[u.size :] - ends[: u.size]
        best = int(np.argmin(widths))
        step = u[1] - u[0]
        lo, hi = max(0.0, u[best] - step), min(1.0 - prob, u[best] + step)
    return float(ends[best]), float(ends[u.size + best])


class DrawsBounds:
    """Posterior quantiles from draws (exact Monte Carlo or MCMC), by arviz-stats.

    Parameters
    ----------
    draws : numpy.ndarray
        Measure draws shaped ``(chain, draw)``.
    tree : xarray.DataTree
        The posterior it came from.
    independent : bool
        True for independent draws (exact Monte Carlo); False for MCMC, whose Monte Carlo
        errors use ArviZ's effective-sample-size-based quantile MCSE.
    """

    def __init__(self, draws, tree, *, independent: bool):
        self.draws = np.asarray(draws, dtype=float)
        self.flat = np.sort(self.draws.ravel())
        self.tree = tree
        self.independent = independent

    @cached_property
    def estimate(self) -> float:
        """The posterior median."""
        return float(np.quantile(self.flat, 0.5))

    def _quantile_levels(self, prob, kind):
        lower_tail, upper_tail = _tails(prob, kind)
        return lower_tail, None if upper_tail is None else 1 - upper_tail

    def bounds(self, prob, kind):
        import xarray as xr

        from bayeval.results import draws_interval

        draws = xr.DataArray(self.draws, dims=("chain", "draw"))
        low, high = draws_interval(draws, prob, kind).values
        return float(low), float(high)

    def posterior(self):
        return self.tree

    def mc_error(self, prob, kind):
        """Return standard errors of the reported bounds (0 for a bound fixed at 0 or 1)."""
        if kind == "hdi":
            return (float("nan"), float("nan"))
        out = []
        for q in self._quantile_levels(prob, kind):
            out.append(0.0 if q is None else self._quantile_se(q))
        return tuple(out)

    def _quantile_se(self, q: float) -> float:
        if self.independent:
            # Order-statistic interval: the q-quantile's rank is Binomial(S, q) in spirit;
            # half the spread between ranks at -/+ 1 sd estimates the standard error.
            size = self.flat.size
            half = np.sqrt(size * q * (1 - q))
            lo = int(np.clip(np.floor(q * size - half), 0, size - 1))
            hi = int(np.clip(np.ceil(q * size + half), 0, size - 1))
            return float((self.flat[hi] - self.flat[lo]) / 2)
        import arviz as az

        return float(az.mcse(self.draws, method="quantile", prob=q))
