"""Public interval functions: recall, precision and F1 from a stratified sample; proportions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np

from bayeval._constraints import Integer, OneOf, Optional, Prob, Seed, Whole, validate
from bayeval._core.binomial import BINOMIAL_METHODS
from bayeval._validation import check_choice, check_rng
from bayeval.intervals._engines import DrawsBounds, Forced
from bayeval.intervals.frequentist import (
    NORMAL_METHODS,
    binomial_engine,
    koopman_engine,
    normal_engine,
    retrieved_counts,
)
from bayeval.intervals.posterior import POSTERIOR_METHODS, PYMC_ONLY, posterior_bounds
from bayeval.intervals.result import IntervalResult
from bayeval.results import BASES, resolve_kind
from bayeval.stratified_sample import StratifiedSample

__all__ = [
    "BINOMIAL_METHODS",
    "F1_METHODS",
    "PRECISION_METHODS",
    "RECALL_METHODS",
    "binomial_interval",
    "f1_interval",
    "precision_interval",
    "recall_interval",
]

RecallMethod = Literal[
    "naive-binomial",
    "normal-mle",
    "normal-laplace",
    "normal-agresti-coull",
    "koopman",
    "beta-jeffreys",
    "beta-binomial-uniform",
    "beta-binomial-mcp",
    "beta-binomial-half",
    "beta-binomial-hierarchical",
]
RECALL_METHODS = (
    "naive-binomial",
    *NORMAL_METHODS,
    "koopman",
    *POSTERIOR_METHODS,
)
PRECISION_METHODS = (*POSTERIOR_METHODS, *BINOMIAL_METHODS)
F1_METHODS = tuple(POSTERIOR_METHODS)
ENGINES = ("exact", "pymc")


def _check_sample(sample):
    if not isinstance(sample, StratifiedSample):
        raise ValueError(
            f"`sample` must be a bayeval.StratifiedSample; got {type(sample).__name__}. Build one "
            "with StratifiedSample(...), StratifiedSample.two_segments(...) or .from_frame(...)."
        )
    return sample


def _checked(methods):
    """Declare the checks of the interval functions of a stratified sample."""
    return validate(
        method=OneOf(methods),
        prob=Prob(),
        engine=Optional(OneOf(ENGINES)),
        rng=Seed(),
        draws=Optional(Integer(minimum=1)),
    )


def _resolve_engine(engine, method):
    if method not in POSTERIOR_METHODS:
        if engine is not None:
            raise ValueError(
                f"`engine` applies to posterior methods only; method {method!r} is computed in "
                f"closed form. Leave `engine` unset (got {engine!r})."
            )
        return None
    if engine is None:
        return "pymc" if method in PYMC_ONLY else "exact"
    check_choice(engine, ENGINES, "engine")
    if engine == "exact" and method in PYMC_ONLY:
        raise ValueError(
            f"method {method!r} has no closed-form posterior; use engine='pymc' (got 'exact')."
        )
    return engine


def _interval(sample, measure, method, allowed, *, prob, kind, engine, rng, draws, sampler_options):
    sample = _check_sample(sample)
    kind, _ = resolve_kind(kind, None, BASES)
    engine = _resolve_engine(engine, method)
    if measure in ("recall", "f1") and (sample.retrieved.all() or not sample.retrieved.any()):
        raise ValueError(f"{measure} needs strata in both segments; `sample` has only one.")
    if method in POSTERIOR_METHODS:
        bounds = posterior_bounds(
            sample,
            measure,
            method,
            engine=engine,
            rng=check_rng(rng),
            draws=draws,
            sampler_options=sampler_options,
        )
    else:
        bounds = _closed_form_bounds(sample, method)
    return _result(sample, measure, method, bounds, prob=prob, kind=kind, engine=engine)


def _closed_form_bounds(sample, method):
    """Return the bounds engine of a method that is not a posterior method."""
    if method in BINOMIAL_METHODS:
        return binomial_engine(*retrieved_counts(sample, method), method)
    if method == "koopman":
        return koopman_engine(sample)
    return normal_engine(sample, method)


def _result(sample, measure, method, bounds, *, prob, kind, engine):
    """Wrap ``bounds`` (with Webber's forcing for recall) into an :class:`IntervalResult`."""
    if measure == "recall":
        r_ret = sample.positives[sample.retrieved].sum()
        r_unret = sample.positives[~sample.retrieved].sum()
        bounds = Forced(bounds, low_zero=r_ret == 0, high_one=r_unret == 0)
    return _wrap(measure, method, bounds, prob, kind, engine, {"sample": sample})


def _wrap(measure, method, bounds, prob, kind, engine, inputs) -> IntervalResult:
    """Wrap ``bounds`` at ``prob`` and ``kind`` in a result (``inputs`` rebuild it on `load`)."""
    low, high = bounds.bounds(prob, kind)
    return IntervalResult(
        measure, method, bounds.estimate, low, high, prob, kind, engine, bounds, inputs
    )


def rebuild(call, posterior) -> IntervalResult:
    """Rebuild an :class:`IntervalResult` from :meth:`IntervalResult.to_datatree`'s groups.

    Closed forms and the exact engine's quadrature are recomputed from the stored counts (they
    are deterministic); results whose bounds came from draws get them from the stored posterior,
    so the loaded result gives the same intervals as the one written.
    """
    a = call.attrs
    prob, kind, method, measure = (
        float(a["prob"]),
        str(a["kind"]),
        str(a["method"]),
        str(a["measure"]),
    )
    if measure == "proportion":
        return binomial_interval(int(a["r"]), int(a["n"]), method, prob=prob, kind=kind)
    sample = StratifiedSample(
        population=call["population"].values,
        sampled=call["sampled"].values,
        positives=call["positives"].values,
        retrieved=call["retrieved"].values.astype(bool),
        names=[str(n) for n in call["stratum"].values],
    )
    engine = str(a["engine"]) or None
    if a["bounds"] == "DrawsBounds":
        values = posterior["posterior"][measure].values
        bounds = DrawsBounds(values, posterior, independent=engine == "exact")
    elif a["bounds"] == "QuadratureBounds":
        bounds = posterior_bounds(
            sample,
            measure,
            method,
            engine="exact",
            rng=np.random.default_rng(0),  # unused: the posterior draws are the stored ones
            draws=None,
            sampler_options=None,
        )
        bounds.use_posterior(posterior)
    else:
        bounds = _closed_form_bounds(sample, method)
    return _result(sample, measure, method, bounds, prob=prob, kind=kind, engine=engine)


@_checked(RECALL_METHODS)
def recall_interval(
    sample: StratifiedSample,
    method: RecallMethod = "beta-binomial-half",
    *,
    prob: float = 0.95,
    kind: Literal["eti", "hdi", "lower", "upper"] = "eti",
    engine: Literal["exact", "pymc"] | None = None,
    rng: int | np.random.Generator | None = None,
    draws: int | None = None,
    sampler_options: Mapping | None = None,
) -> IntervalResult:
    """Interval on the recall ``R1 / (R1 + R0)`` of a retrieval from a stratified sample.

    Parameters
    ----------
    sample : StratifiedSample
        Counts per stratum, with strata in both segments.
    method : str
        One of Webber's nine methods, or the hierarchical posterior (see Notes).
    prob : float
        Probability of the interval, in (0, 1).
    kind : {"eti", "hdi", "lower", "upper"}, default "eti"
        Two-sided equal-tailed, highest posterior density (posterior methods), one-sided lower
        bound or one-sided upper bound. ``"equal-tailed"`` still works for one release, with a
        ``DeprecationWarning``.
    engine : {"exact", "pymc"}, optional
        Posterior methods only. ``"exact"`` (default where the posterior is conjugate) uses the
        closed-form posteriors: quadrature when each segment is one stratum, independent draws
        otherwise. ``"pymc"`` samples the model of :mod:`bayeval.models` with NUTS (the default,
        and only engine, of ``"beta-binomial-hierarchical"``).
    rng : int or numpy.random.Generator, optional
        Seed for every draw made (posterior draws, Monte Carlo, NUTS).
    draws : int, optional
        Exact engine: total Monte Carlo draws for stratified samples (default 100,000), or
        draws per chain of the posterior DataTree (default 1,000). PyMC engine: draws per chain.
    sampler_options : mapping, optional
        Extra keyword arguments for the PyMC sampler (``tune``, ``chains``, ``target_accept``).

    Returns
    -------
    IntervalResult

    Notes
    -----
    ============================== ===========================================================
    method                         interval (Webber 2013)
    ============================== ===========================================================
    ``naive-binomial``             Wald interval treating recall as a proportion of the ``r1 +
                                   r0`` sampled positives (§3.1, Eq. 25)
    ``normal-mle``                 normal, propagated variance with finite-population
                                   correction (§3.2, Eq. 23-24, 26)
    ``normal-laplace``             the same after adding 1 positive and 1 negative per stratum
                                   (§3.3, Eq. 27-30)
    ``normal-agresti-coull``       the same after adding 2 and 2 (§3.3)
    ``koopman``                    Koopman's score interval on ``p0 / p1``, mapped to recall
                                   (§3.4); strata are summed within segments, so they must
                                   have been sampled at the same rate (else ``ValueError``)
    ``beta-jeffreys``              ``R = r + (N - n) p``, ``p ~ Beta(r + 1/2, n - r + 1/2)`` per
                                   stratum (§3.5)
    ``beta-binomial-uniform``      beta-binomial yield posterior, ``Beta(1, 1)`` prior (§3.6)
    ``beta-binomial-mcp``          the same with the most conservative prior of Eq. 18 solved
                                   for each stratum (§2.8)
    ``beta-binomial-half``         the same with the ``Beta(1/2, 1/2)`` prior (§3.6; the paper's
                                   recommendation)
    ``beta-binomial-hierarchical`` partial pooling of stratum prevalences within each segment
                                   (PyMC only; for many small strata)
    ============================== ===========================================================

    As in the paper, the lower bound is forced to 0 when no positive was sampled in the
    retrieved segment and the upper bound to 1 when none was sampled in the unretrieved one.
    Normal intervals are clipped to ``[0, 1]``. The exact engine's quadrature error in the
    bounds is below 1e-4 (measured against exact sums in ``benchmarks/``); its Monte Carlo
    path reports ``mc_error``.

    References
    ----------
    W. Webber, "Approximate recall confidence intervals", ACM TOIS 31(1), 2013.

    Examples
    --------
    >>> import bayeval as be
    >>> s = be.StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    >>> res = be.recall_interval(s, method="beta-binomial-half", prob=0.95, rng=0)
    >>> print(f"{res.lower:.3f} {res.upper:.3f}")
    0.111 0.542
    >>> print(f"{be.recall_interval(s, method='normal-mle').lower:.3f}")
    0.038
    """
    return _interval(
        sample,
        "recall",
        method,
        RECALL_METHODS,
        prob=prob,
        kind=kind,
        engine=engine,
        rng=rng,
        draws=draws,
        sampler_options=sampler_options,
    )


@_checked(PRECISION_METHODS)
def precision_interval(
    sample: StratifiedSample,
    method: str = "beta-binomial-half",
    *,
    prob: float = 0.95,
    kind: Literal["eti", "hdi", "lower", "upper"] = "eti",
    engine: Literal["exact", "pymc"] | None = None,
    rng: int | np.random.Generator | None = None,
    draws: int | None = None,
    sampler_options: Mapping | None = None,
) -> IntervalResult:
    """Interval on the precision ``R1 / N1`` of the retrieved segment.

    Parameters
    ----------
    sample : StratifiedSample
        Only the retrieved strata are used.
    method : str
        A posterior method (as in :func:`recall_interval`, finite-population aware and combining
        strata), or a binomial interval on the retrieved sample as one proportion:
        ``"wald"``, ``"wilson"``, ``"agresti-coull"``, ``"clopper-pearson"``, ``"jeffreys"``
        (these need a single retrieved stratum and ignore the finite population).
    prob, kind, engine, rng, draws, sampler_options
        As in :func:`recall_interval`.

    Returns
    -------
    IntervalResult

    Examples
    --------
    >>> import bayeval as be
    >>> s = be.StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    >>> print(f"{be.precision_interval(s, method='wilson').upper:.3f}")
    0.596
    """
    return _interval(
        sample,
        "precision",
        method,
        PRECISION_METHODS,
        prob=prob,
        kind=kind,
        engine=engine,
        rng=rng,
        draws=draws,
        sampler_options=sampler_options,
    )


@_checked(F1_METHODS)
def f1_interval(
    sample: StratifiedSample,
    method: str = "beta-binomial-half",
    *,
    prob: float = 0.95,
    kind: Literal["eti", "hdi", "lower", "upper"] = "eti",
    engine: Literal["exact", "pymc"] | None = None,
    rng: int | np.random.Generator | None = None,
    draws: int | None = None,
    sampler_options: Mapping | None = None,
) -> IntervalResult:
    """Interval on ``F1 = 2 R1 / (N1 + R1 + R0)`` from the segment-yield posteriors.

    Parameters
    ----------
    sample : StratifiedSample
        Counts per stratum, with strata in both segments.
    method : str
        A posterior method (see :func:`recall_interval`).
    prob, kind, engine, rng, draws, sampler_options
        As in :func:`recall_interval`.

    Returns
    -------
    IntervalResult

    Examples
    --------
    >>> import bayeval as be
    >>> s = be.StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    >>> res = be.f1_interval(s, rng=0)
    >>> print(f"{res.lower:.3f} {res.upper:.3f}")
    0.180 0.529
    """
    return _interval(
        sample,
        "f1",
        method,
        F1_METHODS,
        prob=prob,
        kind=kind,
        engine=engine,
        rng=rng,
        draws=draws,
        sampler_options=sampler_options,
    )


@validate(r=Whole(minimum=0), n=Whole(minimum=1), method=OneOf(BINOMIAL_METHODS), prob=Prob())
def binomial_interval(
    r: int,
    n: int,
    method: Literal["wald", "wilson", "agresti-coull", "clopper-pearson", "jeffreys"] = "wilson",
    *,
    prob: float = 0.95,
    kind: Literal["eti", "lower", "upper"] = "eti",
) -> IntervalResult:
    """Confidence interval for a binomial proportion ``r / n`` (Webber §2.5-2.7).

    Parameters
    ----------
    r, n : int
        Successes and trials, ``0 <= r <= n``, ``n >= 1``.
    method : {"wald", "wilson", "agresti-coull", "clopper-pearson", "jeffreys"}
        Wald (normal), Wilson score, Agresti-Coull, Clopper-Pearson exact, Jeffreys.
    prob : float
        Confidence level in (0, 1).
    kind : {"eti", "lower", "upper"}, default "eti"
        Two-sided (equal-tailed), or a one-sided lower or upper bound.

    Returns
    -------
    IntervalResult

    Notes
    -----
    The bounds agree with ``statsmodels.stats.proportion.proportion_confint`` (methods
    ``normal``, ``wilson``, ``agresti_coull``, ``beta``, ``jeffreys``), except that the Jeffreys
    interval is forced to 0 at ``r = 0`` and to 1 at ``r = n``, as Webber (§2.7) does.
    Normal-based intervals are clipped to ``[0, 1]``.

    Examples
    --------
    >>> import bayeval as be
    >>> res = be.binomial_interval(10, 20, method="clopper-pearson")
    >>> print(f"{res.lower:.4f} {res.upper:.4f}")
    0.2720 0.7280
    """
    if r > n:
        raise ValueError(f"`r` cannot exceed `n`; got r={r} > n={n}.")
    kind, _ = resolve_kind(kind, None, ("design",))
    bounds = binomial_engine(r, n, method)
    return _wrap("proportion", method, bounds, prob, kind, None, {"r": r, "n": n})
