"""Properties of the weakly monotone envelope (Sabharwal & Xue 2018, Theorem 2) for any input."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayeval._core.envelope import _ratio, bounds, ratio_range

SETTINGS = settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def envelopes(draw):
    """Observed points (ranks, yields), m, r_tilde, list length and a range of ranks."""
    n_items = draw(st.integers(300, 5000))
    m = draw(st.integers(1, 60))
    r_tilde = draw(st.integers(1, 200))
    ranks = draw(st.lists(st.integers(r_tilde + 1, n_items), min_size=1, max_size=5, unique=True))
    y = np.sort(np.array(ranks))
    fractions = draw(st.lists(st.floats(0, 1), min_size=y.size, max_size=y.size))
    yields = np.floor(np.array(fractions) * y)
    low = draw(st.integers(r_tilde, n_items))
    high = draw(st.integers(low, min(n_items, low + 600)))
    return y, yields, m, r_tilde, n_items, low, high


@SETTINGS
@given(case=envelopes())
def test_ratio_range_is_the_brute_force_range(case):
    y, yields, m, r_tilde, n_items, low, high = case
    ranks = np.arange(low, high + 1)
    ratio = _ratio(*bounds(ranks, y, yields, m, r_tilde, n_items))
    got = ratio_range(low, high, y, yields, m, r_tilde, n_items)
    np.testing.assert_allclose(got, (ratio.min(), ratio.max()), rtol=1e-12)


@SETTINGS
@given(case=envelopes())
def test_bounds_are_probabilities_and_exact_at_a_lone_point(case):
    y, yields, m, r_tilde, n_items, low, high = case
    lb, ub = bounds(np.arange(low, high + 1), y, yields, m, r_tilde, n_items)
    assert np.all((lb >= 0) & (lb <= 1) & (ub >= 0) & (ub <= 1))
    # through one point, the envelope pins p at that point
    lb, ub = bounds(y[:1], y[:1], yields[:1], m, r_tilde, n_items)
    np.testing.assert_allclose([lb[0], ub[0]], yields[0] / y[0], rtol=1e-12)
