"""Input checks for the public boundary.

Every message names the parameter, what was given and what is allowed, in the style of
scikit-learn's parameter validation, so a user can fix the call without reading the source.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Integral, Real
from typing import Any

import numpy as np

__all__ = [
    "check_binary",
    "check_choice",
    "check_count_array",
    "check_int",
    "check_prob",
    "check_whole",
    "check_rng",
]


def check_prob(prob: Any, name: str = "prob") -> float:
    """Return ``prob`` as a float strictly between 0 and 1, or raise ``ValueError``."""
    try:
        value = float(prob)
    except (TypeError, ValueError):
        raise ValueError(
            f"`{name}` must be a probability in the open interval (0, 1); got {prob!r}."
        ) from None
    if not 0.0 < value < 1.0:
        raise ValueError(f"`{name}` must be in the open interval (0, 1); got {prob!r}.")
    return value


def check_choice(value: Any, allowed: Iterable[str], name: str) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise naming the options."""
    allowed = tuple(allowed)
    if value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"`{name}` must be one of {options}; got {value!r}.")
    return value


def check_count_array(values: Any, name: str, *, allow_empty: bool = False) -> np.ndarray:
    """Return ``values`` as a 1-d int64 array of non-negative whole numbers.

    Floats are accepted when they are whole (``100.0``); ``100.5``, negative numbers, NaN,
    booleans and strings are refused with a message naming ``name`` and the offending entry.
    """
    arr = np.atleast_1d(np.asarray(values))
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be a 1-d sequence of counts; got shape {arr.shape}.")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"`{name}` must contain at least one count; got an empty sequence.")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"`{name}` must contain whole numbers; got {values!r}.")
    if np.issubdtype(arr.dtype, np.floating):
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"`{name}` must contain whole numbers; entry {i} is {arr[i].item()!r}."
            )
    arr = arr.astype(np.int64)
    if (arr < 0).any():
        i = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"`{name}` must be non-negative; entry {i} is {arr[i]}.")
    return arr


def check_rng(rng: Any) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from ``None``, an int seed or a Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise ValueError(f"`rng` must be None, an int seed or a numpy.random.Generator; got {rng!r}.")


def check_whole(value: Any, name: str, *, minimum: int, maximum: int | None = None) -> int:
    """Return ``value`` as an int ``>= minimum`` (whole floats such as ``2e9`` are accepted)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real):
        raise ValueError(f"`{name}` must be a whole number >= {minimum}; got {value!r}.")
    if isinstance(value, Integral):
        number = int(value)
    else:
        as_float = float(value)
        if not math.isfinite(as_float) or as_float != round(as_float):
            raise ValueError(f"`{name}` must be a whole number >= {minimum}; got {value!r}.")
        number = int(as_float)
    if number < minimum:
        raise ValueError(f"`{name}` must be a whole number >= {minimum}; got {value!r}.")
    if maximum is not None and number > maximum:
        raise ValueError(f"`{name}` must be at most {maximum}; got {value!r}.")
    return number


def check_int(value: Any, name: str, *, minimum: int) -> int:
    """Return ``value`` as an int ``>= minimum``; floats (even whole ones) are refused."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise ValueError(f"`{name}` must be an integer >= {minimum}; got {value!r}.")
    if value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def check_nonnegative(value: Any, name: str) -> float:
    """Return ``value`` as a finite float ``>= 0``; booleans and strings are refused."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real):
        raise ValueError(f"`{name}` must be a number >= 0; got {value!r}.")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"`{name}` must be a number >= 0; got {value!r}.")
    return number


def check_binary(values: Any, name: str) -> np.ndarray:
    """Return ``values`` as a 1-d int8 array of 0/1 labels (booleans allowed), or raise."""
    arr = np.atleast_1d(np.asarray(values))
    if arr.dtype == bool:
        return arr.astype(np.int8)
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"`{name}` must be 0/1 labels (or booleans); got dtype {arr.dtype}.")
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"`{name}` must contain only 0 and 1; entry {i} is {arr[i].item()!r}.")
    return arr.astype(np.int8)
