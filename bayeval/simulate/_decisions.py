"""Whether each recall interval misses the truth, for many sample outcomes of one population.

Numpy kernels behind :func:`bayeval.simulate.coverage_study`. For a population (``N1, R1,
N0, R0``) with true recall ``t`` and arrays of sample outcomes ``(r1, r0)`` (sizes ``n1, n0``),
each returns two boolean arrays: ``below`` (``t < low``, the interval overstates recall) and
``above`` (``t > high``). They reproduce the intervals of :func:`bayeval.recall_interval`
(Webber's forced ends included: ``low = 0`` when ``r1 = 0``, ``high = 1`` when ``r0 = 0``)
without computing them:

- normal methods and the naive binomial: their bounds are closed-form, vectorised here;
- Koopman: ``t`` is inside the score interval exactly when the score statistic at the true
  ratio ``p0 / p1`` is within the normal quantile, so no root finding is needed;
- posterior methods: ``t`` is inside the equal-tailed interval exactly when the posterior CDF
  satisfies ``F(t) >= alpha / 2`` and ``F(t-) < 1 - alpha / 2``; each segment's yield law is
  built once per distinct sample count and the CDF at ``t`` is one quadrature per outcome.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from bayeval._core import yields as Y
from bayeval._core.koopman import score_statistic
from bayeval._core.mcp import most_conservative_prior

__all__ = ["NORMAL_ADJUSTMENT", "POSTERIOR_PRIORS", "misses"]

#: Pseudo-counts of the normal methods (Webber §3.2-3.3); the naive binomial uses the MLE centre.
NORMAL_ADJUSTMENT = {
    "naive-binomial": 0.0,
    "normal-mle": 0.0,
    "normal-laplace": 1.0,
    "normal-agresti-coull": 2.0,
}

#: Prior ``a = b`` and finite-population law of the posterior methods (``"mcp"``: Eq. 18).
POSTERIOR_PRIORS = {
    "beta-jeffreys": (0.5, False),
    "beta-binomial-uniform": (1.0, True),
    "beta-binomial-mcp": ("mcp", True),
    "beta-binomial-half": (0.5, True),
}


def normal_bounds(method, pop, r1, r0, prob, *, clip: bool = True):
    """Bounds ``(low, high)`` of the normal-type methods for outcome arrays (forced ends).

    Clipped to ``[0, 1]`` as :func:`bayeval.recall_interval` does, unless ``clip=False`` (the
    paper's widths appear unclipped).
    """
    N1, n1, N0, n0 = (float(pop[k]) for k in ("N1", "n1", "N0", "n0"))
    c = NORMAL_ADJUSTMENT[method]
    r1, r0 = np.asarray(r1, dtype=float), np.asarray(r0, dtype=float)
    p1, p0 = (r1 + c) / (n1 + 2 * c), (r0 + c) / (n0 + 2 * c)
    y1, y0 = N1 * p1, N0 * p0
    total = y1 + y0
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = np.where(total > 0, y1 / total, np.nan)
        if method == "naive-binomial":
            positives = r1 + r0
            se = np.where(positives > 0, np.sqrt(centre * (1 - centre) / positives), 0.0)
        else:
            v1 = N1**2 * p1 * (1 - p1) / (n1 + 2 * c) * (1 - n1 / N1)
            v0 = N0**2 * p0 * (1 - p0) / (n0 + 2 * c) * (1 - n0 / N0)
            se = np.where(total > 0, np.sqrt((v1 * y0**2 + v0 * y1**2) / total**4), 0.0)
    z = -special.ndtri((1 - prob) / 2)
    low, high = centre - z * se, centre + z * se
    if clip:
        low, high = np.clip(low, 0, 1), np.clip(high, 0, 1)
    low = np.where(r1 == 0, 0.0, low)
    high = np.where(r0 == 0, 1.0, high)
    return low, high


def _posterior_cdf(method, pop, r1, r0):
    """``F(t)`` and ``F(t-)`` of the recall posterior for each outcome, with ``t < 1``.

    ``recall <= t`` is ``Y1 <= (R1 / R0) Y0``: for each distinct ``r1`` the retrieved law's CDF
    is evaluated once at the nodes of all the unretrieved laws it meets (padded to one array)
    and summed against their weights. The bound is nudged by ``1e-12`` (relative) up for
    ``F(t)`` and down for ``F(t-)``, so yields that land exactly on ``t`` count as they should
    despite rounding (the interval is closed).
    """
    prior, finite = POSTERIOR_PRIORS[method]
    N1, n1, N0, n0 = (int(pop[k]) for k in ("N1", "n1", "N0", "n0"))
    if prior == "mcp":
        a1 = most_conservative_prior(N1, n1) if N1 > n1 else 1.0
        a0 = most_conservative_prior(N0, n0) if N0 > n0 else 1.0
    else:
        a1 = a0 = float(prior)
    make = Y.beta_binomial_yield if finite else Y.beta_yield

    def law(r, n, N, a):
        return make(int(r), N - n, a + r, a + n - r)

    values0, index0 = np.unique(r0, return_inverse=True)
    nodes = [law(v, n0, N0, a0).nodes() for v in values0]
    width = max(x.size for x, _ in nodes)
    x0 = np.zeros((values0.size, width))
    w0 = np.zeros((values0.size, width))
    for k, (x, w) in enumerate(nodes):
        x0[k, : x.size], w0[k, : x.size] = x, w
    scale = float(pop["R1"]) / float(pop["R0"])
    at, before = np.empty(r1.size), np.empty(r1.size)
    for value in np.unique(r1):
        rows = np.flatnonzero(r1 == value)
        retrieved = law(value, n1, N1, a1)
        bound = scale * x0[index0[rows]]
        weights = w0[index0[rows]]
        at[rows] = np.sum(retrieved.cdf(bound * (1 + 1e-12)) * weights, axis=1)
        before[rows] = np.sum(retrieved.cdf(bound * (1 - 1e-12)) * weights, axis=1)
    return at, before


def misses(method, pop, r1, r0, prob):
    """Boolean arrays ``(below, above)``: the truth lies below ``low`` / above ``high``.

    Parameters
    ----------
    method : str
        A method of :func:`bayeval.recall_interval` other than ``beta-binomial-hierarchical``.
    pop : mapping
        ``N1, R1, n1, N0, R0, n0`` of the population.
    r1, r0 : numpy.ndarray of int
        Sampled positives of each outcome.
    prob : float
        Interval probability (equal-tailed, two-sided).
    """
    t = float(pop["R1"]) / (float(pop["R1"]) + float(pop["R0"]))
    r1, r0 = np.asarray(r1), np.asarray(r0)
    if t >= 1:  # no positives left unretrieved: r0 = 0 forces high = 1, which covers t = 1
        return np.zeros(r1.shape, bool), np.zeros(r1.shape, bool)
    if method in NORMAL_ADJUSTMENT:
        low, high = normal_bounds(method, pop, r1, r0, prob)
        return t < low, t > high
    if method == "koopman":
        # recall t = 1 / (1 + (N0 / N1) ratio); the score interval on the ratio maps to recall
        # with its ends swapped, so a statistic above z puts t above the recall interval
        p1, p0 = float(pop["R1"]) / float(pop["N1"]), float(pop["R0"]) / float(pop["N0"])
        z = score_statistic(r1, pop["n1"], r0, pop["n0"], p0 / p1)
        limit = -special.ndtri((1 - prob) / 2)
        return (z < -limit) & (r1 > 0), (z > limit) & (r0 > 0)
    if method in POSTERIOR_PRIORS:
        tail = (1 - prob) / 2
        at, before = _posterior_cdf(method, pop, r1, r0)
        return (at < tail) & (r1 > 0), (before >= 1 - tail) & (r0 > 0)
    raise ValueError(f"unknown method {method!r}")
