"""Stratified sampling (allocation rules, estimator) and OASIS (proposal), against brute force."""

from types import SimpleNamespace

import numpy as np
import pytest

import bayeval as be
from bayeval.sampling import OASIS, Stratified

F1 = be.measures.FScore()


def _pool(n=600, seed=0):
    gen = np.random.default_rng(seed)
    truth = gen.random(n) < 0.15
    scores = np.where(truth, gen.beta(4, 2, n), gen.beta(1, 5, n))
    return be.Pool(scores), truth


def _label_all(sampler, truth, batch):
    while sampler._available() > 0:
        ids = sampler.ask(min(batch, sampler._available()))
        sampler.tell(ids, truth[ids])


def _per_stratum(sampler):
    return np.bincount(
        sampler.strata.ids[sampler._labelled_positions()], minlength=sampler.strata.n_strata
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("allocation", ["proportional", "neyman"])
def test_allocation_tracks_its_target_within_one_item(seed, allocation):
    pool, truth = _pool(seed=seed)
    sampler = Stratified(pool, F1, allocation=allocation, n_strata=6, rng=seed)
    sizes = sampler.strata.sizes
    for batch in (7, 13, 30, 50):
        ids = sampler.ask(batch)
        sampler.tell(ids, truth[ids])
        taken = _per_stratum(sampler)
        total = taken.sum()
        minimum = np.minimum(2, sizes)
        wanted = np.minimum(np.maximum(sampler.shares * total, minimum), sizes)
        # largest-shortfall rounding never puts a stratum a whole item above its target,
        # and falls short only by what the minimum of two takes from the others
        assert (taken - wanted < 1).all(), (taken, wanted)
        assert (wanted - taken < 1 + wanted.sum() - total).all(), (taken, wanted)
        if total >= minimum.sum():
            assert (taken >= minimum).all()
        assert taken.sum() == total


def test_proportional_shares_are_the_stratum_sizes():
    pool, _ = _pool()
    sampler = Stratified(pool, F1, n_strata=5, rng=0)
    np.testing.assert_allclose(sampler.shares, sampler.strata.sizes / pool.size)


def test_neyman_shares_against_item_by_item_standard_deviations():
    # brute force: each item's linearised loss J loss(x, y) with y ~ Bernoulli(its cell's mean
    # score), its standard deviation over the items and labels of a stratum, times N_h
    pool, _ = _pool(n=300)
    sampler = Stratified(pool, F1, allocation="neyman", n_strata=5, rng=0)
    cells, strata = sampler.cells, sampler.strata
    pred = pool.predictions
    prior = np.bincount(cells.cell_of, weights=pool.scores, minlength=cells.n_cells)
    prior = prior / np.maximum(cells.sizes, 1)
    p1 = prior[cells.cell_of]  # each item's cell-mean score
    loss0 = F1.loss(np.zeros(pool.size, int), predictions=pred)
    loss1 = F1.loss(np.ones(pool.size, int), predictions=pred)
    R0 = ((1 - p1)[:, None] * loss0 + p1[:, None] * loss1).mean(axis=0)
    J = F1.jacobian(R0)[0]
    u0, u1 = loss0 @ J, loss1 @ J
    sd = np.empty(strata.n_strata)
    for h in range(strata.n_strata):
        i = strata.ids == h
        first = np.mean((1 - p1[i]) * u0[i] + p1[i] * u1[i])
        second = np.mean((1 - p1[i]) * u0[i] ** 2 + p1[i] * u1[i] ** 2)
        sd[h] = np.sqrt(second - first**2)
    expected = strata.sizes * sd / (strata.sizes * sd).sum()
    np.testing.assert_allclose(sampler.shares, expected, rtol=1e-10)


def test_sampling_is_without_replacement_until_the_pool_is_spent():
    pool, truth = _pool(n=200)
    sampler = Stratified(pool, F1, allocation="neyman", n_strata=4, rng=3)
    asked = []
    while sampler._available() > 0:
        ids = sampler.ask(min(37, sampler._available()))
        asked.extend(ids.tolist())
        sampler.tell(ids, truth[ids])
    assert sorted(asked) == list(range(200))
    with pytest.raises(ValueError, match="`n` must be at most 0"):
        sampler.ask(1)
    # every item labelled: the estimate is the truth, with no sampling variance left (fpc)
    est = sampler.estimate()
    np.testing.assert_allclose(est.value, F1.value(truth, predictions=pool.predictions))
    np.testing.assert_allclose(est.covariance, 0.0, atol=1e-15)


def test_stratified_estimator_and_variance_by_hand():
    pool, truth = _pool(n=500, seed=4)
    acc = be.measures.Accuracy()
    sampler = Stratified(pool, acc, n_strata=3, rng=0)
    for _ in range(3):
        ids = sampler.ask(20)
        sampler.tell(ids, truth[ids])
    pos = sampler._labelled_positions()
    correct = (pool.predictions[pos] == truth[pos]).astype(float)
    h = sampler.strata.ids[pos]
    N, M = sampler.strata.sizes, pool.size
    mean = np.array([correct[h == k].mean() for k in range(3)])
    n = np.array([(h == k).sum() for k in range(3)])
    s2 = np.array([correct[h == k].var(ddof=1) for k in range(3)])
    value = (N / M) @ mean  # Cochran (1977) Eq. 5.1
    var = np.sum((N / M) ** 2 * (1 - n / N) * s2 / n)  # Eq. 5.7 with the fpc
    est = sampler.estimate()
    np.testing.assert_allclose(est.value, [value], rtol=1e-12)
    np.testing.assert_allclose(est.covariance, [[var]], rtol=1e-10)
    assert est.df == 60 - 3


def test_strata_short_of_two_labels_are_collapsed_with_their_neighbours():
    five_of_five = SimpleNamespace(strata=SimpleNamespace(sizes=np.full(5, 5)))
    groups = Stratified._groups(five_of_five, np.array([0, 1, 3, 0, 2]))
    np.testing.assert_array_equal(groups, [0, 0, 0, 1, 1])
    # an open tail joins the group before it; a fully labelled stratum stands alone
    groups = Stratified._groups(five_of_five, np.array([2, 5, 1, 0, 0]))
    np.testing.assert_array_equal(groups, [0, 1, 1, 1, 1])


def test_one_label_in_an_unexhausted_group_leaves_the_variance_undefined():
    pool, truth = _pool()
    sampler = Stratified(pool, be.measures.Accuracy(), n_strata=1, rng=0)
    ids = sampler.ask(1)
    sampler.tell(ids, truth[ids])
    est = sampler.estimate()
    assert np.isfinite(est.value).all() and np.isnan(est.covariance).all()


def test_stratified_handles_continuous_losses_with_proportional_allocation_only():
    pool, truth = _pool()
    brier = be.measures.BrierScore()
    sampler = Stratified(pool, brier, n_strata=4, rng=0)
    _label_all(sampler, truth, 100)
    np.testing.assert_allclose(sampler.estimate().value, brier.value(truth, scores=pool.scores))
    with pytest.raises(ValueError, match="allocation='neyman' needs a measure"):
        Stratified(pool, brier, allocation="neyman")


def test_oasis_proposal_against_item_by_item_formula():
    pool, truth = _pool(n=400, seed=5)
    eps = 0.05
    sampler = OASIS(pool, F1, n_strata=6, prior_strength=3.0, epsilon=eps, rng=0)
    for _ in range(3):
        ids = sampler.ask(25)
        sampler.tell(ids, truth[ids])
    M, pred, strata = pool.size, pool.predictions, sampler.strata.ids
    labelled = np.zeros(M, bool)
    labelled[sampler._labelled_positions()] = True
    pi = np.empty(sampler.strata.n_strata)
    for k in range(pi.size):
        mean_score = pool.scores[strata == k].mean()
        pos = (labelled & truth & (strata == k)).sum()
        n = (labelled & (strata == k)).sum()
        pi[k] = (3.0 * mean_score + pos) / (3.0 + n)  # Beta posterior mean
    p1 = pi[strata]
    loss0 = F1.loss(np.zeros(M, int), predictions=pred)
    loss1 = F1.loss(np.ones(M, int), predictions=pred)
    observed = np.where(truth[:, None], loss1, loss0)
    expected = (1 - p1)[:, None] * loss0 + p1[:, None] * loss1
    R = np.where(labelled[:, None], observed, expected).mean(axis=0)
    J = F1.jacobian(R)[0]
    optimal = np.sqrt((1 - p1) * (loss0 @ J) ** 2 + p1 * (loss1 @ J) ** 2)
    q = eps / M + (1 - eps) * optimal / optimal.sum()
    np.testing.assert_allclose(sampler._item_q[sampler.cells.cell_of], q, rtol=1e-10)
    np.testing.assert_allclose(sampler.stratum_response, pi, rtol=1e-12)


def test_new_samplers_run_through_evaluate():
    pool, truth = _pool()
    for name in ("oasis", "stratified"):
        run = be.evaluate(pool, F1, truth, budget=100, sampler=name, batch_size=25, rng=0)
        assert run.estimate.method == name and run.estimate.labels_used == 100
        assert run.history.sizes["labels"] == 4


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda p: Stratified(p, F1, allocation="optimal"), "`allocation` must be one of"),
        (lambda p: Stratified(p, F1, min_per_stratum=0), "`min_per_stratum` must be an integer"),
        (lambda p: Stratified(p, F1, n_strata=2.5), "`n_strata` must be an integer"),
        (lambda p: OASIS(p, F1, epsilon=0), "`epsilon` must be in the open interval"),
        (lambda p: OASIS(p, F1, prior_strength=-1), "`prior_strength` must be a number >= 0"),
        (lambda p: OASIS(p, F1, prior_strength="2"), "`prior_strength` must be a number >= 0"),
        (lambda p: OASIS(p, be.measures.BrierScore()), "OASIS needs a measure whose loss"),
    ],
)
def test_option_errors_name_the_parameter(make, match):
    pool, _ = _pool(n=100)
    with pytest.raises(ValueError, match=match):
        make(pool)
