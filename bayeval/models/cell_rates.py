"""One rate of positives per cell of alike items: the model of a pool without real scores.

When a system gives only its 0/1 predictions (a language model's yes or no, a rule), its
"scores" take two values and a calibration curve over two points says nothing the cells do not:
:class:`~bayeval.models.ScoreCalibration`'s priors then decide how rare the errors are (on GLUE
QNLI its precision interval at 100 labels covered 0.855-0.87 of 200 runs, nearly every miss
above the truth). :class:`CellRates` gives each cell, the items of one score, one judge's
level and one pattern of predictions, its own rate of positives under a Jeffreys prior and
completes the unlabelled items of each cell from the beta-binomial posterior predictive (Webber
2013, §2.8, §3.6, cell by cell). It is the default model of a pool whose scores take at most
two values (:meth:`bayeval.sampling.Sampler.estimate`). Model card: ``models/cell_rates/spec.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bayeval._constraints import Integer, Positive, validate_fields
from bayeval._validation import check_draws, check_rng

__all__ = ["CellRates", "has_two_scores"]


@dataclass(frozen=True, kw_only=True)
@validate_fields(prior=Positive(), draws=Integer(minimum=1), chains=Integer(minimum=1))
class CellRates:
    """A rate of positives per cell, ``Beta(prior, prior)`` a priori, independent across cells.

    A cell holds the items alike to every sampler: one score (a bin of
    :class:`~bayeval.models.ScoreCalibration`'s 1,024), one level and score stratum of the
    judge, one pattern of the systems' predictions and of the measure's losses. The items of
    cell ``r`` are positive with probability ``theta_r ~ Beta(prior, prior)``; given ``k_r``
    labelled positives and ``m_r`` negatives, ``theta_r ~ Beta(prior + k_r, prior + m_r)``
    and the unlabelled items' positives are binomial given it, so every draw is the measure
    of this pool. Nothing is shared across cells: a cell without labels keeps its prior, so
    the model is for pools of few cells (scores of two values); with a real score the curve
    of :class:`~bayeval.models.ScoreCalibration` is what lets the labels at some scores speak
    for the others.

    Parameters
    ----------
    prior : float, default 0.5
        Both parameters of each cell's Beta prior; ``0.5`` is Jeffreys' prior, whose
        intervals of a proportion cover close to nominal even near 0 and 1 (Brown, Cai &
        DasGupta 2001), ``1`` the uniform.
    draws, chains : int, default 4000 and 4
        Posterior draws in all, split into ``chains`` (the layout ArviZ expects; the draws
        are independent).

    Examples
    --------
    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(5_000) < 0.5
    >>> predicted = np.where(rng.random(truth.size) < 0.9, truth, ~truth)  # right on 90%
    >>> pool = be.Pool(predicted.astype(float))  # the predictions are the only scores
    >>> bound = CellRates().bind(pool, be.measures.Precision())
    >>> labelled = rng.choice(truth.size, 200, replace=False)
    >>> draws = bound.fit(labelled, truth[labelled], rng=1).measure_draws()[:, 0]
    >>> true = truth[predicted].mean()
    >>> bool(np.quantile(draws, 0.025) < true < np.quantile(draws, 0.975))
    True
    """

    prior: float = 0.5
    draws: int = 4000
    chains: int = 4

    def __post_init__(self):
        """Check ``draws`` against ``chains`` (the fields are checked)."""
        check_draws(self.draws, self.chains)

    def bind(self, pool: Any, target: Any) -> BoundCellRates:
        """Aggregate ``pool`` into cells for a measure (``target``: a measure or a Target).

        The cells are :class:`~bayeval.models.ScoreCalibration`'s rows.
        """
        from bayeval.models.score_calibration import ScoreCalibration

        rows = ScoreCalibration(draws=self.draws, chains=self.chains).bind(pool, target)
        return BoundCellRates(self, rows)


class BoundCellRates:
    """A :class:`CellRates` bound to a pool and a measure: the cells and their sizes."""

    def __init__(self, spec: CellRates, rows: Any):
        self.spec, self.rows, self.target = spec, rows, rows.target
        self.sizes = rows.sizes

    def fit(self, positions: Any, labels: Any, *, rng: Any = None, finite: bool = True):
        """Draw each cell's rate and the measure from their posterior.

        Parameters
        ----------
        positions : array_like of int
            Pool positions of the labelled items (distinct when ``finite``).
        labels : array_like of {0, 1}
            Label of each item of ``positions``.
        rng : int or numpy.random.Generator, optional
            Seed of every draw.
        finite : bool, default True
            ``True``: the measure of this pool, the unlabelled items drawn. ``False``: the
            measure under the rates for every item, each label one Bernoulli observation
            (an item may be labelled several times; a stochastic oracle's target).

        Returns
        -------
        CellRatesPosterior
            ``theta``: ``(draws, cells)`` rates; ``measure``: ``(draws, outputs)``.

        Raises
        ------
        ValueError
            Without labels, for labels outside ``{0, 1}`` or of another length than
            ``positions``, or repeated positions with ``finite``.
        """
        rng = check_rng(rng)
        positions, labels = self.rows.check_labelled(
            positions, labels, finite, "CellRates needs labels to learn the cells' rates from"
        )
        k, m = self.rows.labelled_rows(positions, labels)
        a = self.spec.prior
        theta = rng.beta(a + k, a + m, size=(self.spec.draws, k.size))
        counts = (k, m, self.sizes - (k + m if finite else 0), finite)
        return CellRatesPosterior(self, theta, self.rows.measure_at(theta, counts, rng), k, m)

    def probability_at(self, theta: np.ndarray, positions: Any) -> np.ndarray:
        """Each item's chance of a positive ``(draws, items)`` under rate draws ``theta``."""
        return theta[:, self.rows.row_of(positions)]


class CellRatesPosterior:
    """Posterior draws of :class:`CellRates`: the cells' rates and the measure."""

    def __init__(self, bound: BoundCellRates, theta, measure, positives, negatives):
        self.bound, self.theta, self.measure = bound, theta, measure
        self._labelled = (positives, negatives)

    def measure_draws(self) -> np.ndarray:
        """``(draws, outputs)`` draws of the measure."""
        return self.measure

    def to_datatree(self):
        """Return the ArviZ ``xarray.DataTree``.

        ``posterior``: ``rate`` (dim ``cell``) and one variable per measure; dims ``chain``
        and ``draw`` first. ``constant_data``: each cell's size, labelled positives and
        negatives, and its group (judge's level and stratum, prediction pattern) in the rows
        of :class:`~bayeval.models.BoundCalibration`.
        """
        import xarray as xr

        from bayeval.measures.layout import measure_variables

        chains = self.bound.spec.chains
        draws = self.theta.shape[0] // chains
        cells = np.arange(self.theta.shape[1])
        variables, coords = measure_variables(
            self.measure.reshape(chains, draws, -1), self.bound.target.outputs
        )
        posterior = xr.Dataset(
            {"rate": (("chain", "draw", "cell"), self.theta.reshape(chains, draws, -1)),
             **variables},
            coords={"chain": np.arange(chains), "draw": np.arange(draws), "cell": cells,
                    **coords},
            attrs={"model": "CellRates", "prior": self.bound.spec.prior},
        )  # fmt: skip
        positives, negatives = self._labelled
        rows = self.bound.rows
        constant = xr.Dataset(
            {"cell_size": ("cell", self.bound.sizes), "labelled_positives": ("cell", positives),
             "labelled_negatives": ("cell", negatives), "group": ("cell", rows.group),
             "loss_pattern": ("cell", rows.pattern)},
            coords={"cell": cells},
        )  # fmt: skip
        return xr.DataTree.from_dict({"posterior": posterior, "constant_data": constant})


def has_two_scores(pool: Any) -> bool:
    """Return whether every system's scores take at most two values (its 0/1 predictions).

    Examples
    --------
    >>> import bayeval as be
    >>> has_two_scores(be.Pool([0.0, 1.0, 1.0])), has_two_scores(be.Pool([0.1, 0.5, 0.9]))
    (True, False)
    """
    scores = pool.scores.reshape(pool.size, -1)
    lo, hi = scores.min(axis=0), scores.max(axis=0)
    return bool(np.all((scores == lo) | (scores == hi)))
