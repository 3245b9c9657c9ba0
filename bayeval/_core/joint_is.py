"""Joint importance-sampling estimators of many systems' precision and recall (numpy only).

Chaganty et al. (2017), Section 4 and Appendix B. System ``j`` has a distribution ``p_j`` over
its predictions and an i.i.d. sample of ``n_j`` of them (its *group* of draws); ``Y_0`` is an
i.i.d. sample of true instances. Every estimator here is a weighted sum over draws, so one set of
functions serves the point estimate (all draw weights 1), the bootstrap (multinomial counts within
each group) and the Bayesian bootstrap (Dirichlet weights within each group).

Arrays
------
p : (m, D)   ``p[i, d] = p_i(x_d)``, system ``i``'s probability of the instance of draw ``d``
group : (D,) the system whose sample draw ``d`` belongs to
f : (D,)     the draw's label, 0 or 1
n : (m,)     draws per system (``bincount(group)``)
member0 : (n0, m) whether each draw of ``Y_0`` is predicted by each system
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "Draws",
    "adaptive_sample_size",
    "mixing_weights",
    "new_system_variance",
    "normal_moments",
    "variance_bound",
    "weighted_estimates",
]


def mixing_weights(overlap: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Return the mixing weights ``w_ij ∝ n_j sum_x p_i(x) p_j(x)`` (Section 4.3); rows sum to 1.

    A row whose system shares no instance with any sampled system is all zero.
    """
    raw = overlap * n[None, :]
    total = raw.sum(axis=1, keepdims=True)
    return np.divide(raw, total, out=np.zeros_like(raw, dtype=float), where=total > 0)


@dataclass(frozen=True)
class Draws:
    """The labelled draws of every system's sample, as the estimators need them."""

    p: np.ndarray
    group: np.ndarray
    f: np.ndarray
    n0: int
    member0: np.ndarray

    @property
    def n(self) -> np.ndarray:
        """Draws per system."""
        return np.bincount(self.group, minlength=self.p.shape[0])

    def precision_coefficients(self, weights: np.ndarray) -> np.ndarray:
        """Return ``c[i, d] = w_{i j(d)} / n_{j(d)} * p_i(x_d) / q_i(x_d)`` (zero where ``w = 0``).

        The joint precision estimate of system ``i`` is ``sum_d c[i, d] f_d``; with the identity
        as ``weights`` it is the simple estimate, the mean label of ``i``'s own draws.
        """
        n = self.n
        q = weights @ self.p
        w_own = weights[:, self.group]
        scale = np.divide(w_own, n[self.group], out=np.zeros_like(w_own), where=w_own > 0)
        ratio = np.divide(self.p, q, out=np.zeros_like(q), where=w_own > 0)
        return scale * ratio

    def pool_weights(self) -> np.ndarray:
        """Return ``1 / qbar(x_d)`` with ``qbar = sum_j (n_j / N) p_j``, the pool's mixture.

        These weight the pool's sampled true instances back to a uniform ``p_0`` when
        estimating each system's pooled recall ``nu_i`` (Appendix B.2).
        """
        n = self.n
        qbar = (n / max(n.sum(), 1)) @ self.p
        return np.divide(1.0, qbar, out=np.zeros_like(qbar), where=qbar > 0)


def weighted_estimates(
    draws: Draws,
    weights: np.ndarray,
    omega: np.ndarray,
    omega0: np.ndarray,
    *,
    estimator: str,
) -> dict[str, np.ndarray]:
    """Return precision, recall and F1 of every system for each row of draw weights.

    Parameters
    ----------
    draws : Draws
        The labelled draws of every system's sample and of ``Y_0``.
    weights : numpy.ndarray
        ``(m, m)`` mixing weights (the identity for the simple estimators).
    omega : numpy.ndarray
        ``(B, D)`` draw weights, summing to ``n_j`` within each group (ones for the estimate).
    omega0 : numpy.ndarray
        ``(B, n0)`` weights of the draws of ``Y_0``, summing to ``n0``.
    estimator : {"joint", "simple"}
        Recall: ``theta * nu_i`` (joint) or the share of ``Y_0`` that system ``i`` predicts.

    Returns
    -------
    dict
        ``precision``, ``recall``, ``f1`` of shape (B, m); for "joint" also ``theta`` (B,) and
        ``nu`` (B, m).
    """
    coef = draws.precision_coefficients(weights) * draws.f
    out = {"precision": omega @ coef.T}
    if estimator == "simple":
        out["recall"] = omega0 @ draws.member0 / draws.n0
    else:
        true_mass = draws.pool_weights() * draws.f
        numerator = omega @ (true_mass * (draws.p > 0)).T
        denominator = omega @ true_mass
        with np.errstate(invalid="ignore", divide="ignore"):
            out["nu"] = numerator / denominator[:, None]
        out["theta"] = omega0 @ draws.member0.any(axis=1) / draws.n0
        out["recall"] = out["theta"][:, None] * out["nu"]
    out["f1"] = f1_score(out["precision"], out["recall"])
    return out


def f1_score(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """Return the harmonic mean of precision and recall (0 where both are 0)."""
    total = precision + recall
    return np.divide(2 * precision * recall, total, out=np.zeros_like(total), where=total > 0)


def _group_moments(psi: np.ndarray, other: np.ndarray, group: np.ndarray, n: np.ndarray):
    """Return ``sum_j cov_j(psi, other) / n_j`` row by row (plug-in within-group covariance)."""
    onehot = np.zeros((group.size, n.size))
    onehot[np.arange(group.size), group] = 1.0
    safe_n = np.maximum(n, 1)
    mean_psi = psi @ onehot / safe_n
    mean_other = other @ onehot / safe_n
    cross = (psi * other) @ onehot / safe_n - mean_psi * mean_other
    return (cross / safe_n * (n > 0)).sum(axis=1)


def normal_moments(draws: Draws, weights: np.ndarray, *, estimator: str) -> dict[str, np.ndarray]:
    """Return the point estimates and their plug-in standard errors.

    Precision: Theorem 1, ``sum_j w_ij^2 / n_j Var_{p_j}(p_i f / q_i)``, each variance estimated
    from group ``j``'s draws. Pooled recall ``nu_i`` (a ratio): the delta method over the same
    groups. Recall ``theta * nu_i``: Lemma 1 (the product of independent estimates). F1: the delta
    method, with the covariance of precision and recall from the shared draws.
    """
    ones = np.ones((1, draws.f.size))
    ones0 = np.ones((1, draws.n0))
    point = {
        k: v[0]
        for k, v in weighted_estimates(draws, weights, ones, ones0, estimator=estimator).items()
    }
    n, group = draws.n, draws.group
    psi_p = draws.precision_coefficients(weights) * draws.f * n[group]
    var_p = _group_moments(psi_p, psi_p, group, n)
    if estimator == "simple":
        r = point["recall"]
        var_r = r * (1 - r) / draws.n0
        cov_pr = np.zeros_like(var_r)
    else:
        true_mass = draws.pool_weights() * draws.f
        total = max(n.sum(), 1)
        share = n[group] / total
        denominator = true_mass.sum() / total  # (1/N) sum_d f_d / qbar(x_d)
        member = draws.p > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            psi_nu = share * true_mass * (member - point["nu"][:, None]) / denominator
        var_nu = _group_moments(psi_nu, psi_nu, group, n)
        theta, nu = point["theta"], point["nu"]
        var_theta = theta * (1 - theta) / draws.n0
        var_r = theta**2 * var_nu + nu**2 * var_theta + var_theta * var_nu
        cov_pr = theta * _group_moments(psi_p, psi_nu, group, n)
    p, r = point["precision"], point["recall"]
    total = p + r
    with np.errstate(invalid="ignore", divide="ignore"):
        a, b = 2 * r**2 / total**2, 2 * p**2 / total**2
        var_f = a**2 * var_p + b**2 * var_r + 2 * a * b * cov_pr
    se = {
        "precision": np.sqrt(np.maximum(var_p, 0)),
        "recall": np.sqrt(np.maximum(var_r, 0)),
        "f1": np.sqrt(np.maximum(var_f, 0)),
    }
    return {"estimate": point, "se": se}


def new_system_variance(
    n_new: int,
    n_prev: np.ndarray,
    overlap_new: np.ndarray,
    prev: Draws,
    p_new_prev: np.ndarray,
    p_on_new: np.ndarray,
    known: np.ndarray,
) -> float:
    """Return the estimated variance of a new system's joint precision with ``n_new`` draws.

    Appendix B.4: Theorem 1's terms for the systems already sampled, estimated from their draws,
    plus an upper bound on the new system's own term (see :func:`variance_bound`).

    Parameters
    ----------
    n_new : int
        Draws of the new system whose variance is estimated.
    n_prev : numpy.ndarray
        ``(m-1,)`` draws of the systems already sampled.
    overlap_new : numpy.ndarray
        ``(m,)`` ``sum_x p_m(x) p_j(x)`` for every system, the new one last.
    prev : Draws
        Draws of the systems already sampled (their ``p`` rows: those systems only).
    p_new_prev : numpy.ndarray
        ``(D,)`` the new system's probability of each earlier draw's instance.
    p_on_new : numpy.ndarray
        ``(m, K)`` every system's probability of each of the new system's K instances, the new
        one last.
    known : numpy.ndarray
        ``(K,)`` the label of each of the new system's instances: 0, 1, or -1 if unknown.
    """
    n_all = np.append(n_prev, n_new).astype(float)
    w = mixing_weights(overlap_new[None, :], n_all)[0]
    q_new = w @ p_on_new
    if n_new == 0 and np.any((known != 0) & (q_new <= 0)):
        return np.inf  # instances no sample can reach: the estimator would be biased
    total = 0.0
    if prev.f.size:
        q_prev = w[:-1] @ prev.p + w[-1] * p_new_prev
        w_own = w[:-1][prev.group]
        y = np.divide(p_new_prev * prev.f, q_prev, out=np.zeros_like(q_prev), where=w_own > 0)
        psi = (w_own * y)[None, :]
        total += float(_group_moments(psi, psi, prev.group, np.asarray(n_prev))[0])
    if n_new > 0:
        p_new = p_on_new[-1]
        total += w[-1] ** 2 / n_new * variance_bound(p_new, p_new / q_new, known)
    return total


def variance_bound(p: np.ndarray, c: np.ndarray, known: np.ndarray) -> float:
    """Return an upper bound on ``Var_p(c f)`` over every labelling ``f`` that fits ``known``.

    For any ``t``, ``Var(Y) <= E[(Y - t)^2]``; with ``f(x)`` in {0, 1} the term of an unlabelled
    ``x`` is at most ``max((c - t)^2, t^2)``, and a labelled one is exact. The bound is the
    minimum over ``t``. It is never above the paper's bound ``E_p[c^2]`` (Appendix B.4, ``t = 0``)
    nor Popoviciu's ``(max c)^2 / 4``; for a first system (``c = 1``) it is 1/4, the variance of a
    fair coin, where the paper's is 1.
    """
    from scipy.optimize import minimize_scalar

    unknown, true = known < 0, known == 1

    def bound(t: float) -> float:
        hit, miss = (c - t) ** 2, np.full_like(c, t**2)
        term = np.where(unknown, np.maximum(hit, miss), np.where(true, hit, miss))
        return float(p @ term)

    top = float(c.max())
    if top <= 0:
        return 0.0
    best = minimize_scalar(
        bound, bounds=(0.0, top), method="bounded", options={"xatol": 1e-6 * top}
    )
    return min(best.fun, bound(0.0), bound(top / 2))


# see adaptive_sample_size: planned variances this close to the target meet it
_RELATIVE_SLACK = 1e-9


def adaptive_sample_size(variance_at, target_variance: float, max_samples: int) -> int:
    """Return the smallest ``n`` in ``[0, max_samples]`` with ``variance_at(n) <= target``.

    Bisection (Appendix B.4), which assumes the variance falls as ``n`` grows; ``max_samples``
    if even that many draws do not reach the target.

    A variance within a relative ``1e-9`` of the target counts as meeting it. The planned
    variance is a sum of floating-point terms (and a bounded optimisation), so where the exact
    variance equals the target (``0.25 / 625 = 0.02**2``) its computed value lands an ulp above
    or below depending on the machine's arithmetic; without the slack the plan would differ
    by one draw between machines. The slack is far below the planning bound's own accuracy.
    """
    target = target_variance * (1.0 + _RELATIVE_SLACK)
    if variance_at(0) <= target:
        return 0
    if variance_at(max_samples) > target:
        return max_samples
    low, high = 0, max_samples  # variance_at(low) > target >= variance_at(high)
    while high - low > 1:
        mid = (low + high) // 2
        if variance_at(mid) <= target:
            high = mid
        else:
            low = mid
    return high
