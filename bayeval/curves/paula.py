"""PAULA: precision approximation using logarithmic annotations (Sabharwal & Sedghi 2017)."""

from __future__ import annotations

import numpy as np

from bayeval._constraints import validate
from bayeval.curves.planning import PAULA_CONSTRAINTS, plan_paula
from bayeval.curves.result import CurveResult, build_result, label_prefix
from bayeval.oracles import Oracle

__all__ = ["paula"]


@validate(**PAULA_CONSTRAINTS)
def paula(
    oracle: Oracle,
    n_items: int,
    *,
    epsilon: float = 0.03,
    window: int = 100,
    r_tilde: int | None = None,
) -> CurveResult:
    """Approximate the precision function with PAULA (Algorithm 2 of [1]_).

    Parameters
    ----------
    oracle : bayeval.oracles.Oracle
        Gives the 0/1 label of the item at a 0-based position; its ``n_items``, if known, must
        equal ``n_items``.
    n_items : int
        Length ``N`` of the ranked list (up to ``2**53``; nothing of size ``N`` is allocated).
    epsilon : float, default 0.03
        Geometric spacing of the queried ranks, in ``(0, 1]``.
    window : int, default 100
        ``Delta``, the width of the local precision ``p_Delta`` (Definition 1 of [1]_).
    r_tilde : int, optional
        Rank after which the monotonicity assumptions hold; default and limits as in
        :func:`~bayeval.curves.plan_paula`.

    Returns
    -------
    CurveResult
        ``estimate`` is the geometric mean ``sqrt(step_q-(r) step_q+(r))`` of PAULA's two step
        functions, which are also available as ``res.step("q_minus", r)`` and
        ``res.step("q_plus", r)``; ``lower`` and ``upper`` are described in the Notes.

    Notes
    -----
    PAULA labels ranks ``1..g_ell`` and the ``Delta`` items ``g_k - Delta + 1..g_k`` for each
    queried point ``g_k = ceil((1 + eps)^k)``, ``k = ell + 1..L`` (Section 4.2), exactly the
    ``plan.annotations = g_ell + Delta (L - ell)`` distinct items of Theorem 3; ``annotations``
    equals it for an oracle that had labelled nothing before. With the telescoping sums of
    Definition 6, ``q-(g_k) = Y_-^k / g_k`` and ``q+(g_k) = Y_+^k / g_k``, and the step functions
    of Definition 5 extend them to every rank.

    **Guarantee** (deterministic). We read "q is a pointwise c-approximation of p" as
    ``p(r) / c <= q(r) <= c p(r)`` for every ``r``, the sense in which the proof of Theorem 1
    (appendix of [1]_) establishes ``p(r) / (1 + eps) <= p(g_j) <= (1 + eps) p(r)``. For
    ``g_j <= r < g_{j+1}``, ``j >= ell``:

    - ``p(r) >= p(g_j) g_j / r >= p(g_j) / (1 + eps)`` always, and
      ``p(r) <= (1 + eps) p(g_j)`` under Assumption A.1 (p is ``m``-monotone beyond
      ``r_tilde``), by the proof of Theorem 1;
    - ``q-(g_j) <= p(g_j) <= q+(g_j)`` under Assumption A.2 (p is ``(Delta, m)``-monotone beyond
      ``r_tilde``), by Lemma 3 (exact at ``j = ell``).

    Hence ``lower(r) = step_q-(r) / (1 + eps) <= p(r) <= upper(r) = (1 + eps) step_q+(r)`` at
    every rank when A.1 and A.2 hold, with no probability involved. If moreover
    ``p(g_ell) >= p_Delta(g_ell)`` (the extra condition of Theorem 3), Lemma 4 gives
    ``q+ <= gamma q-``, so ``upper / lower <= gamma (1 + eps)^2`` and ``[lower, upper]`` lies
    inside Theorem 3's ``[step_q+ / (gamma (1 + eps)), gamma (1 + eps) step_q-]``: the bounds
    used here are the tighter ones its proof yields. ``lower = upper = p`` on ranks
    ``1..g_ell``; ``upper`` is capped at 1.

    Ambiguities resolved: Algorithm 2's exact range "r in {1, ..., ell}" is read as
    ``{1, ..., g_ell}`` (Theorem 3's proof); the sum in Definition 3 is read as the mean label
    ``sum v(t_i) / (r2 - r1)`` over ``(r1, r2]``, as the proof of Lemma 3 uses it.

    Time and memory are O(annotations + L - ell): about 47K labels for ``N = 2 * 10**9``.

    References
    ----------
    .. [1] A. Sabharwal and H. Sedghi. How good are my predictions? Efficiently approximating
       precision-recall curves for massive datasets. UAI 2017.

    Examples
    --------
    >>> from bayeval import curves
    >>> from bayeval.oracles import CallableOracle
    >>> oracle = CallableOracle(lambda i: i < 10**6 or i % 2 == 0, n_items=10**8)
    >>> res = curves.paula(oracle, 10**8)
    >>> res.n_queries, res.annotations == res.plan.annotations
    (347, True)
    >>> float(res.at(10**8).round(3)), float(res.lower(10**8) <= 0.505 <= res.upper(10**8))
    (0.505, 1.0)
    """
    plan = plan_paula(n_items, epsilon=epsilon, window=window, r_tilde=r_tilde)
    eps, delta_w = plan.epsilon, plan.window

    before, prefix_positions, prefix_labels = label_prefix(oracle, plan, plan.g_ell)
    positions, labels = [prefix_positions], [prefix_labels]

    points = plan.points
    if points.size == 0:  # g_ell > N: the whole list is annotated
        empty = np.empty(0)
        return build_result(
            method="paula", plan=plan, oracle=oracle, before=before, positions=positions,
            labels=labels, prefix_labels=prefix_labels, corners=np.empty(0, np.int64),
            estimate=empty, lower=empty, upper=empty, guarantee=_GUARANTEE,
            components={"q_minus": empty, "q_plus": empty},
        )  # fmt: skip

    g_ell = int(points[0])
    count_ell = int(prefix_labels.sum())
    # Delta * p_Delta at the corners: the prefix gives g_ell, the windows give g_{ell+1..L}
    window_counts = np.empty(points.size, dtype=np.int64)
    window_counts[0] = int(prefix_labels[g_ell - delta_w :].sum())
    queried = plan.queried
    if queried.size:
        win = (queried - delta_w)[:, None] + np.arange(delta_w, dtype=np.int64)
        win_labels = oracle.label(win.reshape(-1))
        positions.append(win.reshape(-1))
        labels.append(win_labels)
        window_counts[1:] = win_labels.reshape(queried.size, delta_w).sum(axis=1)

    # Definition 6, scaled by Delta so the sums are exact integers
    gaps = np.diff(points)
    base = count_ell * delta_w
    y_minus = base + np.concatenate([[0], np.cumsum(gaps * window_counts[1:])])
    y_plus = base + np.concatenate([[0], np.cumsum(gaps * window_counts[:-1])])
    q_minus = y_minus / (delta_w * points.astype(np.float64))
    q_plus = y_plus / (delta_w * points.astype(np.float64))

    return build_result(
        method="paula",
        plan=plan,
        oracle=oracle,
        before=before,
        positions=positions,
        labels=labels,
        prefix_labels=prefix_labels,
        corners=points,
        estimate=np.sqrt(q_minus * q_plus),
        lower=q_minus / (1.0 + eps),
        upper=np.minimum(1.0, (1.0 + eps) * q_plus),
        guarantee=_GUARANTEE,
        components={"q_minus": q_minus, "q_plus": q_plus},
    )


_GUARANTEE = (
    "deterministic: step_q-(r)/(1+eps) <= p(r) <= (1+eps) step_q+(r) at every rank if "
    "Assumptions A.1 (m-monotone) and A.2 ((Delta, m)-monotone) hold beyond r_tilde "
    "(Lemma 3 and the proof of Theorem 1); exact for r <= g_ell"
)
