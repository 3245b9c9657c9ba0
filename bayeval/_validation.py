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

from bayeval._core.score_strata import CHUNK

LABEL_SPELLINGS = "0, 1, False or True"  # the labels every oracle accepts

__all__ = [
    "check_binary",
    "check_choice",
    "check_count_array",
    "check_int",
    "check_labels",
    "check_nonnegative",
    "check_positions",
    "check_positive",
    "check_prob",
    "check_whole",
    "check_rng",
    "check_scores",
    "philox_key",
    "plain",
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
        raise ValueError(f"`{name}` must be one of {options}; got {plain(value)!r}.")
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
        raise ValueError(f"`{name}` must be a whole number >= {minimum}; got {plain(value)!r}.")
    if isinstance(value, Integral):
        number = int(value)
    else:
        as_float = float(value)
        if not math.isfinite(as_float) or as_float != round(as_float):
            raise ValueError(f"`{name}` must be a whole number >= {minimum}; got {plain(value)!r}.")
        number = int(as_float)
    if number < minimum:
        raise ValueError(f"`{name}` must be a whole number >= {minimum}; got {plain(value)!r}.")
    if maximum is not None and number > maximum:
        raise ValueError(f"`{name}` must be at most {maximum}; got {plain(value)!r}.")
    return number


def check_int(value: Any, name: str, *, minimum: int) -> int:
    """Return ``value`` as an int ``>= minimum``; floats (even whole ones) are refused."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise ValueError(f"`{name}` must be an integer >= {minimum}; got {plain(value)!r}.")
    if value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}; got {plain(value)!r}.")
    return int(value)


def check_draws(draws: Any, chains: int) -> int:
    """Return ``draws`` as an int: at least ``chains`` and a multiple of it (draws per chain)."""
    check_int(draws, "draws", minimum=chains)
    if draws % chains:
        raise ValueError(f"`draws` must be a multiple of `chains` ({chains}); got {draws}.")
    return int(draws)


def check_real(value: Any, name: str) -> float:
    """Return ``value`` as a finite float; booleans and strings are refused."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real):
        raise ValueError(f"`{name}` must be a real number; got {plain(value)!r}.")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"`{name}` must be finite; got {plain(value)!r}.")
    return number


def check_nonnegative(value: Any, name: str) -> float:
    """Return ``value`` as a finite float ``>= 0``; booleans and strings are refused."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real):
        raise ValueError(f"`{name}` must be a number >= 0; got {plain(value)!r}.")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"`{name}` must be a number >= 0; got {plain(value)!r}.")
    return number


def check_share(value: Any, name: str) -> float:
    """Return ``value`` as a float in ``[0, 1)``, or raise naming ``name``."""
    try:
        share = float(value)
    except (TypeError, ValueError):
        share = math.nan
    if not 0.0 <= share < 1.0:
        raise ValueError(f"`{name}` must be a number in [0, 1); got {plain(value)!r}.")
    return share


def check_positive(value: Any, name: str) -> float:
    """Return ``value`` as a finite float ``> 0``; booleans and strings are refused."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real):
        raise ValueError(f"`{name}` must be a positive number; got {plain(value)!r}.")
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"`{name}` must be a positive number; got {plain(value)!r}.")
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


def check_class_names(classes: Any) -> tuple[str, ...]:
    """Return the class names as a tuple of distinct non-empty strings, 2 to 127 of them."""
    names = (classes,) if isinstance(classes, str) else tuple(classes)
    if not 2 <= len(names) <= 127 or not all(isinstance(c, str) and c for c in names):
        raise ValueError(
            "`classes` must name 2 to 127 classes, each a non-empty string; got "
            f"{[plain(c) for c in names]!r}."
        )
    if len(set(names)) != len(names):
        raise ValueError(f"`classes` must be distinct; got {list(names)!r}.")
    return names


def check_classes(values: Any, name: str, classes: tuple[str, ...] | None) -> np.ndarray:
    """Return ``values`` as an int8 array of class indices, or raise naming ``name``.

    With ``classes`` ``None`` the labels are binary (:func:`check_binary`). Otherwise each value
    is a class index ``0 .. len(classes) - 1`` or one of the names ``classes``; booleans are
    refused (``True`` names no class, and reading it as class 1 would be a guess).
    """
    if classes is None:
        return check_binary(values, name)
    arr = np.atleast_1d(np.asarray(values))
    if arr.dtype.kind in "US" and not isinstance(values, np.ndarray):
        mixed = np.atleast_1d(np.asarray(values, dtype=object))  # numpy made numbers text
        if not all(isinstance(v, str) for v in mixed.ravel().tolist()):
            arr = mixed
    allowed = f"class indices 0 .. {len(classes) - 1} or the names {list(classes)}"
    if arr.dtype.kind in "US":  # names: look each up among the sorted class names
        names = np.asarray(classes, dtype=str)
        order = np.argsort(names)
        at = np.minimum(np.searchsorted(names[order], arr), len(classes) - 1)
        bad = names[order][at] != arr
        index = order[at]
        for where in map(tuple, np.argwhere(bad)):  # not a name: a number as text, " cat "
            found = class_index(arr[where].item(), classes)
            if found is not None:
                bad[where], index[where] = False, found
    elif arr.dtype.kind in "iuf":
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(arr) | (arr != np.round(arr)) | (arr < 0) | (arr >= len(classes))
        index = np.where(bad, 0, arr).astype(np.int64)
    elif arr.dtype.kind == "O":  # a mix of names and numbers: one at a time
        flat = [class_index(v, classes) for v in arr.ravel().tolist()]
        bad = np.array([i is None for i in flat]).reshape(arr.shape)
        index = np.array([-1 if i is None else i for i in flat]).reshape(arr.shape)
    else:
        raise ValueError(f"`{name}` must contain {allowed}; got dtype {arr.dtype}.")
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        shown = where[0] if arr.ndim == 1 else where
        value = plain(arr[where])
        raise ValueError(f"`{name}` must contain {allowed}; entry {shown} is {value!r}.")
    return index.astype(np.int8)


def class_index(value: Any, classes: tuple[str, ...]) -> int | None:
    """Return the index of one class, given by name or by number, or ``None`` if neither.

    Text is stripped and looked up among the names first, then read as a number (``"2"``,
    ``"2.0"``), as a file or a terminal gives it; booleans name no class.
    """
    if isinstance(value, str):
        text = value.strip()
        if text in classes:
            return classes.index(text)
        try:
            value = float(text)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    number = float(value)
    ok = number.is_integer() and 0 <= number < len(classes)
    return int(number) if ok else None


def check_scores(scores: Any, name: str = "scores", *, ndim: tuple[int, ...] = (1,)):
    """Return ``(array, lo, hi)``: finite real scores and their minimum and maximum.

    Float32 and float64 arrays are used as they are (no copy); integers and other floats are
    converted to float64. ``lo`` and ``hi`` are per column for a 2-d array. NaN or infinite
    entries raise a ``ValueError`` naming ``name`` and the first offending index.
    """
    arr = np.asarray(scores)
    if arr.ndim not in ndim:
        shapes = " or ".join({1: "(n_items,)", 2: "(n_items, n_systems)"}[d] for d in ndim)
        raise ValueError(f"`{name}` must have shape {shapes}; got shape {arr.shape}.")
    if arr.dtype == bool:
        raise ValueError(
            f"`{name}` must be real-valued scores; got booleans (pass 0/1 decisions as "
            "`predictions`)."
        )
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"`{name}` must be real-valued scores; got dtype {arr.dtype}.")
    if arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    if arr.size == 0:
        raise ValueError(f"`{name}` must contain at least one item; got shape {arr.shape}.")
    lo = arr.min(axis=0)
    hi = arr.max(axis=0)
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        for start in range(0, arr.shape[0], CHUNK):
            bad = np.argwhere(~np.isfinite(arr[start : start + CHUNK]))
            if bad.size:
                index = (int(bad[0, 0]) + start, *(int(i) for i in bad[0, 1:]))
                where = index[0] if arr.ndim == 1 else index
                raise ValueError(
                    f"`{name}` must be finite (no NaN or infinity); entry {where} is "
                    f"{arr[index].item()!r}."
                )
    return arr, lo, hi


def check_labels(values: Any, name: str) -> np.ndarray:
    """Return ``values`` as a 1-d bool array, or raise naming ``name`` and an offending entry."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be a 1-d sequence of 0/1 labels; got shape {arr.shape}.")
    if arr.dtype == bool:
        return arr.copy()
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        bad = np.ones(arr.shape, dtype=bool)
        for i, v in enumerate(arr.tolist()):
            if isinstance(v, (bool, int, float)) and v in (0, 1):
                bad[i] = False
    else:
        bad = (arr != 0) & (arr != 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = plain(arr[i])
        raise ValueError(
            f"`{name}` not 0/1: every label must be {LABEL_SPELLINGS}; entry {i} is {value!r}."
        )
    return arr.astype(bool)


def check_positions(positions: Any, n_items: int | None, name: str = "positions") -> np.ndarray:
    """Return ``positions`` as an int64 array of its own shape, checked against ``n_items``."""
    arr = np.asarray(positions)
    flat = check_count_array(arr.reshape(-1), name, allow_empty=True)
    if n_items is not None and flat.size and flat.max() >= n_items:
        i = int(np.flatnonzero(flat >= n_items)[0])
        raise ValueError(
            f"`{name}` must be in [0, n_items) = [0, {n_items}); entry {i} is {flat[i]}."
        )
    return flat.reshape(arr.shape)


def philox_key(rng: Any) -> tuple[int, int]:
    """Return the two 32-bit key words of a Philox stream for ``rng``.

    ``rng`` is an int seed (expanded through ``SeedSequence``), a Generator or None.
    """
    gen = check_rng(rng)
    if isinstance(rng, (int, np.integer)):
        words = np.random.SeedSequence(int(rng)).generate_state(2, dtype=np.uint32)
    else:
        words = gen.integers(0, 2**32, size=2, dtype=np.uint64)
    return int(words[0]), int(words[1])


def plain(value: Any) -> Any:
    """Return a numpy scalar as the Python value it holds, anything else as it is.

    Messages show ``2``, not ``np.int64(2)``.
    """
    return value.item() if isinstance(value, np.generic) else value
