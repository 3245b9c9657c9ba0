"""What the draws of :class:`~bayeval.models.PredictionPatterns` share, for two classes or more.

Items on which every system predicts alike form a cell; each draw keeps one uniform per cell
(or a few, with more classes) for good and one for the weight of the systems' vote, so a label
redraws its own cell, and every cell only in the draws whose weight it moves. The subclasses
(:class:`~bayeval.models.PatternDraws`, two classes; :class:`~bayeval.models.ClassPatternDraws`,
more) say how a cell's labels are counted and its items drawn.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from bayeval._core import pattern_cells as kernel
from bayeval.models._systems import measure_from_counts

__all__ = ["VoteWeightedDraws"]


class VoteWeightedDraws(ABC):
    """Cells, the labels' counts and the weight of the vote, shared by the pattern models' draws.

    A subclass sets ``self.vote_rule`` and ``self.prior`` and calls :meth:`_cells`, draws its
    uniforms, then :meth:`_order_draws`, sets its counts and the vote, and calls
    :meth:`_start_weights`; it defines :meth:`_count`, :meth:`_weight_probabilities`,
    :meth:`_redraw`, :meth:`confusion` and :meth:`_cell_data`; it may redefine
    :meth:`_redraw_rows`, the redraw of every cell in the draws a label moves to another weight.

    Attributes
    ----------
    patterns : numpy.ndarray
        ``(n_cells, K)`` each cell's predictions.
    cell : numpy.ndarray
        ``(n_items,)`` each item's cell.
    sizes, labelled : numpy.ndarray
        ``(n_cells,)`` items and labelled items per cell.
    weight : numpy.ndarray
        ``(draws,)`` each draw's weight ``w`` of the vote (all alike when the model fixes it).
    weight_probabilities : numpy.ndarray or None
        The posterior probability of each weight of
        :data:`~bayeval._core.pattern_cells.VOTE_GRID` (None when the model fixes the weight).
    """

    vote_rule: Any
    weight: np.ndarray
    weight_probabilities: np.ndarray | None

    def _cells(self, predictions: np.ndarray, groups: np.ndarray | None) -> None:
        """Find the cells (patterns, within ``groups`` if given); no label counted yet."""
        if groups is None:
            self.patterns, self.cell = kernel.pattern_cells(predictions)
        else:  # the group is one more column of the pattern, dropped from the systems after
            keyed = np.column_stack([predictions, groups])
            patterns, self.cell = kernel.pattern_cells(keyed)
            self.patterns = patterns[:, :-1]
        self.sizes = np.bincount(self.cell, minlength=self.patterns.shape[0])
        self.labelled = np.zeros(self.patterns.shape[0], dtype=np.int64)

    def _order_draws(self, rng: np.random.Generator, n_draws: int) -> None:
        """Draw each draw's uniform of the weight, and keep the draws sorted by it.

        The draws of one weight, and those a label moves to another, are then runs of rows
        (views, not copies); :meth:`to_datatree` shows them in the order the uniforms were
        drawn, a random one.
        """
        weight_uniforms = rng.random(n_draws)
        order = np.argsort(weight_uniforms)
        self._weight_uniforms = weight_uniforms[order]
        self._shown = np.argsort(order)  # draw i as shown is kept as row _shown[i]

    def _start_weights(self, n_draws: int) -> None:
        if self.vote_rule == "learned":
            self.weight_probabilities = self._weight_probabilities()
            self.weight = self._weights_at_uniforms()
        else:
            self.weight_probabilities = None
            self.weight = np.full(n_draws, float(self.vote_rule))

    def tell(self, positions: np.ndarray, labels: np.ndarray) -> None:
        """Count the labels of items not labelled before (positions and their classes)."""
        cells = np.unique(self.cell[positions])
        np.add.at(self.labelled, self.cell[positions], 1)
        self._count(positions, np.asarray(labels, dtype=np.int64))
        moved = np.zeros(self.weight.size, dtype=bool)
        if self.vote_rule == "learned":
            self.weight_probabilities = self._weight_probabilities()
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
                self._redraw_rows(slice(start, stop), self.weight[start])

    def _redraw_rows(self, rows: slice, w: float) -> None:
        """Redraw every cell of the draws ``rows`` (a run of rows), all of weight ``w``."""
        self._redraw(rows, rows, slice(None), w)

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
                **self._cell_data(),
            },
            coords={"system": list(systems)},
        )
        return xr.DataTree.from_dict({"posterior": posterior, "constant_data": constant})

    # -- what a subclass defines ---------------------------------------------------------------
    @abstractmethod
    def _count(self, positions: np.ndarray, labels: np.ndarray) -> None:
        """Count the new labels into the cells' labelled counts (``labelled`` is done)."""

    @abstractmethod
    def _weight_probabilities(self) -> np.ndarray:
        """Return the posterior probability of each weight of the vote, given the labels."""

    @abstractmethod
    def _redraw(self, block, rows, cells, w: float) -> None:
        """Redraw ``cells`` in the draws ``rows`` (``block`` indexes both), all of weight ``w``."""

    @abstractmethod
    def confusion(self) -> np.ndarray:
        """Return every system's confusion counts in each draw, ``(draws, K, C, C)``."""

    @abstractmethod
    def _cell_data(self) -> dict:
        """Return the labels' counts per cell, as ``constant_data`` variables."""
