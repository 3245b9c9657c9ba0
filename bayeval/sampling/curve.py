"""A precision curve labelled by people: the ranks a curve method asks for, through ask/tell.

:class:`CurveSampler` ranks the pool by score (highest first) and asks for the items at the
ranks LogStrat, PAULA, AdaStrat or the random baseline needs (:class:`bayeval.curves.
CurveQuestions`), so that a session (``Session.create(..., "curve", curve="adastrat")``), the
terminal (``bayeval label``), the notebook widget and Label Studio label them like any
sampler's questions. Its estimate is the method's curve once every label it needs is in.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayeval.curves.asktell import CurveQuestions
from bayeval.sampling.base import Sampler

__all__ = ["CurveSampler", "curve_rows"]


class CurveSampler(Sampler):
    """Ask for the items a precision-curve method needs; estimate its curve from their labels.

    Parameters
    ----------
    pool : bayeval.Pool
        One system's scores; rank 1 is the highest score (ties: the earlier item first).
    measure : bayeval.measures.Measure
        Kept for the session (``Precision()``); the estimate is the curve.
    curve : {"logstrat", "paula", "adastrat", "random"}, default "logstrat"
        The method (:class:`bayeval.curves.CurveQuestions`).
    batch_size : int, default 50
        The most items one :meth:`ask` returns; fewer when the method's current batch of
        ranks has fewer left (the method decides its batches).
    rng : int, numpy.random.Generator or None
        Seed of the method's own samples.
    **curve_options
        The method's keyword arguments (``epsilon``, ``delta``, ...; not ``rng``).

    Examples
    --------
    >>> import numpy as np
    >>> import bayeval as be
    >>> scores = np.linspace(1, 0, 5_000)
    >>> truth = (np.random.default_rng(0).random(5_000) < scores).astype(int)
    >>> sampler = be.sampling.CurveSampler(be.Pool(scores), be.measures.Precision(),
    ...                                    curve="paula", epsilon=0.3)
    >>> while sampler.stop_reason() is None:
    ...     ids = sampler.ask(100)  # a person labels these
    ...     sampler.tell(ids, truth[ids])
    >>> sampler.stop_reason()
    'the paula curve is complete: ... labels'
    >>> curve = sampler.estimate()
    >>> bool(curve.lower(1_000) <= curve.at(1_000) <= curve.upper(1_000))
    True
    """

    method = "curve"

    def __init__(self, pool: Any, measure: Any, *, curve: str = "logstrat",
                 batch_size: int = 50, rng: Any = None, **curve_options: Any):  # fmt: skip
        super().__init__(pool, measure, batch_size=batch_size, rng=rng)
        if pool.n_systems != 1:
            raise ValueError(
                f"`pool` must hold one system's scores for a curve; got {pool.n_systems}."
            )
        if curve != "paula":  # its samples' seed, from the sampler's
            curve_options["rng"] = int(self._rng.integers(2**31))
        scores = np.asarray(pool.scores, dtype=float)
        self._by_rank = np.lexsort((np.arange(scores.size), -scores))  # rank - 1 -> position
        self._rank = np.empty(scores.size, np.int64)
        self._rank[self._by_rank] = np.arange(scores.size)
        self.curve, self.curve_options = curve, curve_options
        self.questions = CurveQuestions(curve, scores.size, **curve_options)

    def _waiting(self) -> np.ndarray:
        """Positions of the method's current batch not asked yet."""
        positions = self._by_rank[self.questions.pending]
        return positions[[int(p) not in self._pending for p in positions]]

    def _available(self) -> int:
        return int(self._waiting().size)

    def ask(self, n: int | None = None) -> np.ndarray:
        """Ask for up to ``n`` items of the method's current batch (``batch_size`` by default).

        Raises
        ------
        ValueError
            When the curve is complete (no item left to ask), or the batch's items are all
            asked and wait for their labels.
        """
        n = self.batch_size if n is None else n
        available = self._available()
        if available == 0:
            state = "is complete" if self.questions.done else "waits for the asked labels"
            raise ValueError(f"`n` must be at most 0: the {self.curve} curve {state}; got {n}.")
        return super().ask(min(n, available))

    def _ask(self, n: int) -> np.ndarray:
        return self._waiting()[:n]

    def _on_labels(self, positions: np.ndarray, values: np.ndarray) -> None:
        self.questions.tell(self._rank[positions], values)

    def _update(self) -> None:
        """Nothing to refit: the method chooses its next ranks as the labels come in."""

    def _estimate(self, variance, target, posterior):
        """Not a measure's estimate: :meth:`estimate` returns the curve itself."""
        raise TypeError("a curve sampler's estimate is its curve: call estimate().")

    def stop_reason(self) -> str | None:
        """Return ``"the <method> curve is complete: <n> labels"`` once it is, else None."""
        if not self.questions.done:
            return None
        return f"the {self.curve} curve is complete: {self.labels_used} labels"

    def estimate(self, **options: Any):
        """Return the method's curve (:class:`~bayeval.curves.CurveResult`) from the labels.

        The labels are those the sampler holds now (a session's re-judged labels included),
        so the method runs again on them.

        Raises
        ------
        ValueError
            Before the method has every label it needs (or when re-judged labels lead an
            adaptive method to ranks nobody labelled).
        """
        if options:
            raise ValueError(
                f"a curve's estimate takes no options; got {sorted(options)} (the curve's own "
                "bounds and posterior band are on its result)."
            )
        replay = CurveQuestions(self.curve, self.pool.size, **self.curve_options)
        while len(ranks := replay.ask()):
            positions = self._by_rank[ranks]
            missing = [int(p) for p in positions if int(p) not in self._labels]
            if missing:
                raise ValueError(
                    f"no curve yet: the {self.curve} method needs {len(missing)} more label(s) "
                    f"(e.g. id {self._ids(missing[0])!r})."
                )
            replay.tell(ranks, [self._labels[int(p)] for p in positions])
        return replay.result


def curve_rows(curve: Any, n_ranks: int = 5) -> list[tuple[str, float, float, float]]:
    """Return ``(name, precision, lower, upper)`` at ``n_ranks`` ranks spread over a curve.

    The ranks are spaced geometrically from the first to the list's length (what a progress
    line or a report shows of a curve); the bounds are the method's guaranteed envelope.
    """
    ranks = np.unique(np.geomspace(1, curve.n_items, n_ranks).round().astype(np.int64))
    values, lower, upper = curve.at(ranks), curve.lower(ranks), curve.upper(ranks)
    return [(f"precision@{r:,}", float(v), float(lo), float(hi))
            for r, v, lo, hi in zip(ranks, values, lower, upper, strict=True)]  # fmt: skip
