"""The result of a precision-curve method: an exact prefix followed by step functions.

:class:`CurveResult` is shared by :func:`bayeval.curves.random_baseline`,
:func:`bayeval.curves.logstrat` and :func:`bayeval.curves.paula`. It stores only what the run
annotated (the exact prefix as cumulative counts) and the values of the estimate and of its lower
and upper bounds at the *corners* of the step functions, so its memory is O(annotations + corners)
and it evaluates at any ranks ``1 <= r <= N`` of lists of ``2 * 10**9`` items.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from bayeval.curves.planning import CurvePlan
from bayeval.oracles import Oracle

__all__ = ["CurveResult"]


def _check_oracle(oracle: Any, n_items: int) -> Oracle:
    """Return ``oracle`` if it is an :class:`~bayeval.oracles.Oracle` over ``n_items`` items."""
    if not isinstance(oracle, Oracle):
        raise ValueError(
            f"`oracle` must be a bayeval.oracles.Oracle (LabelOracle, CallableOracle, ...); got "
            f"{type(oracle).__name__}."
        )
    if oracle.n_items is not None and oracle.n_items != n_items:
        raise ValueError(
            f"`n_items` must equal the oracle's n_items={oracle.n_items}; got {n_items!r}."
        )
    return oracle


def label_prefix(oracle: Any, plan: CurvePlan, n_prefix: int) -> tuple[int, np.ndarray, np.ndarray]:
    """Check the oracle and label the exact prefix ``0 .. n_prefix - 1``.

    Returns the oracle's annotation count before the run, the prefix positions and labels.
    """
    _check_oracle(oracle, plan.n_items)
    before = oracle.annotations
    positions = np.arange(min(n_prefix, plan.n_items), dtype=np.int64)
    return before, positions, oracle.label(positions)


def _run_labels(positions: list[np.ndarray], labels: list[np.ndarray]) -> tuple:
    """Sorted distinct positions a run annotated and their labels, as read-only arrays."""
    pos = np.concatenate([np.asarray(p, dtype=np.int64).reshape(-1) for p in positions])
    lab = np.concatenate([np.asarray(v, dtype=bool).reshape(-1) for v in labels])
    pos, first = np.unique(pos, return_index=True)
    lab = lab[first]
    pos.setflags(write=False)
    lab.setflags(write=False)
    return pos, lab


def _frozen(array: ArrayLike, dtype: Any) -> np.ndarray:
    out = np.array(array, dtype=dtype)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, repr=False, eq=False, kw_only=True)
class CurveResult:
    """Approximate precision function of a ranked list: exact prefix plus step functions.

    Ranks are 1-based prefix lengths: ``p(r)`` is the fraction of positives among positions
    ``0..r-1``. For ``r <= exact_len`` the run annotated every item, so ``estimate``, ``lower``
    and ``upper`` all equal the exact ``p(r)``. For ``r > exact_len`` each function is a step
    function: its value at ``r`` is its value at the largest corner ``c <= r`` (Definition 5 of
    [1]_ for LogStrat and PAULA, whose corners are the geometric points ``g_ell, ..., g_L``).

    Attributes
    ----------
    method : str
        ``"random"``, ``"logstrat"`` or ``"paula"``.
    n_items : int
        Length ``N`` of the ranked list.
    plan : CurvePlan
        The planner's result the run followed (:mod:`bayeval.curves.planning`).
    queried : numpy.ndarray
        ``plan.queried``: the ranks at which the precision function was estimated.
    annotations : int
        Distinct items this run labelled, as counted by the oracle (items the oracle had
        labelled before the run are free and not counted).
    labels : tuple of numpy.ndarray
        ``(positions, labels)``: every 0-based position the run used, sorted, and its label.
    exact_len : int
        Ranks ``1..exact_len`` are exact.
    corners : numpy.ndarray
        Increasing ``int64`` ranks where the step functions change value (beyond
        ``exact_len``).
    guarantee : str
        What ``[lower, upper]`` bounds and under which assumptions (see each method).
    components : dict
        Further step functions of the method at ``corners`` (e.g. PAULA's ``q_minus`` and
        ``q_plus``), evaluated with :meth:`step`.
    strata : numpy.ndarray or None
        For methods whose labels beyond the prefix are simple random samples of strata
        (LogStrat, the random baseline): increasing positions ``b_0 = exact_len < ... < b_S``,
        stratum ``i`` holding positions ``b_i .. b_{i+1} - 1``. ``None`` for PAULA.

    References
    ----------
    .. [1] A. Sabharwal and H. Sedghi. How good are my predictions? Efficiently approximating
       precision-recall curves for massive datasets. UAI 2017.

    Examples
    --------
    >>> from bayeval import curves
    >>> from bayeval.oracles import CallableOracle
    >>> oracle = CallableOracle(lambda i: i % 4 != 3, n_items=100_000)
    >>> res = curves.paula(oracle, 100_000)
    >>> res.estimate([1, 4, 50_000]).round(3).tolist()
    [1.0, 0.75, 0.75]
    >>> bool(res.lower(50_000) <= 0.75 <= res.upper(50_000))
    True
    """

    method: str
    n_items: int
    plan: CurvePlan
    queried: np.ndarray
    annotations: int
    labels: tuple[np.ndarray, np.ndarray]
    exact_len: int
    prefix_counts: np.ndarray
    corners: np.ndarray
    corner_estimate: np.ndarray
    corner_lower: np.ndarray
    corner_upper: np.ndarray
    guarantee: str
    components: dict[str, np.ndarray] = field(default_factory=dict)
    strata: np.ndarray | None = None

    def posterior_band(self, prob: float = 0.95, **options):
        """Posterior draws of ``p(r)`` with a pointwise credible band, as an ``xarray.DataTree``.

        See :func:`bayeval.curves.posterior.posterior_band` for the model and the options.
        """
        from bayeval.curves.posterior import posterior_band

        return posterior_band(self, prob, **options)

    # ------------------------------------------------------------------ evaluation

    def _ranks(self, ranks: ArrayLike) -> np.ndarray:
        arr = np.asarray(ranks)
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
            raise ValueError(
                f"`ranks` must be whole numbers in [1, {self.n_items}]; got {ranks!r}."
            )
        flat = arr.reshape(-1)
        if np.issubdtype(flat.dtype, np.floating):
            bad = ~np.isfinite(flat) | (flat != np.round(flat))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"`ranks` must be whole numbers; entry {i} is {flat[i].item()!r}.")
        flat = flat.astype(np.int64)
        out_of_range = (flat < 1) | (flat > self.n_items)
        if out_of_range.any():
            i = int(np.flatnonzero(out_of_range)[0])
            raise ValueError(
                f"`ranks` must be in [1, n_items] = [1, {self.n_items}]; entry {i} is {flat[i]}."
            )
        return flat.reshape(arr.shape)

    def _evaluate_with(self, ranks: ArrayLike, beyond) -> np.ndarray:
        """Exact precision on the prefix, ``beyond(tail_ranks)`` after it."""
        r = self._ranks(ranks)
        flat = r.reshape(-1)
        out = np.empty(flat.shape, dtype=np.float64)
        in_prefix = flat <= self.exact_len
        head = flat[in_prefix]
        out[in_prefix] = self.prefix_counts[head] / head
        tail = flat[~in_prefix]
        if tail.size:
            out[~in_prefix] = beyond(tail)
        return out.reshape(r.shape)

    def _evaluate(self, ranks: ArrayLike, values: np.ndarray) -> np.ndarray:
        """Evaluate the step function with ``values`` at the corners."""

        def steps(tail: np.ndarray) -> np.ndarray:
            return values[np.searchsorted(self.corners, tail, side="right") - 1]

        return self._evaluate_with(ranks, steps)

    def _steps(self, which: str) -> tuple[np.ndarray, np.ndarray]:
        """Step function below ``lower`` (``which="lower"``) or above ``upper``, ranks ``> e``.

        Returns the first rank of each constant piece in ``e + 1 .. N - 1`` (``e`` the exact
        prefix) and its value; for step results, ``lower`` or ``upper`` themselves.
        """
        n, e = self.n_items, int(min(self.exact_len, self.n_items - 1))
        corners = np.asarray(self.corners, dtype=np.int64)
        starts = np.unique(np.concatenate([[e + 1], corners[(corners > e + 1) & (corners < n)]]))
        starts = starts[starts < n]
        return starts, getattr(self, which)(starts)

    def estimate(self, ranks: ArrayLike) -> np.ndarray:
        """Point estimate of the precision ``p(r)`` at ``ranks`` (1-based).

        Parameters
        ----------
        ranks : int or array_like of int
            ``1 <= r <= n_items``.

        Returns
        -------
        numpy.ndarray of float64
            With the shape of ``ranks``; exact for ``r <= exact_len``.
        """
        return self._evaluate(ranks, self.corner_estimate)

    def lower(self, ranks: ArrayLike) -> np.ndarray:
        """Lower bound on ``p(r)`` at ``ranks``; see :attr:`guarantee` for what it bounds.

        Parameters
        ----------
        ranks : int or array_like of int
            ``1 <= r <= n_items``.

        Returns
        -------
        numpy.ndarray of float64
            With the shape of ``ranks``; equal to the exact ``p(r)`` for ``r <= exact_len``.
        """
        return self._evaluate(ranks, self.corner_lower)

    def upper(self, ranks: ArrayLike) -> np.ndarray:
        """Upper bound on ``p(r)`` at ``ranks``; see :attr:`guarantee` for what it bounds.

        Parameters
        ----------
        ranks : int or array_like of int
            ``1 <= r <= n_items``.

        Returns
        -------
        numpy.ndarray of float64
            With the shape of ``ranks``; equal to the exact ``p(r)`` for ``r <= exact_len``.
        """
        return self._evaluate(ranks, self.corner_upper)

    def step(self, name: str, ranks: ArrayLike) -> np.ndarray:
        """Evaluate the step function ``components[name]`` at ``ranks`` (exact on the prefix).

        Parameters
        ----------
        name : str
            A key of :attr:`components`.
        ranks : int or array_like of int
            ``1 <= r <= n_items``.

        Returns
        -------
        numpy.ndarray of float64
        """
        if name not in self.components:
            options = ", ".join(repr(k) for k in self.components) or "none"
            raise ValueError(f"`name` must be one of {options}; got {name!r}.")
        return self._evaluate(ranks, self.components[name])

    @property
    def n_queries(self) -> int:
        """Number of queried ranks."""
        return int(self.queried.size)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(method={self.method!r}, n_items={self.n_items}, "
            f"n_queries={self.n_queries}, annotations={self.annotations}, "
            f"exact_len={self.exact_len}, corners={self.corners.size}, "
            f"approximation={self.plan.approximation:.6g})"
        )


def build_result(
    *,
    method: str,
    plan: CurvePlan,
    oracle: Oracle,
    before: int,
    positions: list[np.ndarray],
    labels: list[np.ndarray],
    prefix_labels: np.ndarray,
    corners: np.ndarray,
    estimate: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    guarantee: str,
    components: dict[str, np.ndarray] | None = None,
    strata: np.ndarray | None = None,
    queried: np.ndarray | None = None,
    result_type: type = CurveResult,
    extra: dict[str, Any] | None = None,
) -> CurveResult:
    """Assemble a :class:`CurveResult` or subclass (``extra`` holds the subclass's fields).

    ``queried`` defaults to the plan's. When ``lower`` is empty but ``corners`` are not, the
    ``corner_*`` values are the result's own functions evaluated at the corners.
    """
    counts = np.zeros(prefix_labels.size + 1, dtype=np.int64)
    np.cumsum(prefix_labels, out=counts[1:])
    counts.setflags(write=False)
    fields = {
        k: _frozen(v, np.float64) if isinstance(v, np.ndarray) else v
        for k, v in (extra or {}).items()
    }
    result = result_type(
        method=method,
        n_items=plan.n_items,
        plan=plan,
        queried=plan.queried if queried is None else _frozen(queried, np.int64),
        annotations=oracle.annotations - before,
        labels=_run_labels(positions, labels),
        exact_len=int(prefix_labels.size),
        prefix_counts=counts,
        corners=_frozen(corners, np.int64),
        corner_estimate=_frozen(estimate, np.float64),
        corner_lower=_frozen(np.clip(lower, 0.0, 1.0), np.float64),
        corner_upper=_frozen(np.clip(upper, 0.0, 1.0), np.float64),
        guarantee=guarantee,
        components={k: _frozen(v, np.float64) for k, v in (components or {}).items()},
        strata=None if strata is None else _frozen(strata, np.int64),
        **fields,
    )
    if corners.size and not np.size(lower):  # values of the result's own functions
        for name in ("estimate", "lower", "upper"):
            values = getattr(result, name)(corners)
            object.__setattr__(result, f"corner_{name}", _frozen(values, np.float64))
    return result
