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

from bayeval._core.tree_newton import newton_fixed_point

__all__ = [
    "TreeFit",
    "dirichlet_tree_em",
    "dirichlet_tree_gibbs",
    "dirichlet_tree_predictive",
    "leaf_counts_to_nodes",
    "tree_prior",
]


def leaf_counts_to_nodes(parent: np.ndarray, leaves: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Sum per-leaf counts ``(..., K)`` up the tree: ``(..., n_nodes)``, node ``c`` = its leaves.

    One backward pass over the nodes (children have larger indices than their parents).
    """
    out = np.zeros(counts.shape[:-1] + (parent.size,))
    np.add.at(out, (..., leaves), counts)
    for node in range(parent.size - 1, 0, -1):
        out[..., parent[node]] += out[..., node]
    return out


def _paths(parent: np.ndarray, leaves: np.ndarray) -> np.ndarray:
    """Nodes from below the root down to each leaf, ``(K, depth)``, padded with ``n_nodes``."""
    depth = np.zeros(parent.size, dtype=np.intp)
    for node in range(1, parent.size):
        depth[node] = depth[parent[node]] + 1
    paths = np.full((leaves.size, max(int(depth[leaves].max()), 1)), parent.size, dtype=np.intp)
    node = leaves.copy()
    while (live := node > 0).any():
        paths[live, depth[node[live]] - 1] = node[live]
        node = np.where(live, parent[np.maximum(node, 0)], 0)
    return paths


class _EMStep:
    """One EM iteration (Eq. 12, Eq. 10-11) as a map on the unlabelled responses ``(K, C)``."""

    def __init__(self, parent, leaves, labelled, unlabelled, alpha, beta):
        self.paths = _paths(parent, leaves)
        self.flat = self.paths.ravel()
        self.children = parent[1:]
        self.n_nodes = parent.size
        self.shift = beta[:, 1:]  # M-step numerators beta + counts: each branch's mean
        self.labelled, self.unlabelled, self.alpha = labelled, unlabelled, alpha

    def __call__(self, response: np.ndarray) -> np.ndarray:
        expected = self.labelled + self.unlabelled[:, None] * response  # (K, C)
        alpha_tilde = self.alpha + expected.sum(axis=0)
        self.theta = (alpha_tilde - 1) / (alpha_tilde - 1).sum()
        self.theta_weight = np.sum(1 / (alpha_tilde - 1))  # for Newton's Jacobian
        self.node_weight = np.zeros(self.n_nodes - 1)
        self.parent_weight = np.zeros(self.n_nodes)
        n_classes = expected.shape[1]
        log_branch = np.zeros(self.n_nodes + 1)
        log_psi = np.empty((expected.shape[0], n_classes))
        log_prior = np.sum((self.alpha - 1) * np.log(self.theta))
        depth = self.paths.shape[1]
        for y in range(n_classes):
            counts = np.bincount(
                self.flat, weights=np.repeat(expected[:, y], depth), minlength=self.n_nodes + 1
            )
            shifted = self.shift[y] + counts[1 : self.n_nodes]  # Eq. 11 numerators
            totals = np.bincount(self.children, weights=shifted, minlength=self.n_nodes)
            log_branch[1 : self.n_nodes] = np.log(shifted) - np.log(totals[self.children])
            self.node_weight += 1 / shifted
            self.parent_weight += np.divide(1, totals, out=np.zeros_like(totals), where=totals > 0)
            log_psi[:, y] = log_branch[self.paths].sum(axis=1)  # Eq. 10
            log_prior += self.shift[y] @ log_branch[1 : self.n_nodes]
        self.psi = np.exp(log_psi.T)
        log_joint = log_psi + np.log(self.theta)
        top = log_joint.max(axis=1, keepdims=True)
        joint = np.exp(log_joint - top)
        marginal = joint.sum(axis=1, keepdims=True)
        # the log posterior at the M-step's (theta, psi), unlabelled labels summed out: EM never
        # decreases it, and Newton's method uses it as its merit function
        self.log_posterior = (
            log_prior
            + np.sum(self.labelled * log_joint)
            + self.unlabelled @ (top + np.log(marginal))[:, 0]
        )
        return joint / marginal  # Eq. 12-13


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
        Evaluations of the EM map.
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
    solver: str = "newton",
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
        ``(C, n_nodes)`` branch concentrations, all > 0.
    tol : float, default 1e-10
        Stop when no response probability changes by more than this.
    max_iter : int, default 1000
        Most evaluations of the EM map before the fit stops unconverged.
    start : numpy.ndarray, optional
        ``(K, C)`` initial responses (e.g. from classifier scores); default ``theta`` from
        ``alpha`` and the labelled counts alone.
    solver : {"newton", "squarem"}, default "newton"
        With two classes, Newton's method on the fixed-point equation (quadratic convergence,
        a few iterations whatever the number of unlabelled items; EM's own step wherever a
        Newton step would not raise the log posterior; see ``bayeval._core.tree_newton``).
        ``"squarem"``, and any number of classes other than two: SQUAREM-accelerated EM, whose
        iterations grow with the unlabelled items per label.

    Returns
    -------
    TreeFit

    Notes
    -----
    E-step (Eq. 12): ``E[count[k, y]] = labelled[k, y] + unlabelled[k] response[k, y]``. The
    posterior concentrations are ``alpha + sum_k E[count[k]]`` and, at each node, ``beta`` plus
    the expected counts of the leaves below it (a backward pass). M-step: ``theta`` is the
    Dirichlet mode, and each node's branch probabilities ``beta_tilde[c] / sum over
    siblings``; ``psi`` multiplies them along each root-to-leaf path (Eq. 10, a forward pass).
    The branch update is the mean of the branch's Dirichlet (its mode under ``beta + 1``), so
    the fixed point is the posterior mode of the model with branch concentrations
    ``beta + 1``: it exists for any ``beta > 0``, however sparse. Eq. 11 of [1]_ subtracts
    ``L_c`` (the leaves below ``c``), the mode in the leaf probabilities, which needs
    ``beta[y, c] > L_c`` and so a prior that pulls every class towards equal shares of the
    leaves (see ``tree_prior``). The response of an
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
    >>> beta = np.full((2, 3), 2.0)          # two pseudo-labels per branch
    >>> fit = dirichlet_tree_em(parent, leaves, labelled=[[0, 8], [9, 1]],
    ...                         unlabelled=[100, 100], alpha=[2.0, 2.0], beta=beta)
    >>> fit.response.round(3)                # P(y | leaf) for unlabelled items
    array([[0.163, 0.837],
           [0.782, 0.218]])
    """
    parent = np.asarray(parent, dtype=np.intp)
    leaves = np.asarray(leaves, dtype=np.intp)
    labelled = np.asarray(labelled, dtype=float)
    unlabelled = np.asarray(unlabelled, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    beta = np.asarray(beta, dtype=float)
    n_leaves, n_classes = labelled.shape
    if solver not in ("newton", "squarem"):
        raise ValueError(f"`solver` must be 'newton' or 'squarem'; got {solver!r}.")
    step = _EMStep(parent, leaves, labelled, unlabelled, alpha, beta)
    if start is None:
        theta0 = alpha - 1 + labelled.sum(axis=0)
        response = np.tile(theta0 / theta0.sum(), (n_leaves, 1))
    else:
        response = np.asarray(start, dtype=float)
    converged, iteration = False, 0
    if n_classes == 2 and solver == "newton":
        response, iteration, converged = newton_fixed_point(
            step, step.paths, unlabelled, response, tol=tol, max_iter=max_iter
        )
    while not converged and iteration < max_iter:
        # SQUAREM (Varadhan & Roland 2008): two EM steps, an extrapolation along them, and one
        # stabilising EM step; EM's linear rate is slow when unlabelled items dominate a leaf
        x1 = step(response)
        x2 = step(x1)
        iteration += 2
        r, v = x1 - response, x2 - 2 * x1 + response
        v_norm = np.linalg.norm(v)
        alpha_step = -np.linalg.norm(r) / v_norm if v_norm > 0 else -1.0
        alpha_step = min(alpha_step, -1.0)
        jump = response - 2 * alpha_step * r + alpha_step**2 * v
        if not ((jump > 0) & (jump < 1)).all():
            jump = x2  # the extrapolation left the simplex: keep the plain EM steps
        jump /= jump.sum(axis=1, keepdims=True)
        updated = step(jump)
        iteration += 1
        converged = np.max(np.abs(updated - jump)) <= tol
        response = updated
    theta, psi = step.theta, step.psi
    return TreeFit(theta, psi, response, iteration, bool(converged))


def tree_prior(parent, leaves, leaf_prior, *, strength: float, smoothing: float):
    """Concentrations ``alpha (C,)`` and ``beta (C, n_nodes)`` from a prior response per leaf.

    ``leaf_prior[k, y]`` (rows summing to 1, e.g. mean classifier scores) is worth ``strength``
    pseudo-labels per leaf: ``a[y, k] = strength * leaf_prior[k, y]``. Then
    ``alpha[y] = 1 + sum_k a[y, k]`` and, for every node ``c`` but the root,
    ``beta[y, c] = a[y, below c] + smoothing``: the pseudo-counts of the leaves below plus
    ``smoothing`` at each branch, which pulls siblings towards equal shares. The paper's
    ``depth(c)^2 + a[y, below c]`` is not used: with Eq. 11's mode it goes negative, and a
    concentration that grows with the leaves below (``L_c``, which keeps Eq. 11 positive) is a
    flat Dirichlet over all leaves, worth one pseudo-label per leaf and class: with 256 leaves
    and 100 positives it spreads much of the positives' posterior mass over the low-score
    leaves (see the model card).
    """
    parent = np.asarray(parent, dtype=np.intp)
    leaves = np.asarray(leaves, dtype=np.intp)
    pseudo = strength * np.asarray(leaf_prior, dtype=float)  # (K, C)
    below = leaf_counts_to_nodes(parent, leaves, np.eye(leaves.size))  # (K, n_nodes)
    alpha = 1.0 + pseudo.sum(axis=0)
    beta = pseudo.T @ below + smoothing
    beta[:, 0] = 0.0
    return alpha, beta


def dirichlet_tree_gibbs(
    parent,
    leaves,
    labelled,
    unlabelled,
    alpha,
    beta,
    start,
    n_sweeps: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw from the Dirichlet-tree posterior by data augmentation, aggregated by leaf.

    Each sweep imputes how many of each leaf's unlabelled items have each label
    (``Multinomial(unlabelled[k], response[k])``), then draws ``theta ~ Dirichlet(alpha +
    counts)`` and, at every internal node, the branch probabilities ``~ Dirichlet(beta +
    counts below each child)`` (the conditionals are conjugate once the labels are complete).
    The cost of a sweep is ``O(nodes x classes)``, whatever the pool size.

    Parameters
    ----------
    parent, leaves, labelled, unlabelled, alpha, beta
        As in :func:`dirichlet_tree_em`; ``beta[y, c] > 0`` for every non-root node.
    start : numpy.ndarray
        ``(K, C)`` response of the unlabelled items at which the chain starts.
    n_sweeps : int
        Number of sweeps, each kept as one draw.
    rng : numpy.random.Generator
        Generator of the imputed labels and the Dirichlet draws.

    Returns
    -------
    response : numpy.ndarray
        ``(n_sweeps, K, C)``: the posterior label distribution of an unlabelled item of each
        leaf, ``theta[y] psi[y, k]`` normalised over ``y``, after each sweep.
    theta : numpy.ndarray
        ``(n_sweeps, C)``.

    Notes
    -----
    With many unlabelled items per label the chain moves slowly (the imputed labels outweigh
    the observed ones); run several chains and check ``rhat`` and ``ess``.
    """
    parent = np.asarray(parent, dtype=np.intp)
    leaves = np.asarray(leaves, dtype=np.intp)
    labelled = np.asarray(labelled, dtype=float)
    unlabelled = np.asarray(unlabelled, dtype=np.int64)
    n_leaves, n_classes = labelled.shape
    paths = _paths(parent, leaves)  # (K, depth), padded with the sentinel node n_nodes
    flat = paths.ravel()
    children = parent[1:]
    n_nodes = parent.size
    response = np.asarray(start, dtype=float)
    responses = np.empty((n_sweeps, n_leaves, n_classes))
    thetas = np.empty((n_sweeps, n_classes))
    tiny = np.finfo(float).tiny
    log_branch = np.zeros(n_nodes + 1)  # the sentinel keeps log 1 = 0
    for sweep in range(n_sweeps):
        if n_classes == 2:
            positives = rng.binomial(unlabelled, response[:, 1])
            imputed = np.stack([unlabelled - positives, positives], axis=1)
        else:
            imputed = rng.multinomial(unlabelled, response)
        counts = labelled + imputed
        theta = rng.dirichlet(alpha + counts.sum(axis=0))
        log_psi = np.empty((n_leaves, n_classes))
        for y in range(n_classes):
            # counts below each node, then a Dirichlet draw at every internal node at once
            # (normalised gammas; a draw can underflow to 0 for tiny concentrations)
            node_counts = np.bincount(
                flat, weights=np.repeat(counts[:, y], paths.shape[1]), minlength=n_nodes + 1
            )
            gammas = np.maximum(rng.standard_gamma(beta[y, 1:] + node_counts[1:n_nodes]), tiny)
            totals = np.bincount(children, weights=gammas, minlength=n_nodes)
            log_branch[1:n_nodes] = np.log(gammas) - np.log(totals[children])
            log_psi[:, y] = log_branch[paths].sum(axis=1)
        joint = np.exp(log_psi - log_psi.max(axis=1, keepdims=True)) * theta  # (K, C)
        response = joint / joint.sum(axis=1, keepdims=True)
        responses[sweep], thetas[sweep] = response, theta
    return responses, thetas


def dirichlet_tree_predictive(parent, leaves, counts, alpha, beta) -> np.ndarray:
    """Posterior predictive label distribution of an item in each leaf (Eq. 14 of [1]_).

    With (weighted) observed counts, ``p(y | k) ∝ alpha~[y] prod_{c on the path to k}
    beta~[y, c] / sum_{siblings c'} beta~[y, c']``, where ``alpha~ = alpha + counts`` summed
    over the leaves and ``beta~[y, c] = beta[y, c] +`` the counts of label ``y`` below ``c``
    (Eq. 15). For a stochastic oracle the counts are importance weights (Appendix H), which
    corrects the bias of the adaptive sample.

    Parameters
    ----------
    parent, leaves, alpha, beta
        As in :func:`dirichlet_tree_em`; ``beta > 0``.
    counts : array_like of float
        ``(K, C)`` (weighted) labels of each class observed in each leaf.

    Returns
    -------
    numpy.ndarray
        ``(K, C)``, rows summing to 1.

    References
    ----------
    .. [1] N. G. Marchant and B. I. P. Rubinstein. Needle in a haystack: label-efficient
       evaluation under extreme class imbalance. KDD 2021. Appendix H.

    Examples
    --------
    >>> import numpy as np
    >>> parent, leaves = np.array([-1, 0, 0]), np.array([1, 2])
    >>> beta = np.ones((2, 3))
    >>> dirichlet_tree_predictive(parent, leaves, [[2.0, 0.0], [0.0, 2.0]], [1.0, 1.0], beta)
    array([[0.75, 0.25],
           [0.25, 0.75]])
    """
    parent = np.asarray(parent, dtype=np.intp)
    leaves = np.asarray(leaves, dtype=np.intp)
    counts = np.asarray(counts, dtype=float)
    beta_tilde = np.asarray(beta, dtype=float) + leaf_counts_to_nodes(parent, leaves, counts.T)
    children = parent[1:]
    totals = np.zeros_like(beta_tilde)
    for y in range(counts.shape[1]):
        totals[y] = np.bincount(children, weights=beta_tilde[y, 1:], minlength=parent.size)
    log_branch = np.zeros((counts.shape[1], parent.size + 1))  # the sentinel keeps log 1 = 0
    log_branch[:, 1 : parent.size] = np.log(beta_tilde[:, 1:]) - np.log(totals[:, children])
    paths = _paths(parent, leaves)
    log_p = log_branch[:, paths].sum(axis=2).T + np.log(np.asarray(alpha) + counts.sum(axis=0))
    p = np.exp(log_p - log_p.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)
