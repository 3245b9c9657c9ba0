"""Frequentist recall intervals of Webber (2013) §3.1-3.4 and binomial precision intervals."""

from __future__ import annotations

import numpy as np

from bayeval._core.normal import naive_binomial_moments, normal_recall_moments
from bayeval.intervals._engines import BinomialBounds, KoopmanBounds, NormalBounds
from bayeval.stratified_sample import StratifiedSample

__all__ = ["NORMAL_METHODS", "binomial_engine", "koopman_engine", "normal_engine"]

# method -> pseudo-counts added to each stratum's positives and negatives (§3.2-3.3)
NORMAL_METHODS = {"normal-mle": 0.0, "normal-laplace": 1.0, "normal-agresti-coull": 2.0}


def normal_engine(sample: StratifiedSample, method: str):
    """Bounds engine (estimate: the centre) of ``naive-binomial`` and the ``normal-*`` methods."""
    sample._require_sampled(f"method {method!r}")
    args = (sample.population, sample.sampled, sample.positives, sample.retrieved)
    if method == "naive-binomial":
        centre, se = naive_binomial_moments(*args)
    else:
        centre, se = normal_recall_moments(*args, adjustment=NORMAL_METHODS[method])
    return NormalBounds(centre, se, method)


def koopman_engine(sample: StratifiedSample):
    """Bounds engine (its estimate the plug-in one) for Koopman's interval (§3.4).

    Koopman's interval is for two simple random samples. Strata are summed within segments,
    which is valid only when each segment's strata were sampled at the same rate; otherwise the
    summed proportions are biased and the interval is refused.
    """
    sample._require_sampled("method 'koopman'")
    if not sample.proportional_within_segments():
        rates = ", ".join(
            f"{name}: {n}/{N}"
            for name, n, N in zip(sample.names, sample.sampled, sample.population, strict=True)
        )
        raise ValueError(
            "method 'koopman' treats each segment as one simple random sample, but the strata "
            f"of a segment were sampled at different rates ({rates}); summing them would bias "
            "the interval (Webber §3.4: no straightforward stratified extension). Use a "
            "posterior method such as 'beta-binomial-half', which draws per stratum."
        )
    tot = sample.segment_totals()
    (N1, N0), (n1, n0), (r1, r0) = tot["N"], tot["n"], tot["r"]
    return KoopmanBounds(r1, n1, N1, r0, n0, N0)


def binomial_engine(r: int, n: int, method: str):
    """Bounds engine (its estimate ``r / n``) for a binomial proportion."""
    return BinomialBounds(int(r), int(n), method)


def retrieved_counts(sample: StratifiedSample, method: str) -> tuple[int, int]:
    """``(r1, n1)`` of a retrieved segment sampled as one simple random sample."""
    if sample.retrieved.sum() != 1:
        raise ValueError(
            f"precision method {method!r} treats precision as one binomial proportion, which "
            f"needs a single retrieved stratum; this sample has {int(sample.retrieved.sum())}. "
            "Use a posterior method (e.g. 'beta-binomial-half'), which combines strata."
        )
    (i,) = np.flatnonzero(sample.retrieved)
    if sample.sampled[i] == 0:
        raise ValueError(
            f"precision method {method!r} needs a sample from the retrieved segment; "
            "`sampled` is 0 there."
        )
    return int(sample.positives[i]), int(sample.sampled[i])
