"""Constraints of parameters of several types or shapes, built from the one-value ones.

:class:`AnyOf` (a string or a bool, a preset name or an instance), :class:`Pair` (a Beta
prior's ``(a, b)``), :class:`SequenceOf` (budgets, method names), :class:`Array` (per-stratum
counts and weights, a number or one per stratum) and :class:`Flags` (per-stratum booleans).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayeval._constraints.scalars import Constraint, Real, shown

__all__ = ["AnyOf", "Array", "Flags", "Pair", "SequenceOf"]


class AnyOf(Constraint):
    """What one of ``options`` allows: the first that accepts the value normalises it.

    Examples
    --------
    >>> from bayeval._constraints import Flag, Text
    >>> title = AnyOf(Text(), Flag())
    >>> title.check("Recall", "title"), title.check(False, "title")
    ('Recall', False)
    >>> title.check(1, "title")
    Traceback (most recent call last):
    ...
    ValueError: `title` must be a string, True or False; got 1.
    """

    def __init__(self, *options: Constraint):
        if len(options) < 2:
            raise TypeError("AnyOf needs at least two constraints")
        self.options = options

    def check(self, value, name):
        for option in self.options:
            try:
                return option.check(value, name)
            except ValueError:
                continue
        raise ValueError(f"`{name}` must be {self.allowed()}; got {shown(value)}.")

    def allowed(self):
        words = [option.allowed() for option in self.options]
        last = ", " if " or " in words[-1] else " or "  # "a string, True or False"
        return f"{', '.join(words[:-1])}{last}{words[-1]}"

    def bad_example(self):
        for option in self.options:
            bad = option.bad_example()
            if not any(_accepts(other, bad) for other in self.options):
                return bad
        raise TypeError("no option's bad example is refused by every option")

    def good_example(self):
        for option in self.options:
            try:
                return option.good_example()
            except TypeError:  # an Instance without an example
                continue
        raise TypeError("no option has a good example")


class Array(Constraint):
    """A finite real array of the given dimensions, within bounds, passed on as a float64 copy.

    Parameters
    ----------
    ndim : int or tuple of int, default 1
        The dimensions allowed. ``(0, 1)`` allows a number or a 1-d array (a value per
        stratum, say), passed on as a 0-d or 1-d array for the body to broadcast.
    whole : bool, default False
        Whole numbers only (whole floats such as ``100.0`` too), passed on as int64.
    above, at_least, below, at_most : float, optional
        Bounds of every entry, as :class:`Real`'s.
    size : int, optional
        The length of a 1-d array (default: any, but at least 1; arrays are never empty).
    atleast_1d : bool, default False
        Take a number as a one-entry array (as ``numpy.atleast_1d`` does).
    increasing : bool, default False
        Strictly increasing entries.

    Notes
    -----
    Booleans, strings, objects and ragged nesting are refused, as are NaN and infinity. The
    message shows the value as plain Python (long arrays shortened) and the first bad entry.

    Examples
    --------
    >>> prevalences = Array(at_least=0, at_most=1)
    >>> prevalences.check([0.1, 0.5], "prevalences")
    array([0.1, 0.5])
    >>> prevalences.check([0.1, 1.5], "prevalences")
    Traceback (most recent call last):
    ...
    ValueError: `prevalences` must be a non-empty 1-d array of numbers in the closed interval \
[0, 1]; got [0.1, 1.5] (entry 1 is 1.5).
    >>> Array(ndim=(0, 1), above=0).check(2, "scale")
    array(2.)
    """

    def __init__(
        self,
        *,
        ndim: int | tuple[int, ...] = 1,
        whole: bool = False,
        above=None,
        at_least=None,
        below=None,
        at_most=None,
        size: int | None = None,
        atleast_1d: bool = False,
        increasing: bool = False,
    ):
        self.ndim = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        self.entries = Real(above=above, at_least=at_least, below=below, at_most=at_most)
        self.whole, self.size = whole, size
        self.atleast_1d, self.increasing = atleast_1d, increasing

    def check(self, value, name):
        try:
            arr = np.asarray(value)
        except ValueError:  # ragged nesting
            arr = np.empty(0, dtype=object)
        if self.atleast_1d:
            arr = np.atleast_1d(arr)
        if (
            arr.dtype == bool
            or arr.dtype.kind not in "iuf"
            or arr.ndim not in self.ndim
            or (arr.ndim > 0 and arr.size == 0)
            or (self.size is not None and arr.ndim == 1 and arr.size != self.size)
        ):
            raise ValueError(f"`{name}` must be {self.allowed()}; got {shown(value)}.")
        bad = self.entries.outside(arr)
        if self.whole and arr.dtype.kind == "f":
            bad |= arr != np.round(arr)
        if self.increasing and arr.ndim == 1 and not bad.any():
            bad[1:] = np.diff(arr) <= 0
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            entry = f" (entry {where[0] if arr.ndim == 1 else where} is {shown(arr[where])})"
            if arr.ndim == 0:
                entry = ""
            raise ValueError(f"`{name}` must be {self.allowed()}; got {shown(value)}{entry}.")
        return arr.astype(np.int64 if self.whole else np.float64)

    def _numbers(self, plural: bool) -> str:
        noun = ("whole number" if self.whole else "number") + ("s" if plural else "")
        e = self.entries
        if (e.above, e.at_least, e.below, e.at_most) == (0, None, None, None):
            return f"positive {noun}"
        if (e.above, e.at_least, e.below, e.at_most) == (None, 0, None, None):
            return f"non-negative {noun}"
        if e.bounds() != (None, None):
            return f"{noun} {e.allowed()}"
        return noun if self.whole else f"finite {noun}"

    def allowed(self):
        dims = " or ".join(f"{d}-d" for d in self.ndim if d > 0)
        length = "non-empty " if self.size is None else ""
        order = "strictly increasing " if self.increasing else ""
        count = "" if self.size is None else f"{self.size} "
        array = f"a {order}{length}{dims} array of {count}{self._numbers(plural=True)}"
        if 0 in self.ndim and not self.atleast_1d:
            scalar = f"a {self._numbers(plural=False)}"
            return scalar if not dims else f"{scalar} or {array}"
        return array

    def _entry(self, good: bool) -> Any:
        bounded = self.entries.bounds() != (None, None)
        if good:
            entry = self.entries.good_example()
            return int(entry) if self.whole else entry
        return self.entries.bad_example() if bounded else (0.5 if self.whole else float("nan"))

    def _example(self, good: bool) -> Any:
        entry = self._entry(good)
        if 0 in self.ndim:
            return entry
        shape = [self.size or 1] + [1] * (min(self.ndim) - 1)
        return np.full(shape, entry).tolist()

    def bad_example(self):
        return self._example(good=False)

    def good_example(self):
        return self._example(good=True)


class Flags(Constraint):
    """A non-empty 1-d array of booleans (or of the integers 0 and 1), passed on as a bool copy.

    A single flag is taken as a one-entry array. Floats, strings and other integers are
    refused.

    Examples
    --------
    >>> Flags().check([1, 0], "retrieved")
    array([ True, False])
    >>> Flags().check([True, 2], "retrieved")
    Traceback (most recent call last):
    ...
    ValueError: `retrieved` must be a non-empty 1-d array of True or False (or 1 or 0); got \
[True, 2] (entry 1 is 2).
    """

    def check(self, value, name):
        try:
            arr = np.atleast_1d(np.asarray(value))
        except ValueError:  # ragged nesting
            arr = np.empty(0, dtype=object)
        if arr.ndim != 1 or arr.size == 0 or (arr.dtype != bool and arr.dtype.kind not in "iu"):
            raise ValueError(f"`{name}` must be {self.allowed()}; got {shown(value)}.")
        bad = (arr != 0) & (arr != 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"`{name}` must be {self.allowed()}; got {shown(value)} (entry {i} is "
                f"{shown(arr[i])})."
            )
        return arr.astype(bool)

    def allowed(self):
        return "a non-empty 1-d array of True or False (or 1 or 0)"

    def bad_example(self):
        return [0.5]

    def good_example(self):
        return [True]


class Pair(Constraint):
    """Two values, such as a Beta prior's ``(a, b)``, each allowed by ``inner``.

    Passed on as a tuple of the two normalised values.

    Examples
    --------
    >>> prior = Pair(Array(ndim=(0, 1), above=0))
    >>> prior.check((0.5, [1, 2]), "prior")
    (array(0.5), array([1., 2.]))
    >>> prior.check((0.5, -1), "prior")
    Traceback (most recent call last):
    ...
    ValueError: `prior` must be a pair (a, b), each a positive number or a non-empty 1-d array \
of positive numbers; got (0.5, -1) (entry 1 is -1).
    """

    def __init__(self, inner: Constraint, *, names: tuple[str, str] = ("a", "b")):
        self.inner, self.names = inner, names

    def check(self, value, name):
        try:
            two = not isinstance(value, str | bytes) and len(value) == 2
        except TypeError:
            two = False
        if not two:
            raise ValueError(f"`{name}` must be {self.allowed()}; got {shown(value)}.")
        return _entries(self, value, value, name)

    def allowed(self):
        return f"a pair ({', '.join(self.names)}), each {self.inner.allowed()}"

    def bad_example(self):
        return (self.inner.good_example(), self.inner.bad_example())

    def good_example(self):
        return (self.inner.good_example(), self.inner.good_example())


def _entries(constraint, items, given, name: str) -> tuple:
    """Check each of ``items`` against ``constraint.inner``; the message names the first bad one."""
    out = []
    for i, item in enumerate(items):
        try:
            out.append(constraint.inner.check(item, f"{name}[{i}]"))
        except ValueError as err:
            raise ValueError(
                f"`{name}` must be {constraint.allowed()}; got {shown(given)} (entry {i} is "
                f"{shown(item)})."
            ) from err
    return tuple(out)


class SequenceOf(Constraint):
    """A sequence (list, tuple, 1-d array, any iterable but a string) of what ``inner`` allows.

    Passed on as a tuple of the normalised entries; ``min_len`` entries at least.

    Examples
    --------
    >>> from bayeval._constraints import Whole
    >>> budgets = SequenceOf(Whole(minimum=1))
    >>> budgets.check([50, 250.0], "budgets")
    (50, 250)
    >>> budgets.check([50, 0], "budgets")
    Traceback (most recent call last):
    ...
    ValueError: `budgets` must be a non-empty sequence, each entry a whole number >= 1; got \
[50, 0] (entry 1 is 0).
    """

    def __init__(self, inner: Constraint, *, min_len: int = 1):
        self.inner, self.min_len = inner, min_len

    def check(self, value, name):
        items = None
        if isinstance(value, np.ndarray):
            items = value.tolist() if value.ndim == 1 else None
        elif not isinstance(value, str | bytes):
            try:
                items = list(value)
            except TypeError:
                pass
        given = value if isinstance(value, list | tuple | np.ndarray) or items is None else items
        if items is None or len(items) < self.min_len:
            raise ValueError(f"`{name}` must be {self.allowed()}; got {shown(given)}.")
        return _entries(self, items, given, name)

    def allowed(self):
        length = "" if self.min_len == 0 else "non-empty " if self.min_len == 1 else ""
        least = f" of at least {self.min_len} entries" if self.min_len > 1 else ""
        return f"a {length}sequence{least}, each entry {self.inner.allowed()}"

    def bad_example(self):
        return [self.inner.good_example()] * max(self.min_len - 1, 0) + [self.inner.bad_example()]

    def good_example(self):
        return [self.inner.good_example()] * max(self.min_len, 1)


def _accepts(constraint: Constraint, value: Any) -> bool:
    try:
        constraint.check(value, "value")
    except ValueError:
        return False
    return True
