"""Passive sampling: items drawn uniformly from the pool, with replacement."""

from __future__ import annotations

import numpy as np

from bayeval.sampling.base import ImportanceSampler

__all__ = ["Passive"]


class Passive(ImportanceSampler):
    """Draw items uniformly at random, with replacement (Definition 3 of [1]_).

    The estimate is ``g`` of the mean loss of the draws (re-draws of labelled items count as
    samples and cost nothing), with the delta-method covariance. It is the baseline every
    other sampler should beat under class imbalance.

    Parameters
    ----------
    pool, measure, batch_size, rng
        See :class:`bayeval.sampling.Sampler`.

    References
    ----------
    .. [1] N. G. Marchant and B. I. P. Rubinstein. Needle in a haystack: label-efficient
       evaluation under extreme class imbalance. KDD 2021.

    Examples
    --------
    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.random(1000)
    >>> truth = rng.random(1000) < scores          # labels correlated with the scores
    >>> sampler = be.sampling.Passive(be.Pool(scores), be.measures.Accuracy(), rng=1)
    >>> for _ in range(4):
    ...     ids = sampler.ask(50)
    ...     sampler.tell(ids, truth[ids])
    >>> sampler.estimate()
    Estimate(passive: accuracy=0.7465; labels_used=200)
    """

    method = "passive"
    multiclass = True

    def _draws_everything(self) -> bool:
        return True

    def _available(self) -> int:
        return self.pool.size - self.labels_used - len(self._pending)

    def _draw(self, k):
        positions = self._rng.integers(0, self.pool.size, size=k)
        return positions, np.full(k, 1.0 / self.pool.size)

    def _probability(self, positions, labels):
        return np.full(positions.size, 1.0 / self.pool.size)
