"""Active model selection: label where the systems disagree until the best one is clear."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from bayeval._constraints import (
    Flag,
    Instance,
    Integer,
    OneOf,
    Optional,
    Positive,
    Prob,
    Seed,
    validate,
)
from bayeval._core import leaders
from bayeval._core import pattern_cells as kernel
from bayeval._validation import plain
from bayeval.sampling.base import Sampler

__all__ = ["CHOICES", "ModelSelection"]

#: How :class:`ModelSelection` chooses the next item: the most informative one under its model
#: or under Model Selector's, or (the baselines, under the same model and stopping rule)
#: uniformly among the items where the systems disagree, or uniformly over the pool.
CHOICES = ("information", "leaders", "disagreement", "uniform")


class ModelSelection(Sampler):
    """Choose labels that tell which of several systems is the best; stop when it is clear.

    The labels are modelled by :class:`~bayeval.models.PredictionPatterns` (one rate of
    positives per pattern of the systems' predictions, finite population). After each stage
    its posterior gives every system's measure on the pool in each draw, hence the best system
    of each draw. The next item is the one whose label is expected to tell most about which
    system is best: the mutual information between that label and the best system, computed
    from the same draws, highest for the patterns on which the likely winners disagree. Items
    on which every system agrees never change which is best and are never asked for.

    Parameters
    ----------
    pool : bayeval.Pool
        Two or more systems; their predictions are used (scores are not). A multiclass pool
        (``Pool(scores, predictions, classes=...)`` with a column per system) is modelled by
        ``PredictionPatterns(n_classes=...)``.
    measure : str or bayeval.measures.Measure, default "accuracy"
        A measure of a system's predictions with one output (``"accuracy"``, ``"f1"``, ...);
        with more than two classes, ``"accuracy"``, ``"balanced_accuracy"``, ``"macro_f1"``
        or ``"micro_f1"``.
    target : float, default 0.95
        :attr:`done` once a system's P(best) reaches it.
    regret : float, optional
        :attr:`done` also once the leading system's expected regret (the measure it is
        expected to lose against the best) is at most this.
    choose : {"information", "leaders", "disagreement", "uniform"}, default "information"
        How items are chosen: by information about the best system under the model;
        ``"leaders"``, as Model Selector does (Okanovic et al. 2025): the item that leaves
        least entropy, averaged over its possible classes, in a model where the best system
        is right on each item with a fixed probability (:mod:`bayeval._core.leaders`), so the
        labels go where the systems that got the most labels right so far disagree with
        others; or (baselines) uniformly among the items where the
        systems disagree, or uniformly over the pool. The choice never changes the model of
        P(best), only which items it learns from.
    model : bayeval.models.PredictionPatterns, optional
        Its prior and number of draws; default ``PredictionPatterns()``.
    batch_size : int, default 1
        Items per stage (the posterior is updated after each stage).
    rng : int, numpy.random.Generator or None
        Seed of the choices; the posterior draws have their own stream derived from it.

    Notes
    -----
    The stopping rule "P(best) >= 0.95" picked the true best in every run that stopped in the
    simulations of ``tests/comparison/test_model_selection.py`` (two classes) and
    ``tests/comparison/test_class_patterns.py`` (four), and in 3,041 of the 3,047 runs that
    stopped within Model Selector's budgets on SST-2, MRPC, CoLA, QNLI and PACS (seven
    classes; 1,000 runs each, the model selection section of ``benchmarks/README.md``). A
    pattern no label has reached keeps its
    prior (which follows the systems' vote as far as the labels have shown the vote right), so
    a system's measure on its own leans on that prior where labels are few (see
    :class:`~bayeval.models.PredictionPatterns`); what the labels resolve is the comparison of
    the leading systems. With more than two classes even the differences of these draws are
    too narrow: on three-system pools (``benchmarks/README.md``, ``--design selection``) the
    leader minus the worst system was covered in none of 40 runs, while
    :func:`bayeval.compare` on the same labels (``SystemConfusion(shared_errors=True)``)
    covered 0.78-1.00, its P(best) >= 0.95 in 159 of 160 runs, every time right. So
    :meth:`estimate` refits with :func:`bayeval.compare` for a multiclass pool of at most six
    systems. On PACS's 30 models neither is honest (0.16 and 0.08), and it does not; an audit
    is (below: 0.988 of the leader's differences covered after 20 audit labels, 20 runs). With two
    classes and many systems the differences hold only between the leader and its closest
    rivals, where the labels went: on Model Selector's two-class tasks (10-20 runs each) the
    difference from the most accurate other system was covered in 0.70-1.00 of the runs, the
    differences from the others in 0.03-0.35 (too small: the items no label reached keep the
    vote's prior, which does not credit the leader with its dissent). For every difference,
    audit: :meth:`ask_audit` draws items uniformly among the disagreements left, and
    :meth:`audited_differences` reads each pair's difference of accuracy from them with
    nothing assumed about how the systems err. On those tasks, at Model Selector's budgets,
    20 audit labels covered the leader's differences from every other system in 0.97-0.99 of
    the runs (mean half-width 0.04-0.12), 40 in 0.96-0.99 (0.03-0.08), and with PACS's seven
    classes 0.988 and 0.984 (:func:`bayeval.comparison.audited_differences`). Each system's
    own measure needs the agreements too: ``ask_audit(n, agreements=m)`` and
    :meth:`audited_levels` covered 0.93-0.98 of the accuracies on those tasks with 20 + 20 or
    40 + 40 audit labels (``benchmarks/README.md``).

    ``choose="leaders"`` picks the best system sooner where the vote misleads: at Model
    Selector's budgets it was right in 0.981 of 1,000 SST-2 runs and 0.993 of RTE's at 40
    labels (the default: 0.884 and 0.841), 0.962 of 500 MRPC runs at 75 (0.992), and
    0.995-1.000 on CoLA, QNLI and PACS. But its labels settle who leads on the labels, not
    P(best), so the stopping rule fires far less often within those budgets (SST-2 in 10 of
    1,000 runs, RTE and CoLA never, QNLI in 17 of 200; the default 34, 0, 76% and 90%). So
    ``"leaders"`` serves a budget to be spent, the default a stop as soon as P(best) is sure
    (``benchmarks/README.md``, model selection).

    Examples
    --------
    Five systems that share some of their errors (every system errs on the hard tenth of the
    items, at different rates):

    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(2_000) < 0.3
    >>> hard = rng.random(2_000) < 0.1
    >>> wrong = np.where(hard[:, None], rng.random((2_000, 5)) < [0.2, 0.3, 0.4, 0.5, 0.6],
    ...                  rng.random((2_000, 5)) < 0.02)
    >>> predictions = np.where(wrong, ~truth[:, None], truth[:, None]).astype(float)
    >>> pool = be.Pool(predictions, systems=["a", "b", "c", "d", "e"])
    >>> sampler = be.sampling.ModelSelection(pool, rng=0)
    >>> history = sampler.run(truth, budget=300)
    >>> sampler.done, sampler.best, sampler.labels_used < 150   # 131 labels here
    (True, 'a', True)
    >>> [round(float(v), 3) for v in (predictions == truth[:, None]).mean(axis=0)]  # the truth
    [0.966, 0.956, 0.945, 0.931, 0.923]

    Then an audit of 40 items drawn at random among the disagreements left, and every
    difference read from it (here the leader's 95% intervals, in items of the 2,000):

    >>> audit = sampler.ask_audit(40)
    >>> sampler.tell(audit, truth[pool.positions(audit)])
    >>> differences = sampler.audited_differences()  # every audit item labelled
    >>> (differences.interval().sel(system="a") * 2_000).round().astype(int).values.tolist()
    [[0, 0], [-4, 44], [5, 69], [35, 101], [46, 114]]
    >>> right = predictions == truth[:, None]
    >>> (right[:, 0].sum() - right.sum(axis=0)).tolist()  # the truth
    [0, 20, 43, 69, 86]
    """

    method: ClassVar[str] = "model_selection"
    multiclass: ClassVar[bool] = True
    multiclass_systems: ClassVar[bool] = True

    @validate(
        target=Prob(),
        regret=Optional(Positive()),
        choose=OneOf(CHOICES),
        model=Optional(
            Instance(
                "bayeval.models.prediction_patterns.PredictionPatterns", "a PredictionPatterns"
            )
        ),
        batch_size=Integer(minimum=1),
        rng=Seed(),
    )
    def __init__(
        self,
        pool: Any,
        measure: Any = "accuracy",
        *,
        target: float = 0.95,
        regret: float | None = None,
        choose: str = "information",
        model: Any = None,
        batch_size: int = 1,
        rng: Any = None,
    ):
        from bayeval.models import PredictionPatterns
        from bayeval.models._systems import check_measure

        n_classes = 2 if pool.classes is None else pool.n_classes
        measure = check_measure(measure, n_classes, "measure")
        if pool.n_systems < 2:
            raise ValueError(
                f"`pool` must hold two or more systems to select among; got {pool.n_systems}."
            )
        if model is not None and model.n_classes != n_classes:
            raise ValueError(f"`model` must have the pool's {n_classes} classes; got {model!r}.")
        super().__init__(pool, measure, batch_size=batch_size, rng=rng)
        self.target_prob, self.regret_tolerance, self.choose = target, regret, choose
        self.model = PredictionPatterns(n_classes=n_classes) if model is None else model
        self._predictions = pool.predictions.reshape(pool.size, -1).astype(np.int8)
        self._disagree = self._predictions.min(axis=1) != self._predictions.max(axis=1)
        self._askable = self._disagree if choose != "uniform" else np.ones(pool.size, dtype=bool)
        self._audit: list[int] = []  # positions drawn by ask_audit, in order
        self._new_draws()
        self._fit()

    # -- what is known -------------------------------------------------------------------------
    @property
    def prob_best(self) -> np.ndarray:
        """P(system is the best) in the latest posterior, ``(n_systems,)`` (ties shared)."""
        return self._prob_best

    @property
    def expected_regret(self) -> np.ndarray:
        """Expected loss of choosing each system, ``(n_systems,)``, in the latest posterior."""
        return self._regret

    @property
    def best(self) -> str:
        """The system most likely to be the best (ties: the lower expected regret)."""
        order = np.lexsort((self._regret, -self._prob_best))
        return str(self.pool.systems[order[0]])

    @property
    def done(self) -> bool:
        """Whether the stopping rule holds: P(best) >= ``target`` or regret <= ``regret``."""
        if self._prob_best.max() >= self.target_prob:
            return True
        return self.regret_tolerance is not None and self._regret.min() <= self.regret_tolerance

    def stop_reason(self) -> str | None:
        """Return why the stopping rule holds (``"P(best) 0.953 >= 0.95: 'a'"``), or None."""
        if not self.done:
            return None
        if self._prob_best.max() >= self.target_prob:
            return f"P(best) {self._prob_best.max():.3f} >= {self.target_prob}: {self.best!r}"
        return f"expected regret {self._regret.min():.4f} <= {self.regret_tolerance}: {self.best!r}"

    @property
    def disagreements(self) -> int:
        """Items on which the systems do not all predict the same."""
        return int(np.count_nonzero(self._disagree))

    @validate(refit=Optional(Flag()))
    def estimate(self, *, measure: Any = None, refit: bool | None = None):
        """Return the comparison of the systems from the labels so far.

        Parameters
        ----------
        measure : str or bayeval.measures.Measure, optional
            Default the sampler's; any other measure of predictions.
        refit : bool, optional
            ``False``: the comparison holds the draws :attr:`prob_best` and :attr:`done` come
            from, so its P(best) is theirs. ``True``: :func:`bayeval.compare` on the same
            labels, with its default model of the pool. Default: ``True`` for a multiclass pool
            of at most :data:`bayeval.comparison.MAX_SCORED_SYSTEMS` systems, whose
            differences from these draws are too narrow (the class's notes), ``False``
            otherwise.

        Returns
        -------
        bayeval.comparison.Comparison
        """
        from bayeval.comparison import MAX_SCORED_SYSTEMS, Comparison, compare
        from bayeval.models._systems import check_measure

        n_classes = self.model.n_classes
        measure = self.measure if measure is None else check_measure(measure, n_classes, "measure")
        if refit is None:
            refit = n_classes > 2 and self.pool.n_systems <= MAX_SCORED_SYSTEMS
        if refit:
            positions = self._labelled_positions()
            # its own stream, so that asking for an estimate leaves the choices as they were
            rng = np.random.default_rng([self._posterior_key, 1])
            labels = self._label_array(positions)
            return compare(self.pool, positions, labels, measure=measure, rng=rng)
        tree = self._draws.to_datatree([measure], list(self.pool.systems))
        return Comparison(measure=measure.name, model=repr(self.model), posterior=tree)

    @property
    def audit_left(self) -> int:
        """Disagreements neither labelled nor pending: the most :meth:`ask_audit` can draw."""
        return int(np.count_nonzero(self._audit_free(self._disagree)))

    @property
    def agreements_left(self) -> int:
        """Agreements neither labelled nor pending: the most ``ask_audit(agreements=)`` draws."""
        return int(np.count_nonzero(self._audit_free(~self._disagree)))

    def _audit_free(self, stratum: np.ndarray) -> np.ndarray:
        free = stratum.copy()
        free[self._taken()] = False
        return free

    @property
    def audit(self) -> np.ndarray:
        """Ids drawn by :meth:`ask_audit` so far, in the order drawn (labelled or pending)."""
        return self._ids(np.array(self._audit, dtype=np.int64))

    @property
    def audit_agreements(self) -> int:
        """How many of :attr:`audit` are agreements (the others are disagreements)."""
        return int(np.count_nonzero(~self._disagree[np.array(self._audit, dtype=np.int64)]))

    def ask(self, n: int | None = None) -> np.ndarray:
        """Choose ``n`` new items to label (see :meth:`bayeval.sampling.Sampler.ask`).

        Raises
        ------
        ValueError
            Also once :meth:`ask_audit` has drawn an audit: the audit must come after every
            chosen label (items chosen later would be chosen from what the audit showed, and
            the audit would no longer be a random sample of the items left).
        """
        if self._audit:
            raise ValueError(
                "ask() cannot choose items after ask_audit(): the audit must come after every "
                f"chosen label ({len(self._audit)} audit items drawn); ask_audit() draws more."
            )
        return super().ask(n)

    @validate(n=Integer(minimum=0), agreements=Integer(minimum=0))
    def ask_audit(self, n: int, *, agreements: int = 0) -> np.ndarray:
        """Draw ``n`` items uniformly among the disagreements not yet labelled: an audit.

        Label them and :meth:`tell` them like any others, after the labels the sampler chose;
        :meth:`audited_differences` then reads every pairwise difference from them, with
        nothing assumed about how the systems err. They count as labels (the sampler learns
        from them too). Once an audit is drawn the sampler chooses no more items
        (:meth:`ask` raises); calling ``ask_audit`` again draws more of the audit, uniformly
        among the items of each stratum still free, so that all of them together are one
        simple random sample of each.

        Parameters
        ----------
        n : int
            Disagreements wanted (at most :attr:`audit_left`).
        agreements : int, default 0
            Also this many items on which every system agrees (at most
            :attr:`agreements_left`): they move every system alike, so differences never need
            them, but each system's own measure does (:meth:`audited_levels`).

        Returns
        -------
        numpy.ndarray
            Their pool ids, in the order drawn (the disagreements first).
        """
        self._check_live()
        if n + agreements == 0:
            raise ValueError("`n` and `agreements` must not both be 0: the audit needs items.")
        drawn = []
        for wanted, stratum, name, what in (
            (n, self._disagree, "n", "disagreements"),
            (agreements, ~self._disagree, "agreements", "agreements"),
        ):
            free = np.flatnonzero(self._audit_free(stratum))
            if wanted > free.size:
                raise ValueError(
                    f"`{name}` must be at most {free.size}, the {what} neither labelled nor "
                    f"pending; got {wanted}."
                )
            drawn.append(self._rng.choice(free, size=wanted, replace=False) if wanted else free[:0])
        positions = np.concatenate(drawn)
        self._pending.update(dict.fromkeys(int(p) for p in positions))
        self._audit.extend(int(p) for p in positions)
        return self._ids(positions)

    @validate(prior=Positive(), draws=Integer(minimum=1))
    def audited_differences(
        self, audit: Any = None, *, measure: Any = None, prior: float = 0.5, draws: int = 1000
    ):
        """Return every pairwise difference of a measure from the chosen labels and an audit.

        Parameters
        ----------
        audit : array_like, optional
            Pool ids drawn by :meth:`ask_audit` and told, after every label the sampler
            chose; default every item of :attr:`audit` labelled so far (an item drawn and not
            yet told is left out: what is read is the audit's labelled part, which is a
            random sample as long as whether an item was labelled does not depend on its
            label).
        measure : str or bayeval.measures.Measure, optional
            Default the sampler's. Accuracy needs only disagreements in the audit; any other
            measure (two classes) needs agreements too (``ask_audit(n, agreements=m)``).
        prior, draws
            As :func:`bayeval.comparison.audited_differences`.

        Returns
        -------
        bayeval.comparison.Differences
            See :func:`bayeval.comparison.audited_differences`.
        """
        from bayeval.comparison import audited_differences

        return self._read_audit(audited_differences, audit, 2, measure, prior=prior, draws=draws)

    @validate(prior=Positive(), draws=Integer(minimum=1))
    def audited_levels(self, *, measure: Any = None, prior: float = 0.5, draws: int = 1000):
        """Return each system's own measure from the chosen labels and the audit.

        The audit must hold agreements (``ask_audit(n, agreements=m)``) as well as
        disagreements, wherever items of each are left: see
        :func:`bayeval.comparison.audited_levels`. Every item of :attr:`audit` labelled so
        far is read.

        Parameters
        ----------
        measure : str or bayeval.measures.Measure, optional
            Default the sampler's.
        prior, draws
            As :func:`bayeval.comparison.audited_levels`.

        Returns
        -------
        bayeval.comparison.Levels
        """
        from bayeval.comparison import audited_levels

        return self._read_audit(audited_levels, None, 3, measure, prior=prior, draws=draws)

    def _read_audit(self, read: Any, audit: Any, stream: int, measure: Any, **options: Any):
        """Call ``read`` (an audited reading) on the chosen labels and the audit's.

        ``stream``: the posterior key's substream of its draws, so that reading leaves the
        choices as they were.
        """
        chosen, audited = self._audit_split(audit)
        return read(
            self.pool,
            chosen,
            self._label_array(chosen),
            audited,
            self._label_array(audited),
            measure=self.measure if measure is None else measure,
            rng=np.random.default_rng([self._posterior_key, stream]),
            **options,
        )

    def _audit_split(self, audit: Any) -> tuple[np.ndarray, np.ndarray]:
        """Return the positions of the chosen labelled items and of the audit's labelled ones.

        ``audit``: ids of the audit (default: every labelled item of :attr:`audit`).
        """
        if audit is None:
            audited = np.array(self._audit, dtype=np.int64)
            audited = audited[self.is_labelled(audited)]
            if audited.size == 0:
                raise ValueError(
                    "`audit` was not given and no audit item is labelled yet: draw one with "
                    "ask_audit() and tell() its labels."
                )
        else:
            audited = np.atleast_1d(self.pool.positions(audit)).astype(np.int64)
        unlabelled = ~np.isin(audited, self._labelled_positions())
        if unlabelled.any():
            ids = self._ids(audited[unlabelled][:5])
            raise ValueError(
                f"`audit` must hold labelled items (asked with ask_audit and told); got "
                f"unlabelled ids {plain(ids.tolist())!r}."
            )
        labelled = self._labelled_positions()
        return labelled[~np.isin(labelled, audited)], audited

    @validate(budget=Integer(minimum=1))
    def run(self, oracle: Any, budget: int):
        """Ask, label with ``oracle`` and tell until :attr:`done` or ``budget`` labels are used.

        Parameters
        ----------
        oracle : array_like or callable
            The true labels of every pool item (in pool order), or a function from an array
            of ids to their labels (0/1, or classes in a multiclass pool).
        budget : int
            The most labels to use in all (those already told count).

        Returns
        -------
        xarray.Dataset
            ``prob_best`` and ``expected_regret`` (dims ``labels``, ``system``) after each
            stage of this run.
        """
        import xarray as xr

        from bayeval.sampling.run import labeller

        self.check_budget(budget)
        label = labeller(oracle, self.pool)
        used, prob_best, regret = [], [], []
        while not self.done and self.labels_used < budget:
            ids = self.ask(min(self.batch_size, budget - self.labels_used))
            self.tell(ids, label(ids))
            used.append(self.labels_used)
            prob_best.append(self._prob_best)
            regret.append(self._regret)
        dims = ("labels", "system")
        return xr.Dataset(
            {
                "prob_best": (dims, np.reshape(prob_best, (-1, self.pool.n_systems))),
                "expected_regret": (dims, np.reshape(regret, (-1, self.pool.n_systems))),
            },
            coords={"labels": used, "system": list(self.pool.systems)},
        )

    # -- the sampler's hooks -------------------------------------------------------------------
    def _build_target(self, pool: Any, measure: Any) -> None:
        return None  # the model, not a loss table, gives the measures (many systems allowed)

    @property
    def labels_reachable(self) -> int:
        """The most labels in all (those told count) that the choice can ask for."""
        return self.labels_used + self._available()

    @validate(budget=Integer(minimum=1))
    def check_budget(self, budget: int) -> None:
        """Raise unless ``budget`` labels in all can be chosen (those told count).

        The choice labels only the items on which the systems disagree (any item with
        ``choose="uniform"``), each once, so a budget above them cannot be spent.

        Raises
        ------
        ValueError
            Naming ``budget``, with the most it can be.

        Examples
        --------
        >>> import bayeval as be
        >>> pool = be.Pool([[0, 1], [1, 1], [0, 0], [1, 0]], systems=["a", "b"])
        >>> be.sampling.ModelSelection(pool, rng=0).check_budget(3)
        Traceback (most recent call last):
        ...
        ValueError: `budget` must be at most 2: the items 'information' choice can label ...
        """
        reachable = self.labels_reachable
        if budget > reachable:
            raise ValueError(
                f"`budget` must be at most {reachable}: the items {self.choose!r} choice can "
                f"label ({self.disagreements} of the {self.pool.size} items are ones on which "
                f"the systems disagree); got {budget}."
            )

    def _available(self) -> int:
        taken = self._taken()
        return int(np.count_nonzero(self._askable) - np.count_nonzero(self._askable[taken]))

    def _on_labels(self, positions: np.ndarray, labels: np.ndarray) -> None:
        self._draws.tell(positions, labels)

    def _update(self) -> None:
        self._fit()

    def _recount(self) -> None:  # a re-labelled copy: its own draws from its labels
        self._new_draws()
        self._fit()

    def _ask(self, n: int) -> np.ndarray:
        free = self._askable.copy()
        free[self._taken()] = False
        if self.choose == "leaders":
            return self._ask_leaders(free, n)
        cell = self._draws.cell
        if self.choose != "information" or not np.any(self._gain[cell[free]] > 0):
            return self._rng.choice(np.flatnonzero(free), size=n, replace=False)
        # cells by decreasing information (random order among equals), one item per cell per
        # pass, until n items are chosen
        n_cells = self._gain.size
        order = np.lexsort((self._rng.random(n_cells), -self._gain))
        order = order[self._gain[order] > 0]
        chosen: list[int] = []
        while len(chosen) < n:
            progressed = False
            for c in order:
                items = np.flatnonzero(free & (cell == c))
                if items.size:
                    pick = int(self._rng.choice(items))
                    chosen.append(pick)
                    free[pick] = False
                    progressed = True
                    if len(chosen) == n:
                        break
            if not progressed:  # the informative cells are used up: the rest uniformly
                rest = np.flatnonzero(free)
                chosen.extend(self._rng.choice(rest, size=n - len(chosen), replace=False))
        return np.array(chosen, dtype=np.int64)

    def _ask_leaders(self, free: np.ndarray, n: int) -> np.ndarray:
        """Return the ``n`` free items whose labels leave Model Selector's model least entropy."""
        positions = self._labelled_positions()
        labels = self._label_array(positions)
        weights = leaders.leader_weights((self._predictions[positions] == labels[:, None]).sum(0))
        entropy = leaders.leader_entropy(self._predictions[free], weights, self.model.n_classes)
        # the least entropy first, at random among equals
        order = np.lexsort((self._rng.random(entropy.size), entropy))
        return np.flatnonzero(free)[order[:n]]

    def _estimate(self, variance, target, posterior):  # estimate() is overridden
        raise NotImplementedError

    def _new_draws(self) -> None:
        """Draw the posterior afresh from the labels so far (uniforms from the sampler's key)."""
        rng = np.random.default_rng([self._posterior_key, 0])
        self._draws = self.model.draws_for(self._predictions, rng)
        positions = self._labelled_positions()
        self._draws.tell(positions, self._label_array(positions))

    def _fit(self) -> None:
        """P(best), regret and each cell's information from the current draws."""
        from bayeval.models._systems import measure_from_counts

        with np.errstate(invalid="ignore", divide="ignore"):
            values = measure_from_counts(self.measure, self._draws.confusion())
        self._prob_best, self._regret = kernel.best_shares(values)
        self._gain = np.zeros(self._draws.sizes.size)  # the model's information per cell
        if self.choose == "information":
            rate = self._draws.unlabelled_rate
            defined = ~np.isnan(values).any(axis=1)
            if not defined.all():  # draws where some measure is undefined tell nothing
                values, rate = values[defined], rate[defined]
            best = kernel.best_in_draws(values, np.random.default_rng(self._posterior_seed()))
            mean = self._draws.unlabelled_rate_mean if defined.all() else None
            gain = kernel.information_gain(best, rate, mean)
            # a cell on which every system that is best in some draw predicts alike moves them
            # all alike: its label cannot tell them apart (its gain is Monte Carlo noise)
            winners = self._draws.patterns[:, np.unique(best)]
            self._gain = np.where(winners.min(axis=1) != winners.max(axis=1), gain, 0.0)
