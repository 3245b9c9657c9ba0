"""What the samplers estimate: one measure for every system of a pool, with its loss patterns.

A pool of ``S`` systems evaluated with a measure of loss dimension ``d`` has the stacked loss
``[loss_1(x, y), ..., loss_S(x, y)]`` of ``D = S d`` entries and ``G = [g(R_1), ..., g(R_S)]``
(Marchant & Rubinstein 2021, §2.2, evaluated for several systems on one set of labels).

For binary labels, the loss of an item for ``y = 0`` and ``y = 1`` depends on the item only
through a small *pattern*: the systems' decisions (for measures of predictions), or which
thresholds each score reaches (for a precision-recall curve). Items of one stratum with the same
pattern are interchangeable to a sampler: they share a proposal probability (a *cell*).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayeval.measures import Measure, PrecisionRecallCurve
from bayeval.pool import Pool

__all__ = ["NEEDS_FINITE_LOSSES", "Target"]

NEEDS_FINITE_LOSSES = (
    "{name} needs a measure whose loss takes finitely many values per item (classification "
    "measures of predictions, PrecisionRecallCurve); {measure!r} varies with each score. "
    "Use Passive or Stratified."
)

_CHUNK = 1 << 22


class Target:
    """A measure applied to every system of a pool, with per-item loss patterns.

    Parameters
    ----------
    pool : Pool
    measure : Measure
        A binary-label measure (classification measures, the precision-recall curve); on a
        multiclass pool a :class:`~bayeval.measures.ClassMeasure` of its classes.

    Attributes
    ----------
    pool : Pool
    measure : Measure
    dim : int
        Length of the stacked loss, ``n_systems * measure.dim``.
    outputs : tuple of str
        Names of the entries of ``G``: the measure's outputs, prefixed ``"system/"`` when the
        pool has several systems.
    patterns : numpy.ndarray or None
        Pattern of each item (small unsigned ints), or ``None`` for measures whose loss varies
        continuously with the score (the Brier score).
    table : numpy.ndarray or None
        ``(n_patterns, 2, dim)``: the loss of a pattern's items for ``y = 0`` and ``y = 1``
        (a multiclass pool: ``(n_classes, n_classes, dim)``, a row per true class).
    """

    def __init__(self, pool: Any, measure: Any):
        if not isinstance(pool, Pool):
            raise ValueError(f"`pool` must be a bayeval.Pool; got {type(pool).__name__}.")
        if not isinstance(measure, Measure):
            raise ValueError(
                "`measure` must be a bayeval.measures measure such as FScore(beta=1); got "
                f"{measure!r}."
            )
        if measure.label_type == "real":
            raise ValueError(
                f"`measure` must take binary labels; {type(measure).__name__} is a regression "
                "measure, and a pool holds 0/1 decisions, not predicted responses."
            )
        _check_label_space(pool, measure)
        self.pool, self.measure = pool, measure
        self.n_systems = pool.n_systems
        self.dim = self.n_systems * measure.dim
        if self.n_systems == 1:
            self.outputs = measure.outputs
        else:
            self.outputs = tuple(f"{s}/{o}" for s in pool.systems for o in measure.outputs)
        self.patterns, self.table = self._build_patterns()

    # -- g and its Jacobian over the stacked loss -------------------------------------------
    def _blocks(self, R: np.ndarray) -> list[np.ndarray]:
        d = self.measure.dim
        return [R[..., s * d : (s + 1) * d] for s in range(self.n_systems)]

    def g(self, R: np.ndarray) -> np.ndarray:
        """``G`` of stacked mean losses ``R`` of shape ``(..., dim)``: ``(..., n_outputs)``."""
        return np.concatenate([self.measure.g(b) for b in self._blocks(R)], axis=-1)

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        """Block-diagonal Jacobian of :meth:`g`, shape ``(..., n_outputs, dim)``."""
        R = np.asarray(R, dtype=float)
        m, d = len(self.measure.outputs), self.measure.dim
        out = np.zeros(R.shape[:-1] + (m * self.n_systems, self.dim))
        for s, block in enumerate(self._blocks(R)):
            out[..., s * m : (s + 1) * m, s * d : (s + 1) * d] = self.measure.jacobian(block)
        return out

    # -- losses ------------------------------------------------------------------------------
    def loss(self, positions: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Stacked loss of the items at ``positions`` with 0/1 ``labels``: ``(n, dim)``."""
        labels = np.asarray(labels, dtype=np.intp)
        if self.table is not None:
            return self.table[self.patterns[positions], labels]
        scores = self.pool.scores[positions].reshape(len(positions), -1)
        preds = self.pool.predictions[positions].reshape(len(positions), -1)
        return np.concatenate(
            [
                self.measure.loss(labels, predictions=preds[:, s], scores=scores[:, s])
                for s in range(self.n_systems)
            ],
            axis=-1,
        )

    def _build_patterns(self) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Per-item pattern codes and the loss table of each pattern (see the module notes)."""
        pool, measure, S = self.pool, self.measure, self.n_systems
        if measure.system_output == "predictions":  # a digit per system: its decision
            radix, source = pool.n_classes, pool.predictions
            representative = [np.arange(radix)] * S
        elif isinstance(measure, PrecisionRecallCurve):
            t = np.asarray(measure.thresholds)
            radix, source = t.size + 1, None
            representative = [np.concatenate([[-np.inf], t])] * S
        else:
            return None, None
        n_codes = radix**S
        if n_codes > 1 << 16:
            raise ValueError(
                f"{S} systems with {radix} loss patterns each give {n_codes} patterns; at most "
                f"65536 are supported (evaluate fewer systems at a time)."
            )
        codes = np.empty(pool.size, dtype=np.uint8 if n_codes <= 256 else np.uint16)
        for start in range(0, pool.size, _CHUNK):
            stop = min(start + _CHUNK, pool.size)
            if source is not None:
                digits = source[start:stop].reshape(stop - start, -1)
            else:
                block = pool.scores[start:stop].reshape(stop - start, -1)
                digits = np.searchsorted(t, block, side="right")
            codes[start:stop] = digits @ radix ** np.arange(S)
        # enumerate every code (few), decode its digits, tabulate the loss for y = 0 and 1
        all_codes = np.arange(n_codes)
        digits = (all_codes[:, None] // radix ** np.arange(S)) % radix
        table = np.concatenate(
            [self._loss_table(representative[s][digits[:, s]], s) for s in range(S)],
            axis=-1,
        )
        codes.setflags(write=False)
        return codes, table

    def _loss_table(self, output: np.ndarray, system: int) -> np.ndarray:
        if self.measure.system_output == "predictions":
            return self.measure.loss_table(predictions=output)
        return self.measure.loss_table(scores=output)

    def prior_positive(self, positions: slice | np.ndarray, system: int = 0) -> np.ndarray:
        """Scores read as ``P(y = 1 | x)``: as they are in [0, 1], else through the logistic."""
        s = self.pool.scores[positions]
        if s.ndim == 2:
            s = s[:, system]
        lo, hi = self.pool._lo[system], self.pool._hi[system]
        if lo >= 0.0 and hi <= 1.0:
            return np.asarray(s, dtype=float)
        return 1.0 / (1.0 + np.exp(-np.asarray(s, dtype=float)))


def _check_label_space(pool: Pool, measure: Measure) -> None:
    """Raise unless the measure's labels are the pool's: binary, or the same classes."""
    if pool.classes is None and measure.label_type == "multiclass":
        raise ValueError(
            f"`measure` {measure!r} takes multiclass labels; the pool is binary (build it with "
            "`classes=` for a multiclass system)."
        )
    if pool.classes is not None and (
        measure.label_type != "multiclass" or measure.n_classes != pool.n_classes
    ):
        raise ValueError(
            f"`measure` must be a ClassMeasure of the pool's {pool.n_classes} classes, such as "
            f'ClassMeasure("macro_f1", n_classes={pool.n_classes}); got {measure!r}.'
        )
