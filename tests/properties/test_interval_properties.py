"""Properties every interval must have, for any counts hypothesis can find."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayeval as be

FAST_METHODS = [
    "naive-binomial",
    "normal-mle",
    "normal-laplace",
    "normal-agresti-coull",
    "koopman",
    "beta-jeffreys",
    "beta-binomial-uniform",
    "beta-binomial-half",
]


@st.composite
def two_segment_samples(draw):
    N1 = draw(st.integers(1, 10**6))
    N0 = draw(st.integers(1, 10**7))
    n1 = draw(st.integers(1, min(N1, 3000)))
    n0 = draw(st.integers(1, min(N0, 3000)))
    r1 = draw(st.integers(0, n1))
    r0 = draw(st.integers(0, n0))
    return be.StratifiedSample.two_segments(N1=N1, n1=n1, r1=r1, N0=N0, n0=n0, r0=r0)


SETTINGS = settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(
    sample=two_segment_samples(), method=st.sampled_from(FAST_METHODS), prob=st.floats(0.5, 0.99)
)
def test_interval_is_in_unit_range_and_contains_estimate(sample, method, prob):
    if sample.positives.sum() == 0:
        return  # recall is 0/0 for every plug-in method; covered by the forced-bound tests
    res = be.recall_interval(sample, method=method, prob=prob, rng=0)
    assert 0.0 <= res.lower <= res.upper <= 1.0
    assert res.lower - 1e-9 <= res.estimate <= res.upper + 1e-9


@SETTINGS
@given(sample=two_segment_samples(), method=st.sampled_from(FAST_METHODS))
def test_interval_widens_with_prob(sample, method):
    if sample.positives.sum() == 0:
        return
    res = be.recall_interval(sample, method=method, prob=0.8, rng=0)
    wider_lower, wider_upper = res.interval(0.95).values
    assert wider_lower <= res.lower + 2e-6 and wider_upper >= res.upper - 2e-6


@SETTINGS
@given(
    r=st.integers(0, 200),
    extra=st.integers(0, 200),
    method=st.sampled_from(list(be.intervals.BINOMIAL_METHODS)),
    prob=st.floats(0.5, 0.999),
)
def test_binomial_interval_properties(r, extra, method, prob):
    n = max(r + extra, 1)
    res = be.binomial_interval(min(r, n), n, method=method, prob=prob)
    assert 0.0 <= res.lower <= res.estimate <= res.upper <= 1.0
    narrower = res.interval(prob / 2 + 0.25).values  # a smaller probability, still above 0.5
    assert narrower[0] >= res.lower - 1e-12 and narrower[1] <= res.upper + 1e-12


@SETTINGS
@given(sample=two_segment_samples())
def test_posterior_bounds_agree_with_the_cdf(sample):
    """The quadrature interval's ends are the 2.5% and 97.5% points of the posterior CDF."""
    from bayeval._core import yields as Y

    res = be.recall_interval(sample, method="beta-binomial-half", rng=0)
    bounds = res._engine.inner
    r1, r0 = sample.positives.sum() > 0, sample.positives[1] > 0
    cdf = lambda t: Y.measure_cdf("recall", t, *bounds.laws)[0]  # noqa: E731
    if r1 and res.lower > 1e-5:
        assert cdf(res.lower - 1e-5) <= 0.025 + 1e-4
    if r0:
        assert cdf(res.upper) >= 0.975 - 1e-4
    assert np.isfinite(res.estimate)
