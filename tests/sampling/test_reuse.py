"""Other measures from a sampler's labels: ``estimate(measure=...)`` (sample reuse, §3.3.1)."""

import numpy as np
import pytest

import bayeval as be


@pytest.fixture(scope="module")
def pool_and_truth():
    gen = np.random.default_rng(2)
    truth = gen.random(20_000) < 0.02
    scores = np.where(truth, gen.beta(6, 2, truth.size), gen.beta(1, 12, truth.size))
    return be.Pool(scores), truth


@pytest.mark.parametrize("sampler", ["ais", "oasis", "passive", "static_is", "stratified"])
@pytest.mark.parametrize("measure", [be.measures.FScore(), be.measures.Recall()])
def test_the_samplers_own_measure_gives_its_own_estimate(pool_and_truth, sampler, measure):
    pool, truth = pool_and_truth
    run = be.evaluate(pool, measure, truth, budget=150, sampler=sampler, rng=1)
    mine = run.sampler.estimate(measure=type(measure)())  # an equal measure, another object
    own = run.sampler.estimate()
    np.testing.assert_array_equal(mine.value, own.value)
    np.testing.assert_allclose(mine.covariance, own.covariance, rtol=1e-12, atol=0)
    assert (mine.labels_used, mine.n_samples, mine.df) == (own.labels_used, own.n_samples, own.df)


def test_reused_draws_estimate_another_measure_like_the_weighted_mean_by_hand(pool_and_truth):
    pool, truth = pool_and_truth
    run = be.evaluate(pool, be.measures.FScore(), truth, budget=300, sampler="ais", rng=3)
    pos, q = run.sampler._draws()
    w = 1 / (pool.size * q)  # Eq. 1 weights p / q
    tp = np.mean(w * (truth[pos] & pool.predictions[pos].astype(bool)))
    positives = np.mean(w * truth[pos])
    recall = run.sampler.estimate(measure=be.measures.Recall())
    assert recall.value[0] == pytest.approx(tp / positives, rel=1e-12)


def test_calling_estimate_does_not_change_the_next_draws(pool_and_truth):
    pool, truth = pool_and_truth
    drawn = []
    for look in (False, True):
        sampler = be.sampling.AIS(pool, be.measures.FScore(), rng=5)
        for _ in range(3):
            ids = sampler.ask(20)
            sampler.tell(ids, truth[ids])
            if look:  # a posterior draw in between must not touch the sampling stream
                sampler.estimate().interval(0.9, basis="posterior")
        drawn.append(sampler.ask(20))
    np.testing.assert_array_equal(*drawn)


def test_a_curve_at_the_decision_threshold_is_precision_and_recall(pool_and_truth):
    pool, truth = pool_and_truth  # predictions: score >= 0.5
    sampler = be.evaluate(pool, be.measures.FScore(), truth, budget=400, rng=0).sampler
    est = sampler.estimate(measure=be.measures.PrecisionRecallCurve([0.3, 0.5, 0.7]))
    precision = sampler.estimate(measure=be.measures.Precision())
    recall = sampler.estimate(measure=be.measures.Recall())
    assert est.value[[1, 4]] == pytest.approx([precision.value[0], recall.value[0]], rel=1e-12)
    assert est.standard_error[[1, 4]] == pytest.approx(
        [precision.standard_error[0], recall.standard_error[0]], rel=1e-9, abs=1e-9
    )
    credible = est.interval(0.95, basis="posterior")
    assert np.all(credible.sel(ci_bound="lower").values <= credible.sel(ci_bound="upper").values)


def test_draws_that_miss_a_measure_are_refused(pool_and_truth):
    pool, truth = pool_and_truth
    precision, recall = be.measures.Precision(), be.measures.Recall()
    ais = be.evaluate(pool, precision, truth, budget=50, sampler="ais", rng=0).sampler
    assert not ais.covers(recall)  # the proposal never draws a predicted negative
    with pytest.raises(ValueError, match="is not covered by the draws of this ais sampler"):
        ais.estimate(measure=recall)
    for name, options in (("ais", {"defensive": 0.1}), ("passive", {}), ("stratified", {})):
        run = be.evaluate(pool, precision, truth, budget=50, sampler=name, rng=0, **options)
        assert run.sampler.estimate(measure=recall).outputs == ("recall",)


def test_undefined_outputs_leave_no_negative_variance():
    # three labelled items, none above 0.9: precision@0.9 is undefined (NaN)
    pool = be.Pool(np.linspace(0, 0.8, 400))
    sampler = be.sampling.AIS(pool, be.measures.FScore(), batch_size=3, rng=0)
    sampler.tell(sampler.ask(), [1, 0, 1])
    est = sampler.estimate(measure=be.measures.PrecisionRecallCurve([0.1, 0.9]))
    assert np.isnan(est.value[1])
    assert np.isfinite(est.standard_error[0]) and not (np.diag(est.covariance) < 0).any()
