"""Posterior draws of :class:`~bayeval.models.PredictionPatterns` with three classes or more.

Cell ``c`` (a distinct row of the ``K`` systems' predicted classes) has a class distribution
``pi_c ~ Dirichlet(a + w s_c)``, ``s_c`` the share of systems that predict each class on it.
Given the labels, its unlabelled items hold Dirichlet-multinomial counts of each class, and
every system's confusion counts follow: a cell's items of true class ``t`` are, for system
``k``, items of class ``t`` predicted ``pattern[c, k]``.
"""

from __future__ import annotations

import numpy as np

from bayeval._core import pattern_cells as kernel
from bayeval.models._vote_weighted_draws import VoteWeightedDraws

__all__ = ["ClassPatternDraws"]


class ClassPatternDraws(VoteWeightedDraws):
    """Posterior draws of a :class:`PredictionPatterns` model of ``C`` classes, label by label.

    The two-class :class:`~bayeval.models.PatternDraws` with its rate of positives replaced by
    a class distribution: each cell keeps ``C - 1`` uniforms per draw for good, and its
    unlabelled items' classes are broken off one class at a time at those uniforms
    (:func:`bayeval._core.pattern_cells.class_counts_from_uniforms`), so a label redraws its
    own cell, and every cell only in the draws whose weight of the vote it moves.

    Attributes
    ----------
    patterns, cell, sizes, labelled, weight, weight_probabilities
        See :class:`~bayeval.models._vote_weighted_draws.VoteWeightedDraws`.
    class_counts : numpy.ndarray
        ``(n_cells, C)`` labelled items of each class per cell.
    counts : numpy.ndarray
        ``(draws, n_cells, C)`` each cell's items of each class in all, per draw.
    unlabelled_rate : numpy.ndarray
        ``(draws, n_cells, C)`` the share of each class among a cell's unlabelled items (0
        where none is left): the probability, given a draw, that one more item is of the class.
    unlabelled_rate_mean : numpy.ndarray
        ``(n_cells, C)`` its mean over the draws.
    vote : numpy.ndarray
        ``(n_cells, C)`` the share of systems that predict each class on each cell.

    Examples
    --------
    Three systems, three classes; the first system is right on every item, so once every cell
    has all its items labelled its accuracy is known:

    >>> import numpy as np
    >>> from bayeval.models import PredictionPatterns
    >>> truth = np.array([0, 1, 2, 2, 1, 0])
    >>> predictions = np.stack([truth, [0, 1, 1, 2, 1, 1], [1, 1, 2, 0, 0, 0]], axis=1)
    >>> draws = PredictionPatterns(n_classes=3).draws_for(predictions, rng=0)
    >>> draws.tell(np.arange(6), truth)
    >>> correct = np.einsum("dkcc->dk", draws.confusion())
    >>> correct.min(axis=0).tolist(), correct.max(axis=0).tolist()
    ([6.0, 4.0, 3.0], [6.0, 4.0, 3.0])
    """

    def __init__(self, model, predictions: np.ndarray, rng: np.random.Generator, groups=None):
        n_classes, n_draws = model.n_classes, model.draws
        self.prior, self.vote_rule = np.full(n_classes, float(model.prior[0])), model.vote
        self._cells(predictions, groups)
        n_cells, n_systems = self.patterns.shape
        self.class_counts = np.zeros((n_cells, n_classes), dtype=np.int64)
        self._uniforms = rng.random((n_draws, n_cells, n_classes - 1), dtype=np.float32)
        self._order_draws(rng, n_draws)
        said = self.patterns[..., None] == np.arange(n_classes)  # (cells, K, C): k says class
        self.vote = said.mean(axis=1)
        # the cells' predictions one-hot, (cells, K * C): a cell's items of true class t add to
        # confusion[k, t, j] where system k predicts j on it (float32: counts exact below 2**24)
        self._said = said.reshape(n_cells, n_systems * n_classes).astype(np.float32)
        self._start_weights(n_draws)
        self.counts = np.zeros((n_draws, n_cells, n_classes), dtype=np.int32)
        self._confusion = np.zeros((n_draws, n_systems, n_classes, n_classes), dtype=np.float32)
        self.unlabelled_rate = np.zeros((n_draws, n_cells, n_classes), dtype=np.float32)
        self.unlabelled_rate_mean = np.zeros((n_cells, n_classes))
        self._redraw_runs(np.ones(n_draws, dtype=bool))

    def _count(self, positions: np.ndarray, labels: np.ndarray) -> None:
        np.add.at(self.class_counts, (self.cell[positions], labels), 1)

    def _weight_probabilities(self) -> np.ndarray:
        return kernel.class_vote_weight_probabilities(self.prior, self.vote, self.class_counts)

    def _redraw(self, block, rows, cells, w: float) -> None:
        """Redraw the classes of ``cells``' unlabelled items in the draws ``rows``, of weight ``w``.

        ``block`` indexes both in a ``(draws, cells)`` array; the confusion counts and the
        rates that follow from the counts are updated by the change.
        """
        known, sizes, labelled = self.class_counts[cells], self.sizes[cells], self.labelled[cells]
        alpha = self.prior + w * self.vote[cells] + known
        drawn = kernel.class_counts_from_uniforms(self._uniforms[block], alpha, sizes - labelled)
        new = drawn + known.astype(np.int32)
        change = (new - self.counts[block]).astype(np.float32)  # (rows, cells, C)
        n_rows, n_classes = change.shape[0], change.shape[2]
        # sum over the cells of change[r, ., t] times the cell's one-hot predictions
        added = np.swapaxes(change, 1, 2) @ self._said[cells]  # (rows, C true, K * C predicted)
        added = added.reshape(n_rows, n_classes, -1, n_classes).transpose(0, 2, 1, 3)
        self._confusion[rows] += added
        self.counts[block] = new
        left = np.where(sizes > labelled, sizes - labelled, np.inf).astype(np.float32)
        rate = drawn.astype(np.float32) / left[:, None]  # 0 where no item is left (x / inf)
        rate_change = (rate - self.unlabelled_rate[block]).sum(axis=0, dtype=float)
        self.unlabelled_rate_mean[cells] += rate_change / self.weight.size
        self.unlabelled_rate[block] = rate

    def confusion(self) -> np.ndarray:
        """Return every system's confusion counts in each draw, ``(draws, K, C, C)``.

        ``[d, k, t, j]``: items of true class ``t`` that system ``k`` predicts ``j``.
        """
        return self._confusion.astype(float)

    def _cell_data(self) -> dict:
        return {"cell_class_counts": (("cell", "class"), self.class_counts)}
