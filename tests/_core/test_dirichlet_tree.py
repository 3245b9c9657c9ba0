"""The Dirichlet-tree EM (Marchant & Rubinstein 2021, Appendix F) against brute force.

Oracles: (1) EM's fixed point maximises the log posterior of (theta, psi) with the unlabelled
items' labels summed out, which scipy maximises directly over softmax parameters using Minka's
(1999) Dirichlet-tree density in leaf probabilities (the density whose mode is Eq. 10-11);
(2) with a flat tree the Dirichlet-tree is a Dirichlet and the M-step is the Dirichlet mode;
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


def log_posterior(theta, psi, labelled, unlabelled, alpha, beta):
    """Log posterior of (theta, psi) given the observed labels, unlabelled labels summed out."""
    below = leaf_counts_to_nodes(PARENT, LEAVES, np.ones(LEAVES.size))
    out = np.sum((alpha - 1) * np.log(theta))
    for y in range(theta.size):
        # Minka (1999): prod_k psi_k^(beta_k - 1) prod_inner (sum of psi below)^gamma, with
        # gamma_nu = beta_nu - sum_children beta_c (the root's factor is 1)
        out += np.sum((beta[y, LEAVES] - 1) * np.log(psi[y]))
        mass = leaf_counts_to_nodes(PARENT, LEAVES, psi[y])
        for node in (1, 2):
            children = np.flatnonzero(PARENT == node)
            out += (beta[y, node] - beta[y, children].sum()) * np.log(mass[node])
    del below
    joint = np.log(theta)[:, None] + np.log(psi)  # (C, K)
    out += np.sum(labelled.T * joint)
    out += np.sum(unlabelled * logsumexp(joint, axis=0))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_em_maximises_the_marginal_posterior(seed):
    gen = np.random.default_rng(seed)
    labelled = gen.integers(0, 6, size=(4, 2)).astype(float)
    unlabelled = gen.integers(0, 40, size=4).astype(float)
    alpha = 1 + gen.uniform(0.5, 3, 2)
    below = leaf_counts_to_nodes(PARENT, LEAVES, np.ones(4))
    beta = below + gen.uniform(0.5, 3, size=(2, PARENT.size))
    fit = dirichlet_tree_em(PARENT, LEAVES, labelled, unlabelled, alpha, beta, tol=1e-13)
    assert fit.converged

    def negative(params):
        theta = softmax(params[:2])
        psi = softmax(params[2:].reshape(2, 4), axis=1)
        return -log_posterior(theta, psi, labelled, unlabelled, alpha, beta)

    start = np.concatenate([np.log(fit.theta), np.log(fit.psi).ravel()])
    best = minimize(negative, start, method="BFGS", options={"gtol": 1e-10})
    # EM's point is a stationary point: local optimisation from it gains nothing
    assert negative(start) <= best.fun + 1e-7
    theta, psi = softmax(best.x[:2]), softmax(best.x[2:].reshape(2, 4), axis=1)
    np.testing.assert_allclose(fit.theta, theta, atol=1e-5)
    np.testing.assert_allclose(fit.psi, psi, atol=1e-5)


def test_flat_tree_m_step_is_the_dirichlet_mode():
    parent, leaves = np.array([-1, 0, 0, 0]), np.array([1, 2, 3])
    labelled = np.array([[3.0, 1.0], [0.0, 5.0], [2.0, 2.0]])
    beta = np.array([[0, 2.0, 3.0, 1.5], [0, 1.2, 2.0, 4.0]])
    fit = dirichlet_tree_em(parent, leaves, labelled, np.zeros(3), [2.0, 3.0], beta)
    shifted = beta[:, 1:] - 1 + labelled.T
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
