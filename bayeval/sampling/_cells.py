"""Cells: the items of one stratum with one loss pattern, indexed for uniform draws."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayeval._constraints import AnyOf, Instance, OneOf
from bayeval.strata.partition import METHODS, Strata

__all__ = ["Cells", "score_cells"]

_CHUNK = 1 << 22


class Cells:
    """Group a pool's items by cell ``(stratum * n_levels + level) * n_patterns + pattern``.

    Memory: one cell id and one position per item (the positions sorted by cell), so an item
    can be drawn uniformly from any cell in ``O(1)``.

    Parameters
    ----------
    strata : numpy.ndarray of int, shape (n_items,)
        Stratum (leaf) of each item, ``0 .. n_strata - 1``.
    n_strata : int
    patterns : numpy.ndarray of int, shape (n_items,), optional
        Loss pattern of each item; ``None`` for one pattern.
    n_patterns : int, default 1
    levels : numpy.ndarray of int, shape (n_items,), optional
        A further split of each stratum (an automatic judge's level); ``None`` for none.
    n_levels : int, default 1
    """

    def __init__(
        self, strata, n_strata: int, patterns=None, n_patterns: int = 1, levels=None, n_levels=1
    ):
        self.n_strata, self.n_patterns = int(n_strata), int(n_patterns)
        self.n_levels = int(n_levels)
        self.n_cells = self.n_strata * self.n_levels * self.n_patterns
        n_items = strata.size
        cell_type = np.int16 if self.n_cells < 1 << 15 else np.int32
        cell = strata.astype(cell_type) * cell_type(n_levels)
        if levels is not None:
            cell += levels.astype(cell_type)
        cell *= cell_type(self.n_patterns)
        if patterns is not None:
            cell += patterns.astype(cell_type)
        self.cell_of = cell
        self.sizes = np.bincount(cell, minlength=self.n_cells).astype(np.int64)
        # a stable sort of small integers is a radix sort: O(n_items)
        order = np.argsort(cell, kind="stable")
        self.order = order.astype(np.int32) if n_items < 1 << 31 else order
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])
        self.stratum = np.arange(self.n_cells) // (self.n_levels * self.n_patterns)
        self.pattern = np.arange(self.n_cells) % self.n_patterns

    def draw(self, cells: np.ndarray, rng: np.random.Generator, exclude=None) -> np.ndarray:
        """Draw one item uniformly from each of ``cells``, avoiding the sorted ``exclude``.

        Excluded items are redrawn (rejection), so every cell must hold an item that is not
        excluded; the expected work is ``size / (size - excluded)`` draws per cell.
        """
        cells = np.asarray(cells, dtype=np.intp)
        out = np.empty(cells.size, dtype=np.int64)
        todo = np.arange(cells.size)
        while todo.size:
            c = cells[todo]
            offset = np.floor(rng.random(todo.size) * self.sizes[c]).astype(np.int64)
            pos = self.order[self.starts[c] + offset].astype(np.int64)
            out[todo] = pos
            if exclude is None or len(exclude) == 0:
                break
            todo = todo[contains(exclude, pos)]
        return out


def contains(sorted_values: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Whether each ``query`` is in the sorted array ``sorted_values``."""
    at = np.searchsorted(sorted_values, query)
    at = np.minimum(at, sorted_values.size - 1)
    return sorted_values[at] == query


#: ``strata`` of the samplers that cut the pool by score: ready-made strata (that they cut this
#: pool is checked by :func:`score_cells`, against the pool) or a method of
#: :func:`bayeval.strata.stratify`.
STRATA = AnyOf(Instance(Strata, "a bayeval.strata.Strata"), OneOf(METHODS))


def score_cells(target, strata: Any, n_strata: int, *, system: int = 0, levels=None):
    """Cells of a pool (strata by score x loss pattern) and each cell's mean prior response.

    Parameters
    ----------
    target : Target
        The pool and measure whose items and loss patterns the cells split.
    strata : str or bayeval.strata.Strata
        A stratification method (``"csf"``, ``"geometric"``, ``"equal-width"``,
        ``"quantile"``) applied to system ``system``'s scores, or ready-made strata.
    n_strata : int
        Strata wanted when ``strata`` is a method.
    system : int, default 0
        The system whose scores are stratified and give the prior response.
    levels : tuple of (numpy.ndarray, int), optional
        Each item's level and the number of levels, a further split of every stratum (the
        automatic judge's level, so that cells never mix what the judge said).

    Returns
    -------
    strata : Strata
    cells : Cells
    prior : numpy.ndarray
        ``(n_cells,)`` mean of ``P(y = 1 | x)`` read from the scores (see
        :meth:`Target.prior_positive`), 0.5 in empty cells.
    """
    pool = target.pool
    if isinstance(strata, Strata):
        if strata.n_items != pool.size:
            raise ValueError(
                f"`strata` must stratify the pool's {pool.size} items; it has {strata.n_items}."
            )
        found = strata
    else:
        found = pool.stratify(n_strata, strata, system=system if pool.n_systems > 1 else None)
    n_patterns = 1 if target.table is None else target.table.shape[0]
    level, n_levels = (None, 1) if levels is None else levels
    cells = Cells(found.ids, found.n_strata, target.patterns, n_patterns, level, n_levels)
    sums = np.zeros(cells.n_cells)
    for start in range(0, pool.size, _CHUNK):
        stop = min(start + _CHUNK, pool.size)
        prior = target.prior_positive(slice(start, stop), system)
        sums += np.bincount(cells.cell_of[start:stop], weights=prior, minlength=cells.n_cells)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(cells.sizes > 0, sums / np.maximum(cells.sizes, 1), 0.5)
    return found, cells, mean
