"""The Dirichlet-tree EM (Marchant & Rubinstein 2021, Appendix F) against brute force.

Oracles: (1) EM's fixed point maximises the log posterior of theta and the branch probabilities
with the unlabelled items' labels summed out, which scipy maximises directly over softmax
parameters of every node's branches (the Dirichlet-tree density is a product of independent
Dirichlet densities, one per internal node);
(2) with a flat tree the Dirichlet-tree is a Dirichlet and the M-step is the Dirichlet mean;
(3) per-leaf aggregation equals running the same EM item by item.
"""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from bayeval._core.dirichlet_tree import dirichlet_tree_em, leaf_counts_to_nodes

# a depth-2 binary tree, breadth-first: 0 -> (1, 2), 1 -> (3, 4), 2 -> (5, 6); leaves 3..6
PARENT = np.array([-1, 0, 0, 1, 1, 2, 2])
LEAVES = np.array([3, 4, 5, 6])


INTERNAL = (0, 1, 2)


def _branches(params):
    """Branch probabilities ``(C, n_nodes)`` from two softmax parameters per internal node."""
    b = np.ones((2, PARENT.size))
    for y in range(2):
        for i, node in enumerate(INTERNAL):
            b[y, np.flatnonzero(PARENT == node)] = softmax(params[y, 2 * i : 2 * i + 2])
    return b


def log_posterior(theta, b, labelled, unlabelled, alpha, beta):
    """Log posterior of theta and branch probabilities b, unlabelled labels summed out.

    The branches' concentrations are ``beta + 1``: EM's M-step takes each branch's mean under
    ``beta``, which is its mode under ``beta + 1``.
    """
    out = np.sum((alpha - 1) * np.log(theta)) + np.sum(beta[:, 1:] * np.log(b[:, 1:]))
    # psi[y, leaf]: the product of the branch probabilities on the path (Eq. 10)
    psi = np.exp(leaf_paths_log(np.log(b)))
    joint = np.log(theta)[:, None] + np.log(psi)  # (C, K)
    out += np.sum(labelled.T * joint)
    out += np.sum(unlabelled * logsumexp(joint, axis=0))
    return out, psi


def leaf_paths_log(log_b):
    out = np.zeros((2, LEAVES.size))
    for k, leaf in enumerate(LEAVES):
        node = leaf
        while node > 0:
            out[:, k] += log_b[:, node]
            node = PARENT[node]
    return out


@pytest.mark.parametrize("seed", range(6))
def test_em_maximises_the_marginal_posterior(seed):
    gen = np.random.default_rng(seed)
    labelled = gen.integers(0, 6, size=(4, 2)).astype(float)
    unlabelled = gen.integers(0, 40, size=4).astype(float)
    alpha = 1 + gen.uniform(0.5, 3, 2)
    beta = gen.uniform(1.5, 4, size=(2, PARENT.size))
    fit = dirichlet_tree_em(PARENT, LEAVES, labelled, unlabelled, alpha, beta, tol=1e-13)
    assert fit.converged

    def negative(params):
        theta = softmax(params[:2])
        b = _branches(params[2:].reshape(2, 6))
        return -log_posterior(theta, b, labelled, unlabelled, alpha, beta)[0]

    best = minimize(negative, np.zeros(14), method="BFGS", options={"gtol": 1e-10})
    theta = softmax(best.x[:2])
    psi = log_posterior(
        theta, _branches(best.x[2:].reshape(2, 6)), labelled, unlabelled, alpha, beta
    )[1]
    np.testing.assert_allclose(fit.theta, theta, atol=1e-5)
    np.testing.assert_allclose(fit.psi, psi, atol=1e-5)


def test_flat_tree_m_step_is_the_dirichlet_mean():
    parent, leaves = np.array([-1, 0, 0, 0]), np.array([1, 2, 3])
    labelled = np.array([[3.0, 1.0], [0.0, 5.0], [2.0, 2.0]])
    beta = np.array([[0, 2.0, 3.0, 1.5], [0, 1.2, 2.0, 4.0]])
    fit = dirichlet_tree_em(parent, leaves, labelled, np.zeros(3), [2.0, 3.0], beta)
    shifted = beta[:, 1:] + labelled.T
    np.testing.assert_allclose(fit.psi, shifted / shifted.sum(axis=1, keepdims=True), rtol=1e-12)
    # theta: (alpha - 1 + counts) / total = ([1, 2] + [5, 8]) / 16
    np.testing.assert_allclose(fit.theta, [6 / 16, 10 / 16], rtol=1e-12)


def test_aggregation_by_leaf_equals_item_by_item_em():
    gen = np.random.default_rng(3)
    leaf_of_item = gen.integers(0, 4, size=300)
    observed = gen.random(300) < 0.2
    label = (gen.random(300) < np.array([0.05, 0.2, 0.6, 0.9])[leaf_of_item]).astype(int)
    alpha, beta = np.array([2.0, 2.0]), 1 + leaf_counts_to_nodes(PARENT, LEAVES, np.ones(4))
    beta = np.tile(beta, (2, 1))
    labelled = np.zeros((4, 2))
    np.add.at(labelled, (leaf_of_item[observed], label[observed]), 1)
    unlabelled = np.bincount(leaf_of_item[~observed], minlength=4).astype(float)
    fit = dirichlet_tree_em(PARENT, LEAVES, labelled, unlabelled, alpha, beta, tol=1e-12)
    # item by item: every unlabelled item carries its own response, updated from the same psi
    response = np.tile(fit.response[0] * 0 + 0.5, (300, 1))
    for _ in range(2000):  # plain EM, item by item, run far past convergence
        expected = np.zeros((4, 2))
        np.add.at(expected, leaf_of_item[observed], np.eye(2)[label[observed]])
        np.add.at(expected, leaf_of_item[~observed], response[~observed])
        item_fit = dirichlet_tree_em(PARENT, LEAVES, expected, np.zeros(4), alpha, beta,
                                     max_iter=1)  # fmt: skip
        joint = item_fit.psi.T[leaf_of_item] * item_fit.theta
        response = joint / joint.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(response[~observed], fit.response[leaf_of_item[~observed]],
                               atol=1e-8)  # fmt: skip


def test_counts_sum_up_the_tree():
    counts = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(
        leaf_counts_to_nodes(PARENT, LEAVES, counts), [10, 3, 7, 1, 2, 3, 4]
    )
