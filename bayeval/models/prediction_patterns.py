"""A model of the label given many systems' predictions: one rate of positives per pattern.

Items on which every system predicts the same (a *pattern* of the ``K`` systems' 0/1
predictions) form a cell, and the cell's items are exchangeable: its rate of positives has a
Beta prior and is learned only from the cell's own labels. Nothing is assumed about how systems
err together, which is what makes its probability that a system is the best trustworthy where
systems share errors, at the price of learning nothing about a pattern no label has reached.
It is the model of :class:`bayeval.sampling.ModelSelection`. Model card:
``models/prediction_patterns/spec.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayeval._constraints import AnyOf, Integer, Nonnegative, OneOf, Pair, Positive, validate_fields
from bayeval._core import pattern_cells as kernel
from bayeval._validation import check_rng
from bayeval.models._systems import (
    check_labelled,
    check_measure,
    check_predictions,
    measure_from_counts,
    system_names,
)

__all__ = ["PatternDraws", "PredictionPatterns"]


@dataclass(frozen=True, kw_only=True)
@validate_fields(
    prior=Pair(Positive()), vote=AnyOf(OneOf(("learned",)), Nonnegative()), draws=Integer(minimum=1)
)
class PredictionPatterns:
    """The label of each item from its pattern of the systems' predictions, one rate per pattern.

    Cell ``c`` (a distinct row of the predictions) holds ``N_c`` items, ``n_c`` of them
    labelled with ``o_c`` positives; ``v_c`` is the share of systems that predict 1 on it. Its
    rate is ``theta_c ~ Beta(a + w v_c, b + w (1 - v_c))`` a priori (``w`` pseudo-labels that
    follow the systems' vote) and gains ``o_c`` and ``n_c - o_c`` from the labels; its
    ``N_c - n_c`` unlabelled items hold ``Binomial(N_c - n_c, theta_c)`` positives. Every system
    predicts alike on a cell, so the positives per cell give every system's confusion counts on
    *this* pool, and so its measures.

    Parameters
    ----------
    prior : (float, float), default (0.5, 0.5)
        ``(a, b)``: the Beta prior of each cell's rate before the vote (Jeffreys').
    vote : "learned" or float, default "learned"
        ``w``, how far a cell's prior follows the systems' vote. ``"learned"``: ``w`` is one
        more unknown, equally likely a priori to be each value of
        :data:`~bayeval._core.pattern_cells.VOTE_GRID` and weighed by how well each explains
        the labels, so the prior trusts the vote only as far as the labels show the vote
        right, and the uncertainty about ``w`` stays in the posterior. A number fixes ``w``;
        0 ignores the vote: every unlabelled pattern is a coin toss, the most cautious choice.
    draws : int, default 2000
        Posterior draws (one chain).

    Notes
    -----
    A fixed weight that trusts the vote counts a system that is right where the majority is
    wrong as wrong on every unlabelled disagreement; the learned weight falls where the labels
    show that (the model card has both measured). A pattern without labels keeps its prior, so a
    single system's measure is only as good as the prior on the items no label has reached,
    while the comparison of the leading systems, which differ only on their disagreements, is
    what the labels resolve.

    Examples
    --------
    Two systems that disagree on 40 of 1,000 items, every disagreement labelled:

    >>> import numpy as np
    >>> from bayeval.models import PredictionPatterns
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(1_000) < 0.5
    >>> a = truth.copy(); a[:40] = ~truth[:40]; a[:10] = truth[:10]     # a is right on 10 of 40
    >>> b = truth.copy(); b[:40] = ~a[:40]                              # b on the other 30
    >>> predictions = np.stack([a, b], axis=1).astype(int)
    >>> disagree = np.flatnonzero(predictions[:, 0] != predictions[:, 1])
    >>> dt = PredictionPatterns().posterior(predictions, disagree, truth[disagree], rng=1)
    >>> difference = dt["posterior"]["accuracy"].diff("system")
    >>> float(difference.std()), float(difference.mean())    # known exactly: 20 of 1,000 items
    (0.0, 0.02)
    """

    prior: tuple[float, float] = (0.5, 0.5)
    vote: float | str = "learned"
    draws: int = 2000

    def draws_for(
        self, predictions: np.ndarray, rng: Any, groups: np.ndarray | None = None
    ) -> PatternDraws:
        """Return the prior draws over checked ``(n_items, K)`` 0/1 predictions; tell it labels.

        ``groups`` (one integer per item, such as the strata of a stratified sample) splits the
        cells further: a cell is then a pattern within a group.
        """
        return PatternDraws(self, predictions, check_rng(rng), groups)

    def posterior(
        self,
        predictions: Any,
        labelled: Any,
        labels: Any,
        *,
        measures: Sequence[Any] = ("accuracy",),
        systems: Sequence[str] | None = None,
        rng: Any = None,
    ):
        """Posterior of each system's measures on this pool.

        Parameters
        ----------
        predictions : array_like of {0, 1}, shape (n_items, n_systems)
            Each system's prediction of each item.
        labelled : array_like of int
            Positions of the labelled items (distinct).
        labels : array_like of {0, 1}
            Their labels, in the order of ``labelled``.
        measures : sequence of str or bayeval.measures.Measure, default ("accuracy",)
            Measures of a system's predictions.
        systems : sequence of str, optional
            Names of the systems; default ``"system0", "system1", ...``.
        rng : int, numpy.random.Generator or None
            Seed or generator of every draw.

        Returns
        -------
        xarray.DataTree
            ``posterior``: each measure (dims ``chain`` (one), ``draw``, ``system``) and
            ``vote_weight`` (``chain``, ``draw``), each draw's weight of the vote;
            ``constant_data``: ``pattern`` (``cell``, ``system``), ``cell_size``,
            ``cell_labelled`` and ``cell_positives`` (``cell``): a cell's rate is
            ``Beta(a + cell_positives, b + cell_labelled - cell_positives)`` a posteriori.
            Attributes ``n_items``, ``n_labelled``.
        """
        preds = check_predictions(predictions, 2)
        n_items, K = preds.shape
        positions, classes = check_labelled(labelled, labels, n_items, 2)
        names = system_names(systems, K)
        measure_list = [check_measure(m, 2) for m in measures]
        draws = self.draws_for(preds, rng)
        draws.tell(positions, classes)
        return draws.to_datatree(measure_list, names)


class PatternDraws:
    """Posterior draws of a :class:`PredictionPatterns` model, updated as labels arrive.

    Every cell keeps one uniform per draw for good, and its positives are the beta-binomial's
    inverse distribution at those uniforms (:func:`bayeval._core.pattern_cells.
    positives_from_uniforms`), so a label changes only its own cell's draws: each system's
    true positives are updated by that cell alone, and a label costs ``draws x K`` operations
    rather than ``draws x cells x K``. The weight of the vote is drawn the same way: each draw
    keeps a uniform and takes the weight at which the weights' posterior distribution passes
    it, so a label redraws every cell only in the draws whose weight it moves. The draws are
    kept (the rows of the arrays below) in the order of their weight's uniforms, so those a
    label moves are a few runs of rows, redrawn in place; :meth:`to_datatree` shows them in the
    random order in which those uniforms were drawn.

    Attributes
    ----------
    patterns : numpy.ndarray
        ``(n_cells, K)`` each cell's predictions.
    cell : numpy.ndarray
        ``(n_items,)`` each item's cell.
    sizes, labelled, ones : numpy.ndarray
        ``(n_cells,)`` items, labelled items and labelled positives per cell.
    positives : numpy.ndarray
        ``(draws, n_cells)`` each cell's positives in all, per draw.
    unlabelled_rate : numpy.ndarray
        ``(draws, n_cells)`` the share of positives among each cell's unlabelled items (0 where
        none is left): the probability, given a draw, that one more item of the cell is positive.
    unlabelled_rate_mean : numpy.ndarray
        ``(n_cells,)`` its mean over the draws.
    vote : numpy.ndarray
        ``(n_cells,)`` the share of systems that predict 1 on each cell.
    weight : numpy.ndarray
        ``(draws,)`` each draw's weight ``w`` of the vote (all alike when the model fixes it).
    weight_probabilities : numpy.ndarray or None
        The posterior probability of each weight of
        :data:`~bayeval._core.pattern_cells.VOTE_GRID` (None when the model fixes the weight).
    """

    def __init__(
        self,
        model: PredictionPatterns,
        predictions: np.ndarray,
        rng: np.random.Generator,
        groups: np.ndarray | None = None,
    ):
        self.prior, self.vote_rule = model.prior, model.vote
        if groups is None:
            self.patterns, self.cell = kernel.pattern_cells(predictions)
        else:  # the group is one more column of the pattern, dropped from the systems after
            keyed = np.column_stack([predictions, groups])
            patterns, self.cell = kernel.pattern_cells(keyed)
            self.patterns = patterns[:, :-1]
        n_cells, n_draws = self.patterns.shape[0], model.draws
        self.sizes = np.bincount(self.cell, minlength=n_cells)
        self.labelled = np.zeros(n_cells, dtype=np.int64)
        self.ones = np.zeros(n_cells, dtype=np.int64)
        self._uniforms = rng.random((n_draws, n_cells), dtype=np.float32)
        # the draws are kept in the order of their weight's uniform, so the draws of one weight,
        # and those a label moves to another, are runs of rows (views, not copies);
        # to_datatree shows them in the order the uniforms were drawn, a random one
        weight_uniforms = rng.random(n_draws)
        order = np.argsort(weight_uniforms)
        self._weight_uniforms = weight_uniforms[order]
        self._shown = np.argsort(order)  # draw i as shown is kept as row _shown[i]
        # float32 keeps the counts exact (integers below 2**24) at half the cost of float64
        self._said_one = self.patterns.astype(np.float32)
        self.vote = self.patterns.mean(axis=1, dtype=float)  # the share of systems that say 1
        if model.vote == "learned":
            self.weight_probabilities = kernel.vote_weight_probabilities(
                self.prior, self.vote, self.labelled, self.ones
            )
            self.weight = self._weights_at_uniforms()
        else:
            self.weight_probabilities = None
            self.weight = np.full(n_draws, float(model.vote))
        self._predicted = self.sizes @ self._said_one.astype(float)
        self.positives = np.zeros((n_draws, n_cells), dtype=np.int32)
        # kept up to date cell by cell: the pool's positives and each system's true positives
        # per draw, and the share of positives among each cell's unlabelled items
        self._total = np.zeros(n_draws)
        self._true_positives = np.zeros((n_draws, self.patterns.shape[1]))
        self.unlabelled_rate = np.zeros((n_draws, n_cells), dtype=np.float32)
        self.unlabelled_rate_mean = np.zeros(n_cells)
        self._redraw_runs(np.ones(n_draws, dtype=bool))

    def tell(self, positions: np.ndarray, labels: np.ndarray) -> None:
        """Count the labels of items not labelled before (positions and 0/1 labels)."""
        cells = np.unique(self.cell[positions])
        np.add.at(self.labelled, self.cell[positions], 1)
        np.add.at(self.ones, self.cell[positions], np.asarray(labels, dtype=np.int64))
        moved = np.zeros(self.weight.size, dtype=bool)
        if self.vote_rule == "learned":
            self.weight_probabilities = kernel.vote_weight_probabilities(
                self.prior, self.vote, self.labelled, self.ones
            )
            weight = self._weights_at_uniforms()
            moved = weight != self.weight
            self.weight = weight
            self._redraw_runs(moved)  # these draws' priors moved in every cell
        unmoved = np.flatnonzero(~moved)
        for w in np.unique(self.weight[unmoved]):
            rows = unmoved[self.weight[unmoved] == w]
            self._redraw(np.ix_(rows, cells), rows, cells, w)

    def _weights_at_uniforms(self) -> np.ndarray:
        """Each draw's weight: the inverse of the weights' distribution at the draw's uniform."""
        cdf = np.cumsum(self.weight_probabilities)
        index = np.searchsorted(cdf, self._weight_uniforms * cdf[-1], side="right")
        return np.asarray(kernel.VOTE_GRID)[np.minimum(index, cdf.size - 1)]

    def _redraw_runs(self, moved: np.ndarray) -> None:
        """Redraw every cell of the draws ``moved`` (a mask), one run of rows at a time.

        A run has one weight: the rows' weights are sorted, so a run ends where the mask or the
        weight changes.
        """
        ends = np.flatnonzero(np.diff(moved) | (np.diff(self.weight) != 0)) + 1
        for start, stop in zip(np.r_[0, ends], np.r_[ends, moved.size], strict=True):
            if moved[start]:
                rows = slice(start, stop)
                self._redraw(rows, rows, slice(None), self.weight[start])

    def _redraw(self, block, rows, cells, w: float) -> None:
        """Redraw the positives of ``cells`` in the draws ``rows``, all of weight ``w``.

        ``block`` indexes both in a ``(draws, cells)`` array; the sums that follow from the
        positives (each system's true positives, the rates) are updated by the change.
        """
        vote, sizes, labelled, ones = (
            x[cells] for x in (self.vote, self.sizes, self.labelled, self.ones)
        )
        prior = (self.prior[0] + w * vote, self.prior[1] + w * (1 - vote))
        new = kernel.positives_from_uniforms(self._uniforms[block], prior, sizes, labelled, ones)
        change = new - self.positives[block]
        self._true_positives[rows] += change.astype(np.float32) @ self._said_one[cells]
        self._total[rows] += change.sum(axis=1)
        self.positives[block] = new
        # the share of positives among the unlabelled items; 0 where none is left (x / inf)
        left = np.where(sizes > labelled, sizes - labelled, np.inf).astype(np.float32)
        rate = (new - ones.astype(np.int32)).astype(np.float32) / left
        rate_change = (rate - self.unlabelled_rate[block]).sum(axis=0, dtype=float)
        self.unlabelled_rate_mean[cells] += rate_change / self.weight.size
        self.unlabelled_rate[block] = rate

    def confusion(self) -> np.ndarray:
        """Every system's confusion counts in each draw, ``(draws, K, 2, 2)``."""
        return kernel.confusion_from_true_positives(
            self._true_positives, self._total, self._predicted, self.cell.size
        )

    def to_datatree(self, measures: Sequence[Any], systems: Sequence[str]):
        """Return the draws of ``measures`` of every system as a DataTree (see ``posterior``)."""
        import xarray as xr

        counts = self.confusion()[self._shown]
        attrs = {"n_items": self.cell.size, "n_labelled": int(self.labelled.sum())}
        posterior = xr.Dataset(coords={"system": list(systems)}, attrs=attrs)
        posterior["vote_weight"] = (("chain", "draw"), self.weight[self._shown][None])
        with np.errstate(invalid="ignore", divide="ignore"):
            for m in measures:
                values = measure_from_counts(m, counts)[None]
                posterior[m.name] = (("chain", "draw", "system"), values)
        constant = xr.Dataset(
            {
                "pattern": (("cell", "system"), self.patterns),
                "cell_size": ("cell", self.sizes),
                "cell_labelled": ("cell", self.labelled),
                "cell_positives": ("cell", self.ones),
            },
            coords={"system": list(systems)},
        )
        return xr.DataTree.from_dict({"posterior": posterior, "constant_data": constant})
