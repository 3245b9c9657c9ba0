"""ConsensusCalibration and the consensus score it calibrates."""

import numpy as np
import pytest
from scipy import special

from bayeval import measures
from bayeval._core.consensus import consensus_log_odds
from bayeval.models import ConsensusCalibration, ScoreCalibration


def _independent_systems(n, accuracy, seed, prevalence=0.4):
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < prevalence
    right = rng.random((n, len(accuracy))) < accuracy
    return truth, np.where(right, truth[:, None], ~truth[:, None]).astype(int), rng


def test_the_consensus_recovers_the_log_odds_of_independent_systems():
    accuracy = np.array([0.9, 0.8, 0.7, 0.65])
    truth, predictions, _ = _independent_systems(40_000, accuracy, seed=0)
    patterns, inverse = np.unique(predictions, axis=0, return_inverse=True)
    sizes = np.bincount(inverse).astype(float)
    fitted = consensus_log_odds(patterns, sizes)
    # the log-odds of the model that generated the predictions
    weight = np.log(accuracy / (1 - accuracy))
    true = np.log(0.4 / 0.6) + (2 * patterns - 1) @ weight
    # 40,000 items estimate each system's two rates to about 0.003 (binomial se); the log-odds
    # of a pattern sums four such errors scaled by 1 / (p (1 - p)) <= 1 / 0.23: within 0.15
    assert np.abs(fitted - true).max() < 0.15


def test_every_item_labelled_gives_the_truth_in_every_draw():
    truth, predictions, _ = _independent_systems(300, [0.9, 0.7, 0.6], seed=1)
    model = ConsensusCalibration(calibration=ScoreCalibration(draws=40))
    dt = model.posterior(predictions, np.arange(300), truth, measures=("accuracy", "recall"))
    for k in range(3):
        recall = measures.Recall().value(truth, predictions=predictions[:, k])[0]
        assert np.all(dt["posterior"]["recall"].isel(system=k).values == pytest.approx(recall))


def test_intervals_cover_independent_systems_with_random_labels():
    # 30 seeded pools of five systems, 200 random labels of 2,000 items: the 150 intervals of
    # accuracy cover 0.93 (measured; model card); 0.88 is 2.5 binomial standard errors below
    inside = []
    for seed in range(30):
        truth, predictions, rng = _independent_systems(2_000, [0.9, 0.87, 0.84, 0.8, 0.78], seed)
        labelled = rng.choice(2_000, 200, replace=False)
        dt = ConsensusCalibration().posterior(predictions, labelled, truth[labelled], rng=seed)
        draws = dt["posterior"]["accuracy"].values.reshape(-1, 5)
        lower, upper = np.quantile(draws, [0.025, 0.975], axis=0)
        true = (predictions == truth[:, None]).mean(axis=0)
        inside.extend((lower <= true) & (true <= upper))
    assert np.mean(inside) >= 0.88


def test_the_datatree_has_the_curve_the_measures_and_the_consensus():
    truth, predictions, rng = _independent_systems(500, [0.9, 0.8], seed=2)
    labelled = rng.choice(500, 60, replace=False)
    model = ConsensusCalibration(calibration=ScoreCalibration(draws=200))
    dt = model.posterior(predictions, labelled, truth[labelled], systems=["a", "b"], rng=0)
    posterior = dt["posterior"]
    assert {"intercept", "slope", "accuracy"} <= set(posterior.data_vars)
    assert posterior["accuracy"].dims == ("chain", "draw", "system")
    assert list(posterior["system"].values) == ["a", "b"]
    assert {"prior", "posterior_predictive", "log_likelihood", "observed_data"} <= set(dt.children)
    consensus = dt["constant_data"]["consensus"].values
    assert consensus == pytest.approx(model.consensus(predictions))
    # the consensus ranks items as the vote does where the two systems agree
    agree = predictions[:, 0] == predictions[:, 1]
    assert np.all((special.expit(consensus[agree]) > 0.5) == (predictions[agree, 0] == 1))


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="`calibration` must have one floor prior"):
        ConsensusCalibration(calibration=ScoreCalibration.robust())
    with pytest.raises(ValueError, match="needs labels to learn the curve"):
        ConsensusCalibration().posterior(np.zeros((5, 2), int), [], [])
    with pytest.raises(ValueError, match="`calibration` must be a bayeval.models.ScoreCalibration"):
        ConsensusCalibration(calibration="sceptical")
