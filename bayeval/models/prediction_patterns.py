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
    system_names,
)
from bayeval.models._vote_weighted_draws import VoteWeightedDraws

__all__ = ["PatternDraws", "PredictionPatterns"]


@dataclass(frozen=True, kw_only=True)
@validate_fields(
    prior=Pair(Positive()),
    vote=AnyOf(OneOf(("learned",)), Nonnegative()),
    draws=Integer(minimum=1),
    n_classes=Integer(minimum=2),
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
    n_classes : int, default 2
        Classes of the label space. With more than two, a cell has a class distribution
        ``pi_c ~ Dirichlet(a + w s_c)``, ``s_c`` the share of systems that predict each class
        on it, and ``prior`` must be ``(a, a)``; its unlabelled items' classes are
        Dirichlet-multinomial (:class:`~bayeval.models.ClassPatternDraws`). Its P(best) guides
        :class:`~bayeval.sampling.ModelSelection`, but a single system's measure is not honest
        with more than two classes (the best system's accuracy covered in none of 40 runs on
        each pool of the table in ``models/system_confusion/spec.md``); report it with
        ``SystemConfusion(n_classes=..., shared_errors=True)``.

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
    n_classes: int = 2

    def __post_init__(self):
        if self.n_classes > 2 and self.prior[0] != self.prior[1]:
            raise ValueError(
                f"`prior` must be (a, a), one concentration for every class, with n_classes="
                f"{self.n_classes}; got {self.prior!r}."
            )

    def draws_for(
        self, predictions: np.ndarray, rng: Any, groups: np.ndarray | None = None
    ) -> VoteWeightedDraws:
        """Return the prior draws over checked ``(n_items, K)`` predictions; tell it labels.

        A :class:`PatternDraws` for two classes, a :class:`~bayeval.models.ClassPatternDraws`
        for more. ``groups`` (one integer per item, such as the strata of a stratified sample)
        splits the cells further: a cell is then a pattern within a group.
        """
        from bayeval.models.class_pattern_draws import ClassPatternDraws

        kind = PatternDraws if self.n_classes == 2 else ClassPatternDraws
        return kind(self, predictions, check_rng(rng), groups)

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
        predictions : array_like of int, shape (n_items, n_systems)
            Each system's prediction of each item: 0 or 1, or a class ``0 .. n_classes - 1``.
        labelled : array_like of int
            Positions of the labelled items (distinct).
        labels : array_like of int
            Their labels (0/1 or classes), in the order of ``labelled``.
        measures : sequence of str or bayeval.measures.Measure, default ("accuracy",)
            Measures of a system's predictions; with more than two classes, names of
            ``bayeval._core.multiclass.SCALAR_MEASURES`` (accuracy, macro-F1, ...).
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
            ``Beta(a + w v_c + cell_positives, b + w (1 - v_c) + cell_labelled -
            cell_positives)`` a posteriori given the weight; with more classes
            ``cell_class_counts`` (``cell``, ``class``) in place of ``cell_positives``.
            Attributes ``n_items``, ``n_labelled``.
        """
        C = self.n_classes
        preds = check_predictions(predictions, C)
        n_items, K = preds.shape
        positions, classes = check_labelled(labelled, labels, n_items, C)
        names = system_names(systems, K)
        measure_list = [check_measure(m, C) for m in measures]
        draws = self.draws_for(preds, rng)
        draws.tell(positions, classes)
        return draws.to_datatree(measure_list, names)


class PatternDraws(VoteWeightedDraws):
    """Posterior draws of a two-class :class:`PredictionPatterns` model, updated as labels arrive.

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
    patterns, cell, sizes, labelled, weight, weight_probabilities
        See :class:`~bayeval.models._vote_weighted_draws.VoteWeightedDraws`.
    ones : numpy.ndarray
        ``(n_cells,)`` labelled positives per cell.
    positives : numpy.ndarray
        ``(draws, n_cells)`` each cell's positives in all, per draw.
    unlabelled_rate : numpy.ndarray
        ``(draws, n_cells)`` the share of positives among each cell's unlabelled items (0 where
        none is left): the probability, given a draw, that one more item of the cell is positive.
    unlabelled_rate_mean : numpy.ndarray
        ``(n_cells,)`` its mean over the draws.
    vote : numpy.ndarray
        ``(n_cells,)`` the share of systems that predict 1 on each cell.
    """

    def __init__(
        self,
        model: PredictionPatterns,
        predictions: np.ndarray,
        rng: np.random.Generator,
        groups: np.ndarray | None = None,
    ):
        self.prior, self.vote_rule = model.prior, model.vote
        self._cells(predictions, groups)
        n_cells, n_draws = self.patterns.shape[0], model.draws
        self.ones = np.zeros(n_cells, dtype=np.int64)
        self._uniforms = rng.random((n_draws, n_cells), dtype=np.float32)
        self._order_draws(rng, n_draws)
        # float32 keeps the counts exact (integers below 2**24) at half the cost of float64
        self._said_one = self.patterns.astype(np.float32)
        self.vote = self.patterns.mean(axis=1, dtype=float)  # the share of systems that say 1
        self._start_weights(n_draws)
        self._predicted = self.sizes @ self._said_one.astype(float)
        self.positives = np.zeros((n_draws, n_cells), dtype=np.int32)
        # kept up to date cell by cell: the pool's positives and each system's true positives
        # per draw, and the share of positives among each cell's unlabelled items
        self._total = np.zeros(n_draws)
        self._true_positives = np.zeros((n_draws, self.patterns.shape[1]))
        self.unlabelled_rate = np.zeros((n_draws, n_cells), dtype=np.float32)
        self.unlabelled_rate_mean = np.zeros(n_cells)
        self._start_prior_sums()
        self._redraw_runs(np.ones(n_draws, dtype=bool))

    def _start_prior_sums(self) -> None:
        """Sum, for every weight of the grid, each draw's positives over the cells before labels.

        Given a draw's uniforms and weight, a cell's positives change only with its own labels.
        So the draws a label moves to another weight take these sums (each system's true
        positives, the pool's positives) and correct them on the few labelled cells, in place
        of a product over every cell. A fixed weight moves no draw: nothing to keep.
        """
        self._prior_true_positives = self._prior_total = None
        if self.vote_rule != "learned":
            return
        n_draws, K = self._true_positives.shape
        self._prior_true_positives = np.empty((len(kernel.VOTE_GRID), n_draws, K))
        self._prior_total = np.empty((len(kernel.VOTE_GRID), n_draws))
        for g, w in enumerate(kernel.VOTE_GRID):  # no label is counted yet
            positives = self._positives(np.s_[:, :], slice(None), w)
            self._prior_true_positives[g] = positives.astype(np.float32) @ self._said_one
            self._prior_total[g] = positives.sum(axis=1)

    def _count(self, positions: np.ndarray, labels: np.ndarray) -> None:
        np.add.at(self.ones, self.cell[positions], labels)

    def _weight_probabilities(self) -> np.ndarray:
        return kernel.vote_weight_probabilities(self.prior, self.vote, self.labelled, self.ones)

    def _positives(self, block, cells, w: float, counts=None) -> np.ndarray:
        """Return the positives of ``cells`` in the draws of ``block``, at weight ``w``.

        ``counts``: the cells' labelled items and labelled positives, default those so far.
        """
        vote, sizes = self.vote[cells], self.sizes[cells]
        labelled, ones = (self.labelled[cells], self.ones[cells]) if counts is None else counts
        prior = (self.prior[0] + w * vote, self.prior[1] + w * (1 - vote))
        return kernel.positives_from_uniforms(self._uniforms[block], prior, sizes, labelled, ones)

    def _redraw(self, block, rows, cells, w: float) -> None:
        """Redraw the positives of ``cells`` in the draws ``rows``, all of weight ``w``.

        ``block`` indexes both in a ``(draws, cells)`` array; the sums that follow from the
        positives (each system's true positives, the rates) are updated by the change.
        """
        new = self._positives(block, cells, w)
        change = new - self.positives[block]
        self._true_positives[rows] += change.astype(np.float32) @ self._said_one[cells]
        self._total[rows] += change.sum(axis=1)
        self._keep(block, cells, new)

    def _redraw_rows(self, rows: slice, w: float) -> None:
        """Redraw every cell of the draws ``rows``: the sums before labels at ``w``, corrected."""
        if self._prior_total is None:
            return super()._redraw_rows(rows, w)
        new = self._positives(rows, slice(None), w)
        labelled = np.flatnonzero(self.labelled)
        none = np.zeros(labelled.size, dtype=np.int64)
        before = self._positives(np.s_[rows, labelled], labelled, w, counts=(none, none))
        change = new[:, labelled] - before  # what the labels changed in the labelled cells
        g = kernel.VOTE_GRID.index(w)
        self._true_positives[rows] = self._prior_true_positives[g, rows] + (
            change.astype(np.float32) @ self._said_one[labelled]
        )
        self._total[rows] = self._prior_total[g, rows] + change.sum(axis=1)
        self._keep(rows, slice(None), new)

    def _keep(self, block, cells, new: np.ndarray) -> None:
        """Store redrawn positives, and the share of positives among the unlabelled items."""
        self.positives[block] = new
        sizes, labelled, ones = (x[cells] for x in (self.sizes, self.labelled, self.ones))
        # a product by 1 / (items left) is cheaper than a division; 0 where none is left
        left = sizes - labelled
        per_item = np.divide(1.0, left, out=np.zeros(left.shape), where=left > 0)
        rate = (new - ones.astype(np.int32)).astype(np.float32) * per_item.astype(np.float32)
        rate_change = (rate - self.unlabelled_rate[block]).sum(axis=0, dtype=float)
        self.unlabelled_rate_mean[cells] += rate_change / self.weight.size
        self.unlabelled_rate[block] = rate

    def confusion(self) -> np.ndarray:
        """Every system's confusion counts in each draw, ``(draws, K, 2, 2)``."""
        return kernel.confusion_from_true_positives(
            self._true_positives, self._total, self._predicted, self.cell.size
        )

    def _cell_data(self) -> dict:
        return {"cell_positives": ("cell", self.ones)}
