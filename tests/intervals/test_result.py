"""IntervalResult recomputes intervals of other probabilities and kinds without resampling."""

import numpy as np
import pandas as pd
import pytest

import bayeval as be

METHODS = ["normal-mle", "koopman", "beta-jeffreys", "beta-binomial-half", "naive-binomial"]


@pytest.mark.parametrize("method", METHODS)
def test_interval_at_other_prob_equals_a_fresh_call(webber_example, method):
    res = be.recall_interval(webber_example, method=method, rng=0)
    fresh = be.recall_interval(webber_example, method=method, prob=0.8, rng=0)
    again = res.interval(0.8)
    assert again.values.tolist() == pytest.approx([fresh.lower, fresh.upper], abs=1e-12)
    low, high = res.interval()  # unpacks; default is the original probability
    assert (float(low), float(high)) == (res.lower, res.upper)


@pytest.mark.parametrize("method", METHODS)
def test_one_sided_is_one_end_of_a_wider_two_sided(webber_example, method):
    res = be.recall_interval(webber_example, method=method, rng=0)
    two = res.interval(0.9).values
    lower = res.interval(0.95, kind="lower").values
    upper = res.interval(0.95, kind="upper").values
    assert lower[0] == pytest.approx(two[0], abs=2e-6) and lower[1] == 1.0
    assert upper[1] == pytest.approx(two[1], abs=2e-6) and upper[0] == 0.0


def test_hdi_is_no_wider_than_equal_tailed(webber_example, stratified_sample):
    for sample in (webber_example, stratified_sample):
        res = be.recall_interval(sample, rng=0)
        hdi = res.interval(0.95, kind="hdi").values
        eti = res.interval(0.95).values
        assert np.diff(hdi) <= np.diff(eti) + 1e-9
        # Right-skewed posterior (sparse unretrieved sample): the HDI sits lower.
        assert hdi[0] < eti[0] and hdi[1] < eti[1]


def test_hdi_from_quadrature_matches_hdi_of_exact_draws(webber_example):
    res = be.recall_interval(webber_example, rng=0, draws=25_000)  # 4 x 25,000 exact draws
    hdi = res.interval(0.95, kind="hdi").values
    draws = np.sort(res.posterior["posterior"]["recall"].values.ravel())
    k = int(np.ceil(0.95 * draws.size))
    i = np.argmin(draws[k - 1 :] - draws[: draws.size - k + 1])
    assert hdi[0] == pytest.approx(draws[i], abs=0.01)
    assert hdi[1] == pytest.approx(draws[i + k - 1], abs=0.01)


def test_summary_is_a_labelled_table(webber_example, stratified_sample):
    res = be.recall_interval(webber_example, rng=0)
    table = res.summary()
    assert isinstance(table, pd.DataFrame)
    assert table.index.names == ["measure", "method", "basis"]
    assert list(table.columns) == ["estimate", "lower", "upper", "ci_prob", "ci_kind"]
    row = table.loc[("recall", "beta-binomial-half", "posterior")]
    assert (row["estimate"], row["lower"], row["upper"]) == (res.estimate, res.lower, res.upper)
    assert be.recall_interval(webber_example, method="koopman").summary().index[0][-1] == "design"


def test_repr_is_readable(webber_example):
    res = be.recall_interval(webber_example, rng=0)
    text = repr(res)
    assert "beta-binomial-half" in text and "eti 95% interval" in text
    assert f"[{res.lower:.4f}, {res.upper:.4f}]" in text


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: be.recall_interval(s, method="wald"), r"`method` must be one of .*'wald'"),
        (lambda s: be.recall_interval(s, prob=1.2), r"`prob` must be in the open interval"),
        (lambda s: be.recall_interval(s, prob="high"), r"`prob` must be a probability"),
        (lambda s: be.recall_interval(s, kind="two-sided"), r"`kind` must be one of"),
        (lambda s: be.recall_interval(s, engine="stan"), r"`engine` must be one of"),
        (lambda s: be.recall_interval(s, method="koopman", engine="pymc"), r"`engine` applies"),
        (
            lambda s: be.recall_interval(s, method="beta-binomial-hierarchical", engine="exact"),
            r"no closed-form posterior; use engine='pymc'",
        ),
        (lambda s: be.recall_interval(s, draws=0), r"`draws` must be an integer >= 1; got 0"),
        (lambda s: be.recall_interval(s, rng="seed"), r"`rng` must be None, an int seed"),
        (lambda s: be.recall_interval(s.to_frame()), r"`sample` must be a bayeval"),
        (lambda s: be.f1_interval(s, method="wilson"), r"`method` must be one of"),
    ],
)
def test_bad_arguments(webber_example, call, message):
    with pytest.raises(ValueError, match=message):
        call(webber_example)


def test_bad_interval_arguments(webber_example):
    res = be.recall_interval(webber_example, rng=0)
    with pytest.raises(ValueError, match=r"`prob` must be in the open interval \(0, 1\); got 0"):
        res.interval(0)
    with pytest.raises(ValueError, match=r"`kind` must be one of"):
        res.interval(0.9, kind="central")
    with pytest.raises(ValueError, match=r"`basis` must be 'posterior' for this result; got 'des"):
        res.interval(0.9, basis="design")


def test_wave_one_spellings_warn_and_still_work(webber_example):
    res = be.recall_interval(webber_example, rng=0)
    with pytest.warns(
        DeprecationWarning, match="kind='equal-tailed' is deprecated: write kind='eti'"
    ):
        old = res.interval(0.9, kind="equal-tailed")
    assert old.values.tolist() == res.interval(0.9).values.tolist()
    with pytest.warns(DeprecationWarning, match="`low` is deprecated: use `lower`"):
        assert res.low == res.lower
    with pytest.warns(DeprecationWarning, match="`high` is deprecated: use `upper`"):
        assert res.high == res.upper


def test_unsampled_stratum_is_refused_by_frequentist_methods_only():
    s = be.StratifiedSample([100, 500, 900], [10, 0, 20], [4, 0, 1], [True, True, False])
    with pytest.raises(ValueError, match=r"strata \['s1'\] have `sampled` = 0"):
        be.recall_interval(s, method="normal-mle")
    with pytest.raises(ValueError, match="'beta-binomial-mcp' needs a sample from every stratum"):
        be.recall_interval(s, method="beta-binomial-mcp")
    res = be.recall_interval(s, method="beta-binomial-half", rng=0)  # the prior covers s1
    assert 0 < res.lower < res.upper < 1


def test_recall_needs_both_segments():
    only_retrieved = be.StratifiedSample([100, 300], [10, 20], [5, 9], [True, True])
    with pytest.raises(ValueError, match="recall needs strata in both segments"):
        be.recall_interval(only_retrieved)
    res = be.precision_interval(only_retrieved, rng=0)  # precision needs only the retrieved one
    assert 0 < res.lower < res.upper < 1


def test_koopman_refuses_unequal_sampling_rates(stratified_sample):
    with pytest.raises(ValueError, match="sampled at different rates.*top: 60/800"):
        be.recall_interval(stratified_sample, method="koopman")
    # Proportional allocation within each segment is a simple random sample per segment.
    proportional = be.StratifiedSample(
        [1000, 3000, 20000, 80000], [25, 75, 40, 160], [20, 30, 2, 3], [True, True, False, False]
    )
    summed = be.StratifiedSample.two_segments(N1=4000, n1=100, r1=50, N0=100000, n0=200, r0=5)
    res = be.recall_interval(proportional, method="koopman")
    ref = be.recall_interval(summed, method="koopman")
    assert (res.lower, res.upper) == (ref.lower, ref.upper)


@pytest.mark.slow
def test_both_engines_give_the_same_groups(webber_example):
    exact = be.recall_interval(webber_example, rng=0).posterior
    nuts = be.recall_interval(
        webber_example, engine="pymc", rng=0, draws=200, sampler_options={"tune": 200}
    ).posterior
    assert {"posterior", "observed_data", "constant_data"} <= set(exact.children)
    assert {"posterior", "observed_data", "constant_data", "sample_stats"} <= set(nuts.children)
    common = {"prevalence", "stratum_yield", "segment_yield", "recall"}
    assert common <= set(exact["posterior"].data_vars)
    assert common <= set(nuts["posterior"].data_vars)


def test_repr_names_strata(stratified_sample):
    text = repr(stratified_sample)
    assert "top (retrieved) N=800 n=60 r=50" in text and "rest (unretrieved)" in text
