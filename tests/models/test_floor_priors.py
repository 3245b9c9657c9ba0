"""The robust variant: the model under a class of floor priors, the hull of their intervals."""

import numpy as np
import pytest

import bayeval as be
from bayeval.models import ScoreCalibration
from bayeval.sampling.run import sampler_class
from bayeval.simulate.battery import battery_pool

RECALL = be.measures.Recall()


@pytest.fixture(scope="module")
def hidden_run():
    """StaticIS, seed 8, 1,000 labels on the battery's `hidden` pool (30% of positives hidden).

    Its labels among scores below 1/2 find none of the hidden positives: the run on which the
    open floor alone is too sure (the model card's Known limits).
    """
    pool, truth = battery_pool("hidden")
    sampler = sampler_class("static_is")(pool, be.measures.FScore(), rng=8)
    while sampler.labels_used < 1000:
        ids = sampler.ask(min(sampler.batch_size, 1000 - sampler.labels_used))
        sampler.tell(ids, truth[pool.positions(ids)])
    return pool, truth, sampler


def test_the_hidden_run_found_no_low_scored_positive(hidden_run):
    pool, truth, sampler = hidden_run
    positions = sampler._labelled_positions()
    low = pool.scores[positions] < 0.5
    assert low.sum() > 400 and truth[positions[low]].sum() == 0


def test_the_interval_is_the_hull_of_the_floor_priors_and_the_estimate_the_first(hidden_run):
    _, _, sampler = hidden_run
    est = sampler.estimate(measure=RECALL, model=ScoreCalibration.robust())
    members = est.posterior["floor_priors"]["recall"]
    assert list(members["floor_prior"].values) == ["open", "jeffreys", "sceptical"]
    per_prior = members.quantile([0.025, 0.975], dim=("chain", "draw"))
    ci = est.interval(basis="posterior")
    assert ci.sel(ci_bound="lower").item() == pytest.approx(float(per_prior[0].min()))
    assert ci.sel(ci_bound="upper").item() == pytest.approx(float(per_prior[1].max()))
    # the first prior's draws are the posterior group, and the same as fitting it alone
    alone = sampler.estimate(measure=RECALL, model=ScoreCalibration(floor="open"))
    np.testing.assert_allclose(
        est.posterior["posterior"]["recall"].values,
        alone.posterior["posterior"]["recall"].values,
        rtol=1e-12,
    )
    assert np.asarray(est.estimate_of("posterior")).item() == pytest.approx(
        np.asarray(alone.estimate_of("posterior")).item(), rel=1e-12
    )


def test_the_hull_covers_where_the_open_floor_alone_is_too_sure(hidden_run):
    pool, truth, sampler = hidden_run
    true_recall = RECALL.value(truth, predictions=pool.predictions)[0]  # 0.695
    ends = {}
    for name, model in {
        "open": ScoreCalibration(floor="open"),
        "jeffreys": ScoreCalibration(floor="jeffreys"),
        "robust": ScoreCalibration.robust(),
    }.items():
        ci = sampler.estimate(measure=RECALL, model=model).interval(basis="posterior")
        ends[name] = (ci.sel(ci_bound="lower").item(), ci.sel(ci_bound="upper").item())
    # with no find the open prior's recall interval lies above the truth (0.82 against 0.70);
    # Jeffreys' prior keeps room for a few hidden positives per thousand low-scored items
    assert ends["open"][0] > true_recall
    assert ends["jeffreys"][0] < true_recall < ends["jeffreys"][1]
    # and so does the hull (whose ends are its own members', tested above; the fits here draw
    # other random numbers, so their ends differ from the hull's members' by Monte Carlo error)
    assert ends["robust"][0] < true_recall < ends["robust"][1]


def test_a_robust_estimate_survives_netcdf_with_its_floor_priors(hidden_run, tmp_path):
    _, _, sampler = hidden_run
    est = sampler.estimate(measure=RECALL, model=ScoreCalibration.robust(draws=400))
    est.to_netcdf(tmp_path / "robust.nc")
    loaded = be.load(tmp_path / "robust.nc")
    np.testing.assert_allclose(
        loaded.interval(basis="posterior").values, est.interval(basis="posterior").values
    )
