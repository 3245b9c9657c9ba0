"""The envelope of weakly monotone precision functions (Sabharwal & Xue 2018, Section 3).

Paper: ../shared/papers/adastrat-sabharwal-xue-2018.txt, Definitions 1-2, Theorem 2, Eq. 3-4,
Lemmas 1-2. Oracles here are brute force: the envelope is evaluated at every rank of short lists
whose weak monotonicity is computed exactly (the smallest ``r_tilde`` for a given ``m``).
"""

import math

import numpy as np
import pytest

from bayeval._core.envelope import _ratio, bounds, height, ratio_range


def smallest_r_tilde(p, m):
    """Smallest r with p(r1) >= p(r2) for all r1 >= r, r2 >= r1 + m (Definition 1), 1-based."""
    n = p.size
    suffix_max = np.maximum.accumulate(p[::-1])[::-1]
    r1 = np.arange(1, n - m + 1)
    bad = r1[p[r1 - 1] < suffix_max[r1 - 1 + m]]
    return int(bad.max()) + 1 if bad.size else 1


def random_list(gen):
    """A short 0/1 list with decreasing density, sometimes with a run of positives inserted."""
    n = int(gen.integers(30, 160))
    decay = np.exp(-np.arange(n) / gen.uniform(10, 200))
    density = np.clip(gen.uniform(0.2, 1) * decay + gen.uniform(-0.2, 0.3), 0, 1)
    labels = gen.random(n) < density
    if gen.random() < 0.5:
        start = int(gen.integers(0, n - 5))
        labels[start : start + int(gen.integers(1, 12))] = True
    return labels


def test_definition_2_by_hand():
    # y = 100, p(y) = 0.6, m = 10: k = floor(6) = 6; pieces of ub and lb at chosen ranks
    lb, ub = bounds([89, 90, 94, 99, 100, 103, 106, 107, 110, 111], [100], [60], 10)
    expected_ub = [60 / 89, 60 / 90, 60 / 94, 60 / 99, 0.6, 63 / 103, 66 / 106, 66 / 107,
                   66 / 110, 0.6]  # fmt: skip
    expected_lb = [0.6, 54 / 90, 54 / 94, 59 / 99, 0.6, 60 / 103, 60 / 106, 60 / 107,
                   60 / 110, 60 / 111]  # fmt: skip
    np.testing.assert_allclose(ub, expected_ub, rtol=1e-14)
    np.testing.assert_allclose(lb, expected_lb, rtol=1e-14)


def test_definition_2_fallbacks_near_r_tilde_and_n():
    # y - m < r_tilde: below y only counting applies; y + m > N: above y only counting
    lb, _ = bounds([91, 93], [100], [60], 10, r_tilde=95)
    np.testing.assert_allclose(lb, [(60 - 9) / 91, (60 - 7) / 93])
    _, ub = bounds([108, 110], [100], [60], 10, n_items=105)
    np.testing.assert_allclose(ub, [(60 + 8) / 108, (60 + 10) / 110])


def test_theorem_2_holds_on_random_weakly_monotone_lists():
    """lb(v; y) <= p(v) <= ub(v; y) for all r_tilde <= v <= N, y > r_tilde, every list."""
    gen = np.random.default_rng(20180806)
    checked = literal_failures = 0
    for _ in range(400):
        labels = random_list(gen)
        n, m = labels.size, int(gen.integers(2, 15))
        p = np.cumsum(labels) / np.arange(1, n + 1)
        r_tilde = smallest_r_tilde(p, m)
        if r_tilde > n - 5:
            continue
        yields = np.cumsum(labels)
        v = np.arange(r_tilde, n + 1)
        for y in range(r_tilde + 1, n + 1):
            lb, ub = bounds(v, [y], [yields[y - 1]], m, r_tilde=r_tilde, n_items=n)
            assert np.all(lb <= p[v - 1] + 1e-12) and np.all(p[v - 1] <= ub + 1e-12)
            checked += 1
            literal = bounds(v, [y], [yields[y - 1]], m)  # Definition 2 without the fallbacks
            literal_failures += bool(np.any(literal[0] > p[v - 1] + 1e-12))
            literal_failures += bool(np.any(literal[1] < p[v - 1] - 1e-12))
    assert checked > 5000
    # Theorem 2 as printed ("v, y > r_tilde") is not enough near r_tilde and N: the fallbacks
    # of bounds() are needed (this guards against dropping them)
    assert literal_failures > 0


def test_bounds_grow_with_integer_yield():
    """The guarantee evaluates the envelope at the extreme integer yields: needs monotonicity."""
    v = np.arange(150, 400)
    for m in (1, 7, 40):
        previous = None
        for big_y in range(0, 201):
            current = np.stack(bounds(v, [200], [big_y], m, r_tilde=100, n_items=1000))
            if previous is not None:
                assert np.all(current >= previous - 1e-15)
            previous = current


def test_ratio_range_and_height_are_the_brute_force_extremes():
    gen = np.random.default_rng(7)
    for case in range(2000):
        k = int(gen.integers(1, 6))
        m = int(gen.integers(1, 30))
        y = np.sort(gen.choice(np.arange(200, 2000), k, replace=False))
        big_y = gen.uniform(0, 1, k) * y
        if case % 2:
            big_y = np.round(big_y)
        # every third case: a separate upper envelope, as for confidence limits
        upper_y = np.minimum(y, big_y + gen.uniform(-0.1, 0.3, k) * y) if case % 3 == 0 else big_y
        low = int(gen.integers(150, 1500))
        high = low + int(gen.integers(0, 800))
        r_tilde, n = int(gen.integers(0, 200)), int(gen.choice([2000, 10**9]))
        ranks = np.arange(low, high + 1)
        ratio = _ratio(bounds(ranks, y, big_y, m, r_tilde, n)[0],
                       bounds(ranks, y, upper_y, m, r_tilde, n)[1])  # fmt: skip
        got = ratio_range(low, high, y, big_y, m, r_tilde, n, upper_yields=upper_y)
        np.testing.assert_allclose(got, (ratio.min(), ratio.max()), rtol=1e-12)
        if case % 3:
            assert height(low, high, y, big_y, m, r_tilde, n) == got[1]


def test_crossing_envelope_has_ratios_below_one_and_no_height_from_them():
    # estimates that contradict monotonicity: p(1000) = 0.5 but p(2000) = 0.9
    low, high = ratio_range(1000, 2000, [1000, 2000], [500, 1800], 10)
    assert low < 1 and height(1000, 2000, [1000, 2000], [500, 1800], 10) == high
    ranks = np.arange(1000, 2001)
    np.testing.assert_allclose(low, _ratio(*bounds(ranks, [1000, 2000], [500, 1800], 10)).min())
    assert height(1000, 2000, [1000, 2000], [0, 0], 10) == 1.0  # both bounds 0: known exactly
    assert height(1000, 2000, [1000, 2000], [0, 10], 10) == 0.0  # ub = 0 < lb: all crossing
    # near the end of the list, nothing stops the items after y from being positive: lb = 0
    assert height(1000, 1005, [1000], [0], 10, n_items=1005) == math.inf


@pytest.mark.parametrize("lemma", [1, 2])
def test_lemmas_1_and_2(lemma):
    """Two points with p(l) / p(r) or Y(r) / Y(l) within (1 + eps)^2 leave height <= (1 + eps)^2."""
    gen = np.random.default_rng(lemma)
    eps = 0.03
    limit = (1 + eps) ** 2
    for _ in range(2000):
        m = int(gen.integers(1, 200))
        l_tilde = math.ceil(limit * m / (2 * eps + eps**2))
        low = int(l_tilde * gen.uniform(1, 3))
        high = int(low * gen.uniform(1.0, 20.0)) + 1
        if lemma == 1:
            p_low = gen.uniform(0.05, 1)
            p_high = max(p_low / gen.uniform(1, limit), p_low * low / high)  # Y non-decreasing
            yields = [p_low * low, p_high * high]
        else:
            y_low = gen.uniform(0.05, 1) * low
            yields = [y_low, min(high, y_low * gen.uniform(1, limit))]
        h = height(low, high, [low, high], yields, m, l_tilde, 10**12)
        assert h <= limit * (1 + 1e-12)
