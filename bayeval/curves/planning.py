"""Planners: which ranks a precision-curve method queries and how many labels it needs.

Each planner answers, before a single label is bought, the two questions a practitioner asks of
the random-sampling baseline, LogStrat and PAULA (Sabharwal & Sedghi, 2017): *at which ranks is the
precision function queried* and *how many distinct items are annotated*. The algorithms in
:mod:`bayeval.curves` call the same planners, so a plan is the exact list of ranks they query.

Everything here is O(number of queried points): the geometric points ``g_j = ceil((1 + eps)^j)``
are computed only for ``j`` between ``ell`` and ``L``, never as arrays of length ``n_items``, so
lists of ``2 * 10**9`` items plan in milliseconds. The plan types
(:mod:`bayeval.curves.plans`), :func:`~bayeval.curves.geometry.geometric_points` and AdaStrat's
planner (:mod:`bayeval.curves.adastrat_planning`) are re-exported here.

References
----------
.. [1] A. Sabharwal and H. Sedghi. How good are my predictions? Efficiently approximating
   precision-recall curves for massive datasets. UAI 2017.
.. [2] A. Sabharwal and Y. Xue. Adaptive stratified sampling for precision-recall estimation.
   UAI 2018.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bayeval._constraints import Optional, Prob, Whole, validate
from bayeval.curves.adastrat_planning import adastrat_sample_size, plan_adastrat
from bayeval.curves.geometry import (
    ALPHA,
    BETA,
    EPSILON,
    LOGSTRAT_DEFAULT_WINDOW,
    N_ITEMS,
    P_MIN,
    R_TILDE,
    Geometry,
    ceil_ratio,
    check_r_tilde,
    geometric_points,
)
from bayeval.curves.plans import (
    AdaStratPlan,
    CurvePlan,
    LogStratPlan,
    PaulaPlan,
    RandomPlan,
    frozen,
)

__all__ = [
    "LOGSTRAT_CONSTRAINTS",
    "PAULA_CONSTRAINTS",
    "RANDOM_CONSTRAINTS",
    "AdaStratPlan",
    "CurvePlan",
    "LogStratPlan",
    "PaulaPlan",
    "RandomPlan",
    "adastrat_sample_size",
    "geometric_points",
    "plan_adastrat",
    "plan_logstrat",
    "plan_paula",
    "plan_random",
]

# --------------------------------------------------------------------------- planners


#: The constraints of each method's parameters, shared by its planner and the method itself.
RANDOM_CONSTRAINTS = {
    "n_items": N_ITEMS,
    "alpha": Optional(ALPHA),
    "p_min": P_MIN,
    "delta": Prob(),
    "n_samples": Optional(Whole(minimum=1)),
}
LOGSTRAT_CONSTRAINTS = {
    "n_items": N_ITEMS,
    "epsilon": EPSILON,
    "r_tilde": R_TILDE,
    "delta": Prob(),
    "p_min": P_MIN,
    "beta": BETA,
}
PAULA_CONSTRAINTS = {
    "n_items": N_ITEMS,
    "epsilon": EPSILON,
    "window": Whole(minimum=1),
    "r_tilde": R_TILDE,
}


@validate(**RANDOM_CONSTRAINTS, epsilon=Optional(EPSILON), beta=Optional(BETA))
def plan_random(
    n_items: int,
    *,
    alpha: float | None = None,
    p_min: float = 0.5,
    delta: float = 0.05,
    epsilon: float | None = None,
    beta: float | None = None,
    n_samples: int | None = None,
) -> RandomPlan:
    """Plan the random-sampling baseline: an annotated prefix plus ``s`` uniform samples.

    Parameters
    ----------
    n_items : int
        Length ``N`` of the ranked list (at most ``2**53``).
    alpha : float, optional
        Target relative error: a ``(1 + alpha)``-approximation of ``p``. Default
        ``beta * (1 + epsilon) - 1``, the factor LogStrat and AdaStrat guarantee.
    p_min : float, default 0.5
        The precision ``p(r)`` in Eq. 4, in ``(0, 1]``; the bound holds where ``p >= p_min``.
    delta : float, default 0.05
        Overall error probability, in ``(0, 1)``.
    epsilon, beta : float, optional
        Used only when ``alpha`` is not given (defaults 0.03 and 1.05, the settings of
        AdaStrat's experiments); giving them together with ``alpha`` is an error.
    n_samples : int, optional
        ``s``, the number of uniform samples. Default: the ``s`` that minimises ``s + n_{alpha,s}``
        (``s = n_{alpha,s}`` up to rounding, which gives Eq. 5).

    Returns
    -------
    RandomPlan
        ``queried`` is empty (the baseline reads ``p`` off the sample, it queries no rank),
        ``n_prefix = n_{alpha,s}``, ``n_samples = s`` and
        ``annotations = min(N, n_prefix + n_samples)``.

    Notes
    -----
    Section 3 of [1]_: ``s`` uniform samples give ``p(r) ~ p'(r s / N)``. By the Hoeffding bound
    (Eq. 2) with ``delta' = delta / N`` and a union bound over the ``N`` ranks, this is a
    ``(1 + alpha)``-approximation for every ``r >= n_{alpha,s}``, where (Eq. 4)

    ``n_{alpha,s} = ceil(N / (2 s alpha^2 p^2) * ln(2 N / delta))``;

    annotating ranks ``1..n_{alpha,s}`` as well makes it one everywhere. The total
    ``s + n_{alpha,s}`` is smallest for ``s = n_{alpha,s}``, which gives Eq. 5,

    ``sqrt(2 N / (alpha^2 p^2) * ln(2 N / delta))``,

    reported as ``annotations_formula`` (``s + N ln(2 N / delta) / (2 s alpha^2 p^2)`` when
    ``n_samples`` is given). ``annotations`` is the integer optimum, so it can exceed Eq. 5 by
    one or two. As in the paper (footnote 1) samples that land in the annotated prefix are not
    credited, so ``annotations`` is an upper bound on the distinct items; when
    ``n_{alpha,s} >= N`` the plan is a census (``n_prefix = N``, ``n_samples = 0``).

    Ambiguities resolved: ``p(r)`` in Eqs. 4-5 is a property of the unknown curve; it is taken as
    a lower bound ``p_min`` on it (the PAULA paper's examples use ``p = 0.7`` and ``0.5``). The
    PAULA paper's figure of 47,030 annotations (N = 217,077, p = 0.7) is Eq. 5 with
    ``alpha = 0.08``, i.e. ``gamma (1 + eps) - 1 = 0.0812`` rounded to two decimals, truncated
    to an integer; the AdaStrat paper's 284K (N = 3.56M, p = 0.5) is Eq. 5 with
    ``alpha = beta (1 + eps) - 1 = 0.0815`` (the default).

    References
    ----------
    .. [1] A. Sabharwal and H. Sedghi. How good are my predictions? Efficiently approximating
       precision-recall curves for massive datasets. UAI 2017.

    Examples
    --------
    >>> from bayeval import curves
    >>> plan = curves.plan_random(217_077, alpha=0.08, p_min=0.7)
    >>> int(plan.annotations_formula), plan.annotations, plan.n_prefix, plan.n_samples
    (47030, 47031, 23516, 23515)
    >>> round(curves.plan_random(3_561_500, p_min=0.5).annotations, -3)
    284000
    """
    n = n_items
    if alpha is None:
        eps = 0.03 if epsilon is None else epsilon
        factor = 1.05 if beta is None else beta
        alpha_value = factor * (1.0 + eps) - 1.0
    else:
        if epsilon is not None or beta is not None:
            raise ValueError(
                "Give either `alpha` or `epsilon` and `beta` (alpha = beta * (1 + epsilon) - 1); "
                f"got alpha={alpha!r}, epsilon={epsilon!r}, beta={beta!r}."
            )
        alpha_value = alpha
    p, d = p_min, delta

    # n_{alpha,s} * s >= t  (Eq. 4 rearranged)
    t = n * math.log(2.0 * n / d) / (2.0 * alpha_value**2 * p**2)

    def prefix_for(samples: int) -> int:
        return math.ceil(t / samples)

    if n_samples is None:
        root = math.sqrt(t)
        candidates = {max(1, math.floor(root)), max(1, math.ceil(root))}
        s = min(candidates, key=lambda c: (c + prefix_for(c), abs(c - prefix_for(c)), c))
        formula = 2.0 * root
    else:
        s = n_samples
        formula = s + t / s
    prefix = prefix_for(s)
    if prefix >= n:
        prefix, s = n, 0
    return RandomPlan(
        n_items=n,
        queried=frozen(np.empty(0, dtype=np.int64)),
        annotations=min(n, prefix + s),
        annotations_formula=formula,
        approximation=1.0 + alpha_value,
        alpha=alpha_value,
        p_min=p,
        delta=d,
        n_samples=s,
        n_prefix=prefix,
    )


def _geometry_of(n: int, epsilon: float, r_tilde: int) -> dict[str, Any]:
    geo = Geometry(epsilon)
    ell = geo.first_at_least(r_tilde)
    big_l = geo.last_at_most(n)
    m = geo.m(ell)
    points = geo.ceil_power(np.arange(ell, big_l + 1, dtype=np.int64))
    return {
        "ell": ell,
        "L": big_l,
        "m": m,
        "gamma": 1.0 + epsilon + (2.0 + epsilon) / m if m > 0 else math.inf,
        "g_ell": geo.g(ell),
        "points": points,
    }


def stratum_samples(points: np.ndarray, s: int) -> np.ndarray:
    """``min(size_k, ceil(size_k * s / g_k))`` for the strata ``(points[k-1], points[k]]``."""
    upper = points[1:]
    sizes = upper - points[:-1]
    if upper.size == 0:
        return np.empty(0, dtype=np.int64)
    if s < 2**62 // int(upper[-1]):
        wanted = -((-sizes * s) // upper)
    else:  # exact in Python integers when s * g_k could overflow int64
        wanted = np.array(
            [-((-int(z) * s) // int(g)) for z, g in zip(sizes, upper, strict=True)],
            dtype=object,
        )
        wanted = np.minimum(wanted, sizes.astype(object)).astype(np.int64)
    return np.minimum(wanted, sizes)


@validate(**LOGSTRAT_CONSTRAINTS)
def plan_logstrat(
    n_items: int,
    *,
    epsilon: float = 0.03,
    r_tilde: int | None = None,
    delta: float = 0.05,
    p_min: float = 0.5,
    beta: float = 1.05,
) -> LogStratPlan:
    """Plan LogStrat: the queried geometric points, the per-point sample size and the strata.

    Parameters
    ----------
    n_items : int
        Length ``N`` of the ranked list (at most ``2**53``).
    epsilon : float, default 0.03
        Geometric spacing, in ``(0, 1]``; the curve is a ``beta (1 + epsilon)``-approximation.
    r_tilde : int, optional
        Rank after which ``p`` is assumed ``m``-monotone (Assumption A.1); at most ``N``. Default
        ``ceil(102 / epsilon)``, PAULA's minimum for a window of 100, so that LogStrat and PAULA
        query the same points as in the AdaStrat paper's experiments.
    delta : float, default 0.05
        Overall error probability, in ``(0, 1)``.
    p_min : float, default 0.5
        Lower bound on the precision function, in ``(0, 1]``.
    beta : float, default 1.05
        Each point estimate is a ``beta``-approximation (Lemma 1); must exceed 1.

    Returns
    -------
    LogStratPlan
        ``queried = g_{ell+1}, ..., g_L``; ``annotations = g_ell + sum(stratum_samples)``.

    Notes
    -----
    Algorithm 1 and Theorem 2 of [1]_, with the quantities of its Section 4.2:

    - ``ell = ceil(log_{1+eps} r_tilde)``, ``L = floor(log_{1+eps} N)``, ``g_j = ceil((1+eps)^j)``
      (Definition 4), ``m = floor(eps (1 + eps)^ell - 1)``; Theorem 1 needs ``m >= 1``.
    - Ranks ``1..g_ell`` are annotated, so ``p`` is exact there; ``p`` is queried (estimated) at
      the ``L - ell`` points ``g_{ell+1}, ..., g_L`` (``g_ell`` itself is exact), as counted in
      Theorem 1 of [2]_; between points the step function of Definition 5 applies.
    - Each estimate uses ``s = ceil(ln((L - ell) / (delta / 2)) / (2 (beta - 1)^2 p_min^2))``
      samples (Hoeffding, Eq. 2, with a union bound over the ``L - ell`` points).
    - Theorem 2 counts ``g_ell + eps (L - ell) / (2 (beta - 1)^2 (1 + eps) p_min^2) *
      ln((L - ell) / (delta / 2))`` annotations: ``annotations_formula``.

    Algorithm 1 reuses the samples of ``g_k`` for ``g_{k+1}`` by Bernoulli thinning, so its
    count of fresh samples is random with mean ``s (g_{k+1} - g_k) / g_{k+1}``. The plan uses the
    deterministic form of the same reuse that Section 4.3 of [2]_ describes for LogStrat
    (strategy S): ``ceil((g_k - g_{k-1}) s / g_k)`` samples without replacement in the stratum
    ``(g_{k-1}, g_k]``, capped at the stratum's size (a census). Every stratum below ``g_k`` then
    has sampling density at least ``min(1, s / g_k)``, so the stratified estimate of ``p(g_k)``
    (exact prefix plus size-weighted stratum means) obeys a Hoeffding bound at least as tight as
    ``s`` uniform draws, and ``annotations`` is the exact number of distinct items annotated.
    The cap matters where ``s > g_k``: strata there are annotated in full, which is why
    ``annotations`` is below ``annotations_formula`` for short lists.

    The AdaStrat paper [2]_ (§5; eps = 0.03, delta = 0.05, beta = 1.05) reports about 18K, 54K and
    73K annotations for N = 35,615, 3,561,500 and 35,615,000. Theorem 2 with ``p_min = 0.5``
    gives 18,115, 53,350 and 72,061 (18K, 53K, 72K); any ``p_min`` in about [0.4949, 0.4984]
    reproduces all three rounded figures. If ``g_ell > N`` the list is annotated in full and no
    point is queried.

    References
    ----------
    .. [1] A. Sabharwal and H. Sedghi. How good are my predictions? Efficiently approximating
       precision-recall curves for massive datasets. UAI 2017.
    .. [2] A. Sabharwal and Y. Xue. Adaptive stratified sampling for precision-recall
       estimation. UAI 2018.

    Examples
    --------
    >>> from bayeval import curves
    >>> plan = curves.plan_logstrat(35_615)
    >>> plan.ell, plan.L, plan.n_queries, plan.s
    (276, 354, 78, 6437)
    >>> round(plan.annotations_formula), plan.annotations
    (18115, 17209)
    """
    n, eps, d, p, b = n_items, epsilon, delta, p_min, beta
    default = ceil_ratio(LOGSTRAT_DEFAULT_WINDOW + 2, eps)
    rt = check_r_tilde(r_tilde, n, default, "ceil(102 / epsilon)")
    geo = _geometry_of(n, eps, rt)
    if geo["m"] < 1:
        raise ValueError(
            f"`r_tilde` is too small for epsilon={eps!r}: m = floor(eps (1 + eps)^ell - 1) = "
            f"{geo['m']} with ell={geo['ell']}, but Theorem 1 needs m >= 1 "
            f"(r_tilde >= ceil(2 / epsilon) = {ceil_ratio(2, eps)} suffices); got {rt!r}."
        )
    points = geo["points"]
    n_queries = max(0, points.size - 1)
    if n_queries > 0:
        s_real = math.log(n_queries / (d / 2.0)) / (2.0 * (b - 1.0) ** 2 * p**2)
        s = math.ceil(s_real)
    else:
        s_real, s = 0.0, 0
    per_query = eps / (1.0 + eps) * s_real
    samples = stratum_samples(points, s)
    prefix = min(geo["g_ell"], n)
    return LogStratPlan(
        n_items=n,
        queried=frozen(points[1:]),
        annotations=prefix + int(samples.sum()),
        annotations_formula=prefix + n_queries * per_query,
        approximation=b * (1.0 + eps),
        epsilon=eps,
        r_tilde=rt,
        ell=geo["ell"],
        L=geo["L"],
        m=geo["m"],
        gamma=geo["gamma"],
        g_ell=geo["g_ell"],
        points=frozen(points),
        delta=d,
        p_min=p,
        beta=b,
        s=s,
        samples_per_query=per_query,
        stratum_samples=frozen(samples),
    )


@validate(**PAULA_CONSTRAINTS)
def plan_paula(
    n_items: int,
    *,
    epsilon: float = 0.03,
    window: int = 100,
    r_tilde: int | None = None,
) -> PaulaPlan:
    """Plan PAULA: the queried geometric points and the annotated prefix and windows.

    Parameters
    ----------
    n_items : int
        Length ``N`` of the ranked list (at most ``2**53``).
    epsilon : float, default 0.03
        Geometric spacing, in ``(0, 1]``.
    window : int, default 100
        ``Delta``, the width of the local precision ``p_Delta`` (Definition 1); at least 1.
    r_tilde : int, optional
        Rank after which ``p`` is assumed monotone (A.1, A.2); at least
        ``ceil((window + 2) / epsilon)`` (Section 4.2) and at most ``N``. Default: that minimum.

    Returns
    -------
    PaulaPlan
        ``queried = g_{ell+1}, ..., g_L``; ``annotations = g_ell + window * (L - ell)``;
        ``approximation = gamma * (1 + epsilon)``. ``annotated_ranks()`` lists the items.

    Notes
    -----
    Algorithm 2 and Theorem 3 of [1]_, with the quantities of Section 4.2:
    ``r_tilde >= ceil((Delta + 2) / eps)``, ``ell = ceil(log_{1+eps} r_tilde)``,
    ``L = floor(log_{1+eps} N)``, ``g_j = ceil((1 + eps)^j)``, ``m = floor(eps (1 + eps)^ell - 1)``
    (``m > Delta``) and ``gamma = 1 + eps + (2 + eps) / m``.

    PAULA annotates ranks ``1..g_ell`` (so ``p`` and ``p_Delta(g_ell)`` are exact) and the
    ``Delta`` items ``g_k - Delta + 1..g_k`` below each queried point ``g_k``,
    ``k = ell + 1..L``, from which the telescoping sums ``Y_-`` and ``Y_+`` of Definition 6 give
    lower and upper step functions within ``gamma (1 + eps)`` of ``p`` (Theorem 3). Since
    ``g_{k+1} - g_k >= m > Delta`` the windows are disjoint and miss the prefix, so the distinct
    annotations are exactly Theorem 3's ``g_ell + Delta (L - ell)``; this count is also what the
    paper's figures follow (11,292; 7,822; 17,392).

    Ambiguities resolved: Algorithm 2 sets ``q(r)`` exactly "for r in {1, ..., ell}", a typo for
    ``{1, ..., g_ell}`` (Theorem 3's proof annotates ``1..g_ell``); the ``L - ell`` queries match
    the 78, 234 and 312 points of [2]_ (``g_ell`` is exact, not queried). If ``g_ell > N`` the
    list is annotated in full and no point is queried.

    References
    ----------
    .. [1] A. Sabharwal and H. Sedghi. How good are my predictions? Efficiently approximating
       precision-recall curves for massive datasets. UAI 2017.
    .. [2] A. Sabharwal and Y. Xue. Adaptive stratified sampling for precision-recall
       estimation. UAI 2018.

    Examples
    --------
    >>> from bayeval import curves
    >>> plan = curves.plan_paula(35_615)
    >>> plan.r_tilde, plan.ell, plan.L, plan.g_ell, plan.m, round(plan.gamma, 4)
    (3400, 276, 354, 3492, 103, 1.0497)
    >>> plan.n_queries, plan.annotations
    (78, 11292)
    >>> curves.plan_paula(35_615, epsilon=0.05).annotations
    7822
    """
    n, eps, delta_w = n_items, epsilon, window
    minimum = ceil_ratio(delta_w + 2, eps)
    rt = check_r_tilde(r_tilde, n, minimum, "ceil((window + 2) / epsilon)")
    if rt < minimum:
        raise ValueError(
            f"`r_tilde` must be at least ceil((window + 2) / epsilon) = {minimum} for "
            f"window={delta_w}, epsilon={eps!r} (PAULA, Section 4.2); got {r_tilde!r}."
        )
    geo = _geometry_of(n, eps, rt)
    points = geo["points"]
    queried = points[1:]
    new_per_window = np.minimum(delta_w, np.diff(points))
    prefix = min(geo["g_ell"], n)
    n_queries = int(queried.size)
    return PaulaPlan(
        n_items=n,
        queried=frozen(queried),
        annotations=prefix + int(new_per_window.sum()),
        annotations_formula=float(prefix + delta_w * n_queries),
        approximation=geo["gamma"] * (1.0 + eps),
        epsilon=eps,
        window=delta_w,
        r_tilde=rt,
        ell=geo["ell"],
        L=geo["L"],
        m=geo["m"],
        gamma=geo["gamma"],
        g_ell=geo["g_ell"],
        points=frozen(points),
    )
