"""Declarative parameter checks: one decorator, one message style, introspectable constraints.

``@validate(prob=Prob(), method=OneOf(METHODS), budget=Whole(minimum=1))`` checks the named
arguments of every call before the function runs and passes them on normalised (``prob`` as a
float, ``budget`` as an int). Each constraint says what it allows (:meth:`Constraint.allowed`)
and gives a value it refuses (:meth:`Constraint.bad_example`), so one parametrised test can call
every decorated function with a bad value of every parameter and check the message: it names
the parameter, what was given and what is allowed, in the style of scikit-learn's
``_param_validation``. The checks themselves are :mod:`bayeval._validation`'s.

Examples
--------
>>> @validate(prob=Prob(), n=Whole(minimum=1))
... def width(n, prob=0.95):
...     return n, prob
>>> width(10.0, prob=0.9)
(10, 0.9)
>>> width(0)
Traceback (most recent call last):
...
ValueError: `n` must be a whole number >= 1; got 0.
"""

from __future__ import annotations

import functools
import inspect
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
    "Integer",
    "Nonnegative",
    "OneOf",
    "Optional",
    "Positive",
    "Prob",
    "Real",
    "Seed",
    "Share",
    "Whole",
    "validate",
    "validate_fields",
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
        return "open interval (0, 1)"

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
        fails = (
            (self.above is not None and not number > self.above)
            or (self.at_least is not None and not number >= self.at_least)
            or (self.below is not None and not number < self.below)
            or (self.at_most is not None and not number <= self.at_most)
        )
        if fails:
            raise ValueError(f"`{name}` must be {self.allowed()}; got {plain(value)!r}.")
        return number

    def allowed(self):
        low = self.above if self.above is not None else self.at_least
        high = self.below if self.below is not None else self.at_most
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
        low = self.above if self.above is not None else self.at_least
        high = self.below if self.below is not None else self.at_most
        if low is None and high is None:
            return float("nan")
        return float(low - 1 if high is None else high + 1)

    def good_example(self):
        low = self.above if self.above is not None else self.at_least
        high = self.below if self.below is not None else self.at_most
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


def validate(**constraints: Constraint) -> Callable:
    """Check the named arguments of each call against ``constraints`` before the call.

    The decorated function keeps its signature and docstring; ``func.__constraints__`` holds
    the constraints. Defaults are not checked (they are the author's, and right).
    """

    def decorate(func: Callable) -> Callable:
        signature = inspect.signature(func)
        unknown = set(constraints) - set(signature.parameters)
        if unknown:
            raise TypeError(f"{func.__qualname__} has no parameters {sorted(unknown)}")

        @functools.wraps(func)
        def checked(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            for name, constraint in constraints.items():
                if name in bound.arguments:
                    bound.arguments[name] = constraint.check(bound.arguments[name], name)
            return func(*bound.args, **bound.kwargs)

        checked.__constraints__ = dict(constraints)
        return checked

    return decorate


def validate_fields(**constraints: Constraint) -> Callable:
    """Check the named fields of a dataclass against ``constraints`` when it is built.

    A class decorator applied *below* ``@dataclass`` (so the dataclass's ``__init__`` calls the
    check): each instance's fields are checked and stored normalised (frozen dataclasses too)
    before the class's ``__post_init__`` (its own or inherited), if any, which keeps the checks
    that relate fields to each other. ``cls.__constraints__`` holds the constraints, as
    :func:`validate`'s functions do.
    """

    def decorate(cls: type) -> type:
        unknown = set(constraints) - set(cls.__dict__.get("__annotations__", {}))
        if unknown:
            raise TypeError(f"{cls.__qualname__} has no fields {sorted(unknown)}")
        own = getattr(cls, "__post_init__", None)  # the class's own or an inherited one

        def __post_init__(self):
            for name, constraint in constraints.items():
                object.__setattr__(self, name, constraint.check(getattr(self, name), name))
            if own is not None:
                own(self)

        cls.__post_init__ = __post_init__
        cls.__constraints__ = dict(constraints)
        return cls

    return decorate
