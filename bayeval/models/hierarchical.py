"""Stratum prevalences partially pooled within each segment (many small strata).

Designs such as the TREC Legal Track's (Webber 2013, §4.4) stratify by the intersection of the
participating teams' retrievals: ``k`` teams give up to ``2**k`` strata, many with only a handful
of judged items. Independent per-stratum priors then dominate the small strata. This model lets
strata of the same segment (retrieved or unretrieved) share strength: on the logit scale each
stratum prevalence is its segment's location plus a segment-specific spread times a standard
normal deviate (non-centred parameterisation). The model card is
``models/hierarchical_yields/spec.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bayeval._constraints import Flag, validate
from bayeval.models._common import (
    NUTS_CONSTRAINTS,
    PER_SEGMENT,
    SEGMENT_PRIOR,
    SEGMENTS,
    add_yields,
    check_sample,
    coords,
    observe,
    run_nuts,
    segment_index,
)
from bayeval.stratified_sample import StratifiedSample

if TYPE_CHECKING:
    import pymc as pm
    import xarray as xr

__all__ = ["hierarchical_yields_model", "sample_hierarchical_yields"]


@validate(prior=SEGMENT_PRIOR, sigma_scale=PER_SEGMENT, finite_population=Flag())
def hierarchical_yields_model(
    sample: StratifiedSample,
    *,
    prior: tuple[Any, Any] = (0.5, 0.5),
    sigma_scale: Any = 2.0,
    finite_population: bool = True,
) -> pm.Model:
    """Build the PyMC model with stratum prevalences pooled within segments.

    Parameters
    ----------
    sample : StratifiedSample
        Per-stratum population sizes ``N``, sample sizes ``n``, sampled positives ``r`` and
        segment membership.
    prior : tuple (a, b), default (0.5, 0.5)
        Beta shape parameters of the prior on each segment's ``typical_prevalence``, the
        inverse logit of the segment location ``mu``. Each of ``a`` and ``b`` is a positive
        number or a pair ``(retrieved, unretrieved)``. The default makes the complete-pooling
        limit (``sigma -> 0``) Webber's half prior on the segment.
    sigma_scale : float or pair of float, default 2.0
        Scale of the half-normal prior on each segment's between-stratum standard deviation
        ``sigma`` (logit scale); a number or a pair ``(retrieved, unretrieved)``.
    finite_population : bool, default True
        As in :func:`bayeval.models.segment_yields_model`: if False the model also holds the
        continuous yields ``r + prevalence * (N - n)``; if True the integer yields are drawn
        after NUTS by :func:`sample_hierarchical_yields`.

    Returns
    -------
    pymc.Model
        Coordinates ``stratum`` and ``segment``. Free variables ``typical_prevalence`` and
        ``sigma`` (dims ``segment``) and ``z`` (dims ``stratum``); deterministics ``mu``
        (dims ``segment``) and ``prevalence`` (dims ``stratum``); observed
        ``sampled_positives`` (dims ``stratum``).

    See Also
    --------
    sample_hierarchical_yields : Run NUTS on this model and add the yields to the posterior.
    bayeval.models.segment_yields_model : Independent priors per stratum (no pooling).

    Notes
    -----
    For stratum ``s`` in segment ``k = seg(s)``::

        typical_prevalence_k ~ Beta(a_k, b_k),   mu_k = logit(typical_prevalence_k)
        sigma_k ~ HalfNormal(sigma_scale_k)
        z_s ~ Normal(0, 1)
        logit(prevalence_s) = mu_k + sigma_k * z_s
        sampled_positives_s ~ Binomial(n_s, prevalence_s)

    The non-centred form keeps NUTS free of the funnel between ``sigma`` and the stratum
    effects when samples are small, which is the case the model is for. The posterior is not
    conjugate, so there is no closed-form twin. A stratum's posterior prevalence is shrunk from
    its sample proportion towards its segment's typical prevalence, more so the smaller its
    sample; strata with ``n_s = 0`` get the segment's posterior predictive prevalence. A
    segment with a single stratum has ``sigma`` identified by its prior only (only ``mu + sigma
    * z`` is informed by the data); the model still samples, and that stratum's implied prior
    is the logit-Beta location blurred by ``Normal(0, sigma)``.

    References
    ----------
    W. Webber, "Approximate recall confidence intervals", ACM Transactions on Information
    Systems 31(1), 2013, §2.2, §3.6, §4.4. A. Gelman, "Prior distributions for variance
    parameters in hierarchical models", Bayesian Analysis 1(3), 2006.

    Examples
    --------
    >>> from bayeval.stratified_sample import StratifiedSample
    >>> from bayeval.models import hierarchical_yields_model
    >>> s = StratifiedSample(
    ...     population=[800, 300, 60000, 900],
    ...     sampled=[40, 20, 50, 20],
    ...     positives=[30, 9, 0, 4],
    ...     retrieved=[True, True, False, False],
    ... )
    >>> model = hierarchical_yields_model(s)
    >>> [v.name for v in model.free_RVs]
    ['typical_prevalence', 'sigma', 'z']
    >>> [v.name for v in model.deterministics]
    ['mu', 'prevalence']
    """
    import pymc as pm

    sample = check_sample(sample)
    a, b, scale = (np.broadcast_to(v, len(SEGMENTS)).astype(float) for v in (*prior, sigma_scale))
    seg = segment_index(sample)
    # A segment with one stratum has nothing to pool: its stratum prevalence is the segment's
    # typical prevalence, and its sigma (kept so that dims stay uniform) does not enter the
    # likelihood. See the Notes and the model card.
    pooled = (np.bincount(seg, minlength=len(SEGMENTS)) > 1).astype(float)

    with pm.Model(coords=coords(sample)) as model:
        typical = pm.Beta("typical_prevalence", alpha=a, beta=b, dims="segment")
        mu = pm.Deterministic("mu", pm.math.log(typical) - pm.math.log1p(-typical), dims="segment")
        sigma = pm.HalfNormal("sigma", sigma=scale, dims="segment")
        z = pm.Normal("z", mu=0.0, sigma=1.0, dims="stratum")
        spread = sigma * pooled
        prevalence = pm.Deterministic(
            "prevalence", pm.math.invlogit(mu[seg] + spread[seg] * z), dims="stratum"
        )
        observe(sample, prevalence)
    if not finite_population:
        add_yields(model, sample, finite_population=False)
    return model


@validate(prior=SEGMENT_PRIOR, sigma_scale=PER_SEGMENT, **NUTS_CONSTRAINTS)
def sample_hierarchical_yields(
    sample: StratifiedSample,
    *,
    prior: tuple[Any, Any] = (0.5, 0.5),
    sigma_scale: Any = 2.0,
    finite_population: bool = True,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    target_accept: float = 0.95,
    rng: int | np.random.Generator | None = None,
    progressbar: bool = False,
) -> xr.DataTree:
    """Sample stratum and segment yields under within-segment partial pooling with NUTS.

    Parameters
    ----------
    sample : StratifiedSample
        The stratified sample.
    prior : tuple (a, b), default (0.5, 0.5)
        Beta prior on each segment's typical prevalence; see
        :func:`hierarchical_yields_model`.
    sigma_scale : float or pair of float, default 2.0
        Half-normal scale of the between-stratum spread ``sigma`` (logit scale).
    finite_population : bool, default True
        True: integer yields ``r + Binomial(N - n, prevalence)``. False: continuous yields
        ``r + prevalence * (N - n)``.
    draws, tune, chains : int, default 1000, 1000, 2
        NUTS draws kept per chain, tuning steps per chain, number of chains.
    target_accept : float, default 0.95
        NUTS target acceptance probability; higher than for the independent model because
        hierarchical posteriors have more varied curvature.
    rng : int, numpy.random.Generator or None
        Source of the seeds for NUTS and for the posterior-predictive draw.
    progressbar : bool, default False
        Show PyMC's progress bar.

    Returns
    -------
    xarray.DataTree
        Groups ``posterior``, ``sample_stats`` and ``observed_data``. The posterior holds the
        model's variables plus ``stratum_yield`` (chain, draw, stratum) and ``segment_yield``
        (chain, draw, segment), as in :func:`bayeval.models.sample_segment_yields`.

    See Also
    --------
    hierarchical_yields_model : The model being sampled.
    bayeval.models.sample_segment_yields : Independent priors per stratum.

    Notes
    -----
    Check ``int(dt["sample_stats"]["diverging"].sum())`` before using the draws: divergences
    mean NUTS could not explore part of the posterior, and raising ``target_accept`` (to 0.99,
    say) is the first remedy. The finite-population yields are drawn exactly as in
    :func:`bayeval.models.sample_segment_yields`, from the pooled prevalences.

    References
    ----------
    W. Webber, "Approximate recall confidence intervals", ACM Transactions on Information
    Systems 31(1), 2013, §2.8, §3.6, §4.4.

    Examples
    --------
    >>> import arviz as az
    >>> from bayeval.stratified_sample import StratifiedSample
    >>> from bayeval.models import sample_hierarchical_yields
    >>> s = StratifiedSample(
    ...     population=[800, 300, 60000, 900],
    ...     sampled=[40, 20, 50, 20],
    ...     positives=[30, 9, 0, 4],
    ...     retrieved=[True, True, False, False],
    ... )
    >>> dt = sample_hierarchical_yields(s, rng=0)  # doctest: +SKIP
    >>> int(dt["sample_stats"]["diverging"].sum())  # doctest: +SKIP
    0
    >>> az.summary(dt, var_names=["segment_yield"])  # doctest: +SKIP
    """
    model = hierarchical_yields_model(
        sample, prior=prior, sigma_scale=sigma_scale, finite_population=finite_population
    )
    return run_nuts(
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
