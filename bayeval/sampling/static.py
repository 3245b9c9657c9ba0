"""Static importance sampling with the proposal of Proposition 4 built from the scores."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayeval._constraints import Integer, Positive, Seed, validate
from bayeval.measures.target import NEEDS_FINITE_LOSSES
from bayeval.sampling._cells import STRATA, score_cells
from bayeval.sampling._proposal import cell_weights, model_R, pattern_norms
from bayeval.sampling.base import ImportanceSampler

__all__ = ["CellIS", "StaticIS", "score_weights"]


class CellIS(ImportanceSampler):
    """Importance samplers whose proposal gives every item of a cell the same probability.

    Subclasses set ``self.cells`` and call :meth:`_set_proposal`; a draw picks a cell by its
    mass, then an item uniformly within it (labelled items included: a re-draw costs nothing).
    """

    def _set_proposal(self, weight: np.ndarray) -> None:
        """Make the proposal of an item proportional to its cell's ``weight``."""
        mass = weight * self.cells.sizes
        self._item_q = weight / mass.sum()  # probability of one item of each cell
        self._cell_p = mass / mass.sum()

    def _available(self) -> int:
        drawable = self._item_q[self.cells.cell_of[self._taken()]] > 0
        return int(self.cells.sizes[self._item_q > 0].sum() - drawable.sum())

    def _draw(self, k):
        c = self._rng.choice(self.cells.n_cells, size=k, p=self._cell_p)
        return self.cells.draw(c, self._rng), self._item_q[c]

    def _probability(self, positions, labels):
        return self._item_q[self.cells.cell_of[positions]]


class StaticIS(CellIS):
    """Importance sampling from one proposal, computed from the classifier scores (Remark 4).

    The proposal is Proposition 4's for a deterministic oracle, with the scores read as the
    oracle response: an item of cell ``c`` (a score stratum and loss pattern) has weight
    ``sum_y s(y | c) max(||J loss(c, y)||, epsilon0 1{loss != 0})``, where ``s(1 | c)`` is
    the mean score of the cell (the logistic of scores outside [0, 1]) and ``J`` is the
    Jacobian of ``g`` at the mean loss those scores predict. It is never updated.

    Parameters
    ----------
    pool, measure, batch_size, rng
        See :class:`bayeval.sampling.Sampler`.
    strata : str or bayeval.strata.Strata, default "csf"
        How the scores are cut into strata (the cells average scores within a stratum).
    n_strata : int, default 256
    epsilon0 : float, default 1e-3
        Floor of the weight of items whose loss is not zero, so every item that matters can
        be drawn (the support condition of Theorem 1).

    References
    ----------
    .. [1] N. G. Marchant and B. I. P. Rubinstein. Needle in a haystack: label-efficient
       evaluation under extreme class imbalance. KDD 2021.

    Examples
    --------
    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(20_000) < 0.01
    >>> scores = np.where(truth, rng.beta(6, 2, truth.size), rng.beta(1, 12, truth.size))
    >>> f1 = be.measures.FScore()
    >>> sampler = be.sampling.StaticIS(be.Pool(scores), f1, rng=0)
    >>> for _ in range(10):
    ...     ids = sampler.ask(50)
    ...     sampler.tell(ids, truth[ids])
    >>> est = sampler.estimate()
    >>> round(float(est.estimate.sel(measure="f1")), 3)        # design-based
    0.932
    >>> est.interval(0.95).values.round(3)
    array([[0.834, 0.974]])
    >>> post = est.estimate_of("posterior")      # posterior median and interval, to 0.01
    >>> ci = est.interval(0.95, basis="posterior")
    >>> [float(post[0]), *ci.values[0].tolist()]
    [0.94, 0.86, 0.97]
    >>> f1.value(truth, predictions=scores >= 0.5).round(3)      # the truth
    array([0.935])
    """

    method = "static_is"

    @validate(
        strata=STRATA,
        n_strata=Integer(minimum=1),
        epsilon0=Positive(),
        batch_size=Integer(minimum=1),
        rng=Seed(),
    )
    def __init__(
        self,
        pool: Any,
        measure: Any,
        *,
        strata: Any = "csf",
        n_strata: int = 256,
        epsilon0: float = 1e-3,
        batch_size: int = 50,
        rng: Any = None,
    ):
        super().__init__(pool, measure, batch_size=batch_size, rng=rng)
        if self.target.table is None:
            raise ValueError(NEEDS_FINITE_LOSSES.format(name=type(self).__name__, measure=measure))
        self.epsilon0 = epsilon0
        self.strata, self.cells, self.prior = score_cells(self.target, strata, n_strata)
        self._set_proposal(score_weights(self.target, self.cells, self.prior, self.epsilon0))


def score_weights(target, cells, prior: np.ndarray, epsilon0: float) -> np.ndarray:
    """Weigh an item of each cell by Proposition 4 with the scores as the oracle response."""
    table = target.table
    no_labels = np.zeros((cells.n_cells, 2))
    R0 = model_R(table, cells.pattern, cells.sizes, prior, no_labels, target.pool.size)
    norms = pattern_norms(table, target.jacobian(R0), epsilon0)
    return cell_weights(norms, cells.pattern, prior)
