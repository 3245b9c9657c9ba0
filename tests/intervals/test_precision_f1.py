import numpy as np
import pytest
from scipy import stats

import bayeval as be


def test_binomial_precision_equals_binomial_interval(webber_example):
    for method in be.intervals.BINOMIAL_METHODS:
        res = be.precision_interval(webber_example, method=method)
        ref = be.binomial_interval(50, 100, method=method)
        assert (res.lower, res.upper, res.estimate) == (ref.lower, ref.upper, ref.estimate)


def test_precision_posterior_is_the_retrieved_beta_binomial(webber_example):
    # precision = R1 / N1 with R1 = 50 + BetaBinomial(1900, 50.5, 50.5): exact quantiles.
    res = be.precision_interval(webber_example, method="beta-binomial-half", rng=0)
    dist = stats.betabinom(1900, 50.5, 50.5)
    # 1.5e-5: the quantile solver's tolerance is 1e-5 (atoms here are 1/2000 apart).
    assert res.lower == pytest.approx((50 + dist.ppf(0.025)) / 2000, abs=1.5e-5)
    assert res.upper == pytest.approx((50 + dist.ppf(0.975)) / 2000, abs=1.5e-5)


def test_finite_population_narrows_precision():
    # Half of a 200-item retrieved segment sampled: the beta-binomial interval knows the 100
    # sampled items exactly and is narrower than a binomial interval that ignores it.
    s = be.StratifiedSample.two_segments(N1=200, n1=100, r1=60, N0=5000, n0=100, r0=2)
    bb = be.precision_interval(s, method="beta-binomial-half")
    jeffreys = be.precision_interval(s, method="jeffreys")
    assert bb.upper - bb.lower < 0.8 * (jeffreys.upper - jeffreys.lower)


def test_f1_agrees_with_exact_draws(webber_example):
    res = be.f1_interval(webber_example, rng=0, draws=50_000)
    draws = res.posterior["posterior"]["f1"].values.ravel()
    # 200,000 exact draws: quantile MC error ~ 1e-3; 5e-3 is five of them.
    np.testing.assert_allclose(
        [res.lower, res.upper], np.quantile(draws, [0.025, 0.975]), atol=5e-3
    )


def test_f1_from_yield_draws(webber_example):
    tree = be.f1_interval(webber_example, rng=1).posterior["posterior"]
    y = tree["segment_yield"]
    f1 = 2 * y.sel(segment="retrieved") / (2000 + y.sum("segment"))
    np.testing.assert_allclose(tree["f1"].values, f1.values)


def test_precision_binomial_needs_one_retrieved_stratum(stratified_sample):
    with pytest.raises(ValueError, match="needs a single retrieved stratum; this sample has 2"):
        be.precision_interval(stratified_sample, method="wilson")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((5, 3), r"`r` cannot exceed `n`; got r=5 > n=3"),
        ((1, 0), r"`n` must be a whole number >= 1; got 0"),
        ((-1, 3), r"`r` must be a whole number >= 0; got -1"),
        ((1.5, 3), r"`r` must be a whole number >= 0; got 1.5"),
    ],
)
def test_binomial_interval_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        be.binomial_interval(*args)


def test_binomial_jeffreys_forced_at_the_ends():
    # Webber §2.7: the Jeffreys interval's lower end is set to 0 at r = 0, upper to 1 at r = n.
    assert be.binomial_interval(0, 20, method="jeffreys").lower == 0.0
    assert be.binomial_interval(20, 20, method="jeffreys").upper == 1.0


def test_precision_with_stratified_unretrieved_segment():
    # One retrieved stratum, several unretrieved ones: precision uses the quadrature path and
    # equals the precision of the retrieved segment alone.
    s = be.StratifiedSample(
        [514, 143, 72494, 426349], [80, 60, 150, 150], [77, 2, 0, 0], [True, False, False, False]
    )
    alone = be.StratifiedSample([514], [80], [77], [True])
    res = be.precision_interval(s, rng=0)
    ref = be.precision_interval(alone, rng=0)
    assert res.mc_error is None
    assert (res.lower, res.upper) == pytest.approx((ref.lower, ref.upper))
