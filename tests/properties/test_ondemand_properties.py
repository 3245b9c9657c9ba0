"""Properties of the joint estimators for any small universe hypothesis can find."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayeval._core import joint_is

SETTINGS = settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def universes(draw):
    """Membership, non-uniform p_i, labels and sample sizes of 1-5 systems over 2-12 items."""
    m = draw(st.integers(1, 5))
    size = draw(st.integers(2, 12))
    member = np.array(
        draw(
            st.lists(st.lists(st.booleans(), min_size=size, max_size=size), min_size=m, max_size=m)
        )
    )
    member[:, 0] |= ~member.any(axis=1)  # every system predicts something
    raw = np.array(draw(st.lists(st.floats(0.1, 10), min_size=m * size, max_size=m * size)))
    p = member * raw.reshape(m, size)
    p /= p.sum(axis=1, keepdims=True)
    f = np.array(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=size, max_size=size)))
    n = np.array(draw(st.lists(st.integers(1, 40), min_size=m, max_size=m)))
    return member, p, f, n


def _expectation_draws(member, p, f):
    """Every instance of X_j as a draw of group j, weighted n-free by |X_j| p_j(x)."""
    m = member.shape[0]
    codes = np.concatenate([np.flatnonzero(member[j]) for j in range(m)])
    group = np.repeat(np.arange(m), member.sum(axis=1))
    draws = joint_is.Draws(p=p[:, codes], group=group, f=f[codes], n0=1, member0=member[:, :1].T)
    omega = (member.sum(axis=1)[group] * p[group, codes])[None, :]
    return draws, omega


@SETTINGS
@given(universes())
def test_joint_precision_is_unbiased_for_any_sizes_and_weights(universe):
    member, p, f, n = universe
    weights = joint_is.mixing_weights(p @ p.T, n)
    draws, omega = _expectation_draws(member, p, f)
    expected = joint_is.weighted_estimates(
        draws, weights, omega, np.ones((1, 1)), estimator="joint"
    )["precision"][0]
    np.testing.assert_allclose(expected, p @ f, rtol=1e-10, atol=1e-12)


@SETTINGS
@given(universes())
def test_pooled_recall_numerator_and_denominator_are_unbiased(universe):
    # nu_i's numerator and denominator, with the pool's mixture, have expectations
    # |Y_i| / N and |Y ∩ X| / N (uniform p_0): their ratio is nu_i.
    member, p, f, n = universe
    draws, omega = _expectation_draws(member, p, f)
    out = joint_is.weighted_estimates(
        draws, np.eye(len(n)), omega, np.ones((1, 1)), estimator="joint"
    )
    true_in_pool = f * member.any(axis=0)
    if true_in_pool.sum() == 0:
        return
    nu = (member * f).sum(axis=1) / true_in_pool.sum()
    np.testing.assert_allclose(out["nu"][0], nu, rtol=1e-10)
