"""Proposal weights of Proposition 4 (Marchant & Rubinstein 2021) over cells."""

from __future__ import annotations

import numpy as np

__all__ = ["cell_weights", "model_R", "pattern_norms"]


def pattern_norms(table: np.ndarray, jacobian: np.ndarray, epsilon: float, *, squared=False):
    """``max(||J loss_p(y)||, epsilon 1{loss_p(y) != 0})`` for each pattern and label: ``(P, 2)``.

    An undefined Jacobian (NaN, e.g. F1 before any positive is expected) counts as zero, which
    leaves the ``epsilon`` floor. With ``squared=True`` the norm is squared (the stochastic
    oracle form of Proposition 4).
    """
    J = np.nan_to_num(jacobian, nan=0.0, posinf=0.0, neginf=0.0)
    norm = np.linalg.norm(table @ J.T, axis=-1)
    if squared:
        norm = norm**2
    nonzero = np.abs(table).sum(axis=-1) > 0
    return np.maximum(norm, epsilon * nonzero)


def cell_weights(norms: np.ndarray, pattern: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """Weigh an unlabelled item of each cell: ``sum_y pi(y | cell) f(pattern, y)``.

    The deterministic-oracle form of Proposition 4, given ``positive = pi(1 | cell)``.
    """
    f = norms[pattern]  # (n_cells, 2)
    return (1 - positive) * f[:, 0] + positive * f[:, 1]


def model_R(table, pattern, unlabelled, positive, labelled, n_items) -> np.ndarray:
    """Compute the pool's mean loss under a response model.

    Labelled items count at their labels, unlabelled ones at ``pi(1 | cell) = positive``.

    ``unlabelled (n_cells,)``, ``positive (n_cells,)``, ``labelled (n_cells, 2)`` counts.
    """
    loss = table[pattern]  # (n_cells, 2, D)
    expected = unlabelled * (1 - positive), unlabelled * positive
    total = (expected[0] + labelled[:, 0]) @ loss[:, 0] + (expected[1] + labelled[:, 1]) @ loss[
        :, 1
    ]
    return total / n_items
