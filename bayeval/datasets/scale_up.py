"""Scaled-up ranked lists that follow a real list's precision curve (Sabharwal & Xue 2018, §5).

:func:`scale_up` smooths a fully labelled ranked list with a sliding-window average and replaces
each item by ``factor`` independent Bernoulli items with that probability. The result, a
:class:`ScaledList`, is lazy: the label of any position is computed on demand from
``(seed, position)``, so a 1000x list of 35 million items costs only its ``N`` window averages.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from bayeval._constraints import Array, Integer, Seed, validate
from bayeval._core.philox import position_uniforms
from bayeval._validation import check_labels, check_positions, philox_key
from bayeval.oracles import CallableOracle

__all__ = ["ScaledList", "scale_up"]

_STREAM = 0  # Philox counter word 2 for the Bernoulli draws (NoisyOracle uses 1)
_CHUNK = 1 << 20  # positions per block when materialising


class ScaledList:
    """A lazily generated ranked list of independent Bernoulli items, ``factor`` per probability.

    Item ``k`` (0-based) of the list has label ``Bernoulli(probabilities[k // factor])``, so the
    list has ``len(probabilities) * factor`` items and expected precision curve given by
    :meth:`true_precision`. Labels are never stored: each is recomputed from the seed and the
    position, identically on every call.

    Usually made by :func:`scale_up`; build one directly to scale any probability curve.

    Parameters
    ----------
    probabilities : array_like of float
        Per-block positive probabilities ``q_0, ..., q_{N-1}`` in ``[0, 1]``, top block first.
    factor : int
        Items per probability, ``>= 1``.
    rng : int, numpy.random.Generator or None
        Seed of the labels. An int seed fixes them through ``numpy.random.SeedSequence`` (the same
        seed gives the same labels); a Generator is advanced once to draw a key.

    Attributes
    ----------
    n_items : int
        ``N * factor``.
    factor : int
    probabilities : numpy.ndarray of float64
        The ``N`` block probabilities (read-only).
    key : tuple of int
        The two 32-bit Philox key words derived from ``rng``.

    Notes
    -----
    The uniform of position ``k`` is computed by the counter-based generator Philox4x32-10
    (Salmon et al., 2011) with the key above and counter ``(k mod 2**32, k // 2**32, 0, 0)``;
    its first two 32-bit output words make a 53-bit uniform ``u_k`` in ``[0, 1)`` and the label
    is ``u_k < q_{k // factor}``. Philox is a bijection of the counter for each key, designed so
    that distinct counters give statistically independent outputs; it makes every label a pure,
    exact function of (key, position), independent of the order or batching of the queries and
    of the numpy version. Memory is the ``N`` probabilities and their ``N + 1`` cumulative sums.

    References
    ----------
    J. K. Salmon, M. A. Moraes, R. O. Dror and D. E. Shaw, "Parallel random numbers: as easy
    as 1, 2, 3", SC 2011.

    Examples
    --------
    >>> from bayeval.datasets.scale_up import ScaledList
    >>> lst = ScaledList([0.9, 0.5, 0.1], factor=10**9, rng=1)
    >>> lst.n_items
    3000000000
    >>> lst.true_precision([10**9, 2 * 10**9, 3 * 10**9])
    array([0.9, 0.7, 0.5])
    >>> bool((lst.label([5, 2_999_999_999]) == lst.label([5, 2_999_999_999])).all())
    True
    """

    @validate(probabilities=Array(at_least=0, at_most=1), factor=Integer(minimum=1), rng=Seed())
    def __init__(
        self,
        probabilities: ArrayLike,
        factor: int,
        *,
        rng: int | np.random.Generator | None = None,
    ):
        q = probabilities  # a float64 copy of the caller's
        self._factor = factor
        self._key = philox_key(rng)
        q.flags.writeable = False
        self._q = q
        cum = np.empty(q.size + 1)
        cum[0] = 0.0
        np.cumsum(q, out=cum[1:])
        self._cum = cum
        self._n_items = q.size * self._factor

    @property
    def n_items(self) -> int:
        """Number of items, ``len(probabilities) * factor``."""
        return self._n_items

    @property
    def factor(self) -> int:
        """Items per probability."""
        return self._factor

    @property
    def probabilities(self) -> np.ndarray:
        """The block probabilities (read-only view)."""
        return self._q

    @property
    def key(self) -> tuple[int, int]:
        """The Philox key derived from ``rng``."""
        return self._key

    def label(self, positions: int | ArrayLike) -> np.ndarray:
        """Labels of the items at 0-based ``positions``, generated on demand.

        Parameters
        ----------
        positions : int or array_like of int
            ``0 <= position < n_items``.

        Returns
        -------
        numpy.ndarray of bool
            Labels with the shape of ``positions``; the same on every call.
        """
        pos = check_positions(positions, self._n_items)
        return self._labels_at(pos.reshape(-1)).reshape(pos.shape)

    def _labels_at(self, flat: np.ndarray) -> np.ndarray:
        u = position_uniforms(flat, self._key, _STREAM)
        return u < self._q[flat // self._factor]

    def oracle(self, budget: int | None = None) -> CallableOracle:
        """Return an oracle over this list that counts distinct annotations.

        Parameters
        ----------
        budget : int, optional
            Maximum number of distinct annotations.

        Returns
        -------
        bayeval.oracles.CallableOracle
            Vectorised: each ``label`` call generates all its new labels in one batch.

        Examples
        --------
        >>> from bayeval.datasets.scale_up import ScaledList
        >>> oracle = ScaledList([1.0, 0.0], factor=1000, rng=0).oracle(budget=10)
        >>> oracle.label([0, 999, 1000, 0])
        array([ True,  True, False,  True])
        >>> oracle.annotations
        3
        """
        return CallableOracle(
            self._labels_at, n_items=self._n_items, budget=budget, vectorized=True
        )

    def true_precision(self, ranks: int | ArrayLike) -> np.ndarray:
        """Return the expected precision of the list at ``ranks`` (1-based), exactly.

        Parameters
        ----------
        ranks : int or array_like of int
            ``1 <= rank <= n_items``.

        Returns
        -------
        numpy.ndarray of float64
            ``E[p(r)] = (1/r) sum_{k < r} q_{k // factor}`` with the shape of ``ranks``.

        Notes
        -----
        With ``C_j = q_0 + ... + q_{j-1}`` and ``r = j * factor + m`` (``0 <= m < factor``),
        ``r E[p(r)] = factor * C_j + m * q_j``; the cumulative sums are computed once, so each
        rank costs O(1). The realised precision of a generated list differs from this by
        binomial noise of standard deviation ``sqrt(sum_{k<r} q(1 - q)) / r``.
        """
        arr = np.asarray(ranks)
        flat = check_positions(arr.reshape(-1), None, name="ranks")
        if flat.size and (flat.min() < 1 or flat.max() > self._n_items):
            i = int(np.flatnonzero((flat < 1) | (flat > self._n_items))[0])
            raise ValueError(
                f"`ranks` must be in [1, n_items] = [1, {self._n_items}]; entry {i} is {flat[i]}."
            )
        j, m = np.divmod(flat, self._factor)
        tail = self._q[np.minimum(j, self._q.size - 1)]
        total = self._factor * self._cum[j] + m * tail
        return (total / np.maximum(flat, 1)).reshape(arr.shape)

    @validate(max_items=Integer(minimum=1))
    def materialise(self, *, max_items: int = 10**7) -> np.ndarray:
        """All ``n_items`` labels as one array (for tests and small lists).

        Parameters
        ----------
        max_items : int, default 10**7
            Refuse lists longer than this, to avoid an accidental multi-gigabyte array.

        Returns
        -------
        numpy.ndarray of bool
            ``labels[k] == self.label(k)`` for every position ``k``.
        """
        if self._n_items > max_items:
            raise ValueError(
                f"the list has {self._n_items} items, more than `max_items` = {max_items}; "
                f"use label(positions) or oracle() to generate labels lazily, or raise "
                f"`max_items`."
            )
        out = np.empty(self._n_items, dtype=bool)
        for start in range(0, self._n_items, _CHUNK):
            stop = min(start + _CHUNK, self._n_items)
            out[start:stop] = self._labels_at(np.arange(start, stop, dtype=np.int64))
        return out

    def __len__(self) -> int:
        return self._n_items

    def __repr__(self) -> str:
        return f"ScaledList(n_items={self._n_items}, blocks={self._q.size}, factor={self._factor})"


@validate(window=Integer(minimum=1))
def window_average(labels: ArrayLike, window: int = 100) -> np.ndarray:
    """Centred running average of 0/1 labels, with the window cut at the ends of the list.

    Parameters
    ----------
    labels : array_like of {0, 1} or bool
        Labels of a ranked list, top first.
    window : int, default 100
        Window length ``Delta >= 1``.

    Returns
    -------
    numpy.ndarray of float64
        ``q_i = mean(labels[lo_i:hi_i])`` with ``lo_i = max(0, i - Delta // 2)`` and
        ``hi_i = min(N, i - Delta // 2 + Delta)``: ``Delta // 2`` items before ``i``, ``i``
        itself and ``Delta - Delta // 2 - 1`` items after it (symmetric for odd ``Delta``). Near
        the ends the window is truncated at the list boundary rather than re-centred, so the
        first item averages over ``Delta - Delta // 2`` items; a window longer than the list
        averages over whatever lies within it.

    Examples
    --------
    >>> from bayeval.datasets.scale_up import window_average
    >>> window_average([1, 1, 0, 0, 1], window=3)
    array([1.        , 0.66666667, 0.33333333, 0.33333333, 0.5       ])
    """
    v = check_labels(labels, "labels")
    if v.size == 0:
        raise ValueError("`labels` must contain at least one label; got an empty sequence.")
    n = v.size
    cum = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(v, out=cum[1:])
    i = np.arange(n, dtype=np.int64)
    lo = np.maximum(i - window // 2, 0)
    hi = np.minimum(i - window // 2 + window, n)
    return (cum[hi] - cum[lo]) / (hi - lo)


@validate(factor=Integer(minimum=1), window=Integer(minimum=1), rng=Seed())
def scale_up(
    labels: ArrayLike,
    factor: int,
    *,
    window: int = 100,
    rng: int | np.random.Generator | None = None,
) -> ScaledList:
    """Scale a labelled ranked list up ``factor`` times, keeping its precision curve.

    The construction of the PPDB-36K-10x/100x/1000x data sets of Sabharwal & Xue (2018), §5:
    the running average ``q_i`` of the labels over a sliding window (:func:`window_average`) is
    computed, and each original item ``i`` is replaced by ``factor`` items, each an independent
    ``Bernoulli(q_i)`` draw, in place (items ``i * factor`` to ``(i + 1) * factor - 1``).

    Parameters
    ----------
    labels : array_like of {0, 1} or bool
        Labels of the original ranked list, top-ranked first.
    factor : int
        Scaling factor ``s >= 1``; the new list has ``len(labels) * factor`` items.
    window : int, default 100
        Length ``Delta`` of the sliding window (the paper's ``Delta = 100``).
    rng : int, numpy.random.Generator or None
        Seed of the Bernoulli draws; the same int seed gives the same list.

    Returns
    -------
    ScaledList
        The lazy list: ``label(positions)``, ``oracle(budget)``, ``true_precision(ranks)``,
        ``materialise()``.

    Notes
    -----
    The precision of the new list at rank ``r = j * factor`` has expectation
    ``(q_0 + ... + q_{j-1}) / j``, the original curve smoothed over the window, and binomial
    fluctuations of order ``1 / sqrt(r)``. Nothing of size ``N * factor`` is ever allocated:
    the object holds the ``N`` window averages and their cumulative sums, and generates labels
    on demand (see :class:`ScaledList`). The paper says only that smaller windows are used
    near the ends; the exact truncation used here is documented in :func:`window_average`.

    References
    ----------
    A. Sabharwal and Y. Xue, "Adaptive stratified sampling for precision-recall estimation",
    UAI 2018, §5.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.datasets.scale_up import scale_up
    >>> labels = np.random.default_rng(0).random(36_000) < np.linspace(0.95, 0.3, 36_000)
    >>> big = scale_up(labels, 1000, rng=0)
    >>> big.n_items
    36000000
    >>> big.probabilities.shape
    (36000,)
    >>> big.true_precision([1000, 36_000_000]).round(3)
    array([0.96 , 0.628])
    """
    q = window_average(labels, window)
    return ScaledList(q, factor, rng=rng)
