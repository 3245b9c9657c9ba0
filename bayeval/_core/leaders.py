"""Where the systems that lead on the labels so far disagree: Model Selector's choice of items.

Okanovic et al. (AISTATS 2025) choose the item whose label tells most about which system is
best under a deliberately simple model: the best system ``m`` names an item's class with
probability ``1 - eps``, and any other class with probability ``eps / (C - 1)``, independently
over items. Under that model the posterior of the best system is ``q_m ∝ exp(odds x right_m)``,
``right_m`` the labels system ``m`` got right and ``odds = log((1 - eps) (C - 1) / eps)``, and the
information of an item's label is the entropy of its class under the ``q``-weighted vote (each
system's vote blurred by ``eps``) less a constant. Kernel of
:class:`bayeval.sampling.ModelSelection` (``choose="leaders"``), which uses it to choose items
only: its P(best) comes from :class:`bayeval.models.PredictionPatterns`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["LEADER_ODDS", "leader_information", "leader_weights"]

#: ``odds`` of the model above: the best system's right answers are ``e**2`` (about 7.4) times
#: as likely as each wrong one, ``eps = 0.12`` with two classes (chosen on Model Selector's
#: tasks; ``benchmarks/README.md``, model selection).
LEADER_ODDS = 2.0


def leader_weights(right: np.ndarray, odds: float = LEADER_ODDS) -> np.ndarray:
    """Return ``q``, the posterior of the best system from each system's right labels.

    Examples
    --------
    >>> leader_weights(np.array([3, 3, 1]), odds=1.0).round(3)
    array([0.468, 0.468, 0.063])
    """
    log_q = odds * (right - right.max())
    q = np.exp(log_q)
    return q / q.sum()


def leader_information(
    predictions: np.ndarray, weights: np.ndarray, n_classes: int, odds: float = LEADER_ODDS
) -> np.ndarray:
    """Return each item's information (nats) about the best system, under the model above.

    Parameters
    ----------
    predictions : ndarray of int, shape (n_items, K)
        Each system's class (0 .. ``n_classes - 1``) of each item.
    weights : ndarray, shape (K,)
        ``q``, the probability that each system is the best (:func:`leader_weights`).
    n_classes : int
        Classes of the label space.
    odds : float
        The model's ``log((1 - eps) (C - 1) / eps)``.

    Examples
    --------
    Two leaders that disagree on the first item, agree on the second:

    >>> predictions = np.array([[1, 0, 0], [1, 1, 0]])
    >>> leader_information(predictions, np.array([0.45, 0.45, 0.1]), 2).round(4)
    array([0.3249, 0.1286])
    """
    eps = (n_classes - 1) / (n_classes - 1 + np.exp(odds))  # each wrong class: eps / (C - 1)
    wrong = eps / (n_classes - 1)
    vote = np.stack([(predictions == c) @ weights for c in range(n_classes)], axis=-1)
    # P(y = c) = wrong + (1 - eps - wrong) * vote_c; the label given the best system has the
    # same entropy whichever system is best
    p_label = wrong + (1.0 - eps - wrong) * vote
    given_best = -(1 - eps) * np.log(1 - eps) - eps * np.log(wrong)
    return -(p_label * np.log(p_label)).sum(axis=-1) - given_best
