"""Adaptive importance sampling with a Dirichlet-tree oracle model (Marchant & Rubinstein 2021)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from bayeval._constraints import (
    Instance,
    Integer,
    OneOf,
    Optional,
    Positive,
    Seed,
    Share,
    validate,
)
from bayeval._validation import check_rng
from bayeval.measures.layout import measure_variables
from bayeval.measures.target import NEEDS_FINITE_LOSSES
from bayeval.models.dirichlet_tree import DirichletTree
from bayeval.models.score_calibration import ScoreCalibration
from bayeval.sampling._cells import STRATA, contains, score_cells
from bayeval.sampling._proposal import cell_weights, model_R, pattern_norms
from bayeval.sampling.base import ImportanceSampler
from bayeval.sampling.estimate import DataTreePosterior
from bayeval.sampling.static import score_weights

__all__ = ["AIS"]

# the default model of the proposal (the robust variant's first floor prior, the open one):
# frozen, so one instance can be every default
_OPEN_FLOOR = ScoreCalibration(floor="open")


class AIS(ImportanceSampler):
    """Adaptive importance sampling for generalized measures (Algorithm 1 of [1]_).

    Items are drawn with replacement from a proposal updated after every stage; the estimate
    is ``g(R_hat)`` with ``R_hat`` the importance-weighted mean loss (Eq. 1). The proposal is
    Proposition 4's for a deterministic oracle,
    ``q_t(x) ∝ p(x) sum_y max(||J loss(x, y)||, eps_t 1{loss(x, y) != 0}) pi_t(y | x)``, with
    ``pi_t`` from a Dirichlet-tree model of the oracle over score strata (§4) and
    ``eps_t = epsilon0 (1 - labelled share)`` (Proposition 5).

    Parameters
    ----------
    pool, measure, batch_size, rng
        See :class:`bayeval.sampling.Sampler`.
    model : bayeval.models.DirichletTree, optional
        Default ``DirichletTree(depth=8, branching=2)``: 256 strata.
    strata : str or bayeval.strata.Strata, default "csf"
        How the scores are cut into the model's leaves (a stratification method applied with
        ``model.n_leaves`` strata, or ready-made strata).
    epsilon0 : float, default 1e-3
    response : {"predictive", "mode"}, default "predictive"
        ``pi_t`` for the unlabelled items of a leaf: the posterior predictive (the mean over
        posterior draws of the model, so the proposal averages over the model's uncertainty),
        or the EM posterior mode of Appendix F (the paper's plug-in).
    sweeps : int, default 20
        Posterior draws per stage for ``response="predictive"`` (the chain continues from one
        stage to the next).
    anchor : float, default 0.5
        Share of the static proposal built from the scores (that of :class:`StaticIS`) mixed
        into every stage's proposal (defensive importance sampling, Hesterberg 1995). An
        item's weight ``p / q`` is then at most ``1 / anchor`` times its static-IS weight, so
        a model that concludes too early that a region holds no positives cannot starve it
        of draws (rare false negatives among low scores). ``anchor=0`` is the paper's
        Algorithm 1. See the notes.
    defensive : float, default 0.0
        Mix ``delta`` of the uniform distribution into the proposal (§3.3.1), so the samples
        can be reused for other measures. ``anchor + defensive`` must be below 1.
    calibration : bayeval.models.ScoreCalibration or None, default ScoreCalibration(floor="open")
        The model of the labels whose posterior drives the proposal: after each stage,
        ``pi_t(1 | cell)`` is its posterior predictive probability of a positive at the cell's
        mean logit-score, averaged over ``10 * sweeps`` posterior draws (under the first floor
        prior of a model with several). The open floor (the robust variant's first) keeps the
        proposal looking among low scores for as long as the labels cannot rule out positives
        hidden there (the tail of the measure's posterior; see the notes).
        ``None``: the Dirichlet tree's response, as in the paper's Algorithm 1. The first
        stage (no labels) uses the tree's prior either way.
    posterior_draws : int, default 500
        Kept draws per chain (4 chains) of :attr:`Estimate.posterior`.
    posterior_thin : int, default 10
        With ``model.engine == "exact"``, keep every ``posterior_thin``-th data-augmentation
        sweep: the chain moves slowly when unlabelled items far outnumber labels. Check
        ``az.rhat`` on the posterior; ``DirichletTree(engine="pymc")`` (NUTS, unlabelled labels
        summed out) mixes well where data augmentation does not.

    Notes
    -----
    Within a leaf, every unlabelled item with the same loss pattern has the same proposal
    probability, so a draw picks a *cell* and then an item uniformly within it; labelled items
    have their own (known-label) weight. A stage update costs ``O(cells + labelled items)``,
    whatever the pool size. The proposal starts (stage 0) from the model fitted to no labels,
    i.e. from the classifier scores through the prior.

    The proposal's oracle model is a second deviation, measured on the honesty battery's
    pools (``bayeval.simulate.battery``, 100,000 items, 30 runs each, F1): with the robust
    calibration model's predictive the MSE of F1 at 1,000 / 2,000 labels was 4.7e-4 / 2.7e-4
    on ``separated`` against 1.5e-3 / 5.1e-4 with the Dirichlet tree and 1.7e-3 / 1.1e-3 for
    :class:`StaticIS`; on ``hidden`` (30% of positives among low scores) 6.0e-3 at 2,000
    labels against 1.6e-2 and 1.9e-2 (``benchmarks/README.md``).

    The anchor is a deviation from Algorithm 1, measured on the synthetic pool of
    ``benchmarks/active.py`` (100 positives in 100,000 items): without it the adapted
    proposal under-samples the few false negatives hidden among low-score items, and the
    mean squared error of F1 is two to three times that of static importance sampling at 1000
    and 2000 labels; with ``anchor=0.5`` it is no worse than static IS at any budget
    (``benchmarks/README.md``). The estimator stays unbiased: every draw is weighted by the
    mixture it came from.

    The estimate's ``covariance`` is the martingale one (see :meth:`Sampler.estimate`); its
    ``posterior`` draws ``G`` from the model's posterior combined with the observed labels:
    each unlabelled cell's positives are drawn ``Binomial(unlabelled, response of its leaf)``,
    a finite-population posterior of the measure of this pool.

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
    >>> sampler = be.sampling.AIS(be.Pool(scores), be.measures.FScore(), rng=0)
    >>> for _ in range(4):
    ...     ids = sampler.ask(50)
    ...     sampler.tell(ids, truth[ids])
    >>> est = sampler.estimate()
    >>> est.labels_used
    200
    """

    method = "ais"

    @validate(
        model=Optional(Instance(DirichletTree, "a bayeval.models.DirichletTree")),
        strata=STRATA,
        epsilon0=Positive(),
        response=OneOf(("predictive", "mode")),
        sweeps=Integer(minimum=1),
        anchor=Share(),
        defensive=Share(),
        posterior_draws=Integer(minimum=1),
        posterior_thin=Integer(minimum=1),
        calibration=Optional(Instance(ScoreCalibration, "a bayeval.models.ScoreCalibration")),
        batch_size=Integer(minimum=1),
        rng=Seed(),
    )
    def __init__(
        self,
        pool: Any,
        measure: Any,
        *,
        model: Any = None,
        strata: Any = "csf",
        epsilon0: float = 1e-3,
        response: Literal["predictive", "mode"] = "predictive",
        sweeps: int = 20,
        anchor: float = 0.5,
        defensive: float = 0.0,
        posterior_draws: int = 500,
        posterior_thin: int = 10,
        calibration: Any = _OPEN_FLOOR,
        batch_size: int = 50,
        rng: Any = None,
    ):
        from bayeval.strata import tree_over_strata

        super().__init__(pool, measure, batch_size=batch_size, rng=rng)
        if self.target.table is None:
            raise ValueError(NEEDS_FINITE_LOSSES.format(name="AIS", measure=measure))
        model = DirichletTree() if model is None else model
        self.epsilon0, self.response, self.sweeps = epsilon0, response, sweeps
        self.anchor, self.defensive = anchor, defensive
        self.posterior_draws, self.posterior_thin = posterior_draws, posterior_thin
        if self.anchor + self.defensive >= 1:
            raise ValueError(
                f"`anchor + defensive` must be below 1 (the model's share of the proposal); "
                f"got {self.anchor} + {self.defensive}."
            )
        self._calibration = None
        levels = None
        if calibration is not None:
            self._calibration = self._bound_model(calibration, self.target)
            n_levels = self._calibration.n_judge_levels
            if n_levels > 1:  # cells never mix what the judge said
                levels = (self._calibration.judge_level(slice(None)), n_levels)
        self.strata, self.cells, prior = score_cells(
            self.target, strata, model.n_leaves, levels=levels
        )
        cells = self.cells
        tree = tree_over_strata(self.strata.n_strata, branching=model.branching)
        leaf_prior = np.bincount(
            cells.stratum, weights=prior * cells.sizes, minlength=cells.n_strata
        ) / np.maximum(self.strata.sizes, 1)
        self.model = model.bind(tree, leaf_prior)
        anchor_weight = score_weights(self.target, cells, prior, self.epsilon0)
        self._anchor_q = anchor_weight / (anchor_weight @ cells.sizes)  # per item, by cell
        self._anchor_p = self._anchor_q * cells.sizes  # per cell
        self._cell_labels = np.zeros((cells.n_cells, 2))  # labelled items per cell and label
        self._chain = self.model.prior
        if calibration is not None:
            self._calibration_start = None  # the proposal's own warm start
            self._cell_t, self._cell_group = self._calibration.cell_covariates(
                cells.cell_of, cells.n_cells
            )
        self._adapt()

    # -- state ---------------------------------------------------------------------------------
    def _leaf_counts(self):
        cells = self.cells
        labelled = np.zeros((cells.n_strata, 2))
        np.add.at(labelled, cells.stratum, self._cell_labels)
        return labelled, self.strata.sizes - labelled.sum(axis=1).astype(np.int64)

    def _recount(self):
        self._cell_labels = np.zeros_like(self._cell_labels)
        positions = self._labelled_positions()
        self._on_labels(positions, self._label_array(positions))

    def _on_labels(self, positions, labels):
        np.add.at(self._cell_labels, (self.cells.cell_of[positions], labels.astype(np.intp)), 1)

    @property
    def leaf_response(self) -> np.ndarray:
        """``(K,)`` the current ``pi_t(1 | leaf)`` of unlabelled items."""
        return self._pi.copy()

    # -- the proposal ----------------------------------------------------------------------------
    def _adapt(self):
        cells = self.cells
        if self._calibration is not None and self._labels:
            positive = self._calibrated_response()
        else:
            positive = self._tree_response()[cells.stratum]
        unl_cell = cells.sizes - self._cell_labels.sum(axis=1)
        table = self.target.table
        R = model_R(table, cells.pattern, unl_cell, positive, self._cell_labels, self.pool.size)
        eps = self.epsilon0 * (1 - self.labels_used / self.pool.size)
        norms = pattern_norms(table, self.target.jacobian(R), eps)  # (P, 2)
        self._v_unl = cell_weights(norms, cells.pattern, positive)  # per unlabelled item
        self._v_lab = norms[cells.pattern]  # (n_cells, 2) per labelled item
        self._mass = np.concatenate(
            [unl_cell * self._v_unl, (self._cell_labels * self._v_lab).ravel()]
        )
        self._Z = self._mass.sum()
        self._labelled_sorted = np.sort(self._labelled_positions())
        self.epsilon = eps

    def _tree_response(self) -> np.ndarray:
        """``pi_t(1 | leaf)`` from the Dirichlet tree (predictive mean or EM mode)."""
        labelled, unlabelled = self._leaf_counts()
        # warm-started Newton solve of EM's fixed point: a handful of evaluations a stage at any
        # pool size (the cap is a safeguard; any proposal keeps the estimator unbiased)
        fit = self.model.mode(labelled, unlabelled, start=self._chain, tol=1e-7, max_iter=400)
        self._chain = fit.response
        if self.response == "predictive":
            draws, _ = self.model.draws(labelled, unlabelled, fit.response, self.sweeps, self._rng)
            self._pi = draws[:, :, 1].mean(axis=0)
        else:
            self._pi = fit.response[:, 1]
        return self._pi

    def _calibrated_response(self) -> np.ndarray:
        """``pi_t(1 | cell)``: the calibration model's posterior predictive at each cell."""
        positions = self._labelled_positions()
        positive, self._calibration_start = self._calibration.response(
            positions,
            self._label_array(positions),
            self._cell_t,
            self._cell_group,
            rng=self._rng,
            draws=self.sweeps * 10,
            start=self._calibration_start,
        )
        cells = self.cells
        mass = np.bincount(cells.stratum, weights=positive * cells.sizes, minlength=cells.n_strata)
        self._pi = mass / np.maximum(self.strata.sizes, 1)  # leaf_response: the leaf's mean
        return positive

    def _q(self, v: np.ndarray, cell: np.ndarray) -> np.ndarray:
        """Probability of items under the mixture, given their model weight ``v`` and cell."""
        model = (1 - self.anchor - self.defensive) * v / self._Z
        return model + self.anchor * self._anchor_q[cell] + self.defensive / self.pool.size

    def _item_weight(self, positions: np.ndarray) -> np.ndarray:
        """Weigh items under the proposal of the current stage.

        Labels count as of the stage's start: items labelled later are still unlabelled here.
        """
        c = self.cells.cell_of[positions]
        v = self._v_unl[c].copy()
        labelled = (
            contains(self._labelled_sorted, positions)
            if self._labelled_sorted.size
            else (np.zeros(positions.size, bool))
        )
        if labelled.any():
            y = self._label_array(positions[labelled]).astype(np.intp)
            v[labelled] = self._v_lab[c[labelled], y]
        return v

    def _available(self) -> int:
        if self.defensive > 0:
            return self.pool.size - self.labels_used - len(self._pending)
        positive = (self._v_unl > 0) | (self._anchor_q > 0)
        unl_cell = self.cells.sizes - self._cell_labels.sum(axis=1)
        pending = np.fromiter(self._pending, np.int64, len(self._pending))
        return int(unl_cell[positive].sum() - positive[self.cells.cell_of[pending]].sum())

    def kl_to_optimal(self, labels: Any) -> float:
        """``KL(q* || q_t)`` from the asymptotically optimal proposal to the current one.

        ``q*`` is Eq. 5 of [1]_ for a deterministic oracle, ``q*(x) ∝ ||J(R) loss(x, y(x))||``
        at the true ``R``; a diagnostic for simulations where every label is known.

        Parameters
        ----------
        labels : array_like of {0, 1}
            The true label of every pool item, in pool order.
        """
        truth = np.asarray(labels).astype(np.intp)
        if truth.shape != (self.pool.size,):
            raise ValueError(
                f"`labels` must hold one label per pool item ({self.pool.size}); got shape "
                f"{truth.shape}."
            )
        cells, table = self.cells, self.target.table
        counts = np.zeros((cells.n_cells, 2))
        np.add.at(counts, (cells.cell_of, truth), 1)
        R = (counts[:, 0] @ table[cells.pattern, 0] + counts[:, 1] @ table[cells.pattern, 1]) / (
            self.pool.size
        )
        star = pattern_norms(table, self.target.jacobian(R), 0.0)[cells.pattern]  # (cells, 2)
        q_star = counts * star / (counts * star).sum()  # mass of each (cell, label) group
        # the current proposal's mass on the same groups: labelled items at their labels
        lab = self._cell_labels
        every = np.arange(cells.n_cells)
        q_unl = self._q(self._v_unl, every)[:, None]
        q_lab = self._q(self._v_lab, every[:, None])
        q_now = q_unl * (counts - lab) + q_lab * lab
        keep = q_star > 0
        return float(np.sum(q_star[keep] * np.log(q_star[keep] / q_now[keep])))

    def _draw(self, k):
        rng, cells = self._rng, self.cells
        positions = np.empty(k, dtype=np.int64)
        u = rng.random(k)  # which part of the mixture each draw comes from
        uniform = u < self.defensive
        anchored = ~uniform & (u < self.defensive + self.anchor)
        positions[uniform] = rng.integers(0, self.pool.size, size=int(uniform.sum()))
        c = rng.choice(cells.n_cells, size=int(anchored.sum()), p=self._anchor_p)
        positions[anchored] = cells.draw(c, rng)
        model = ~(uniform | anchored)
        n_model = int(model.sum())
        if n_model:
            comp = rng.choice(self._mass.size, size=n_model, p=self._mass / self._Z)
            out = np.empty(n_model, dtype=np.int64)
            unl = comp < cells.n_cells
            out[unl] = cells.draw(comp[unl], rng, exclude=self._labelled_sorted)
            if (~unl).any():
                out[~unl] = self._draw_labelled(comp[~unl] - cells.n_cells)
            positions[model] = out
        return positions, self._q(self._item_weight(positions), cells.cell_of[positions])

    def _draw_labelled(self, groups: np.ndarray) -> np.ndarray:
        """Uniform draws among the items labelled before this stage, by (cell, label) group."""
        pos = self._labelled_sorted
        y = self._label_array(pos).astype(np.int64)
        group = self.cells.cell_of[pos].astype(np.int64) * 2 + y
        order = np.argsort(group, kind="stable")
        sorted_group = group[order]
        start = np.searchsorted(sorted_group, groups, side="left")
        stop = np.searchsorted(sorted_group, groups, side="right")
        pick = start + np.floor(self._rng.random(groups.size) * (stop - start)).astype(np.int64)
        return pos[order[pick]]

    def _probability(self, positions, labels):
        c = self.cells.cell_of[positions]
        return self._q(self._v_lab[c, labels.astype(np.intp)], c)

    # -- the posterior of the measure --------------------------------------------------------------
    def _draws_everything(self) -> bool:
        return self.defensive > 0

    def _check_model(self, model):
        if isinstance(model, str) and model == "dirichlet_tree":
            return model
        return super()._check_model(model)

    def _posterior_factory(self, target, model):
        model = self._check_model(model)
        if model != "dirichlet_tree" or target.table is None:
            return super()._posterior_factory(target, model)
        labelled, unlabelled = self._leaf_counts()
        sizes, cell_labels = self._cell_counts(target)
        seed = self._posterior_seed()
        return lambda: DataTreePosterior(
            self._measure_posterior(target, labelled, unlabelled, sizes, cell_labels, seed),
            target.outputs,
        )

    def _cell_counts(self, target):
        """Items and labelled items (by label) of each cell ``stratum x pattern of target``."""
        if target is self.target and self.cells.n_levels == 1:
            return self.cells.sizes, self._cell_labels.copy()
        n_patterns = target.table.shape[0]
        n_cells = self.strata.n_strata * n_patterns
        sizes = np.zeros(n_cells, dtype=np.int64)
        for start in range(0, self.pool.size, 1 << 22):
            part = slice(start, start + (1 << 22))
            cell = self.strata.ids[part].astype(np.int64) * n_patterns + target.patterns[part]
            sizes += np.bincount(cell, minlength=n_cells)
        pos = self._labelled_positions()
        cell = self.strata.ids[pos].astype(np.int64) * n_patterns + target.patterns[pos]
        cell_labels = np.zeros((n_cells, 2))
        np.add.at(cell_labels, (cell, self._label_array(pos).astype(np.intp)), 1)
        return sizes, cell_labels

    def _measure_posterior(self, target, labelled, unlabelled, sizes, cell_labels, seed):
        rng = check_rng(seed)
        thin = self.posterior_thin if self.model.spec.engine == "exact" else 1
        tree = self.model.posterior(
            labelled, unlabelled, chains=4, draws=self.posterior_draws * thin, rng=rng
        )
        if thin > 1:
            kept = tree["posterior"].to_dataset().isel(draw=slice(thin - 1, None, thin))
            tree["posterior"] = kept.assign_coords(draw=np.arange(self.posterior_draws))
        resp = tree["posterior"]["response"].values  # (chain, draw, K)
        stratum, pattern = np.divmod(np.arange(sizes.size), target.table.shape[0])
        unl_cell = (sizes - cell_labels.sum(axis=1)).astype(np.int64)
        positives = rng.binomial(unl_cell, resp[..., stratum])  # (chain, draw, cells)
        loss = target.table[pattern]  # (cells, 2, D)
        known = cell_labels[:, 0] @ loss[:, 0] + cell_labels[:, 1] @ loss[:, 1]
        total = known + (unl_cell - positives) @ loss[:, 0] + positives @ loss[:, 1]
        variables, coords = measure_variables(target.g(total / self.pool.size), target.outputs)
        tree["posterior"] = tree["posterior"].to_dataset().assign(variables).assign_coords(coords)
        return tree
