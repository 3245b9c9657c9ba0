"""Scalar regression measures of Marchant & Rubinstein (2021), Table 2."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from bayeval.measures._base import Measure, ratio

__all__ = ["MeanAbsoluteError", "MeanSquaredError", "RSquared"]


# --------------------------------------------------------------------------- Table 2


@dataclass(frozen=True)
class _RegressionMeasure(Measure):
    label_type: ClassVar[Literal["binary", "real"]] = "real"
    _output_kind: ClassVar[str] = "real"
    value_range: ClassVar[tuple[float, float]] = (0.0, float("inf"))

    def _g(self, R):
        return R.copy()

    def _jacobian(self, R):
        return np.ones((*R.shape[:-1], 1, 1))


@dataclass(frozen=True)
class MeanAbsoluteError(_RegressionMeasure):
    """Mean absolute error: ``loss = |y - f|``, ``g(R) = R``.

    Examples
    --------
    >>> from bayeval import measures
    >>> measures.MeanAbsoluteError().value([1.0, 2.0, 4.0], predictions=[1.5, 2.0, 3.0])
    array([0.5])
    """

    _name: ClassVar[str] = "mean_absolute_error"

    def _loss(self, y, x):
        return np.abs(y - x)[..., None]


@dataclass(frozen=True)
class MeanSquaredError(_RegressionMeasure):
    """Mean squared error: ``loss = (y - f)^2``, ``g(R) = R``.

    Examples
    --------
    >>> from bayeval import measures
    >>> measures.MeanSquaredError().value([1.0, 2.0, 4.0], predictions=[1.5, 2.0, 3.0])
    array([0.41666667])
    """

    _name: ClassVar[str] = "mean_squared_error"

    def _loss(self, y, x):
        return ((y - x) ** 2)[..., None]


@dataclass(frozen=True)
class RSquared(_RegressionMeasure):
    """Coefficient of determination ``1 - SSE / SST`` with ``loss = [y, y^2, (y - f)^2]``.

    ``g(R) = 1 - R3 / (R2 - R1^2)``: the mean squared error over the variance of the labels.
    NaN when the labels are all equal.

    Notes
    -----
    This deliberately departs from Table 2 of [1]_, which gives ``loss = [y, y^2, f, f^2]`` and
    ``g(R) = (R4 - 2 R1 R3 + R1^2) / (R2 - R1^2)``. That numerator is
    ``E[f^2] - 2 E[y] E[f] + E[y]^2 = E[(f - E[y])^2]``, so the paper's ``g`` is the explained
    sum of squares over the total, ``SSR / SST``. It equals ``1 - SSE / SST`` only for
    least-squares fits with an intercept on their own training data; for any other predictor it
    is wrong (a constant prediction ``c != mean(y)`` gets ``(c - mean(y))^2 / var(y) > 0``
    instead of ``-(c - mean(y))^2 / var(y)``). ``1 - SSE / SST`` needs the cross moment
    ``E[y f]`` (``SSE / n = E[y^2] - 2 E[y f] + E[f^2]``), which the paper's loss lacks; the loss
    here carries the squared error itself, so ``value`` equals the usual sample ``R^2``
    (scikit-learn's ``r2_score``), and may be negative.

    ``R2 - R1^2`` is computed by subtraction and loses precision when ``|mean(y)|`` is much
    larger than the spread of ``y``; shift labels and predictions by the same constant (which
    leaves ``R^2`` unchanged) if that matters.

    References
    ----------
    .. [1] N. G. Marchant and B. I. P. Rubinstein. Needle in a haystack: label-efficient
       evaluation under extreme class imbalance. KDD 2021. Section 2.2.

    Examples
    --------
    >>> from bayeval import measures
    >>> measures.RSquared().value([1.0, 2.0, 4.0], predictions=[1.5, 2.0, 3.0])
    array([0.73214286])
    """

    value_range: ClassVar[tuple[float, float]] = (-float("inf"), 1.0)
    _name: ClassVar[str] = "r_squared"
    _dim: ClassVar[int] = 3

    def _loss(self, y, x):
        y, x = np.broadcast_arrays(y, x)
        return np.stack([y, y**2, (y - x) ** 2], axis=-1)

    def _g(self, R):
        r1, r2, r3 = R[..., 0], R[..., 1], R[..., 2]
        return (1 - ratio(r3, r2 - r1**2))[..., None]

    def _jacobian(self, R):
        r1, r2, r3 = R[..., 0], R[..., 1], R[..., 2]
        v = r2 - r1**2
        return np.stack([-2 * r1 * r3 / v**2, r3 / v**2, -1 / v], axis=-1)[..., None, :]
