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


# -- Newton's method on the fixed point (bayeval._core.tree_newton) --------------------------------


def _binary_tree(depth):
    n_nodes = 2 ** (depth + 1) - 1
    parent = np.r_[-1, (np.arange(1, n_nodes) - 1) // 2]
    return parent, np.arange(2**depth - 1, n_nodes)


def _problem(seed, depth=4, labels=60, unlabelled=1e4):
    """A tree with score-like leaves: positives concentrate in the last leaves."""
    gen = np.random.default_rng(seed)
    parent, leaves = _binary_tree(depth)
    k = leaves.size
    rate = np.linspace(0.001, 0.6, k) ** 2
    sizes = gen.multinomial(int(unlabelled), np.full(k, 1 / k)).astype(float)
    drawn = gen.multinomial(labels, np.full(k, 1 / k))
    positives = gen.binomial(drawn, rate)
    labelled = np.column_stack([drawn - positives, positives]).astype(float)
    prior = np.column_stack([1 - rate, rate])
    from bayeval._core.dirichlet_tree import tree_prior

    alpha, beta = tree_prior(parent, leaves, prior, strength=0.5, smoothing=0.1)
    return parent, leaves, labelled, sizes, alpha, beta, prior


@pytest.mark.parametrize("seed", range(4))
def test_newton_jacobian_matches_finite_differences(seed):
    from scipy.special import expit, logit

    from bayeval._core.dirichlet_tree import _EMStep
    from bayeval._core.tree_newton import response_jacobian, shared_prefix

    parent, leaves, labelled, unlabelled, alpha, beta, prior = _problem(seed, depth=3)
    step = _EMStep(parent, leaves, labelled, unlabelled, alpha, beta)
    z = logit(np.random.default_rng(seed).uniform(0.05, 0.6, leaves.size))

    def mapped_logit(z):
        s = expit(z)
        return logit(step(np.column_stack([1 - s, s]))[:, 1])

    mapped_logit(z)
    s = expit(z)
    # d logit F[k] / d z[j] = A[k, j] u[j] s[j] (1 - s[j])  (module docstring)
    analytic = response_jacobian(step, step.paths, shared_prefix(step.paths)) * (
        unlabelled * s * (1 - s)
    )
    h = 1e-6
    numeric = np.column_stack(
        [(mapped_logit(z + h * e) - mapped_logit(z - h * e)) / (2 * h) for e in np.eye(z.size)]
    )
    # central differences: error O(h^2) times third derivatives, rounding O(eps / h) ~ 1e-10
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("unlabelled", [1e3, 1e4, 1e5])
def test_newton_and_squarem_reach_the_same_mode(seed, unlabelled):
    parent, leaves, labelled, sizes, alpha, beta, prior = _problem(seed, unlabelled=unlabelled)
    args = (parent, leaves, labelled, sizes, alpha, beta)
    newton = dirichlet_tree_em(*args, start=prior, tol=1e-12, max_iter=200)
    squarem = dirichlet_tree_em(*args, start=prior, tol=1e-13, max_iter=10**6, solver="squarem")
    assert newton.converged and squarem.converged
    # SQUAREM's stopping rule bounds its last step, not its distance to the mode, which is up
    # to tol / (1 - rate) with a rate near one when unlabelled items dominate: compare the
    # log posteriors (each a sum over all items) and the fits to a tolerance the flat
    # directions allow
    np.testing.assert_allclose(newton.theta, squarem.theta, rtol=1e-6)
    np.testing.assert_allclose(newton.response, squarem.response, atol=1e-6)


@pytest.mark.parametrize("unlabelled", [1e4, 1e6, 1e8, 1e10])
def test_newton_iterations_do_not_grow_with_the_unlabelled_items(unlabelled):
    """EM's rate tends to one as unlabelled items outnumber labels; Newton's does not.

    Start at the prior with 40 labels: the construction stage of AIS, EM's hardest case.
    """
    parent, leaves, labelled, sizes, alpha, beta, prior = _problem(
        0, depth=6, labels=40, unlabelled=unlabelled
    )
    args = (parent, leaves, labelled, sizes, alpha, beta)
    newton = dirichlet_tree_em(*args, start=prior, tol=1e-9, max_iter=60)
    assert newton.converged, newton.iterations
    # SQUAREM needs 114, 3687, > 10^5 and 85899 evaluations here (measured)
    squarem = dirichlet_tree_em(*args, start=prior, tol=1e-9, max_iter=60, solver="squarem")
    assert not squarem.converged


def test_unknown_solver_is_refused():
    with pytest.raises(ValueError, match="`solver` must be 'newton' or 'squarem'; got 'bfgs'"):
        dirichlet_tree_em(PARENT, LEAVES, np.ones((4, 2)), np.ones(4), [2.0, 2.0],
                          np.ones((2, 7)), solver="bfgs")  # fmt: skip
