"""Where the systems that lead on the labels so far disagree: Model Selector's choice of items.

Okanovic et al. (AISTATS 2025) keep a deliberately simple model of which system is best: the
best system names each item's class right with a fixed probability, independently over items,
so after the labels so far the probability that system ``m`` is best is
``q_m ∝ exp(odds x right_m)``, ``right_m`` the labels it got right. They ask for the item whose
label leaves the least entropy in ``q``, averaged over the classes the label could take, each
counted equally. Kernel of :class:`bayeval.sampling.ModelSelection` (``choose="leaders"``),
which uses it to choose items only: its P(best) comes from
:class:`bayeval.models.PredictionPatterns`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import xlogy

__all__ = ["LEADER_ODDS", "leader_entropy", "leader_weights"]

#: ``odds`` of the model above: ``log(1.5)``, a right answer 1.5 times as likely as a wrong
#: one for the best system (``eps = 0.4`` in Model Selector's terms, in the middle of the
#: 0.36-0.45 its repository sets per task; not tuned on bayeval's benchmark).
LEADER_ODDS = float(np.log(1.5))


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


def leader_entropy(
    predictions: np.ndarray, weights: np.ndarray, n_classes: int, odds: float = LEADER_ODDS
) -> np.ndarray:
    """Return each item's entropy of ``q`` after its label, averaged over the classes.

    Model Selector asks for the item of least such entropy. Each class counts equally, not by
    its probability under the model. Weighted by its probability, the least entropy would be
    the most mutual information of the label and the best system, which asks where the
    likeliest systems disagree; weighted equally, an unlikely label that would lift a group of
    dissenting systems counts in full, so their dissent is checked early. On Model Selector's
    tasks the equal weights pick the best system sooner (``benchmarks/README.md``, model
    selection).

    Parameters
    ----------
    predictions : ndarray of int, shape (n_items, K)
        Each system's class (0 .. ``n_classes - 1``) of each item.
    weights : ndarray, shape (K,)
        ``q``, the probability that each system is the best (:func:`leader_weights`).
    n_classes : int
        Classes of the label space.
    odds : float
        The model's log odds of a right answer: a label of class ``c`` multiplies the weight
        of each system that named ``c`` by ``exp(odds)``.

    Returns
    -------
    ndarray, shape (n_items,)
        The entropy (nats), lowest for the item to ask.

    Examples
    --------
    Two leaders that disagree on the first item, agree on the second:

    >>> predictions = np.array([[1, 0, 0], [1, 1, 0]])
    >>> leader_entropy(predictions, np.array([0.45, 0.45, 0.1]), 2, odds=1.0).round(4)
    array([0.8358, 0.9528])
    """
    gain = np.exp(odds)
    q_log_q = xlogy(weights, weights)  # 0 where a weight has underflowed to 0
    entropy = np.zeros(predictions.shape[0])
    for c in range(n_classes):
        says = predictions == c
        vote = says @ weights
        # after a label c, q'_m = q_m g^a_m / z with g = exp(odds), a_m = [system m says c] and
        # z = 1 + (g - 1) vote; -sum q' log q' = log z - sum_m q_m g^a_m (log q_m + a_m odds) / z
        z = 1.0 + (gain - 1.0) * vote
        weighted_log = q_log_q.sum() + (gain - 1.0) * (says @ q_log_q) + gain * odds * vote
        entropy += np.log(z) - weighted_log / z
    return entropy / n_classes
