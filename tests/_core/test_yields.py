"""Closed-form segment-yield laws and the quadrature for recall, precision and F1.

Oracles: scipy.stats.betabinom / beta for the single-segment laws; brute-force enumeration of
every (X1, X0) pair for small populations; seeded Monte Carlo with error-based tolerances for
large ones.
"""

import numpy as np
import pytest
from scipy import stats

from bayeval._core import yields as Y


@pytest.mark.parametrize(
    ("M", "a", "b"), [(10, 1.0, 1.0), (1900, 50.5, 50.5), (500, 0.5, 100.5), (300, 30.5, 0.5)]
)
def test_exact_support_matches_scipy(M, a, b):
    d = Y.beta_binomial_yield(7, M, a, b, max_atoms=4096)  # wide enough for unit atoms
    assert d.h == 1
    k = np.arange(M + 1)
    np.testing.assert_allclose(d.cdf(k + 7), stats.betabinom.cdf(k, M, a, b), atol=1e-10)


@pytest.mark.parametrize(
    ("M", "a", "b"),
    [
        (99_900, 3.5, 97.5),
        (10**6, 300.5, 700.5),
        (10**6, 0.5, 100.5),  # r = 0: singular at 0
        (10**7, 0.5, 1000.5),
        (5 * 10**7, 0.5, 5000.5),  # legal scale
        (10**5, 0.04, 2.04),  # most conservative prior of a sample of 2: very singular
        (10**6, 999.5, 0.5),  # r = n: singular at M
        (17_748, 0.5, 1.5),  # grid reaches past M
    ],
)
def test_binned_support_matches_scipy(M, a, b):
    # Measured maximum error over these cases: 3e-7 (midpoint rule with curvature correction,
    # linear density within bins, exact runs next to singular ends). 2e-6 would still catch
    # a bin misplaced by one (errors ~1e-3) or a lost correction (errors ~1e-5).
    d = Y.beta_binomial_yield(0, M, a, b)
    assert d.mass.size <= Y.MAX_ATOMS
    top = int(d.support[1])
    ks = np.unique(
        np.concatenate([np.geomspace(1, top, 100), np.linspace(0, top, 100)]).astype(int)
    )
    np.testing.assert_allclose(d.cdf(ks), stats.betabinom.cdf(ks, M, a, b), atol=2e-6)


@pytest.mark.parametrize(
    ("M", "a", "b"),
    [(1000, 2.5, 40.5), (10**6, 0.5, 100.5), (10**5, 50.5, 0.5), (500, 0.5, 0.5), (10, 1.0, 1.0)],
)
def test_continuous_law_is_the_scaled_beta(M, a, b):
    # Cells with corrected midpoint masses and linear density (exact incomplete beta next to a
    # singular end): the same accuracy budget as the discrete law.
    d = Y.beta_yield(5, M, a, b)
    p = np.concatenate([np.geomspace(1e-9, 1, 200), 1 - np.geomspace(1e-9, 1, 200)])
    np.testing.assert_allclose(d.cdf(5 + M * p), stats.beta.cdf(p, a, b), atol=2e-6)
    x, w = d.nodes()
    assert w.sum() == pytest.approx(1.0)
    sd = M * np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    assert abs(x @ w - (5 + M * a / (a + b))) < 1e-3 * sd


def _enumerate(measure, N1, n1, r1, N0, n0, r0, prior):
    """Exact law of the measure by enumerating every pair of unsampled yields."""
    x1 = np.arange(N1 - n1 + 1)
    x0 = np.arange(N0 - n0 + 1)
    p1 = stats.betabinom.pmf(x1, N1 - n1, prior + r1, prior + n1 - r1)
    p0 = stats.betabinom.pmf(x0, N0 - n0, prior + r0, prior + n0 - r0)
    values = Y.measure_from_yields(measure, (r1 + x1)[:, None], (r0 + x0)[None, :], N1)
    probs = p1[:, None] * p0[None, :]
    return np.broadcast_to(values, probs.shape).ravel(), probs.ravel()


SMALL_CASES = [
    (60, 20, 12, 300, 30, 2),
    (40, 40, 10, 500, 25, 0),  # retrieved segment fully sampled
    (80, 10, 0, 200, 20, 5),  # nothing relevant sampled in the retrieved segment
    (30, 5, 5, 90, 9, 0),
]


@pytest.mark.parametrize("case", SMALL_CASES)
@pytest.mark.parametrize("measure", ["recall", "precision", "f1"])
def test_measure_cdf_equals_enumeration(case, measure):
    N1, n1, r1, N0, n0, r0 = case
    values, probs = _enumerate(measure, *case, prior=0.5)
    y1 = Y.beta_binomial_yield(r1, N1 - n1, 0.5 + r1, 0.5 + n1 - r1)
    y0 = Y.beta_binomial_yield(r0, N0 - n0, 0.5 + r0, 0.5 + n0 - r0)
    ts = np.unique(np.concatenate([np.linspace(0, 1, 41), np.quantile(values, [0.1, 0.5, 0.9])]))
    exact = np.array([probs[values <= t + 1e-12].sum() for t in ts])
    np.testing.assert_allclose(Y.measure_cdf(measure, ts, y1, y0, N1), exact, atol=1e-9)
    # Quantiles: the smallest atom whose CDF reaches q (to the root finder's tolerance).
    order = np.argsort(values)
    cdf = np.cumsum(probs[order])
    for q in (0.025, 0.5, 0.975):
        expected = values[order][np.searchsorted(cdf, q - 1e-12)]
        got = Y.measure_ppf(measure, q, y1, y0, N1)[0]
        assert got == pytest.approx(expected, abs=1.5e-5)  # measure_ppf's tol is 1e-5


@pytest.mark.parametrize(
    "case",
    [
        (2000, 100, 50, 100_000, 100, 3),  # Webber's example
        (500_000, 400, 120, 4_500_000, 4600, 20),  # Webber §4.3 design scale
        (10**6, 1000, 300, 5 * 10**7, 5000, 0),  # legal scale, nothing found unretrieved
    ],
)
@pytest.mark.parametrize("measure", ["recall", "f1"])
def test_measure_cdf_matches_monte_carlo(case, measure):
    N1, n1, r1, N0, n0, r0 = case
    y1 = Y.beta_binomial_yield(r1, N1 - n1, 0.5 + r1, 0.5 + n1 - r1)
    y0 = Y.beta_binomial_yield(r0, N0 - n0, 0.5 + r0, 0.5 + n0 - r0)
    rng = np.random.default_rng(20131)
    size = 400_000
    draws = Y.sample_stratum_yields(
        rng, np.array([N1, N0]), np.array([n1, n0]), np.array([r1, r0]), 0.5, 0.5, size
    )
    values = Y.measure_from_yields(measure, draws[:, 0], draws[:, 1], N1)
    ts = np.quantile(values, [0.01, 0.025, 0.25, 0.5, 0.75, 0.975, 0.99])
    empirical = np.array([(values <= t).mean() for t in ts])
    exact = Y.measure_cdf(measure, ts, y1, y0, N1)
    se = np.sqrt(exact * (1 - exact) / size)
    # 4.5 standard errors: all 42 comparisons pass together with probability > 0.9997.
    assert np.all(np.abs(empirical - exact) <= 4.5 * se + 1e-6)


def test_ppf_is_inverse_of_cdf():
    y1 = Y.beta_binomial_yield(50, 1900, 50.5, 50.5)
    y0 = Y.beta_binomial_yield(3, 99_900, 3.5, 97.5)
    qs = np.array([0.001, 0.025, 0.3, 0.5, 0.975, 0.999])
    t = Y.measure_ppf("recall", qs, y1, y0, 2000)
    assert np.all(np.diff(t) > 0)
    np.testing.assert_allclose(Y.measure_cdf("recall", t, y1, y0, 2000), qs, atol=5e-5)


def test_fully_sampled_population_is_a_point_mass():
    y1 = Y.beta_binomial_yield(30, 0, 30.5, 10.5)
    y0 = Y.beta_binomial_yield(10, 0, 10.5, 40.5)
    assert Y.measure_ppf("recall", [0.025, 0.975], y1, y0, 40) == pytest.approx(0.75, abs=1.5e-5)
