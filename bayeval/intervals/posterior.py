"""Posterior intervals: beta and beta-binomial segment posteriors (Webber 2013 §3.5-3.6).

Two engines give the same result type:

- ``engine="exact"`` draws nothing to find the interval when each segment is one stratum: the
  segment-yield posteriors are closed-form and the measure's CDF is a one-dimensional sum
  (:mod:`bayeval._core.yields`). With several strata per segment it draws the closed-form
  posteriors independently (vectorised Monte Carlo) and reports the Monte Carlo error.
- ``engine="pymc"`` samples a :mod:`bayeval.models` model with NUTS, so ArviZ diagnostics apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import numpy as np

from bayeval._core import yields as Y
from bayeval._core.mcp import most_conservative_prior
from bayeval.intervals._engines import DrawsBounds, QuadratureBounds
from bayeval.stratified_sample import StratifiedSample

__all__ = ["POSTERIOR_METHODS", "posterior_bounds", "stratum_priors"]

# method -> (prior a = b, finite population?) ; "mcp" is solved per stratum.
POSTERIOR_METHODS = {
    "beta-jeffreys": (0.5, False),
    "beta-binomial-uniform": (1.0, True),
    "beta-binomial-mcp": ("mcp", True),
    "beta-binomial-half": (0.5, True),
    "beta-binomial-hierarchical": (None, True),
}
PYMC_ONLY = ("beta-binomial-hierarchical",)
DEFAULT_MC_DRAWS = 100_000  # exact Monte Carlo for stratified samples: 4 chains x 25,000
DEFAULT_POSTERIOR_DRAWS = 1_000  # per chain, for the DataTree of the quadrature path
CHAINS = 4


def stratum_priors(sample: StratifiedSample, method: str) -> np.ndarray:
    """Prior ``a = b`` of every stratum for a posterior method.

    Examples
    --------
    >>> import bayeval as be
    >>> s = be.StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    >>> stratum_priors(s, "beta-binomial-half")
    array([0.5, 0.5])
    """
    prior, _ = POSTERIOR_METHODS[method]
    if prior != "mcp":
        return np.full(sample.n_strata, float(prior))
    unsampled = np.flatnonzero((sample.sampled == 0) & (sample.population > 0))
    if unsampled.size:
        names = [sample.names[i] for i in unsampled]
        raise ValueError(
            "method 'beta-binomial-mcp' needs a sample from every stratum (the most conservative "
            f"prior maximises the information the sample brings); strata {names} have "
            "`sampled` = 0. Use 'beta-binomial-half' or 'beta-binomial-hierarchical'."
        )
    return np.array(
        [
            most_conservative_prior(int(N), int(n)) if N > n else 1.0
            for N, n in zip(sample.population, sample.sampled, strict=True)
        ]
    )


def _segment_law(sample, segment_mask, prior, finite_population):
    (i,) = np.flatnonzero(segment_mask)
    N, n, r = (int(v[i]) for v in (sample.population, sample.sampled, sample.positives))
    a, b = prior[i] + r, prior[i] + n - r
    if finite_population:
        return Y.beta_binomial_yield(r, N - n, a, b)
    return Y.beta_yield(r, N - n, a, b)


def _posterior_tree(sample, measure, prior, finite_population, rng, draws, chains):
    """DataTree of exact posterior draws: prevalence, stratum and segment yields, measure."""
    size = draws * chains
    p = rng.beta(
        prior + sample.positives,
        prior + sample.sampled - sample.positives,
        size=(size, sample.n_strata),
    )
    unsampled = sample.population - sample.sampled
    if finite_population:
        yields = sample.positives + rng.binomial(unsampled, p)
    else:
        yields = sample.positives + unsampled * p
    segment = np.stack([yields[:, sample.retrieved].sum(1), yields[:, ~sample.retrieved].sum(1)], 1)
    n1 = int(sample.population[sample.retrieved].sum())
    values = Y.measure_from_yields(measure, segment[:, 0], segment[:, 1], n1)
    return _tree(
        sample,
        measure,
        {"prevalence": p, "stratum_yield": yields, "segment_yield": segment, measure: values},
        chains,
        draws,
    )


def _tree(sample, measure, arrays, chains, draws):
    import xarray as xr

    dims = {
        "prevalence": ["stratum"],
        "stratum_yield": ["stratum"],
        "segment_yield": ["segment"],
        measure: [],
    }
    data = {
        name: (
            ["chain", "draw", *dims[name]],
            np.asarray(value).reshape(chains, draws, *np.shape(value)[1:]),
        )
        for name, value in arrays.items()
    }
    coords = {
        "chain": np.arange(chains),
        "draw": np.arange(draws),
        "stratum": list(sample.names),
        "segment": ["retrieved", "unretrieved"],
    }
    posterior = xr.Dataset(data, coords=coords)
    observed = xr.Dataset(
        {"sampled_positives": ("stratum", sample.positives)}, coords={"stratum": list(sample.names)}
    )
    return xr.DataTree.from_dict(
        {"posterior": posterior, "constant_data": _constant_data(sample), "observed_data": observed}
    )


def _constant_data(sample):
    """Build the design group: stratum sizes, sample sizes, segments (for both engines)."""
    import xarray as xr

    return xr.Dataset(
        {
            "population": ("stratum", sample.population),
            "sampled": ("stratum", sample.sampled),
            "retrieved": ("stratum", sample.retrieved),
        },
        coords={"stratum": list(sample.names)},
    )


def posterior_bounds(
    sample: StratifiedSample,
    measure: str,
    method: str,
    *,
    engine: str,
    rng: np.random.Generator,
    draws: int | None,
    sampler_options: Mapping | None,
):
    """Build the bounds engine of a posterior method (see :mod:`bayeval.intervals._engines`)."""
    _, finite_population = POSTERIOR_METHODS[method]
    n1 = int(sample.population[sample.retrieved].sum())
    if engine == "pymc":
        return _pymc_bounds(sample, measure, method, rng, draws, sampler_options, n1)
    prior = stratum_priors(sample, method)
    one_retrieved = sample.retrieved.sum() == 1
    one_unretrieved = (~sample.retrieved).sum() == 1
    if one_retrieved and (one_unretrieved or measure == "precision"):
        retrieved = _segment_law(sample, sample.retrieved, prior, finite_population)
        unretrieved = (
            _segment_law(sample, ~sample.retrieved, prior, finite_population)
            if one_unretrieved
            else None
        )
        # drawn on first use; a partial (not a closure) so that the result pickles
        make_posterior = partial(
            _posterior_tree,
            sample,
            measure,
            prior,
            finite_population,
            np.random.default_rng(int(rng.integers(2**63))),
            draws or DEFAULT_POSTERIOR_DRAWS,
            CHAINS,
        )
        return QuadratureBounds(measure, retrieved, unretrieved, n1, make_posterior)
    total = draws or DEFAULT_MC_DRAWS
    per_chain = -(-total // CHAINS)
    tree = _posterior_tree(sample, measure, prior, finite_population, rng, per_chain, CHAINS)
    values = tree["posterior"][measure].values
    return DrawsBounds(values, tree, independent=True)


def _pymc_bounds(sample, measure, method, rng, draws, sampler_options, n1):
    from bayeval import models

    options = dict(sampler_options or {})
    if draws is not None:
        options["draws"] = draws
    seed = int(rng.integers(2**31))
    if method in PYMC_ONLY:
        tree = models.sample_hierarchical_yields(sample, rng=seed, **options)
    else:
        prior = stratum_priors(sample, method)
        tree = models.sample_segment_yields(
            sample,
            prior=(prior, prior),
            finite_population=POSTERIOR_METHODS[method][1],
            rng=seed,
            **options,
        )
    segment = tree["posterior"]["segment_yield"]
    values = Y.measure_from_yields(
        measure,
        segment.sel(segment="retrieved").values,
        segment.sel(segment="unretrieved").values,
        n1,
    )
    posterior = tree["posterior"].to_dataset()
    posterior[measure] = (("chain", "draw"), values)
    tree["posterior"] = posterior
    tree["constant_data"] = _constant_data(sample)
    return DrawsBounds(values, tree, independent=False)
