"""Independent beta-binomial stratum yields as a PyMC model (Webber 2013, §2.8, §3.5-3.6).

Each stratum ``s`` of a stratified sample holds ``N_s`` items of which ``n_s`` were drawn by
simple random sampling and ``r_s`` judged positive. Stratum prevalences get independent
``Beta(a_s, b_s)`` priors and the sample counts a binomial likelihood; the stratum *yield* (number
of positives in the whole stratum) is the ``r_s`` seen plus the positives among the ``N_s - n_s``
unsampled items. This is the NUTS (``engine="pymc"``) twin of the closed-form beta-binomial
posterior; the model card is ``models/segment_yields/spec.md``.

The helpers prefixed with an underscore (input checks, the posterior-predictive yield step and
the NUTS driver) are shared with :mod:`bayeval.models.hierarchical`.
"""

from __future__ import annotations

from numbers import Integral
from typing import TYPE_CHECKING, Any

import numpy as np

from bayeval._validation import check_rng
from bayeval.sample import StratifiedSample

if TYPE_CHECKING:
    import pymc as pm
    import xarray as xr

__all__ = ["SEGMENTS", "sample_segment_yields", "segment_yields_model"]

SEGMENTS = ("retrieved", "unretrieved")
"""Labels of the ``segment`` coordinate, in this order."""

_SEED_HIGH = 2**31 - 1  # seeds handed to PyMC are drawn uniformly from [0, _SEED_HIGH)


# -- input checks --------------------------------------------------------------------------------
def _check_sample(sample: Any) -> StratifiedSample:
    if not isinstance(sample, StratifiedSample):
        raise TypeError(
            "`sample` must be a bayeval.sample.StratifiedSample; "
            f"got {type(sample).__name__}: {sample!r}."
        )
    return sample


def _check_shape_param(value: Any, name: str, size: int, per: str) -> np.ndarray:
    """Return ``value`` broadcast to a float array of ``size`` positive finite entries."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"`{name}` must be a positive number or a sequence of {size} positive numbers "
            f"(one per {per}); got {value!r}."
        ) from None
    if arr.ndim > 1 or (arr.ndim == 1 and arr.size != size):
        raise ValueError(
            f"`{name}` must be a positive number or a sequence of {size} positive numbers "
            f"(one per {per}); got shape {arr.shape}."
        )
    if not (np.isfinite(arr).all() and (arr > 0).all()):
        raise ValueError(f"`{name}` must contain positive finite numbers; got {value!r}.")
    return np.broadcast_to(arr, (size,)).copy()


def _check_prior(prior: Any, size: int, per: str) -> tuple[np.ndarray, np.ndarray]:
    """Split ``prior = (a, b)`` into two float arrays of length ``size``."""
    if isinstance(prior, str) or not hasattr(prior, "__len__") or len(prior) != 2:
        raise ValueError(
            "`prior` must be a pair (a, b) of Beta shape parameters, each a positive number or "
            f"a sequence with one entry per {per}; got {prior!r}."
        )
    a, b = prior
    return (
        _check_shape_param(a, "prior[0] (a)", size, per),
        _check_shape_param(b, "prior[1] (b)", size, per),
    )


def _check_positive_int(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def _check_target_accept(value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        out = float("nan")
    if not 0.0 < out < 1.0:
        raise ValueError(f"`target_accept` must be in the open interval (0, 1); got {value!r}.")
    return out


def _check_flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"`{name}` must be True or False; got {value!r}.")
    return bool(value)


# -- model pieces shared by the segment and hierarchical models ---------------------------------
def _coords(sample: StratifiedSample) -> dict[str, list[str]]:
    return {"stratum": list(sample.names), "segment": list(SEGMENTS)}


def _segment_index(sample: StratifiedSample) -> np.ndarray:
    """Position of each stratum's segment in :data:`SEGMENTS` (0 retrieved, 1 unretrieved)."""
    return np.where(sample.retrieved, 0, 1).astype(np.int64)


def _observe(sample: StratifiedSample, prevalence) -> None:
    """Add the likelihood of the sampled positives, ``r_s ~ Binomial(n_s, prevalence_s)``."""
    import pymc as pm

    pm.Binomial(
        "sampled_positives",
        n=sample.sampled,
        p=prevalence,
        observed=sample.positives,
        dims="stratum",
    )


def _add_yields(model: pm.Model, sample: StratifiedSample, finite_population: bool) -> None:
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
    seg = _segment_index(sample)
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


def _draw_seeds(rng: Any) -> tuple[int, int]:
    """Two independent seeds (NUTS, posterior predictive) from ``rng``."""
    gen = check_rng(rng)
    first, second = gen.integers(0, _SEED_HIGH, size=2)
    return int(first), int(second)


def _run_nuts(
    model: pm.Model,
    sample: StratifiedSample,
    *,
    finite_population: bool,
    draws: Any,
    tune: Any,
    chains: Any,
    target_accept: Any,
    rng: Any,
    progressbar: Any,
) -> xr.DataTree:
    """Sample ``model`` with PyMC's NUTS and put the stratum and segment yields in ``posterior``."""
    import pymc as pm
    import xarray as xr

    draws = _check_positive_int(draws, "draws")
    tune = _check_positive_int(tune, "tune", minimum=0)
    chains = _check_positive_int(chains, "chains")
    target_accept = _check_target_accept(target_accept)
    progressbar = _check_flag(progressbar, "progressbar")
    nuts_seed, predictive_seed = _draw_seeds(rng)

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
        _add_yields(model, sample, finite_population=True)
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
def segment_yields_model(
    sample: StratifiedSample,
    *,
    prior: tuple[Any, Any] = (0.5, 0.5),
    finite_population: bool = True,
) -> pm.Model:
    """Build the PyMC model of independent stratum prevalences with Beta priors.

    Parameters
    ----------
    sample : StratifiedSample
        Per-stratum population sizes ``N``, sample sizes ``n``, sampled positives ``r`` and
        segment membership.
    prior : tuple (a, b), default (0.5, 0.5)
        Beta shape parameters of the prior on each stratum prevalence. Each of ``a`` and ``b``
        is a positive number or a sequence with one entry per stratum (the most conservative
        prior of Webber §2.8 differs between strata). ``(0.5, 0.5)`` is the half prior that
        Webber recommends, ``(1, 1)`` the uniform one.
    finite_population : bool, default True
        If False the model also holds the deterministics ``stratum_yield = r + prevalence *
        (N - n)`` and ``segment_yield`` (Webber §3.5). If True (the default, Webber §3.6) the
        yields need a posterior-predictive draw of the unsampled positives after NUTS, which
        :func:`sample_segment_yields` performs; the model then holds only ``prevalence`` and
        the likelihood.

    Returns
    -------
    pymc.Model
        Coordinates ``stratum`` (``sample.names``) and ``segment`` (``"retrieved",
        "unretrieved"``); free variable ``prevalence`` (dims ``stratum``); observed variable
        ``sampled_positives`` (dims ``stratum``).

    See Also
    --------
    sample_segment_yields : Run NUTS on this model and add the yields to the posterior.
    bayeval.models.hierarchical.hierarchical_yields_model : Partial pooling within segments.

    Notes
    -----
    The generative story is ``prevalence_s ~ Beta(a_s, b_s)`` and ``sampled_positives_s ~
    Binomial(n_s, prevalence_s)``, independently over strata. The posterior of each prevalence
    is ``Beta(a_s + r_s, b_s + n_s - r_s)`` (Webber Eq. 15 and §2.7), so this model is a check on
    the closed-form path rather than a necessity: both give the same answer within Monte Carlo
    error. Strata with ``n_s = 0`` contribute a zero-trial binomial, so their posterior is
    their prior. PyMC samples each prevalence on the log-odds scale; priors with ``a`` or ``b``
    far below 0.1 (the most conservative prior for ``n = 1``, say) make that scale's tails so
    heavy that NUTS mixes badly, and the exact engine should be preferred.

    References
    ----------
    W. Webber, "Approximate recall confidence intervals", ACM Transactions on Information
    Systems 31(1), 2013, §2.7-2.8 (Eq. 15-18), §3.5-3.6.

    Examples
    --------
    >>> from bayeval.sample import StratifiedSample
    >>> from bayeval.models import segment_yields_model
    >>> s = StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    >>> model = segment_yields_model(s)
    >>> [v.name for v in model.free_RVs], [v.name for v in model.observed_RVs]
    (['prevalence'], ['sampled_positives'])
    >>> model.coords["segment"]
    ('retrieved', 'unretrieved')
    """
    import pymc as pm

    sample = _check_sample(sample)
    a, b = _check_prior(prior, sample.n_strata, "stratum")
    finite_population = _check_flag(finite_population, "finite_population")

    with pm.Model(coords=_coords(sample)) as model:
        _observe(sample, pm.Beta("prevalence", alpha=a, beta=b, dims="stratum"))
    if not finite_population:
        _add_yields(model, sample, finite_population=False)
    return model


def sample_segment_yields(
    sample: StratifiedSample,
    *,
    prior: tuple[Any, Any] = (0.5, 0.5),
    finite_population: bool = True,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    target_accept: float = 0.9,
    rng: int | np.random.Generator | None = None,
    progressbar: bool = False,
) -> xr.DataTree:
    """Sample the posterior of stratum and segment yields with NUTS.

    Parameters
    ----------
    sample : StratifiedSample
        The stratified sample.
    prior : tuple (a, b), default (0.5, 0.5)
        Beta prior on each stratum prevalence; see :func:`segment_yields_model`.
    finite_population : bool, default True
        True: yields are integers, ``r + Binomial(N - n, prevalence)`` (beta-binomial posterior,
        Webber §2.8, §3.6). False: yields are continuous, ``r + prevalence * (N - n)``
        (Webber §3.5).
    draws, tune, chains : int, default 1000, 1000, 2
        NUTS draws kept per chain, tuning steps per chain, number of chains.
    target_accept : float, default 0.9
        NUTS target acceptance probability.
    rng : int, numpy.random.Generator or None
        Source of the seeds for NUTS and for the posterior-predictive draw.
    progressbar : bool, default False
        Show PyMC's progress bar.

    Returns
    -------
    xarray.DataTree
        Groups ``posterior``, ``sample_stats`` (with ``diverging``) and ``observed_data``. The
        posterior holds ``prevalence`` (chain, draw, stratum), ``stratum_yield`` (chain, draw,
        stratum) and ``segment_yield`` (chain, draw, segment): the number of positives in each
        stratum and in each segment, sampled and unsampled items together.

    See Also
    --------
    segment_yields_model : The model being sampled.
    bayeval.models.hierarchical.sample_hierarchical_yields : Partial pooling within segments.

    Notes
    -----
    With ``finite_population=True`` the yield of stratum ``s`` in draw ``j`` is ``r_s +
    U_sj`` with ``U_sj ~ Binomial(N_s - n_s, prevalence_sj)`` drawn by
    ``pymc.sample_posterior_predictive`` from an unobserved ``unsampled_positives`` variable
    added to the model after NUTS. Marginally over the prevalence this is the beta-binomial
    posterior ``r_s + BetaBin(N_s - n_s, a_s + r_s, b_s + n_s - r_s)`` of Webber Eq. 17, with
    support ``r_s, ..., r_s + N_s - n_s``; strata with ``N_s = n_s`` have a known yield.
    ``segment_yield`` sums the stratum yields of each segment draw by draw, so functions of
    both segments (recall ``R1 / (R1 + R0)``, Webber Eq. 2) can be computed from the same draws.
    Summaries work directly: ``az.summary(dt)``, ``az.ess(dt)``, ``az.rhat(dt)``.

    References
    ----------
    W. Webber, "Approximate recall confidence intervals", ACM Transactions on Information
    Systems 31(1), 2013, §2.8 (Eq. 16-17), §2.9, §3.5-3.6.

    Examples
    --------
    >>> import arviz as az
    >>> from bayeval.sample import StratifiedSample
    >>> from bayeval.models import sample_segment_yields
    >>> s = StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    >>> dt = sample_segment_yields(s, rng=0)  # doctest: +SKIP
    >>> seg = dt["posterior"]["segment_yield"]  # doctest: +SKIP
    >>> recall = seg.sel(segment="retrieved") / seg.sum("segment")  # doctest: +SKIP
    >>> az.summary(dt, var_names=["segment_yield"])  # doctest: +SKIP
    """
    finite_population = _check_flag(finite_population, "finite_population")
    model = segment_yields_model(sample, prior=prior, finite_population=finite_population)
    return _run_nuts(
        model,
        sample,
        finite_population=finite_population,
        draws=draws,
        tune=tune,
        chains=chains,
        target_accept=target_accept,
        rng=rng,
        progressbar=progressbar,
    )
