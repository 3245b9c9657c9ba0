"""audited_levels: each system's own measure from labels chosen in any way plus an audit of
the disagreements and of the agreements left.

The kernel's draws against SciPy's beta-binomial, the agreements' counts shared by every system,
exactness once every item is labelled, coverage of accuracy, F1 and macro-F1 after a choice of
labels biased on purpose (on the pools that break every model of the labels),
ModelSelection's audit of agreements, and bad input.
"""

import numpy as np
import pytest
from scipy import stats

import bayeval as be
from bayeval._core import audit as kernel
from bayeval.comparison import audited_levels
from tests.comparison.test_audited_differences import biased_choice, breaking_pool
from tests.comparison.test_model_selection import shared_error_pool


def test_each_part_left_is_beta_binomial_and_the_agreements_are_shared():
    """Two systems; among the audited disagreements, the first predicts 1 on 8 items (6 of them
    positive), the second on 5 (1 positive); the disagreements left: the first predicts 1 on 30
    and 0 on 20. Among the audited agreements (predicted 1) 18 of 20 are positive, 50 left.
    The first system's true positives among the items left are
    BetaBinomial(30, 1/2 + 6, 1/2 + 2) + BetaBinomial(50, 18.5, 2.5); 200,000 draws put the
    mean within 4 standard errors and the variance within 2% (the ratio's standard error is
    about 0.3%). The agreements' draw is the same for both systems."""
    audited_d = np.zeros((2, 2, 2), dtype=int)  # [k, predicted, true]
    audited_d[0, 1] = [2, 6]
    audited_d[0, 0] = [3, 1]
    audited_d[1, 1] = [4, 1]
    audited_d[1, 0] = [2, 5]
    left_d = np.array([[20, 30], [25, 25]])
    audited_a = np.array([[0, 0], [2, 18]])  # [predicted, true]
    left_a = np.array([0, 50])
    known = np.zeros((2, 2, 2), dtype=int)
    counts = kernel.confusion_draws(
        known, (audited_d, left_d), (audited_a, left_a),
        prior=0.5, draws=200_000, rng=np.random.default_rng(2),
    )  # fmt: skip
    true_positives = counts[:, 0, 1, 1]
    own, shared = stats.betabinom(30, 6.5, 2.5), stats.betabinom(50, 18.5, 2.5)
    mean, var = own.mean() + shared.mean(), own.var() + shared.var()
    assert abs(true_positives.mean() - mean) < 4 * np.sqrt(var / counts.shape[0])
    assert abs(true_positives.var() / var - 1) < 0.02
    # every item left is counted once, in the column of the class predicted
    assert (counts.sum(axis=(2, 3)) == left_d.sum(axis=1) + left_a.sum()).all()
    assert (counts[:, :, :, 1].sum(axis=2) == left_d[:, 1] + 50).all()
    # the agreements' positives are one draw for both systems: the difference of the true
    # positives has only the disagreements' variance
    second = stats.betabinom(25, 1.5, 4.5)
    difference = true_positives - counts[:, 1, 1, 1]
    assert abs(difference.var() / (own.var() + second.var()) - 1) < 0.02


def test_every_item_labelled_gives_the_exact_accuracies():
    pool, truth = shared_error_pool(0, n=200)
    result = audited_levels(pool, np.arange(150), truth[:150], np.arange(150, 200),
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


def _true_measure(measure, predictions, truth):
    m = be.measures.by_name(measure)
    return np.array([np.ravel(m.value(truth, predictions=p))[0] for p in predictions.T])


@pytest.mark.parametrize(
    ("kind", "measure"),
    [
        ("shared errors", "accuracy"),
        ("imbalanced", "accuracy"),
        ("classes", "accuracy"),
        ("shared errors", "f1"),
        ("shared errors", "precision"),
        ("imbalanced", "f1"),
        ("imbalanced", "recall"),
    ],
)
def test_the_audit_covers_each_level_after_a_biased_choice(kind, measure):
    """300 pools of 600 items and 8 systems (about 30% of the items agreements); 60 labels
    where the two best disagree, the best right on as many as possible, then 40 audited
    disagreements and 40 audited agreements. Each run's share of the 8 systems covered is one
    unit (the systems share the audit); the mean must be at least 0.95 less 3 standard errors
    of those runs, and the chosen labels alone (the best system's share right on them) must
    miss, or the pool did not break anything. Recorded 2026-11-29 (standard errors
    0.005-0.009): accuracy 0.956, 0.938, 0.954; F1 0.952 and 0.961; precision 0.962; recall
    (3% positives) 0.967. With 20 and 20 audited, accuracy 0.944, 0.941 and 0.953."""
    rng = np.random.default_rng(11)
    covered, naive = [], []
    for seed in range(300):
        predictions, truth, classes = breaking_pool(kind, rng)
        right = predictions == truth[:, None]
        first = np.argsort(-right.mean(axis=0))[0]
        chosen = biased_choice(predictions, truth)
        audit = _stratified_audit(predictions, chosen, rng, 40, 40)
        if classes > 2:
            pool = be.Pool(np.ones(predictions.shape), predictions, classes=list("abcd"))
        else:
            pool = be.Pool(predictions.astype(float))
        result = audited_levels(
            pool, chosen, truth[chosen], audit, truth[audit], measure=measure, rng=seed
        )
        lower, upper = result.interval(0.95).values.T
        true = _true_measure(measure, predictions, truth) if classes == 2 else right.mean(0)
        covered.append(((lower - 1e-9 <= true) & (true <= upper + 1e-9)).mean())
        naive.append(abs(right[chosen, first].mean() - right[:, first].mean()) <= 0.05)
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
    levels = sampler.audited_levels()
    chosen = pool.positions(sampler.labelled()[0][:-45])
    direct = audited_levels(pool, chosen, truth[chosen], positions, truth[positions], rng=0)
    # the same posterior: the medians agree to Monte Carlo error (1,000 draws each)
    assert np.allclose(levels.estimate, direct.estimate, atol=0.01)
    # the differences read the same audit, agreements and all (they cannot move a difference)
    assert sampler.audited_differences().estimate.shape == (5, 5)


def test_levels_of_other_measures_need_two_classes():
    predictions = np.array([[0, 1], [1, 1], [2, 0], [2, 2]])
    pool = be.Pool(np.ones(predictions.shape), predictions, classes=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"`measure` must be 'accuracy' with 3 classes; got "):
        audited_levels(pool, [0], [0], [1, 2, 3], [1, 2, 2], measure="macro_f1")


def test_an_audit_without_agreements_says_what_levels_need():
    pool, truth = shared_error_pool(2)
    sampler = be.sampling.ModelSelection(pool, rng=0)
    sampler.run(truth, budget=60)
    ids = sampler.ask_audit(20)
    sampler.tell(ids, truth[pool.positions(ids)])
    with pytest.raises(ValueError, match=r"agreements \(items on which they all agree\) are left"):
        sampler.audited_levels()
