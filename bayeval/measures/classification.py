"""Binary classification measures of Marchant & Rubinstein (2021), Table 1."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from bayeval._constraints import Positive, validate_fields
from bayeval.measures._base import Measure, ratio

__all__ = [
    "Accuracy",
    "BalancedAccuracy",
    "BrierScore",
    "FScore",
    "FowlkesMallows",
    "MatthewsCorrelation",
    "Precision",
    "Recall",
]


# --------------------------------------------------------------------------- Table 1


@dataclass(frozen=True)
class Accuracy(Measure):
    """Accuracy: ``loss = 1{y != f}`` (the error indicator), ``g(R) = 1 - R``.

    Examples
    --------
    >>> from bayeval import measures
    >>> y = [1, 1, 1, 1, 0, 0, 0, 0]
    >>> f = [1, 1, 0, 0, 1, 0, 0, 0]
    >>> measures.Accuracy().value(y, predictions=f)
    array([0.625])
    """

    _name: ClassVar[str] = "accuracy"

    def _loss(self, y, x):
        return (y != x).astype(np.float64)[..., None]

    def _g(self, R):
        return 1.0 - R

    def _jacobian(self, R):
        return np.full((*R.shape[:-1], 1, 1), -1.0)


@dataclass(frozen=True)
class _ConfusionMeasure(Measure):
    """A measure of the loss ``[y f, y, f]``: true positives, positives, predicted positives."""

    _dim: ClassVar[int] = 3

    def _loss(self, y, x):
        y, x = np.broadcast_arrays(y, x)
        return np.stack([y * x, y, x], axis=-1)


@dataclass(frozen=True)
class BalancedAccuracy(_ConfusionMeasure):
    """Balanced accuracy ``(TPR + TNR) / 2`` with ``loss = [y f, y, f]`` (Table 1 of [1]_).

    Notes
    -----
    ``g(R) = (R1 + R2 (1 - R2 - R3)) / (2 R2 (1 - R2))``, as in the paper; it is NaN when all
    labels are equal (``R2`` is 0 or 1).

    References
    ----------
    .. [1] N. G. Marchant and B. I. P. Rubinstein. Needle in a haystack: label-efficient
       evaluation under extreme class imbalance. KDD 2021. Section 2.2.

    Examples
    --------
    >>> from bayeval import measures
    >>> y = [1, 1, 1, 1, 0, 0, 0, 0]
    >>> f = [1, 1, 0, 0, 1, 0, 0, 0]
    >>> measures.BalancedAccuracy().value(y, predictions=f)
    array([0.625])
    """

    _name: ClassVar[str] = "balanced_accuracy"

    # With R = [E(yf), E(y), E(f)]: TPR = R1 / R2 and TNR = E[(1-y)(1-f)] / E[1-y]
    # = (1 - R2 - R3 + R1) / (1 - R2). Over the common denominator 2 R2 (1 - R2),
    # (TPR + TNR) / 2 has numerator R1 (1 - R2) + R2 (1 - R2 - R3 + R1) = R1 + R2 (1 - R2 - R3),
    # which is Table 1's g: the paper's formula is (TPR + TNR) / 2 exactly. It is evaluated as
    # (R1 / R2 + 1 - (R3 - R1) / (1 - R2)) / 2, with R3 - R1 = E[(1 - y) f] the false-positive
    # mass, which rounds less (a perfect classifier gets exactly 1).
    def _g(self, R):
        r1, r2, r3 = R[..., 0], R[..., 1], R[..., 2]
        tpr, fpr = r1 / r2, (r3 - r1) / (1 - r2)
        return np.where(r2 * (1 - r2) == 0, np.nan, (tpr + 1 - fpr) / 2)[..., None]

    def _jacobian(self, R):
        # differentiate g = (R1 / R2 + (1 - R2 - R3 + R1) / (1 - R2)) / 2
        r1, r2, r3 = R[..., 0], R[..., 1], R[..., 2]
        d1 = 1 / (2 * r2 * (1 - r2))
        d2 = (-r1 / r2**2 + (r1 - r3) / (1 - r2) ** 2) / 2
        d3 = -1 / (2 * (1 - r2)) + 0 * r1
        return np.stack([d1, d2, d3], axis=-1)[..., None, :]


@dataclass(frozen=True)
class _RatioMeasure(Measure):
    """A measure ``g(R) = R1 / R2`` of a two-entry loss whose first entry is ``y f``."""

    _dim: ClassVar[int] = 2

    def _second(self, y, x):
        raise NotImplementedError

    def _loss(self, y, x):
        y, x = np.broadcast_arrays(y, x)
        return np.stack([y * x, self._second(y, x)], axis=-1)

    def _g(self, R):
        return ratio(R[..., 0], R[..., 1])[..., None]

    def _jacobian(self, R):
        r1, r2 = R[..., 0], R[..., 1]
        return np.stack([1 / r2, -r1 / r2**2], axis=-1)[..., None, :]


@dataclass(frozen=True)
class Precision(_RatioMeasure):
    """Precision ``TP / (TP + FP)``: ``loss = [y f, f]``, ``g(R) = R1 / R2``.

    NaN when nothing is predicted positive.

    Examples
    --------
    >>> from bayeval import measures
    >>> y = [1, 1, 1, 1, 0, 0, 0, 0]
    >>> f = [1, 1, 0, 0, 1, 0, 0, 0]
    >>> measures.Precision().value(y, predictions=f)
    array([0.66666667])
    >>> measures.Precision().value([1, 0], predictions=[0, 0])
    array([nan])
    """

    _name: ClassVar[str] = "precision"

    def _second(self, y, x):
        return x


@dataclass(frozen=True)
class Recall(_RatioMeasure):
    """Recall ``TP / (TP + FN)``: ``loss = [y f, y]``, ``g(R) = R1 / R2``.

    NaN when there is no positive label.

    Examples
    --------
    >>> from bayeval import measures
    >>> y = [1, 1, 1, 1, 0, 0, 0, 0]
    >>> f = [1, 1, 0, 0, 1, 0, 0, 0]
    >>> measures.Recall().value(y, predictions=f)
    array([0.5])
    """

    _name: ClassVar[str] = "recall"

    def _second(self, y, x):
        return y


@dataclass(frozen=True)
@validate_fields(beta=Positive())
class FScore(_RatioMeasure):
    """F-beta score: ``loss = [y f, (beta^2 y + f) / (1 + beta^2)]``, ``g(R) = R1 / R2``.

    ``g(R)`` is ``(1 + beta^2) TP / ((1 + beta^2) TP + beta^2 FN + FP)``; ``beta = 1`` is F1.
    NaN when there is neither a positive label nor a predicted positive.

    Parameters
    ----------
    beta : float, default 1
        Positive weight of recall relative to precision.

    Examples
    --------
    >>> from bayeval import measures
    >>> y = [1, 1, 1, 1, 0, 0, 0, 0]
    >>> f = [1, 1, 0, 0, 1, 0, 0, 0]
    >>> f2 = measures.FScore(beta=2)
    >>> f2.name, f2.value(y, predictions=f)
    ('f2', array([0.52631579]))
    """

    beta: float = 1.0

    @property
    def name(self) -> str:
        """``"f"`` followed by ``beta``, such as ``"f1"`` or ``"f0.5"``."""
        return f"f{self.beta:g}"

    def _second(self, y, x):
        b2 = self.beta**2
        return (b2 * y + x) / (1 + b2)


@dataclass(frozen=True)
class MatthewsCorrelation(_ConfusionMeasure):
    """Matthews correlation coefficient with ``loss = [y f, y, f]``.

    ``g(R) = (R1 - R2 R3) / sqrt(R2 R3 (1 - R2) (1 - R3))`` (Table 1 of Marchant & Rubinstein,
    2021), in ``[-1, 1]``. It is NaN when the labels or the predictions are all equal (where some
    libraries return 0 instead).

    Examples
    --------
    >>> from bayeval import measures
    >>> y = [1, 1, 1, 1, 0, 0, 0, 0]
    >>> f = [1, 1, 0, 0, 1, 0, 0, 0]
    >>> measures.MatthewsCorrelation().value(y, predictions=f)
    array([0.25819889])
    """

    _name: ClassVar[str] = "matthews_correlation"
    value_range: ClassVar[tuple[float, float]] = (-1.0, 1.0)

    def _g(self, R):
        # R1 - R2 R3 = TP TN - FP FN (per item squared): evaluated in that form, with
        # FP = R3 - R1, FN = R2 - R1 and TN = (1 - R2) - FP, it rounds less
        r1, r2, r3 = R[..., 0], R[..., 1], R[..., 2]
        fp, fn = r3 - r1, r2 - r1
        num = r1 * ((1 - r2) - fp) - fp * fn
        return ratio(num, np.sqrt((r2 * (1 - r2)) * (r3 * (1 - r3))))[..., None]

    def _jacobian(self, R):
        r1, r2, r3 = R[..., 0], R[..., 1], R[..., 2]
        s = np.sqrt(r2 * r3 * (1 - r2) * (1 - r3))
        g = (r1 - r2 * r3) / s
        d1 = 1 / s
        d2 = -r3 / s - g * (1 - 2 * r2) / (2 * r2 * (1 - r2))
        d3 = -r2 / s - g * (1 - 2 * r3) / (2 * r3 * (1 - r3))
        return np.stack([d1, d2, d3], axis=-1)[..., None, :]


@dataclass(frozen=True)
class FowlkesMallows(_ConfusionMeasure):
    """Fowlkes-Mallows index ``sqrt(precision * recall)`` with ``loss = [y f, y, f]``.

    ``g(R) = R1 / sqrt(R2 R3)``; NaN when there is no positive label or no predicted positive.

    Examples
    --------
    >>> from bayeval import measures
    >>> y = [1, 1, 1, 1, 0, 0, 0, 0]
    >>> f = [1, 1, 0, 0, 1, 0, 0, 0]
    >>> measures.FowlkesMallows().value(y, predictions=f)
    array([0.57735027])
    """

    _name: ClassVar[str] = "fowlkes_mallows"

    def _g(self, R):
        r1, r2, r3 = R[..., 0], R[..., 1], R[..., 2]
        return ratio(r1, np.sqrt(r2 * r3))[..., None]

    def _jacobian(self, R):
        r1, r2, r3 = R[..., 0], R[..., 1], R[..., 2]
        root = np.sqrt(r2 * r3)
        g = r1 / root
        # dg/dR1 = 1 / sqrt(R2 R3), defined also at R1 = 0 (no true positive yet)
        return np.stack([1 / root, -g / (2 * r2), -g / (2 * r3)], axis=-1)[..., None, :]


@dataclass(frozen=True)
class BrierScore(Measure):
    """Brier score with the paper's ``loss = 2 (p1 - y)^2`` and ``g(R) = R`` (Table 1 of [1]_).

    Uses ``scores``, the system's probabilities ``p1`` of class 1.

    Notes
    -----
    The factor 2 is Brier's (1950) original definition, summed over both classes:
    ``(p1 - y)^2 + (p0 - (1 - y))^2 = 2 (p1 - y)^2``, so the score lies in ``[0, 2]``. It is twice
    the one-class convention (``mean((p1 - y)^2)``, scikit-learn's ``brier_score_loss``).

    References
    ----------
    .. [1] N. G. Marchant and B. I. P. Rubinstein. Needle in a haystack: label-efficient
       evaluation under extreme class imbalance. KDD 2021. Section 2.2.

    Examples
    --------
    >>> from bayeval import measures
    >>> measures.BrierScore().value([1, 0, 1, 0], scores=[0.9, 0.2, 0.6, 0.5])
    array([0.23])
    """

    system_output: ClassVar[Literal["predictions", "scores"]] = "scores"
    _output_kind: ClassVar[str] = "probability"
    _name: ClassVar[str] = "brier_score"

    def _loss(self, y, x):
        return (2 * (x - y) ** 2)[..., None]

    def _g(self, R):
        return R.copy()

    def _jacobian(self, R):
        return np.ones((*R.shape[:-1], 1, 1))
