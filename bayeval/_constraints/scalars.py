"""Constraints of one value: numbers, choices, flags, seeds, strings and instances.

Each :class:`Constraint` checks a value and passes it on normalised (``Whole`` as an int,
``Prob`` as a float), says what it allows and gives a value it refuses and one it accepts;
:func:`shown` writes a refused value into a message as plain Python.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from bayeval._validation import (
    check_choice,
    check_int,
    check_nonnegative,
    check_positive,
    check_prob,
    check_real,
    check_rng,
    check_share,
    check_whole,
    plain,
)

__all__ = [
    "Constraint",
    "Flag",
    "Instance",
    "Integer",
    "Nonnegative",
    "OneOf",
    "Optional",
    "Positive",
    "Prob",
    "Real",
    "Seed",
    "Share",
    "Text",
    "Whole",
    "shown",
]


class Constraint:
    """What one parameter may be: ``check`` returns the normalised value or raises."""

    def check(self, value: Any, name: str) -> Any:
        raise NotImplementedError

    def allowed(self) -> str:
        """Describe what is allowed, as the message says it."""
        raise NotImplementedError

    def bad_example(self) -> Any:
        """Return a value the constraint refuses."""
        raise NotImplementedError

    def good_example(self) -> Any:
        """Return a value the constraint accepts."""
        raise NotImplementedError


class Prob(Constraint):
    """A probability in the open interval (0, 1)."""

    def check(self, value, name):
        return check_prob(value, name)

    def allowed(self):
        return "in the open interval (0, 1)"

    def bad_example(self):
        return 1.5

    def good_example(self):
        return 0.9


class OneOf(Constraint):
    """One of a fixed set of strings."""

    def __init__(self, options: Iterable[str]):
        self.options = tuple(options)

    def check(self, value, name):
        return check_choice(value, self.options, name)

    def allowed(self):
        return f"one of {', '.join(repr(o) for o in self.options)}"

    def bad_example(self):
        return "no-such-option"

    def good_example(self):
        return self.options[0]


class Whole(Constraint):
    """A whole number ``>= minimum`` (whole floats such as ``2e9`` are accepted)."""

    words = "a whole number"

    def __init__(self, *, minimum: int, maximum: int | None = None):
        self.minimum, self.maximum = minimum, maximum

    def check(self, value, name):
        return check_whole(value, name, minimum=self.minimum, maximum=self.maximum)

    def allowed(self):
        if self.maximum is None:
            return f"{self.words} >= {self.minimum}"
        return f"{self.words} in [{self.minimum}, {self.maximum}]"

    def bad_example(self):
        return self.minimum - 1

    def good_example(self):
        return self.minimum + 1


class Integer(Whole):
    """An integer ``>= minimum``; floats, even whole ones, are refused."""

    words = "an integer"

    def __init__(self, *, minimum: int):
        super().__init__(minimum=minimum)

    def check(self, value, name):
        return check_int(value, name, minimum=self.minimum)


class Real(Constraint):
    """A finite real number within bounds: ``above``/``at_least`` below it, ``below``/``at_most``.

    ``Real(above=0, at_most=1)`` allows ``(0, 1]``; ``Real(above=1)`` any number ``> 1``.
    """

    def __init__(self, *, above=None, at_least=None, below=None, at_most=None):
        if above is not None and at_least is not None or below is not None and at_most is not None:
            raise TypeError("give at most one lower bound and at most one upper bound")
        self.above, self.at_least, self.below, self.at_most = above, at_least, below, at_most

    def check(self, value, name):
        number = check_real(value, name)
        if self.outside(number):
            raise ValueError(f"`{name}` must be {self.allowed()}; got {plain(value)!r}.")
        return number

    def outside(self, values: Any) -> Any:
        """Tell which of ``values`` (a number or a float array) are NaN, infinite or outside."""
        values = np.asarray(values, dtype=np.float64)
        bad = ~np.isfinite(values)
        with np.errstate(invalid="ignore"):
            if self.above is not None:
                bad |= ~(values > self.above)
            if self.at_least is not None:
                bad |= ~(values >= self.at_least)
            if self.below is not None:
                bad |= ~(values < self.below)
            if self.at_most is not None:
                bad |= ~(values <= self.at_most)
        return bad

    def bounds(self) -> tuple[Any, Any]:
        """Return the lower and the upper bound (``None`` where there is none)."""
        low = self.above if self.above is not None else self.at_least
        high = self.below if self.below is not None else self.at_most
        return low, high

    def allowed(self):
        low, high = self.bounds()
        if low is None and high is None:
            return "a finite real number"
        if high is None:
            return f"greater than {low:g}" if self.above is not None else f"at least {low:g}"
        if low is None:
            return f"less than {high:g}" if self.below is not None else f"at most {high:g}"
        left, right = "(" if self.above is not None else "[", ")" if self.below is not None else "]"
        shape = {"()": "open ", "[]": "closed "}.get(left + right, "half-open ")
        return f"in the {shape}interval {left}{low:g}, {high:g}{right}"

    def bad_example(self):
        low, high = self.bounds()
        if low is None and high is None:
            return float("nan")
        return float(low - 1 if high is None else high + 1)

    def good_example(self):
        low, high = self.bounds()
        if low is None:
            return 0.0 if high is None else float(high - 1)
        return float(low + 1 if high is None else (low + high) / 2)


class Flag(Constraint):
    """``True`` or ``False`` (numpy booleans too), passed on as a Python bool."""

    def check(self, value, name):
        if not isinstance(value, bool | np.bool_):
            raise ValueError(f"`{name}` must be True or False; got {plain(value)!r}.")
        return bool(value)

    def allowed(self):
        return "True or False"

    def bad_example(self):
        return "yes"

    def good_example(self):
        return True


class Positive(Constraint):
    """A finite number ``> 0``."""

    def check(self, value, name):
        return check_positive(value, name)

    def allowed(self):
        return "a positive number"

    def bad_example(self):
        return -1.0

    def good_example(self):
        return 1.0


class Nonnegative(Constraint):
    """A finite number ``>= 0``."""

    def check(self, value, name):
        return check_nonnegative(value, name)

    def allowed(self):
        return "a number >= 0"

    def bad_example(self):
        return -1.0

    def good_example(self):
        return 1.0


class Share(Constraint):
    """A share of something: a number in ``[0, 1)``."""

    def check(self, value, name):
        return check_share(value, name)

    def allowed(self):
        return "a number in [0, 1)"

    def bad_example(self):
        return 1.0

    def good_example(self):
        return 0.25


class Seed(Constraint):
    """``None``, an int seed or a ``numpy.random.Generator`` (passed on unchanged)."""

    def check(self, value, name):
        check_rng(value)  # raises naming `rng`, the only seed parameter's name
        return value

    def allowed(self):
        return "None, an int seed or a numpy.random.Generator"

    def bad_example(self):
        return "seed"

    def good_example(self):
        return 0


class Optional(Constraint):
    """``None`` or what ``inner`` allows."""

    def __init__(self, inner: Constraint):
        self.inner = inner

    def check(self, value, name):
        return None if value is None else self.inner.check(value, name)

    def allowed(self):
        return self.inner.allowed()

    def bad_example(self):
        return self.inner.bad_example()

    def good_example(self):
        return None


class Text(Constraint):
    """A string (``nonempty=True``: not ``""``), passed on as a Python str."""

    def __init__(self, *, nonempty: bool = False):
        self.nonempty = nonempty

    def check(self, value, name):
        if not isinstance(value, str) or (self.nonempty and not value):
            raise ValueError(f"`{name}` must be {self.allowed()}; got {shown(value)}.")
        return str(value)

    def allowed(self):
        return "a non-empty string" if self.nonempty else "a string"

    def bad_example(self):
        return 1

    def good_example(self):
        return "text"


class Instance(Constraint):
    """An instance of a class, passed on unchanged.

    Parameters
    ----------
    cls : type, tuple of types or str
        The class (or any of several), or its dotted path (``"matplotlib.axes.Axes"``),
        imported at the first check: the module declaring the constraint need not import a
        heavy or higher layer.
    words : str
        What the message calls it, e.g. ``"a matplotlib Axes"``.
    example : callable, optional
        Builds an instance for :meth:`good_example`; without it there is none (wrap the
        constraint in :class:`Optional` or :class:`AnyOf` to give one).
    """

    def __init__(
        self, cls: type | tuple | str, words: str, *, example: Callable[[], Any] | None = None
    ):
        self.cls, self.words, self.example = cls, words, example

    def check(self, value, name):
        if isinstance(self.cls, str):
            module, _, attr = self.cls.rpartition(".")
            self.cls = getattr(importlib.import_module(module), attr)
        if not isinstance(value, self.cls):
            raise ValueError(f"`{name}` must be {self.words}; got {shown(value)}.")
        return value

    def allowed(self):
        return self.words

    def bad_example(self):
        for bad in ("no-such-object", ["no-such-object"]):  # a list for str or Hashable
            try:
                self.check(bad, "value")
            except ValueError:
                return bad
        raise TypeError(f"no bad example of {self.words}")

    def good_example(self):
        if self.example is None:
            raise TypeError(f"no example of {self.words}")
        return self.example()


def shown(value: Any, *, limit: int = 6) -> str:
    """Return the repr of ``value`` as plain Python, for a message; long sequences shortened.

    numpy scalars and arrays show as the Python numbers and lists they hold (``2``, not
    ``np.int64(2)``); lists, tuples and arrays show their first ``limit`` entries, then
    ``...``; other reprs are cut at 100 characters.

    Examples
    --------
    >>> shown(np.arange(10))
    '[0, 1, 2, 3, 4, 5, ...]'
    >>> shown((np.float64(0.5), [1, 2]))
    '(0.5, [1, 2])'
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, np.ndarray | list | tuple):
        entries = [shown(v, limit=limit) for v in value[:limit]]
        if len(value) > limit:
            entries.append("...")
        if isinstance(value, tuple):
            return f"({', '.join(entries)}{',' if len(entries) == 1 else ''})"
        return f"[{', '.join(entries)}]"
    text = repr(plain(value))
    return text if len(text) <= 100 else f"{text[:97]}..."
