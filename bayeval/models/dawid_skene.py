"""Annotators who disagree: a Dawid–Skene model of every answer, gold items optional.

Several people label the same items and do not always agree. :class:`DawidSkene` keeps every
answer (two answers of one person to one item count twice) and gives the posterior of each
item's true class and of each annotator's confusion matrix; its label draws carry the
annotators' noise into a measure's interval (:meth:`AnnotatorPosterior.measure_posterior`).
Model card: ``models/dawid_skene/spec.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import special

from bayeval._constraints import Integer, OneOf, Optional, Positive, validate_fields
from bayeval._core import dawid_skene as kernel
from bayeval._core.confusion_gibbs import gibbs_responses, sweep_classes
from bayeval._validation import check_draws, check_int, check_rng

__all__ = ["AnnotatorPosterior", "DawidSkene", "ImputedMeasure"]


@dataclass(frozen=True, kw_only=True)
@validate_fields(
    class_prior=Positive(),
    correct_prior=Positive(),
    error_prior=Optional(Positive()),
    draws=Integer(minimum=1),
    chains=Integer(minimum=1),
    warmup=Integer(minimum=0),
    engine=OneOf(("fast", "pymc")),
)
class DawidSkene:
    """Every annotator's confusion matrix and every item's true class, from all the answers.

    Item ``i`` is of class ``c`` with probability ``pi[c]``; annotator ``a`` answers ``j`` for it
    with probability ``theta[a, c, j]``, independently of the other answers given the class
    (Dawid & Skene 1979). Priors: ``pi ~ Dirichlet(class_prior)``; each row ``theta[a, c] ~
    Dirichlet`` with ``correct_prior`` on the right class and ``error_prior`` on each wrong one.
    Gold items (of known class) are known.

    Parameters
    ----------
    class_prior : float, default 1.0
        The prevalences' Dirichlet concentration, every class alike.
    correct_prior : float, default 2.0
        Each row's weight on the right class.
    error_prior : float, optional
        The weight on each wrong class; default ``1 / (C - 1)``, one in all, so that a priori
        an annotator is right two times in three on average whatever the number of classes
        (with two classes: spread flat from 0 to 1). This tells the classes apart (the model is
        otherwise the same with the classes swapped); a few dozen answers outweigh it. (A
        weight of one on each wrong class would say, with five classes, that an annotator is
        right one time in three, and bias the annotators' accuracy down: model card.)
    draws, chains : int, default 1000 and 4
        Posterior draws in all, split into ``chains``.
    warmup : int, default 200
        Gibbs sweeps discarded per chain (``engine="fast"``); NUTS tunes 1,000 steps.
    engine : {"fast", "pymc"}, default "fast"
        ``"fast"``: Gibbs sampling of the classes and the parameters (conjugate; a sweep costs
        a few matrix products over items and answers). ``"pymc"``: NUTS on the parameters with
        the classes summed out, then the classes drawn given each draw.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models import DawidSkene
    >>> items = ["q1", "q1", "q1", "q2", "q2", "q2", "q3", "q3"]
    >>> annotators = ["ann", "bob", "cy", "ann", "bob", "cy", "ann", "bob"]
    >>> answers = [1, 1, 0, 0, 0, 0, 1, 0]
    >>> fit = DawidSkene().fit(items, annotators, answers, gold={"q3": 1}, rng=0)
    >>> fit.labels().to_dict()
    {'q1': 1, 'q2': 0, 'q3': 1}
    >>> int(fit.annotator_summary().loc["ann", "answers"])
    3
    """

    class_prior: float = 1.0
    correct_prior: float = 2.0
    error_prior: float | None = None
    draws: int = 1000
    chains: int = 4
    warmup: int = 200
    engine: Literal["fast", "pymc"] = "fast"

    def __post_init__(self):
        """Check ``draws`` against ``chains`` (the fields are checked)."""
        check_draws(self.draws, self.chains)

    def confusion_prior(self, n_classes: int) -> np.ndarray:
        """Return the Dirichlet concentrations of each row ``theta[a, c]``: ``(C, C)``."""
        error = 1 / (n_classes - 1) if self.error_prior is None else self.error_prior
        return np.where(np.eye(n_classes, dtype=bool), self.correct_prior, error)

    def fit(
        self,
        items: Any,
        annotators: Any,
        answers: Any,
        *,
        gold: Any = None,
        classes: Any = None,
        pool: Any = None,
        n_strata: int = 8,
        rng: Any = None,
    ) -> AnnotatorPosterior:
        """Draw the true classes and the annotators' confusion matrices from the posterior.

        Parameters
        ----------
        items : array_like
            The item of each answer (ids: integers or strings); an item may have many.
        annotators : array_like of str
            Who gave each answer.
        answers : array_like
            Each answer, a class of ``classes``.
        gold : mapping of item to class, optional
            Items of known class (gold questions); they need no answer.
        classes : sequence, optional
            The label space; default the sorted distinct answers and gold classes, and at
            least ``(0, 1)`` for 0/1 answers.
        pool : bayeval.Pool, optional
            The pool the items come from (``items`` are its ids): each item's class prior is
            then that of its score stratum (``n_strata`` strata of equal size by the first
            system's score, each with its own prevalences), so that an item the system scores
            high is not pulled towards the pool's majority class. Without it, one prevalence
            for all items (Dawid & Skene's).
        n_strata : int, default 8
            Score strata with ``pool``.
        rng : int or numpy.random.Generator, optional
            Seed of every draw.

        Returns
        -------
        AnnotatorPosterior

        Raises
        ------
        ValueError
            For arrays of different lengths, an annotator that is not a string, an answer or
            gold class outside ``classes``, or a gold item given two classes.
        """
        rng = check_rng(rng)
        check_int(n_strata, "n_strata", minimum=1)
        data = _answers(items, annotators, answers, gold, classes)
        stratum = None
        if pool is not None:  # the items' score strata, numbered 0.. among those present
            cut = pool.stratify(n_strata, "quantile", system=0 if pool.n_systems > 1 else None)
            stratum = np.unique(cut.ids[pool.positions(data.items)], return_inverse=True)[1]
        C, A = len(data.classes), len(data.annotators)
        responses = kernel.answer_counts(data.item, data.annotator, data.answer,
                                         (len(data.items), A, C))  # fmt: skip
        labelled = np.zeros((len(data.items), C), dtype=np.int64)
        known = data.gold >= 0
        labelled[known, data.gold[known]] = 1
        unlabelled = (~known).astype(np.int64)
        class_prior = np.full(C, self.class_prior)
        if self.engine == "pymc":
            pi, theta, classes_drawn = self._nuts(
                responses, labelled, unlabelled, data, stratum, rng
            )
        else:
            out = gibbs_responses(
                responses, labelled, unlabelled, class_prior=class_prior,
                confusion_prior=self.confusion_prior(C), chains=self.chains,
                draws=self.draws // self.chains, warmup=self.warmup, rng=rng, keep_classes=True,
                stratum=np.zeros(len(data.items), int) if stratum is None else stratum,
            )  # fmt: skip
            pi, theta = out["class_prior"], out["confusion"]
            classes_drawn = out["classes"].argmax(axis=-1)  # one item per pattern
        stratum = np.zeros(len(data.items), int) if stratum is None else stratum
        return AnnotatorPosterior(self, data, pi, theta, classes_drawn.astype(np.int16), stratum)

    def _nuts(self, responses, labelled, unlabelled, data, stratum, rng):
        from scipy import special

        from bayeval.models._system_confusion_pymc import (
            confusion_mixture_model,
            sample_confusion_mixture,
        )

        C = len(data.classes)
        coords = {"annotator": list(data.annotators), "true_class": list(data.classes),
                  "answer": list(data.classes)}  # fmt: skip
        # one stratum goes without the stratum dim: pytensor 3.3's numba backend fails to
        # compile NUTS's gradient for a Dirichlet of shape (1, C) indexed per item
        if stratum is not None and stratum.max() == 0:
            stratum = None
        model = confusion_mixture_model(
            np.full(C, self.class_prior), self.confusion_prior(C), responses, labelled,
            unlabelled, coords, stratum=stratum,
        )  # fmt: skip
        pi, theta = sample_confusion_mixture(model, self.draws, self.chains, rng)
        if stratum is None:
            pi, stratum = pi[:, :, None, :], np.zeros(len(data.items), int)
        A = theta.shape[2]
        log_theta = np.log(theta).swapaxes(-1, -2).reshape(*theta.shape[:2], A * C, C)
        log_pi = np.log(pi)[:, :, stratum, :]  # (chains, draws, items, C)
        q = special.softmax(log_pi + responses @ log_theta, axis=-1)
        q = np.where(unlabelled[:, None] > 0, q, labelled)  # gold items are known
        u = rng.random(q.shape[:-1] + (1,))
        drawn = np.minimum((u > np.cumsum(q, axis=-1)).sum(axis=-1), C - 1)
        return pi, theta, drawn


@dataclass(frozen=True)
class _Data:
    items: np.ndarray  # the distinct items, in order of first appearance
    annotators: tuple
    classes: tuple
    item: np.ndarray  # per answer: index into items
    annotator: np.ndarray
    answer: np.ndarray  # per answer: index into classes
    gold: np.ndarray  # per item: index into classes, -1 if not gold
    answers_by_annotator: np.ndarray


def _answers(items, annotators, answers, gold, classes) -> _Data:
    """Validate the answers and index them (see :meth:`DawidSkene.fit`)."""
    import pandas as pd

    # annotators are checked as given: numpy would turn ["a", 7] into strings
    given = isinstance(annotators, np.ndarray | pd.Series)
    raw = annotators.tolist() if given else list(annotators)
    not_text = [i for i, a in enumerate(raw) if not isinstance(a, str)]
    if not_text:
        i = not_text[0]
        raise ValueError(
            f"`annotators` must be strings (annotator ids); entry {i} is {_plain(raw[i])!r}."
        )
    items, annotators, answers = (np.asarray(x) for x in (items, raw, answers))
    if not (items.ndim == annotators.ndim == answers.ndim == 1) or not (
        items.size == annotators.size == answers.size
    ):
        raise ValueError(
            "`items`, `annotators` and `answers` must be 1-d arrays of one entry per answer; "
            f"got shapes {items.shape}, {annotators.shape} and {answers.shape}."
        )
    if items.size == 0:
        raise ValueError("`answers` must hold at least one answer; got none.")
    gold = {} if gold is None else gold
    if isinstance(gold, pd.Series):
        if gold.index.has_duplicates:
            dup = gold.index[gold.index.duplicated()][0]
            values = sorted({_plain(v) for v in gold.loc[[dup]].tolist()}, key=repr)
            if len(values) > 1:
                raise ValueError(
                    f"`gold` gives item {_plain(dup)!r} conflicting classes: {values}."
                )
            gold = gold[~gold.index.duplicated()]
        gold = gold.to_dict()
    if not isinstance(gold, Mapping):
        raise ValueError(
            f"`gold` must be a mapping (or pandas Series) of item to class; got "
            f"{type(gold).__name__}."
        )
    found = sorted({_plain(a) for a in answers.tolist()} | {_plain(g) for g in gold.values()},
                   key=repr)  # fmt: skip
    if classes is None:
        classes = tuple(sorted(set(found) | {0, 1})) if set(found) <= {0, 1} else tuple(found)
    else:
        classes = tuple(_plain(c) for c in classes)
        for name, values in (("answers", answers.tolist()), ("gold", list(gold.values()))):
            bad = [v for v in values if _plain(v) not in classes]
            if bad:
                raise ValueError(
                    f"`{name}` must hold classes of {list(classes)}; got {_plain(bad[0])!r}."
                )
    codes = {c: k for k, c in enumerate(classes)}
    item_codes, distinct = pd.factorize(pd.Index(items.tolist() + list(gold)))
    item_codes = np.asarray(item_codes)
    annotator_codes, names = pd.factorize(annotators)
    gold_class = np.full(len(distinct), -1)
    gold_class[item_codes[items.size :]] = [codes[_plain(v)] for v in gold.values()]
    return _Data(
        items=np.asarray(distinct),
        annotators=tuple(str(n) for n in names),
        classes=classes,
        item=item_codes[: items.size],
        annotator=np.asarray(annotator_codes),
        answer=np.array([codes[_plain(a)] for a in answers.tolist()], dtype=np.int64),
        gold=gold_class,
        answers_by_annotator=np.bincount(annotator_codes, minlength=len(names)),
    )


def _plain(value: Any) -> Any:
    """Return a numpy scalar as the Python one."""
    return value.item() if hasattr(value, "item") else value


class AnnotatorPosterior:
    """The draws of a :meth:`DawidSkene.fit`: true classes, confusion matrices, prevalences.

    Attributes
    ----------
    items : numpy.ndarray
        The items, in order of first appearance (answers, then gold).
    annotators, classes : tuple
        The annotators' ids and the label space.
    class_prior : numpy.ndarray
        ``(chains, draws, S, C)`` the prevalences of each of ``S`` strata (one without a
        pool).
    confusion : numpy.ndarray
        ``(chains, draws, A, C, C)``: ``confusion[..., a, c, j]`` = P(annotator ``a`` answers
        ``j`` | class ``c``).
    class_draws : numpy.ndarray
        ``(chains, draws, n_items)``: each item's class (an index into ``classes``) per draw.
    """

    def __init__(self, spec, data, class_prior, confusion, class_draws, stratum):
        self.spec, self._data, self._stratum = spec, data, stratum
        self.items, self.annotators, self.classes = data.items, data.annotators, data.classes
        self.class_prior, self.confusion, self.class_draws = class_prior, confusion, class_draws

    def with_items(self, items: Any) -> AnnotatorPosterior:
        """Return the same posterior with its items renamed: ``items[k]`` for ``self.items[k]``.

        For example a pool's ids as its positions, which
        :meth:`bayeval.models.ClassCalibration.posterior` takes.
        """
        items = np.asarray(items)
        if items.shape != self.items.shape:
            raise ValueError(
                f"`items` must rename each of the {len(self.items)} items; got shape {items.shape}."
            )
        data = dataclasses.replace(self._data, items=items)
        return AnnotatorPosterior(
            self.spec, data, self.class_prior, self.confusion, self.class_draws, self._stratum
        )

    def label_probability(self):
        """Return each item's posterior probability of each class (a DataFrame, items x classes)."""
        import pandas as pd

        C = len(self.classes)
        flat = self.class_draws.reshape(-1, len(self.items))
        shares = np.stack([(flat == c).mean(axis=0) for c in range(C)], axis=1)
        return pd.DataFrame(shares, index=pd.Index(self.items, name="item"),
                            columns=list(self.classes))  # fmt: skip

    def labels(self):
        """Return each item's most probable class: the aggregated labels (a Series by item)."""
        import pandas as pd

        probability = self.label_probability()
        best = np.asarray(self.classes, dtype=object)[probability.to_numpy().argmax(axis=1)]
        return pd.Series(best, index=probability.index, name="label")

    def responses(self) -> tuple[np.ndarray, np.ndarray]:
        """Return the answers as counts and the gold classes, indexed as ``items``/``classes``.

        ``responses[i, a * C + j]``: how often annotator ``a`` answered class ``j`` for item
        ``i``; ``gold[i]``: the gold class of item ``i``, ``-1`` for the others.
        """
        data, shape = self._data, (len(self.items), len(self.annotators), len(self.classes))
        return kernel.answer_counts(data.item, data.annotator, data.answer, shape), data.gold

    def accuracy_draws(self) -> np.ndarray:
        """Return ``(chains, draws, A)``: each annotator's chance of answering right.

        That is ``sum_c pi_c theta[a, c, c]`` for an item drawn at random from those answered,
        ``pi`` the strata's prevalences weighted by their items.
        """
        diagonal = np.diagonal(self.confusion, axis1=-2, axis2=-1)  # (chains, draws, A, C)
        weight = np.bincount(self._stratum, minlength=self.class_prior.shape[2])
        prevalence = np.einsum("s,...sc->...c", weight / weight.sum(), self.class_prior)
        return np.einsum("...c,...ac->...a", prevalence, diagonal)

    def annotator_summary(self, prob: float = 0.95):
        """Return each annotator's answers and accuracy with its equal-tailed ``prob`` interval.

        A DataFrame indexed by annotator: ``answers``, ``accuracy`` (the posterior median of
        ``sum_c pi_c theta[a, c, c]``, the chance that the annotator's answer for an item drawn
        from the pool is right), ``accuracy_lower`` and ``accuracy_upper``.
        """
        import pandas as pd

        draws = self.accuracy_draws().reshape(-1, len(self.annotators))
        lower, median, upper = np.quantile(draws, [(1 - prob) / 2, 0.5, (1 + prob) / 2], axis=0)
        return pd.DataFrame(
            {"answers": self._data.answers_by_annotator, "accuracy": median,
             "accuracy_lower": lower, "accuracy_upper": upper},
            index=pd.Index(self.annotators, name="annotator"),
        )  # fmt: skip

    def measure_posterior(
        self,
        bound: Any,
        *,
        imputations: int = 100,
        burn: int = 20,
        sweeps: int = 10,
        rng: Any = None,
    ) -> ImputedMeasure:
        """Return draws of a measure of a pool whose labels the annotators gave, noise included.

        The joint posterior of the labelled items' true labels, the annotators' confusion
        matrices and the model of the labels ``bound`` (its calibration curve is the items'
        prior: an item the system scores high is likely positive before anyone answers), by
        data augmentation (Tanner & Wong 1987): from a draw of this fit, alternately the
        curve and the measure given the labels (``bound.fit``), then ``sweeps`` times the
        confusions given the labels and answers and the labels given the curve, the
        confusions and the answers. After ``burn`` rounds each of ``imputations`` rounds
        contributes ``bound.spec.draws / imputations`` draws of the measure, so the
        annotators' noise widens its interval.

        The rounds are autocorrelated (the labels are most of what is unknown, so each round
        moves them little): with 3 of 6 annotators right on 65-85% of 1,000 items, 400 rounds
        of one sweep held 27-124 independent imputations of the measure (six chains), so the
        20 rounds once kept held about three, too few for the interval's tails; ten sweeps
        (cheap: no curve is fitted in them) gave 11-165 (median 90 against 65). Hence the
        defaults: 100 rounds, ten sweeps (``benchmarks/README.md``, annotators). The 400
        draws of ``ScoreCalibration``'s default then hold about 30 independent ones, and the
        interval's ends carry Monte Carlo error (about 1.5-2 points of coverage at 95%): for
        a figure to report, ``imputations=400`` with ``ScoreCalibration(draws=1600)`` (four
        times the time).

        With ``ScoreCalibration(engine="pymc")`` the same joint posterior is drawn by NUTS
        instead: the curve and the confusions, each labelled item's label summed out of its
        likelihood (``sum_c P(c | curve) prod P(answer | c)``); then per draw the labels
        from their conditional posterior and the measure given them. No rounds: ``imputations``,
        ``burn`` and ``sweeps`` do not apply. The two agree (``tests/models/test_dawid_skene.py``).

        Parameters
        ----------
        bound : bayeval.models.BoundCalibration
            ``ScoreCalibration().bind(pool, measure)`` (or ``CellRates().bind(...)``, data
            augmentation only); the items must be ids of ``pool``. Its engine chooses data
            augmentation (``"fast"``) or NUTS (``"pymc"``).
        imputations, burn : int, default 100 and 20
            Rounds kept, and rounds discarded first (data augmentation).
        sweeps : int, default 10
            Sweeps of the annotators' model (confusions, then labels) per round.
        rng : int or numpy.random.Generator, optional
            Seed of the draws.

        Returns
        -------
        ImputedMeasure
            ``measure_draws()``: ``(draws, outputs)``; ``to_datatree()``: the measure's
            posterior beside the annotators' (the result protocol's posterior source).

        Raises
        ------
        ValueError
            Where the label space is not 0/1 (a measure of 0/1 labels), or an item is not in
            the pool.
        """
        rng = check_rng(rng)
        check_int(imputations, "imputations", minimum=1)
        check_int(burn, "burn", minimum=0)
        check_int(sweeps, "sweeps", minimum=1)
        if set(self.classes) != {0, 1}:
            raise ValueError(
                f"`classes` must be (0, 1) for a measure of 0/1 labels; the answers' classes "
                f"are {list(self.classes)}."
            )
        positive = self.classes.index(1)
        positions = bound.target.pool.positions(self.items)
        responses, gold = self.responses()
        if getattr(bound.spec, "engine", "fast") == "pymc":  # CellRates has one engine
            return self._measure_by_nuts(bound, positions, responses, gold, rng)
        known = gold >= 0
        z = self.class_draws.reshape(-1, len(self.items))[-1] == positive
        z[known] = gold[known] == positive
        prior = self.spec.confusion_prior(2)
        per = max(bound.spec.draws // imputations, 1)
        parts, kept = [], []
        for round_ in range(burn + imputations):
            labels = z.astype(np.int64)
            fit = bound.fit(positions, labels, rng=rng)
            if round_ >= burn:
                parts.append(fit.measure[:per].reshape(per, -1))
                kept.append(labels)
            theta = fit.theta[rng.integers(fit.theta.shape[0])][None]
            p = np.clip(bound.probability_at(theta, positions)[0], 1e-12, 1 - 1e-12)
            # the classes in the order of `classes` (answers in columns a * 2 + j of the
            # responses); the curve is each item's prior
            log_prior = np.empty((len(self.items), 2))
            log_prior[:, positive], log_prior[:, 1 - positive] = np.log(p), np.log1p(-p)
            current = np.where(z, positive, 1 - positive)
            z = sweep_classes(current, log_prior, responses, prior, known, sweeps, rng) == positive
        return ImputedMeasure(np.concatenate(parts), bound.target.outputs, self, np.array(kept))

    def _measure_by_nuts(self, bound, positions, responses, gold, rng) -> ImputedMeasure:
        """Draw the joint posterior by NUTS, each item's label summed out, then drawn.

        Per draw of the curve and the confusions, each item's label is drawn from
        ``P(c | curve, answers) ∝ P(c | t) prod P(answer | c)`` (its gold class where given),
        and the measure from the curve given those labels (``bound.measure_draws``).
        """
        from bayeval.models._score_calibration_pymc import AnsweredItems, sample_with_answers

        positive = self.classes.index(1)
        t, group = bound.item_covariates(positions)
        responses = responses.astype(float)
        answered = AnsweredItems(t, group, responses, gold, positive, self.spec.confusion_prior(2))
        theta, confusion, _ = sample_with_answers(bound.prior, answered, bound.spec, rng=rng)
        draws, A = confusion.shape[:2]
        p = np.clip(bound.probability_at(theta, positions), 1e-12, 1 - 1e-12)
        # log P(answers_i | c) per draw: responses (items, A * 2) against log confusion[a, c, j]
        log_confusion = np.log(confusion).transpose(0, 2, 1, 3).reshape(draws, 2, A * 2)
        log_ratio = log_confusion[:, positive] - log_confusion[:, 1 - positive]
        log_odds = np.einsum("ik,dk->di", responses, log_ratio) + np.log(p) - np.log1p(-p)
        labels = rng.random(log_odds.shape) < special.expit(log_odds)
        labels[:, gold >= 0] = gold[gold >= 0] == positive
        measure = []
        for d in range(draws):
            k, m = bound.labelled_rows(positions, labels[d])
            counts = (k, m, bound.sizes - (k + m), True)
            measure.append(bound.measure_draws(theta[d : d + 1], counts, rng)[0])
        labels = labels.astype(np.int64)
        return ImputedMeasure(np.array(measure), bound.target.outputs, self, labels)

    def to_datatree(self):
        """Return an ArviZ ``xarray.DataTree`` of the posterior.

        Its ``posterior`` holds ``class_prior`` (``stratum``, ``true_class``), ``confusion``
        (``annotator``, ``true_class``, ``answer``), ``accuracy`` (``annotator``) and
        ``label`` (``item``: each item's class per draw).
        """
        import xarray as xr

        chains, draws = self.class_prior.shape[:2]
        coords = {"chain": np.arange(chains), "draw": np.arange(draws),
                  "true_class": list(self.classes), "answer": list(self.classes),
                  "annotator": list(self.annotators), "item": self.items}  # fmt: skip
        labels = np.asarray(self.classes)[self.class_draws]
        posterior = xr.Dataset(
            {
                "class_prior": (("chain", "draw", "stratum", "true_class"), self.class_prior),
                "confusion": (("chain", "draw", "annotator", "true_class", "answer"),
                              self.confusion),
                "accuracy": (("chain", "draw", "annotator"), self.accuracy_draws()),
                "label": (("chain", "draw", "item"), labels),
            },
            coords=coords,
            attrs={"engine": self.spec.engine},
        )  # fmt: skip
        return xr.DataTree.from_dict({"posterior": posterior})


class ImputedMeasure:
    """A measure's posterior draws given answers that disagree (multiple imputation).

    The posterior source of an estimate (:meth:`bayeval.sampling.Sampler.estimate` with
    ``labels=``): :meth:`measure_draws` and :meth:`to_datatree`.
    """

    def __init__(self, draws, outputs: tuple, annotators: AnnotatorPosterior, label_draws):
        self._draws, self.outputs, self.annotators = draws, outputs, annotators
        #: ``(rounds or draws, items)``: the items' 0/1 labels in each round kept (NUTS: draw)
        self.label_draws = label_draws

    def measure_draws(self) -> np.ndarray:
        """Return the ``(draws, outputs)`` draws of the measure."""
        return self._draws

    def labels(self):
        """Return each item's most probable label under the joint model (a Series by item).

        A tie goes to the label the annotators' model alone prefers.
        """
        import pandas as pd

        share = self.label_draws.mean(axis=0)
        alone = self.annotators.label_probability()[1].to_numpy()
        best = np.where(share == 0.5, alone > 0.5, share > 0.5).astype(int)
        return pd.Series(best, index=pd.Index(self.annotators.items, name="item"), name="label")

    def to_datatree(self):
        """Return the ``DataTree``: ``posterior`` (the measure) and ``annotators`` groups."""
        import xarray as xr

        from bayeval.measures.layout import measure_variables

        chains = self.annotators.spec.chains
        shaped = self._draws.reshape(chains, -1, self._draws.shape[1])
        variables, coords = measure_variables(shaped, self.outputs)
        coords = {"chain": np.arange(chains), "draw": np.arange(shaped.shape[1]), **coords}
        annotators = self.annotators.to_datatree()["posterior"].to_dataset()
        return xr.DataTree.from_dict(
            {"posterior": xr.Dataset(variables, coords=coords,
                                     attrs={"labels": "imputed by DawidSkene"}),
             "annotators": annotators}
        )  # fmt: skip
