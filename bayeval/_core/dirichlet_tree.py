"""Dirichlet-tree oracle model of Marchant & Rubinstein (2021, §4, Appendix F), by leaf.

The pool is partitioned into ``K`` leaves of a tree. Labels follow ``y ~ Categorical(theta)``,
``theta ~ Dirichlet(alpha)``, and given its label an item falls in leaf ``k`` with probability
``psi[y, k]``, ``psi[y] ~ DirichletTree(beta[y]; T)``. With a deterministic oracle some labels
are observed; EM gives point estimates of ``theta`` and ``psi`` and, for each unlabelled item,
the posterior response ``pi(y | leaf) ∝ psi[y, leaf] theta[y]`` (Eq. 12-13).

Every item of a leaf that is still unlabelled has the same response distribution, so the E-step
and M-step need only per-leaf counts: ``labelled[k, y]`` (observed labels) and ``unlabelled[k]``.
A step costs O(nodes x classes), whatever the pool size.

Tree encoding: nodes ``0 .. n_nodes - 1`` with ``parent[0] = -1`` (the root) and
``parent[c] < c`` for every other node (any breadth-first or depth-first numbering);
``leaves[k]`` is the node of leaf ``k``. ``beta[y, c]`` is the concentration of the branch into
node ``c`` (``beta[:, 0]`` is unused).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TreeFit", "dirichlet_tree_em", "leaf_counts_to_nodes"]


def leaf_counts_to_nodes(parent: np.ndarray, leaves: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Sum per-leaf counts ``(..., K)`` up the tree: ``(..., n_nodes)``, node ``c`` = its leaves.

    One backward pass over the nodes (children have larger indices than their parents).
    """
    out = np.zeros(counts.shape[:-1] + (parent.size,))
    np.add.at(out, (..., leaves), counts)
    for node in range(parent.size - 1, 0, -1):
        out[..., parent[node]] += out[..., node]
    return out


def _branch_modes(parent: np.ndarray, beta_tilde: np.ndarray, leaves_below: np.ndarray):
    """Mode of each node's branch probabilities (Eq. 11): ``(b - L) / sum over siblings``."""
    shifted = beta_tilde - leaves_below  # (C, n_nodes)
    totals = np.zeros_like(shifted)
    np.add.at(totals, (slice(None), parent[1:]), shifted[:, 1:])
    branch = np.ones_like(shifted)
    branch[:, 1:] = shifted[:, 1:] / totals[:, parent[1:]]
    return branch


def _leaf_probabilities(below: np.ndarray, branch: np.ndarray) -> np.ndarray:
    """``psi[y, k]``: the product of branch probabilities from the root to leaf ``k`` (Eq. 10).

    ``below[k, c]`` is 1 when node ``c`` lies on leaf ``k``'s path, so the product is a matrix
    product in logs (branch probabilities are positive under the priors required).
    """
    return np.exp(np.log(branch) @ below.T)


@dataclass(frozen=True)
class TreeFit:
    """EM fit of the Dirichlet-tree model.

    Attributes
    ----------
    theta : numpy.ndarray
        ``(C,)`` mode of the global label distribution.
    psi : numpy.ndarray
        ``(C, K)`` mode of each label's distribution over leaves.
    response : numpy.ndarray
        ``(K, C)`` posterior label distribution of an unlabelled item in each leaf (Eq. 13).
    iterations : int
        EM iterations run.
    converged : bool
        Whether the largest change of ``response`` fell below the tolerance.
    """

    theta: np.ndarray
    psi: np.ndarray
    response: np.ndarray
    iterations: int
    converged: bool


def dirichlet_tree_em(
    parent,
    leaves,
    labelled,
    unlabelled,
    alpha,
    beta,
    *,
    tol: float = 1e-10,
    max_iter: int = 1000,
    start: np.ndarray | None = None,
) -> TreeFit:
    """Fit the Dirichlet-tree model by EM from per-leaf counts (Appendix F of [1]_).

    Parameters
    ----------
    parent : array_like of int
        ``(n_nodes,)`` parent of each node, ``-1`` for the root (node 0), ``parent[c] < c``.
    leaves : array_like of int
        ``(K,)`` node of each leaf.
    labelled : array_like of float
        ``(K, C)`` observed labels of each class in each leaf.
    unlabelled : array_like of float
        ``(K,)`` items of each leaf whose label is not observed.
    alpha : array_like of float
        ``(C,)`` Dirichlet concentrations of ``theta``; all > 1, so that the mode is interior.
    beta : array_like of float
        ``(C, n_nodes)`` branch concentrations; ``beta[y, c] > leaves below c`` keeps the modes
        of Eq. 11 positive (e.g. ``beta[y, c] = 1 + leaves below c``, a flat tree).
    tol : float, default 1e-10
        Stop when no response probability changes by more than this.
    max_iter : int, default 1000
    start : numpy.ndarray, optional
        ``(K, C)`` initial responses (e.g. from classifier scores); default ``theta`` from
        ``alpha`` and the labelled counts alone.

    Returns
    -------
    TreeFit

    Notes
    -----
    E-step (Eq. 12): ``E[count[k, y]] = labelled[k, y] + unlabelled[k] response[k, y]``. The
    posterior concentrations are ``alpha + sum_k E[count[k]]`` and, at each node, ``beta`` plus
    the expected counts of the leaves below it (a backward pass). M-step: ``theta`` is the
    Dirichlet mode, and each node's branch probabilities the Dirichlet-tree mode of Eq. 11,
    ``(beta_tilde[c] - L_c) / sum over siblings``, with ``L_c`` the leaves below ``c``; ``psi``
    multiplies them along each root-to-leaf path (Eq. 10, a forward pass). The response of an
    unlabelled item is ``psi[y, leaf] theta[y]`` normalised over ``y`` (Eq. 13).

    References
    ----------
    .. [1] N. G. Marchant and B. I. P. Rubinstein. Needle in a haystack: label-efficient
       evaluation under extreme class imbalance. KDD 2021.

    Examples
    --------
    Two leaves under a root, two classes; leaf 0 has labelled positives, leaf 1 negatives:

    >>> import numpy as np
    >>> parent, leaves = np.array([-1, 0, 0]), np.array([1, 2])
    >>> beta = np.full((2, 3), 2.0)          # 1 + one leaf below each branch
    >>> fit = dirichlet_tree_em(parent, leaves, labelled=[[0, 8], [9, 1]],
    ...                         unlabelled=[100, 100], alpha=[2.0, 2.0], beta=beta)
    >>> fit.response.round(3)                # P(y | leaf) for unlabelled items
    array([[0.099, 0.901],
           [0.832, 0.168]])
    """
    parent = np.asarray(parent, dtype=np.intp)
    leaves = np.asarray(leaves, dtype=np.intp)
    labelled = np.asarray(labelled, dtype=float)
    unlabelled = np.asarray(unlabelled, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    beta = np.asarray(beta, dtype=float)
    n_leaves, n_classes = labelled.shape
    # below[k, c] = 1 if leaf k lies under node c: node sums become one matrix product per step
    below = leaf_counts_to_nodes(parent, leaves, np.eye(n_leaves))
    leaves_below = below.sum(axis=0)
    if start is None:
        theta0 = alpha - 1 + labelled.sum(axis=0)
        response = np.tile(theta0 / theta0.sum(), (n_leaves, 1))
    else:
        response = np.asarray(start, dtype=float)
    converged, iteration = False, 0
    while not converged and iteration < max_iter:
        iteration += 1
        expected = labelled + unlabelled[:, None] * response  # (K, C)
        alpha_tilde = alpha + expected.sum(axis=0)
        theta = (alpha_tilde - 1) / (alpha_tilde - 1).sum()
        beta_tilde = beta + expected.T @ below  # (C, nodes)
        branch = _branch_modes(parent, beta_tilde, leaves_below)
        psi = _leaf_probabilities(below, branch)  # (C, K)
        joint = psi.T * theta  # (K, C)
        updated = joint / joint.sum(axis=1, keepdims=True)
        converged = np.max(np.abs(updated - response)) <= tol
        response = updated
    return TreeFit(theta, psi, response, iteration, bool(converged))
