"""Every sampler's credible interval comes from the model of the labels; design ones in range."""

import numpy as np
import pytest

import bayeval as be
from bayeval.sampling.run import BINARY_SAMPLERS, sampler_class

RNG = np.random.default_rng(11)
TRUTH = RNG.random(5000) < 0.03
SCORES = np.where(TRUTH, RNG.beta(5, 2, 5000), RNG.beta(1, 10, 5000))
POOL = be.Pool(SCORES)
MEASURES = {
    "precision": be.measures.Precision(),
    "recall": be.measures.Recall(),
    "f1": be.measures.FScore(),
}


def _run(name, labels=200, seed=0):
    sampler = sampler_class(name)(POOL, MEASURES["f1"], rng=seed)
    while sampler.labels_used < labels:
        ids = sampler.ask(50)
        sampler.tell(ids, TRUTH[POOL.positions(ids)])
    return sampler


@pytest.mark.parametrize("name", BINARY_SAMPLERS)
def test_every_sampler_has_a_credible_interval_of_every_measure(name):
    sampler = _run(name)
    for measure in MEASURES.values():
        est = sampler.estimate(measure=measure)
        estimate, lower, upper = (float(v[0]) for v in est.per_output(0.95, "posterior"))
        assert 0.0 <= lower <= estimate <= upper <= 1.0
        draws = est.posterior["posterior"][measure.name].values
        assert estimate == pytest.approx(float(np.nanmedian(draws)))


@pytest.mark.parametrize("name", ["passive", "static_is", "ais"])
def test_a_precision_recall_band_comes_from_the_same_labels(name):
    sampler = _run(name, labels=300)
    curve = be.measures.PrecisionRecallCurve([0.3, 0.5, 0.7])
    if not sampler.covers(curve):
        pytest.skip(f"{name}'s draws do not cover the curve")  # pragma: no cover
    est = sampler.estimate(measure=curve)
    ci = est.interval(0.9, basis="posterior")
    assert ci.dims == ("measure", "threshold", "ci_bound")
    assert ci["threshold"].values.tolist() == [0.3, 0.5, 0.7]
    median = est.estimate_of("posterior")
    assert np.all(ci.sel(ci_bound="lower") <= median) and np.all(median <= ci.sel(ci_bound="upper"))
    # every posterior draw is one labelling of the pool, so its recall cannot rise with the
    # threshold
    recall = est.posterior["posterior"]["recall"]
    assert recall.dims == ("chain", "draw", "threshold")
    assert np.all(recall.diff("threshold") <= 1e-12)


@pytest.mark.parametrize("name", BINARY_SAMPLERS)
def test_design_intervals_stay_in_range_and_hold_their_estimate(name):
    for seed in range(3):
        sampler = _run(name, labels=50, seed=seed)
        for measure in MEASURES.values():
            estimate, lower, upper = sampler.estimate(measure=measure).per_output(0.95)
            assert np.all(np.isfinite([lower, estimate, upper]))
            assert np.all((0 <= lower) & (lower <= estimate) & (estimate <= upper) & (upper <= 1))
            assert np.all(upper > lower)  # unlabelled items can still change every measure


def test_a_degenerate_design_falls_back_to_the_posterior():
    # passive draws before any false negative: recall's design se is 0 (or recall undefined)
    sampler = _run("passive", labels=50, seed=1)
    est = sampler.estimate(measure=MEASURES["recall"])
    ci = est.interval(0.95)
    assert ci.attrs["fallback"] == ["recall"]
    cred = est.interval(0.95, basis="posterior")
    assert ci.values.tolist() == cred.values.tolist()
    assert float(ci.sel(ci_bound="upper")[0]) > float(ci.sel(ci_bound="lower")[0])
    assert float(est.estimate[0]) == float(est.estimate_of("posterior")[0])


def test_the_dirichlet_tree_posterior_stays_one_argument_away():
    sampler = _run("ais")
    tree = sampler.estimate(model="dirichlet_tree").posterior
    assert "response" in tree["posterior"]
    with pytest.raises(ValueError, match="`model` must be a bayeval.models.ScoreCalibration"):
        sampler.estimate(model="tree")
    with pytest.raises(ValueError, match="`model` must be a bayeval.models.ScoreCalibration"):
        _run("passive").estimate(model="dirichlet_tree")


def test_the_robust_model_is_wider_where_no_label_looks():
    sampler = _run("static_is", labels=300)
    recall = MEASURES["recall"]
    default = sampler.estimate(measure=recall).interval(0.95, basis="posterior")
    robust = sampler.estimate(measure=recall, model=be.models.ScoreCalibration.robust()).interval(
        0.95, basis="posterior"
    )
    width = [float(ci.diff("ci_bound")[0, 0]) for ci in (default, robust)]
    assert width[1] > width[0]


def test_summary_shows_both_bases():
    est = _run("static_is").estimate()
    table = est.summary()
    assert list(table.columns) == ["estimate", "lower", "upper", "ci_prob", "ci_kind"]
    assert table.index.names == ["measure", "basis"]
    assert table.loc[("f1", "posterior"), "estimate"] == float(est.estimate_of("posterior")[0])
    assert table.loc[("f1", "design"), "estimate"] == float(est.value[0])


def test_the_same_labels_give_the_same_posterior_whatever_ran_before():
    sampler = _run("static_is")
    first = sampler.estimate().interval(0.95, basis="posterior")
    sampler.estimate(measure=MEASURES["recall"]).interval(0.95)  # other fits in between
    sampler.estimate().summary()
    again = sampler.estimate().interval(0.95, basis="posterior")
    np.testing.assert_array_equal(first.values, again.values)
