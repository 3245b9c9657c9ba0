"""Helpers shared by the stratum-yield models and the seeds every NUTS run draws.

Used by :mod:`~bayeval.models.segment_yields` and :mod:`~bayeval.models.hierarchical`: the
constraints of their priors and NUTS settings, the check of a stratified sample, the
posterior-predictive yield step, and the NUTS driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bayeval._constraints import Array, Flag, Integer, Pair, Prob, Seed
from bayeval._validation import check_rng
from bayeval.stratified_sample import StratifiedSample

if TYPE_CHECKING:
    import pymc as pm
    import xarray as xr

SEGMENTS = ("retrieved", "unretrieved")
"""Labels of the ``segment`` coordinate, in this order."""

SEED_HIGH = 2**31 - 1  # seeds handed to PyMC are drawn uniformly from [0, SEED_HIGH)

#: The constraints of the NUTS settings of the sampling functions (checked before the model is
#: built, so :func:`run_nuts` takes them as they are).
NUTS_CONSTRAINTS = {
    "finite_population": Flag(),
    "draws": Integer(minimum=1),
    "tune": Integer(minimum=0),
    "chains": Integer(minimum=1),
    "target_accept": Prob(),
    "rng": Seed(),
    "progressbar": Flag(),
}

#: A Beta prior ``(a, b)`` of each stratum: each a positive number or one per stratum (how many
#: strata the sample has is checked by :func:`per_stratum`).
STRATUM_PRIOR = Pair(Array(ndim=(0, 1), above=0))
#: A Beta prior ``(a, b)`` of each segment: each a positive number or one per segment.
SEGMENT_PRIOR = Pair(Array(ndim=(0, 1), above=0, size=len(SEGMENTS)))
#: A positive number or one per segment (``(retrieved, unretrieved)``).
PER_SEGMENT = Array(ndim=(0, 1), above=0, size=len(SEGMENTS))


# -- input checks --------------------------------------------------------------------------------
def check_sample(sample: Any) -> StratifiedSample:
    if not isinstance(sample, StratifiedSample):
        raise TypeError(
            "`sample` must be a bayeval.stratified_sample.StratifiedSample; "
            f"got {type(sample).__name__}: {sample!r}."
        )
    return sample


def per_stratum(value: Any, name: str, size: int) -> np.ndarray:
    """Broadcast a checked number or 1-d array (:data:`STRATUM_PRIOR`) to ``size`` floats.

    A 1-d array must hold one entry per stratum of the sample: a check against the data, so it
    is made here rather than declared.
    """
    value = np.asarray(value, dtype=np.float64)  # a default is not normalised
    if value.ndim == 1 and value.size != size:
        raise ValueError(
            f"`{name}` must be a positive number or one per stratum ({size}); got "
            f"{value.size} numbers."
        )
    return np.broadcast_to(value, (size,)).copy()


# -- model pieces shared by the segment and hierarchical models ---------------------------------
def coords(sample: StratifiedSample) -> dict[str, list[str]]:
    return {"stratum": list(sample.names), "segment": list(SEGMENTS)}


def segment_index(sample: StratifiedSample) -> np.ndarray:
    """Position of each stratum's segment in :data:`SEGMENTS` (0 retrieved, 1 unretrieved)."""
    return np.where(sample.retrieved, 0, 1).astype(np.int64)


def observe(sample: StratifiedSample, prevalence) -> None:
    """Add the likelihood of the sampled positives, ``r_s ~ Binomial(n_s, prevalence_s)``."""
    import pymc as pm

    pm.Binomial(
        "sampled_positives",
        n=sample.sampled,
        p=prevalence,
        observed=sample.positives,
        dims="stratum",
    )


def add_yields(model: pm.Model, sample: StratifiedSample, finite_population: bool) -> None:
    """Add ``stratum_yield`` and ``segment_yield`` deterministics to ``model``.

    With ``finite_population`` the unsampled positives are a Binomial(N - n, prevalence) random
    variable ``unsampled_positives``; it has no observed value, so it must be added *after* NUTS
    (otherwise NUTS would have to sample a discrete variable) and drawn by
    ``pm.sample_posterior_predictive``. Without it, the yield is the continuous
    ``r + prevalence * (N - n)`` (Webber §3.5) and can live in the model from the start.
    """
    import pymc as pm
    import pytensor.tensor as pt

    unsampled = (sample.population - sample.sampled).astype(np.int64)
    seg = segment_index(sample)
    with model:
        prevalence = model["prevalence"]
        if finite_population:
            extra = pm.Binomial("unsampled_positives", n=unsampled, p=prevalence, dims="stratum")
        else:
            extra = prevalence * unsampled
        stratum_yield = pm.Deterministic("stratum_yield", sample.positives + extra, dims="stratum")
        members = [np.flatnonzero(seg == k) for k in range(len(SEGMENTS))]
        pm.Deterministic(
            "segment_yield",
            pt.stack([stratum_yield[idx].sum() for idx in members]),
            dims="segment",
        )


def draw_seeds(rng: Any) -> tuple[int, int]:
    """Two independent seeds (NUTS, posterior predictive) from ``rng``."""
    gen = check_rng(rng)
    first, second = gen.integers(0, SEED_HIGH, size=2)
    return int(first), int(second)


def run_nuts(
    model: pm.Model,
    sample: StratifiedSample,
    *,
    finite_population: bool,
    draws: int,
    tune: int,
    chains: int,
    target_accept: float,
    rng: Any,
    progressbar: bool,
) -> xr.DataTree:
    """Sample ``model`` with PyMC's NUTS and put the stratum and segment yields in ``posterior``.

    The settings are checked by the public functions (:data:`NUTS_CONSTRAINTS`).
    """
    import pymc as pm
    import xarray as xr

    nuts_seed, predictive_seed = draw_seeds(rng)

    dt = pm.sample(
        draws=draws,
        tune=tune,
        chains=chains,
        target_accept=target_accept,
        random_seed=nuts_seed,
        progressbar=progressbar,
        nuts_sampler="pymc",  # pymc 6 silently prefers nutpie when it is installed
        model=model,
    )
    if finite_population:
        add_yields(model, sample, finite_population=True)
        predictive = pm.sample_posterior_predictive(
            dt,
            model=model,
            var_names=["stratum_yield", "segment_yield"],
            random_seed=predictive_seed,
            progressbar=False,
        )
        posterior = dt["posterior"].to_dataset()
        added = predictive["posterior_predictive"].to_dataset()[["stratum_yield", "segment_yield"]]
        merged = xr.merge([posterior, added], join="exact", combine_attrs="override")
        dt["posterior"] = xr.DataTree(dataset=merged)
    return dt


# -- public API ----------------------------------------------------------------------------------
