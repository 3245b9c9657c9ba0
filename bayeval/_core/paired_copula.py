"""Two systems' right/wrong on the same items under a prior that expects them to err together.

Each system's accuracy ``theta`` is uniform a priori; item by item, the two systems are right
when the coordinates of a standard bivariate normal of correlation ``rho`` fall below
``Phi^-1(theta_A)`` and ``Phi^-1(theta_B)`` (a Gaussian copula), and ``rho ~ 2 Beta(4, 2) - 1``
(mean 1/3: systems mostly fail on the same hard items). This is the generative model of
Bowyer, Aitchison & Ivanova (ICML 2025). Its posterior is computed on a fixed grid of
``(theta_A, theta_B, rho)`` cells (quadrature, no Monte Carlo error in the weights): the grid
and its outcome shares are built once per process; a posterior draw picks a cell by its weight
and a point uniformly inside it.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import special, stats

__all__ = ["bivariate_normal_cdf", "outcome_shares", "posterior_shares"]

#: Cells of the grid per accuracy axis (even, so no midpoint sits at 1/2 where Phi^-1 is 0).
THETA_BINS = 128
#: Cells of the grid along the correlation.
RHO_BINS = 32


def bivariate_normal_cdf(h: np.ndarray, k: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """``P(X <= h, Y <= k)`` for standard normals of correlation ``rho`` (|rho| < 1, h, k != 0).

    Owen's (1956) formula through his T function, vectorised:
    ``Phi2 = (Phi(h) + Phi(k)) / 2 - T(h, a_h) - T(k, a_k) - [h k < 0] / 2``, with
    ``a_h = (k - rho h) / (h sqrt(1 - rho^2))`` and ``a_k`` alike.

    Examples
    --------
    Against SciPy's numerical integration:

    >>> from scipy import stats
    >>> round(float(bivariate_normal_cdf(np.array(0.3), np.array(-1.2), np.array(0.6))), 4)
    0.1084
    >>> round(float(stats.multivariate_normal.cdf([0.3, -1.2], cov=[[1, 0.6], [0.6, 1]])), 4)
    0.1084
    """
    root = np.sqrt(1.0 - rho**2)
    a_h = (k - rho * h) / (h * root)
    a_k = (h - rho * k) / (k * root)
    both = 0.5 * (special.ndtr(h) + special.ndtr(k))
    return both - special.owens_t(h, a_h) - special.owens_t(k, a_k) - 0.5 * (h * k < 0)


def outcome_shares(theta_a: np.ndarray, theta_b: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """Return the shares of the four joint outcomes (both right, first only, second only, neither).

    Both wrong is both normal coordinates above their thresholds:
    ``Phi2(-Phi^-1(theta_A), -Phi^-1(theta_B); rho)``; the rest follow from the margins.
    Returns ``(..., 4)``, each share at least 1e-300 (a log is taken of it).

    Examples
    --------
    Independent errors (``rho = 0``) multiply:

    >>> outcome_shares(np.array(0.8), np.array(0.6), np.array(0.0)).round(6).tolist()
    [0.48, 0.32, 0.12, 0.08]
    """
    neither = bivariate_normal_cdf(-special.ndtri(theta_a), -special.ndtri(theta_b), rho)
    shares = np.stack(
        [theta_a + theta_b + neither - 1, 1 - theta_b - neither, 1 - theta_a - neither, neither],
        axis=-1,
    )
    return np.clip(shares, 1e-300, 1.0)


@functools.cache
def _grid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the grid cells' centres ``(cells, 3)``, log prior masses and log outcome shares."""
    theta = (np.arange(THETA_BINS) + 0.5) / THETA_BINS
    edges = np.linspace(-1.0, 1.0, RHO_BINS + 1)
    rho = (edges[:-1] + edges[1:]) / 2
    # each correlation cell's exact prior mass: rho = 2 X - 1, X ~ Beta(4, 2)
    rho_mass = np.diff(stats.beta.cdf((edges + 1) / 2, 4, 2))
    a, b, r = (x.ravel() for x in np.meshgrid(theta, theta, rho, indexing="ij"))
    log_prior = np.log(np.tile(rho_mass, THETA_BINS * THETA_BINS))
    log_shares = np.log(outcome_shares(a, b, r))
    return np.stack([a, b, r], axis=1), log_prior, log_shares


def posterior_shares(counts: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Posterior draws ``(draws, 4)`` of the outcome shares given the four outcome ``counts``.

    Each grid cell weighs its prior mass by the multinomial likelihood of the counts at its
    centre; a draw picks a cell by weight and a point uniformly inside it.

    Examples
    --------
    With no items the draws follow the prior: each accuracy uniform, so each mean about 1/2:

    >>> shares = posterior_shares(np.zeros(4), 20_000, np.random.default_rng(0))
    >>> accuracy = shares[:, 0] + shares[:, [1, 2]].T
    >>> accuracy.mean(axis=1).round(2).tolist()
    [0.5, 0.5]
    """
    centres, log_prior, log_shares = _grid()
    log_weight = log_prior + log_shares @ np.asarray(counts, dtype=float)
    weight = np.exp(log_weight - log_weight.max())
    cells = rng.choice(weight.size, size=draws, p=weight / weight.sum())
    half = np.array([0.5 / THETA_BINS, 0.5 / THETA_BINS, 1.0 / RHO_BINS])
    points = centres[cells] + rng.uniform(-half, half, size=(draws, 3))
    return outcome_shares(points[:, 0], points[:, 1], points[:, 2])
