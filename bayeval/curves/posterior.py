"""A Bayesian precision curve from the stratified samples a curve method collected.

LogStrat's samples, and the random baseline's, are simple random samples of strata of the ranked
list (the strata between LogStrat's geometric points; the tail after the random baseline's exact
prefix). Under the finite-population model of the foundation intervals (a stratum of ``N`` items
with ``n`` sampled and ``r`` positive has yield ``r + BetaBinomial(N - n, a + r, b + n - r)``,
Webber 2013 §2.8), the yield of the top ``r`` items is the exact prefix count, plus the yields of
the strata wholly above ``r``, plus the yield of the part of the stratum that ``r`` cuts. That
part is itself a finite population of which the stratum's samples inside it are a simple random
sample, so its yield has the same beta-binomial posterior. ``p(r)`` is that total over ``r``.

:func:`posterior_band` draws ``p`` at a set of ranks; :func:`derived_from_posterior` turns those
draws into draws of the yield, recall and average precision (:mod:`bayeval.curves.derived`).
"""

from __future__ import annotations

import numpy as np

from bayeval._constraints import Integer, Positive, Prob, Seed, validate
from bayeval._core.yields import sample_stratum_yields
from bayeval._validation import check_rng
from bayeval.curves.derived import check_curve_result, grid_average_precision, prefix_terms
from bayeval.results import draws_interval

__all__ = ["derived_from_posterior", "posterior_band"]


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


@validate(
    prob=Prob(), draws=Integer(minimum=1), chains=Integer(minimum=1), prior=Positive(), rng=Seed()
)
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
        Seed of the posterior draws.

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


def _default_posterior_ranks(result, per_stratum: int) -> np.ndarray:
    """Every stratum end plus ``per_stratum - 1`` evenly spaced ranks inside each stratum."""
    bounds = np.asarray(result.strata, dtype=np.int64)
    sizes = np.diff(bounds)
    parts = [bounds[:-1] + (sizes * j) // per_stratum for j in range(1, per_stratum + 1)]
    ranks = np.unique(np.concatenate(parts))
    return ranks[(ranks > result.exact_len) & (ranks <= result.n_items)]


@validate(per_stratum=Integer(minimum=1), rng=Seed())
def derived_from_posterior(result, tree=None, *, per_stratum: int = 4, rng=None, **band_options):
    """Posterior draws of yield, recall and average precision from a precision band.

    Parameters
    ----------
    result : CurveResult
        From :func:`~bayeval.curves.logstrat` or :func:`~bayeval.curves.random_baseline` (the
        methods with a design posterior).
    tree : xarray.DataTree, optional
        ``result.posterior_band(...)``. Its ranks must include the end of the last stratum,
        ``result.strata[-1]`` (``N`` for the random baseline, LogStrat's last point ``g_L``),
        and, if ``g_L < N``, the end of the one before. Default:
        ``result.posterior_band(ranks=...)`` at every stratum end and ``per_stratum - 1``
        evenly spaced ranks inside each stratum, with ``band_options`` passed on.
    per_stratum : int, default 4
        Grid ranks per stratum for the default band.
    rng : int or numpy.random.Generator, optional
        Seed of the tail draws (see Notes).
    **band_options
        ``prob``, ``draws``, ``chains``, ``prior`` or ``rng`` of the default band; only with
        ``tree=None``.

    Returns
    -------
    xarray.DataTree
        Group ``posterior`` with ``precision``, ``yield`` and ``recall`` (dims
        ``(chain, draw, rank)``, the band's ranks) and ``total_yield`` and
        ``average_precision`` (``(chain, draw)``), for ``arviz.summary`` and friends. Attrs
        ``tail`` (how ranks after the last stratum were treated), ``n_grid`` and
        ``max_ratio`` of the AP grid.

    Notes
    -----
    In each draw ``d``: ``Y_d(r) = r p_d(r)``, ``recall_d(r) = Y_d(r) / Y_d(N)``, and
    ``AP_d`` is :func:`average_precision`'s ``AP_K`` on the band's ranks beyond the exact
    prefix (the prefix is summed exactly); its discretisation error bound applies with
    ``rho = max_ratio`` (about ``1 + eps / per_stratum`` for LogStrat).

    *Tail.* LogStrat samples nothing after its last point ``g_L = strata[-1] <= N``, so the
    design gives no posterior for ranks ``(g_L, N]`` (up to a fraction ``eps`` of the list),
    and recall needs ``Y(N)``. The tail's ``N - g_L`` items are modelled like the last
    stratum's: ``Y_d(N) = Y_d(g_L) + Binomial(N - g_L, pi_d)``, ``pi_d`` the draw's
    prevalence of the last stratum ``(g_{L-1}, g_L]``. This is an assumption, not part of the
    design posterior; where the local precision keeps falling (a monotone curve) it
    overstates the tail's yield slightly and so understates recall. (Extending the step
    function instead, ``p_d(N) = p_d(g_L)``, uses the cumulative precision, which on a falling
    curve is far above the tail's density.) ``tail`` in the attrs says what was done.

    *Coherence.* The band's draws are joint across whole strata, but the part of a stratum a
    rank cuts is drawn afresh for each rank (see
    :func:`~bayeval.curves.posterior.posterior_band`), so recall and AP combine draws at ranks
    inside one stratum that are not jointly distributed as the posterior; their marginals at
    stratum ends are exact.

    Examples
    --------
    >>> from bayeval import curves
    >>> from bayeval.oracles import LabelOracle
    >>> labels = np.random.default_rng(0).random(60_000) < np.linspace(0.9, 0.5, 60_000)
    >>> res = curves.logstrat(LabelOracle(labels), labels.size, rng=1)
    >>> post = curves.derived_from_posterior(res, draws=200, chains=2, rng=2)["posterior"]
    >>> post["average_precision"].dims, post["recall"].dims
    (('chain', 'draw'), ('chain', 'draw', 'rank'))
    >>> p = np.cumsum(labels) / np.arange(1, labels.size + 1)
    >>> low, high = post["average_precision"].quantile([0.005, 0.995]).values
    >>> bool(low < p[labels].mean() < high)
    True
    """
    import xarray as xr

    result = check_curve_result(result)
    if result.strata is None:
        raise ValueError(
            f"`result`: method {result.method!r} annotates fixed ranks, not random samples of "
            "strata, so it has no design posterior; use curves.logstrat or "
            "curves.random_baseline."
        )
    gen = check_rng(rng)
    n = int(result.n_items)
    bounds = np.asarray(result.strata, dtype=np.int64)
    last_end = int(min(bounds[-1], n))
    if tree is None:
        tree = result.posterior_band(
            ranks=_default_posterior_ranks(result, per_stratum), **band_options
        )
    elif band_options:
        raise ValueError(
            f"`band_options` ({', '.join(band_options)}) apply only when `tree` is None."
        )
    try:
        precision = tree["posterior"]["precision"]
    except (KeyError, TypeError):
        raise ValueError(
            "`tree` must be the DataTree of result.posterior_band(...), with "
            "posterior['precision'] of dims (chain, draw, rank)."
        ) from None
    if tuple(precision.dims) != ("chain", "draw", "rank"):
        raise ValueError(
            f"`tree`: posterior['precision'] must have dims (chain, draw, rank); got "
            f"{tuple(precision.dims)}."
        )
    ranks = np.asarray(precision["rank"].values, dtype=np.int64)
    order = np.argsort(ranks, kind="stable")
    ranks, values = ranks[order], np.asarray(precision.values, dtype=np.float64)[..., order]
    if ranks[0] < 1 or ranks[-1] > n or np.any(np.diff(ranks) == 0):
        raise ValueError(f"`tree`: its ranks must be distinct and in [1, {n}] (this result's N).")

    prev_end = int(bounds[-2]) if bounds.size > 1 else 0
    needed = [last_end] + ([prev_end] if last_end < n and prev_end > result.exact_len else [])
    missing = [r for r in needed if r not in ranks]
    if missing:
        raise ValueError(
            f"`tree`: its ranks must include {missing} (the end of the last stratum"
            f"{' and the one before' if len(needed) > 1 else ''}) to give the total yield that "
            f"recall and AP need; e.g. result.posterior_band(ranks=[..., {needed[-1]}])."
        )
    rf = ranks.astype(np.float64)
    yields = values * rf
    y_last = yields[..., np.searchsorted(ranks, last_end)]
    if last_end < n:
        if prev_end > result.exact_len:
            y_prev = yields[..., np.searchsorted(ranks, prev_end)]
        else:
            y_prev = float(result.prefix_counts[prev_end])
        density = np.clip((y_last - y_prev) / (last_end - prev_end), 0.0, 1.0)
        total = y_last + gen.binomial(n - last_end, density)
        tail = (
            f"ranks {last_end + 1}..{n} not sampled: Binomial(N - g_L, prevalence of the last "
            f"stratum ({prev_end}, {last_end}]) per draw"
        )
    else:
        total, tail = y_last, "none: the strata reach N"
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = yields / total[..., None]

    prefix_sum, y_prefix, e = prefix_terms(result, n)
    keep = ranks > e
    grid_ranks, grid_p = rf[keep], values[..., keep]
    if ranks[-1] < n:
        grid_ranks = np.append(grid_ranks, float(n))
        grid_p = np.concatenate([grid_p, (total / n)[..., None]], axis=-1)
    ap = grid_average_precision(prefix_sum, y_prefix, grid_ranks, grid_p, total)
    prev = np.concatenate([[e], grid_ranks[:-1]]) + 1.0
    ratio = float(np.max(grid_ranks / prev)) if grid_ranks.size else 1.0

    dims = ("chain", "draw", "rank")
    posterior = xr.Dataset(
        {
            "precision": (dims, values),
            "yield": (dims, yields),
            "recall": (dims, recall),
            "total_yield": (("chain", "draw"), np.asarray(total, dtype=np.float64)),
            "average_precision": (("chain", "draw"), ap),
        },
        coords={
            "chain": precision["chain"].values,
            "draw": precision["draw"].values,
            "rank": ranks,
        },
        attrs={
            "method": result.method,
            "n_items": n,
            "tail": tail,
            "n_grid": int(grid_ranks.size),
            "max_ratio": ratio,
        },
    )
    return xr.DataTree.from_dict({"posterior": posterior})
