"""AIS for a stochastic oracle (Appendix H): the predictive, the weighted counts, the protocol."""

import numpy as np
import pytest

import bayeval as be
from bayeval._core.dirichlet_tree import dirichlet_tree_predictive
from bayeval.models import DirichletTree
from bayeval.sampling import StochasticAIS

M = 400
GEN = np.random.default_rng(7)
SCORES = GEN.beta(1, 4, M)
P_POSITIVE = np.clip(1.3 * SCORES**1.5, 0, 1)  # the oracle's P(y = 1 | x), not the score
F1 = be.measures.FScore()
PRED = SCORES >= 0.5
# R = E_x E_y[loss]: the loss is linear in y, so the expected loss is the loss at P(y = 1 | x)
R_TRUE = ((1 - P_POSITIVE)[:, None] * F1.loss(np.zeros(M, int), predictions=PRED)).mean(axis=0) + (
    P_POSITIVE[:, None] * F1.loss(np.ones(M, int), predictions=PRED)
).mean(axis=0)


def _oracle(rng):
    return lambda ids: rng.random(len(ids)) < P_POSITIVE[ids]


def test_predictive_against_the_path_product_by_hand():
    # depth-2 binary tree: 0 -> (1, 2), 1 -> (3, 4), 2 -> (5, 6); leaves 3..6
    parent, leaves = np.array([-1, 0, 0, 1, 1, 2, 2]), np.array([3, 4, 5, 6])
    gen = np.random.default_rng(0)
    counts = gen.uniform(0, 5, size=(4, 2))
    alpha, beta = gen.uniform(0.5, 2, 2), gen.uniform(0.5, 2, size=(2, 7))
    below = {1: [0, 1], 2: [2, 3], 3: [0], 4: [1], 5: [2], 6: [3]}  # leaves below each node
    sibling = {1: 2, 2: 1, 3: 4, 4: 3, 5: 6, 6: 5}
    path = {0: [1, 3], 1: [1, 4], 2: [2, 5], 3: [2, 6]}
    expected = np.empty((4, 2))
    for k in range(4):
        for y in range(2):
            value = alpha[y] + counts[:, y].sum()
            for c in path[k]:
                b = beta[y, c] + counts[below[c], y].sum()
                b_sib = beta[y, sibling[c]] + counts[below[sibling[c]], y].sum()
                value *= b / (b + b_sib)
            expected[k, y] = value
    expected /= expected.sum(axis=1, keepdims=True)
    got = dirichlet_tree_predictive(parent, leaves, counts, alpha, beta)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_every_draw_is_a_question_and_labels_are_counted_per_draw():
    sampler = StochasticAIS(be.Pool(SCORES), F1, model=DirichletTree(depth=2), rng=0)
    rng = np.random.default_rng(1)
    ids = sampler.ask(300)  # 300 draws from 400 items: some repeat
    assert ids.size == 300 and np.unique(ids).size < 300
    assert sorted(sampler.pending.tolist()) == sorted(ids.tolist())
    sampler.tell(ids[:10], _oracle(rng)(ids[:10]))
    with pytest.raises(ValueError, match="needs a complete stage"):
        sampler.estimate()
    repeated = next(i for i in ids if (ids == i).sum() > 1)
    with pytest.raises(ValueError, match=r"told \d+ time\(s\) but has \d+ draw\(s\) waiting"):
        sampler.tell(np.full(400, repeated), np.zeros(400))
    rest = ids[10:]
    sampler.tell(rest[::-1], _oracle(rng)(rest[::-1]))  # any order
    assert sampler.labels_used == 300 and sampler.stage == 1
    ids_told, labels = sampler.labelled()  # each item once, with its latest label
    assert sorted(ids_told.tolist()) == sorted(set(ids.tolist()))
    assert set(labels.tolist()) <= {0, 1}
    est = sampler.estimate()
    assert est.labels_used == est.n_samples == 300
    assert sampler.epsilon == pytest.approx(sampler.epsilon0 / 2)  # eps_t = eps0 / (t + 1)


def test_weighted_counts_are_the_importance_weights_of_the_labels():
    sampler = StochasticAIS(be.Pool(SCORES), F1, model=DirichletTree(depth=2), rng=3)
    rng = np.random.default_rng(4)
    for _ in range(3):
        ids = sampler.ask(40)
        sampler.tell(ids, _oracle(rng)(ids))
    pos, q = sampler._draws()
    y = sampler._draw_labels(pos)
    expected = np.zeros((4, 2))
    np.add.at(expected, (sampler.strata.ids[pos], y), 1 / (M * q))  # Eq. 15, w = p / q
    np.testing.assert_allclose(sampler._weighted, expected, rtol=1e-12)


def test_mean_loss_estimate_is_unbiased_and_its_variance_honest():
    # 300 seeded runs of 4 stages x 25 labels: E[R_hat] = R within 4 SE; the reported variance
    # of G against the empirical one within 35% (relative MC error of the latter ~ 8%)
    pool, R, G = be.Pool(SCORES), [], []
    variances = []
    for r in range(300):
        sampler = StochasticAIS(pool, F1, model=DirichletTree(depth=3), rng=r)
        oracle = _oracle(np.random.default_rng(10_000 + r))
        for _ in range(4):
            ids = sampler.ask(25)
            sampler.tell(ids, oracle(ids))
        est = sampler.estimate()
        R.append(est.R)
        G.append(est.value[0])
        variances.append(est.covariance[0, 0])
    R = np.array(R)
    se = R.std(axis=0, ddof=1) / np.sqrt(len(R))
    assert np.all(np.abs(R.mean(axis=0) - R_TRUE) < 4 * se), (R.mean(axis=0), R_TRUE, se)
    assert 0.65 < np.mean(variances) / np.var(G, ddof=1) < 1.35


def test_runs_through_evaluate_and_refuses_what_does_not_apply():
    rng = np.random.default_rng(5)
    run = be.evaluate(
        be.Pool(SCORES), F1, _oracle(rng), budget=100, sampler="stochastic_ais", rng=0
    )
    assert run.estimate.labels_used == 100 and run.history.sizes["labels"] == 2
    with pytest.raises(ValueError, match=r"\['response'\] do not apply to StochasticAIS"):
        StochasticAIS(be.Pool(SCORES), F1, response="mode")
    with pytest.raises(ValueError, match="kl_to_optimal"):
        run.sampler.kl_to_optimal(PRED)
    with pytest.raises(ValueError, match="`model` 'dirichlet_tree' does not apply"):
        run.sampler.estimate(model="dirichlet_tree")
