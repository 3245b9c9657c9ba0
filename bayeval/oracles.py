"""Label sources for ranked lists: known labels, callables and noisy annotators.

A ranked list is ``N`` items addressed by 0-based position (position 0 is the top-ranked
item). An :class:`Oracle` returns the 0/1 label of the item at a position. Every oracle

- counts *distinct* annotations: a repeated query of the same item is free and returns the
  same label, as in Sabharwal & Sedghi (2017) and Sabharwal & Xue (2018);
- can be capped by a ``budget``; a call that would exceed it raises :class:`BudgetExhausted`
  before labelling anything;
- remembers every label it gave (:meth:`Oracle.labelled`), in first-query order, in a dict
  from position to label, so its memory is O(distinct annotations) however large ``N`` is.

Classes
-------
Oracle
    The base class; subclasses supply the labels of new positions.
LabelOracle
    A known 0/1 label array (simulation).
CallableOracle
    Any function of position, e.g. a prompt to a human annotator or a lazy synthetic list.
NoisyOracle
    Flips each item's label of a wrapped oracle with probability ``eta``.
BudgetExhausted
    Raised when a call would exceed an oracle's budget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from bayeval._constraints import Flag, Instance, Integer, Optional, Real, Seed, validate
from bayeval._core.philox import position_uniforms
from bayeval._validation import (
    LABEL_SPELLINGS,
    check_labels,
    check_positions,
    philox_key,
)

__all__ = [
    "BudgetExhausted",
    "CallableOracle",
    "LabelOracle",
    "NoisyOracle",
    "Oracle",
]


class BudgetExhausted(RuntimeError):
    """Raised when labelling would exceed an oracle's annotation budget.

    Attributes
    ----------
    budget : int
        The oracle's budget of distinct annotations.
    used : int
        Distinct annotations made before the refused call.
    requested : int
        New distinct positions the refused call asked for.
    """

    def __init__(self, budget: int, used: int, requested: int):
        self.budget = budget
        self.used = used
        self.requested = requested
        super().__init__(
            f"annotation budget exhausted: budget {budget}, used {used}, requested {requested} "
            f"new distinct position(s) ({budget - used} remaining); nothing was labelled by "
            f"this call."
        )


# --------------------------------------------------------------------------------------------
# Validation helpers shared with bayeval.datasets.scale_up
# --------------------------------------------------------------------------------------------


#: ``n_items`` and ``budget`` of every oracle: unknown (None) or a count.
COUNTS = {"n_items": Optional(Integer(minimum=1)), "budget": Optional(Integer(minimum=0))}


# --------------------------------------------------------------------------------------------
# Oracles
# --------------------------------------------------------------------------------------------


class Oracle:
    """Base class of label sources over a ranked list, with annotation counting and a budget.

    Subclasses implement ``_lookup(positions)``, returning the labels of new distinct positions
    (a 1-d int64 array) as anything :func:`numpy.asarray` turns into 0/1 values; the base class
    validates positions, enforces the budget, remembers every label and answers repeats.

    Parameters
    ----------
    n_items : int, optional
        Length ``N`` of the ranked list, if known; positions must then be in ``[0, N)``.
    budget : int, optional
        Maximum number of distinct annotations; ``None`` for no limit.

    Attributes
    ----------
    n_items : int or None
    budget : int or None
    annotations : int
        Distinct positions labelled so far.
    remaining : int or None
        ``budget - annotations``, or None without a budget.

    Notes
    -----
    Memory is a dict from position to label, O(distinct annotations), never O(N), so an oracle
    over ``N = 2 * 10**9`` items is as cheap as one over a hundred.

    References
    ----------
    A. Sabharwal and H. Sedghi, "How good are my predictions? Efficiently approximating
    precision-recall curves for massive datasets", UAI 2017, §2 (annotation cost model).

    Examples
    --------
    A label source is a subclass with a ``_lookup``:

    >>> import numpy as np
    >>> from bayeval.oracles import Oracle
    >>> class EveryThird(Oracle):
    ...     def _lookup(self, positions):
    ...         return positions % 3 == 0
    >>> oracle = EveryThird(n_items=10**9, budget=100)
    >>> oracle.label(np.array([0, 1, 3, 3]))
    array([ True, False,  True,  True])
    >>> oracle.annotations, oracle.remaining
    (3, 97)
    """

    @validate(**COUNTS)
    def __init__(self, *, n_items: int | None = None, budget: int | None = None):
        self._n_items, self._budget = n_items, budget
        self._labels: dict[int, bool] = {}

    @property
    def n_items(self) -> int | None:
        """Length of the ranked list, or None when unknown."""
        return self._n_items

    @property
    def budget(self) -> int | None:
        """Maximum number of distinct annotations, or None."""
        return self._budget

    @property
    def annotations(self) -> int:
        """Number of distinct positions labelled so far (repeats are free)."""
        return len(self._labels)

    @property
    def remaining(self) -> int | None:
        """Distinct annotations still allowed by the budget, or None without a budget."""
        return None if self._budget is None else self._budget - len(self._labels)

    def label(self, positions: int | ArrayLike) -> np.ndarray:
        """Labels of the items at ``positions``, labelling the new ones.

        Parameters
        ----------
        positions : int or array_like of int
            0-based positions, ``0 <= position < n_items`` (``>= 0`` when ``n_items`` is
            unknown). Repeats, within a call or across calls, are free and return the label
            given first.

        Returns
        -------
        numpy.ndarray of bool
            Labels with the shape of ``positions`` (0-d for a scalar position).

        Raises
        ------
        BudgetExhausted
            When the new distinct positions of this call would exceed the budget; nothing is
            labelled by the call then.
        ValueError
            For positions that are not whole numbers or are out of range.
        """
        pos = check_positions(positions, self._n_items)
        flat = pos.reshape(-1)
        if flat.size == 0:
            return np.zeros(pos.shape, dtype=bool)
        uniq, first, inverse = np.unique(flat, return_index=True, return_inverse=True)
        in_order = uniq[np.argsort(first, kind="stable")].tolist()
        labels = self._labels
        new = [p for p in in_order if p not in labels]
        if new:
            if self._budget is not None and len(labels) + len(new) > self._budget:
                raise BudgetExhausted(self._budget, len(labels), len(new))
            self._acquire(np.array(new, dtype=np.int64))
        uniq_labels = np.fromiter(
            map(labels.__getitem__, uniq.tolist()), dtype=bool, count=uniq.size
        )
        return uniq_labels[inverse.reshape(-1)].reshape(pos.shape)

    def labelled(self) -> tuple[np.ndarray, np.ndarray]:
        """Every position labelled so far and its label, in first-query order.

        Returns
        -------
        positions : numpy.ndarray of int64
        labels : numpy.ndarray of bool
        """
        n = len(self._labels)
        positions = np.fromiter(self._labels.keys(), dtype=np.int64, count=n)
        labels = np.fromiter(self._labels.values(), dtype=bool, count=n)
        return positions, labels

    def _acquire(self, new: np.ndarray) -> None:
        """Label the new distinct positions ``new`` and store them (all or nothing)."""
        values = check_labels(self._lookup(new), "labels")
        if values.shape != new.shape:
            raise ValueError(
                f"{type(self).__name__} returned {values.shape[0]} labels for {new.size} positions."
            )
        self._labels.update(zip(new.tolist(), values.tolist(), strict=True))

    def _lookup(self, positions: np.ndarray) -> ArrayLike:
        raise NotImplementedError(
            f"{type(self).__name__} must implement _lookup(positions) to give labels."
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n_items={self._n_items}, annotations={self.annotations}, "
            f"budget={self._budget})"
        )


class LabelOracle(Oracle):
    """An oracle over a known 0/1 label array, for simulations.

    Parameters
    ----------
    labels : array_like of {0, 1} or bool
        Label of the item at each position, position 0 first (top-ranked). Copied.
    budget : int, optional
        Maximum number of distinct annotations.

    Notes
    -----
    The label array is held (one byte per item); the annotation record is O(annotations).

    Examples
    --------
    >>> from bayeval.oracles import LabelOracle
    >>> oracle = LabelOracle([1, 1, 0, 1, 0], budget=3)
    >>> oracle.label([0, 2, 0])
    array([ True, False,  True])
    >>> oracle.annotations        # position 0 twice counts once
    2
    >>> oracle.label(3)
    array(True)
    >>> oracle.labelled()
    (array([0, 2, 3]), array([ True, False,  True]))
    >>> oracle.label(4)
    Traceback (most recent call last):
    ...
    bayeval.oracles.BudgetExhausted: annotation budget exhausted: budget 3, used 3, ...
    """

    @validate(budget=COUNTS["budget"])
    def __init__(self, labels: ArrayLike, *, budget: int | None = None):
        values = check_labels(labels, "labels")
        if values.size == 0:
            raise ValueError("`labels` must contain at least one label; got an empty sequence.")
        values.flags.writeable = False
        self._values = values
        super().__init__(n_items=values.size, budget=budget)

    def _lookup(self, positions: np.ndarray) -> np.ndarray:
        return self._values[positions]


class CallableOracle(Oracle):
    """An oracle that asks a function for the label of each new position.

    Parameters
    ----------
    fn : callable
        ``fn(position) -> label`` with ``position`` a Python int and the label 0, 1, False or
        True; with ``vectorized=True``, ``fn(positions) -> labels`` for a 1-d int64 array.
        Called only for positions not labelled before, each at most once.
    n_items : int, optional
        Length of the ranked list, if known (then positions are checked against it).
    budget : int, optional
        Maximum number of distinct annotations.
    vectorized : bool, default False
        Call ``fn`` once per :meth:`~Oracle.label` call with all its new distinct positions
        (in first-query order) instead of once per position.

    Notes
    -----
    With ``vectorized=False`` each label is stored as soon as ``fn`` returns it, so if ``fn``
    raises part way (an annotator quits) the labels already given are kept and counted. With
    ``vectorized=True`` a call stores all of its labels or none. A returned value that is not
    0/1 raises ``ValueError`` and is not stored.

    Examples
    --------
    >>> from bayeval.oracles import CallableOracle
    >>> oracle = CallableOracle(lambda i: i % 3 == 0, n_items=2 * 10**9)
    >>> oracle.label([0, 1, 1_999_999_999, 3])
    array([ True, False, False,  True])
    >>> oracle.annotations
    4
    """

    @validate(
        fn=Instance(Callable, "a callable", example=lambda: bool), **COUNTS, vectorized=Flag()
    )
    def __init__(
        self,
        fn: Callable[[Any], Any],
        *,
        n_items: int | None = None,
        budget: int | None = None,
        vectorized: bool = False,
    ):
        self._fn, self._vectorized = fn, vectorized
        super().__init__(n_items=n_items, budget=budget)

    def _acquire(self, new: np.ndarray) -> None:
        if self._vectorized:
            values = np.asarray(self._fn(new))
            if values.shape != new.shape:
                raise ValueError(
                    f"`fn` must return one label per position (shape {new.shape}); got shape "
                    f"{values.shape}."
                )
            self._labels.update(zip(new.tolist(), check_labels(values, "fn").tolist(), strict=True))
            return
        for p in new.tolist():
            self._labels[p] = _scalar_label(self._fn(p), p)


def _scalar_label(value: Any, position: int) -> bool:
    """Return a single returned label as bool, or raise naming ``fn`` and the position."""
    arr = np.asarray(value)
    ok = arr.ndim == 0 and (
        arr.dtype == bool
        or (
            np.issubdtype(arr.dtype, np.number)
            and not np.issubdtype(arr.dtype, np.complexfloating)
            and arr.item() in (0, 1)
        )
    )
    if not ok:
        raise ValueError(
            f"`fn` returned a label not 0/1 for position {position}: got {value!r}; allowed "
            f"are {LABEL_SPELLINGS}."
        )
    return bool(arr)


class NoisyOracle(Oracle):
    """Flip each item's label from another oracle with probability ``eta``.

    Models a noisy annotator: the label seen for item ``t`` equals ``1 - v(t)`` with
    probability ``eta < 1/2`` and ``v(t)`` otherwise, independently across items, as in
    Sabharwal & Xue (2018), §2. The flip of each item is drawn once; repeat queries return the
    same noisy label.

    Parameters
    ----------
    oracle : Oracle
        The oracle giving the true labels. It is queried once per new distinct position (so its
        own counts and budget apply too).
    eta : float
        Flip probability, ``0 <= eta < 0.5``.
    rng : int, numpy.random.Generator or None
        Seed of the flips. An int seed fixes them through ``numpy.random.SeedSequence``; a
        Generator is advanced once to draw a key.
    budget : int, optional
        Maximum number of distinct annotations of this oracle.

    Attributes
    ----------
    eta : float
    oracle : Oracle
        The wrapped oracle.

    Notes
    -----
    The flip of the item at position ``t`` is ``u(t) < eta`` with ``u(t)`` a uniform computed
    by the counter-based generator Philox4x32-10 from the key and ``t`` (Salmon et al., 2011).
    The noise is therefore a fixed function of (seed, position): it does not depend on the
    order of the queries, and the same seed gives the same noisy labels in every run.

    References
    ----------
    A. Sabharwal and Y. Xue, "Adaptive stratified sampling for precision-recall estimation",
    UAI 2018, §2.
    J. K. Salmon, M. A. Moraes, R. O. Dror and D. E. Shaw, "Parallel random numbers: as easy
    as 1, 2, 3", SC 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.oracles import LabelOracle, NoisyOracle
    >>> truth = np.ones(10_000, dtype=bool)
    >>> noisy = NoisyOracle(LabelOracle(truth), 0.1, rng=0)
    >>> seen = noisy.label(np.arange(10_000))
    >>> float(1 - seen.mean())                 # about 10 % flipped
    0.1
    >>> bool((noisy.label(np.arange(10_000)) == seen).all())   # stable on repeats
    True
    >>> noisy.annotations
    10000
    """

    _STREAM = 1  # Philox counter word 2: keeps flips independent of scale_up's draws

    @validate(
        oracle=Instance(Oracle, "a bayeval.oracles.Oracle", example=lambda: LabelOracle([0, 1])),
        eta=Real(at_least=0, below=0.5),
        rng=Seed(),
        budget=COUNTS["budget"],
    )
    def __init__(
        self,
        oracle: Oracle,
        eta: float,
        *,
        rng: int | np.random.Generator | None = None,
        budget: int | None = None,
    ):
        self._oracle, self._eta = oracle, eta
        self._key = philox_key(rng)
        super().__init__(n_items=oracle.n_items, budget=budget)

    @property
    def eta(self) -> float:
        """Flip probability."""
        return self._eta

    @property
    def oracle(self) -> Oracle:
        """The wrapped oracle giving the true labels."""
        return self._oracle

    def _lookup(self, positions: np.ndarray) -> np.ndarray:
        truth = self._oracle.label(positions)
        flip = position_uniforms(positions, self._key, self._STREAM) < self._eta
        return truth ^ flip
