"""AdaStrat's planner (Sabharwal & Xue, 2018): its exhaustive prefix and worst-case labels.

AdaStrat adapts its strata to the labels, so before any label only its exhaustive prefix and the
worst case of its queries and annotations are known; :func:`plan_adastrat` computes them, and
:func:`adastrat_sample_size` is the per-stratum sample size of the paper's Theorem. Re-exported by
:mod:`bayeval.curves.planning` beside the planners of the 2017 methods.

References
----------
.. [1] A. Sabharwal and Y. Xue. Adaptive stratified sampling for precision-recall estimation.
   UAI 2018.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from bayeval._constraints import Optional, Prob, Real, Whole, validate
from bayeval.curves.geometry import (
    BETA,
    EPSILON,
    LOGSTRAT_DEFAULT_WINDOW,
    N_ITEMS,
    P_MIN,
    R_TILDE,
    Geometry,
    ceil_ratio,
    check_r_tilde,
)
from bayeval.curves.plans import AdaStratPlan, frozen

__all__ = ["ADASTRAT_CONSTRAINTS", "adastrat_sample_size", "plan_adastrat"]


def adastrat_sample_size(n_queries: int, *, delta: float, beta: float, p_min: float, eta: float):
    """Per-stratum sample size of AdaStrat: Eq. 5 of Sabharwal & Xue (2018).

    ``ceil((1 + eta)^2 ln(2 K / delta) / (2 (beta - 1 - eta)^2 p_min^2))``; returns the real
    value and its ceiling.
    """
    real = (1.0 + eta) ** 2 * math.log(2.0 * n_queries / delta)
    real /= 2.0 * (beta - 1.0 - eta) ** 2 * p_min**2
    return real, math.ceil(real)


def _check_eta(eta: float, beta: float) -> float:
    """``eta`` (in [0, 0.5) already) if ``beta > 1 + eta``, as Eq. 5 needs."""
    value = eta
    if not beta > 1.0 + value:
        raise ValueError(
            f"`beta` must exceed 1 + eta = {1.0 + value!r} (Eq. 5 needs beta - 1 - eta > 0); "
            f"got beta={beta!r} with eta={eta!r}."
        )
    return value


#: The constraints of AdaStrat's parameters, shared by its planner and :func:`~bayeval.curves.
#: adastrat` (``eta`` is checked against ``beta`` in the body).
ADASTRAT_CONSTRAINTS = {
    "n_items": N_ITEMS,
    "epsilon": EPSILON,
    "m": Optional(Whole(minimum=1)),
    "r_tilde": R_TILDE,
    "delta": Prob(),
    "beta": BETA,
    "p_min": P_MIN,
    "eta": Real(at_least=0, below=0.5),
}


@validate(**ADASTRAT_CONSTRAINTS)
def plan_adastrat(
    n_items: int,
    *,
    epsilon: float = 0.03,
    m: int | None = None,
    r_tilde: int | None = None,
    delta: float = 0.05,
    beta: float = 1.05,
    p_min: float = 0.5,
    eta: float = 0.0,
) -> AdaStratPlan:
    """Plan AdaStrat: its exhaustive prefix and the worst case of its queries and annotations.

    Parameters
    ----------
    n_items : int
        Length ``N`` of the ranked list (at most ``2**53``).
    epsilon : float, default 0.03
        Target factor of the envelope, in ``(0, 1]``.
    m : int, optional
        Monotonicity gap of Definition 1 (at least 1). Default: LogStrat's
        ``floor(eps (1 + eps)^ell - 1)`` for the same ``r_tilde`` (Theorem 1), so that both
        methods rest on the same assumption.
    r_tilde : int, optional
        Rank after which ``p`` is assumed ``(r_tilde, m)``-weakly monotone; at most ``N``.
        Default ``ceil(102 / epsilon)``, as for :func:`plan_logstrat`.
    delta : float, default 0.05
        Overall error probability, in ``(0, 1)``.
    beta : float, default 1.05
        Per-query approximation factor; must exceed ``1 + eta``.
    p_min : float, default 0.5
        Lower bound on the precision at the queried ranks, in ``(0, 1]``.
    eta : float, default 0.0
        Probability that an annotation is flipped, in ``[0, 0.5)``.

    Returns
    -------
    AdaStratPlan
        ``annotations`` is an upper bound, reached by no run that stops early.

    Notes
    -----
    ``l_tilde = max(ceil((1 + eps)^2 m / (2 eps + eps^2)), r_tilde)`` (Section 4 of [2]_). At
    most ``K = floor(log_{1+eps}(N / l_tilde))`` points are queried (Theorem 4). With the
    stratified sampling of Section 4.3, stratum ``(r_{i-1}, r_i]`` holds
    ``ceil((r_i - r_{i-1}) s / r_i)`` samples (Theorem 8, read with the parenthesis of
    ``../papers/NOTES.md``); since ``(r_i - r_{i-1}) / r_i <= ln(r_i / r_{i-1})`` these sum to
    at most ``s ln(N / l_tilde) + K``, so ``annotations <= l_tilde + s_max ln(N / l_tilde) + K``
    (``annotations_formula`` without the rounding terms), capped at ``N``. This is tighter than
    Theorem 8's ``K s``.

    References
    ----------
    .. [1] A. Sabharwal and H. Sedghi. How good are my predictions? UAI 2017.
    .. [2] A. Sabharwal and Y. Xue. Adaptive stratified sampling for precision-recall
       estimation. UAI 2018.

    Examples
    --------
    >>> from bayeval import curves
    >>> plan = curves.plan_adastrat(3_561_500)
    >>> plan.m, plan.l_tilde, plan.max_queries, plan.s_max
    (103, 3400, 235, 7319)
    >>> plan.annotations      # at most (LogStrat: 53,350 by Theorem 2 of [1]_)
    54533
    """
    n, eps, d, p, b = n_items, epsilon, delta, p_min, beta
    default = ceil_ratio(LOGSTRAT_DEFAULT_WINDOW + 2, eps)
    rt = check_r_tilde(r_tilde, n, default, "ceil(102 / epsilon)")
    noise = _check_eta(eta, b)
    if m is None:
        geo = Geometry(eps)
        gap = geo.m(geo.first_at_least(rt))
        if gap < 1:
            raise ValueError(
                f"`m` has no default for r_tilde={rt} and epsilon={eps!r}: "
                f"floor(eps (1 + eps)^ell - 1) = {gap} < 1; pass m (at least 1) or a larger "
                "r_tilde."
            )
    else:
        gap = m
    eps_frac = Fraction(repr(eps))
    l_tilde = max(math.ceil((1 + eps_frac) ** 2 * gap / (2 * eps_frac + eps_frac**2)), rt)
    if l_tilde >= n:  # the list is annotated in full
        return AdaStratPlan(
            n_items=n, queried=frozen(np.empty(0)), annotations=n,
            annotations_formula=float(n), approximation=1.0, epsilon=eps, m=gap, r_tilde=rt,
            l_tilde=l_tilde, delta=d, beta=b, p_min=p, eta=noise, max_queries=0, s_max=0,
        )  # fmt: skip
    log_span = math.log(n / l_tilde)
    max_queries = max(1, math.floor(log_span / math.log1p(eps)))
    # with noisy labels the prefix's precision is one more estimate for the union bound
    estimates = max_queries + (noise > 0)
    s_real, s_max = adastrat_sample_size(estimates, delta=d, beta=b, p_min=p, eta=noise)
    bound = l_tilde + math.ceil(s_max * log_span) + max_queries
    return AdaStratPlan(
        n_items=n,
        queried=frozen(np.empty(0)),
        annotations=min(n, bound),
        annotations_formula=l_tilde + s_real * log_span,
        approximation=b * (1.0 + eps),
        epsilon=eps,
        m=gap,
        r_tilde=rt,
        l_tilde=l_tilde,
        delta=d,
        beta=b,
        p_min=p,
        eta=noise,
        max_queries=max_queries,
        s_max=s_max,
    )
