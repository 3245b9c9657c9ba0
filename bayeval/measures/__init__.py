"""Generalized measures: a vector loss, its mean ``R`` and a mapping ``G = g(R)``.

Marchant & Rubinstein (2021, §2.2, Definition 1) write a performance measure as ``G = g(R)``, where
``R = E[loss(x, y)]`` is the mean of a vector-valued loss (``d`` entries) over the population and
``g`` maps ``R^d`` to ``R^m``. Precision is ``loss = [y f, f]`` with ``g(R) = R1 / R2``; a whole
precision-recall curve is one measure with ``m = 2L`` outputs. An importance-sampling estimator
needs three things from a measure, and each class here provides them:

- :meth:`Measure.loss`, the loss vector of labelled items, to form the (weighted) mean ``R_hat``;
- :meth:`Measure.loss_table`, the loss of an item for each possible label ``y in {0, 1}``, to build
  a proposal before the label is known;
- :meth:`Measure.g` and :meth:`Measure.jacobian`, for ``G_hat = g(R_hat)`` and the delta-method
  variance ``J Sigma J^T``. Both are vectorised over leading axes, so they also map posterior draws
  of ``R`` of shape ``(chain, draw, d)``.

:meth:`Measure.value` is the sample-based measure of Remark 2: ``g`` of the mean loss over the
items given.

Where ``g`` is undefined (a zero denominator, such as precision with no predicted positive) ``g``
returns NaN, silently, and so does every row of the Jacobian of an undefined output.

A measure describes one system. To evaluate several systems jointly, use one measure per system
and concatenate their loss vectors along the last axis; split ``R`` back into the per-system blocks
(``dim`` entries each) before calling each ``g``.

Examples
--------
>>> import numpy as np
>>> from bayeval import measures
>>> f1 = measures.FScore(beta=1)
>>> y = np.array([1, 1, 1, 1, 0, 0, 0, 0])
>>> f = np.array([1, 1, 0, 0, 1, 0, 0, 0])
>>> f1.outputs, f1.dim
(('f1',), 2)
>>> R = f1.loss(y, predictions=f).mean(axis=0)
>>> R
array([0.25  , 0.4375])
>>> f1.g(R), f1.value(y, predictions=f)
(array([0.57142857]), array([0.57142857]))
>>> f1.jacobian(R)
array([[ 2.28571429, -1.30612245]])
>>> f1.loss_table(predictions=f[:2]).shape
(2, 2, 2)
"""

from bayeval.measures._base import Measure
from bayeval.measures.classification import (
    Accuracy,
    BalancedAccuracy,
    BrierScore,
    FowlkesMallows,
    FScore,
    MatthewsCorrelation,
    Precision,
    Recall,
)
from bayeval.measures.curve import PrecisionRecallCurve
from bayeval.measures.multiclass import ClassMeasure
from bayeval.measures.registry import by_name
from bayeval.measures.regression import MeanAbsoluteError, MeanSquaredError, RSquared

__all__ = [
    "by_name",
    "Accuracy",
    "BalancedAccuracy",
    "BrierScore",
    "ClassMeasure",
    "FScore",
    "FowlkesMallows",
    "MatthewsCorrelation",
    "MeanAbsoluteError",
    "MeanSquaredError",
    "Measure",
    "Precision",
    "PrecisionRecallCurve",
    "RSquared",
    "Recall",
]
