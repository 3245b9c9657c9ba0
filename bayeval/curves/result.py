"""The result of a precision-curve method: an exact prefix followed by step functions.

:class:`CurveResult` is shared by :func:`bayeval.curves.random_baseline`,
:func:`bayeval.curves.logstrat` and :func:`bayeval.curves.paula`. It stores only what the run
annotated (the exact prefix as cumulative counts) and the values of the estimate and of its lower
and upper bounds at the *corners* of the step functions, so its memory is O(annotations + corners)
and it evaluates at any ranks ``1 <= r <= N`` of lists of ``2 * 10**9`` items.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from bayeval._constraints import Prob, validate
from bayeval.curves.planning import CurvePlan
from bayeval.oracles import Oracle
from bayeval.results import (
    KINDS,
    Result,
    dataclass_to_dataset,
    dataset_to_dataclass,
    draws_interval,
)

__all__ = ["CurveResult"]

# Seed of the posterior draws behind .interval(basis="posterior"), so that repeated calls agree;
# posterior_band(rng=...) draws others.
_POSTERIOR_SEED = 0


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
class CurveResult(Result):
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
        (LogStrat, AdaStrat, the random baseline): increasing positions
        ``b_0 = exact_len < ... < b_S``, stratum ``i`` holding positions ``b_i .. b_{i+1} - 1``.
        ``None`` for PAULA.

    Notes
    -----
    On the protocol of :mod:`bayeval.results` the result is labelled by ``rank`` (the queried
    ranks, :attr:`ranks`). Its ``design`` basis is the method's envelope ``[lower, upper]``,
    which holds with the probability fixed when the run was planned (:attr:`prob`,
    ``1 - delta``; 1 for PAULA's deterministic guarantee) and only as a two-sided interval.
    Its ``posterior`` basis (methods with strata) is :func:`~bayeval.curves.posterior.
    posterior_band`'s model, at any probability and of any kind. Evaluate the functions at
    other ranks with :meth:`at`, :meth:`lower` and :meth:`upper`.

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
    >>> res.at([1, 4, 50_000]).round(3).tolist()
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

    # ------------------------------------------------------------------ the result protocol

    @property
    def prob(self) -> float:
        """Probability of the envelope: ``1 - delta``, or 1 for PAULA's deterministic guarantee."""
        return 1.0 - float(getattr(self.plan, "delta", 0.0))

    @property
    def bases(self) -> tuple[str, ...]:
        """``("design", "posterior")`` for methods with strata, else ``("design",)``."""
        if self.strata is not None and self.exact_len < self.n_items:
            return ("design", "posterior")
        return ("design",)

    @property
    def ranks(self) -> np.ndarray:
        """The ranks the protocol reports: the queried ones (the last rank if none were)."""
        ranks = self.queried if self.queried.size else [self.n_items]
        return np.unique(np.asarray(ranks, dtype=np.int64))  # increasing, as a coordinate

    @property
    def estimate(self):
        """Point estimate of ``p(r)`` at :attr:`ranks` (the design basis's), dim ``rank``.

        Calling it, ``estimate(ranks)``, still works for one release with a
        ``DeprecationWarning``: use :meth:`at`.
        """
        return _deprecated_call(self.estimate_of(), self.at)

    def kinds(self, basis: str) -> tuple[str, ...]:
        """Return the kinds of ``basis``: the envelope is two-sided only; the posterior has all."""
        return ("eti",) if basis == "design" else KINDS

    def _fixed_prob(self, basis):
        return self.prob if basis == "design" else None

    def _layout(self):
        return ("rank",), {"rank": self.ranks}

    def _estimate_values(self, basis):
        if basis == "design":
            return self.at(self.ranks)
        return self._posterior_draws().median(("chain", "draw")).values

    def _bounds(self, prob, kind, basis):
        if basis == "design":
            return self.lower(self.ranks), self.upper(self.ranks)
        ci = draws_interval(self._posterior_draws(), prob, kind)
        return ci.sel(ci_bound="lower").values, ci.sel(ci_bound="upper").values

    def _posterior_draws(self):
        return self.posterior["posterior"]["precision"]

    def _posterior_tree(self):
        if "posterior" not in self.bases:
            return None
        if "_protocol_posterior" not in self.__dict__:
            from bayeval.curves.posterior import posterior_band

            band = posterior_band(self, ranks=self.ranks, rng=_POSTERIOR_SEED)
            tree = type(band).from_dict({"posterior": band["posterior"].to_dataset()})
            object.__setattr__(self, "_protocol_posterior", tree)
        return self.__dict__["_protocol_posterior"]

    def _no_posterior_message(self):
        return (
            f"method {self.method!r} has no posterior draws: it annotates fixed ranks, not "
            "random samples of strata (or annotated the whole list). Use basis='design', or "
            "curves.logstrat, curves.adastrat or curves.random_baseline."
        )

    def _state(self):
        curve = dataclass_to_dataset(self)
        curve.attrs["plan_type"] = type(self.plan).__name__
        return {"curve": curve, "plan": dataclass_to_dataset(self.plan)}

    @classmethod
    def _from_state(cls, tree, posterior):
        from bayeval.curves import planning

        curve = tree["curve"].to_dataset()
        plan_cls = getattr(planning, str(curve.attrs.pop("plan_type")))
        plan = dataset_to_dataclass(plan_cls, tree["plan"].to_dataset())
        result = dataset_to_dataclass(cls, curve, plan=plan)
        if posterior is not None:
            object.__setattr__(result, "_protocol_posterior", posterior)
        return result

    # ------------------------------------------------------------------ posterior band

    @validate(prob=Prob())
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

    def at(self, ranks: ArrayLike) -> np.ndarray:
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

    def plot(self, prob: float | None = None, kind: str = "eti", ax=None, **options):
        """Plot the curve: estimate, envelope, queried ranks and exact prefix.

        :func:`bayeval.plots.curves.plot_curve` with ``options`` (``true_precision``,
        ``log_x``, ``title``, ``legend``). The envelope's probability is fixed by the plan and
        its kind is ``"eti"``: ``prob`` and ``kind`` may only repeat them.

        Returns
        -------
        matplotlib.axes.Axes
        """
        from bayeval.plots.curves import plot_curve

        self._check_prob(prob, "design")
        if kind != "eti":
            raise ValueError(f"`kind` of a curve's envelope is 'eti'; got {kind!r}.")
        return plot_curve(self, ax=ax, **options)

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
        for name, function in (("estimate", "at"), ("lower", "lower"), ("upper", "upper")):
            values = getattr(result, function)(corners)
            object.__setattr__(result, f"corner_{name}", _frozen(values, np.float64))
    return result


def _deprecated_call(values, at):
    """``values`` (a DataArray) that, called as ``values(ranks)``, warns and returns ``at(ranks)``.

    Wave 1's ``CurveResult.estimate(ranks)`` was a method; the protocol's ``.estimate`` is the
    point estimate itself. This keeps old calls working for one release.
    """
    out = _callable_class()(values.values, coords=values.coords, dims=values.dims)
    out._at = at
    return out


@cache
def _callable_class():
    import xarray as xr

    class CallableEstimate(xr.DataArray):
        __slots__ = ("_at",)

        def __call__(self, ranks):
            import warnings

            warnings.warn(
                "CurveResult.estimate(ranks) is deprecated: use CurveResult.at(ranks); "
                ".estimate is now the estimate at the queried ranks.",
                DeprecationWarning,
                stacklevel=2,
            )
            return self._at(ranks)

    return CallableEstimate
