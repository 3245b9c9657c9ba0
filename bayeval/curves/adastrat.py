"""AdaStrat: adaptive stratified sampling of the precision function (Sabharwal & Xue 2018).

AdaStrat labels the top ``l_tilde`` items, queries the precision at ``N``, and then bisects
(geometrically) every range of ranks whose envelope -- the band holding every weakly monotone
precision function through the points seen so far (:mod:`bayeval.curves.envelope`) -- is still
taller than ``(1 + eps)^2``. Flat curves and curves that drop as fast as possible stop after a
few queries; no curve needs more than ``log_{1+eps}(N / l_tilde)`` (Theorem 4).
"""

from __future__ import annotations

import bisect
import math
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from bayeval._constraints import Seed, validate
from bayeval._core.envelope import as_points, bounds, height, line_pieces, ratio_range
from bayeval._validation import check_rng
from bayeval.curves.adastrat_planning import (
    ADASTRAT_CONSTRAINTS,
    adastrat_sample_size,
    plan_adastrat,
)
from bayeval.curves.planning import stratum_samples
from bayeval.curves.random_baseline import sample_without_replacement
from bayeval.curves.result import CurveResult, build_result, label_prefix
from bayeval.oracles import Oracle

__all__ = ["AdaStratResult", "adastrat"]


class _Strata:
    """Stratified samples beyond the exact prefix, refined as queried points are added.

    Stratum ``i`` holds ranks ``bounds[i] + 1 .. bounds[i + 1]`` (positions ``bounds[i] ..
    bounds[i + 1] - 1``). Its samples are a simple random sample without replacement of the
    stratum: splitting a stratum keeps each part's samples a simple random sample of the part
    (given their number), and top-ups draw only among the part's unsampled items.
    """

    def __init__(self, oracle: Oracle, gen: np.random.Generator, start: int, prefix_count: int):
        self.oracle, self.gen = oracle, gen
        self.bounds = [start]
        self.prefix_count = prefix_count
        self.positions = np.empty(0, dtype=np.int64)  # sorted
        self.labels = np.empty(0, dtype=bool)

    def add(self, rank: int) -> None:
        bisect.insort(self.bounds, rank)

    def top_up(self, s: int) -> None:
        """Raise every stratum's sample to ``min(size, ceil(size s / end))`` (Section 4.3)."""
        ends = np.asarray(self.bounds, dtype=np.int64)
        target = stratum_samples(ends, s)
        lo, hi = ends[:-1], ends[1:]
        first = np.searchsorted(self.positions, lo)
        have = np.searchsorted(self.positions, hi) - first
        drawn = []
        for i in np.flatnonzero(target > have):
            taken = self.positions[first[i] : first[i] + have[i]] - lo[i]
            free = int(hi[i] - lo[i]) - taken.size
            t = sample_without_replacement(self.gen, free, int(target[i] - have[i]))
            # the t-th unsampled offset is t plus the number of sampled offsets at or below it
            shift = np.searchsorted(taken - np.arange(taken.size), t, side="right")
            drawn.append(lo[i] + t + shift)
        if drawn:
            new = np.concatenate(drawn)
            positions = np.concatenate([self.positions, new])
            labels = np.concatenate([self.labels, self.oracle.label(new)])
            order = np.argsort(positions, kind="stable")
            self.positions, self.labels = positions[order], labels[order]

    def yields(self) -> tuple[np.ndarray, np.ndarray]:
        """Stratum ends and the estimated positives among the top ``end`` items.

        The exact prefix count plus, for each stratum below, its size times its sample mean.
        """
        ends = np.asarray(self.bounds, dtype=np.int64)
        cuts = np.searchsorted(self.positions, ends)
        n = np.diff(cuts)
        positives = np.diff(np.concatenate([[0], np.cumsum(self.labels)])[cuts])
        with np.errstate(invalid="ignore", divide="ignore"):
            per_stratum = np.where(n > 0, np.diff(ends) * positives / n, 0.0)
        return ends, self.prefix_count + np.concatenate([[0.0], np.cumsum(per_stratum)])


def _midpoint(low: int, high: int) -> int:
    """``round(sqrt(low high))`` in exact integer arithmetic (halves round up), inside the range."""
    product = low * high
    root = math.isqrt(product)
    if 4 * product >= (2 * root + 1) ** 2:
        root += 1
    return min(max(root, low + 1), high - 1)


@validate(**ADASTRAT_CONSTRAINTS, rng=Seed())
def adastrat(
    oracle: Oracle,
    n_items: int,
    *,
    epsilon: float = 0.03,
    m: int | None = None,
    r_tilde: int | None = None,
    delta: float = 0.05,
    beta: float = 1.05,
    p_min: float = 0.5,
    eta: float = 0.0,
    rng: int | np.random.Generator | None = 0,
) -> AdaStratResult:
    """Approximate the precision function with AdaStrat (Algorithm 1 of [1]_).

    Parameters
    ----------
    oracle : bayeval.oracles.Oracle
        Gives the 0/1 label of the item at a 0-based position; its ``n_items``, if known, must
        equal ``n_items``.
    n_items : int
        Length ``N`` of the ranked list (nothing of size ``N`` is allocated).
    epsilon : float, default 0.03
        The envelope is refined until its height is at most ``(1 + epsilon)^2``; in ``(0, 1]``.
    m : int, optional
        Monotonicity gap of Definition 1; default as in :func:`~bayeval.curves.plan_adastrat`
        (LogStrat's ``m``).
    r_tilde : int, optional
        Rank after which ``p`` is assumed ``(r_tilde, m)``-weakly monotone; default
        ``ceil(102 / epsilon)``.
    delta : float, default 0.05
        Overall error probability, in ``(0, 1)``.
    beta : float, default 1.05
        Per-query approximation factor (Eq. 5); must exceed ``1 + eta``.
    p_min : float, default 0.5
        Lower bound assumed on ``p`` at the queried ranks.
    eta : float, default 0.0
        Rate at which the oracle's labels are flipped (the annotators' noise), in ``[0, 0.5)``.
    rng : int, numpy.random.Generator or None, default 0
        Seed of the stratified samples.

    Returns
    -------
    AdaStratResult
        Exact on ranks ``1..l_tilde``; beyond, the geometric mean of the envelope (``estimate``)
        and an envelope that holds with probability ``1 - delta`` (``lower``, ``upper``).

    Notes
    -----
    **Algorithm.** Ranks ``1..l_tilde`` are labelled (``l_tilde`` from
    :func:`~bayeval.curves.plan_adastrat`) and ``p(N)`` is queried. A range ``[l, r]`` between
    neighbouring points is accepted if ``r / l <= (1 + eps)^2`` or the height of the envelope
    (Eq. 3-4 over the point at ``l_tilde`` and all queried points, with their current estimates)
    on ``l..r`` is at most ``(1 + eps)^2``; otherwise ``p`` is queried at
    ``c = round(sqrt(l r))`` and ``[l, c]``, then ``[c, r]``, are examined (function PR). The
    envelope is computed exactly, piecewise in the rank (:func:`~bayeval.curves.envelope.height`).

    **QUERY** (Section 4.3). The ``K``-th query raises every stratum between neighbouring points
    ``(r_{i-1}, r_i]`` to ``min(size, ceil((r_i - r_{i-1}) s_K / r_i))`` samples without
    replacement, ``s_K`` from Eq. 5 with the current ``K`` (iterative deepening; Theorem 8's
    densities). A new point splits a stratum; each part keeps its samples and is topped up. The
    estimate at a point is the exact prefix count plus the size-weighted sample means of the
    strata below it, over the rank.

    **Decisions where the paper is silent** (see ``../papers/NOTES.md``):

    - Only the prefix point ``l_tilde`` enters the envelope: Theorem 2 needs ``y > r_tilde``,
      so prefix ranks below ``r_tilde`` give no valid bound (Algorithm 1 updates with all).
      The lower bound below a point ``y`` uses ``p(y - m) >= p(y)`` and the upper bound above
      it ``p(y) >= p(y + m)``, so they fall back to counting where ``y - m < r_tilde`` or
      ``y + m > N`` (:func:`~bayeval.curves.envelope.bounds`).
    - Estimated points can make the envelope cross (``lb > ub``). Crossing ranks have
      ``ub / lb < 1`` and do not raise the height, as in Algorithm 1 (splitting cannot resolve a
      disagreement between points already observed); the estimate there is still the geometric
      mean. The *guaranteed* envelope (``lower``, ``upper``) cannot cross when the guarantee
      holds, so if it does, a ``RuntimeWarning`` names the ranks and ``crossing`` records them:
      the list is not weakly monotone there, or an estimate missed its Eq. 5 bound.
    - Top-ups change earlier estimates, which can undo an acceptance. When the recursion ends,
      every range is re-examined under the final estimates and split again where needed, until
      all are accepted.

    **Guarantee.** If ``p`` is ``(r_tilde, m)``-weakly monotone and ``p >= p_min`` at the
    queried ranks, then with probability at least ``1 - delta``
    ``lower(r) <= p(r) <= upper(r)`` at every rank. Eq. 5 makes each estimate satisfy
    ``|p_tilde - p| <= (beta - 1) p`` (Hoeffding plus the union bound over the ``K`` queries;
    with noise, the bias ``eta |1 - 2p| <= eta p`` needs ``p >= 1/3``), so the true yield at a
    point lies in ``[y p_tilde / beta, y p_tilde / (2 - beta)]``; ``lower`` and ``upper`` are the
    envelope of Theorem 2 through the least and greatest integer yields in these ranges (both
    bounds grow with the yield). ``estimate`` is the geometric mean of the envelope through the
    estimates themselves, as in Algorithm 1: within about ``beta (1 + eps)`` of ``p``.

    With ``eta > 0`` the prefix is labelled by the same noisy oracle (Algorithm 1 assumes exact
    labels there, footnote 3). Its precision at ``l_tilde`` is then an estimate like the queried
    ones: it gets the same yield range, the union bound runs over ``K + 1`` estimates (``s``
    from Eq. 5 with ``K + 1``), and the guarantee needs ``l_tilde >= s`` and holds for ranks
    beyond ``l_tilde``; on ranks ``1..l_tilde`` the three functions give the annotators'
    precision, which is not a bound on ``p``.

    References
    ----------
    .. [1] A. Sabharwal and Y. Xue. Adaptive stratified sampling for precision-recall
       estimation. UAI 2018.

    Examples
    --------
    >>> from bayeval import curves
    >>> from bayeval.oracles import CallableOracle
    >>> oracle = CallableOracle(lambda i: i % 4 != 3, n_items=10**6, vectorized=True)
    >>> res = curves.adastrat(oracle, 10**6, rng=0)
    >>> res.n_queries, curves.plan_logstrat(10**6).n_queries     # a flat curve: Lemma 1
    (1, 191)
    >>> bool(res.lower(10**6) <= 0.75 <= res.upper(10**6))
    True
    """
    plan = plan_adastrat(
        n_items, epsilon=epsilon, m=m, r_tilde=r_tilde, delta=delta, beta=beta, p_min=p_min,
        eta=eta,
    )  # fmt: skip
    gen = check_rng(rng)
    n, l_tilde = plan.n_items, plan.l_tilde
    before, prefix_positions, prefix_labels = label_prefix(oracle, plan, l_tilde)
    if plan.max_queries == 0:  # a census
        empty = np.empty(0)
        return build_result(
            method="adastrat", plan=plan, oracle=oracle, before=before,
            positions=[prefix_positions], labels=[prefix_labels], prefix_labels=prefix_labels,
            corners=np.empty(0, np.int64), estimate=empty, lower=empty, upper=empty,
            guarantee=_GUARANTEE, queried=np.empty(0, np.int64), result_type=AdaStratResult,
            extra=_extra(plan, np.empty(0), np.empty(0)),
        )  # fmt: skip

    strata = _Strata(oracle, gen, l_tilde, int(prefix_labels.sum()))
    queried: list[int] = []
    limit = (1.0 + plan.epsilon) ** 2

    def query(rank: int):
        queried.append(rank)
        strata.add(rank)
        _, s = adastrat_sample_size(
            len(queried) + (plan.eta > 0), delta=plan.delta, beta=plan.beta, p_min=plan.p_min,
            eta=plan.eta,
        )  # fmt: skip
        strata.top_up(s)
        return strata.yields()

    def accepted(low: int, high: int, points) -> bool:
        return high <= low * limit or height(low, high, *points, plan.m, plan.r_tilde, n) <= limit

    points = query(n)
    pending = [(l_tilde, n)]
    while pending:
        while pending:  # function PR, depth first, left range first
            low, high = pending.pop()
            if accepted(low, high, points):
                continue
            mid = _midpoint(low, high)
            points = query(mid)
            pending += [(mid, high), (low, mid)]
        ends = points[0]
        pending = [
            (int(a), int(b))
            for a, b in zip(ends[:-1], ends[1:], strict=True)
            if not accepted(int(a), int(b), points)
        ][::-1]

    ends, yields = points
    extra = _extra(plan, ends, yields)
    extra["crossing"] = _crossing(plan, ends, extra)
    return build_result(
        method="adastrat",
        plan=plan,
        oracle=oracle,
        before=before,
        positions=[prefix_positions, strata.positions],
        labels=[prefix_labels, strata.labels],
        prefix_labels=prefix_labels,
        corners=ends,
        estimate=yields / ends,
        lower=np.empty(0),
        upper=np.empty(0),
        guarantee=_GUARANTEE,
        strata=ends,
        queried=np.array(queried, dtype=np.int64),
        result_type=AdaStratResult,
        extra=extra,
    )


def _crossing(plan, ends: np.ndarray, extra: dict) -> tuple[int, int] | None:
    """First and last rank range where ``lower > upper``, with a warning; ``None`` if nowhere."""
    gaps = (plan.m, plan.r_tilde, plan.n_items)
    crossed = [
        (int(a), int(b))
        for a, b in zip(ends[:-1], ends[1:], strict=True)
        if ratio_range(int(a) + 1, int(b), ends, extra["yield_low"], *gaps,
                       upper_yields=extra["yield_high"])[0] < 1.0
    ]  # fmt: skip
    if not crossed:
        return None
    span = (crossed[0][0] + 1, crossed[-1][1])
    warnings.warn(
        f"AdaStrat's guaranteed envelope crosses (lower > upper) somewhere in ranks {span[0]} to "
        f"{span[1]}: the list is not (r_tilde, m)-weakly monotone there (r_tilde={plan.r_tilde}, "
        f"m={plan.m}), or an estimate missed its Eq. 5 bound (probability <= delta). The "
        "bounds do not hold there; the estimate is still the envelope's geometric mean.",
        RuntimeWarning,
        stacklevel=3,
    )
    return span


def _extra(plan, ends: np.ndarray, yields: np.ndarray) -> dict:
    """Return the fields of AdaStratResult: estimated yields and the guarantee's yield ranges."""
    y = ends.astype(np.float64)
    low = np.ceil(yields / plan.beta * (1 - 1e-12))
    high = y if plan.beta >= 2 else np.floor(yields / (2 - plan.beta) * (1 + 1e-12))
    low, high = np.clip(low, 0, y), np.clip(high, 0, y)
    if ends.size and plan.eta == 0:  # the prefix point is exact
        low[0] = high[0] = yields[0]
    return {
        "m": plan.m, "r_tilde": plan.r_tilde, "point_yields": yields, "yield_low": low,
        "yield_high": high,
    }  # fmt: skip


_GUARANTEE = (
    "probability >= 1 - delta: lower(r) <= p(r) <= upper(r) for every rank if p is "
    "(r_tilde, m)-weakly monotone and p >= p_min at the queried ranks (Theorem 2's envelope "
    "through the yields allowed by Eq. 5's Hoeffding bound with a union bound over the K "
    "queries); exact for r <= l_tilde"
)


@dataclass(frozen=True, repr=False, eq=False, kw_only=True)
class AdaStratResult(CurveResult):
    """Result of :func:`adastrat`: exact prefix, then smooth envelopes rather than steps.

    Beyond ``exact_len`` the three functions are envelopes of Theorem 2 of [1]_ through the
    points ``corners`` (``l_tilde`` and the queried ranks): ``estimate`` is
    ``sqrt(lb ub)`` of the envelope through the estimated yields ``point_yields``, ``lower``
    the ``lb`` through ``yield_low`` and ``upper`` the ``ub`` through ``yield_high``. They are
    evaluated exactly at any ranks; ``corner_*`` hold their values at ``corners``.

    Attributes
    ----------
    m, r_tilde : int
        Monotonicity gap of the envelope and the rank from which it holds.
    point_yields, yield_low, yield_high : numpy.ndarray
        At each corner: estimated positives among the top ``corner`` items, and the least and
        greatest integer yields the guarantee allows.
    crossing : tuple of int or None
        First and last rank of the ranges where ``lower > upper`` (evidence against weak
        monotonicity, see :func:`adastrat`), or ``None``.

    References
    ----------
    .. [1] A. Sabharwal and Y. Xue. Adaptive stratified sampling for precision-recall
       estimation. UAI 2018.
    """

    m: int = 1
    r_tilde: int = 0
    point_yields: np.ndarray | None = None
    yield_low: np.ndarray | None = None
    yield_high: np.ndarray | None = None
    crossing: tuple[int, int] | None = None

    @property
    def _gaps(self) -> tuple[int, int, int]:
        return self.m, self.r_tilde, self.n_items

    def _envelope(self, ranks: ArrayLike, which: str) -> np.ndarray:
        def beyond(tail: np.ndarray) -> np.ndarray:
            if which == "estimate":
                lb, ub = bounds(tail, self.corners, self.point_yields, *self._gaps)
                return np.sqrt(lb * ub)
            if which == "lower":
                return bounds(tail, self.corners, self.yield_low, *self._gaps)[0]
            return bounds(tail, self.corners, self.yield_high, *self._gaps)[1]

        return self._evaluate_with(ranks, beyond)

    def at(self, ranks: ArrayLike) -> np.ndarray:
        """Point estimate of ``p(r)`` at ``ranks``: ``sqrt(lb ub)`` through the estimated yields."""
        return self._envelope(ranks, "estimate")

    def lower(self, ranks: ArrayLike) -> np.ndarray:
        """Lower bound on ``p(r)`` at ``ranks``: the guaranteed envelope's ``lb``."""
        return self._envelope(ranks, "lower")

    def upper(self, ranks: ArrayLike) -> np.ndarray:
        """Upper bound on ``p(r)`` at ``ranks``: the guaranteed envelope's ``ub``."""
        return self._envelope(ranks, "upper")

    def _steps(self, which: str, ratio: float = 1.0002) -> tuple[np.ndarray, np.ndarray]:
        """Bound ``lower`` from below (``which="lower"``) or ``upper`` from above by steps.

        Cells of a geometric grid (consecutive starts within ``ratio``) cut at every piece
        boundary of every point, so each point's bound is monotone on a cell and the cell takes
        ``max_j min`` (``min_j max``) of the point bounds at the cell's two ends.
        """
        n, e = self.n_items, self.exact_len
        if e >= n - 1:
            return np.empty(0, np.int64), np.empty(0)
        yields = self.yield_low if which == "lower" else self.yield_high
        y, big_y, k = as_points(self.corners, yields, self.m)
        count = int(math.ceil(math.log((n - 1) / (e + 1)) / math.log(ratio))) + 2
        grid = np.unique(np.geomspace(e + 1, n - 1, count).astype(np.int64))
        cuts = np.concatenate([y + 1, y + k + 1, y + self.m + 1, y - self.m, y - k, y])
        starts = np.union1d(grid, cuts[(cuts > e + 1) & (cuts < n)].astype(np.int64))
        ends = np.append(starts[1:] - 1, n - 1)
        values = []
        for v in (starts, ends):
            col = v.astype(np.float64).reshape(-1, 1)
            ub_a, ub_b, lb_a, lb_b = line_pieces(col, y, big_y, k, *self._gaps)
            values.append(lb_a / col + lb_b if which == "lower" else ub_a / col + ub_b)
        if which == "lower":
            step = np.max(np.minimum(*values), axis=1, initial=0.0)
        else:
            step = np.min(np.maximum(*values), axis=1, initial=1.0)
        return starts, np.clip(step, 0.0, 1.0)
