"""Pairwise differences of accuracy from an audit: a uniform sample of the items left unlabelled.

Kernel of :func:`bayeval.comparison.audited_differences`. Labels chosen adaptively (by
:class:`~bayeval.sampling.ModelSelection`, say) go where the leading systems disagree, so a
model is needed to say anything of the other items, and no model of many systems' predictions
has held there. An *audit* needs none: a simple random sample of the items not chosen. For
systems ``k`` and ``l`` only the items where their predictions differ move their difference,
and those are known for every item. Among the items left (neither chosen nor audited) on which
they differ, each is one of: ``k`` right, ``l`` right, or (more than two classes) neither. The
audited items on which they differ are a simple random sample of the same kind of items, so the
shares of the three outcomes get a Dirichlet posterior from their counts (a symmetric prior
``prior`` each), and the items left are a multinomial draw from those shares (the finite
population): post-stratification on the pair's own disagreements, nothing assumed about how the
systems err.

A system's own measure (its level) needs the items on which every system agrees too: they move
every system alike, so the differences never see them. With an audit of both strata (the
disagreements left, and the agreements left), :func:`level_draws` reads each system's share of
right predictions among the disagreements left from the audited disagreements, and the share of
agreements on which the systems are all right from the audited agreements: a beta-binomial
count per stratum, for accuracy. Any other measure (two classes) needs the confusion counts:
:func:`confusion_draws` splits each stratum's items left further by the class the system
predicts (post-stratified), whose parts are fewer items each; and a difference of any measure
but accuracy, :func:`measure_difference_draws`, splits a pair's items left by the stratum and
both systems' predictions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "confusion_draws",
    "difference_draws",
    "differing_counts",
    "level_draws",
    "measure_difference_draws",
    "pair_counts",
]


def pair_counts(right: np.ndarray) -> np.ndarray:
    """Return ``(K, K)``: the items on which system ``k`` is right and system ``l`` is wrong.

    ``right`` ``(n, K)`` of 0/1.

    Examples
    --------
    >>> pair_counts(np.array([[1, 0], [1, 1], [0, 1], [1, 0]])).tolist()
    [[0, 2], [1, 0]]
    """
    r = right.astype(np.int64)
    return r.T @ (1 - r)


def differing_counts(predictions: np.ndarray, n_classes: int) -> np.ndarray:
    """Return ``(K, K)``: the items on which systems ``k`` and ``l`` predict different classes.

    Examples
    --------
    >>> differing_counts(np.array([[0, 1, 2], [1, 1, 0]]), 3).tolist()
    [[0, 1, 2], [1, 0, 2], [2, 2, 0]]
    """
    n = predictions.shape[0]
    same = sum(
        (predictions == c).astype(np.int64).T @ (predictions == c).astype(np.int64)
        for c in range(n_classes)
    )
    return n - same


def difference_draws(
    known: np.ndarray,
    audit_right: np.ndarray,
    audit_predictions: np.ndarray,
    left_predictions: np.ndarray,
    n_classes: int,
    n_items: int,
    *,
    prior: float,
    draws: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Return draws ``(draws, K, K)`` of accuracy(k) - accuracy(l) on all ``n_items`` items.

    Parameters
    ----------
    known : ndarray, shape (K,)
        Each system's right predictions on the labelled items (chosen and audited).
    audit_right : ndarray of {0, 1}, shape (u, K)
        Whether each system is right on each audited item.
    audit_predictions, left_predictions : ndarray of int, shapes (u, K) and (m, K)
        The systems' predictions on the audited items and on the items left unlabelled.
    n_classes : int
        Classes of the label space (with two, "neither right" cannot happen where two systems
        differ).
    n_items : int
        Items in the pool (the accuracy's denominator).
    prior : float
        The symmetric Dirichlet prior of the outcomes' shares on a pair's disagreements.
    draws : int
        Posterior draws.
    rng : numpy.random.Generator
        The stream of the draws.

    Returns
    -------
    ndarray
        Antisymmetric in its last two axes; zero on the diagonal.
    """
    K = known.size
    first, second = np.triu_indices(K, k=1)  # each pair once, k < l
    wins = pair_counts(audit_right)
    k_only, l_only = wins[first, second], wins[second, first]
    left = differing_counts(left_predictions, n_classes)[first, second]
    shape = (draws, first.size)
    # the shares (k right, l right, neither) on the pair's disagreements: Dirichlet by gammas
    g_k = rng.gamma(prior + k_only, size=shape)
    g_l = rng.gamma(prior + l_only, size=shape)
    if n_classes == 2:  # where two systems differ, exactly one of them is right
        k_left = rng.binomial(left, g_k / (g_k + g_l))
        l_left = left - k_left
    else:  # the items left: multinomial as two binomials (k right, then l right among the rest)
        neither = differing_counts(audit_predictions, n_classes)[first, second] - k_only - l_only
        g_n = rng.gamma(prior + neither, size=shape)
        k_left = rng.binomial(left, g_k / (g_k + g_l + g_n))
        l_left = rng.binomial(left - k_left, g_l / (g_l + g_n))
    upper = (known[first] - known[second] + k_left - l_left) / n_items
    out = np.zeros((draws, K, K))
    out[:, first, second] = upper
    out[:, second, first] = -upper
    return out


def level_draws(
    known: np.ndarray,
    disagreements: tuple[np.ndarray, int],
    agreements: tuple[np.ndarray, int],
    n_items: int,
    *,
    prior: float,
    draws: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Return draws ``(draws, K)`` of each system's accuracy on all ``n_items`` items.

    Parameters
    ----------
    known : ndarray, shape (K,)
        Each system's right predictions on the labelled items (chosen and audited).
    disagreements : (ndarray of {0, 1}, shape (u, K); int)
        Whether each system is right on each audited item on which the systems do not all
        agree, and the number of such items left unlabelled.
    agreements : (ndarray of {0, 1}, shape (v,); int)
        Whether the systems (all alike) are right on each audited item on which they agree,
        and the number of such items left unlabelled.
    n_items : int
        Items in the pool (the accuracy's denominator).
    prior : float
        Both parameters of each share's Beta prior.
    draws : int
        Posterior draws.
    rng : numpy.random.Generator
        The stream of the draws.

    Returns
    -------
    ndarray
        The draws of the different systems share the agreements' count (the same items) but
        not the disagreements': each system's row is its own posterior, not a joint one.

    Examples
    --------
    Every item labelled: the accuracies are known.

    >>> level_draws(np.array([8, 6]), (np.zeros((0, 2)), 0), (np.zeros(0), 0), 10, prior=0.5,
    ...             draws=2, rng=np.random.default_rng(0)).tolist()
    [[0.8, 0.6], [0.8, 0.6]]
    """
    audit_d, left_d = disagreements
    audit_a, left_a = agreements
    right_d = audit_d.sum(axis=0)
    share_d = rng.beta(
        prior + right_d, prior + audit_d.shape[0] - right_d, size=(draws, known.size)
    )
    share_a = rng.beta(prior + audit_a.sum(), prior + audit_a.size - audit_a.sum(), size=(draws, 1))
    return (known + rng.binomial(left_d, share_d) + rng.binomial(left_a, share_a)) / n_items


def confusion_draws(
    known: np.ndarray,
    disagreements: tuple[np.ndarray, np.ndarray],
    agreements: tuple[np.ndarray, np.ndarray],
    *,
    prior: float,
    draws: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Return draws ``(draws, K, 2, 2)`` of each system's confusion counts on the whole pool.

    Two classes. Each stratum's items left are split by the class the system predicts
    (post-stratified): in each part the share of positives has a Beta posterior from the
    part's audited items, and the part's positives left are a binomial draw.

    Parameters
    ----------
    known : ndarray of int, shape (K, 2, 2)
        Each system's confusion counts on the labelled items (chosen and audited), ``[k, c,
        j]``: true class ``c``, predicted ``j``.
    disagreements : (ndarray of int, shape (K, 2, 2); ndarray of int, shape (K, 2))
        The audited items on which the systems do not all agree, counted by the class each
        system predicts and the true class (``[k, j, c]``), and the items left unlabelled
        there, by the class each system predicts (``[k, j]``).
    agreements : (ndarray of int, shape (2, 2); ndarray of int, shape (2,))
        The same for the items on which every system predicts the same class, which are the
        same items for every system: drawn once and shared.
    prior : float
        Both parameters of each part's Beta prior.
    draws : int
        Posterior draws.
    rng : numpy.random.Generator
        The stream of the draws.

    Returns
    -------
    ndarray
        Each system's counts are its own posterior; only the agreements' are shared.

    Examples
    --------
    Every item labelled: the counts are known.

    >>> known = np.array([[[5, 1], [2, 2]], [[4, 2], [0, 4]]])
    >>> none = (np.zeros((2, 2, 2), int), np.zeros((2, 2), int)), (np.zeros((2, 2), int),
    ...                                                               np.zeros(2, int))
    >>> draws = confusion_draws(known, *none, prior=0.5, draws=3, rng=np.random.default_rng(0))
    >>> draws.shape, bool((draws == known).all())
    ((3, 2, 2, 2), True)
    """
    own = _positives_left(*disagreements, prior, draws, rng)  # (draws, K, j, c)
    shared = _positives_left(*agreements, prior, draws, rng)  # (draws, j, c)
    return known + np.swapaxes(own + shared[:, None], -1, -2)


def _positives_left(
    audited: np.ndarray, left: np.ndarray, prior: float, draws: int, rng: np.random.Generator
) -> np.ndarray:
    """Return draws ``(draws, ..., 2)``: each part's items left by true class (0, then 1).

    ``audited`` ``(..., 2)``: each part's audited items by true class; ``left`` ``(...)``:
    the part's items left.
    """
    share = rng.beta(prior + audited[..., 1], prior + audited[..., 0], size=(draws, *left.shape))
    positives = rng.binomial(left, share)
    return np.stack([left - positives, positives], axis=-1)


def measure_difference_draws(
    known: np.ndarray,
    audited: tuple[np.ndarray, np.ndarray, np.ndarray],
    left: tuple[np.ndarray, np.ndarray],
    measure_of: Any,
    *,
    prior: float,
    draws: int,
    rng: np.random.Generator,
    block: int = 256,
) -> np.ndarray:
    """Return draws ``(draws, K, K)`` of measure(k) - measure(l), two classes, any measure.

    For each pair, the items left are split by the stratum (disagreement or agreement) and the
    two systems' predictions: in each part the share of positives has a Beta posterior from
    the part's audited items, and the part's positives left are a binomial draw. The
    agreements' parts (both systems, and every other, predict alike) are drawn once for all
    pairs. Each pair's confusion counts follow, hence the difference of any measure of them.

    Parameters
    ----------
    known : ndarray of int, shape (K, 2, 2)
        Each system's confusion counts on the labelled items, ``[k, true, predicted]``.
    audited : (ndarray (u, K) of {0, 1}; ndarray (u,) of {0, 1}; ndarray (u,) of bool)
        The audited items' predictions, labels, and whether every system agrees on them.
    left : (ndarray (m, K) of {0, 1}; ndarray (m,) of bool)
        The unlabelled items' predictions, and whether every system agrees on them.
    measure_of : callable
        From confusion counts ``(..., 2, 2)`` to the measure ``(...)``.
    prior : float
        Both parameters of each part's Beta prior.
    draws : int
        Posterior draws.
    rng : numpy.random.Generator
        The stream of the draws.
    block : int, default 256
        Pairs drawn at once (memory: ``draws x block x 4`` floats).

    Returns
    -------
    ndarray
        Antisymmetric in its last two axes; zero on the diagonal.
    """
    audit_pred, labels, audit_agree = audited
    left_pred, left_agree = left
    K = known.shape[0]
    # the agreements' parts, by the class every system predicts: shared by every pair
    agreed = np.zeros((draws, 2, 2), dtype=np.int64)  # [draw, true, predicted]
    for j in (0, 1):
        part = audit_agree & (audit_pred[:, 0] == j)
        n_left = int(np.count_nonzero(left_agree & (left_pred[:, 0] == j)))
        share = rng.beta(prior + labels[part].sum(), prior + (1 - labels[part]).sum(), size=draws)
        agreed[:, 1, j] = rng.binomial(n_left, share)
        agreed[:, 0, j] = n_left - agreed[:, 1, j]
    first, second = np.triu_indices(K, k=1)
    out = np.zeros((draws, K, K))
    d_pred, d_labels = audit_pred[~audit_agree], labels[~audit_agree]
    d_left = left_pred[~left_agree]
    for start in range(0, first.size, block):
        k, m = first[start : start + block], second[start : start + block]
        # part of each item for each pair: 2 * prediction of k + prediction of l
        audit_part = 2 * d_pred[:, k] + d_pred[:, m]
        left_part = 2 * d_left[:, k] + d_left[:, m]
        parts = np.arange(4)[:, None, None]
        seen = (audit_part[None] == parts).sum(axis=1).T  # (pairs, 4)
        positives = ((audit_part[None] == parts) & (d_labels[None, :, None] == 1)).sum(axis=1).T
        n_left = (left_part[None] == parts).sum(axis=1).T
        share = rng.beta(prior + positives, prior + seen - positives, size=(draws, *seen.shape))
        pos = rng.binomial(n_left, share)  # (draws, pairs, 4)
        neg = n_left - pos
        counts = []
        for system, ones in ((k, (2, 3)), (m, (1, 3))):
            zeros = tuple(sorted(set(range(4)) - set(ones)))
            c = np.broadcast_to(known[system] + agreed[:, None], (draws, k.size, 2, 2)).copy()
            c[..., 1, 1] += pos[..., list(ones)].sum(axis=-1)
            c[..., 0, 1] += neg[..., list(ones)].sum(axis=-1)
            c[..., 1, 0] += pos[..., list(zeros)].sum(axis=-1)
            c[..., 0, 0] += neg[..., list(zeros)].sum(axis=-1)
            counts.append(c)
        difference = measure_of(counts[0]) - measure_of(counts[1])
        out[:, k, m] = difference
        out[:, m, k] = -difference
    return out
