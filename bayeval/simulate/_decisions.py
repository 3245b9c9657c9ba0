"""Whether each recall interval misses the truth, for many sample outcomes of one population.

Numpy kernels behind :func:`bayeval.simulate.coverage_study`. For a population (``N1, R1,
N0, R0``) with true recall ``t`` and arrays of sample outcomes ``(r1, r0)`` (sizes ``n1, n0``),
each returns two boolean arrays: ``below`` (``t < low``, the interval overstates recall) and
``above`` (``t > high``). They decide what the intervals of :func:`bayeval.recall_interval`
would (Webber's forced ends included: ``low = 0`` when ``r1 = 0``, ``high = 1`` when
``r0 = 0``), with the same kernels and method tables, without computing each interval:

- normal methods and the naive binomial: the moments and bounds of :mod:`bayeval._core.normal`
  (the kernels of ``recall_interval``), evaluated for all outcomes at once;
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
from bayeval._core.normal import naive_binomial_moments, normal_recall_moments
from bayeval._core.normal import normal_bounds as normal_bounds_kernel
from bayeval._core.yields import force_recall_ends
from bayeval.intervals.frequentist import NORMAL_METHODS
from bayeval.intervals.posterior import POSTERIOR_METHODS, PYMC_ONLY, stratum_priors
from bayeval.stratified_sample import StratifiedSample

__all__ = ["NORMAL_TYPE", "POSTERIOR_TYPE", "misses", "normal_bounds"]

#: The normal-type methods: ``recall_interval``'s table plus the naive binomial.
NORMAL_TYPE = ("naive-binomial", *NORMAL_METHODS)
#: The posterior methods a coverage study decides (the PyMC-only one is left out).
POSTERIOR_TYPE = tuple(m for m in POSTERIOR_METHODS if m not in PYMC_ONLY)


def _design(pop) -> StratifiedSample:
    """Return the population's two segments as a sample (positives unused: outcomes vary)."""
    return StratifiedSample.two_segments(
        N1=int(pop["N1"]), n1=int(pop["n1"]), r1=0, N0=int(pop["N0"]), n0=int(pop["n0"]), r0=0
    )


def normal_bounds(method, pop, r1, r0, prob, *, clip: bool = True):
    """Bounds ``(low, high)`` of the normal-type methods for outcome arrays (forced ends).

    Clipped to ``[0, 1]`` as :func:`bayeval.recall_interval` does, unless ``clip=False`` (the
    paper's widths appear unclipped).
    """
    design = _design(pop)
    r = np.stack([np.asarray(r1, dtype=float), np.asarray(r0, dtype=float)], axis=-1)
    args = (design.population, design.sampled, r, design.retrieved)
    if method == "naive-binomial":
        centre, se = naive_binomial_moments(*args)
    else:
        centre, se = normal_recall_moments(*args, adjustment=NORMAL_METHODS[method])
    tail = (1 - prob) / 2
    if clip:
        low, high = normal_bounds_kernel(centre, se, tail, tail)
    else:
        z = -special.ndtri(tail)
        low, high = centre - z * se, centre + z * se
    return force_recall_ends(low, high, r[..., 0], r[..., 1])


def _posterior_cdf(method, pop, r1, r0):
    """``F(t)`` and ``F(t-)`` of the recall posterior for each outcome, with ``t < 1``.

    ``recall <= t`` is ``Y1 <= (R1 / R0) Y0``: for each distinct ``r1`` the retrieved law's CDF
    is evaluated once at the nodes of all the unretrieved laws it meets (padded to one array)
    and summed against their weights. The bound is nudged by ``1e-12`` (relative) up for
    ``F(t)`` and down for ``F(t-)``, so yields that land exactly on ``t`` count as they should
    despite rounding (the interval is closed).
    """
    _, finite = POSTERIOR_METHODS[method]
    N1, n1, N0, n0 = (int(pop[k]) for k in ("N1", "n1", "N0", "n0"))
    a1, a0 = stratum_priors(_design(pop), method)  # recall_interval's priors (MCP: Eq. 18)
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
    if method in NORMAL_TYPE:
        low, high = normal_bounds(method, pop, r1, r0, prob)
        return t < low, t > high
    if method == "koopman":
        # recall t = 1 / (1 + (N0 / N1) ratio); the score interval on the ratio maps to recall
        # with its ends swapped, so a statistic above z puts t above the recall interval
        p1, p0 = float(pop["R1"]) / float(pop["N1"]), float(pop["R0"]) / float(pop["N0"])
        z = score_statistic(r1, pop["n1"], r0, pop["n0"], p0 / p1)
        limit = -special.ndtri((1 - prob) / 2)
        return (z < -limit) & (r1 > 0), (z > limit) & (r0 > 0)
    if method in POSTERIOR_TYPE:
        tail = (1 - prob) / 2
        at, before = _posterior_cdf(method, pop, r1, r0)
        return (at < tail) & (r1 > 0), (before >= 1 - tail) & (r0 > 0)
    raise ValueError(f"unknown method {method!r}")
