"""AIS for a stochastic oracle: every draw is labelled afresh (Marchant & Rubinstein 2021)."""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any

import numpy as np

from bayeval._constraints import Integer, Optional, validate
from bayeval._core.dirichlet_tree import dirichlet_tree_predictive
from bayeval.sampling._proposal import model_R, pattern_norms
from bayeval.sampling.ais import AIS

__all__ = ["StochasticAIS"]


class StochasticAIS(AIS):
    """Adaptive importance sampling when the oracle's label of an item is random.

    Annotators disagree, or a label is a judgement that could go either way: the oracle
    answers ``y ~ p(y | x)`` afresh each time it is asked, and the measure is
    ``G = g(R)`` with ``R = E_x E_{y ~ p(y | x)}[loss(x, y)]``. Every draw is therefore a
    question, including draws of items labelled before: :meth:`ask` returns the ``n`` draws
    (ids may repeat) and :meth:`tell` takes one label per draw; the budget counts labels.

    The oracle model is the Dirichlet tree of :class:`AIS` updated with importance-weighted
    counts (Appendix H, Eq. 15 with weights ``w = p / q``, which removes the bias of the
    adaptive sample), and the response is its closed-form posterior predictive (Eq. 14). The
    proposal is Proposition 4's for a stochastic oracle,
    ``q_t(x) ∝ p(x) sqrt(sum_y max(||J loss(x, y)||^2, eps_t 1{loss != 0}) p_t(y | x))``, with
    ``J`` at the model's mean loss and ``eps_t = epsilon0 / (t + 1)`` (Proposition 6), mixed
    with the static proposal (``anchor``) and the uniform distribution (``defensive``) as in
    :class:`AIS`.

    Parameters
    ----------
    pool, measure, model, strata, epsilon0, anchor, defensive, batch_size, rng
        As in :class:`AIS`.

    Notes
    -----
    The estimate is Eq. 1 over every draw with its own label. Its ``posterior`` comes from
    :class:`bayeval.models.ScoreCalibration` with every draw's label one Bernoulli observation
    of the oracle's response and the measure ``g`` of the expected loss under the learned
    curve for every item (``finite=False``): the Dirichlet tree's weighted counts are a
    consistent estimate, not a likelihood, so they give no posterior. A stage is complete
    when every draw asked for is told.

    Examples
    --------
    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.beta(1, 6, 5_000)
    >>> def oracle(ids):        # a noisy judge: positive with probability = the score
    ...     return rng.random(len(ids)) < scores[ids]
    >>> sampler = be.sampling.StochasticAIS(be.Pool(scores), be.measures.Precision(), rng=1)
    >>> for _ in range(8):
    ...     ids = sampler.ask(50)
    ...     sampler.tell(ids, oracle(ids))
    >>> est = sampler.estimate()
    >>> est.labels_used, est.value.round(3)
    (400, array([0.574]))
    >>> scores[scores >= 0.5].mean().round(3)     # the truth: mean P(y = 1 | predicted positive)
    np.float64(0.589)
    """

    method = "stochastic_ais"

    def __init__(self, pool: Any, measure: Any, **options: Any):
        inapplicable = {"response", "sweeps", "posterior_draws", "posterior_thin", "calibration"}
        unused = sorted(inapplicable & set(options))
        if unused:
            raise ValueError(
                f"{unused} do not apply to StochasticAIS: its response is the closed-form "
                "posterior predictive (Eq. 14), and its posterior of the measure comes from "
                "estimate(model=bayeval.models.ScoreCalibration(...))."
            )
        self._weighted = None  # importance-weighted labels per leaf, set on first _adapt
        super().__init__(pool, measure, **options)
        self._waiting: dict[int, deque[int]] = defaultdict(deque)  # position -> draw indices
        self._draw_y: list[int] = []  # the label of every draw, -1 until told
        self._n_waiting = 0

    # -- the protocol: one label per draw ----------------------------------------------------------
    @property
    def labels_used(self) -> int:
        """Labels told so far (one per draw)."""
        return sum(1 for y in self._draw_y if y >= 0)

    @property
    def pending(self) -> np.ndarray:
        """Ids of draws asked for and not yet told, in the order drawn (once per draw)."""
        waiting = sorted((draw, p) for p, queue in self._waiting.items() for draw in queue)
        return self._ids(np.array([p for _, p in waiting], dtype=np.int64))

    @validate(n=Optional(Integer(minimum=1)))
    def ask(self, n: int | None = None) -> np.ndarray:
        """Draw ``n`` items from the current proposal; each draw needs its own label.

        Parameters
        ----------
        n : int, optional
            Draws wanted; default ``batch_size``. Ids may repeat.

        Returns
        -------
        numpy.ndarray
            Pool ids, in the order drawn.
        """
        n = self.batch_size if n is None else n
        positions, q = self._draw(n)
        start = len(self._draw_y)
        for i, p in enumerate(positions):
            self._waiting[int(p)].append(start + i)
        self._draw_pos.append(positions)
        self._draw_q.append(q)
        self._draw_y.extend([-1] * n)
        self._n_waiting += n
        return self._ids(positions)

    def tell(self, ids: Any, labels: Any) -> None:
        """Record one label per draw of ``ids`` (in any order; repeated ids for repeated draws).

        Raises
        ------
        ValueError
            For unknown ids, ids told more often than they were drawn and not yet told,
            labels outside ``{0, 1}``, or lengths that differ. Nothing is recorded then.
        """
        positions, values = self.told(ids, labels)
        told, counts = np.unique(positions, return_counts=True)
        for p, c in zip(told, counts, strict=True):
            waiting = len(self._waiting.get(int(p), ()))
            if c > waiting:
                raise ValueError(
                    f"`ids` must be draws returned by ask() and not yet told; id "
                    f"{self._ids(p)!r} is told {c} time(s) but has {waiting} draw(s) waiting."
                )
        for p, y in zip(positions, values, strict=True):
            queue = self._waiting[int(p)]
            self._draw_y[queue.popleft()] = int(y)
            if not queue:
                del self._waiting[int(p)]
            self._labels[int(p)] = int(y)  # the latest label of each item
        self._n_waiting -= positions.size
        if self._n_waiting == 0:
            self.stage += 1
            self._update()

    def with_labels(self, ids: Any, labels: Any) -> StochasticAIS:
        """Refuse: every label here is one draw of a stochastic oracle, never a correction."""
        raise ValueError(
            "StochasticAIS models every answer as a draw of a stochastic oracle: a second "
            "judgement of an item is another draw (ask for it again), not a re-label."
        )

    def _available(self) -> int:
        return np.iinfo(np.int64).max  # draws with replacement, each a new question

    def _label_array(self, positions: np.ndarray) -> np.ndarray:
        """Return the latest label of each item at ``positions``."""
        return np.fromiter((self._labels[int(p)] for p in positions), np.int8, positions.size)

    def _draw_labels(self, positions: np.ndarray) -> np.ndarray:
        return np.asarray(self._draw_y[: positions.size], dtype=np.int8)

    def _labels_behind(self, positions: np.ndarray) -> int:
        return positions.size  # every draw was a question

    # -- the model and the proposal ------------------------------------------------------------

    def _adapt(self) -> None:
        cells = self.cells
        if self._weighted is None:
            self._weighted = np.zeros((cells.n_strata, 2))
        else:
            # Eq. 15 with the bias correction: the new draws' labels weighted by w = p / q
            pos, q = self._draws()
            new = slice(self._counted, pos.size)
            y = np.asarray(self._draw_y[new], dtype=np.intp)
            leaf = self.strata.ids[pos[new]].astype(np.intp)
            np.add.at(self._weighted, (leaf, y), 1.0 / (self.pool.size * q[new]))
        self._counted = self._draws()[0].size
        tree = self.model.tree
        response = dirichlet_tree_predictive(
            tree.parent, tree.leaf_nodes, self._weighted, self.model.alpha, self.model.beta
        )
        self._pi = response[:, 1]
        positive = self._pi[cells.stratum]
        table = self.target.table
        no_labels = np.zeros((cells.n_cells, 2))
        R = model_R(table, cells.pattern, cells.sizes, positive, no_labels, self.pool.size)
        self.epsilon = self.epsilon0 / (self.stage + 1)
        sq = pattern_norms(table, self.target.jacobian(R), self.epsilon, squared=True)
        f = sq[cells.pattern]
        self._v_unl = np.sqrt((1 - positive) * f[:, 0] + positive * f[:, 1])
        self._mass = cells.sizes * self._v_unl
        self._Z = self._mass.sum()

    def _item_weight(self, positions: np.ndarray) -> np.ndarray:
        return self._v_unl[self.cells.cell_of[positions]]

    def _draw(self, k):
        rng, cells = self._rng, self.cells
        u = rng.random(k)  # which part of the mixture each draw comes from
        uniform = u < self.defensive
        anchored = ~uniform & (u < self.defensive + self.anchor)
        model = ~(uniform | anchored)
        positions = np.empty(k, dtype=np.int64)
        positions[uniform] = rng.integers(0, self.pool.size, size=int(uniform.sum()))
        c = rng.choice(cells.n_cells, size=int(anchored.sum()), p=self._anchor_p)
        positions[anchored] = cells.draw(c, rng)
        c = rng.choice(cells.n_cells, size=int(model.sum()), p=self._mass / self._Z)
        positions[model] = cells.draw(c, rng)
        cell = cells.cell_of[positions]
        return positions, self._q(self._v_unl[cell], cell)

    def _probability(self, positions, labels):
        cell = self.cells.cell_of[positions]
        return self._q(self._v_unl[cell], cell)

    def kl_to_optimal(self, labels: Any) -> float:
        """Not defined for a stochastic oracle (the optimal proposal needs ``p(y | x)``)."""
        raise ValueError(
            "kl_to_optimal() compares with the optimal proposal of a deterministic oracle; a "
            "StochasticAIS run has none."
        )

    def _check_model(self, model):
        if isinstance(model, str):
            raise ValueError(
                f"`model` {model!r} does not apply to StochasticAIS: its Dirichlet tree is fitted "
                "to importance-weighted counts, which are no likelihood. Use a "
                "bayeval.models.ScoreCalibration."
            )
        return super()._check_model(model)

    def _posterior_factory(self, target, model):
        # Every draw is one Bernoulli observation of the oracle's response, and the measure is
        # g of the expected loss under the response curve for every item (finite=False).
        model = self._check_model(model)
        if target.table is None:
            return None
        bound = self._bound_model(model, target)
        positions, _ = self._draws()
        labels = self._draw_labels(positions)
        seed = self._posterior_seed()
        return lambda: bound.fit(positions, labels, rng=seed, finite=False)
