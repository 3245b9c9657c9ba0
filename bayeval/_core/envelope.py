"""The envelope of all weakly monotone precision functions through observed points.

Definition 2 and Theorem 2 of Sabharwal & Xue (2018): if ``p`` is ``(r_tilde, m)``-weakly
monotone (``p(r1) >= p(r2)`` whenever ``r_tilde <= r1`` and ``r2 >= r1 + m``) and ``p(y)`` is
known, then ``lb(v; y) <= p(v) <= ub(v; y)`` for all ``v, y > r_tilde``, and both bounds are
attained by valid precision functions. With several observed points the envelope is the pointwise
minimum of the ``ub`` and maximum of the ``lb`` (their Eq. 3-4).

Everything here works on yields ``Y = y p(y)`` (positives among the top ``y``), is vectorised over
the observed points, and never evaluates the envelope at all ``N`` ranks: each piece of ``ub`` and
``lb`` is ``A / v + B`` with ``B`` in ``{0, 1}`` or ``A = 0``, so the envelope between breakpoints
is the minimum (maximum) of three such curves, and the largest ratio ``ub / lb`` over an interval of
ranks is attained at one of a handful of candidate ranks (:func:`height`).

References
----------
.. [1] A. Sabharwal and Y. Xue. Adaptive stratified sampling for precision-recall estimation.
   UAI 2018.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bounds", "height", "ratio_range"]


def as_points(y, yields, m: int):
    """Return the points ``(y, Y, k)`` as float arrays, ``k = floor(m Y / y)`` exactly."""
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    big_y = np.asarray(yields, dtype=np.float64).reshape(-1)
    # k = floor(m p(y)): computed so that integer yields give the exact integer
    k = np.floor(m * big_y / y)
    k = np.where((k + 1.0) * y <= m * big_y, k + 1.0, k)
    return y, big_y, k


def line_pieces(v, y, big_y, k, m: int, r_tilde: int, n_items: float):
    """Coefficients ``(A, B)`` of the pieces ``A / v + B`` of ``ub`` and ``lb`` at ranks ``v``.

    ``v`` has shape ``(R, 1)``, the points shape ``(K,)``; results have shape ``(R, K)``. The
    pieces that compare ``p(y)`` with ``p(y + m)`` (``ub`` above ``y``) apply only if
    ``y + m <= n_items``, and those comparing ``p(y - m)`` with ``p(y)`` (``lb`` below ``y``)
    only if ``y - m >= r_tilde``; otherwise every item between ``y`` and ``v`` may be positive.
    """
    p = big_y / y
    open_end = y + m > n_items
    above = [v <= y, open_end | (v <= y + k), v <= y + m]
    ub_a = np.select(above, [big_y, big_y - y, big_y + k], 0.0)
    ub_b = np.select(above, [0.0, 1.0, 0.0], p)
    settled = y - m >= r_tilde
    below = [settled & (v < y - m), settled & (v < y - k), v < y]
    lb_a = np.select(below, [0.0, big_y - k, big_y - y], big_y)
    lb_b = np.select(below, [p, 0.0, 1.0], 0.0)
    return ub_a, ub_b, lb_a, lb_b


def bounds(
    ranks, y, yields, m: int, r_tilde: int = 0, n_items: float = np.inf
) -> tuple[np.ndarray, np.ndarray]:
    """Evaluate the envelope ``(lb, ub)`` through the points ``(y_j, Y_j)`` at ``ranks``.

    Parameters
    ----------
    ranks : array_like of int
        Ranks ``v`` (1-based prefix lengths).
    y : array_like of int
        Observed ranks, all beyond ``r_tilde``.
    yields : array_like of float
        ``Y_j = y_j p(y_j)``, the (estimated) positives among the top ``y_j`` items.
    m : int
        Monotonicity gap of Definition 1.
    r_tilde : int, default 0
        Rank from which ``p`` is weakly monotone. Theorem 2 of [1]_ asks ``v, y > r_tilde``,
        but its lower bound below ``y`` compares ``p(y - m)`` with ``p(y)``, so it needs
        ``y - m >= r_tilde``; for points closer to ``r_tilde`` only the count bound (every
        item between ``v`` and ``y`` positive) is used there.
    n_items : int, optional
        Length of the list. Likewise the upper bound above ``y`` compares ``p(y)`` with
        ``p(y + m)``, so points with ``y + m > n_items`` bound only by counting there.

    Returns
    -------
    lb, ub : numpy.ndarray
        With the shape of ``ranks``: ``max_j lb(v; y_j)`` (at least 0) and ``min_j ub(v; y_j)``
        (at most 1), Eq. 3-4 of [1]_. Valid for ranks ``r_tilde <= v <= n_items``.

    Examples
    --------
    >>> from bayeval._core.envelope import bounds
    >>> lb, ub = bounds([90, 100, 105, 120], y=[100], yields=[60], m=10)
    >>> lb.round(4).tolist(), ub.round(4).tolist()
    ([0.6, 0.6, 0.5714, 0.5], [0.6667, 0.6, 0.619, 0.6])
    """
    v = np.asarray(ranks, dtype=np.float64)
    y, big_y, k = as_points(y, yields, m)
    flat = v.reshape(-1, 1)
    ub_a, ub_b, lb_a, lb_b = line_pieces(flat, y, big_y, k, m, r_tilde, n_items)
    ub = np.minimum(1.0, np.min(ub_a / flat + ub_b, axis=1, initial=1.0))
    lb = np.maximum(0.0, np.max(lb_a / flat + lb_b, axis=1, initial=0.0))
    return lb.reshape(v.shape), ub.reshape(v.shape)


def _ratio(lb: np.ndarray, ub: np.ndarray) -> np.ndarray:
    """``ub / lb``: 1 where both are 0, infinite where only ``lb`` is, 0 where only ``ub`` is."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = ub / lb
    return np.where(lb <= 0.0, np.where(ub <= 0.0, 1.0, np.inf), out)


def _crossings(lines: list[tuple[float, float]], a: int, b: int) -> list[float]:
    """Ranks in ``(a, b)`` where two curves ``A / v + B`` of ``lines`` cross, rounded both ways."""
    out = []
    for i, (a1, b1) in enumerate(lines):
        for a2, b2 in lines[i + 1 :]:
            if b1 == b2:
                continue
            v = (a2 - a1) / (b1 - b2)
            if a < v < b:
                out += [np.floor(v), np.ceil(v)]
    return out


def _reduced(a_coef, b_coef, smallest: bool) -> list[tuple[float, float]]:
    """Pick the extreme curve ``A / v + B`` of each kind (``B = 0``, ``B = 1``, ``A = 0``).

    For ``v > 0`` the minimum (or maximum) of curves sharing ``B`` is the one with the extreme
    ``A``, and of constants the extreme constant, so three curves describe the whole envelope.
    """
    pick = np.min if smallest else np.max
    out = []
    for mask, coef, fixed in (
        ((b_coef == 0.0) & (a_coef != 0.0), a_coef, 0.0),
        ((b_coef == 1.0) & (a_coef != 0.0), a_coef, 1.0),
    ):
        if mask.any():
            out.append((float(pick(coef[mask])), fixed))
    constants = b_coef[a_coef == 0.0]
    cap = 1.0 if smallest else 0.0
    out.append((0.0, float(pick(np.append(constants, cap)))))
    return out


def _breaks(y, k, m):
    """First ranks of the pieces of Definition 2 for points ``y`` (``k = floor(m p(y))``)."""
    return np.concatenate([y + 1, y + k + 1, y + m + 1, y - m, y - k, y])


def ratio_range(
    low: int,
    high: int,
    y,
    yields,
    m: int,
    r_tilde: int = 0,
    n_items: float = np.inf,
    upper_yields=None,
) -> tuple[float, float]:
    """Smallest and largest ``ub / lb`` of the envelope over the integer ranks ``low..high``.

    Parameters
    ----------
    low, high : int
        The range of ranks, ``low <= high``.
    y, yields, m, r_tilde, n_items
        The observed points, the monotonicity gap, its start and the list's length, as in
        :func:`bounds`.
    upper_yields : array_like of float, optional
        Yields for ``ub`` when they differ from those for ``lb`` (``yields``), as for an
        envelope through confidence limits.

    Returns
    -------
    (float, float)
        ``min`` and ``max`` over the range of ``ub / lb`` (1 where both are 0, ``inf`` where
        only ``lb`` is, 0 where only ``ub`` is). A minimum below 1 means the envelope crosses
        (``lb > ub``) somewhere in the range.

    Notes
    -----
    The ranks where a piece of some point's ``ub`` or ``lb`` begins cut ``low..high`` into
    blocks on which every point contributes one curve ``A / v + B``. In ``u = 1 / v`` these are
    lines, the upper bound is the minimum of three lines (one per kind, see ``_reduced``) and the
    lower bound the maximum of three, so between consecutive crossings of same-side lines the
    ratio is a ratio of two linear functions of ``u``, monotone. Its extremes over integers are
    therefore at block ends or next to crossings; these few ranks are evaluated exactly.

    Examples
    --------
    >>> from bayeval._core.envelope import ratio_range
    >>> ratio_range(100, 200, y=[100, 200], yields=[60, 110], m=10)   # max at rank 106
    (1.0, 1.1)
    """
    y_lb, big_lb, k_lb = as_points(y, yields, m)
    y_ub, big_ub, k_ub = as_points(y, yields if upper_yields is None else upper_yields, m)
    starts = np.concatenate([_breaks(y_lb, k_lb, m), _breaks(y_ub, k_ub, m)])
    starts = np.unique(np.concatenate([[low], starts[(starts > low) & (starts <= high)]]))
    ends = np.append(starts[1:] - 1, high)
    at = starts.reshape(-1, 1)
    a_ub, b_ub, _, _ = line_pieces(at, y_ub, big_ub, k_ub, m, r_tilde, n_items)
    _, _, a_lb, b_lb = line_pieces(at, y_lb, big_lb, k_lb, m, r_tilde, n_items)
    candidates = [starts, ends]
    for i, (a, b) in enumerate(zip(starts, ends, strict=True)):
        if b - a < 2:
            continue
        candidates.append(_crossings(_reduced(a_ub[i], b_ub[i], smallest=True), a, b))
        candidates.append(_crossings(_reduced(a_lb[i], b_lb[i], smallest=False), a, b))
    ranks = np.unique(np.concatenate([np.asarray(c, dtype=np.float64) for c in candidates]))
    lb = bounds(ranks, y_lb, big_lb, m, r_tilde, n_items)[0]
    ub = bounds(ranks, y_ub, big_ub, m, r_tilde, n_items)[1]
    ratio = _ratio(lb, ub)
    return float(ratio.min()), float(ratio.max())


def height(
    low: int, high: int, y, yields, m: int, r_tilde: int = 0, n_items: float = np.inf
) -> float:
    """Height of the envelope on the ranks ``low..high``: the largest ``ub / lb``.

    Section 3 of [1]_; see :func:`ratio_range` for the parameters and the exact computation.
    Ranks where estimated points make the envelope cross (``lb > ub``) have ratios below 1 and
    do not raise the height, as in Algorithm 1: splitting a range cannot resolve a crossing.

    Examples
    --------
    >>> from bayeval._core.envelope import height
    >>> height(100, 200, y=[100, 200], yields=[60, 110], m=10)
    1.1
    """
    return ratio_range(low, high, y, yields, m, r_tilde, n_items)[1]
