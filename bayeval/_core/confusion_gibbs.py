"""Gibbs sampler of the label given several systems' predictions (a Dawid-Skene model).

Each item has a true class ``y`` in ``0..C-1``; each system ``k`` predicts class ``j`` with
probability ``theta[k, y, j]`` (its confusion matrix), independently of the other systems given
``y``; the classes have prevalences ``pi``. Priors: ``pi ~ Dirichlet(class_prior)``, each row
``theta[k, c] ~ Dirichlet(confusion_prior[c])``.

Items with the same predictions of every system (a *pattern*) are exchangeable, so the sampler
works on patterns, never on items: the state is ``M[p, c]``, how many items of pattern ``p``
are of class ``c`` (the labelled ones known, the unlabelled ones drawn). One sweep:

1. ``pi | M`` and ``theta | M``: Dirichlet, from the class totals and the confusion counts
   ``N[k, c, j] = sum_p M[p, c] [pattern p has system k predicting j]``;
2. ``M | pi, theta``: the unlabelled items of pattern ``p`` fall into the classes as
   ``Multinomial(u_p, q_p)`` with ``q_p(c)`` proportional to ``pi_c prod_k theta[k, c, j_pk]``.

The confusion counts ``N`` of each sweep are those of *this* pool (finite-population
inference): any measure of a system's predictions is a function of its ``N[k]``.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = [
    "confusion_counts",
    "dirichlet_rows",
    "gibbs_confusion",
    "gibbs_responses",
    "majority_start",
    "one_hot_patterns",
    "sweep_classes",
]


def one_hot_patterns(patterns: np.ndarray, n_classes: int) -> np.ndarray:
    """Return ``(P, K * C)`` floats: 1 where pattern ``p`` has system ``k`` predicting ``j``."""
    P, K = patterns.shape
    out = np.zeros((P, K, n_classes))
    np.put_along_axis(out, patterns[:, :, None].astype(np.intp), 1.0, axis=2)
    return out.reshape(P, K * n_classes)


def confusion_counts(M: np.ndarray, one_hot: np.ndarray, n_systems: int) -> np.ndarray:
    """Return ``N[..., k, c, j]`` from the class counts per pattern ``M[..., p, c]``.

    ``one_hot`` ``(P, K * C)``: the responses of each pattern (see :func:`gibbs_responses`).
    """
    *lead, P, C = M.shape
    predicted = one_hot.shape[1] // n_systems
    # one 2-d product (BLAS): the patterns first, every leading index and class side by side
    flat = np.moveaxis(M, -2, 0).reshape(P, -1)  # (P, ... * C)
    counts = (flat.T @ one_hot).reshape(*lead, C, n_systems, predicted)
    return np.moveaxis(counts, -2, -3)  # (..., K, C, predicted)


def majority_start(responses: np.ndarray, labelled: np.ndarray, unlabelled: np.ndarray):
    """Return the class counts per pattern ``(P, C)`` that chains start from.

    The labels, and every unlabelled item of a pattern in the class its responders name most.
    """
    P, C = labelled.shape
    votes = responses.reshape(P, -1, C).sum(axis=1)
    start = np.zeros((P, C))
    start[np.arange(P), votes.argmax(axis=1)] = unlabelled
    return labelled + start


def dirichlet_rows(rng: np.random.Generator, alpha: np.ndarray) -> np.ndarray:
    """Dirichlet draws along the last axis, vectorised over the others."""
    g = rng.standard_gamma(alpha)
    total = g.sum(axis=-1, keepdims=True)
    # a row whose gammas all underflow (tiny concentrations) gets its largest entry
    return np.where(total > 0, g / np.where(total > 0, total, 1.0), g == g.max(-1, keepdims=True))


def sweep_classes(
    classes: np.ndarray,
    log_prior: np.ndarray,
    responses: np.ndarray,
    confusion_prior: np.ndarray,
    known: np.ndarray,
    sweeps: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Return the items' classes after ``sweeps`` Gibbs sweeps of annotators who disagree.

    One sweep draws every annotator's confusion matrix given the classes and the answers
    (``Dirichlet(confusion_prior + counts)``), then every item's class given the confusions,
    its answers and its prior ``log_prior`` (an item's answers are independent given its
    class). The items ``known`` (gold) keep their classes. The data augmentation of a
    measure's model (its curve or cells give ``log_prior``) runs a few sweeps per round: the
    classes and the confusions inform each other strongly, so one sweep moves them little.

    Parameters
    ----------
    classes : ndarray of int, shape (n,)
        Each item's class ``0..C-1`` now.
    log_prior : ndarray, shape (n, C)
        Each item's log prior probability of each class.
    responses : ndarray, shape (n, A * C)
        How often each annotator gave each answer on each item (:func:`gibbs_responses`).
    confusion_prior : ndarray, shape (C, C)
        Dirichlet concentrations of the rows of every annotator's confusion matrix.
    known : ndarray of bool, shape (n,)
        Items whose class is known (gold): they keep it.
    sweeps : int
        Sweeps to run.
    rng : numpy.random.Generator
        Source of the draws.

    Returns
    -------
    numpy.ndarray of int, shape (n,)
        The classes after the last sweep.
    """
    C = log_prior.shape[1]
    A = responses.shape[1] // C
    for _ in range(sweeps):
        confusion = dirichlet_rows(rng, confusion_prior + confusion_counts(np.eye(C)[classes],
                                                                       responses, A))  # fmt: skip
        with np.errstate(divide="ignore"):  # an answer whose probability underflowed
            # log P(answers | class c): sum over (annotator a, answer j) of count * log theta
            log_answers = responses @ np.log(confusion).transpose(0, 2, 1).reshape(A * C, C)
        logit = log_prior + log_answers
        drawn = np.argmax(logit + rng.gumbel(size=logit.shape), axis=1)  # Gumbel-max: a draw
        classes = np.where(known, classes, drawn)
    return classes


def gibbs_confusion(
    patterns: np.ndarray, labelled: np.ndarray, unlabelled: np.ndarray, **options
) -> dict[str, np.ndarray]:
    """Run ``chains`` Gibbs chains of the confusion model on pattern counts.

    Parameters
    ----------
    patterns : ndarray of int, shape (P, K)
        The distinct predictions of the ``K`` systems, classes ``0..C-1``.
    labelled, unlabelled, **options
        As in :func:`gibbs_responses`.

    Returns
    -------
    dict
        As :func:`gibbs_responses`.
    """
    one_hot = one_hot_patterns(patterns, labelled.shape[1])
    return gibbs_responses(one_hot, labelled, unlabelled, **options)


def gibbs_responses(
    responses: np.ndarray,
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
    start: np.ndarray | None = None,
    stratum: np.ndarray | None = None,
    keep_classes: bool = False,
) -> dict[str, np.ndarray]:
    """Run ``chains`` Gibbs chains of the confusion model on response counts.

    Parameters
    ----------
    responses : ndarray, shape (P, K * C)
        How often responder ``k`` (a system, an annotator) gave class ``j`` to an item of
        pattern ``p``, at column ``k * C + j``: one-hot rows for systems that predict every
        item; counts for annotators, who answer some items, and some more than once.
    labelled : ndarray of int, shape (P, C)
        Labelled items of each pattern and class (an annotator's gold items).
    unlabelled : ndarray of int, shape (P,)
        Unlabelled items of each pattern.
    class_prior : ndarray, shape (C,)
        The Dirichlet concentrations of the prevalences.
    confusion_prior : ndarray, shape (C, C)
        Row ``c``: the Dirichlet concentrations of a responder's answers for class ``c``.
    chains, draws, warmup, thin : int
        ``draws`` sweeps are kept per chain, every ``thin``-th after ``warmup``.
    rng : numpy.random.Generator
        The source of every draw.
    start : ndarray, shape (chains, P, C), optional
        The class counts per pattern to start from (``state`` of an earlier run); default:
        the labels, and the majority vote of each pattern for its unlabelled items.
    stratum : ndarray of int, shape (P,), optional
        Each pattern's stratum (``0..S-1``); the prevalences are then per stratum, each with
        ``class_prior``. Default: one stratum.
    keep_classes : bool, default False
        Keep the class counts per pattern of every kept sweep (``classes``).

    Returns
    -------
    dict
        ``class_prior`` ``(chains, draws, C)`` (``(chains, draws, S, C)`` with ``stratum``),
        ``confusion`` ``(chains, draws, K, C, C)`` (the parameters) and ``counts``
        ``(chains, draws, K, C, C)``: the pool's confusion counts ``N`` in each kept sweep;
        with ``keep_classes``, ``classes`` ``(chains, draws, P, C)``: the class counts per
        pattern in each kept sweep; ``state``: the class counts per pattern at the end.
    """
    P = responses.shape[0]
    C = labelled.shape[1]
    K = responses.shape[1] // C
    strata = np.zeros(P, dtype=np.intp) if stratum is None else np.asarray(stratum, np.intp)
    S = int(strata.max()) + 1 if P else 1
    in_stratum = np.zeros((S, P))
    in_stratum[strata, np.arange(P)] = 1.0
    if start is None:
        start = majority_start(responses, labelled, unlabelled)
    M = np.broadcast_to(start, (chains, P, C)).copy()
    n_unlabelled = np.broadcast_to(unlabelled, (chains, P))
    out = {
        "class_prior": np.empty((chains, draws, S, C)),
        "confusion": np.empty((chains, draws, K, C, C)),
        "counts": np.empty((chains, draws, K, C, C)),
    }
    if keep_classes:
        out["classes"] = np.empty((chains, draws, P, C), dtype=np.int32)
    for sweep in range(warmup + draws * thin):
        counts = confusion_counts(M, responses, K)
        pi = dirichlet_rows(rng, class_prior + in_stratum @ M)  # (chains, S, C)
        theta = dirichlet_rows(rng, confusion_prior + counts)  # (chains, K, C, C)
        if sweep >= warmup and (sweep - warmup) % thin == thin - 1:
            d = (sweep - warmup) // thin
            out["class_prior"][:, d], out["confusion"][:, d] = pi, theta
            out["counts"][:, d] = counts
            if keep_classes:
                out["classes"][:, d] = M
        # log q_p(c) = log pi_c + sum_k n_pkj log theta[k, c, j]: one matrix product per chain
        with np.errstate(divide="ignore"):
            log_theta = np.log(theta)
            log_pi = np.log(pi)[:, strata, :]  # (chains, P, C)
        log_q = log_pi + responses @ np.swapaxes(log_theta, -1, -2).reshape(chains, K * C, C)
        q = special.softmax(log_q, axis=-1)
        M = labelled + rng.multinomial(n_unlabelled, q)
    if stratum is None:
        out["class_prior"] = out["class_prior"][:, :, 0]
    out["state"] = M
    return out
