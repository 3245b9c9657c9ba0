"""Independent beta-binomial stratum yields as a PyMC model (Webber 2013, §2.8, §3.5-3.6).

Each stratum ``s`` of a stratified sample holds ``N_s`` items of which ``n_s`` were drawn by
simple random sampling and ``r_s`` judged positive. Stratum prevalences get independent
``Beta(a_s, b_s)`` priors and the sample counts a binomial likelihood; the stratum *yield* (number
of positives in the whole stratum) is the ``r_s`` seen plus the positives among the ``N_s - n_s``
unsampled items. This is the NUTS (``engine="pymc"``) twin of the closed-form beta-binomial
posterior; the model card is ``models/segment_yields/spec.md``.

Its input checks, posterior-predictive yield step and NUTS driver live in
:mod:`bayeval.models._common`, shared with :mod:`bayeval.models.hierarchical`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bayeval._constraints import Flag, validate
from bayeval.models._common import (
    NUTS_CONSTRAINTS,
    SEGMENTS,
    STRATUM_PRIOR,
    add_yields,
    check_sample,
    coords,
    observe,
    per_stratum,
    run_nuts,
)
from bayeval.stratified_sample import StratifiedSample

if TYPE_CHECKING:
    import pymc as pm
    import xarray as xr

__all__ = ["SEGMENTS", "sample_segment_yields", "segment_yields_model"]


@validate(prior=STRATUM_PRIOR, finite_population=Flag())
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
    >>> from bayeval.stratified_sample import StratifiedSample
    >>> from bayeval.models import segment_yields_model
    >>> s = StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    >>> model = segment_yields_model(s)
    >>> [v.name for v in model.free_RVs], [v.name for v in model.observed_RVs]
    (['prevalence'], ['sampled_positives'])
    >>> model.coords["segment"]
    ('retrieved', 'unretrieved')
    """
    import pymc as pm

    sample = check_sample(sample)
    a, b = (per_stratum(v, f"prior[{i}]", sample.n_strata) for i, v in enumerate(prior))

    with pm.Model(coords=coords(sample)) as model:
        observe(sample, pm.Beta("prevalence", alpha=a, beta=b, dims="stratum"))
    if not finite_population:
        add_yields(model, sample, finite_population=False)
    return model


@validate(prior=STRATUM_PRIOR, **NUTS_CONSTRAINTS)
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
    >>> from bayeval.stratified_sample import StratifiedSample
    >>> from bayeval.models import sample_segment_yields
    >>> s = StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    >>> dt = sample_segment_yields(s, rng=0)  # doctest: +SKIP
    >>> seg = dt["posterior"]["segment_yield"]  # doctest: +SKIP
    >>> recall = seg.sel(segment="retrieved") / seg.sum("segment")  # doctest: +SKIP
    >>> az.summary(dt, var_names=["segment_yield"])  # doctest: +SKIP
    """
    model = segment_yields_model(sample, prior=prior, finite_population=finite_population)
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
