"""A Bayesian precision curve from the stratified samples a curve method collected.

LogStrat's samples, and the random baseline's, are simple random samples of strata of the ranked
list (the strata between LogStrat's geometric points; the tail after the random baseline's exact
prefix). Under the finite-population model of the foundation intervals (a stratum of ``N`` items
with ``n`` sampled and ``r`` positive has yield ``r + BetaBinomial(N - n, a + r, b + n - r)``,
Webber 2013 §2.8), the yield of the top ``r`` items is the exact prefix count, plus the yields of
the strata wholly above ``r``, plus the yield of the part of the stratum that ``r`` cuts. That
part is itself a finite population of which the stratum's samples inside it are a simple random
sample, so its yield has the same beta-binomial posterior. ``p(r)`` is that total over ``r``.
"""

from __future__ import annotations

import numpy as np

from bayeval._core.yields import sample_stratum_yields
from bayeval._validation import check_prob, check_rng
from bayeval.results import draws_interval

__all__ = ["posterior_band"]


def _default_ranks(result) -> np.ndarray:
    """Every stratum's last rank and its midpoint; a log-spaced grid for a single stratum."""
    bounds = result.strata
    if bounds.size > 2:
        mids = bounds[:-1] + (bounds[1:] - bounds[:-1]) // 2
        ranks = np.concatenate([bounds[1:], mids])
    else:
        start, stop = int(bounds[0]) + 1, int(bounds[-1])
        ranks = np.unique(np.geomspace(max(start, 1), max(stop, 1), 100).round())
    ranks = ranks[(ranks > result.exact_len) & (ranks <= result.n_items)]
    return np.unique(ranks.astype(np.int64))


def _precision_draws(result, ranks, prior, size, gen) -> np.ndarray:
    """Draw ``p(r)`` at ``ranks``, shape ``(size, len(ranks))``.

    Joint across strata, and marginally exact at each rank (the part of a cut stratum is drawn
    separately for each rank).
    """
    bounds = result.strata.astype(np.int64)
    positions, labels = result.labels
    beyond = positions >= bounds[0]
    pos, lab = positions[beyond], labels[beyond].astype(np.int64)
    cum_labels = np.concatenate([[0], np.cumsum(lab)])

    def counts(lo, hi):  # samples and sampled positives at positions lo <= i < hi
        a, b = np.searchsorted(pos, lo), np.searchsorted(pos, hi)
        return b - a, cum_labels[b] - cum_labels[a]

    n_s, r_s = counts(bounds[:-1], bounds[1:])
    yields = sample_stratum_yields(gen, np.diff(bounds), n_s, r_s, prior, prior, size)
    above = np.concatenate([np.zeros((size, 1)), np.cumsum(yields, axis=1)], axis=1)

    ranks = np.asarray(ranks, dtype=np.int64)
    out = np.empty((size, ranks.size))
    exact = ranks <= result.exact_len
    out[:, exact] = result.prefix_counts[ranks[exact]] / ranks[exact]
    r = ranks[~exact]
    if r.size:
        k = np.searchsorted(bounds, r, side="left") - 1  # the stratum rank r falls in
        n_p, r_p = counts(bounds[k], r)  # samples inside the cut part [b_k, r)
        part = sample_stratum_yields(gen, r - bounds[k], n_p, r_p, prior, prior, size)
        whole = r == bounds[k + 1]  # a whole stratum: reuse its draw, coherent with later ranks
        part[:, whole] = yields[:, k[whole]]
        top = result.prefix_counts[bounds[0]] + above[:, k] + part
        out[:, ~exact] = top / r
    return out


def posterior_band(
    result,
    prob: float = 0.95,
    *,
    ranks=None,
    draws: int = 1000,
    chains: int = 4,
    prior: float = 0.5,
    rng=None,
):
    """Posterior draws of the precision function and a pointwise credible band.

    Parameters
    ----------
    result : CurveResult
        From :func:`~bayeval.curves.logstrat` or :func:`~bayeval.curves.random_baseline`
        (PAULA's annotations are fixed windows, not random samples, so they define no design
        posterior).
    prob : float
        Probability of the pointwise equal-tailed band.
    ranks : array_like of int, optional
        Ranks ``1 <= r <= b_S`` to evaluate, ``b_S`` the end of the last sampled stratum
        (LogStrat's last geometric point; ``N`` for the random baseline); default every
        stratum's last rank and midpoint (the queried ranks and between them), or 100
        log-spaced ranks for the random baseline.
    draws, chains : int
        Posterior draws per chain, and chains (independent draws; ``chains`` only shapes the
        output for ArviZ).
    prior : float
        ``a = b`` of the ``Beta(a, b)`` prior on each stratum's prevalence (default the half
        prior Webber 2013 recommends).
    rng : int or numpy.random.Generator, optional

    Returns
    -------
    xarray.DataTree
        ``posterior``: ``precision`` with dims ``(chain, draw, rank)``. ``band``: per rank the
        posterior ``median``, ``lower`` and ``upper`` (equal-tailed, ``prob``), and the method's
        own ``estimate``, ``envelope_lower`` and ``envelope_upper``.

    Notes
    -----
    Draws are joint across strata: within a draw, the yield of a whole stratum is the same at
    every rank after it, so differences between the ranks that end strata are coherent. The
    part of the stratum a rank cuts is drawn afresh for that rank, which makes every rank's
    marginal posterior exact (the band is pointwise) but not the joint law of two ranks in
    one stratum. Ranks in the exact prefix have no uncertainty.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import curves
    >>> from bayeval.oracles import LabelOracle
    >>> labels = np.random.default_rng(0).random(60_000) < np.linspace(0.9, 0.5, 60_000)
    >>> res = curves.logstrat(LabelOracle(labels), labels.size, rng=1)
    >>> tree = res.posterior_band(0.95, rng=2)
    >>> band = tree["band"].to_dataset()
    >>> bool((band["lower"] <= band["median"]).all() and (band["median"] <= band["upper"]).all())
    True
    """
    import xarray as xr

    if result.exact_len >= result.n_items:
        raise ValueError(
            "the list was annotated in full (a census): its precision is known exactly, with "
            "no posterior uncertainty; use result.at(ranks)."
        )
    if result.strata is None:
        raise ValueError(
            f"method {result.method!r} annotates fixed ranks, not random samples of strata, so "
            "it has no design-based posterior; use curves.logstrat, curves.adastrat or "
            "curves.random_baseline."
        )
    prob = check_prob(prob)
    for value, name in ((draws, "draws"), (chains, "chains")):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"`{name}` must be a positive integer; got {value!r}.")
    if not prior > 0:
        raise ValueError(f"`prior` must be positive; got {prior!r}.")
    gen = check_rng(rng)
    ranks = _default_ranks(result) if ranks is None else result._ranks(ranks).reshape(-1)
    last = int(result.strata[-1])
    if np.any(ranks > last):
        raise ValueError(
            f"`ranks` must be at most {last}: the items after the last sampled stratum were "
            f"never sampled, so they have no posterior; got {int(ranks.max())}."
        )
    values = _precision_draws(result, ranks, float(prior), draws * chains, gen)
    values = values.reshape(chains, draws, ranks.size)
    coords = {"rank": ranks}
    posterior = xr.Dataset(
        {"precision": (("chain", "draw", "rank"), values)},
        coords={"chain": np.arange(chains), "draw": np.arange(draws), **coords},
    )
    band_ci = draws_interval(posterior["precision"], prob, "eti")
    low, high = band_ci.sel(ci_bound="lower").values, band_ci.sel(ci_bound="upper").values
    median = posterior["precision"].median(("chain", "draw")).values
    band = xr.Dataset(
        {
            "median": ("rank", median),
            "lower": ("rank", low),
            "upper": ("rank", high),
            "estimate": ("rank", result.at(ranks)),
            "envelope_lower": ("rank", result.lower(ranks)),
            "envelope_upper": ("rank", result.upper(ranks)),
        },
        coords=coords,
        attrs={"prob": prob, "method": result.method, "prior": float(prior)},
    )
    return xr.DataTree.from_dict({"posterior": posterior, "band": band})
