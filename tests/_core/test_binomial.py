"""Binomial intervals: statsmodels agreement and Webber's coverage figures (Figs. 4-7)."""

import numpy as np
import pytest
from scipy import special
from statsmodels.stats.proportion import proportion_confint

from bayeval._core.binomial import binomial_bounds

# bayeval name -> statsmodels proportion_confint name
STATSMODELS = {
    "wald": "normal",
    "wilson": "wilson",
    "agresti-coull": "agresti_coull",
    "clopper-pearson": "beta",
    "jeffreys": "jeffreys",
}


@pytest.mark.parametrize("method", list(STATSMODELS))
@pytest.mark.parametrize("n", [1, 7, 20, 101, 2500])
@pytest.mark.parametrize("prob", [0.5, 0.9, 0.95, 0.999])
def test_two_sided_agrees_with_statsmodels(method, n, prob):
    r = np.arange(n + 1)
    tail = (1 - prob) / 2
    low, high = binomial_bounds(r, n, method, tail)
    sm_low, sm_high = proportion_confint(r, n, alpha=1 - prob, method=STATSMODELS[method])
    np.testing.assert_allclose(low, sm_low, rtol=0, atol=1e-8)
    np.testing.assert_allclose(high, sm_high, rtol=0, atol=1e-8)


@pytest.mark.parametrize("method", list(STATSMODELS))
def test_one_sided_agrees_with_statsmodels(method):
    # statsmodels' alternative="smaller" returns the lower bound (upper set to 1), "larger"
    # the upper bound, each at level 1 - alpha.
    n, r, prob = 30, np.arange(31), 0.9
    low, _ = binomial_bounds(r, n, method, 1 - prob)
    _, high = binomial_bounds(r, n, method, 1 - prob)
    sm_low, _ = proportion_confint(
        r, n, alpha=1 - prob, method=STATSMODELS[method], alternative="smaller"
    )
    _, sm_high = proportion_confint(
        r, n, alpha=1 - prob, method=STATSMODELS[method], alternative="larger"
    )
    np.testing.assert_allclose(low, sm_low, atol=1e-8)
    np.testing.assert_allclose(high, sm_high, atol=1e-8)


def mean_coverage(method, n, prob=0.95):
    """Coverage averaged over a uniform prevalence, exactly: for each outcome r the covered
    prevalences form [low_r, high_r], and int_a^b binom.pmf(r; n, p) dp equals
    (I_b(r + 1, n - r + 1) - I_a(r + 1, n - r + 1)) / (n + 1)."""
    r = np.arange(n + 1)
    low, high = binomial_bounds(r, n, method, (1 - prob) / 2)
    if method == "jeffreys":  # Webber §2.7 forces the ends at r = 0 and r = n
        low[0], high[-1] = 0.0, 1.0
    mass = special.betainc(r + 1, n - r + 1, high) - special.betainc(r + 1, n - r + 1, low)
    return mass.sum() / (n + 1)


@pytest.mark.parametrize(
    ("method", "reported"),
    # Webber (2013) §2.5-2.7, Figures 4, 6, 7: mean coverage at n = 20, nominal 95%.
    [("clopper-pearson", 0.977), ("wilson", 0.953), ("jeffreys", 0.951)],
)
def test_mean_coverage_reproduces_webber(method, reported):
    # The paper prints three digits; the integral here is exact, so +/- 0.0005 is the rounding.
    assert mean_coverage(method, 20) == pytest.approx(reported, abs=0.0005)


def test_wald_coverage_about_85_percent():
    # Webber Figure 5 reports 85.1% for Wald; the exact uniform average is 0.8458 and a grid
    # of prevalences at 0.01 steps gives 0.853-0.856, so the paper's digit reflects its grid.
    # The issue asks for "about 85%": within one point.
    assert mean_coverage("wald", 20) == pytest.approx(0.85, abs=0.01)
    assert mean_coverage("wald", 20) < mean_coverage("wilson", 20) - 0.1
