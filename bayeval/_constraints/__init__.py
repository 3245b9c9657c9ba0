"""Declarative parameter checks: one decorator, one message style, introspectable constraints.

``@validate(prob=Prob(), method=OneOf(METHODS), budget=Whole(minimum=1))`` checks the named
arguments of every call before the function runs and passes them on normalised (``prob`` as a
float, ``budget`` as an int). Each constraint says what it allows (:meth:`Constraint.allowed`)
and gives a value it refuses (:meth:`Constraint.bad_example`), so one parametrised test can call
every decorated function with a bad value of every parameter and check the message: it names
the parameter, what was given and what is allowed, in the style of scikit-learn's
``_param_validation``. The checks themselves are :mod:`bayeval._validation`'s.

Parameters of several types or shapes compose: :class:`AnyOf` (a string or a bool, a preset
name or an instance), :class:`Pair` (a Beta prior's ``(a, b)``), :class:`SequenceOf` (budgets,
method names), :class:`Array` (per-stratum counts and weights, a number or one per stratum).
What only the data can tell (an array's length must match the pool's) stays in the body.
The constraints live in :mod:`~bayeval._constraints.scalars` (one value) and
:mod:`~bayeval._constraints.compound` (several types or shapes); import them from here.

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
from collections.abc import Callable

from bayeval._constraints.compound import AnyOf, Array, Flags, Pair, SequenceOf
from bayeval._constraints.scalars import (
    Constraint,
    Flag,
    Instance,
    Integer,
    Nonnegative,
    OneOf,
    Optional,
    Positive,
    Prob,
    Real,
    Seed,
    Share,
    Text,
    Whole,
    shown,
)

__all__ = [
    "AnyOf",
    "Array",
    "Constraint",
    "Flag",
    "Flags",
    "Instance",
    "Integer",
    "Nonnegative",
    "OneOf",
    "Optional",
    "Pair",
    "Positive",
    "Prob",
    "Real",
    "Seed",
    "SequenceOf",
    "Share",
    "Text",
    "Whole",
    "shown",
    "validate",
    "validate_fields",
]


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
