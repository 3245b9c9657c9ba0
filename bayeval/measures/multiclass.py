"""Measures of a multiclass system: accuracy, balanced accuracy, macro- and micro-F1.

An item of true class ``y`` that the system predicts ``f`` has the loss vector of ``3C``
entries ``[1{y = c, f = c}, 1{f = c}, 1{y = c}]`` over the classes ``c``, so ``R`` holds the
shares of true positives, predicted and true items of each class, and every measure is ``g``
of them (the definitions of :mod:`bayeval._core.multiclass`, where the model's posterior draws
of the confusion matrix are mapped to the same measures).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from bayeval._constraints import Integer, OneOf, validate_fields
from bayeval._core.multiclass import SCALAR_MEASURES
from bayeval.measures._base import Measure, first_index

__all__ = ["ClassMeasure"]


@dataclass(frozen=True)
@validate_fields(kind=OneOf(SCALAR_MEASURES), n_classes=Integer(minimum=2))
class ClassMeasure(Measure):
    """A measure of a multiclass system's predictions (labels and predictions are classes).

    Parameters
    ----------
    kind : {"accuracy", "balanced_accuracy", "macro_f1", "micro_f1"}
        ``accuracy``: the share predicted right (with one label per item it equals
        ``micro_f1``). ``macro_f1``: the mean of the classes' F1 ``2 tp / (predicted + true)``
        over the classes present among the labels or the predictions. ``balanced_accuracy``:
        the mean recall over the classes present among the labels (scikit-learn's
        definitions).
    n_classes : int
        Classes ``0 .. n_classes - 1``.

    Notes
    -----
    Which classes are present is read from ``R`` (a share above zero), so for an estimate from
    a sample it is the classes the sample holds; the delta method treats that set as fixed.

    Examples
    --------
    >>> from bayeval.measures import ClassMeasure
    >>> y = [0, 0, 1, 1, 2, 2]
    >>> f = [0, 1, 1, 1, 2, 0]
    >>> ClassMeasure("macro_f1", n_classes=3).value(y, predictions=f).round(4)
    array([0.6556])
    >>> ClassMeasure("accuracy", n_classes=3).value(y, predictions=f).round(4)
    array([0.6667])
    """

    kind: str
    n_classes: int

    label_type: ClassVar[str] = "multiclass"

    @property
    def name(self) -> str:
        """The measure's name, ``kind``: the variable of the model's posterior it matches."""
        return self.kind

    @property
    def dim(self) -> int:
        """``3 n_classes``: each class's true positives, predicted and true items."""
        return 3 * self.n_classes

    def _check_labels(self, labels) -> np.ndarray:
        return self._indices(labels, "labels")

    def _system_output(self, predictions, scores):
        if predictions is None:
            raise ValueError(
                "ClassMeasure needs `predictions`, the predicted classes; got predictions=None."
            )
        return self._indices(predictions, "predictions")

    def _label_space(self) -> np.ndarray:
        return np.arange(self.n_classes, dtype=np.float64)

    def _indices(self, values, name: str) -> np.ndarray:
        """Return class indices ``0 .. n_classes - 1`` as floats, or raise naming ``name``."""
        given = np.asarray(values)
        allowed = f"class indices 0 .. {self.n_classes - 1}"
        if given.dtype.kind not in "iuf":
            raise ValueError(f"`{name}` must contain {allowed}; got dtype {given.dtype}.")
        arr = given.astype(np.float64)
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(arr) | (arr != np.round(arr)) | (arr < 0) | (arr >= self.n_classes)
        if bad.any():
            i = first_index(bad)
            raise ValueError(f"`{name}` must contain {allowed}; entry {i} is {given[i].item()!r}.")
        return arr

    def _loss(self, y, x):
        y, x = np.broadcast_arrays(y, x)
        c = np.arange(self.n_classes)
        hit, predicted = (y[..., None] == c) & (x[..., None] == c), x[..., None] == c
        return np.concatenate([hit, predicted, y[..., None] == c], axis=-1).astype(np.float64)

    def _parts(self, R):
        C = self.n_classes
        return R[..., :C], R[..., C : 2 * C], R[..., 2 * C :]

    def _g(self, R):
        tp, predicted, true = self._parts(R)
        if self.kind in ("accuracy", "micro_f1"):
            return tp.sum(axis=-1, keepdims=True)
        if self.kind == "macro_f1":
            value, present = 2 * tp / (predicted + true), (predicted + true) > 0
        else:
            value, present = tp / true, true > 0
        total = np.where(present, value, 0.0).sum(axis=-1, keepdims=True)
        return total / present.sum(axis=-1, keepdims=True)

    def _jacobian(self, R):
        tp, predicted, true = self._parts(R)
        jac = np.zeros((*R.shape[:-1], 1, self.dim))
        C = self.n_classes
        if self.kind in ("accuracy", "micro_f1"):
            jac[..., 0, :C] = 1.0
            return jac
        if self.kind == "macro_f1":
            den = predicted + true
            present = den > 0
            n = present.sum(axis=-1, keepdims=True)
            d_tp = np.where(present, 2 / (n * den), 0.0)
            d_den = np.where(present, -2 * tp / (n * den**2), 0.0)
            jac[..., 0, :C], jac[..., 0, C : 2 * C], jac[..., 0, 2 * C :] = d_tp, d_den, d_den
            return jac
        present = true > 0
        n = present.sum(axis=-1, keepdims=True)
        jac[..., 0, :C] = np.where(present, 1 / (n * true), 0.0)
        jac[..., 0, 2 * C :] = np.where(present, -tp / (n * true**2), 0.0)
        return jac
