"""Newton's method for the two-class Dirichlet-tree EM fixed point (Appendix F of [1]_).

EM converges linearly at a rate that tends to one as unlabelled items outnumber labels (the
fraction of missing information): at 10^7 items it needs hundreds of iterations a stage.
Newton's method on the fixed-point equation converges quadratically whatever the pool size.

With two classes the EM map acts on ``s[k]``, the positive response of leaf ``k``. In logit
coordinates ``z = logit(s)`` its Jacobian has a closed form: ``d logit F[k] / d z[j] =
A[k, j] u[j] s[j] (1 - s[j])``, where ``u`` are the unlabelled counts and

    A[k, j] = g + sum over the nodes c shared by the paths to k and j of w[c]
                - sum over the internal nodes p above both k and j of v[p],

``g = 1 / (alpha_tilde[1] - 1) + 1 / (alpha_tilde[0] - 1)`` (from ``theta``), ``w[c] = sum_y
1 / S[y, c]`` and ``v[p] = sum_y 1 / T[y, p]``, with ``S`` each branch's M-step numerator
(``beta`` plus expected counts) and ``T`` the sum of ``S`` over a node's children. ``A`` depends
on ``k`` and ``j`` only through their lowest common ancestor, so it is a gather from cumulative
sums along the paths: O(K^2) for ``K`` leaves, then one symmetric K x K solve.

References
----------
.. [1] N. G. Marchant and B. I. P. Rubinstein. Needle in a haystack: label-efficient
   evaluation under extreme class imbalance. KDD 2021.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.linalg import cho_solve
from scipy.special import expit, logit

__all__ = ["newton_fixed_point"]

_BACKTRACKS = 4
_MAX_STEP = 2.0
_SHIFTS = 16  # 1e-6 * 4**15 > 1e3
_FIRST_SHIFT = 1e-6
_RELATIVE_ROUNDING = 1e-13


def shared_prefix(paths: np.ndarray) -> np.ndarray:
    """``(K, K)`` number of leading nodes the root-to-leaf ``paths`` of two leaves share."""
    return _shared_prefix(paths.tobytes(), paths.shape)


@functools.lru_cache(maxsize=8)  # one tree per sampler: computed once, not every stage
def _shared_prefix(buffer: bytes, shape: tuple[int, int]) -> np.ndarray:
    paths = np.frombuffer(buffer, dtype=np.intp).reshape(shape)
    shared = np.zeros((shape[0], shape[0]), dtype=np.intp)
    alive = np.ones_like(shared, dtype=bool)
    for level in range(shape[1]):
        alive &= paths[:, None, level] == paths[None, :, level]
        shared += alive
    shared.flags.writeable = False
    return shared


def response_jacobian(step, paths: np.ndarray, shared: np.ndarray) -> np.ndarray:
    """Build ``A`` of the module docstring from the EM step's last evaluation."""
    n_nodes = step.n_nodes
    w = np.zeros(n_nodes + 1)  # padded paths point at n_nodes: weight zero
    v = np.zeros(n_nodes + 1)
    w[1:n_nodes] = step.node_weight
    v[:n_nodes] = step.parent_weight
    zero = np.zeros((paths.shape[0], 1))
    cum_w = np.concatenate([zero, np.cumsum(w[paths], axis=1)], axis=1)
    cum_v = np.concatenate([zero, np.cumsum(v[paths], axis=1)], axis=1)
    kernel = np.take_along_axis(cum_w - cum_v, shared, axis=1)
    return step.theta_weight - v[0] + kernel


def _solve_shifted(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve ``(matrix + shift I) x = rhs`` with the smallest tried shift that is positive definite.

    ``matrix`` is positive definite near the mode; where the log posterior is not concave it is
    not, and the shift (Levenberg-Marquardt style) turns the step towards the EM step, which
    climbs.
    """
    shift = 0.0
    for _ in range(_SHIFTS):
        try:
            factor = np.linalg.cholesky(matrix + shift * np.eye(rhs.size))
        except np.linalg.LinAlgError:
            shift = max(4 * shift, _FIRST_SHIFT)
            continue
        return cho_solve((factor, True), rhs, check_finite=False)
    return rhs / (1 + shift)


def newton_fixed_point(step, paths, unlabelled, start, *, tol: float, max_iter: int):
    """Solve ``F(s) = s`` for the two-class EM map ``step`` by Newton's method in logits.

    Each Newton step is accepted, possibly shortened, only if it raises the log posterior
    (``step.log_posterior``, the objective whose maximum the fixed point is); otherwise the
    plain EM step is taken, which never lowers it. Where the log posterior is not concave, the
    Newton matrix is shifted until positive definite (see ``_solve_shifted``). So the iteration
    climbs like EM, and near the mode converges like Newton.

    Parameters
    ----------
    step : callable
        The EM map on ``(K, 2)`` responses; after a call it exposes ``log_posterior``,
        ``node_weight``, ``parent_weight`` and ``theta_weight`` at its input.
    paths : numpy.ndarray
        ``(K, depth)`` nodes from below the root to each leaf, padded with ``n_nodes``.
    unlabelled : numpy.ndarray
        ``(K,)`` unlabelled items per leaf.
    start : numpy.ndarray
        ``(K, 2)`` initial responses.
    tol, max_iter
        Stop when ``max |F(s) - s| <= tol``, or after ``max_iter`` evaluations of ``step``.

    Returns
    -------
    response : numpy.ndarray
        ``(K, 2)``: ``F(s)`` at the last point, whose ``theta`` and ``psi`` ``step`` holds.
    evaluations : int
    converged : bool
    """
    shared = shared_prefix(paths)

    def evaluate(z):
        s = expit(z)
        mapped = step(np.column_stack([1 - s, s]))
        return z, s, mapped, step.log_posterior

    z, s, mapped, objective = evaluate(logit(np.clip(start[:, 1], 1e-300, 1 - 1e-16)))
    evaluations = 1
    while evaluations < max_iter:
        if np.max(np.abs(mapped[:, 1] - s)) <= tol:
            return mapped, evaluations, True
        residual = logit(mapped[:, 1]) - z
        em_step = z + residual
        # Newton: (I - A D) dz = residual, D = diag(u s (1 - s)); symmetrised with sqrt(D)
        root_d = np.sqrt(unlabelled * s * (1 - s))
        scaled = root_d[:, None] * response_jacobian(step, paths, shared) * root_d
        x = _solve_shifted(np.eye(s.size) - scaled, root_d * residual)
        positive = root_d > 0
        direction = residual.copy()  # leaves without unlabelled items: the EM step itself
        direction[positive] = x[positive] / root_d[positive]
        # a trust region in logits: where the posterior is nearly flat the step can be huge
        direction *= min(1.0, _MAX_STEP / np.max(np.abs(direction)))
        # rounding: the objective is a sum over all items, so allow a change at its last digits
        floor = objective - _RELATIVE_ROUNDING * abs(objective)
        for _ in range(_BACKTRACKS):
            trial = evaluate(z + direction)
            evaluations += 1
            if np.isfinite(trial[3]) and trial[3] >= floor:
                break
            direction = direction / 2
        else:
            trial = evaluate(em_step)
            evaluations += 1
        z, s, mapped, objective = trial
    return mapped, evaluations, bool(np.max(np.abs(mapped[:, 1] - s)) <= tol)
