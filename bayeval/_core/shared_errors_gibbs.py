"""Gibbs sampler of the label given several systems' predictions, their errors free to be shared.

Dawid and Skene's model makes the systems' predictions independent given the class. Systems
that err on the same items, and name the same wrong class there, break it: a pattern of
predictions that independence makes rare turns up often, and the model, sure of the class such
a pattern points to, draws its unlabelled items in the wrong class. Here the joint law of an
item's class and predictions is centred on Dawid-Skene's, free to depart from it:

    pi ~ Dirichlet(class_prior),  theta[k, c] ~ Dirichlet(confusion_prior[c])
    B(c, x) = pi_c prod_k theta[k, c, x_k]          (Dawid-Skene: the systems independent)
    H ~ DirichletProcess(alpha, B),  (y_i, x_i) ~ H

With ``alpha`` large ``H = B`` (Dawid-Skene); with ``alpha`` small each pattern's classes are
learned from its own labels. ``alpha`` is learned too (a log-uniform prior on a grid).

Given ``H``'s base, the classes of the ``u_p`` unlabelled items of pattern ``p`` are
``DirichletMultinomial(u_p, alpha B(., x_p) + L_p)``, ``L_p`` the pattern's labelled classes:
the Dirichlet process's counts on the cells ``(c, x_p)`` given their sum, whatever the other
patterns hold. So the patterns are drawn independently, collapsed (a pattern seen once does not
stick to its class). Its base learns from the *tables* ``T[p, c]`` of the Chinese restaurant:
how many of the items of pattern ``p`` and class ``c`` were drawn from ``B`` rather than copied
from an earlier one (Antoniak's law given the count and ``alpha B(c, x_p)``). One sweep draws,
each from its exact conditional:

1. ``pi, theta | T``: Dirichlet, from the tables' class totals and confusion counts;
2. each pattern's unlabelled classes, as above;
3. ``T | classes, pi, theta, alpha``: a Bernoulli draw per item (:func:`tables`);
4. ``alpha | T``: on the grid, likelihood ``alpha^sum(T) Gamma(alpha) / Gamma(alpha + N)``.

The confusion counts of the classes are those of *this* pool (finite-population inference), as
in :mod:`bayeval._core.confusion_gibbs`.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from bayeval._core.confusion_gibbs import (
    confusion_counts,
    dirichlet_rows,
    majority_start,
    one_hot_patterns,
)

__all__ = ["EXACT_CUSTOMERS", "concentration_grid", "gibbs_shared_errors", "tables"]

#: Customers of a restaurant whose tables are drawn one Bernoulli each; beyond them, the sum of
#: the rest's Bernoulli draws is drawn from the normal law of the same mean and variance.
EXACT_CUSTOMERS = 50


def concentration_grid(n_items: int) -> np.ndarray:
    """Return the grid of ``alpha``: 41 points log-uniform from 0.1 to ``100 n_items``.

    At the top the process is Dawid-Skene's on a pool of ``n_items`` (each pattern's own items
    weigh a hundredth of the independent law); at the bottom each pattern's classes are its own.
    """
    return np.logspace(-1.0, np.log10(100.0 * max(n_items, 1)), 41)


def tables(rng: np.random.Generator, customers: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Draw the tables of Chinese restaurants of concentration ``alpha`` (elementwise).

    Customer ``j`` (from 0) opens a table with probability ``alpha / (alpha + j)``. The first
    :data:`EXACT_CUSTOMERS` are drawn one by one; the rest's count of new tables is the normal
    draw of mean ``sum_j alpha / (alpha + j)`` and variance ``sum_j p_j (1 - p_j)``, written with
    the digamma and trigamma functions, rounded and clipped to its range.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> tables(rng, np.array([0, 1, 5]), np.array([1.0, 1.0, 1e9])).tolist()
    [0.0, 1.0, 5.0]
    """
    customers = np.asarray(customers, dtype=float)
    alpha = np.broadcast_to(alpha, customers.shape)
    out = np.zeros(customers.shape)
    for j in range(int(min(EXACT_CUSTOMERS, customers.max(initial=0)))):
        # the first customer opens a table whatever alpha (even one that underflowed to 0)
        opens = (j == 0) | (rng.random(customers.shape) * (alpha + j) < alpha)
        out += (j < customers) & opens
    many = customers > EXACT_CUSTOMERS
    if many.any():
        n, a = customers[many], np.maximum(alpha[many], 1e-300)
        start = a + EXACT_CUSTOMERS
        mean = a * (special.digamma(a + n) - special.digamma(start))
        squares = a**2 * (special.polygamma(1, start) - special.polygamma(1, a + n))
        spread = np.sqrt(np.maximum(mean - squares, 0.0))
        extra = np.rint(mean + spread * rng.standard_normal(n.shape))
        out[many] += np.clip(extra, 0, n - EXACT_CUSTOMERS)
    return out


def gibbs_shared_errors(
    patterns: np.ndarray,
    labelled: np.ndarray,
    unlabelled: np.ndarray,
    *,
    class_prior: np.ndarray,
    confusion_prior: np.ndarray,
    chains: int,
    draws: int,
    warmup: int,
    rng: np.random.Generator,
    thin: int = 1,
    start: dict[str, np.ndarray] | None = None,
) -> dict:
    """Run ``chains`` Gibbs chains of the model on pattern counts.

    Parameters
    ----------
    patterns : ndarray of int, shape (P, K)
        The distinct predictions of the ``K`` systems, classes ``0..C-1``.
    labelled, unlabelled, class_prior, confusion_prior, chains, draws, warmup, thin, rng
        As in :func:`bayeval._core.confusion_gibbs.gibbs_responses`.
    start : dict, optional
        The ``state`` of an earlier run to go on from; default: the labels and each pattern's
        majority vote, every item its own table, ``alpha`` at the top of its grid.

    Returns
    -------
    dict
        ``class_prior`` ``(chains, draws, C)``, ``confusion`` ``(chains, draws, K, C, C)``,
        ``concentration`` ``(chains, draws)`` (``alpha``) and ``counts``
        ``(chains, draws, K, C, C)``: the pool's confusion counts in each kept sweep;
        ``state``: where the chains ended.
    """
    P, K = patterns.shape
    C = labelled.shape[1]
    one_hot = one_hot_patterns(patterns, C)
    n_items = int(labelled.sum() + unlabelled.sum())
    grid = concentration_grid(n_items)
    if start is None:
        first = majority_start(one_hot, labelled, unlabelled)
        start = {"classes": first, "tables": first, "concentration": np.full(chains, grid[-1])}
    M = np.broadcast_to(start["classes"], (chains, P, C)).copy()
    T = np.broadcast_to(start["tables"], (chains, P, C)).copy()
    alpha = np.broadcast_to(start["concentration"], (chains,)).copy()
    n_unlabelled = np.broadcast_to(unlabelled, (chains, P))
    out = {
        "class_prior": np.empty((chains, draws, C)),
        "confusion": np.empty((chains, draws, K, C, C)),
        "concentration": np.empty((chains, draws)),
        "counts": np.empty((chains, draws, K, C, C)),
    }
    for sweep in range(warmup + draws * thin):
        pi = dirichlet_rows(rng, class_prior + T.sum(axis=1))  # (chains, C)
        theta = dirichlet_rows(rng, confusion_prior + confusion_counts(T, one_hot, K))
        with np.errstate(divide="ignore"):  # a prediction a class never makes
            log_theta = np.log(theta)
            log_pi = np.log(pi)
        # log B(c, x_p) = log pi_c + sum_k log theta[k, c, x_pk]: one product per chain
        log_base = log_pi[:, None, :] + one_hot @ np.swapaxes(log_theta, -1, -2).reshape(
            chains, K * C, C
        )
        log_weight = np.log(alpha)[:, None, None] + log_base  # log(alpha B), (chains, P, C)
        weight = np.exp(log_weight)
        shares = _dirichlet_in_logs(rng, _concentrations(log_weight, weight + labelled))
        M = labelled + rng.multinomial(n_unlabelled, shares)
        if sweep >= warmup and (sweep - warmup) % thin == thin - 1:
            d = (sweep - warmup) // thin
            out["class_prior"][:, d], out["confusion"][:, d] = pi, theta
            out["concentration"][:, d] = alpha
            out["counts"][:, d] = confusion_counts(M, one_hot, K)
        T = tables(rng, M, weight)
        alpha = _draw_concentration(rng, grid, T.sum(axis=(1, 2)), n_items)
    out["state"] = {"classes": M, "tables": T, "concentration": alpha}
    return out


def _concentrations(log_weight, concentration):
    """Return ``concentration``, with every row whose entries all underflow rescaled.

    Such a row (a pattern no label reached, improbable under every class) has a Dirichlet draw
    that is one class, chosen with probability proportional to the concentrations: scaling
    them to a largest of ``1e-200`` keeps that and leaves something to take logarithms of.
    """
    tiny = concentration.max(axis=-1, keepdims=True) < 1e-200
    if not tiny.any():
        return concentration
    rescaled = np.exp(log_weight - log_weight.max(axis=-1, keepdims=True)) * 1e-200
    return np.where(tiny, rescaled, concentration)


def _dirichlet_in_logs(rng, concentration):
    """Dirichlet draws along the last axis, exact for concentrations too small for a gamma.

    ``log Gamma(a) = log Gamma(a + 1) + log(U) / a`` (U uniform): a gamma of shape ``1e-30``
    underflows to 0, its logarithm does not.
    """
    with np.errstate(divide="ignore", over="ignore"):  # a concentration of 0 or nearly: -inf
        log_gamma = (
            np.log(rng.standard_gamma(concentration + 1.0))
            + np.log(rng.random(concentration.shape)) / concentration
        )
    return special.softmax(np.nan_to_num(log_gamma, nan=-np.inf), axis=-1)


def _draw_concentration(rng, grid, n_tables, n_items):
    """Draw ``alpha`` per chain from its grid posterior given the tables (log-uniform prior)."""
    # log P(tables | alpha) = T log alpha + log Gamma(alpha) - log Gamma(alpha + N)
    log_like = (
        n_tables[:, None] * np.log(grid) + special.gammaln(grid) - special.gammaln(grid + n_items)
    )
    probabilities = special.softmax(log_like, axis=1)
    picked = (probabilities.cumsum(axis=1) < rng.random((len(n_tables), 1))).sum(axis=1)
    return grid[np.minimum(picked, grid.size - 1)]
