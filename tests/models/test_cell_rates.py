"""CellRates: a Jeffreys rate per cell, the default model of a pool of 0/1 predictions.

References are SciPy's beta and beta-binomial distributions: with one system and no judge,
precision's draws are ``(k + U) / N_1`` with ``U ~ BetaBinom(N_1 - n_1, k + 1/2, m + 1/2)``
for the ``N_1`` items predicted positive, ``n_1`` of them labelled (``k`` positives, ``m``
negatives). Coverage runs on the judge pools with the scores replaced by the predictions
(:mod:`bayeval.simulate.judge_pools`: a judge that is accurate, lenient, reliable only where
the system is sure, and 0.5% positives): with 100 runs a calibrated 95% interval covers 86
times or fewer with probability 0.0005 (binomial), hence ``>= 87``.
"""

import warnings

import numpy as np
import pytest
from scipy import stats

import bayeval as be
from bayeval.models import CalibrationWarning, CellRates, DawidSkene
from bayeval.models.cell_rates import has_two_scores
from bayeval.simulate.judge_pools import judge_pool

MEASURES = {
    "precision": be.measures.Precision(),
    "recall": be.measures.Recall(),
    "f1": be.measures.FScore(),
    "accuracy": be.measures.Accuracy(),
}


def _predictions_pool(name, size=5_000):
    """A judge pool whose system gives only its 0/1 predictions, and its truth."""
    pool, truth = judge_pool(name, size=size)
    return be.Pool(pool.predictions.astype(float), judge=pool.judge), truth


def _one_cell_setting(n_labelled=80):
    pool, truth = _predictions_pool("accurate", size=2_000)
    bare = be.Pool(pool.scores)
    labelled = np.random.default_rng(3).choice(pool.size, n_labelled, replace=False)
    return bare, truth, labelled


def test_precision_draws_follow_the_cells_beta_binomial():
    pool, truth, labelled = _one_cell_setting()
    fit = (
        CellRates(draws=8000)
        .bind(pool, MEASURES["precision"])
        .fit(labelled, truth[labelled], rng=0)
    )
    predicted = pool.predictions.astype(bool)
    n_predicted = int(predicted.sum())
    seen = predicted[labelled]
    k = int(truth[labelled][seen].sum())
    m = int(seen.sum()) - k
    unseen = stats.betabinom(n_predicted - k - m, k + 0.5, m + 0.5)
    positives = fit.measure_draws()[:, 0] * n_predicted - k  # the unlabelled items' positives
    for u in unseen.ppf([0.1, 0.5, 0.9]):
        share = float(np.mean(positives <= u + 0.5))  # draws are whole counts / n_predicted
        expected = float(unseen.cdf(u))
        # 8,000 independent draws: a share's standard error is at most 0.0056
        assert abs(share - expected) < 4 * np.sqrt(expected * (1 - expected) / 8_000), (u, share)


def test_rates_for_a_stochastic_oracle_are_the_cells_beta_posterior():
    pool, truth, labelled = _one_cell_setting()
    repeated = np.concatenate([labelled, labelled[:30]])  # an item may be labelled again
    fit = (
        CellRates(draws=8000)
        .bind(pool, MEASURES["precision"])
        .fit(repeated, truth[repeated], rng=0, finite=False)
    )
    seen = pool.predictions.astype(bool)[repeated]
    k = int(truth[repeated][seen].sum())
    rate = stats.beta(k + 0.5, int(seen.sum()) - k + 0.5)
    draws = fit.measure_draws()[:, 0]  # precision under the rates = the predicted 1s' rate
    for q in (0.1, 0.5, 0.9):
        share = float(np.mean(draws <= rate.ppf(q)))
        assert abs(share - q) < 4 * np.sqrt(q * (1 - q) / 8_000), (q, share)


@pytest.mark.parametrize("name", ["accurate", "biased", "easy-hard", "rare"])
def test_intervals_cover_on_pools_of_predictions(name):
    pool, truth = _predictions_pool(name)
    for measure_name, measure in MEASURES.items():
        true = float(measure.value(truth, predictions=pool.predictions)[0])
        bound = CellRates(draws=2000).bind(pool, measure)
        covered = 0
        for seed in range(100):
            labelled = np.random.default_rng(seed).choice(pool.size, 100, replace=False)
            draws = bound.fit(labelled, truth[labelled], rng=seed).measure_draws()[:, 0]
            low, median, high = np.nanquantile(draws, [0.025, 0.5, 0.975])
            assert 0 <= low <= median <= high <= 1, (name, measure_name, seed)
            covered += bool(low <= true <= high)
        # measured: 92-100 of 100 in every cell
        assert covered >= 87, (name, measure_name, covered)


def test_it_is_the_default_model_of_a_pool_of_predictions():
    pool, truth = _predictions_pool("biased", size=2_000)
    assert has_two_scores(pool)
    scored, _ = judge_pool("biased", size=2_000)
    assert not has_two_scores(scored)
    runs = {}
    for key, p in (("predictions", pool), ("scores", scored)):
        sampler = be.sampling.Passive(p, MEASURES["f1"], rng=0)
        ids = sampler.ask(150)
        sampler.tell(ids, truth[p.positions(ids)])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CalibrationWarning)
            runs[key] = sampler.estimate().posterior["posterior"]
    assert "rate" in runs["predictions"] and "slope" not in runs["predictions"]
    assert "slope" in runs["scores"] and "rate" not in runs["scores"]
    # the cells: prediction x judge's level (its strata take the two scores' ends)
    assert runs["predictions"]["rate"].sizes["cell"] == 4


def test_annotators_noise_widens_the_interval():
    pool, truth = _predictions_pool("accurate", size=2_000)
    sampler = be.sampling.Passive(pool, MEASURES["accuracy"], rng=1)
    ids = sampler.ask(200)
    sampler.tell(ids, truth[pool.positions(ids)])
    rng = np.random.default_rng(2)
    items = np.repeat(ids, 3)
    names = [f"a{i}" for i in np.tile([0, 1, 2], ids.size)]
    right = rng.random(items.size) < 0.75  # each right on 75% of the items
    answers = np.where(right, truth[pool.positions(items)], ~truth[pool.positions(items)])
    fit = DawidSkene(draws=400).fit(items, names, answers.astype(int), pool=pool, rng=3)
    exact = sampler.estimate().interval(basis="posterior").values[0]
    noisy = sampler.estimate(labels=fit).interval(basis="posterior").values[0]
    assert "rate" in sampler.estimate().posterior["posterior"]
    # measured: 0.037 wide from the true labels, 0.084 from the answers
    assert noisy[1] - noisy[0] > 1.5 * (exact[1] - exact[0]), (exact, noisy)


def test_bad_input():
    pool, truth, labelled = _one_cell_setting()
    with pytest.raises(ValueError, match="`draws` .* `chains`"):
        CellRates(draws=10, chains=4)
    bound = CellRates().bind(pool, MEASURES["f1"])
    with pytest.raises(ValueError, match="CellRates needs labels to learn the cells' rates"):
        bound.fit([], [])
    with pytest.raises(ValueError, match="`labels`"):
        bound.fit(labelled[:2], [0, 2])
    with pytest.raises(ValueError, match="must not repeat an item"):
        bound.fit([1, 1], [0, 0])
    sampler = be.sampling.Passive(pool, MEASURES["f1"], rng=0)
    sampler.tell(sampler.ask(5), [1, 0, 1, 0, 1])
    with pytest.raises(ValueError, match="`model` must be a bayeval.models.ScoreCalibration or"):
        sampler.estimate(model="cells")
