"""The systems' consensus as a score: the log-odds of a Dawid-Skene model fitted without labels.

Expectation-maximisation over the distinct patterns of binary predictions (Dawid & Skene 1979):
each system ``k`` predicts 1 with probability ``t1[k]`` on a positive item and ``t0[k]`` on a
negative one, independently given the class. The fixed point weighs each system by how well it
agrees with the others, so systems that are better than the crowd count more than a plain vote;
it is a *score*, not a probability (systems that share errors make it overconfident), and is
calibrated from labels afterwards.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["consensus_log_odds"]


def consensus_log_odds(
    patterns: np.ndarray,
    sizes: np.ndarray,
    *,
    correct_prior: float = 2.0,
    error_prior: float = 1.0,
    iterations: int = 500,
    tol: float = 1e-10,
) -> np.ndarray:
    """Return the log-odds of class 1 of each pattern at the EM fixed point.

    Parameters
    ----------
    patterns : ndarray of {0, 1}, shape (P, K)
        Distinct predictions of ``K`` systems.
    sizes : ndarray, shape (P,)
        Items per pattern.
    correct_prior, error_prior : float
        Pseudo-counts of a system's right and wrong predictions in each class (the M-step is
        the posterior mode's smoothing of ``SystemConfusion``'s Dirichlet prior): the fixed
        point starts from the majority vote and keeps systems better than chance unless the
        predictions say otherwise.
    iterations : int
        At most this many EM steps.
    tol : float
        Stop when no pattern's probability of class 1 moves by more than this.

    Returns
    -------
    ndarray, shape (P,)
    """
    x = patterns.astype(float)
    q = x.mean(axis=1)  # start: the share of systems predicting 1
    smoothing = correct_prior + error_prior
    for _ in range(iterations):
        n1, n0 = sizes * q, sizes * (1 - q)
        t1 = (n1 @ x + correct_prior) / (n1.sum() + smoothing)  # P(predict 1 | positive)
        t0 = (n0 @ x + error_prior) / (n0.sum() + smoothing)  # P(predict 1 | negative)
        prevalence = (n1.sum() + 1) / (sizes.sum() + 2)
        log_odds = (
            np.log(prevalence / (1 - prevalence))
            + x @ np.log(t1 / t0)
            + (1 - x) @ np.log((1 - t1) / (1 - t0))
        )
        new = special.expit(log_odds)
        done = np.abs(new - q).max() <= tol
        q = new
        if done:
            break
    return log_odds
