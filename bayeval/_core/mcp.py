"""The most conservative prior to the beta-binomial/hypergeometric model (Webber 2013, §2.8).

A stratum of ``N`` items holds an unknown number ``R`` of positives; a simple random sample of
``n`` of them, drawn without replacement, contains ``x`` positives, so ``x | R`` is
hypergeometric. The conjugate prior on ``R`` is the beta-binomial ``BB(N, alpha, beta)``.
Dyer & Pierce (1993) define the *most conservative prior* as the ``alpha = beta`` that maximises
the expected information gain of Eq. 18, the expected Kullback-Leibler divergence from the prior
to the posterior on ``R``.
"""

from __future__ import annotations

import functools
import math
from numbers import Integral, Real

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy.special import betaln

__all__ = ["MCP_BOUNDS", "expected_information_gain", "most_conservative_prior"]

MCP_BOUNDS = (1e-3, 10.0)
"""Interval of ``alpha = beta`` searched by :func:`most_conservative_prior`."""

_CAP_POPULATION = 1000  # Webber (2013) §2.8: solve with N capped at 1000 ...
_CAP_GAP = 200  # ... and n at most 1000 - min(N - n, 200).
_BLOCK_CELLS = 1 << 20  # (x, r) cells evaluated at once, bounding memory for large N * n.
_LOG_XATOL = 1e-7  # Absolute tolerance of the bounded search on log(alpha).


def _check_size(value, name: str, alias: str) -> int:
    """Return ``value`` as a non-negative int, or raise naming ``name`` (``alias``)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real):
        raise ValueError(f"`{name}` ({alias}) must be a whole number; got {value!r}.")
    if not isinstance(value, Integral):
        if not math.isfinite(value) or value != round(value):
            raise ValueError(f"`{name}` ({alias}) must be a whole number; got {value!r}.")
    out = int(value)
    if out < 0:
        raise ValueError(f"`{name}` ({alias}) must be non-negative; got {value!r}.")
    return out


def _check_sizes(N, n) -> tuple[int, int]:
    N = _check_size(N, "N", "population")
    n = _check_size(n, "n", "sampled")
    if n > N:
        raise ValueError(f"`n` (sampled) must not exceed `N` (population) = {N}; got n = {n}.")
    return N, n


def _check_shape(value, name: str) -> float:
    """Return ``value`` as a positive, finite float, or raise naming ``name``."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real):
        raise ValueError(f"`{name}` must be a positive, finite number; got {value!r}.")
    out = float(value)
    if not (math.isfinite(out) and out > 0.0):
        raise ValueError(f"`{name}` must be a positive, finite number; got {value!r}.")
    return out


def _log_comb(a: int, b: np.ndarray) -> np.ndarray:
    """``log C(a, b)`` for an array ``b`` with ``0 <= b <= a``, through the beta function."""
    return -math.log1p(a) - betaln(a - b + 1.0, b + 1.0)


class _Grid:
    """The parts of Eq. 18 that do not depend on ``alpha`` and ``beta``, for one ``(N, n)``.

    Cell ``(x, k)`` stands for ``x`` sampled positives and ``k = r - x`` unsampled ones, so
    ``r = x + k`` runs over ``x .. N - n + x`` as in the inner sum of Eq. 18.
    """

    def __init__(self, N: int, n: int):
        self.N, self.n, self.width = N, n, N - n + 1
        self.x = np.arange(n + 1, dtype=float)
        self.r = np.arange(N + 1, dtype=float)
        self.log_comb_nx = _log_comb(n, self.x)  # log C(n, x)
        self.log_comb_k = _log_comb(N - n, np.arange(self.width, dtype=float))  # log C(N-n, k)
        self.log_comb_Nr = _log_comb(N, self.r)  # log C(N, r)

    def information_gain(self, alpha: float, beta: float) -> float:
        N, n, width = self.N, self.n, self.width
        log_b0 = betaln(alpha, beta)
        # log of Gamma(a+b) Gamma(a+r) Gamma(b+N-r) / (Gamma(a) Gamma(b) Gamma(a+b+N)): the
        # beta-binomial prior pmf of r without its binomial coefficient.
        log_prior_r = betaln(alpha + self.r, beta + N - self.r) - log_b0
        # log of Gamma(a) Gamma(b) Gamma(a+b+n) / (Gamma(a+x) Gamma(b+n-x) Gamma(a+b)).
        log_ratio_x = log_b0 - betaln(alpha + self.x, beta + n - self.x)
        # Row x of these views is the vector over r = x .. x + N - n (no copy).
        prior_rows = sliding_window_view(log_prior_r, width)
        comb_Nr_rows = sliding_window_view(self.log_comb_Nr, width)
        rows = max(1, _BLOCK_CELLS // width)
        parts = []
        for lo in range(0, n + 1, rows):
            hi = min(lo + rows, n + 1)
            # Joint probability P(x, r) = P(r) P(x | r) <= 1, formed in log space and
            # exponentiated only as a probability, so it can underflow but never overflow.
            log_weight = (
                self.log_comb_nx[lo:hi, None] + self.log_comb_k[None, :] + prior_rows[lo:hi]
            )
            # log [C(N-n, r-x) B(a, b) / (C(N, r) B(a+x, b+n-x))] = log P(r | x) / P(r).
            log_term = self.log_comb_k[None, :] - comb_Nr_rows[lo:hi] + log_ratio_x[lo:hi, None]
            parts.append(float(np.sum(np.exp(log_weight) * log_term)))
        return math.fsum(parts)


def expected_information_gain(alpha, beta, N, n) -> float:
    r"""Compute the expected information gain :math:`\bar D_{BB}(\alpha, \beta; N, n)`, Eq. 18.

    Parameters
    ----------
    alpha, beta : float
        Hyperparameters (``> 0``) of the beta-binomial prior ``BB(N, alpha, beta)`` on the
        number ``R`` of positives in the stratum.
    N : int
        Stratum (population) size, ``N >= 0``.
    n : int
        Sample size, ``0 <= n <= N``.

    Returns
    -------
    float
        The expected Kullback-Leibler divergence, in nats, from the prior on ``R`` to its
        posterior after a sample of ``n``; ``0.0`` when ``n = 0``.

    Raises
    ------
    ValueError
        If ``alpha`` or ``beta`` is not a positive finite number, ``N`` or ``n`` is not a
        non-negative whole number, or ``n > N``; the message names the parameter and value.

    See Also
    --------
    most_conservative_prior : The ``alpha = beta`` maximising this quantity.

    Notes
    -----
    With :math:`B` the beta function, Eq. 18 (Webber's correction of Dyer & Pierce's Eq. 3.1.3,
    which has :math:`\binom{n}{x}` where :math:`\binom{N}{r}` belongs) reads

    .. math::

        \bar D_{BB} = \sum_{x=0}^{n} \sum_{r=x}^{N-n+x}
            \underbrace{\binom{n}{x}\binom{N-n}{r-x}
            \frac{B(\alpha + r, \beta + N - r)}{B(\alpha, \beta)}}_{P(x, r)}
            \ln \frac{\binom{N-n}{r-x} B(\alpha, \beta)}
                     {\binom{N}{r} B(\alpha + x, \beta + n - x)},

    where the weight is the joint probability of ``R = r`` under the prior and of ``x``
    positives in the sample, and the logarithm is :math:`\ln P(r \mid x) / P(r)`. So
    :math:`\bar D_{BB} = \sum_x P(x)\, \mathrm{KL}(P(R \mid x) \,\|\, P(R))`, the mutual
    information between ``R`` and the sample count. Both factors are computed in log space from
    ``scipy.special.betaln``; the weight is exponentiated only once it is a probability (at most
    1), so terms may underflow to 0 but never overflow. The double sum is evaluated on the
    whole ``(x, r)`` grid with numpy, in blocks of about a million cells to bound memory; time
    is ``O(N n)``.

    References
    ----------
    W. Webber, "Approximate recall confidence intervals", ACM TOIS 31(1), 2013, §2.8, Eq. 18.

    J. S. Dyer and J. Pierce, "On the choice of the prior distribution in hypergeometric
    sampling", Communications in Statistics - Theory and Methods 22(8), 1993.

    Examples
    --------
    >>> round(expected_information_gain(0.5, 0.5, 100, 10), 3)
    1.105
    >>> expected_information_gain(1.0, 1.0, 100, 0)
    0.0
    """
    alpha = _check_shape(alpha, "alpha")
    beta = _check_shape(beta, "beta")
    N, n = _check_sizes(N, n)
    if n == 0:
        return 0.0
    return _Grid(N, n).information_gain(alpha, beta)


def _capped_sizes(N: int, n: int) -> tuple[int, int]:
    """Apply Webber's (2013, §2.8) size cap, read as ceilings on ``N`` and ``n``.

    ``N' = min(N, 1000)`` and ``n' = min(n, 1000 - min(N - n, 200))``.
    """
    if N <= _CAP_POPULATION:
        return N, n
    return _CAP_POPULATION, min(n, _CAP_POPULATION - min(N - n, _CAP_GAP))


@functools.lru_cache(maxsize=1024)
def _solve(N: int, n: int) -> float:
    lo, hi = MCP_BOUNDS
    if n == 1:
        # D = log 2 - E[h(R / N)] (h the binary entropy) grows as the prior piles onto
        # R = 0 and R = N: the supremum is at alpha -> 0 (and D is flat when N = 1).
        return lo
    grid = _Grid(N, n)

    def loss(log_alpha: float) -> float:
        a = math.exp(log_alpha)
        return -grid.information_gain(a, a)

    from scipy.optimize import minimize_scalar  # imported on first solve: keeps import fast

    res = minimize_scalar(
        loss,
        bounds=(math.log(lo), math.log(hi)),
        method="bounded",
        options={"xatol": _LOG_XATOL},
    )
    best_alpha, best_loss = math.exp(res.x), res.fun
    # Brent's bounded search never evaluates the end points; report a bound exactly when D is
    # at least as large there (the maximiser lies at or beyond it).
    for bound in (lo, hi):
        bound_loss = loss(math.log(bound))
        if bound_loss <= best_loss:
            best_alpha, best_loss = bound, bound_loss
    return best_alpha


def most_conservative_prior(N, n) -> float:
    r"""Return the most conservative beta-binomial prior ``alpha = beta`` for ``n`` of ``N``.

    Parameters
    ----------
    N : int
        Stratum (population) size.
    n : int
        Sample size, ``1 <= n <= N``.

    Returns
    -------
    float
        The common value of ``alpha`` and ``beta`` maximising Eq. 18 over the interval
        ``MCP_BOUNDS = (1e-3, 10)``. When the maximiser lies at or below the lower bound,
        exactly ``1e-3`` is returned: read it as "no larger than the search resolves", an
        almost improper prior with nearly all its mass on ``R = 0`` and ``R = N``. This is the
        case for a (capped) sample of ``n = 1``, where Eq. 18 equals
        :math:`\ln 2 - E[h(R/N)]` (``h`` the binary entropy), which increases as
        ``alpha -> 0`` without attaining a maximum; there the search is skipped. Likewise
        exactly ``10.0`` would be returned for a maximiser at or beyond the upper bound.

    Raises
    ------
    ValueError
        If ``N`` or ``n`` is not a non-negative whole number or ``n > N``; and if ``n = 0``
        (``sampled`` is 0): Eq. 18 is then identically 0, so no prior maximises it.

    See Also
    --------
    expected_information_gain : Eq. 18 itself.

    Notes
    -----
    Dyer & Pierce (1993) state that Eq. 18 is concave and symmetric in ``alpha`` and ``beta``,
    so its maximum lies on ``alpha = beta``. Symmetry holds, and numerically the joint maximum
    is on the diagonal; concavity does not hold globally (along ``alpha = beta`` it is concave
    from 0 to roughly twice the maximiser, then convex as it decays to its ``alpha -> inf``
    limit), but it is unimodal there, which is what the search needs. This function maximises
    :math:`\bar D_{BB}(\alpha, \alpha; N, n)` by Brent's bounded method
    (``scipy.optimize.minimize_scalar(method="bounded")``) on :math:`\log\alpha`, to an
    absolute tolerance of ``1e-7`` in :math:`\log\alpha`, and then compares with the two end
    points, which the bounded method never evaluates.

    Each evaluation of Eq. 18 costs ``O(N n)``. Following Webber (2013, §2.8), the problem is
    solved at a capped size: the paper limits ``N`` to 1000 and ``n`` to
    ``1000 - min(N - n, 200)``, read here as ceilings: ``N' = min(N, 1000)`` and
    ``n' = min(n, 1000 - min(N - n, 200))`` (no change when ``N <= 1000``). So a small sample
    from a large stratum keeps its size (the solution converges in ``N`` for fixed ``n``: at
    ``n = 10`` it is 0.2124 at ``N = 1000`` and 0.2113 at ``N = 10**5``), and a sample leaving
    fewer than 200 items unsampled keeps that gap. Setting ``n' = 1000 - min(N - n, 200)``
    outright would give every sample of ``n <= N - 200`` the same prior, even ``n = 1``, which
    contradicts the paper's remark that the prior collapses to 0 for ``n = 1``. Solutions are
    cached (``functools.lru_cache``) on the capped ``(N', n')``.

    References
    ----------
    W. Webber, "Approximate recall confidence intervals", ACM TOIS 31(1), 2013, §2.8, Eq. 18.

    J. S. Dyer and J. Pierce, "On the choice of the prior distribution in hypergeometric
    sampling", Communications in Statistics - Theory and Methods 22(8), 1993.

    Examples
    --------
    >>> round(most_conservative_prior(100, 10), 3)
    0.226
    >>> most_conservative_prior(100, 1)  # collapses to the lower bound
    0.001
    >>> most_conservative_prior(10**6, 500) == most_conservative_prior(1000, 500)  # the cap
    True
    """
    N, n = _check_sizes(N, n)
    if n == 0:
        raise ValueError(
            "`n` (sampled) must be at least 1; got 0. With nothing sampled, Eq. 18 is "
            "identically 0, so there is no most conservative prior to maximise it."
        )
    return _solve(*_capped_sizes(N, n))
