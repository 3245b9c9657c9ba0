"""LogStrat: logarithmic stratified sampling of the precision function (Sabharwal & Sedghi 2017)."""

from __future__ import annotations

import numpy as np

from bayeval._constraints import Seed, validate
from bayeval._validation import check_rng
from bayeval.curves.planning import LOGSTRAT_CONSTRAINTS, plan_logstrat
from bayeval.curves.random_baseline import sample_without_replacement
from bayeval.curves.result import CurveResult, build_result, label_prefix
from bayeval.oracles import Oracle

__all__ = ["logstrat"]


@validate(**LOGSTRAT_CONSTRAINTS, rng=Seed())
def logstrat(
    oracle: Oracle,
    n_items: int,
    *,
    epsilon: float = 0.03,
    r_tilde: int | None = None,
    delta: float = 0.05,
    p_min: float = 0.5,
    beta: float = 1.05,
    rng: int | np.random.Generator | None = 0,
) -> CurveResult:
    """Approximate the precision function with LogStrat (Algorithm 1 of [1]_).

    Parameters
    ----------
    oracle : bayeval.oracles.Oracle
        Gives the 0/1 label of the item at a 0-based position; its ``n_items``, if known, must
        equal ``n_items``.
    n_items : int
        Length ``N`` of the ranked list (nothing of size ``N`` is allocated).
    epsilon : float, default 0.03
        Geometric spacing of the queried ranks, in ``(0, 1]``.
    r_tilde : int, optional
        Rank after which ``p`` is assumed ``m``-monotone (A.1); default as in
        :func:`~bayeval.curves.plan_logstrat`.
    delta : float, default 0.05
        Overall error probability, in ``(0, 1)``.
    p_min : float, default 0.5
        Lower bound assumed on ``p`` at the queried ranks.
    beta : float, default 1.05
        Per-point approximation factor (Lemma 1); must exceed 1.
    rng : int, numpy.random.Generator or None, default 0
        Seed of the stratified samples.

    Returns
    -------
    CurveResult
        Exact on ranks ``1..g_ell``; beyond, step functions with corners ``g_ell, ..., g_L``.

    Notes
    -----
    Ranks ``1..g_ell`` are labelled; stratum ``(g_{k-1}, g_k]`` receives the planner's fixed
    ``stratum_samples`` (``min(size, ceil(size s / g_k))``, drawn without replacement), which
    replaces Algorithm 1's Bernoulli thinning by a deterministic allocation of equal or higher
    density (see :func:`~bayeval.curves.plan_logstrat`). So ``annotations`` equals
    ``plan.annotations`` exactly (for an oracle that had labelled nothing before). The estimate
    at ``g_k`` is the exact prefix count plus the size-weighted sample means of the strata below
    ``g_k``, over ``g_k``; Definition 5's step function extends it.

    **Guarantee** (probability at least ``1 - delta``). The estimate is a weighted sum of
    independent strata sampled without replacement; an item of stratum ``i`` weighs
    ``size_i / (n_i g_k) <= 1 / s``, and the squared ranges sum to at most ``1 / s``, so
    Hoeffding's bound is at least as tight as for ``s`` uniform draws. With the union bound over
    the ``L - ell`` queries, ``|q(g_k) - p(g_k)| <= (beta - 1) p_min`` for every ``k``, which
    is ``|q - p| <= (beta - 1) p`` where ``p >= p_min``: ``p(g_k) / beta <= q(g_k)`` and
    ``q(g_k) >= (2 - beta) p(g_k)``. (Lemma 1 calls this a ``beta``-approximation; the
    low side of Hoeffding's bound gives ``2 - beta``, slightly weaker than ``1 / beta``.)
    Combined with Theorem 1 (``p(g_j) / (1 + eps) <= p(r) <= (1 + eps) p(g_j)`` for
    ``g_j <= r < g_{j+1}``, the upper side under A.1):

    ``lower(r) = q(g_j) / (beta (1 + eps)) <= p(r) <= (1 + eps) q(g_j) / (2 - beta) = upper(r)``

    at every rank, with probability at least ``1 - delta``, if A.1 holds (``p`` is
    ``m``-monotone beyond ``r_tilde``) and ``p >= p_min`` at the queried ranks (Theorem 2's
    ``beta (1 + eps)``, with the corrected upper factor; ``upper = 1`` if ``beta >= 2``).
    Between ``g_ell`` and ``g_{ell+1}`` the corner is exact and the factors are ``1 + eps``.

    References
    ----------
    .. [1] A. Sabharwal and H. Sedghi. How good are my predictions? Efficiently approximating
       precision-recall curves for massive datasets. UAI 2017.
    .. [2] A. Sabharwal and Y. Xue. Adaptive stratified sampling for precision-recall
       estimation. UAI 2018.

    Examples
    --------
    >>> from bayeval import curves
    >>> from bayeval.oracles import CallableOracle
    >>> oracle = CallableOracle(lambda i: i % 4 != 3, n_items=10**6, vectorized=True)
    >>> res = curves.logstrat(oracle, 10**6, rng=0)
    >>> res.n_queries, res.annotations == res.plan.annotations
    (191, True)
    >>> bool(res.lower(10**6) <= 0.75 <= res.upper(10**6))
    True
    """
    plan = plan_logstrat(
        n_items, epsilon=epsilon, r_tilde=r_tilde, delta=delta, p_min=p_min, beta=beta
    )
    gen = check_rng(rng)
    eps, b = plan.epsilon, plan.beta

    before, prefix_positions, prefix_labels = label_prefix(oracle, plan, plan.g_ell)
    positions, labels = [prefix_positions], [prefix_labels]

    points = plan.points
    if points.size == 0:  # g_ell > N: the whole list is annotated
        empty = np.empty(0)
        return build_result(
            method="logstrat", plan=plan, oracle=oracle, before=before, positions=positions,
            labels=labels, prefix_labels=prefix_labels, corners=np.empty(0, np.int64),
            estimate=empty, lower=empty, upper=empty, guarantee=_GUARANTEE,
        )  # fmt: skip

    sizes = np.diff(points)
    n_samples = plan.stratum_samples
    if sizes.size:
        # stratum k covers ranks points[k] + 1 .. points[k + 1], i.e. positions points[k] ..
        drawn = [
            int(start) + sample_without_replacement(gen, int(size), int(k))
            for start, size, k in zip(points[:-1], sizes, n_samples, strict=True)
        ]
        sample_positions = np.concatenate(drawn)
        sample_labels = oracle.label(sample_positions)
        positions.append(sample_positions)
        labels.append(sample_labels)
        offsets = np.concatenate([[0], np.cumsum(n_samples)[:-1]])
        positives = np.add.reduceat(sample_labels.astype(np.int64), offsets)
        yields = sizes * (positives / n_samples)  # estimated positives per stratum
    else:
        yields = np.empty(0)
    count_ell = float(prefix_labels.sum())
    q = (count_ell + np.concatenate([[0.0], np.cumsum(yields)])) / points
    # per-corner factors: the first corner (g_ell) is exact, the others carry Lemma 1's error
    low_factor = np.full(points.size, b * (1.0 + eps))
    high_factor = np.full(points.size, (1.0 + eps) / (2.0 - b) if b < 2.0 else np.inf)
    low_factor[0] = high_factor[0] = 1.0 + eps
    return build_result(
        method="logstrat",
        plan=plan,
        oracle=oracle,
        before=before,
        positions=positions,
        labels=labels,
        prefix_labels=prefix_labels,
        corners=points,
        estimate=q,
        lower=q / low_factor,
        upper=np.where(np.isfinite(high_factor), np.minimum(1.0, q * high_factor), 1.0),
        guarantee=_GUARANTEE,
        strata=points,
    )


_GUARANTEE = (
    "probability >= 1 - delta: q(g_j)/(beta(1+eps)) <= p(r) <= (1+eps) q(g_j)/(2-beta) for "
    "g_j <= r < g_{j+1} if Assumption A.1 holds beyond r_tilde and p >= p_min at the queried "
    "ranks (Hoeffding + union bound over L - ell queries, Theorem 1); exact for r <= g_ell"
)
