"""Annotators who disagree: their answers as response counts, and Dawid & Skene's EM.

Item ``i`` has a true class among ``C``; annotator ``a`` answers ``j`` for an item of class ``c``
with probability ``theta[a, c, j]`` (its confusion matrix), independently of the others given
the class (Dawid & Skene 1979). The answers become a ``(n_items, A * C)`` matrix of counts, the
responses of :func:`bayeval._core.confusion_gibbs.gibbs_responses` (whose Gibbs sampler draws
from the Bayesian model's posterior); an annotator who answered an item twice, differently,
counts both answers.

:func:`em` finds the posterior mode (the maximum likelihood with flat priors, as crowd-kit's
``DawidSkene`` does), started from the majority vote.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from bayeval._core.confusion_gibbs import confusion_counts

__all__ = ["Mode", "answer_counts", "em"]


def answer_counts(
    item: np.ndarray, annotator: np.ndarray, answer: np.ndarray, shape: tuple[int, int, int]
) -> np.ndarray:
    """Return ``(n_items, A * C)``: how often annotator ``a`` answered ``j`` for item ``i``.

    ``shape`` is ``(n_items, A, C)``; the answers are given one per row of the three arrays.
    """
    n_items, A, C = shape
    flat = (item * A + annotator) * C + answer
    return np.bincount(flat, minlength=n_items * A * C).reshape(n_items, A * C).astype(float)


@dataclass(frozen=True)
class Mode:
    """EM's answer: each item's class posterior ``(n_items, C)``, ``confusion`` ``(A, C, C)``."""

    posterior: np.ndarray
    confusion: np.ndarray
    class_prior: np.ndarray  # (C,)
    iterations: int


def em(
    responses: np.ndarray,
    gold: np.ndarray,
    *,
    confusion_prior: np.ndarray,
    class_prior: np.ndarray,
    tol: float = 1e-9,
    max_iter: int = 5000,
) -> Mode:
    """Find the posterior mode of the confusions and prevalences by EM.

    Parameters
    ----------
    responses : ndarray, shape (n_items, A * C)
        Answer counts (:func:`answer_counts`).
    gold : ndarray of int, shape (n_items,)
        The known class of a gold item, ``-1`` for the others.
    confusion_prior, class_prior : ndarray, shapes (C, C) and (C,)
        Dirichlet concentrations; the M-step adds them minus one (a MAP update), so ones give
        Dawid & Skene's maximum likelihood.
    tol, max_iter
        EM stops when no item's posterior moves by more than ``tol`` (EM is slow near a
        flat optimum: thousands of iterations may be needed for ``1e-9``).
    """
    n, C = responses.shape[0], confusion_prior.shape[0]
    A = responses.shape[1] // C
    votes = responses.reshape(n, A, C).sum(axis=1) + 1e-12  # items without answers: even
    weight = votes / votes.sum(axis=1, keepdims=True)
    known = gold >= 0
    weight[known] = np.eye(C)[gold[known]]
    iteration = 0
    while iteration < max_iter:
        iteration += 1
        counts = confusion_counts(weight, responses, A) + confusion_prior - 1.0
        confusion = np.maximum(counts, 1e-300)
        confusion /= confusion.sum(axis=2, keepdims=True)
        prevalence = np.maximum(weight.sum(axis=0) + class_prior - 1.0, 1e-300)
        prevalence /= prevalence.sum()
        log_q = np.log(prevalence) + responses @ np.log(confusion).transpose(0, 2, 1).reshape(
            A * C, C
        )
        new = special.softmax(log_q, axis=1)
        new[known] = np.eye(C)[gold[known]]
        change = np.abs(new - weight).max()
        weight = new
        if change < tol:
            break
    return Mode(weight, confusion, prevalence, iteration)
