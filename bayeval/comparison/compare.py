"""``bayeval.compare``: several systems judged on one set of labels; which is best, by how much."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from bayeval._constraints import AnyOf, Instance, Optional, Seed, validate
from bayeval._validation import check_classes, check_rng
from bayeval.comparison.result import Comparison

__all__ = ["MAX_SCORED_SYSTEMS", "compare"]

#: Up to this many systems the default model works per pattern of the systems' predictions,
#: few enough to repeat: the score calibration with scores, the confusion matrices with shared
#: errors with classes. Beyond, the calibrated consensus, or the prediction patterns' model
#: with classes (whose P(best) stays cautious where patterns are seen once).
MAX_SCORED_SYSTEMS = 6

#: The models of the labels that a comparison accepts.
MODELS = AnyOf(
    Instance("bayeval.models.score_calibration.ScoreCalibration", "a ScoreCalibration"),
    Instance("bayeval.models.consensus_calibration.ConsensusCalibration", "a ConsensusCalibration"),
    Instance("bayeval.models.system_confusion.SystemConfusion", "a SystemConfusion"),
    Instance("bayeval.models.prediction_patterns.PredictionPatterns", "a PredictionPatterns"),
)


@validate(model=Optional(MODELS), rng=Seed())
def compare(
    systems: Any,
    labelled: Any,
    labels: Any,
    *,
    measure: Any = "accuracy",
    model: Any = None,
    rng: Any = None,
) -> Comparison:
    """Compare several systems on one pool from the labels of some of its items.

    Parameters
    ----------
    systems : bayeval.Pool, mapping or array_like
        A :class:`~bayeval.Pool` with two or more systems (scores and predictions; a
        multiclass pool's predicted classes), or the systems' predictions alone: a mapping
        from each system's name to its 0/1 predictions (one per item, all of the same
        length), or a 2-d array with one column per system. (Systems that each predict a
        set of instances, evaluated on demand, are compared by
        :meth:`bayeval.ondemand.OnDemandEvaluator.compare`, which returns this result.)
    labelled : array_like of int
        Positions of the labelled items in the pool (distinct).
    labels : array_like of {0, 1}
        Their labels, in the order of ``labelled`` (a multiclass pool: classes, by index or
        name).
    measure : str or bayeval.measures.Measure, default "accuracy"
        A measure of a system's predictions: ``"accuracy"``, ``"precision"``, ``"recall"``,
        ``"f1"`` or any name of :func:`bayeval.measures.by_name`; for a multiclass pool
        ``"accuracy"``, ``"balanced_accuracy"``, ``"macro_f1"`` or ``"micro_f1"``.
    model : ScoreCalibration, ConsensusCalibration, SystemConfusion or PredictionPatterns, optional
        The model of the labels (:mod:`bayeval.models`). Default: ``ScoreCalibration()`` for a
        pool of at most :data:`MAX_SCORED_SYSTEMS` systems (the label given the scores, per
        pattern of the systems' predictions), ``ConsensusCalibration()`` for predictions alone
        or more systems (the label given the systems' consensus, calibrated by the labels).
        ``SystemConfusion()`` (one confusion matrix per system, errors independent given the
        class) is the model for annotators; it is overconfident for systems that share errors.
        ``PredictionPatterns()`` (one rate per pattern of the predictions, nothing assumed
        about shared errors) is the model of :class:`~bayeval.sampling.ModelSelection`: its
        differences are trustworthy where the labels reach the systems' disagreements, and a
        single system's measure is not where they do not. A multiclass pool of at most
        :data:`MAX_SCORED_SYSTEMS` systems is modelled by default by
        ``SystemConfusion(n_classes=..., shared_errors=True)``: the confusion matrices, with
        each pattern of predictions free to depart from their independence where its labels
        say so. With three systems of accuracy 0.7, 0.8 and 0.9, 400 items and 100 random
        labels, 40 runs, it covered the best system's accuracy 0.93 (three classes) and 0.88
        (five) with independent errors, 0.95 and 0.85 where the systems wrong on an item name
        the same class (the worst system's 0.70 with five classes), where
        ``PredictionPatterns(n_classes=...)`` covered it in none of the runs. With more
        systems, whose patterns are seen once, it is Dawid-Skene's model and too sure: on
        PACS's 30 models (300 random labels, 10 runs) its P(best) reached 0.95 in 5 runs, for
        the wrong system every time. So beyond :data:`MAX_SCORED_SYSTEMS` the default is
        ``PredictionPatterns(n_classes=...)``, whose P(best) stayed cautious there (mean 0.36,
        never 0.95) though its single systems' intervals are biased (every accuracy missed,
        0.15 too low). No model of many systems' classes is honest yet
        (``models/system_confusion/spec.md``, ``benchmarks/README.md``).
    rng : int, numpy.random.Generator or None
        Seed or generator of the posterior draws.

    Returns
    -------
    bayeval.comparison.Comparison
        Each system's measure on this pool (finite-population posterior), P(best), expected
        regret, ranks, and :attr:`~bayeval.comparison.Comparison.differences`.

    Notes
    -----
    The posterior is that of the measure of *this* pool: labelled items are known, unlabelled
    ones drawn from the model. No model of many systems' predictions holds everywhere yet
    (``models/system_confusion/spec.md``, Known limits): where systems share errors,
    ``SystemConfusion`` is far too sure (on real models' predictions its P(best) reached 0.95
    for the wrong system), and ``ConsensusCalibration`` pulls the best systems toward the crowd,
    so its P(best) is cautious with labels on the systems' disagreements, but its intervals of
    single systems' measures can miss when the labels are drawn at random.

    Examples
    --------
    Three systems of accuracy 0.90, 0.85 and 0.80 on 3,000 items, 300 of them labelled:

    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(3_000) < 0.4
    >>> right = rng.random((3_000, 3)) < [0.90, 0.85, 0.80]
    >>> predictions = {name: np.where(right[:, k], truth, ~truth).astype(int)
    ...                for k, name in enumerate(["a", "b", "c"])}
    >>> labelled = rng.choice(3_000, 300, replace=False)
    >>> result = be.compare(predictions, labelled, truth[labelled], rng=1)
    >>> result.best, [round(float(p), 2) for p in result.prob_best]
    ('a', [1.0, 0.0, 0.0])
    >>> result.differences.interval().sel(system="a", other="b").round(3).values.tolist()
    [0.011, 0.033]
    >>> {k: round(float((v == truth).mean()), 3) for k, v in predictions.items()}  # the truth
    {'a': 0.893, 'b': 0.862, 'c': 0.81}
    """
    from bayeval.models import (
        ConsensusCalibration,
        PredictionPatterns,
        ScoreCalibration,
        SystemConfusion,
    )
    from bayeval.models._systems import check_measure, check_predictions
    from bayeval.pool import Pool

    rng = check_rng(rng)
    multiclass = isinstance(systems, Pool) and systems.classes is not None
    n_classes = systems.n_classes if multiclass else 2
    measure_obj = check_measure(measure, n_classes, "measure")
    if isinstance(systems, Pool):
        pool, predictions, names = systems, systems.predictions, list(systems.systems)
    else:
        pool = None
        predictions, names = predictions_of(systems)
        predictions = check_predictions(predictions, 2, "systems")
    if predictions.ndim < 2 or predictions.shape[1] < 2:
        n_systems = 1 if predictions.ndim < 2 else predictions.shape[1]
        raise ValueError(f"`systems` must hold two or more systems to compare; got {n_systems}.")
    if multiclass:
        # the models of predictions alone take classes; labels may be given by class name
        if model is not None and getattr(model, "n_classes", 2) != n_classes:
            raise ValueError(
                f"`model` must be a PredictionPatterns or SystemConfusion of the pool's "
                f"{n_classes} classes (n_classes={n_classes}); got {model!r}."
            )
        if model is None and predictions.shape[1] <= MAX_SCORED_SYSTEMS:
            model = SystemConfusion(n_classes=n_classes, shared_errors=True)
        elif model is None:
            model = PredictionPatterns(n_classes=n_classes)
        labels = check_classes(labels, "labels", systems.classes)
    elif model is None:
        scored = pool is not None and pool.n_systems <= MAX_SCORED_SYSTEMS
        model = ScoreCalibration() if scored else ConsensusCalibration()
    if isinstance(model, ScoreCalibration):
        if pool is None:
            raise ValueError(
                "`model` ScoreCalibration needs the systems' scores: pass `systems` as a "
                "bayeval.Pool, or use ConsensusCalibration for predictions alone."
            )
        tree = model.bind(pool, measure_obj).posterior(labelled, labels, rng=rng)
    else:
        tree = model.posterior(
            predictions, labelled, labels, measures=(measure_obj,), systems=names, rng=rng
        )
    return Comparison(measure=measure_obj.name, model=repr(model), posterior=tree)


def predictions_of(systems: Any) -> tuple[np.ndarray, list[str] | None]:
    """Return the predictions ``(n_items, n_systems)`` and names of a mapping or an array."""
    if not isinstance(systems, Mapping):
        return np.asarray(systems), None
    if len(systems) < 2:
        raise ValueError(f"`systems` must hold two or more systems to compare; got {len(systems)}.")
    names = [str(name) for name in systems]
    columns = [np.asarray(v) for v in systems.values()]
    lengths = {
        name: (c.shape[0] if c.ndim == 1 else None) for name, c in zip(names, columns, strict=True)
    }
    if any(n is None for n in lengths.values()) or len(set(lengths.values())) > 1:
        shown = {name: ("not 1-d" if n is None else n) for name, n in lengths.items()}
        raise ValueError(
            "`systems` must give every system one prediction per item, all of the same length; "
            f"got lengths {shown}."
        )
    return np.stack(columns, axis=1), names
