"""Checks and measures shared by the models of the label given several systems' predictions.

:class:`~bayeval.models.SystemConfusion`, :class:`~bayeval.models.ConsensusCalibration` and
:class:`~bayeval.models.CandidatePatterns` take the same inputs (predictions, labelled
positions, labels, measures, system names) and turn each system's confusion counts into its
measures the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayeval._core.multiclass import SCALAR_MEASURES, confusion_measures
from bayeval._validation import check_positions, plain

# items per block when drawing the unlabelled items' labels (draws x items floats at a time)
_BLOCK = 1 << 14

__all__ = [
    "ConfusionMeasure",
    "binary_confusion_draws",
    "check_labelled",
    "check_measure",
    "check_predictions",
    "measure_from_counts",
    "system_names",
]


@dataclass(frozen=True)
class ConfusionMeasure:
    """A measure of a confusion matrix of any number of classes (:data:`SCALAR_MEASURES`)."""

    name: str


def measure_from_counts(measure: Any, counts: np.ndarray) -> np.ndarray:
    """Return ``measure`` of each system from its confusion counts ``N[..., k, c, j]``.

    ``c`` is the true class, ``j`` the predicted one.

    Accuracy, balanced accuracy and macro- and micro-F1 take any number of classes; the other
    measures two, class 1 the positive one.
    """
    n = counts.sum(axis=(-1, -2))
    if measure.name == "accuracy":
        return np.einsum("...cc->...", counts) / n  # the diagonal's sum (faster than np.trace)
    if isinstance(measure, ConfusionMeasure):
        return confusion_measures(counts)[measure.name]
    # loss_table(predictions=j)[j, c] is the loss vector of an item of class c predicted j
    table = measure.loss_table(predictions=np.array([0, 1]))  # (prediction, label, dim)
    mean_loss = np.einsum("...cj,jcd->...d", counts, table) / n[..., None]
    return measure.g(mean_loss)[..., 0]


def check_predictions(predictions: Any, n_classes: int, name: str = "predictions") -> np.ndarray:
    """Return predictions ``(n_items, n_systems)`` as int64 classes, or raise naming ``name``."""
    arr = np.asarray(predictions)
    if arr.dtype == bool:
        arr = arr.astype(np.int8)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(
            f"`{name}` must be a 2-d array, one row per item and one column per system; "
            f"got shape {arr.shape}."
        )
    if arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must be classes 0 .. {n_classes - 1}; got {arr.dtype}.")
    bad = (arr != np.round(arr)) | (arr < 0) | (arr >= n_classes)
    if bad.any():
        i, k = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"`{name}` must be classes 0 .. {n_classes - 1} (n_classes={n_classes}); "
            f"system {k} predicts {plain(arr[i, k])!r} for item {i}."
        )
    return arr.astype(np.int64)


def check_labelled(
    labelled: Any,
    labels: Any,
    n_items: int,
    n_classes: int,
    names: tuple[str, str] = ("labelled", "labels"),
):
    """Return the positions and classes of the labelled items, or raise naming ``names``."""
    where, what = names
    positions = check_positions(labelled, n_items, where).reshape(-1)
    if np.unique(positions).size != positions.size:
        raise ValueError(f"`{where}` must not repeat an item; got a position twice.")
    classes = np.asarray(labels)
    if classes.dtype == bool:
        classes = classes.astype(np.int8)
    if classes.shape != positions.shape:
        raise ValueError(
            f"`{what}` must give one class per labelled item ({positions.size}); "
            f"got shape {classes.shape}."
        )
    if classes.size and (
        classes.dtype.kind not in "iuf"
        or np.any((classes != np.round(classes)) | (classes < 0) | (classes >= n_classes))
    ):
        raise ValueError(
            f"`{what}` must be classes 0 .. {n_classes - 1}; got {plain(classes[:6].tolist())!r}."
        )
    return positions, classes.astype(np.int64)


def system_names(systems: Sequence[str] | None, n_systems: int) -> list[str]:
    if systems is None:
        return [f"system{k}" for k in range(n_systems)]
    names = [str(s) for s in systems]
    if len(names) != n_systems or len(set(names)) != n_systems:
        raise ValueError(
            f"`systems` must name each of the {n_systems} systems once; got {list(systems)!r}."
        )
    return names


def check_measure(measure: Any, n_classes: int, name: str = "measures"):
    """Return a measure of predictions with one output (a name or a Measure), or raise.

    With more than two classes: accuracy, balanced accuracy, macro- or micro-F1 (by name).
    """
    from bayeval.measures import Measure, by_name

    named = measure if isinstance(measure, str) else getattr(measure, "name", None)
    if n_classes > 2 or named in ("macro_f1", "micro_f1"):
        classes_of = getattr(measure, "n_classes", n_classes)  # a ClassMeasure's own classes
        if named in SCALAR_MEASURES and classes_of == n_classes:
            return ConfusionMeasure(named)
        raise ValueError(
            f"`{name}` with {n_classes} classes must be one of {list(SCALAR_MEASURES)}; got "
            f"{getattr(measure, 'name', measure)!r}."
        )
    try:
        m = by_name(measure) if isinstance(measure, str) else measure
    except ValueError:
        m = None
    if not isinstance(m, Measure) or m.system_output != "predictions" or len(m.outputs) != 1:
        raise ValueError(
            f"`{name}` must be measures of a system's predictions with one output each (such as "
            f"'accuracy' or 'f1'); got {measure!r}."
        )
    return m


def binary_confusion_draws(
    predictions: np.ndarray,
    positions: np.ndarray,
    labels: np.ndarray,
    probability: Callable[[np.ndarray], np.ndarray],
    n_draws: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Each draw's confusion counts ``(draws, K, 2, 2)`` of every system on the whole pool.

    Labelled items count with their labels; every other item's label is drawn, once per draw,
    with the probability of a positive that ``probability(items)`` returns (shape
    ``(n_draws, len(items))``). Items go in blocks, so memory stays ``draws x 16,384`` floats.
    ``counts[..., c, j]``: items of true class ``c`` that the system predicts ``j``.
    """
    n_items = predictions.shape[0]
    x = predictions.astype(float)
    known = np.zeros(n_items, dtype=bool)
    known[positions] = True
    truth = np.zeros(n_items)
    truth[positions] = labels
    tp = np.tile(truth[known] @ x[known], (n_draws, 1))
    positives = np.full(n_draws, truth[known].sum())
    unknown = np.flatnonzero(~known)
    for start in range(0, unknown.size, _BLOCK):
        block = unknown[start : start + _BLOCK]
        p = probability(block)
        y = (rng.random(p.shape) < p).astype(float)  # (draws, block)
        tp = tp + y @ x[block]
        positives = positives + y.sum(axis=1)
    predicted = x.sum(axis=0)
    fp, fn = predicted - tp, positives[:, None] - tp
    tn = n_items - tp - fp - fn
    return np.stack([np.stack([tn, fp], -1), np.stack([fn, tp], -1)], axis=-2)
