"""``OnDemandEvaluator.compare``: which system is best, from the evaluator's joint posterior."""

import numpy as np
import pytest

import bayeval as be


@pytest.fixture(scope="module")
def close_systems():
    """Six overlapping systems of precision 0.60 to 0.75."""
    precision = [0.6, 0.62, 0.64, 0.66, 0.7, 0.75]
    return be.ondemand.synthetic_universe(6, precision=precision, agreement=0.8, rng=0)


def test_the_comparison_reads_the_evaluators_joint_draws(close_systems, run):
    ev = run(close_systems, 0, n0=300, target_se=0.04)
    result = ev.compare("recall", draws=500, chains=2)
    draws = ev.posterior(draws=500, chains=2)["posterior"]["recall"]
    np.testing.assert_array_equal(result.posterior["posterior"]["recall"].values, draws.values)
    assert result.systems == ev.systems and result.measure == "recall"
    assert float(result.prob_best.sum()) == pytest.approx(1.0)
    flat = draws.values.reshape(-1, len(ev.systems))
    a, b = ev.systems[:2]
    expected = np.mean(flat[:, 0] > flat[:, 1])
    assert float(result.prob_better.sel(system=a, other=b)) == pytest.approx(expected)


def test_the_differences_cover_about_as_the_evaluators_intervals_do(close_systems, run):
    # the evaluator's own 90% intervals cover 0.88 on average (tests/ondemand/test_intervals.py,
    # the bootstrap's small-sample shortfall); the differences of precision among these six
    # systems covered 0.890 (the least covered pair 0.85) in 200 runs, and 40 runs here. The
    # mean over 15 correlated pairs and 40 runs has a standard error of about 0.02
    truth = close_systems.scores()["precision"].to_numpy()
    true_difference = truth[:, None] - truth[None, :]
    pairs = np.triu_indices(truth.size, 1)
    inside = []
    for seed in range(40):
        evaluator = run(close_systems, seed, n0=300, target_se=0.04)
        interval = evaluator.compare("precision").differences.interval(0.9)
        lower, upper = (interval.sel(ci_bound=b).transpose("system", "other").values
                        for b in ("lower", "upper"))  # fmt: skip
        inside.append(((lower <= true_difference) & (true_difference <= upper))[pairs])
    assert 0.82 < np.mean(inside) < 0.96, np.mean(inside)  # measured 0.903


def test_a_comparison_before_any_system_or_of_another_measure_is_refused():
    ev = be.ondemand.OnDemandEvaluator([0, 1, 2], rng=0)
    with pytest.raises(ValueError, match="no system is submitted yet"):
        ev.compare()
    with pytest.raises(ValueError, match="`measure` must be one of"):
        ev.compare("accuracy")
