"""The true class of each item given the class a system predicts: multiclass measures' posterior.

The multiclass counterpart of :class:`~bayeval.models.ScoreCalibration`: items are grouped in
*cells*, the class the system predicts and (optionally) a stratum of how sure it is; each
cell's accuracy has a Beta prior pooled over the strata of its class and then over the
classes (around a trend in the class's size), and its errors an allocation over the other
classes. Given the labels the pooling's hyperparameters are drawn exactly on grids and the
rest is conjugate, and every draw completes the unlabelled items' classes: the system's
confusion matrix on *this* pool, and from it accuracy, per-class precision, recall and F1,
macro- and micro-F1 and balanced accuracy (:mod:`bayeval._core.multiclass`). Model card:
``models/class_calibration/spec.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from bayeval._constraints import Integer, validate_fields
from bayeval._core.confusion_gibbs import sweep_classes
from bayeval._core.multiclass import CLASS_MEASURES, SCALAR_MEASURES, confusion_measures
from bayeval._validation import check_draws, check_int, check_positions, check_rng, plain
from bayeval.models._class_cells import CellPrior
from bayeval.models._systems import check_labelled, check_predictions

__all__ = ["ClassCalibration"]

# posterior draws completed at a time (draws x cells x classes integers in memory)
_DRAW_BLOCK = 256


@dataclass(frozen=True, kw_only=True)
@validate_fields(
    n_classes=Integer(minimum=2),
    n_strata=Integer(minimum=1),
    draws=Integer(minimum=1),
    chains=Integer(minimum=1),
)
class ClassCalibration:
    """The true class of an item given the class the system predicts and how sure it is.

    Items are cut into cells: the predicted class ``j`` and, with ``n_strata > 1``, a stratum
    of the system's confidence among the items predicted ``j`` (equal-count strata). The
    items of cell ``g`` are of class ``c`` with probability ``theta[g, c]``: the cell's
    accuracy ``theta[g, j]`` and its errors, spread over the other classes by the allocation
    ``e_j`` of its predicted class::

        theta[g, j] ~ Beta(kappa_j mu_j, kappa_j (1 - mu_j))
        e_j ~ Dirichlet(s_j),  theta[g, c] = (1 - theta[g, j]) e_j[c]  for c != j

    ``mu_j`` is the typical accuracy of the strata of class ``j`` and ``kappa_j`` how alike
    they are (log-uniform on [0.2, 1000]). The classes' ``mu_j ~ Beta(lam nu_j, lam (1 -
    nu_j))`` follow a trend in the class's size, ``logit nu_j = alpha + beta z_j`` with
    ``z_j`` the log of the items predicted ``j`` (centred), ``expit(alpha)`` uniform, ``beta ~
    Normal(0, 1)``, and a spread ``lam`` (log-uniform on [1, 2000]): a class the system
    predicts rarely is often less precise, since the errors of the large classes land on it.
    A stratum with few labels borrows from its class's other strata, and a class with few
    labels from classes of its size, as far as the labels say the classes are alike. ``s_j``
    weighs the other classes by how often the system predicts them (total weight one).
    Labelled items are known and the unlabelled ones are drawn, so each draw is the system's
    confusion matrix on the whole pool. With an automatic judge's class for every item
    (``posterior(..., judge=...)``), each cell is cut by the judge's class too, and the
    accuracies are pooled apart where the judge agrees with the system and where it does not.
    Where it disagrees and says ``k``, the cell's accuracy trends (one slope ``gamma``) with
    the log of its items against the items both call ``k``, and an error is of class ``k``
    with a probability ``rho_k`` learnt from the labels, pooled over the classes
    (:class:`~bayeval.models._class_cells.CellPrior`; model card: "An automatic judge on every
    item"). That model is weighed against the model without the judge by the evidence of the
    labels' right and wrong, and each gives its share of the draws, so a judge whose agreement
    tells nothing is weighed out (model card: "Weighed against no judge").

    Parameters
    ----------
    n_classes : int
        Classes ``0 .. n_classes - 1`` of the labels and predictions.
    n_strata : int, default 1
        Confidence strata per predicted class (needs ``confidence``). One stratum suffices for
        labels drawn uniformly at random (or with the predicted class as the only stratum);
        when labels are drawn more often at some confidences (a design stratified by score, an
        active sampler), cut as finely as the design does, or the items of a cell are not
        exchangeable and the intervals can miss.
    draws, chains : int, default 4000 and 4
        Posterior draws in all, split into ``chains`` (the layout ArviZ expects). Every draw
        is independent: the hyperparameters' posterior is computed exactly on grids (up to
        2,000 distinct draws of them, resampled beyond).

    Notes
    -----
    Coverage on pools that break the cells' exchangeability, on rare classes and under
    annotator noise is measured in ``tests/models/test_class_calibration.py`` and
    ``benchmarks/multiclass.py``; where it falls short is in the model card.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models import ClassCalibration
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.choice(3, size=5_000, p=[0.6, 0.3, 0.1])
    >>> right = rng.random(5_000) < 0.8
    >>> predicted = np.where(right, truth, rng.choice(3, size=5_000))
    >>> labelled = np.random.default_rng(1).choice(5_000, 300, replace=False)
    >>> dt = ClassCalibration(n_classes=3).posterior(predicted, labelled, truth[labelled], rng=1)
    >>> dt["posterior"]["macro_f1"].dims, dt["posterior"]["recall"].dims
    (('chain', 'draw'), ('chain', 'draw', 'true_class'))
    >>> lower, upper = dt["posterior"]["accuracy"].quantile([0.025, 0.975]).values
    >>> round(float(lower), 3), round(float(upper), 3)
    (0.846, 0.911)
    >>> round(float((predicted == truth).mean()), 3)  # the truth
    0.876
    """

    n_classes: int
    n_strata: int = 1
    draws: int = 4000
    chains: int = 4

    def __post_init__(self):
        """Check ``draws`` against ``chains`` (the fields are checked)."""
        check_draws(self.draws, self.chains)

    def posterior(
        self,
        predictions: Any,
        labelled: Any = None,
        labels: Any = None,
        *,
        confidence: Any = None,
        judge: Any = None,
        rounds: int = 100,
        burn: int = 20,
        sweeps: int = 10,
        rng: Any = None,
    ):
        """Return the posterior of the system's confusion matrix and measures on this pool.

        Parameters
        ----------
        predictions : array_like of int, shape (n_items,)
            The class the system predicts for each item, in ``0 .. n_classes - 1``.
        labelled : array_like of int, optional
            Positions of the labelled items (distinct). Leave out when ``labels`` is a
            :class:`~bayeval.models.AnnotatorPosterior`.
        labels : array_like of int or bayeval.models.AnnotatorPosterior
            The classes of the labelled items, in the order of ``labelled``; or a Dawid-Skene
            fit of several annotators' answers whose items are positions in ``predictions``
            and whose ``classes`` are ``0 .. n_classes - 1``: then the labelled items'
            classes, the annotators' confusion matrices and the cells are drawn jointly (data
            augmentation, Tanner & Wong 1987), so annotator noise widens every interval.
        confidence : array_like of float, shape (n_items,), optional
            How sure the system is of each prediction (its top score); needed when
            ``n_strata > 1``.
        judge : array_like of int, shape (n_items,), optional
            An automatic judge's class for every item (``0 .. n_classes - 1``). Each cell is
            then cut by the class the judge gives, so the items where the judge agrees with
            the system and those where it does not each have their accuracy and errors,
            learnt from the labels: a judge is trusted only as far as the labelled items show
            it right, and one that is wrong in some way the labels reveal is corrected. The
            cells with the judge and those without it are weighed by their evidence (with an
            annotators' fit, in every round by the evidence of that round's classes).
        rounds, burn : int, default 100 and 20
            With an annotators' fit: the data-augmentation rounds kept (each gives
            ``draws / rounds`` draws) and those discarded first.
        sweeps : int, default 10
            With an annotators' fit: sweeps of the annotators' model (their confusions, then
            the items' classes) per round (the two inform each other strongly, so one sweep
            moves them little; see ``AnnotatorPosterior.measure_posterior``).
        rng : int, numpy.random.Generator or None
            Seed or generator of every draw.

        Returns
        -------
        xarray.DataTree
            ``posterior``: ``confusion`` (``true_class``, ``predicted``: counts on the whole
            pool), ``class_share`` (``true_class``), ``accuracy``, ``balanced_accuracy``,
            ``macro_f1``, ``micro_f1`` and per class ``precision`` (``predicted``), ``recall``
            and ``f1`` (``true_class``); dims ``chain`` and ``draw`` first. Undefined entries
            (a class absent in a draw) are NaN. ``constant_data``: each cell's size and
            labelled items (the judge's cells, with a judge). Attributes ``n_items``,
            ``n_labelled``, ``n_strata``, ``judged``, and with a judge ``judge_weight``: the
            posterior probability of the model with the judge against the model without it,
            about the share of the draws that come from it.

        Raises
        ------
        ValueError
            Naming the parameter: a class outside ``0 .. n_classes - 1``, a repeated or
            out-of-range position, ``confidence`` missing or of the wrong shape, an
            annotators' fit of another label space.
        """
        from bayeval.models.dawid_skene import AnnotatorPosterior

        rng = check_rng(rng)
        C = self.n_classes
        cell, size, prior, levels = self._cells_and_prior(predictions, confidence, judge)
        if isinstance(labels, AnnotatorPosterior):
            if labelled is not None:
                raise ValueError(
                    "`labelled` must be left out when `labels` is an AnnotatorPosterior (its "
                    f"items are the positions); got {plain(labelled)!r}."
                )
            check_int(rounds, "rounds", minimum=1)
            check_int(burn, "burn", minimum=0)
            check_int(sweeps, "sweeps", minimum=1)
            positions = self._annotated_positions(labels, cell.size)
            models = [(cell[positions], prior, size)]
            if judge is not None:  # and the cells without the judge, weighed in every round
                alone_cell, alone_size, alone, _ = self._cells_and_prior(
                    predictions, confidence, None
                )
                models.append((alone_cell[positions], alone, alone_size))
            confusion, kept, weight = _augment(self, labels, models, rounds, burn, sweeps, rng)
            labelled_cells = kept.mean(axis=0)
        else:
            positions, fits = self._fits(predictions, confidence, judge, labelled, labels)
            labelled_cells = fits[0][1]
            weight = _judge_weight(fits)
            confusion = _averaged(fits, weight, self.draws, C, rng)
        return _datatree(self, confusion, (size, labelled_cells), positions.size, levels, weight)

    def cell_predictive(
        self,
        predictions: Any,
        labelled: Any,
        labels: Any,
        *,
        confidence: Any = None,
        judge: Any = None,
        draws: int = 200,
        rng: Any = None,
    ) -> np.ndarray:
        """Return each cell's posterior predictive mix: the classes of an unlabelled item.

        The mean over ``draws`` posterior draws of the cells' mixes ``theta`` (what an
        adaptive design reads to find the cells whose items are least certain; see
        :class:`~bayeval.sampling.ActiveStratified`). The arguments are
        :meth:`posterior`'s, with labels given as classes.

        Returns
        -------
        numpy.ndarray
            ``(n_cells, n_classes)``, rows summing to one, the cells numbered as
            :meth:`cells` numbers them (``n_cells`` is ``n_classes * n_strata``, times
            ``n_classes`` with a judge).

        Examples
        --------
        >>> spec = ClassCalibration(n_classes=2)
        >>> mix = spec.cell_predictive([0, 0, 0, 1, 1, 1], [0, 1, 3], [0, 0, 1], rng=0)
        >>> mix.shape, bool(mix[0, 0] > 0.5), bool(mix[1, 1] > 0.5)
        ((2, 2), True, True)
        """
        rng = check_rng(rng)
        check_int(draws, "draws", minimum=1)
        _, fits = self._fits(predictions, confidence, judge, labelled, labels)
        mixes = [
            prior.mixes(cells, prior.hyper_draws(cells, draws, rng), rng).mean(axis=0)
            for prior, cells, _ in fits
        ]
        if judge is None:
            return mixes[0]
        # the mix of the cells without the judge holds for each of its judge's cells: a
        # judge's cell (predicted * C + rank) * S + stratum lies in predicted * S + stratum
        C, S = self.n_classes, self.n_strata
        judged = np.arange(mixes[0].shape[0])
        alone = mixes[1][judged // (C * S) * S + judged % S]
        weight = _judge_weight(fits)
        return weight * mixes[0] + (1 - weight) * alone

    def _fits(self, predictions, confidence, judge, labelled, labels):
        """Return the labelled positions and one ``(CellPrior, labelled cells, sizes)`` per model.

        With a judge, the cells with it and then the cells without it (the two
        :func:`_judge_weight` weighs); without one, the cells alone. Labels given as classes.
        """
        fits, positions = [], None
        for cut_by in (judge, None) if judge is not None else (None,):
            cell, size, prior, _ = self._cells_and_prior(predictions, confidence, cut_by)
            if positions is None:
                positions, classes = check_labelled(labelled, labels, cell.size, self.n_classes)
            cells = _labelled_cells(cell[positions], classes, size.size, self.n_classes)
            fits.append((prior, cells, size))
        return positions, fits

    def _cells_and_prior(self, predictions, confidence, judge):
        """Return each item's cell, the cells' sizes, their prior and the judge's levels."""
        cell = self.cells(predictions, confidence, judge)
        levels = 1 if judge is None else self.n_classes  # the judge's classes cut each class
        predicted = cell // (levels * self.n_strata)
        size = np.bincount(cell, minlength=self.n_classes * levels * self.n_strata)
        prior = CellPrior(predicted, self.n_classes, self.n_strata, levels, cell_size=size)
        return cell, size, prior, levels

    def cells(self, predictions: Any, confidence: Any = None, judge: Any = None) -> np.ndarray:
        """Return each item's cell: its predicted class, judge's class and confidence stratum.

        Without a judge the cell is ``predicted class * n_strata + stratum``; with one it is
        ``(predicted class * n_classes + rank) * n_strata + stratum``, the rank the judge's
        class minus the predicted class modulo ``n_classes`` (so 0 where the judge agrees
        with the system, and a predicted class's agreeing cells come first). The strata cut
        the items of each predicted class into ``n_strata`` of equal count by ``confidence``
        (a design stratified the same way draws its labels per cell).

        Examples
        --------
        >>> ClassCalibration(n_classes=2, n_strata=2).cells([0, 0, 1, 1], [0.9, 0.6, 0.7, 0.8])
        array([1, 0, 2, 3])
        >>> ClassCalibration(n_classes=2).cells([0, 0, 1, 1], judge=[0, 1, 0, 1])
        array([0, 1, 3, 2])
        """
        if np.ndim(predictions) != 1:
            raise ValueError(
                f"`predictions` must be 1-d, one predicted class per item; got shape "
                f"{np.shape(predictions)}."
            )
        predicted = check_predictions(np.asarray(predictions)[:, None], self.n_classes)[:, 0]
        stratum = self._strata(predicted, confidence)
        if judge is None:
            return predicted * self.n_strata + stratum
        judged = self._judge_classes(judge, predicted.size)
        rank = (judged - predicted) % self.n_classes
        return (predicted * self.n_classes + rank) * self.n_strata + stratum

    def _judge_classes(self, judge: Any, n_items: int) -> np.ndarray:
        """Return the judge's classes as integers, or raise naming ``judge``."""
        arr = np.asarray(judge)
        allowed = f"classes 0 .. {self.n_classes - 1}, one per item (shape ({n_items},))"
        if arr.shape != (n_items,) or arr.dtype.kind not in "iuf":
            raise ValueError(
                f"`judge` must be {allowed}; got shape {arr.shape} of dtype {arr.dtype}."
            )
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(arr) | (arr != np.round(arr)) | (arr < 0) | (arr >= self.n_classes)
        if bad.any():
            at = int(np.flatnonzero(bad)[0])
            raise ValueError(f"`judge` must be {allowed}; entry {at} is {plain(arr[at])!r}.")
        return arr.astype(np.int64)

    def _strata(self, predicted: np.ndarray, confidence: Any) -> np.ndarray:
        """Return each item's confidence stratum among the items of its predicted class."""
        if self.n_strata == 1:
            return np.zeros(predicted.size, dtype=np.int64)
        if confidence is None:
            raise ValueError(
                f"`confidence` must be given with n_strata={self.n_strata} (the strata cut "
                "each predicted class by it); got None."
            )
        sure = np.asarray(confidence)
        if sure.shape != predicted.shape or sure.dtype.kind not in "iuf":
            raise ValueError(
                f"`confidence` must be numbers, one per item (shape {predicted.shape}); got "
                f"shape {sure.shape} of dtype {sure.dtype}."
            )
        if not np.all(np.isfinite(sure)):
            at = int(np.flatnonzero(~np.isfinite(sure))[0])
            raise ValueError(f"`confidence` must be finite; entry {at} is {plain(sure[at])!r}.")
        order = np.lexsort((sure, predicted))
        count = np.bincount(predicted, minlength=self.n_classes)
        start = np.concatenate([[0], np.cumsum(count)[:-1]])
        rank = np.arange(predicted.size) - start[predicted[order]]
        stratum = np.empty(predicted.size, dtype=np.int64)
        stratum[order] = rank * self.n_strata // count[predicted[order]]
        return stratum

    def _annotated_positions(self, fit: Any, n_items: int) -> np.ndarray:
        """Return the positions of a Dawid-Skene fit's items, checking its label space."""
        if tuple(fit.classes) != tuple(range(self.n_classes)):
            raise ValueError(
                f"`labels` (an AnnotatorPosterior) must have classes 0 .. {self.n_classes - 1} "
                f"(fit with classes=range({self.n_classes})); got {list(fit.classes)!r}."
            )
        items = np.asarray(fit.items.tolist())
        if items.dtype.kind not in "iu":
            raise ValueError(
                "`labels` (an AnnotatorPosterior) must have positions in `predictions` as its "
                f"items; got {plain(fit.items[0])!r}."
            )
        return check_positions(items, n_items, "labels' items")


def _judge_weight(fits) -> float | None:
    """Return the posterior probability of the judge's cells against none (None without).

    ``fits``: :meth:`ClassCalibration._fits`' list. Both ways of cutting explain the same
    labels' right and wrong, so with even prior odds each gets the share its evidence
    (:meth:`CellPrior.log_evidence <bayeval.models._class_cells.CellPrior.log_evidence>`)
    gives it: a judge whose cells do not tell the system's right from its wrong costs only
    its compute (model card, "Weighed against no judge").
    """
    if len(fits) == 1:
        return None
    (judged, judged_cells, _), (alone, alone_cells, _) = fits
    return float(special.expit(judged.log_evidence(judged_cells) - alone.log_evidence(alone_cells)))


def _averaged(fits, weight: float | None, n_draws: int, n_classes: int, rng) -> np.ndarray:
    """Return ``(draws, predicted, true)`` counts of one fit, or of two by ``weight``.

    With two fits (:meth:`ClassCalibration._fits`), the judge's cells give a
    ``Binomial(n_draws, weight)`` share of the draws and the cells without it the rest.
    """
    shares = [n_draws]
    if weight is not None:
        with_judge = int(rng.binomial(n_draws, weight))
        shares = [with_judge, n_draws - with_judge]
    parts = []
    for (prior, labelled_cells, size), n in zip(fits, shares, strict=True):
        if n:
            hyper = prior.hyper_draws(labelled_cells, n, rng)
            counts = _complete(prior, labelled_cells, size, hyper, rng)
            parts.append(_by_predicted(counts, n_classes))
    confusion = np.concatenate(parts)
    if len(parts) > 1:  # the two fits' draws spread over the chains
        confusion = confusion[rng.permutation(n_draws)]
    return confusion


def _labelled_cells(item_cell, classes, n_cells: int, n_classes: int) -> np.ndarray:
    """Return ``(cells, classes)``: the labelled items of each cell, by their class."""
    counts = np.zeros((n_cells, n_classes))
    np.add.at(counts, (item_cell, classes), 1.0)
    return counts


def _by_predicted(cell_counts: np.ndarray, n_classes: int) -> np.ndarray:
    """Return ``(draws, predicted, true)`` counts from ``(draws, cells, true)`` ones.

    With or without a judge, the cells of a predicted class are consecutive
    (:meth:`ClassCalibration.cells`), so summing each class's run of cells gives its row.
    """
    return cell_counts.reshape(cell_counts.shape[0], n_classes, -1, n_classes).sum(axis=2)


def _complete(prior, labelled_cells, size, hyper, rng) -> np.ndarray:
    """Return ``(n_draws, cells, C)``: the class counts of every cell, the unlabelled drawn.

    Per draw of ``hyper`` (``prior.hyper_draws``' ``CellDraws``): the
    cells' mixes ``theta`` from their posterior and the unlabelled items of cell ``g``
    ``Multinomial(size[g] - labelled, theta[g])``; the labelled items are added as they are.
    """
    unlabelled = (size - labelled_cells.sum(axis=1)).astype(np.int64)
    drawn = np.flatnonzero(unlabelled)  # the cells with items to draw
    n_draws = len(hyper)
    out = np.broadcast_to(labelled_cells, (n_draws, *labelled_cells.shape)).copy()
    for start in range(0, n_draws, _DRAW_BLOCK):
        block = slice(start, start + _DRAW_BLOCK)
        theta = prior.mixes(labelled_cells, hyper[block], rng, cells=drawn)
        out[block, drawn] += rng.multinomial(unlabelled[drawn], theta)
    return out


def _augment(spec, fit, models, rounds, burn, sweeps, rng):
    """Return ``(draws, predicted, true)`` counts, the labelled cells kept and the weight.

    Data augmentation given several annotators' answers. ``models``: ``(each annotated item's
    cell, CellPrior, cell sizes)`` of the judge's cells and, second, of the cells without
    the judge (or of the cells alone, without a judge). Each round, given the items' classes:
    with two models, one is drawn by its posterior probability (:func:`_judge_weight` of
    the classes' right and wrong, the cells' mixes summed out, so a Gibbs step on which
    model holds); then its hyperparameters and cells' mixes; then ``sweeps`` times the
    annotators' confusions given the classes and answers and the classes given both (each
    item's prior is its cell's mix). ``rounds`` rounds after ``burn`` each complete
    ``draws / rounds`` pools. Also return the labelled items' counts in the first model's
    cells per kept round, and the mean over the kept rounds of the first model's
    probability (None with one model).
    """
    C, n = spec.n_classes, len(fit.items)
    responses, gold_class = fit.responses()
    gold = gold_class >= 0
    z = np.where(gold, gold_class, fit.class_draws.reshape(-1, n)[-1])
    per = -(-spec.draws // rounds)  # rounds x per >= draws
    ds_prior = fit.spec.confusion_prior(C)
    parts, kept, weights = [], [], []
    for round_ in range(burn + rounds):
        fits = [
            (prior, _labelled_cells(cell, z, size.size, C), size) for cell, prior, size in models
        ]
        weight = _judge_weight(fits)
        chosen = 0 if weight is None or rng.random() < weight else 1
        (prior, labelled_cells, size), item_cell = fits[chosen], models[chosen][0]
        # one draw of the hyperparameters moves the labels, the others (in the rounds kept)
        # complete the pool
        wanted = per + 1 if round_ >= burn else 1
        hyper = prior.hyper_draws(labelled_cells, wanted, rng)
        if round_ >= burn:
            counts = _complete(prior, labelled_cells, size, hyper[1:], rng)
            parts.append(_by_predicted(counts, C))
            kept.append(fits[0][1])
            weights.append(weight)
        theta = prior.mixes(labelled_cells, hyper[:1], rng)[0]
        with np.errstate(divide="ignore"):  # a class a cell's mix has underflowed to zero
            log_prior = np.log(theta[item_cell])
        z = sweep_classes(z, log_prior, responses, ds_prior, gold, sweeps, rng)
    weight = None if len(models) == 1 else float(np.mean(weights))
    return np.concatenate(parts)[: spec.draws], np.array(kept), weight


def _datatree(spec, by_predicted, cells, n_labelled, levels, judge_weight):
    import xarray as xr

    C, S = spec.n_classes, spec.n_strata
    size, labelled_cells = cells
    n_draws = by_predicted.shape[0]
    chains = spec.chains if n_draws % spec.chains == 0 else 1
    confusion = np.swapaxes(by_predicted, -1, -2).reshape(chains, -1, C, C)
    measures = confusion_measures(confusion)
    sampled = ("chain", "draw")
    data = {
        "confusion": (sampled + ("true_class", "predicted"), confusion.astype(np.int64)),
        "class_share": (sampled + ("true_class",), confusion.sum(-1) / size.sum()),
    }
    data.update({name: (sampled, measures[name]) for name in SCALAR_MEASURES})
    for name in CLASS_MEASURES:
        data[name] = (sampled + ("predicted" if name == "precision" else "true_class",),
                      measures[name])  # fmt: skip
    classes = np.arange(C)
    coords = {"chain": np.arange(chains), "draw": np.arange(confusion.shape[1]),
              "true_class": classes, "predicted": classes}  # fmt: skip
    attrs = {"n_items": int(size.sum()), "n_labelled": int(n_labelled), "n_strata": S,
             "judged": int(levels > 1)}  # fmt: skip
    if judge_weight is not None:  # the share of the draws from the model with the judge
        attrs["judge_weight"] = judge_weight
    cells = {"cell_predicted": np.repeat(classes, levels * S),
             "cell_stratum": np.tile(np.arange(S), C * levels)}  # fmt: skip
    if levels > 1:  # the judge's class from its rank (ClassCalibration.cells)
        rank = np.tile(np.repeat(np.arange(levels), S), C)
        cells["cell_judge"] = (cells["cell_predicted"] + rank) % C
    constant = xr.Dataset(
        {"cell_size": ("cell", size), "cell_labelled": (("cell", "true_class"), labelled_cells)},
        coords={"cell": np.arange(size.size), "true_class": classes,
                **{k: ("cell", v) for k, v in cells.items()}},
    )  # fmt: skip
    return xr.DataTree.from_dict(
        {"posterior": xr.Dataset(data, coords=coords, attrs=attrs), "constant_data": constant}
    )
