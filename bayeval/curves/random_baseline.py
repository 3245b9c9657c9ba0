"""The random-sampling baseline for precision curves (Sabharwal & Sedghi 2017, Section 3)."""

from __future__ import annotations

import math

import numpy as np

from bayeval._constraints import Seed, validate
from bayeval._validation import check_rng
from bayeval.curves.planning import RANDOM_CONSTRAINTS, plan_random
from bayeval.curves.result import CurveResult, build_result, label_prefix
from bayeval.oracles import Oracle

__all__ = ["random_baseline"]


def sample_without_replacement(rng: np.random.Generator, n_pop: int, k: int) -> np.ndarray:
    """``k`` distinct integers drawn uniformly from ``0..n_pop-1``, in O(k) memory.

    For ``k >= n_pop / 4`` a permutation of the population (at most ``4 k`` entries) is cut;
    otherwise integers are drawn with replacement and repeats rejected, keeping values in order of
    first appearance: the first ``k`` distinct values of an i.i.d. uniform sequence form a uniform
    random ``k``-subset. Nothing of size ``n_pop`` is allocated then (numpy's
    ``Generator.choice(n_pop, k, replace=False)`` may build the whole range).
    """
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    if 4 * k >= n_pop:
        return rng.permutation(n_pop)[:k].astype(np.int64)
    drawn = np.empty(0, dtype=np.int64)
    while True:
        # repeats are rare (k < n_pop / 4): a little headroom makes one round the usual case
        extra = rng.integers(0, n_pop, size=k + 16 + k // 8, dtype=np.int64)
        drawn = np.concatenate([drawn, extra])
        _, first = np.unique(drawn, return_index=True)
        if first.size >= k:
            return drawn[np.sort(first)[:k]]


@validate(**RANDOM_CONSTRAINTS, rng=Seed())
def random_baseline(
    oracle: Oracle,
    n_items: int,
    *,
    alpha: float | None = None,
    p_min: float = 0.5,
    delta: float = 0.05,
    n_samples: int | None = None,
    rng: int | np.random.Generator | None = 0,
) -> CurveResult:
    """Approximate the precision function from an annotated prefix plus uniform samples.

    Parameters
    ----------
    oracle : bayeval.oracles.Oracle
        Gives the 0/1 label of the item at a 0-based position; its ``n_items``, if known, must
        equal ``n_items``.
    n_items : int
        Length ``N`` of the ranked list.
    alpha : float, optional
        Target relative error; default ``1.05 * 1.03 - 1`` (see
        :func:`~bayeval.curves.plan_random`).
    p_min : float, default 0.5
        Lower bound assumed on ``p(r)`` for ``r >= n_prefix`` (the ``p(r)`` of Eq. 4).
    delta : float, default 0.05
        Overall error probability, in ``(0, 1)``.
    n_samples : int, optional
        ``s``; default the ``s`` that minimises the annotations (Eq. 5).
    rng : int, numpy.random.Generator or None, default 0
        Seed of the uniform samples.

    Returns
    -------
    CurveResult
        Exact for ``r <= n_prefix``; beyond, ``estimate(r)`` is the precision of the samples at
        positions ``< r`` (the paper's ``p'(r s / N)``), a step function changing at sampled
        ranks (``corners``).

    Notes
    -----
    Section 3 of [1]_: the first ``n_prefix = n_{alpha,s}`` items (Eq. 4) and ``s`` items drawn
    uniformly without replacement from the whole list are labelled; ``annotations`` is
    ``n_prefix + s`` minus the samples that land in the prefix (the overlap the paper's
    footnote 1 ignores), so it is at most ``plan.annotations``.

    **Guarantee** (probability at least ``1 - delta``). Conditional on the number ``z_r`` of
    samples among the top ``r`` items, they are a uniform sample without replacement from them,
    so Hoeffding's bound (Eq. 2-3, valid without replacement) with ``delta / N`` per rank and a
    union bound over the ``N`` ranks give ``|q(r) - p(r)| <= t_r`` for all ``r`` at once, with
    ``t_r = sqrt(ln(2 N / delta) / (2 z_r))``. If ``p(r) >= p_min`` this is a relative error
    ``alpha_r = max(alpha, t_r / p_min)``: ``|q - p| <= alpha_r p``. The paper calls this a
    ``(1 + alpha)``-approximation; what the relative error implies is
    ``lower = q / (1 + alpha_r) <= p(r) <= q / (1 - alpha_r) = upper`` (``upper = 1`` when
    ``alpha_r >= 1``). Eq. 4 makes ``t_r <= alpha p_min`` once ``z_r`` reaches its expectation
    ``r s / N`` at ``r = n_prefix``, so ``alpha_r = alpha`` except where fewer samples than
    expected fell in the top ranks; there the bounds widen honestly rather than claim ``alpha``.
    Assumption: ``p(r) >= p_min`` for ``r > n_prefix``; no monotonicity is needed.

    References
    ----------
    .. [1] A. Sabharwal and H. Sedghi. How good are my predictions? Efficiently approximating
       precision-recall curves for massive datasets. UAI 2017.

    Examples
    --------
    >>> from bayeval import curves
    >>> from bayeval.oracles import CallableOracle
    >>> oracle = CallableOracle(lambda i: i % 4 != 3, n_items=10**6, vectorized=True)
    >>> res = curves.random_baseline(oracle, 10**6, alpha=0.1, p_min=0.7, rng=1)
    >>> res.plan.n_prefix, res.plan.n_samples, res.annotations <= res.plan.annotations
    (42264, 42263, True)
    >>> bool(res.lower(10**6) <= 0.75 <= res.upper(10**6))
    True
    """
    plan = plan_random(n_items, alpha=alpha, p_min=p_min, delta=delta, n_samples=n_samples)
    gen = check_rng(rng)
    n = plan.n_items
    before, prefix_positions, prefix_labels = label_prefix(oracle, plan, plan.n_prefix)
    samples = np.sort(sample_without_replacement(gen, n, plan.n_samples))
    sample_labels = oracle.label(samples)
    positions, labels = [prefix_positions, samples], [prefix_labels, sample_labels]

    if plan.n_prefix >= n:
        empty = np.empty(0)
        corners = np.empty(0, dtype=np.int64)
        estimate = lower = upper = empty
    else:
        ranks = samples + 1  # a sample at position i counts for every rank r > i
        corners = np.concatenate([[plan.n_prefix], ranks[ranks > plan.n_prefix]])
        corners = np.unique(corners)
        z = np.searchsorted(ranks, corners, side="right")
        positives = np.concatenate([[0], np.cumsum(sample_labels, dtype=np.int64)])[z]
        with np.errstate(divide="ignore", invalid="ignore"):
            estimate = np.where(z > 0, positives / np.maximum(z, 1), np.nan)
            half = np.sqrt(math.log(2.0 * n / plan.delta) / (2.0 * z))
        rel = np.maximum(plan.alpha, half / plan.p_min)
        lower = np.where(z > 0, estimate / (1.0 + rel), 0.0)
        upper = np.where((z > 0) & (rel < 1.0), estimate / np.maximum(1.0 - rel, 1e-300), 1.0)

    return build_result(
        method="random",
        plan=plan,
        oracle=oracle,
        before=before,
        positions=positions,
        labels=labels,
        prefix_labels=prefix_labels,
        corners=corners,
        estimate=estimate,
        lower=lower,
        upper=upper,
        guarantee=(
            "probability >= 1 - delta: q/(1+alpha_r) <= p(r) <= q/(1-alpha_r) for every "
            "r > n_prefix where p(r) >= p_min, alpha_r = max(alpha, t_r/p_min) (Hoeffding with "
            "the realised sample count, union bound over N ranks); exact for r <= n_prefix"
        ),
        strata=np.array([min(plan.n_prefix, n), n]),  # one stratum: uniformly sampled tail
    )
