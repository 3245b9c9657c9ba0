"""Measures of a multiclass confusion matrix: accuracy, per-class precision, recall and F1.

``N[..., c, j]`` counts the items of true class ``c`` that the system predicts ``j`` (any
leading axes: posterior draws, systems). With ``tp_k = N[k, k]``, ``predicted_k`` the items
predicted ``k`` and ``true_k`` the items of class ``k``:

- precision ``tp_k / predicted_k``, recall ``tp_k / true_k``, F1 ``2 tp_k / (predicted_k +
  true_k)``, each NaN where its denominator is zero (a class never predicted, or absent);
- macro-F1: the mean F1 over the classes present among the labels or the predictions, and
  balanced accuracy: the mean recall over the classes present among the labels (the
  definitions of scikit-learn's ``f1_score(average="macro")`` and
  ``balanced_accuracy_score``);
- micro-F1 ``2 sum tp / (2 sum tp + sum fp + sum fn)``: every error is one false positive
  (of the predicted class) and one false negative (of the true one), so with one label per
  item it equals the accuracy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CLASS_MEASURES", "SCALAR_MEASURES", "confusion_measures"]

#: Measures with one value per confusion matrix, and with one value per class.
SCALAR_MEASURES = ("accuracy", "balanced_accuracy", "macro_f1", "micro_f1")
CLASS_MEASURES = ("precision", "recall", "f1")


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Return ``numerator / denominator``, NaN where the denominator is zero (no warning)."""
    safe = np.where(denominator > 0, denominator, 1)
    return np.where(denominator > 0, numerator / safe, np.nan)


def _mean_present(values: np.ndarray) -> np.ndarray:
    """Return the mean over the last axis of the entries that are not NaN (NaN if none)."""
    present = ~np.isnan(values)
    return _ratio(np.where(present, values, 0.0).sum(axis=-1), present.sum(axis=-1))


def confusion_measures(counts: np.ndarray) -> dict[str, np.ndarray]:
    """Return every measure of :data:`SCALAR_MEASURES` and :data:`CLASS_MEASURES`.

    Parameters
    ----------
    counts : ndarray, shape (..., C, C)
        ``counts[..., c, j]``: items of true class ``c`` predicted ``j``.

    Returns
    -------
    dict of str to ndarray
        Scalar measures of shape ``(...)``; per-class ones of shape ``(..., C)``.

    Examples
    --------
    >>> import numpy as np
    >>> N = np.array([[5, 1, 0], [2, 3, 0], [0, 0, 0]])  # class 2: never true, never predicted
    >>> m = confusion_measures(N)
    >>> m["precision"], m["recall"]
    (array([0.71428571, 0.75      ,        nan]), array([0.83333333, 0.6       ,        nan]))
    >>> [round(float(m[k]), 3) for k in ("macro_f1", "micro_f1", "accuracy")]
    [0.718, 0.727, 0.727]
    """
    counts = np.asarray(counts, dtype=float)
    tp = np.diagonal(counts, axis1=-2, axis2=-1)
    predicted, true = counts.sum(axis=-2), counts.sum(axis=-1)
    n = counts.sum(axis=(-2, -1))
    recall = _ratio(tp, true)
    f1 = _ratio(2 * tp, predicted + true)
    errors = n - tp.sum(axis=-1)  # each one false positive and one false negative
    return {
        "accuracy": _ratio(tp.sum(axis=-1), n),
        "balanced_accuracy": _mean_present(recall),
        "macro_f1": _mean_present(f1),
        "micro_f1": _ratio(2 * tp.sum(axis=-1), 2 * tp.sum(axis=-1) + 2 * errors),
        "precision": _ratio(tp, predicted),
        "recall": recall,
        "f1": f1,
    }
