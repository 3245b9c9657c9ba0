"""Items grouped by the pattern of many systems' 0/1 predictions; which system is best, per draw.

Kernels of :class:`bayeval.models.PredictionPatterns` and of
:class:`bayeval.sampling.ModelSelection`. Items whose systems all predict alike form one *cell*;
inside a cell every system is right on exactly the positives or exactly the negatives, so the
number of positives per cell fixes every system's confusion counts. A cell's rate of positives
has a Beta prior; with the labelled items of the cell, its unlabelled positives are
beta-binomial (the finite-population posterior).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "best_in_draws",
    "best_shares",
    "cell_counts",
    "confusion_of_cells",
    "draw_positives",
    "information_gain",
    "pattern_cells",
]


def pattern_cells(predictions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the distinct patterns ``(n_cells, K)`` and each item's cell ``(n_items,)``.

    Examples
    --------
    >>> patterns, cell = pattern_cells(np.array([[1, 0], [1, 0], [0, 0]]))
    >>> patterns.tolist(), cell.tolist()
    ([[0, 0], [1, 0]], [1, 1, 0])
    """
    patterns, cell = np.unique(predictions, axis=0, return_inverse=True)
    return patterns.astype(np.int8), cell.reshape(-1)


def cell_counts(
    cell: np.ndarray, n_cells: int, positions: np.ndarray, labels: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return each cell's items, labelled items and labelled positives (three ``(n_cells,)``)."""
    sizes = np.bincount(cell, minlength=n_cells)
    labelled = np.bincount(cell[positions], minlength=n_cells)
    ones = np.bincount(cell[positions], weights=labels, minlength=n_cells).astype(np.int64)
    return sizes, labelled, ones


def draw_positives(
    prior: tuple[float, float],
    sizes: np.ndarray,
    labelled: np.ndarray,
    ones: np.ndarray,
    n_draws: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw each cell's rate and its positives in all, labelled or not: ``(n_draws, n_cells)`` each.

    The rate is ``Beta(a + ones, b + labelled - ones)``; the unlabelled items' positives are
    binomial given the rate, so their count is beta-binomial, as the finite population needs.
    """
    a, b = prior
    rate = rng.beta(a + ones, b + labelled - ones, size=(n_draws, sizes.size))
    return rate, ones + rng.binomial(sizes - labelled, rate)


def confusion_of_cells(
    positives: np.ndarray, sizes: np.ndarray, patterns: np.ndarray
) -> np.ndarray:
    """Return every system's confusion counts ``(n_draws, K, 2, 2)`` from positives per cell.

    ``counts[..., c, j]``: items of true class ``c`` that the system predicts ``j``.
    """
    said_one = patterns.astype(float)  # (n_cells, K)
    negatives = sizes - positives
    tp, fp = positives @ said_one, negatives @ said_one
    fn, tn = positives.sum(axis=1)[:, None] - tp, negatives.sum(axis=1)[:, None] - fp
    return np.stack([np.stack([tn, fp], -1), np.stack([fn, tp], -1)], axis=-2)


def best_in_draws(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return the index of the largest value in each row, ties broken at random (NaN loses).

    Examples
    --------
    >>> best_in_draws(np.array([[0.5, 0.7, np.nan], [0.9, 0.1, 0.2]]), np.random.default_rng(0))
    array([1, 0])
    """
    v = np.where(np.isnan(values), -np.inf, values)
    top = v == v.max(axis=1, keepdims=True)
    # a random key per tied entry: the largest key among the tied entries wins
    return np.argmax(np.where(top, rng.random(v.shape) + 1.0, 0.0), axis=1)


def best_shares(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return each system's P(best) and expected regret from draws ``(n_draws, K)``.

    Draws in which some system's measure is undefined (NaN) are left out; a draw where ``t``
    systems tie for the highest gives each ``1 / t``. NaN everywhere when no draw is defined.

    Examples
    --------
    >>> best_shares(np.array([[0.9, 0.8], [0.7, 0.7], [np.nan, 0.5]]))
    (array([0.75, 0.25]), array([0.  , 0.05]))
    """
    defined = values[~np.isnan(values).any(axis=1)]
    if defined.shape[0] == 0:
        return np.full(values.shape[1], np.nan), np.full(values.shape[1], np.nan)
    top = defined == defined.max(axis=1, keepdims=True)
    share = top / top.sum(axis=1, keepdims=True)
    regret = defined.max(axis=1, keepdims=True) - defined
    return share.mean(axis=0), regret.mean(axis=0)


def information_gain(best: np.ndarray, n_systems: int, rate_unlabelled: np.ndarray) -> np.ndarray:
    """Return, per cell, the mutual information (nats) between the best system and one new label.

    ``best`` ``(n_draws,)`` is each draw's best system; ``rate_unlabelled`` ``(n_draws,
    n_cells)`` the share of positives among a cell's unlabelled items in each draw, which is the
    probability that one more of its items, chosen at random, is positive given that draw
    (Rao-Blackwellised). The joint of (best, label) is the average over draws, and the
    information is ``sum p(k, y) log(p(k, y) / (p(k) p(y)))``.
    """
    n_draws = best.size
    indicator = np.zeros((n_draws, n_systems))
    indicator[np.arange(n_draws), best] = 1.0
    joint_one = indicator.T @ rate_unlabelled / n_draws  # (K, n_cells): p(best = k, y = 1)
    p_best = indicator.mean(axis=0)[:, None]
    p_one = rate_unlabelled.mean(axis=0)[None, :]
    joint_zero = p_best - joint_one
    gain = _plogp_ratio(joint_one, p_best * p_one) + _plogp_ratio(joint_zero, p_best * (1 - p_one))
    return np.maximum(gain, 0.0)


def _plogp_ratio(joint: np.ndarray, product: np.ndarray) -> np.ndarray:
    """``sum_k joint log(joint / product)`` over systems, with ``0 log 0 = 0``."""
    positive = joint > 1e-15
    ratio = np.divide(joint, product, out=np.ones_like(joint), where=positive & (product > 0))
    return np.where(positive, joint * np.log(ratio), 0.0).sum(axis=0)
