"""The ask/tell protocol shared by every sampler, and the importance-sampling estimator."""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

import numpy as np

from bayeval._constraints import Integer, OneOf, Optional, Seed, validate
from bayeval._core.normal import clip_covariance
from bayeval._validation import check_classes, check_rng
from bayeval.measures.target import Target
from bayeval.sampling.estimate import Estimate

__all__ = ["Sampler"]


class Sampler(ABC):
    """Base class of the samplers: choose items to label (``ask``), record labels (``tell``).

    A *stage* is the items of one or more ``ask`` calls until all of them are told; the
    proposal (or allocation) is updated when a stage is complete, from the labels alone. The
    budget counts distinct items: importance samplers draw with replacement, and a draw of an
    item already labelled (or already asked for) is recorded without asking again.

    Parameters
    ----------
    pool : bayeval.Pool
    measure : bayeval.measures.Measure
        A binary-label measure; with several systems in the pool it is applied to each.
    batch_size : int, default 50
        Items per stage when :meth:`ask` is called without ``n`` (and in
        :func:`bayeval.evaluate`).
    rng : int, numpy.random.Generator or None
    """

    method: ClassVar[str] = "sampler"
    #: Whether the sampler takes a multiclass pool (``Pool(..., classes=...)``).
    multiclass: ClassVar[bool] = False
    #: Whether it takes a multiclass pool of several systems (it compares them).
    multiclass_systems: ClassVar[bool] = False

    @validate(batch_size=Integer(minimum=1), rng=Seed())
    def __init__(self, pool: Any, measure: Any, *, batch_size: int = 50, rng: Any = None):
        if pool.classes is not None and not self.multiclass:
            raise ValueError(
                f"`pool` is multiclass and {type(self).__name__} is built for yes/no labels; "
                "sample a multiclass pool with Passive, Stratified or ActiveStratified."
            )
        if pool.classes is not None and pool.n_systems > 1 and not self.multiclass_systems:
            raise ValueError(
                f"`pool` holds {pool.n_systems} systems' classes and {type(self).__name__} "
                "evaluates one system of a multiclass pool; compare several with "
                "ModelSelection or bayeval.compare, or give it a pool of one system."
            )
        self.target = self._build_target(pool, measure)
        self.pool, self.measure = pool, measure
        self.batch_size = batch_size
        self._rng = check_rng(rng)
        self._labels: dict[int, int] = {}
        # the same labels as sorted positions and values, for vectorised look-ups
        self._sorted_positions = np.empty(0, dtype=np.int64)
        self._sorted_labels = np.empty(0, dtype=np.int8)
        self._pending: dict[int, None] = {}  # positions asked and not told, in the order asked
        self._selected_with: dict[int, float] = {}  # see question_probability
        self.stage = 0
        # posterior draws get their own seed, so calling estimate() changes no later draw
        self._posterior_key = int(self._rng.spawn(1)[0].integers(2**63))
        self._bound_models: dict = {}  # (model, measure) -> BoundCalibration
        self._two_scores: bool | None = None  # every system scores items with two values
        self._targets: dict = {measure: self.target}  # other measures' targets, built once

    # -- the protocol --------------------------------------------------------------------------
    @property
    def labels_used(self) -> int:
        """Distinct items labelled so far."""
        return len(self._labels)

    @property
    def pending(self) -> np.ndarray:
        """Ids asked for and not yet told, in the order asked (a resumed session asks them so)."""
        return self._ids(np.fromiter(self._pending, np.int64, len(self._pending)))

    def is_labelled(self, positions: Any) -> np.ndarray:
        """Return whether each pool position already has a label (``(n,)`` booleans)."""
        return np.array([int(p) in self._labels for p in np.atleast_1d(positions)], dtype=bool)

    @property
    def random_state(self) -> dict:
        """The state of the sampler's random generator (what a replayed session checks)."""
        return self._rng.bit_generator.state

    def labelled(self) -> tuple[np.ndarray, np.ndarray]:
        """Return the ids of the labelled items and their labels, in the order told.

        For :class:`StochasticAIS`, an item's latest label.
        """
        positions = self._labelled_positions()
        return self._ids(positions), self._label_array(positions)

    @validate(n=Optional(Integer(minimum=1)))
    def ask(self, n: int | None = None) -> np.ndarray:
        """Choose ``n`` new items to label.

        Parameters
        ----------
        n : int, optional
            Number of distinct, not yet labelled items wanted; default ``batch_size``.

        Returns
        -------
        numpy.ndarray
            Their pool ids, in the order drawn.

        Raises
        ------
        ValueError
            If ``n`` is not a positive integer or exceeds the items the sampler can still draw.
        """
        self._check_live()
        n = self.batch_size if n is None else n
        available = self._available()
        if n > available:
            raise ValueError(
                f"`n` must be at most {available}, the items {self.method} can still draw "
                f"(pool of {self.pool.size}, {self.labels_used} labelled, {len(self._pending)} "
                f"pending); got {n}."
            )
        positions = self._ask(n)
        self._pending.update(dict.fromkeys(int(p) for p in positions))
        return self._ids(positions)

    def tell(self, ids: Any, labels: Any) -> None:
        """Record the labels of items returned by :meth:`ask`.

        Parameters
        ----------
        ids : array_like
            Pool ids, each pending (asked and not yet told), without repeats.
        labels : array_like of {0, 1}
            One label per id (booleans allowed); for a multiclass pool, class indices or the
            pool's class names.

        Raises
        ------
        ValueError
            For unknown ids, ids never asked or already labelled, repeated ids, labels outside
            ``{0, 1}`` (the pool's classes), or lengths that differ. Nothing is recorded when
            an error is raised.
        """
        self._check_live()
        positions, values = self.told(ids, labels)
        unique, counts = np.unique(positions, return_counts=True)
        if (counts > 1).any():
            dup = self._ids(unique[counts > 1][:5])
            raise ValueError(f"`ids` must not repeat an item; repeated: {list(dup)}.")
        for p in positions:
            if int(p) not in self._pending:
                state = "is already labelled" if int(p) in self._labels else "was never asked"
                raise ValueError(
                    f"`ids` must be pending items returned by ask(); id {self._ids(p)!r} {state}."
                )
        for p, y in zip(positions, values, strict=True):
            del self._pending[int(p)]
            self._labels[int(p)] = int(y)
        order = np.argsort(positions)
        at = np.searchsorted(self._sorted_positions, positions[order])
        self._sorted_positions = np.insert(self._sorted_positions, at, positions[order])
        self._sorted_labels = np.insert(self._sorted_labels, at, values[order])
        self._on_labels(positions, values)
        if not self._pending:
            self.stage += 1
            self._update()

    @validate(variance=OneOf(("martingale", "paper")))
    def estimate(
        self,
        *,
        variance: Literal["martingale", "paper"] = "martingale",
        measure: Any = None,
        model: Any = None,
        labels: Any = None,
    ) -> Estimate:
        """Estimate the measure from the labels of every complete stage (see the class notes).

        Parameters
        ----------
        variance : {"martingale", "paper"}, default "martingale"
            For importance samplers, how ``Sigma`` of Theorem 2 is estimated. ``"martingale"``:
            the sample covariance of the weighted losses ``w_j loss_j`` (it estimates the mean
            conditional variance of the draws actually made). ``"paper"``: §3.3.2 of
            Marchant & Rubinstein (2021), which replaces one weight by ``p / q_N`` with the
            latest proposal ``q_N``; it estimates the asymptotic variance *of the latest
            proposal*, so it is too small while early, poorer proposals still weigh in (with
            a deterministic oracle the optimal proposal has zero variance). Ignored by samplers
            that are not importance samplers.
        measure : bayeval.measures.Measure, optional
            Another measure to estimate from the same labels (sample reuse, §3.3.1 of
            Marchant & Rubinstein 2021), e.g. precision and recall after an F1 run. An
            importance sampler's draws estimate it only where the proposals could draw every
            item whose loss under ``measure`` is not zero (see :meth:`covers`).
        model : bayeval.models.ScoreCalibration or CellRates, optional
            The model of the labels behind :attr:`Estimate.posterior` and the credible
            interval; default ``ScoreCalibration()`` (``ScoreCalibration.robust()`` is the
            variant for pools that may hide positives among low scores), and ``CellRates()``
            where every system's scores take at most two values (its predictions: no curve
            to learn). :class:`AIS` also takes ``"dirichlet_tree"``, the posterior of its own
            oracle model.
        labels : bayeval.models.AnnotatorPosterior, optional
            Where several people answered and disagree: the annotators' model
            (:meth:`bayeval.models.DawidSkene.fit` on the labelled items, by pool id; for a
            multiclass pool with ``classes=range(n_classes)``). The credible interval then
            integrates over the true labels under the joint model of the answers and the
            labels (:meth:`~bayeval.models.AnnotatorPosterior.measure_posterior`;
            :meth:`~bayeval.models.ClassCalibration.posterior` for a multiclass pool), and the
            design estimate takes each item's most probable label under it (as if it were the
            truth: the annotators' noise widens the credible interval, not the design
            interval).

        Raises
        ------
        ValueError
            Before any label is told, or for a ``measure`` the draws do not cover.
        """
        if not self._labels:
            raise ValueError("estimate() needs labels: ask() for items and tell() their labels.")
        target = self.target
        if measure is not None:
            target = self._target_of(measure)
            if not self.covers(measure):
                raise ValueError(
                    f"`measure` {measure!r} is not covered by the draws of this {self.method} "
                    f"sampler for {self.measure!r}: its proposal never draws some items whose "
                    f"loss under {measure!r} can be nonzero. Mix the uniform distribution into "
                    "the proposal (AIS's `defensive`) when samples are to be reused."
                )
        factory = self._posterior_factory(target, model)
        if labels is not None and factory is not None:
            model, seed = self._check_model(model), self._posterior_seed()
            if self.pool.classes is None:
                imputed = labels.measure_posterior(self._bound_model(model, target), rng=seed)
                best, posterior = imputed.labels(), lambda: imputed
            else:  # the model takes the annotators' items as pool positions
                by_position = labels.with_items(self.pool.positions(labels.items))
                best = labels.labels()

                def posterior():
                    return _class_posterior(model, self.pool, None, by_position, seed, target)

            ids, told = self.labelled()
            resolved = best.reindex(ids).to_numpy()  # NaN: an item the annotators left out
            moved = ~np.isnan(resolved.astype(float)) & (resolved != told)
            sampler = self.with_labels(ids[moved], resolved[moved].astype(int)) if moved.any() \
                else self  # fmt: skip
            return sampler._estimate(variance, target, posterior)
        return self._estimate(variance, target, factory)

    def with_labels(self, ids: Any, labels: Any) -> Sampler:
        """Return a copy in which the labelled items ``ids`` carry ``labels`` (re-judged labels).

        The draws, and the probabilities they were drawn with, stay those made: the proposal
        may depend on anything observed before a draw, so an importance-sampling estimate
        stays unbiased with corrected labels. The copy is for :meth:`estimate`; it refuses
        :meth:`ask` and :meth:`tell` (it shares the draws with this sampler).

        Raises
        ------
        ValueError
            For ids not labelled yet, repeated ids, or labels outside ``{0, 1}``.
        """
        positions, values = self.told(ids, labels)
        for p in positions:
            if int(p) not in self._labels:
                raise ValueError(
                    f"`ids` must be labelled items to re-label; id {self._ids(p)!r} is not."
                )
        if np.unique(positions).size != positions.size:
            raise ValueError("`ids` must not repeat an item.")
        view = copy.copy(self)
        view._labels = dict(self._labels)
        view._labels.update(zip(positions.tolist(), values.tolist(), strict=True))
        view._sorted_labels = self._sorted_labels.copy()
        view._sorted_labels[np.searchsorted(self._sorted_positions, positions)] = values
        view._estimate_only = True
        view._recount()
        return view

    def covers(self, measure: Any) -> bool:
        """Whether :meth:`estimate` can estimate ``measure`` from this sampler's draws.

        True for samplers that can draw every item (passive, stratified, a proposal mixed
        with the uniform distribution); otherwise ``measure``'s loss must vanish, for both
        labels, wherever the sampler's own measure's loss does (its proposal's support).
        """
        return self._draws_everything() or _support_within(self.target, self._target_of(measure))

    # -- helpers -------------------------------------------------------------------------------
    def told(self, ids: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
        """Return the pool positions of ``ids`` and their 0/1 ``labels``, checked to pair up.

        What :meth:`tell` checks before recording anything; a session calls it to check
        answers before it writes them.
        """
        positions = np.atleast_1d(self.pool.positions(ids)).astype(np.int64)
        values = check_classes(labels, "labels", self.pool.classes)
        if values.shape != positions.shape:
            raise ValueError(
                f"`labels` must have one label per id: {positions.size} ids, {values.size} labels."
            )
        return positions, values

    def _check_live(self) -> None:
        if getattr(self, "_estimate_only", False):
            raise RuntimeError(
                "this sampler is a re-labelled copy made by with_labels(), for estimate() only; "
                "ask and tell the sampler it was made from."
            )

    def question_probability(self, ids: Any) -> np.ndarray:
        """Return the probability with which each asked item was selected (NaN if not defined).

        Importance samplers: the single-draw probability ``q`` of the draw that first picked the
        item. Stratified sampling: the sampling fraction ``n_h / N_h`` of the item's stratum
        after the stage that asked it. It is what exports carry as the inclusion probability.
        """
        positions = np.atleast_1d(self.pool.positions(ids)).astype(np.int64)
        return np.array([self._selected_with.get(int(p), np.nan) for p in positions])

    def _ids(self, positions):
        return self.pool.ids_at(positions)

    def _label_array(self, positions: np.ndarray) -> np.ndarray:
        """Labels of labelled items at ``positions``."""
        return self._sorted_labels[np.searchsorted(self._sorted_positions, positions)]

    def _labelled_positions(self) -> np.ndarray:
        return np.fromiter(self._labels, np.int64, len(self._labels))

    def _taken(self) -> np.ndarray:
        """Sorted positions of items labelled or pending."""
        return np.sort(np.fromiter([*self._labels, *self._pending], np.int64))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(pool={self.pool!r}, measure={self.measure!r}, "
            f"labels_used={self.labels_used})"
        )

    # -- what samplers define ------------------------------------------------------------------
    def _build_target(self, pool: Any, measure: Any) -> Target | None:
        """Return the measure's losses over the pool that the sampler estimates (a ``Target``)."""
        return Target(pool, measure)

    @abstractmethod
    def _available(self) -> int:
        """Items that :meth:`ask` could still return."""

    @abstractmethod
    def _ask(self, n: int) -> np.ndarray:
        """Positions of ``n`` new items (distinct, not labelled, not pending)."""

    def _on_labels(self, positions: np.ndarray, labels: np.ndarray) -> None:  # noqa: B027
        """React to labels just recorded (a hook; nothing by default)."""

    def _update(self) -> None:  # noqa: B027
        """React to a complete stage (a hook; nothing by default)."""

    def _recount(self) -> None:  # noqa: B027
        """Rebuild label counts after :meth:`with_labels` (a hook; nothing by default)."""

    def _draws_everything(self) -> bool:
        """Whether every item has a positive probability of being drawn."""
        return True

    @abstractmethod
    def _estimate(self, variance: str, target: Target, posterior) -> Estimate:
        """Estimate ``target``'s measure from the labels so far; ``posterior`` as given."""

    def _posterior_factory(self, target: Target, model: Any):
        """Return a function computing the posterior of ``target``'s measure (or ``None``).

        The labels are those told so far. Every sampler chooses items from the scores and
        earlier labels only, so given the model's rows (which are finer than any sampler's
        cells) the design is ignorable and the posterior needs no design weights.
        """
        model = self._check_model(model)
        if target.table is None:  # a loss that varies with each score: no rows to impute
            return None
        positions = self._labelled_positions()
        labels = self._label_array(positions)
        seed = self._posterior_seed()
        if self.pool.classes is not None:
            return lambda: _class_posterior(model, self.pool, positions, labels, seed, target)
        bound = self._bound_model(model, target)
        return lambda: bound.fit(positions, labels, rng=seed)

    def _posterior_seed(self) -> int:
        """Return the seed of posterior draws: a function of the labels' count and stage only.

        Never the sampling stream, and the same for every estimate from the same labels, so
        an interval does not depend on what was computed before it.
        """
        state = np.random.SeedSequence([self._posterior_key, len(self._labels), self.stage])
        return int(state.generate_state(1, np.uint64)[0])

    def default_model(self):
        """Return the model of the labels :meth:`estimate` uses unless told another.

        ``ClassCalibration`` for a multiclass pool; for yes/no labels ``CellRates`` where every
        system's scores take at most two values (its predictions: no curve to learn), else
        ``ScoreCalibration``.
        """
        from bayeval.models.cell_rates import CellRates, has_two_scores
        from bayeval.models.class_calibration import ClassCalibration
        from bayeval.models.score_calibration import ScoreCalibration

        if self.pool.classes is not None:
            return ClassCalibration(n_classes=self.pool.n_classes)
        if self._two_scores is None:  # one pass over the pool, then remembered
            self._two_scores = has_two_scores(self.pool)
        return CellRates() if self._two_scores else ScoreCalibration()

    def _check_model(self, model: Any):
        from bayeval.models.cell_rates import CellRates
        from bayeval.models.class_calibration import ClassCalibration
        from bayeval.models.score_calibration import ScoreCalibration

        if model is None:
            return self.default_model()
        if self.pool.classes is not None:
            if not isinstance(model, ClassCalibration) or model.n_classes != self.pool.n_classes:
                raise ValueError(
                    "`model` must be a bayeval.models.ClassCalibration of the pool's "
                    f"{self.pool.n_classes} classes; got {model!r}."
                )
            return model
        if not isinstance(model, ScoreCalibration | CellRates):
            raise ValueError(
                f"`model` must be a bayeval.models.ScoreCalibration or CellRates; got {model!r}."
            )
        return model

    def _target_of(self, measure: Any) -> Target:
        """``measure``'s losses over the pool (one pass over the pool, then cached)."""
        try:
            cached = self._targets.get(measure)
        except TypeError:  # not a measure (measures hash): Target says what is wrong
            return Target(self.pool, measure)
        if cached is None:
            cached = self._targets[measure] = Target(self.pool, measure)
        return cached

    def _bound_model(self, model: Any, target: Target):
        """Bind ``model`` to the pool and ``target`` (one pass over the pool, then cached)."""
        key = (model, target.measure)
        if key not in self._bound_models:
            self._bound_models[key] = model.bind(self.pool, target)
        return self._bound_models[key]


def _class_posterior(model, pool, positions, labels, seed, target):
    """Return the multiclass model's posterior, adapted to :class:`Estimate`.

    The classes' coordinates are the pool's class names.
    """
    from bayeval.sampling.estimate import DataTreePosterior

    confidence = pool.scores if model.n_strata > 1 else None
    tree = model.posterior(
        pool.predictions, positions, labels, confidence=confidence, judge=pool.judge, rng=seed
    )
    names = list(pool.classes)
    for group in ("posterior", "constant_data"):
        if group in tree.children:
            dims = {d: names for d in ("true_class", "predicted") if d in tree[group].dims}
            tree[group] = tree[group].to_dataset().assign_coords(dims)
    return DataTreePosterior(tree, target.outputs)


class ImportanceSampler(Sampler):
    """Samplers that draw with replacement from a proposal ``q`` and weight by ``p / q``.

    Subclasses define ``_draw(k)`` -> ``(positions, q)`` (``k`` i.i.d. draws from the current
    proposal and each item's probability under it), ``_probability(positions, labels)`` (the
    probability of labelled items under the *current* proposal, ``q_N`` of §3.3.2) and
    ``_available``.
    """

    def __init__(self, pool, measure, *, batch_size=50, rng=None):
        super().__init__(pool, measure, batch_size=batch_size, rng=rng)
        self._draw_pos: list[np.ndarray] = []
        self._draw_q: list[np.ndarray] = []
        self._complete = 0  # draws of complete stages

    @abstractmethod
    def _draw(self, k: int) -> tuple[np.ndarray, np.ndarray]: ...

    @abstractmethod
    def _probability(self, positions: np.ndarray, labels: np.ndarray) -> np.ndarray: ...

    def _ask(self, n: int) -> np.ndarray:
        new: list[int] = []
        seen = set(self._labels) | self._pending.keys()
        while len(new) < n:
            # draw in blocks of the number still wanted; keep every draw up to the n-th new item
            positions, q = self._draw(max(n - len(new), 1))
            cut = positions.size
            for i, p in enumerate(positions):
                p = int(p)
                if p not in seen:
                    seen.add(p)
                    new.append(p)
                    self._selected_with[p] = float(q[i])
                    if len(new) == n:
                        cut = i + 1
                        break
            self._draw_pos.append(positions[:cut])
            self._draw_q.append(q[:cut])
        return np.array(new, dtype=np.int64)

    def _update(self) -> None:
        self._complete = sum(p.size for p in self._draw_pos)
        self._adapt()

    def _adapt(self) -> None:
        """Update the proposal after a complete stage (a hook; nothing by default)."""

    def _draws(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions and proposal probabilities of the draws of complete stages."""
        if not self._draw_pos:
            return np.empty(0, np.int64), np.empty(0)
        pos = np.concatenate(self._draw_pos)[: self._complete]
        q = np.concatenate(self._draw_q)[: self._complete]
        return pos, q

    def _draws_everything(self) -> bool:
        return False

    def _draw_labels(self, positions: np.ndarray) -> np.ndarray:
        """Labels of the draws of complete stages (an item's one label, by default)."""
        return self._label_array(positions)

    def _labels_behind(self, positions: np.ndarray) -> int:
        """Labels the draws of complete stages cost: the distinct items, by default."""
        return len(set(positions.tolist()))

    def _estimate(self, variance: str, target: Target, posterior) -> Estimate:
        pos, q = self._draws()
        if pos.size == 0:
            raise ValueError(NEEDS_STAGE)
        labels = self._draw_labels(pos)
        losses = target.loss(pos, labels)  # (N, D)
        M, N = self.pool.size, pos.size
        w = 1.0 / (M * q)
        R = (w[:, None] * losses).mean(axis=0)  # Eq. 1
        G = target.g(R)
        if variance == "martingale":
            centred = w[:, None] * losses - R
            V = centred.T @ centred / max(N - 1, 1)
        else:
            # Section 3.3.2: mean of p^2 l l^T / (q_N q_{j-1}) - R R^T; items whose loss is
            # zero add nothing (and may have q_N = 0: the proposal ignores them)
            q_now = self._probability(pos, labels)
            w_now = np.divide(1.0, M * q_now, out=np.zeros(N), where=q_now > 0)
            V = np.einsum("n,ni,nj->ij", w * w_now, losses, losses) / N - np.outer(R, R)
        J = target.jacobian(R)
        cov = (
            clip_covariance(J @ V @ J.T) / N
        )  # Theorem 2: Sigma = J V J^T, and Cov(G_hat) = Sigma / N
        return Estimate(
            outputs=target.outputs,
            value=G,
            R=R,
            covariance=cov,
            labels_used=self._labels_behind(pos),
            n_samples=N,
            df=N - 1,
            method=self.method,
            value_range=target.measure.value_range,
            posterior=posterior,
        )


NEEDS_STAGE = "estimate() needs a complete stage: tell the labels of every item asked."


def _support_within(own: Target, other: Target) -> bool:
    """Whether ``other``'s loss is zero, for both labels, on every item where ``own``'s is."""
    if other.table is None or own.table is None:
        return False
    own_zero = ~np.any(own.table != 0, axis=(1, 2))
    other_zero = ~np.any(other.table != 0, axis=(1, 2))
    # compare item by item through the two pattern codes (chunked: pools can be huge)
    for start in range(0, own.patterns.size, 1 << 22):
        stop = start + (1 << 22)
        if np.any(own_zero[own.patterns[start:stop]] & ~other_zero[other.patterns[start:stop]]):
            return False
    return True
