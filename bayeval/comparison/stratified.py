"""Two systems judged on one stratified sample: the paired difference of their measures.

Webber's setting (2013, §1): two retrievals over the same collection, one sample of documents
drawn by strata (typically: retrieved by both, by the first only, by the second only, by
neither) and judged once. Every judged document informs both systems, so the difference of
their recall (or precision, F1) is estimated from shared labels: its uncertainty is that of the
documents on which they differ, not the sum of two separate intervals.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy import stats

from bayeval._constraints import Integer, Pair, Positive, Seed, validate
from bayeval._core import pattern_cells as kernel
from bayeval.results import Result, draws_interval

__all__ = ["StratifiedDifference", "stratified_difference"]


@validate(prior=Pair(Positive()), draws=Integer(minimum=100), rng=Seed())
def stratified_difference(
    first: Any,
    second: Any,
    labelled: Any,
    labels: Any,
    *,
    strata: Any = None,
    measure: Any = "recall",
    systems: tuple[str, str] = ("first", "second"),
    prior: tuple[float, float] = (0.5, 0.5),
    draws: int = 4000,
    rng: Any = None,
) -> StratifiedDifference:
    """Return the difference ``first - second`` of a measure, from one stratified sample.

    Parameters
    ----------
    first, second : array_like of {0, 1}
        Each system's prediction (retrieved or not) for every item of the pool.
    labelled : array_like of int
        Positions of the judged items: a sample drawn at random within each stratum.
    labels : array_like of {0, 1}
        Their labels, in the order of ``labelled``.
    strata : array_like of int, optional
        Each item's stratum. The cells are the strata crossed with the two systems' joint
        prediction, so the default (no strata) is the four joint predictions.
    measure : str or bayeval.measures.Measure, default "recall"
        A measure of a system's predictions with one output (``"precision"``, ``"f1"``, ...).
    systems : (str, str), default ("first", "second")
        Names, in the order given.
    prior : (float, float), default (0.5, 0.5)
        The Beta prior of each cell's rate of positives (Jeffreys').
    draws : int, default 4000
        Posterior draws.
    rng : int, numpy.random.Generator or None
        Seed or generator of the draws.

    Returns
    -------
    StratifiedDifference
        Bases ``"posterior"`` (the finite-population posterior of
        :class:`~bayeval.models.PredictionPatterns` over the cells, each rate with the plain
        ``prior``, ``vote=0``) and ``"design"`` (each
        cell a stratum; the stratified estimate of the difference with its linearised
        variance and a ``t`` interval, which needs two judged items in every cell).

    Examples
    --------
    Two retrievals of 20,000 documents (400 relevant), 100 documents judged per cell:

    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> relevant = rng.random(20_000) < 0.02
    >>> a = np.where(relevant, rng.random(20_000) < 0.80, rng.random(20_000) < 0.01)
    >>> b = np.where(relevant, rng.random(20_000) < 0.70, rng.random(20_000) < 0.01)
    >>> cell = 2 * a + b
    >>> judged = np.concatenate([rng.choice(np.flatnonzero(cell == c), 100, replace=False)
    ...                          for c in range(4)])
    >>> result = be.comparison.stratified_difference(a, b, judged, relevant[judged], rng=1)
    >>> result.summary()[["estimate", "lower", "upper"]].round(3)
                                     estimate  lower  upper
    measure               basis
    recall first - second posterior     0.085  0.022  0.158
                          design        0.104  0.030  0.178
    >>> round(float(a[relevant].mean() - b[relevant].mean()), 3)  # the truth
    0.095
    """
    from bayeval._validation import check_rng
    from bayeval.models import PredictionPatterns
    from bayeval.models._systems import check_labelled, check_measure, check_predictions

    first, second = np.asarray(first), np.asarray(second)
    if first.shape != second.shape or first.ndim != 1:
        raise ValueError(
            "`first` and `second` must give one prediction per item of the same pool; got "
            f"shapes {first.shape} and {second.shape}."
        )
    predictions = check_predictions(np.column_stack([first, second]), 2, "first and second")
    n_items = predictions.shape[0]
    groups = None
    if strata is not None:
        strata = np.asarray(strata)
        if strata.shape != (n_items,):
            raise ValueError(
                f"`strata` must give one stratum per item ({n_items}); got shape {strata.shape}."
            )
        groups = np.unique(strata, return_inverse=True)[1].reshape(-1)
    positions, classes = check_labelled(labelled, labels, n_items, 2)
    m = check_measure(measure, 2, "measure")
    model = PredictionPatterns(prior=prior, vote=0.0, draws=draws)  # two systems: no crowd
    cells = model.draws_for(predictions, check_rng(rng), groups)
    cells.tell(positions, classes)
    values = _measure_of(m, cells.positives, cells.sizes, cells.patterns)
    estimate, se, df = _design(m, cells.sizes, cells.labelled, cells.ones, cells.patterns)
    return StratifiedDifference(
        systems=(str(systems[0]), str(systems[1])),
        measure=m.name,
        values=values[None],
        design=(estimate, se, df),
        cells=(cells.sizes, cells.labelled, cells.ones),
    )


def _measure_of(measure, positives, sizes, patterns) -> np.ndarray:
    """Each system's measure, ``(..., 2)``, from the positives per cell ``(..., n_cells)``."""
    from bayeval.models._systems import measure_from_counts

    positives = np.atleast_2d(positives).astype(float)
    said_one = patterns.astype(float)
    counts = kernel.confusion_from_true_positives(
        positives @ said_one, positives.sum(axis=1), sizes @ said_one, int(sizes.sum())
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        return measure_from_counts(measure, counts)


def _design(measure, sizes, labelled, ones, patterns) -> tuple[float, float, float]:
    """Return the stratified estimate of the difference, its linearised standard error and df.

    Each cell is a stratum with a simple random sample: ``X_c = N_c p_c`` estimates its
    positives, with variance ``N_c^2 (1 - n_c / N_c) p_c (1 - p_c) / (n_c - 1)``; the
    difference is a smooth function of the ``X_c`` (its gradient by central differences).
    NaN where a cell with unjudged items has fewer than two judged.
    """
    unjudged = sizes > labelled
    if np.any(unjudged & (labelled < 2)):
        return np.nan, np.nan, np.nan
    share = np.divide(ones, labelled, out=np.zeros(sizes.size), where=labelled > 0)
    totals = np.where(unjudged, sizes * share, ones)  # a cell judged in full is known

    def difference(x):
        values = _measure_of(measure, x[None], sizes, patterns)[0]
        return values[0] - values[1]

    estimate = difference(totals)
    step = np.maximum(1e-6 * sizes, 1e-6)
    gradient = np.array(
        [
            (difference(totals + step * e) - difference(totals - step * e)) / (2 * step[c])
            for c, e in enumerate(np.eye(sizes.size))
        ]
    )
    n = np.maximum(labelled, 2)
    variance = np.where(
        unjudged, sizes**2 * (1 - labelled / sizes) * share * (1 - share) / (n - 1), 0.0
    )
    df = float(np.sum(np.where(unjudged, labelled - 1, 0)))
    return float(estimate), float(np.sqrt(gradient**2 @ variance)), max(df, 1.0)


class StratifiedDifference(Result):
    """The difference ``first - second`` of two systems' measure from one stratified sample.

    Returned by :func:`stratified_difference`. Bases ``"posterior"`` (median and intervals of
    the finite-population draws) and ``"design"`` (the stratified estimate, ``t`` interval).

    Attributes
    ----------
    systems : tuple of str
    measure : str
    """

    bases: ClassVar[tuple[str, ...]] = ("posterior", "design")
    value_range: ClassVar[tuple[float, float]] = (-1.0, 1.0)

    def __init__(self, *, systems, measure, values, design, cells):
        self.systems, self.measure = tuple(systems), str(measure)
        self._values = np.asarray(values, dtype=float)  # (chain, draw, system)
        self._design_values = tuple(float(v) for v in design)  # estimate, se, df
        self._cells = tuple(np.asarray(c) for c in cells)  # sizes, labelled, ones

    def _difference_draws(self):
        import xarray as xr

        return xr.DataArray(self._values[..., 0] - self._values[..., 1], dims=("chain", "draw"))

    @property
    def prob_better(self) -> float:
        """Posterior probability that the first system's measure is the higher."""
        return float(np.nanmean(self._values[..., 0] > self._values[..., 1]))

    def _estimate_values(self, basis):
        if basis == "posterior":
            return np.float64(np.nanmedian(self._difference_draws().values))
        return np.float64(self._design_values[0])

    def _bounds(self, prob, kind, basis):
        if basis == "posterior":
            ci = draws_interval(
                self._difference_draws(), prob, kind, basis=basis, value_range=self.value_range
            )
            return float(ci.sel(ci_bound="lower")), float(ci.sel(ci_bound="upper"))
        estimate, se, df = self._design_values
        if kind == "eti":
            half = stats.t.ppf(0.5 + prob / 2, df) * se
            return max(estimate - half, -1.0), min(estimate + half, 1.0)
        half = stats.t.ppf(prob, df) * se
        if kind == "lower":
            return max(estimate - half, -1.0), 1.0
        return -1.0, min(estimate + half, 1.0)

    def _summary_labels(self):
        return {"measure": f"{self.measure} {self.systems[0]} - {self.systems[1]}"}

    def _posterior_tree(self):
        import xarray as xr

        posterior = xr.Dataset(
            {
                "difference": (("chain", "draw"), self._difference_draws().values),
                self.measure: (("chain", "draw", "system"), self._values),
            },
            coords={"system": list(self.systems)},
        )
        sizes, labelled, ones = self._cells
        observed = xr.Dataset(
            {"cell_size": ("cell", sizes), "cell_labelled": ("cell", labelled),
             "cell_positives": ("cell", ones)}
        )  # fmt: skip
        return xr.DataTree.from_dict({"posterior": posterior, "observed_data": observed})

    def _state(self):
        import xarray as xr

        attrs = {"systems": list(self.systems), "measure": self.measure}
        attrs["design"] = list(self._design_values)
        return {"stratified_difference": xr.Dataset(attrs=attrs)}

    @classmethod
    def _from_state(cls, tree, posterior):
        attrs = tree["stratified_difference"].attrs
        values = posterior["posterior"][str(attrs["measure"])].transpose("chain", "draw", "system")
        observed = posterior["observed_data"]
        cells = tuple(observed[k].values for k in ("cell_size", "cell_labelled", "cell_positives"))
        return cls(
            systems=tuple(str(s) for s in attrs["systems"]),
            measure=str(attrs["measure"]),
            values=values.values,
            design=tuple(float(v) for v in np.ravel(attrs["design"])),
            cells=cells,
        )

    def __repr__(self) -> str:
        return (
            f"StratifiedDifference({self.measure} {self.systems[0]} - {self.systems[1]}: "
            f"{self.estimate:.3f}, P(first better) {self.prob_better:.3f})"
        )
