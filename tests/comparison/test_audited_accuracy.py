"""audited_accuracy: each system's own accuracy from labels chosen in any way plus an audit of
the disagreements and of the agreements left.

The kernel's draws against SciPy's beta-binomial, the agreements' count shared by every system,
exactness once every item is labelled, coverage after a choice of labels biased on purpose (on
the pools that break every model of the labels), ModelSelection's audit of agreements, and bad
input.
"""

import numpy as np
import pytest
from scipy import stats

import bayeval as be
from bayeval._core import audit as kernel
from bayeval.comparison import audited_accuracy
from tests.comparison.test_audited_differences import breaking_pool
from tests.comparison.test_model_selection import shared_error_pool


def test_each_stratum_left_is_beta_binomial_and_the_agreements_are_shared():
    """Two systems right on 9 and 4 of 12 audited disagreements (30 left), all right on 18 of
    20 audited agreements (50 left). A system's items right among those left are the sum of
    BetaBinomial(30, 1/2 + right, 1/2 + wrong) and BetaBinomial(50, 18.5, 2.5); 200,000 draws
    put the mean within 4 standard errors and the variance within 2% (the ratio's standard
    error is about 0.3%). The agreements' count is the same draw for both systems, so it
    cancels from their difference, whose variance is the disagreements' alone."""
    disagreements = np.zeros((12, 2), dtype=int)
    disagreements[:9, 0] = 1
    disagreements[:4, 1] = 1
    agreements = np.r_[np.ones(18), np.zeros(2)]
    known = np.array([100, 90])
    n_items = 1_000
    draws = kernel.level_draws(
        known, (disagreements, 30), (agreements, 50), n_items,
        prior=0.5, draws=200_000, rng=np.random.default_rng(2),
    )  # fmt: skip
    left = draws * n_items - known
    shared = stats.betabinom(50, 18.5, 2.5)
    for k, right in enumerate((9, 4)):
        own = stats.betabinom(30, 0.5 + right, 0.5 + 12 - right)
        mean, var = own.mean() + shared.mean(), own.var() + shared.var()
        assert abs(left[:, k].mean() - mean) < 4 * np.sqrt(var / draws.shape[0])
        assert abs(left[:, k].var() / var - 1) < 0.02
    own_vars = [stats.betabinom(30, 0.5 + r, 12.5 - r).var() for r in (9, 4)]
    assert abs((left[:, 0] - left[:, 1]).var() / sum(own_vars) - 1) < 0.02


def test_every_item_labelled_gives_the_exact_accuracies():
    pool, truth = shared_error_pool(0, n=200)
    result = audited_accuracy(pool, np.arange(150), truth[:150], np.arange(150, 200),
                              truth[150:], rng=0)  # fmt: skip
    exact = (pool.predictions == truth[:, None]).mean(axis=0)
    draws = result.posterior["posterior"]["accuracy"].values
    assert np.allclose(draws, exact[None, None], atol=1e-12)
    assert result.interval().dims == ("system", "ci_bound")


def _stratified_audit(predictions, chosen, rng, disagreements, agreements):
    agree = predictions.min(axis=1) == predictions.max(axis=1)
    rest = np.setdiff1d(np.arange(predictions.shape[0]), chosen)
    return np.r_[
        rng.choice(rest[~agree[rest]], disagreements, replace=False),
        rng.choice(rest[agree[rest]], agreements, replace=False),
    ]


@pytest.mark.parametrize("kind", ["shared errors", "imbalanced", "classes"])
def test_the_audit_covers_each_accuracy_after_a_biased_choice(kind):
    """300 pools of 600 items and 8 systems (about 30% of the items agreements); 60 labels
    where the two best disagree, the best right on as many as possible, then 40 audited
    disagreements and 40 audited agreements. Each run's share of the 8 systems covered is one
    unit (the systems share the audit); the mean must be at least 0.95 less 3 standard errors
    of those runs, and the chosen labels alone (the best system's share right on them) must
    miss, or the pool did not break anything. Recorded 2026-11-29: 0.956, 0.938 and 0.954
    (standard errors 0.005-0.007); with 20 and 20, 0.944, 0.941 and 0.953."""
    rng = np.random.default_rng(11)
    covered, naive = [], []
    for seed in range(300):
        predictions, truth, classes = breaking_pool(kind, rng)
        right = predictions == truth[:, None]
        first, second = np.argsort(-right.mean(axis=0))[:2]
        split = np.flatnonzero(predictions[:, first] != predictions[:, second])
        chosen = split[np.argsort(~right[split, first], kind="stable")][:60]
        audit = _stratified_audit(predictions, chosen, rng, 40, 40)
        if classes > 2:
            pool = be.Pool(np.ones(predictions.shape), predictions, classes=list("abcd"))
        else:
            pool = be.Pool(predictions.astype(float))
        result = audited_accuracy(pool, chosen, truth[chosen], audit, truth[audit], rng=seed)
        lower, upper = result.interval(0.95).values.T
        accuracy = right.mean(axis=0)
        covered.append(((lower - 1e-9 <= accuracy) & (accuracy <= upper + 1e-9)).mean())
        naive.append(abs(right[chosen, first].mean() - accuracy[first]) <= 0.05)
    covered = np.array(covered)
    assert covered.mean() >= 0.95 - 3 * covered.std(ddof=1) / np.sqrt(covered.size)
    assert np.mean(naive) < 0.5


def test_model_selection_audits_agreements_for_the_levels():
    pool, truth = shared_error_pool(2)
    sampler = be.sampling.ModelSelection(pool, rng=0)
    sampler.run(truth, budget=60)
    agree = pool.predictions.min(axis=1) == pool.predictions.max(axis=1)
    with pytest.raises(ValueError, match=r"`agreements` must be at most"):
        sampler.ask_audit(5, agreements=int(agree.sum()) + 1)
    with pytest.raises(ValueError, match=r"`n` and `agreements` must not both be 0"):
        sampler.ask_audit(0)
    ids = sampler.ask_audit(20, agreements=25)
    positions = pool.positions(ids)
    assert (~agree[positions[:20]]).all() and agree[positions[20:]].all()
    sampler.tell(ids, truth[positions])
    levels = sampler.audited_accuracy()
    chosen = pool.positions(sampler.labelled()[0][:-45])
    direct = audited_accuracy(pool, chosen, truth[chosen], positions, truth[positions], rng=0)
    # the same posterior: the medians agree to Monte Carlo error (1,000 draws each)
    assert np.allclose(levels.estimate, direct.estimate, atol=0.01)
    # the differences read the same audit, agreements and all (they cannot move a difference)
    assert sampler.audited_differences().estimate.shape == (5, 5)


def test_an_audit_without_agreements_says_what_levels_need():
    pool, truth = shared_error_pool(2)
    sampler = be.sampling.ModelSelection(pool, rng=0)
    sampler.run(truth, budget=60)
    ids = sampler.ask_audit(20)
    sampler.tell(ids, truth[pool.positions(ids)])
    with pytest.raises(ValueError, match=r"agreements \(items on which they all agree\) are left"):
        sampler.audited_accuracy()
