"""Comparison and Differences: P(best), regret, ranks, differences from joint draws; compare()."""

import numpy as np
import pytest
import xarray as xr

import bayeval as be
from bayeval.comparison import Comparison
from bayeval.models import ScoreCalibration, SystemConfusion


def _comparison(draws, systems=("a", "b", "c"), measure="accuracy"):
    draws = np.asarray(draws, dtype=float)
    posterior = xr.Dataset(
        {measure: (("chain", "draw", "system"), draws)}, coords={"system": list(systems)}
    )
    tree = xr.DataTree.from_dict({"posterior": posterior})
    return Comparison(measure=measure, model="test", posterior=tree)


# four draws of three systems (one chain): a is best in draws 0 and 1, b in 2, a and c tie in 3
DRAWS = [[[0.9, 0.8, 0.7], [0.8, 0.7, 0.6], [0.6, 0.9, 0.5], [0.7, 0.6, 0.7]]]


def test_prob_best_splits_ties_and_sums_to_one():
    result = _comparison(DRAWS)
    assert result.prob_best.values.tolist() == pytest.approx([2.5 / 4, 1 / 4, 0.5 / 4])
    assert float(result.prob_best.sum()) == pytest.approx(1.0)
    assert result.best == "a"


def test_expected_regret_is_the_mean_shortfall_from_the_best_of_each_draw():
    result = _comparison(DRAWS)
    # a: 0, 0, 0.3, 0; b: 0.1, 0.1, 0, 0.1; c: 0.2, 0.2, 0.4, 0
    assert result.expected_regret.values.tolist() == pytest.approx([0.075, 0.075, 0.2])


def test_rank_probabilities_are_competition_ranks():
    ranks = _comparison(DRAWS).rank_probabilities
    # c: rank 3, 3, 3, then 1 (tied first with a, which also has rank 1)
    assert ranks.sel(system="c").values.tolist() == pytest.approx([0.25, 0.0, 0.75])
    assert ranks.sel(system="a").values.tolist() == pytest.approx([0.75, 0.25, 0.0])
    assert ranks.sum("rank").values.tolist() == pytest.approx([1.0, 1.0, 1.0])


def test_prob_better_is_complementary_and_counts_ties_half():
    better = _comparison(DRAWS).prob_better
    assert float(better.sel(system="a", other="c")) == pytest.approx(3.5 / 4)
    off_diagonal = ~np.eye(3, dtype=bool)
    assert (better.values + better.values.T)[off_diagonal] == pytest.approx(np.ones(6))
    assert np.isnan(np.diag(better.values)).all()


def test_differences_prob_better_agrees_with_the_joint_draws_and_skips_undefined_ones():
    result = _comparison(DRAWS)
    assert result.differences.prob_better.values == pytest.approx(
        result.prob_better.values, nan_ok=True
    )
    # an undefined draw counts in no share: a - c is 0.2, NaN, 0.1; b - c is 0.1, 0 (a tie), 0.4
    with_nan = _comparison([[[0.9, 0.8, 0.7], [np.nan, 0.6, 0.6], [0.6, 0.9, 0.5]]])
    better = with_nan.differences.prob_better
    assert float(better.sel(system="a", other="c")) == pytest.approx(1.0)
    assert float(better.sel(system="b", other="c")) == pytest.approx((1 + 0.5 + 1) / 3)


def test_differences_are_the_draws_of_each_pairwise_difference():
    rng = np.random.default_rng(0)
    shared = rng.normal(0.8, 0.05, size=(2, 500, 1))  # strongly correlated systems
    draws = np.concatenate([shared + 0.01, shared, shared - 0.2], axis=2)
    result = _comparison(draws)
    differences = result.differences
    ci = differences.interval(0.9)
    assert ci.dims == ("system", "other", "ci_bound")
    # a - b is 0.01 in every draw: the difference is sure although each interval is wide
    assert ci.sel(system="a", other="b").values == pytest.approx([0.01, 0.01])
    width = result.interval(0.9).sel(system="a").values
    assert width[1] - width[0] > 0.1
    assert differences.estimate.sel(system="c", other="a") == pytest.approx(-0.21)


def test_draws_where_a_measure_is_undefined_are_left_out_of_who_is_best():
    draws = [[[0.9, np.nan], [0.2, 0.5], [0.3, 0.4]]]
    result = _comparison(draws, systems=("a", "b"), measure="precision")
    assert result.prob_best.values.tolist() == [0.0, 1.0]
    assert result.estimate.values.tolist() == pytest.approx([0.3, 0.45])


def test_a_measure_undefined_in_every_draw_gives_nan_without_a_warning():
    draws = [[[0.9, np.nan], [0.2, np.nan], [0.3, np.nan]]]
    result = _comparison(draws, systems=("a", "b"), measure="precision")
    assert np.isnan(result.estimate.sel(system="b"))
    assert np.isnan(result.differences.estimate.sel(system="a", other="b"))


def test_table_sorts_best_first():
    table = _comparison(DRAWS).table()
    assert list(table.index) == ["a", "b", "c"]
    assert list(table.columns[-2:]) == ["prob_best", "expected_regret"]


def test_a_comparison_round_trips_through_netcdf(tmp_path):
    result = _comparison(DRAWS)
    result.to_netcdf(tmp_path / "comparison.nc")
    loaded = be.load(tmp_path / "comparison.nc")
    assert loaded.prob_best.values.tolist() == result.prob_best.values.tolist()
    assert loaded.measure == "accuracy"
    differences = result.differences
    differences.to_netcdf(tmp_path / "differences.nc")
    again = be.load(tmp_path / "differences.nc")
    assert again.interval().values.tolist() == differences.interval().values.tolist()


# -- compare() -------------------------------------------------------------------------------------
def _three_systems(n=3_000, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.4
    right = rng.random((n, 3)) < [0.90, 0.85, 0.80]
    predictions = np.where(right, truth[:, None], ~truth[:, None]).astype(int)
    return truth, predictions, rng


def test_compare_predictions_uses_the_consensus_model_and_names_the_systems():
    truth, predictions, rng = _three_systems()
    labelled = rng.choice(truth.size, 300, replace=False)
    systems = dict(zip(["x", "y", "z"], predictions.T, strict=True))
    result = be.compare(systems, labelled, truth[labelled], measure="f1", rng=1)
    assert result.systems == ["x", "y", "z"]
    assert result.measure == "f1"
    assert result.model.startswith("ConsensusCalibration(")
    true_f1 = [be.measures.FScore().value(truth, predictions=p)[0] for p in predictions.T]
    ci = result.interval()
    assert np.all((ci.sel(ci_bound="lower") <= true_f1) & (true_f1 <= ci.sel(ci_bound="upper")))


def test_compare_a_scored_pool_uses_the_score_calibration():
    truth, predictions, rng = _three_systems(n=4_000, seed=2)
    noise = rng.normal(0, 1, predictions.shape)
    scores = 1 / (1 + np.exp(-(np.where(predictions == 1, 1.5, -1.5) + noise)))
    pool = be.Pool(scores, predictions=predictions, systems=["a", "b", "c"])
    labelled = rng.choice(pool.size, 400, replace=False)
    result = be.compare(pool, labelled, truth[labelled], rng=3)
    assert result.model.startswith("ScoreCalibration(")
    assert result.systems == ["a", "b", "c"]
    assert result.posterior["posterior"]["accuracy"].dims == ("chain", "draw", "system")


@pytest.mark.parametrize(
    ("systems", "options", "message"),
    [
        ({"a": [0, 1, 1], "b": [0, 1]}, {}, r"same length; got lengths \{'a': 3, 'b': 2\}"),
        ({"a": [0, 1, 1]}, {}, "two or more systems to compare; got 1"),
        (np.array([[0, 1], [2, 0], [1, 1]]), {}, r"`systems` must be classes 0 \.\. 1"),
        (np.array([[0], [1], [1]]), {}, "two or more systems to compare; got 1"),
        (
            np.array([[0, 1], [1, 0], [1, 1]]),
            {"measure": "brier"},
            "`measure` must be measures of a system's predictions",
        ),
        (
            np.array([[0, 1], [1, 0], [1, 1]]),
            {"model": ScoreCalibration()},
            "ScoreCalibration needs the systems' scores",
        ),
        (np.array([[0, 1], [1, 0], [1, 1]]), {"model": "confusion"}, "`model` must be"),
    ],
)
def test_compare_refuses_bad_input_naming_the_parameter(systems, options, message):
    with pytest.raises(ValueError, match=message):
        be.compare(systems, [0], [1], **options)


def test_compare_takes_an_explicit_model():
    truth, predictions, rng = _three_systems(n=500)
    model = SystemConfusion(draws=400, thin=5)
    result = be.compare(predictions, np.arange(100), truth[:100], model=model, rng=0)
    assert result.model == repr(model)
