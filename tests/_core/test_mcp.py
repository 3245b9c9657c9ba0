"""Tests for the most conservative prior (Webber 2013, §2.8, Eq. 18)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import optimize, special, stats

from bayeval._core import mcp
from bayeval._core.mcp import (
    MCP_BOUNDS,
    expected_information_gain,
    most_conservative_prior,
)


def literal_eq18(alpha, beta, N, n):
    """Eq. 18 transcribed term by term, with Python scalars and no vectorisation."""
    lg = math.lgamma
    total = []
    for x in range(n + 1):
        for r in range(x, N - n + x + 1):
            log_front = (lg(alpha + beta) - lg(alpha) - lg(beta) - lg(alpha + beta + N)) + (
                lg(alpha + r) + lg(beta + N - r)
            )
            weight = math.comb(n, x) * math.comb(N - n, r - x) * math.exp(log_front)
            gamma_ratio = math.exp(
                lg(alpha) + lg(beta) + lg(alpha + beta + n)
                - lg(alpha + x) - lg(beta + n - x) - lg(alpha + beta)
            )  # fmt: skip
            inside = math.comb(N - n, r - x) * gamma_ratio / math.comb(N, r)
            total.append(weight * math.log(inside))
    return math.fsum(total)


def expected_kl_from_pmfs(alpha, beta, N, n):
    """sum_x P(x) KL(P(R | x) || P(R)), by Bayes' rule on scipy's pmfs (no Eq. 18)."""
    r = np.arange(N + 1)
    prior = stats.betabinom.pmf(r, N, alpha, beta)
    total = 0.0
    marginal = []
    for x in range(n + 1):
        likelihood = stats.hypergeom.pmf(x, N, r, n)  # P(x | R = r)
        joint = prior * likelihood
        p_x = joint.sum()
        marginal.append(p_x)
        posterior = joint / p_x
        # Conjugacy (Webber §2.7): R - x | x ~ BB(N - n, alpha + x, beta + n - x).
        shifted = np.zeros(N + 1)
        shifted[x : x + N - n + 1] = stats.betabinom.pmf(
            np.arange(N - n + 1), N - n, alpha + x, beta + n - x
        )
        np.testing.assert_allclose(posterior, shifted, rtol=1e-9, atol=1e-15)
        total += p_x * special.rel_entr(posterior, prior).sum()
    # The marginal of the sample count is BB(n, alpha, beta).
    np.testing.assert_allclose(
        marginal, stats.betabinom.pmf(np.arange(n + 1), n, alpha, beta), rtol=1e-9
    )
    return total


SHAPES = [(1.0, 1.0), (0.5, 0.5), (0.3, 2.5), (4.0, 0.7), (1e-3, 1e-3), (10.0, 10.0)]
SMALL_SIZES = [(1, 1), (5, 1), (5, 2), (7, 7), (9, 4), (12, 3), (12, 11), (12, 12)]


# --- Eq. 18 itself -------------------------------------------------------------------------


@pytest.mark.parametrize(("alpha", "beta"), SHAPES)
@pytest.mark.parametrize(("N", "n"), SMALL_SIZES)
def test_matches_literal_transcription(alpha, beta, N, n):
    expected = literal_eq18(alpha, beta, N, n)
    got = expected_information_gain(alpha, beta, N, n)
    assert got == pytest.approx(expected, rel=1e-10, abs=1e-14)


@pytest.mark.parametrize(("alpha", "beta"), [(1.0, 1.0), (0.5, 0.5), (0.2, 3.0), (0.05, 0.05)])
@pytest.mark.parametrize(("N", "n"), [(6, 2), (12, 5), (30, 30), (60, 7), (200, 30)])
def test_is_expected_kl_divergence_prior_to_posterior(alpha, beta, N, n):
    expected = expected_kl_from_pmfs(alpha, beta, N, n)
    got = expected_information_gain(alpha, beta, N, n)
    assert got == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(("N", "n"), [(12, 5), (100, 10), (1000, 50)])
@pytest.mark.parametrize(("alpha", "beta"), [(0.3, 2.5), (1e-3, 7.0), (1.0, 2.0)])
def test_symmetric_in_alpha_and_beta(alpha, beta, N, n):
    forward = expected_information_gain(alpha, beta, N, n)
    backward = expected_information_gain(beta, alpha, N, n)
    # ~1e-12 absolute: the log-binomials of N = 1000 are ~700 in size.
    assert forward == pytest.approx(backward, rel=1e-9, abs=1e-12)


def test_blocked_evaluation_matches_single_block(monkeypatch):
    whole = expected_information_gain(0.4, 0.9, 300, 40)
    monkeypatch.setattr(mcp, "_BLOCK_CELLS", 1000)  # 261 cells per row: 3 rows per block
    assert expected_information_gain(0.4, 0.9, 300, 40) == pytest.approx(whole, rel=1e-12)


def test_no_sample_gains_nothing():
    assert expected_information_gain(0.5, 0.5, 50, 0) == 0.0
    assert expected_information_gain(0.5, 0.5, 0, 0) == 0.0


def test_census_gain_is_prior_entropy():
    # With n = N the sample reveals R, so the gain is the entropy of the prior on R.
    N, a, b = 40, 0.7, 1.3
    entropy = stats.betabinom(N, a, b).entropy()
    assert expected_information_gain(a, b, N, N) == pytest.approx(entropy, rel=1e-10)


def test_accepts_whole_floats_and_numpy_scalars():
    base = expected_information_gain(1.0, 2.0, 10, 3)
    assert expected_information_gain(np.float64(1), 2, 10.0, np.int64(3)) == base


# --- shape of Eq. 18 along alpha = beta ------------------------------------------------------


@pytest.mark.parametrize(("N", "n"), [(12, 3), (50, 5), (100, 10), (200, 50), (1000, 800)])
def test_concave_on_diagonal_up_to_beyond_the_maximiser(N, n):
    # Concave in alpha = beta from near 0 to past the maximiser (numerically, to ~1.8 alpha*).
    top = most_conservative_prior(N, n)
    grid = np.linspace(1e-3, 1.5 * top, 80)
    values = np.array([expected_information_gain(a, a, N, n) for a in grid])
    assert np.all(np.diff(values, 2) <= 1e-12)


@pytest.mark.parametrize(("N", "n"), [(12, 3), (100, 10), (1000, 100)])
def test_not_concave_for_large_alpha(N, n):
    # Dyer & Pierce's global concavity does not hold: past the maximiser D decreases towards
    # its alpha -> infinity limit (the binomial(N, 1/2) prior) and is convex there.
    grid = np.linspace(3.0, 10.0, 30)
    values = np.array([expected_information_gain(a, a, N, n) for a in grid])
    assert np.all(np.diff(values) < 0)
    assert np.all(np.diff(values, 2) > 0)


@pytest.mark.parametrize(("N", "n"), [(12, 2), (20, 10), (100, 3), (100, 10), (1000, 800)])
def test_unimodal_on_diagonal(N, n):
    grid = np.geomspace(MCP_BOUNDS[0], MCP_BOUNDS[1], 120)
    slopes = np.sign(np.diff([expected_information_gain(a, a, N, n) for a in grid]))
    assert np.count_nonzero(slopes[1:] != slopes[:-1]) == 1


# --- the most conservative prior -------------------------------------------------------------


@pytest.mark.parametrize(
    ("N", "n"), [(12, 2), (12, 11), (50, 5), (100, 2), (100, 50), (1000, 100), (1000, 999)]
)
def test_solution_is_a_maximum(N, n):
    top = most_conservative_prior(N, n)
    best = expected_information_gain(top, top, N, n)
    for a in (top * 0.99, top * 0.999, top * 1.001, top * 1.01, top - 0.01, top + 0.01):
        assert best >= expected_information_gain(a, a, N, n)


@pytest.mark.parametrize(("N", "n"), [(12, 5), (50, 3)])
def test_joint_maximum_is_on_the_diagonal(N, n):
    top = most_conservative_prior(N, n)
    result = optimize.minimize(
        lambda t: -expected_information_gain(math.exp(t[0]), math.exp(t[1]), N, n),
        x0=[math.log(0.05), math.log(2.0)],
        method="Nelder-Mead",
        options={"xatol": 1e-7, "fatol": 1e-13, "maxiter": 2000},
    )
    np.testing.assert_allclose(np.exp(result.x), [top, top], rtol=1e-4)


@pytest.mark.parametrize(
    ("N", "n"),
    [(N, n) for N in (4, 20, 100, 1000) for n in (4, 5, 10, 50, 100, 500) if n <= N],
)
def test_solutions_in_paper_range_from_four_samples(N, n):
    # n = N gives 1 up to the search tolerance.
    assert 0.1 <= most_conservative_prior(N, n) <= 1.0 + 1e-6


@pytest.mark.parametrize(
    ("N", "n", "low", "high"),
    [(20, 2, 0.05, 0.06), (100, 2, 0.04, 0.05), (1000, 2, 0.04, 0.045), (100, 3, 0.09, 0.1),
     (1000, 3, 0.08, 0.09)],
)  # fmt: skip
def test_solutions_below_paper_range_for_two_or_three_samples(N, n, low, high):
    # Webber's "solutions fall in [0.1, 1.0]" fails for n = 2 (and n = 3 once N >~ 25).
    assert low < most_conservative_prior(N, n) < high


@pytest.mark.parametrize("N", [2, 12, 100, 1000])
def test_census_gives_uniform_prior(N):
    # n = N: D is the prior's entropy, maximised by the uniform BB(N, 1, 1).
    assert most_conservative_prior(N, N) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("N", [1, 2, 12, 100, 1000])
def test_single_sample_collapses_to_lower_bound(N):
    assert most_conservative_prior(N, 1) == MCP_BOUNDS[0]


@pytest.mark.parametrize("N", [2, 3, 12, 1000])
def test_single_sample_gain_increases_as_alpha_shrinks(N):
    # Why n = 1 returns the lower bound: D(alpha, alpha; N, 1) decreases in alpha throughout.
    grid = np.geomspace(MCP_BOUNDS[0], MCP_BOUNDS[1], 100)
    values = [expected_information_gain(a, a, N, 1) for a in grid]
    assert np.all(np.diff(values) < 0)
    assert values[0] < math.log(2)


def test_single_sample_bounded_search_agrees():
    # The bounded search itself (bypassing the n = 1 shortcut) runs into the lower bound.
    grid = mcp._Grid(100, 1)
    result = optimize.minimize_scalar(
        lambda t: -grid.information_gain(math.exp(t), math.exp(t)),
        bounds=(math.log(MCP_BOUNDS[0]), math.log(MCP_BOUNDS[1])),
        method="bounded",
    )
    assert math.exp(result.x) == pytest.approx(MCP_BOUNDS[0], rel=1e-3)


def test_grows_with_sample_size():
    values = [most_conservative_prior(1000, n) for n in (2, 3, 5, 10, 50, 100, 500, 1000)]
    assert np.all(np.diff(values) > 0)


def test_size_cap_is_applied():
    # Webber §2.8 limits N to 1000 and n to 1000 - min(N - n, 200), read as ceilings.
    assert most_conservative_prior(10**6, 500) == most_conservative_prior(1000, 500)
    assert most_conservative_prior(10**6, 2) == most_conservative_prior(1000, 2)
    assert most_conservative_prior(10**6, 10**6 - 50) == most_conservative_prior(1000, 950)
    assert most_conservative_prior(5000, 4900) == most_conservative_prior(1000, 900)
    assert most_conservative_prior(1001, 1001) == most_conservative_prior(1000, 1000)
    # No cap at N <= 1000, and n still matters above it.
    assert most_conservative_prior(1000, 2) != most_conservative_prior(1000, 800)
    assert most_conservative_prior(10**5, 2) != most_conservative_prior(10**5, 50)


def test_capped_solution_close_to_uncapped():
    # The cap is harmless because the solution converges in N for fixed n: the uncapped
    # solve at N = 10**5 (values from the exact solver, mcp._solve) is within 0.005.
    for n in (5, 10, 50):
        assert abs(mcp._solve(10**5, n) - most_conservative_prior(10**5, n)) < 0.005


def test_cached_on_capped_sizes():
    mcp._solve.cache_clear()
    most_conservative_prior(10**5, 7)
    most_conservative_prior(10**6, 7)  # both solved at (1000, 7)
    info = mcp._solve.cache_info()
    assert (info.misses, info.hits) == (1, 1)


def test_no_sample_has_no_most_conservative_prior():
    with pytest.raises(ValueError, match=r"`n` \(sampled\).*identically 0"):
        most_conservative_prior(100, 0)


# --- input validation ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["alpha", "beta"])
@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, "1", None, True])
def test_bad_shape_is_named(name, bad):
    kwargs = {"alpha": 1.0, "beta": 1.0, "N": 10, "n": 3, name: bad}
    with pytest.raises(ValueError, match=rf"`{name}`.*{re.escape(repr(bad))}"):
        expected_information_gain(**kwargs)


@pytest.mark.parametrize("function", ["gain", "prior"])
@pytest.mark.parametrize(
    ("N", "n", "pattern"),
    [
        (-1, 0, r"`N` \(population\).*-1"),
        (10.5, 3, r"`N` \(population\).*10\.5"),
        ("10", 3, r"`N` \(population\).*'10'"),
        (math.inf, 3, r"`N` \(population\).*inf"),
        (10, -2, r"`n` \(sampled\).*-2"),
        (10, 2.5, r"`n` \(sampled\).*2\.5"),
        (10, False, r"`n` \(sampled\).*False"),
        (10, 11, r"`n` \(sampled\).*`N` \(population\) = 10.*11"),
    ],
)
def test_bad_sizes_are_named(function, N, n, pattern):
    with pytest.raises(ValueError, match=pattern):
        if function == "gain":
            expected_information_gain(1.0, 1.0, N, n)
        else:
            most_conservative_prior(N, n)
