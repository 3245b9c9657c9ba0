"""The geometric ranks of LogStrat, PAULA and AdaStrat, exactly, and the planners' checks.

The geometric points ``g_j = ceil((1 + eps)^j)`` (Definition 4 of Sabharwal & Sedghi 2017) are
integers computed exactly for the ``j`` a plan uses, never as arrays of length ``n_items``.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction
from typing import Any

import numpy as np

from bayeval._constraints import Optional, Real, Whole, validate
from bayeval._validation import check_whole

__all__ = [
    "ALPHA",
    "BETA",
    "EPSILON",
    "MAX_ITEMS",
    "N_ITEMS",
    "P_MIN",
    "R_TILDE",
    "Geometry",
    "ceil_ratio",
    "geometric_points",
]

#: Largest list the planners accept: ranks stay exact in float64 and int64 arithmetic.
MAX_ITEMS = 2**53

#: Window used for the default ``r_tilde`` of LogStrat: the AdaStrat paper's experiments (§5)
#: run LogStrat and PAULA (window 100) on the same geometric points (78, 234 and 312 queries).
LOGSTRAT_DEFAULT_WINDOW = 100

#: The constraints of the parameters the planners and the curve methods share (Sabharwal &
#: Sedghi 2017, Sabharwal & Xue 2018): list length, geometric ratio, precision floor, slack.
N_ITEMS = Whole(minimum=1, maximum=MAX_ITEMS)
EPSILON = Real(above=0, at_most=1)
P_MIN = Real(above=0, at_most=1)
BETA = Real(above=1)
ALPHA = Real(above=0)
R_TILDE = Optional(Whole(minimum=1))


# --------------------------------------------------------------------------- validation


def check_r_tilde(r_tilde: Any, n_items: int, default: int, default_text: str) -> int:
    if r_tilde is None:
        if default > n_items:
            raise ValueError(
                f"`r_tilde` must not exceed n_items={n_items}; the default {default_text} = "
                f"{default} does, so the list is too short for these settings (annotate it "
                f"exhaustively, or pass a smaller r_tilde)."
            )
        return default
    value = check_whole(r_tilde, "r_tilde", minimum=1)
    if value > n_items:
        raise ValueError(f"`r_tilde` must not exceed n_items={n_items}; got {r_tilde!r}.")
    return value


# --------------------------------------------------------------------------- geometry


class Geometry:
    """Exact ``g_j = ceil((1 + eps)^j)`` and ``floor(eps (1 + eps)^j - 1)``.

    ``eps`` is read as the decimal it prints as (``0.03`` is 3/100, not the nearest binary
    double), so these integers are those of the paper's arithmetic. A float evaluation is checked
    and, within ``_NEAR`` (relative) of an integer, redone in decimal arithmetic with 40 digits
    to spare; the float error is below ``2e-14`` relative for every ``j`` used here.
    """

    _NEAR = 1e-11

    def __init__(self, epsilon: float):
        self.epsilon = epsilon
        self._log_ratio = math.log1p(epsilon)
        self._eps = Decimal(repr(epsilon))
        self._ratio = 1 + self._eps

    def _decimal(self, j: int, times_eps: bool) -> Decimal:
        digits = 60 + len(str(j))
        with localcontext() as ctx:
            ctx.prec = digits
            value = self._ratio**j
            return value * self._eps if times_eps else value

    def _rounded(self, j: np.ndarray, *, times_eps: bool, ceil: bool) -> np.ndarray:
        j = np.asarray(j, dtype=np.int64)
        x = np.exp(j * self._log_ratio)
        if times_eps:
            x = x * self.epsilon
        out = np.ceil(x) if ceil else np.floor(x)
        near = np.abs(x - np.round(x)) <= self._NEAR * np.maximum(x, 1.0)
        rounding = ROUND_CEILING if ceil else ROUND_FLOOR
        for i in np.flatnonzero(near):
            exact = self._decimal(int(j[i]), times_eps)
            out[i] = float(exact.to_integral_value(rounding=rounding))
        return out.astype(np.int64)

    def ceil_power(self, j: np.ndarray | int) -> np.ndarray:
        """``ceil((1 + eps)^j)`` elementwise (Definition 4 of [1])."""
        return self._rounded(np.atleast_1d(j), times_eps=False, ceil=True)

    def g(self, j: int) -> int:
        """``g_j = ceil((1 + eps)^j)`` for one ``j``."""
        return int(self.ceil_power(j)[0])

    def m(self, ell: int) -> int:
        """``floor(eps (1 + eps)^ell - 1)`` (Section 4.2 of [1])."""
        return int(self._rounded(np.atleast_1d(ell), times_eps=True, ceil=False)[0]) - 1

    def first_at_least(self, r: int) -> int:
        """Smallest ``j >= 0`` with ``(1 + eps)^j >= r``, i.e. ``ceil(log_{1+eps} r)``."""
        j = max(0, math.ceil(math.log(r) / self._log_ratio))
        while j > 0 and self.g(j - 1) >= r:
            j -= 1
        while self.g(j) < r:
            j += 1
        return j

    def last_at_most(self, n: int) -> int:
        """Largest ``j >= 0`` with ``(1 + eps)^j <= n``, i.e. ``floor(log_{1+eps} n)``."""
        j = max(0, math.floor(math.log(n) / self._log_ratio))
        while self.g(j + 1) <= n:
            j += 1
        while j > 0 and self.g(j) > n:
            j -= 1
        return j


def ceil_ratio(numerator: int, epsilon: float) -> int:
    """``ceil(numerator / epsilon)`` exactly, with ``epsilon`` read as the decimal it prints as."""
    return math.ceil(Fraction(numerator) / Fraction(repr(epsilon)))


@validate(epsilon=EPSILON, start=Whole(minimum=0), stop=Whole(minimum=-1))
def geometric_points(epsilon: float, start: int, stop: int) -> np.ndarray:
    """Return the geometric ranks ``g_j = ceil((1 + epsilon)^j)`` for ``start <= j <= stop``.

    Parameters
    ----------
    epsilon : float
        The geometric spacing, in ``(0, 1]``; read as the decimal it prints as.
    start, stop : int
        First and last exponent (inclusive); ``stop < start`` gives an empty array.

    Returns
    -------
    numpy.ndarray
        ``int64`` array of length ``max(0, stop - start + 1)``.

    Notes
    -----
    Definition 4 of [1]_. The values are exact integers (a float evaluation is redone in decimal
    arithmetic wherever it lies close to an integer), unlike the iterated floating-point product of
    the pseudo-code of Algorithms 1 and 2, whose rounding error grows with ``j``. For integer
    ``r``, ``(1 + eps)^j <= r`` if and only if ``g_j <= r``, so the step-function index of
    Definition 5, ``floor(log_{1+eps} r)``, is the largest ``j`` with ``g_j <= r``.

    References
    ----------
    .. [1] A. Sabharwal and H. Sedghi. How good are my predictions? UAI 2017.

    Examples
    --------
    >>> from bayeval.curves.geometry import geometric_points
    >>> geometric_points(0.5, 0, 6).tolist()
    [1, 2, 3, 4, 6, 8, 12]
    >>> geometric_points(0.03, 276, 278).tolist()
    [3492, 3597, 3705]
    """
    if stop < start:
        return np.empty(0, dtype=np.int64)
    return Geometry(epsilon).ceil_power(np.arange(start, stop + 1, dtype=np.int64))
