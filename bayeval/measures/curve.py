"""The precision-recall curve as one generalized measure (Marchant & Rubinstein 2021, §2.2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from bayeval._constraints import Array, validate_fields
from bayeval.measures._base import Measure, ratio
from bayeval.measures.layout import format_threshold

__all__ = ["PrecisionRecallCurve"]


# --------------------------------------------------------------------------- Example 2


@dataclass(frozen=True)
@validate_fields(thresholds=Array(increasing=True, atleast_1d=True))
class PrecisionRecallCurve(Measure):
    """Precision and recall at each of ``L`` score thresholds (Example 2 of [1]_).

    An item is predicted positive at threshold ``t`` when its score is ``>= t``. The loss has
    ``2L + 1`` entries ``[1{s >= t_1..L}, y 1{s >= t_1..L}, y]`` and
    ``G = [R_{L+1} / R_1, ..., R_{2L} / R_L, R_{L+1} / R_{2L+1}, ..., R_{2L} / R_{2L+1}]``:
    the precisions at the thresholds in increasing order, then the recalls.

    Parameters
    ----------
    thresholds : array_like
        Finite, strictly increasing thresholds; stored as a tuple of floats.

    Notes
    -----
    Uses ``scores`` (any real numbers, infinities allowed, NaN refused). A precision is NaN at
    thresholds above every score, every recall is NaN without positive labels.

    References
    ----------
    .. [1] N. G. Marchant and B. I. P. Rubinstein. Needle in a haystack: label-efficient
       evaluation under extreme class imbalance. KDD 2021. Section 2.2.

    Examples
    --------
    >>> from bayeval import measures
    >>> pr = measures.PrecisionRecallCurve([0.25, 0.5])
    >>> pr.dim, pr.outputs
    (5, ('precision@0.25', 'precision@0.5', 'recall@0.25', 'recall@0.5'))
    >>> pr.value([1, 0, 1, 0], scores=[0.9, 0.6, 0.3, 0.1])
    array([0.66666667, 0.5       , 1.        , 0.5       ])
    """

    thresholds: tuple[float, ...]
    system_output: ClassVar[Literal["predictions", "scores"]] = "scores"
    _output_kind: ClassVar[str] = "score"
    _name: ClassVar[str] = "precision_recall_curve"

    def __post_init__(self):  # after validate_fields: a strictly increasing float64 array
        object.__setattr__(self, "thresholds", tuple(self.thresholds.tolist()))

    @property
    def dim(self) -> int:
        """``2L + 1`` for ``L`` thresholds."""
        return 2 * len(self.thresholds) + 1

    @property
    def outputs(self) -> tuple[str, ...]:
        """``precision@t`` for each threshold ``t``, then ``recall@t``."""
        names = [format_threshold(t) for t in self.thresholds]
        return tuple(f"precision@{t}" for t in names) + tuple(f"recall@{t}" for t in names)

    def _loss(self, y, x):
        y, x = np.broadcast_arrays(y, x)
        above = (x[..., None] >= np.asarray(self.thresholds)).astype(np.float64)
        return np.concatenate([above, y[..., None] * above, y[..., None]], axis=-1)

    def _g(self, R):
        L = len(self.thresholds)
        predicted, true_pos, positives = R[..., :L], R[..., L : 2 * L], R[..., 2 * L :]
        return np.concatenate([ratio(true_pos, predicted), ratio(true_pos, positives)], axis=-1)

    def _jacobian(self, R):
        L = len(self.thresholds)
        predicted, true_pos, positives = R[..., :L], R[..., L : 2 * L], R[..., 2 * L]
        jac = np.zeros((*R.shape[:-1], 2 * L, 2 * L + 1))
        rows = np.arange(L)
        jac[..., rows, rows] = -true_pos / predicted**2
        jac[..., rows, L + rows] = 1 / predicted
        jac[..., L + rows, L + rows] = 1 / positives[..., None]
        jac[..., L + rows, 2 * L] = -true_pos / positives[..., None] ** 2
        return jac
