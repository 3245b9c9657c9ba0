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
from scipy import special

__all__ = [
    "VOTE_GRID",
    "best_in_draws",
    "best_shares",
    "class_counts_from_uniforms",
    "class_vote_weight_probabilities",
    "confusion_from_true_positives",
    "information_gain",
    "pattern_cells",
    "positives_from_uniforms",
    "vote_weight_probabilities",
]

#: The weights of the vote a priori equally likely (see :func:`vote_weight_probabilities`).
VOTE_GRID = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


def pattern_cells(predictions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the distinct rows ``(n_cells, K)`` and each item's cell (its row) ``(n_items,)``.

    Examples
    --------
    >>> patterns, cell = pattern_cells(np.array([[1, 0], [1, 0], [0, 0]]))
    >>> patterns.tolist(), cell.tolist()
    ([[0, 0], [1, 0]], [1, 1, 0])
    """
    patterns, cell = np.unique(predictions, axis=0, return_inverse=True)
    return patterns, cell.reshape(-1)


def positives_from_uniforms(
    uniforms: np.ndarray,
    prior: tuple[float, float],
    sizes: np.ndarray,
    labelled: np.ndarray,
    ones: np.ndarray,
) -> np.ndarray:
    """Return each cell's positives in all, labelled or not, per draw: ``(n_draws, n_cells)`` int32.

    The unlabelled items of a cell hold a beta-binomial number of positives (the rate
    ``Beta(a + ones, b + labelled - ones)``, then binomial); each draw inverts its cumulative
    distribution at the draw's uniform, ``uniforms`` ``(n_draws, n_cells)``. With the same
    uniforms, a cell whose counts did not change keeps its draws, so the posterior can be
    updated one cell at a time.

    Examples
    --------
    >>> u = np.random.default_rng(0).random((20_000, 2))
    >>> x = positives_from_uniforms(u, (1.0, 1.0), np.array([1, 3]), np.array([0, 1]),
    ...                            np.array([0, 1]))
    >>> x[:, 0].mean().round(2), np.bincount(x[:, 1] - 1) / 20_000  # 2 unlabelled: 1/2, 1/3, 1/6
    (np.float64(0.5), array([0.16..., 0.33..., 0.50...]))
    """
    a, b = prior
    alpha, beta = a + ones, b + labelled - ones
    left = sizes - labelled
    # a cell of one unlabelled item is a Bernoulli of the rate's mean: one comparison for every
    # such cell at once (the other cells compare against -1, never true)
    threshold = np.where(left == 1, alpha / (alpha + beta), -1.0)
    positives = (uniforms < threshold).astype(np.int32) + ones.astype(np.int32)
    for c in np.flatnonzero(left > 1):
        cdf = np.cumsum(_beta_binomial_pmf(int(left[c]), alpha[c], beta[c]))
        positives[:, c] += np.minimum(np.searchsorted(cdf, uniforms[:, c]), left[c])
    return positives


def vote_weight_probabilities(
    prior: tuple[float, float],
    vote: np.ndarray,
    labelled: np.ndarray,
    ones: np.ndarray,
    grid: tuple[float, ...] = VOTE_GRID,
) -> np.ndarray:
    """Return the posterior probability of each weight ``w`` of ``grid``, given the labels.

    A cell's rate has the prior ``Beta(a + w v_c, b + w (1 - v_c))``, ``v_c`` the share of
    systems that predict 1 on it: ``w`` pseudo-labels that follow the vote. The weights of the
    grid are equally likely a priori; each is weighed by the labelled cells' beta-binomial
    likelihood of their labels (``ones`` of ``labelled``). Cells without labels contribute
    nothing, and with no label at all the prior is returned.

    Examples
    --------
    Cells whose labels follow the vote ask for weight; labels against it for none:

    >>> vote = np.array([0.9, 0.1, 0.8, 0.2])
    >>> follow = vote_weight_probabilities((0.5, 0.5), vote, np.full(4, 5), np.array([5, 0, 4, 1]))
    >>> against = vote_weight_probabilities((0.5, 0.5), vote, np.full(4, 5), np.array([0, 5, 1, 4]))
    >>> VOTE_GRID[int(follow.argmax())], VOTE_GRID[int(against.argmax())]
    (16.0, 0.0)
    >>> vote_weight_probabilities((0.5, 0.5), vote, np.zeros(4), np.zeros(4)).round(3)
    array([0.143, 0.143, 0.143, 0.143, 0.143, 0.143, 0.143])
    """
    # two classes, positives first: Beta(a + w v, b + w (1 - v)) is Dirichlet's binary case
    shares = np.column_stack([vote, 1 - vote])
    counts = np.column_stack([ones, labelled - ones])
    return class_vote_weight_probabilities(np.asarray(prior, float), shares, counts, grid)


def class_vote_weight_probabilities(
    prior: np.ndarray,
    shares: np.ndarray,
    counts: np.ndarray,
    grid: tuple[float, ...] = VOTE_GRID,
) -> np.ndarray:
    """Return the posterior probability of each weight ``w`` of ``grid``, labels in classes.

    A cell's class distribution has the prior ``Dirichlet(prior + w s_c)``: ``prior``
    ``(n_classes,)`` the concentration before the vote, ``s_c`` (a row of ``shares``,
    ``(n_cells, n_classes)``) the share of systems that predict each class on the cell;
    ``counts`` ``(n_cells, n_classes)`` are its labelled items of each class. The weights of
    the grid are equally likely a priori; each is weighed by the cells' Dirichlet-multinomial
    likelihood of their labels (the multinomial coefficient, the same for every weight, left
    out). Cells without labels contribute nothing.

    Examples
    --------
    Three classes; cells whose labels follow the vote ask for weight:

    >>> shares = np.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])
    >>> counts = np.array([[5, 0, 0], [0, 0, 5]])
    >>> p = class_vote_weight_probabilities(np.full(3, 0.5), shares, counts)
    >>> VOTE_GRID[int(p.argmax())]
    16.0
    """
    seen = counts.sum(axis=1) > 0
    s, k = shares[seen], counts[seen]
    log_likelihood = []
    for w in grid:
        alpha = prior + w * s
        total = alpha.sum(axis=1)
        log_likelihood.append(
            np.sum(special.gammaln(alpha + k) - special.gammaln(alpha))
            + np.sum(special.gammaln(total) - special.gammaln(total + k.sum(axis=1)))
        )
    log_likelihood = np.array(log_likelihood)
    weights = np.exp(log_likelihood - log_likelihood.max())
    return weights / weights.sum()


def class_counts_from_uniforms(
    uniforms: np.ndarray, alpha: np.ndarray, left: np.ndarray
) -> np.ndarray:
    """Return each cell's unlabelled items of each class, per draw: ``(n_draws, n_cells, C)``.

    A cell's ``left`` unlabelled items hold Dirichlet-multinomial counts (the class
    distribution ``Dirichlet(alpha_c)`` with the labels counted in, then multinomial), drawn
    by breaking a stick: class ``j`` takes a beta-binomial share ``Beta(alpha_j, alpha_(j+1) +
    ... + alpha_C)`` of the items the classes before it left, inverted at the draw's uniform
    ``uniforms[..., j]`` (``(n_draws, n_cells, C - 1)``). A cell of one item is a categorical
    draw at its first uniform. As in :func:`positives_from_uniforms`, unchanged counts keep
    their draws.

    Examples
    --------
    Four unlabelled items under Dirichlet(1, 2, 1): the mean of each class is 4 alpha_c / 4:

    >>> u = np.random.default_rng(0).random((40_000, 1, 2))
    >>> x = class_counts_from_uniforms(u, np.array([[1.0, 2.0, 1.0]]), np.array([4]))
    >>> x.mean(axis=0).round(1), bool(np.all(x.sum(axis=-1) == 4))
    (array([[1., 2., 1.]]), True)
    """
    n_draws, n_cells, n_classes = uniforms.shape[0], alpha.shape[0], alpha.shape[1]
    counts = np.zeros((n_draws, n_cells, n_classes), dtype=np.int32)
    single = np.flatnonzero(left == 1)
    if single.size:  # one item: the class at which the prior mean's cumulative passes u
        cumulative = np.cumsum(alpha[single], axis=1) / alpha[single].sum(axis=1, keepdims=True)
        u = uniforms[:, single, 0][..., None]
        chosen = np.minimum((u >= cumulative[None, :, :-1]).sum(axis=-1), n_classes - 1)
        counts[:, single] = chosen[..., None] == np.arange(n_classes)
    for c in np.flatnonzero(left > 1):
        counts[:, c] = _stick_breaking(uniforms[:, c], alpha[c], int(left[c]))
    return counts


def _stick_breaking(uniforms: np.ndarray, alpha: np.ndarray, n: int) -> np.ndarray:
    """Dirichlet-multinomial counts ``(n_draws, C)`` of ``n`` items, one class at a time."""
    counts = np.zeros((uniforms.shape[0], alpha.size), dtype=np.int32)
    remaining = np.full(uniforms.shape[0], n, dtype=np.int64)
    rest = np.cumsum(alpha[::-1])[::-1]  # rest[j]: alpha_j + ... + alpha_C
    for j in range(alpha.size - 1):
        # draws with the same number of items left share one distribution: one cdf per number
        left, which = np.unique(remaining, return_inverse=True)
        cdf = _beta_binomial_cdfs(left, alpha[j], rest[j + 1])
        counts[:, j] = (cdf[which] < uniforms[:, j, None]).sum(axis=1)
        remaining -= counts[:, j]
    counts[:, -1] = remaining
    return counts


def _beta_binomial_cdfs(sizes: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """``P(X <= k)`` of the beta-binomial of each of ``sizes`` items, ``(n_sizes, max + 1)``.

    Each row is infinite from ``k = size`` on, so that the number of its entries below a
    uniform is the inverse distribution at the uniform (never above ``size``).
    """
    k = np.arange(int(sizes.max()) + 1)
    m = sizes[:, None].astype(float)
    inside = k < m
    rest = np.where(inside, m - k, 1.0)  # items not of this class; a placeholder beyond m
    log_pmf = (
        special.gammaln(m + 1)
        - special.gammaln(k + 1)
        - special.gammaln(rest + 1)
        + special.betaln(k + alpha, rest + beta)
        - special.betaln(alpha, beta)
    )
    return np.where(inside, np.cumsum(np.where(inside, np.exp(log_pmf), 0.0), axis=1), np.inf)


def _beta_binomial_pmf(n: int, alpha: float, beta: float) -> np.ndarray:
    """``P(X = k)``, ``k = 0 .. n``, of the beta-binomial (through log-gamma, for large ``n``)."""
    k = np.arange(n + 1)
    log_choose = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    log_pmf = log_choose + special.betaln(k + alpha, n - k + beta) - special.betaln(alpha, beta)
    return np.exp(log_pmf)


def confusion_from_true_positives(
    true_positives: np.ndarray, positives: np.ndarray, predicted: np.ndarray, n_items: int
) -> np.ndarray:
    """Return confusion counts ``(n_draws, K, 2, 2)`` from each system's true positives.

    ``true_positives`` ``(n_draws, K)``; ``positives`` ``(n_draws,)`` the pool's positives in
    each draw; ``predicted`` ``(K,)`` each system's predicted positives. ``counts[..., c, j]``:
    items of true class ``c`` that the system predicts ``j``.
    """
    tp = true_positives
    fp = predicted[None, :] - tp
    fn = positives[:, None] - tp
    counts = np.empty((*tp.shape, 2, 2))  # filled in place: faster than stacking
    counts[..., 0, 0], counts[..., 0, 1] = n_items - tp - fp - fn, fp
    counts[..., 1, 0], counts[..., 1, 1] = fn, tp
    return counts


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


def information_gain(
    best: np.ndarray,
    rate_unlabelled: np.ndarray,
    mean_rate: np.ndarray | None = None,
    max_winners: int = 16,
) -> np.ndarray:
    """Return, per cell, the mutual information (nats) between the best system and one new label.

    ``best`` ``(n_draws,)`` is each draw's best system; ``rate_unlabelled`` ``(n_draws,
    n_cells)`` the share of positives among a cell's unlabelled items in each draw, which is the
    probability that one more of its items, chosen at random, is positive given that draw
    (Rao-Blackwellised); with classes, ``(n_draws, n_cells, n_classes)`` the share of each
    class. The joint of (best, label) is the average over draws, and the information is
    ``sum p(k, y) log(p(k, y) / (p(k) p(y)))``. The ``max_winners - 1`` systems most often best
    keep their own class and the rest share one, which bounds the cost by ``max_winners x
    draws x cells`` (the information of the coarser variable is a lower bound).
    ``mean_rate``, ``rate_unlabelled``'s mean over draws, saves a pass over it.

    Examples
    --------
    A label that decides the winner carries log 2 nats; one unrelated to it, none:

    >>> best = np.array([0, 0, 1, 1])
    >>> rate = np.array([[1.0, 0.5], [1.0, 0.5], [0.0, 0.5], [0.0, 0.5]])
    >>> information_gain(best, rate).round(4)
    array([0.6931, 0.    ])

    The same with three classes, the label of the first cell class 0 or 2:

    >>> shares = np.array([[1, 0, 0], [1/3, 1/3, 1/3]])
    >>> rate = np.stack([shares, shares, shares[:, ::-1], shares[:, ::-1]])
    >>> information_gain(best, rate).round(4)
    array([0.6931, 0.    ])
    """
    n_draws = best.size
    winners, which, counts = np.unique(best, return_inverse=True, return_counts=True)
    if winners.size > max_winners:  # the rarest winners share the last class
        rank = np.empty(winners.size, dtype=np.int64)
        rank[np.argsort(-counts, kind="stable")] = np.arange(winners.size)
        which = np.minimum(rank[which], max_winners - 1)
    n_classes = int(which.max()) + 1
    indicator = np.zeros((n_draws, n_classes), dtype=rate_unlabelled.dtype)
    indicator[np.arange(n_draws), which] = 1.0
    p_best = indicator.mean(axis=0)[:, None]
    mean = rate_unlabelled.mean(axis=0) if mean_rate is None else mean_rate
    if rate_unlabelled.ndim == 3:  # classes: every outcome's joint with the best system
        flat = rate_unlabelled.reshape(n_draws, -1)
        joint = (indicator.T @ flat / n_draws).reshape(n_classes, *rate_unlabelled.shape[1:])
        product = p_best[..., None] * mean[None]
        return np.maximum(_plogp_ratio(joint, product).sum(axis=-1), 0.0)
    joint_one = indicator.T @ rate_unlabelled / n_draws  # p(best = k, y = 1)
    p_one = mean[None, :]
    joint_zero = p_best - joint_one
    gain = _plogp_ratio(joint_one, p_best * p_one) + _plogp_ratio(joint_zero, p_best * (1 - p_one))
    return np.maximum(gain, 0.0)


def _plogp_ratio(joint: np.ndarray, product: np.ndarray) -> np.ndarray:
    """``sum_k joint log(joint / product)`` over systems, with ``0 log 0 = 0``."""
    positive = joint > 1e-15
    ratio = np.divide(joint, product, out=np.ones_like(joint), where=positive & (product > 0))
    return np.where(positive, joint * np.log(ratio), 0.0).sum(axis=0)
