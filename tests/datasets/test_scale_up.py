"""Tests of the lazily scaled-up ranked lists of AdaStrat §5, ``bayeval.datasets.scale_up``."""

import time
import tracemalloc

import numpy as np
import pytest

from bayeval.datasets.scale_up import ScaledList, scale_up, window_average
from bayeval.oracles import BudgetExhausted, Oracle


def decaying_labels(n, seed=0, top=0.95, bottom=0.3):
    """A ranked list whose positive rate falls linearly from ``top`` to ``bottom``."""
    return np.random.default_rng(seed).random(n) < np.linspace(top, bottom, n)


def brute_window_average(labels, window):
    n = len(labels)
    out = np.empty(n)
    for i in range(n):
        lo = max(0, i - window // 2)
        hi = min(n, i - window // 2 + window)
        out[i] = np.mean(labels[lo:hi])
    return out


# --- the running average -----------------------------------------------------------------------


@pytest.mark.parametrize("window", [1, 2, 3, 10, 100, 101, 5_000])
def test_window_average_matches_its_definition(window):
    labels = decaying_labels(1_000, seed=window)
    np.testing.assert_allclose(
        window_average(labels, window), brute_window_average(labels, window), rtol=1e-14
    )


def test_window_average_truncates_at_the_ends():
    labels = decaying_labels(1_000)
    q = window_average(labels, 100)
    assert q[0] == labels[:50].mean()  # items 0..49: 0 before, 49 after
    assert q[50] == labels[:100].mean()  # the first full, centred window
    assert q[-1] == labels[-51:].mean()  # items N-51..N-1: 50 before, 0 after
    np.testing.assert_array_equal(window_average(labels, 1), labels.astype(float))


def test_window_one_keeps_the_original_precision_curve():
    labels = decaying_labels(2_000)
    big = scale_up(labels, 7, window=1, rng=0)
    j = np.arange(1, 2_001)
    expected = np.cumsum(labels) / j
    np.testing.assert_allclose(big.true_precision(j * 7), expected, rtol=1e-12)


# --- reproducibility ---------------------------------------------------------------------------


def test_same_seed_same_labels_and_different_seeds_differ():
    labels = decaying_labels(5_000)
    a = scale_up(labels, 10, rng=3).materialise()
    b = scale_up(labels, 10, rng=3).materialise()
    np.testing.assert_array_equal(a, b)
    c = scale_up(labels, 10, rng=4).materialise()
    # Independent draws with q in [0.3, 0.95] disagree on a fraction 2 q (1 - q) >= 0.095 of
    # the items; 0.05 is far below that and far above zero.
    assert (a != c).mean() > 0.05
    gen = scale_up(labels, 10, rng=np.random.default_rng(3))
    assert gen.materialise().shape == a.shape


def test_block_structure_is_exact():
    lst = ScaledList([1.0, 0.0, 1.0], 5, rng=0)
    np.testing.assert_array_equal(lst.materialise(), [1] * 5 + [0] * 5 + [1] * 5)
    assert len(lst) == lst.n_items == 15


def test_lazy_labels_equal_materialised_labels():
    labels = decaying_labels(3_000)
    big = scale_up(labels, 333, rng=5)  # 999,000 items: materialised in blocks of 2**20
    full = big.materialise()
    positions = np.random.default_rng(6).integers(0, big.n_items, 20_000)
    np.testing.assert_array_equal(big.label(positions), full[positions])
    # Batching and order do not matter; scalar and 2-d positions keep their shape.
    pieces = [big.label(p) for p in np.array_split(positions[::-1], 9)]
    np.testing.assert_array_equal(np.concatenate(pieces), full[positions[::-1]])
    assert big.label(123_456).shape == ()
    assert bool(big.label(123_456)) == full[123_456]
    np.testing.assert_array_equal(
        big.label(positions[:6].reshape(2, 3)), full[positions[:6]].reshape(2, 3)
    )
    # The oracle gives the same labels.
    np.testing.assert_array_equal(big.oracle().label(positions), full[positions])


# --- the expected precision curve --------------------------------------------------------------


def test_true_precision_is_the_expected_curve_exactly():
    q = np.random.default_rng(2).random(300)
    lst = ScaledList(q, 13, rng=0)
    expanded = np.repeat(q, 13)
    ranks = np.arange(1, lst.n_items + 1)
    np.testing.assert_allclose(lst.true_precision(ranks), np.cumsum(expanded) / ranks, rtol=1e-12)
    assert lst.true_precision(1).shape == ()
    assert lst.true_precision([[1, 2], [3, 4]]).shape == (2, 2)


def test_materialised_precision_matches_true_precision_within_binomial_error():
    labels = decaying_labels(20_000)
    factor = 50
    big = scale_up(labels, factor, rng=9)
    full = big.materialise()
    item_q = np.repeat(big.probabilities, factor)
    for r in [100, 1_000, 10_000, 100_000, 500_000, 1_000_000]:
        empirical = full[:r].mean()
        # The count of positives in the top r is a sum of independent Bernoulli(q_k), with
        # variance sum q_k (1 - q_k); a 4-SD band is missed with probability < 1e-4 per rank
        # for a random seed (the seed is fixed here, so the test is deterministic).
        sd = np.sqrt(np.sum(item_q[:r] * (1 - item_q[:r]))) / r
        assert abs(empirical - big.true_precision(r)) <= 4 * sd


def test_scaled_curve_follows_the_original_curve():
    labels = decaying_labels(36_000)
    big = scale_up(labels, 100, rng=0)
    j = np.array([1_000, 5_000, 20_000, 36_000])
    original = np.cumsum(labels)[j - 1] / j
    # sum_{i<j} q_i re-weights the labels: a label far from the top and from rank j keeps total
    # weight 1; labels within window/2 of rank j are split across it (at most 50 items' worth)
    # and each of the first window/2 labels gets a weight in (0.69, 1.2) from the truncated
    # windows (at most 50 x 0.31 items' worth). So the prefix counts differ by less than
    # window = 100 items and the precisions by less than 100 / j.
    assert np.all(np.abs(big.true_precision(j * 100) - original) < 100 / j)


# --- laziness at the paper's largest scale -----------------------------------------------------


def test_thousandfold_36k_list_stays_lazy_and_fast():
    labels = decaying_labels(36_000)
    tracemalloc.start()
    try:
        start = time.perf_counter()
        big = scale_up(labels, 1000, rng=1)
        oracle = big.oracle(budget=50_000)
        positions = np.random.default_rng(2).integers(0, big.n_items, 20_000)
        seen = oracle.label(positions)
        curve = big.true_precision(np.geomspace(1, big.n_items, 200).astype(np.int64))
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert big.n_items == 36_000_000
    assert isinstance(oracle, Oracle)
    assert oracle.annotations == np.unique(positions).size
    np.testing.assert_array_equal(seen, big.label(positions))
    assert curve.shape == (200,) and np.all((curve >= 0) & (curve <= 1))
    # Generous for a slow CI machine; it takes about 0.1 s.
    assert elapsed < 5.0
    # Only O(N) arrays are held: the window averages and their cumulative sums.
    held = [v for v in vars(big).values() if isinstance(v, np.ndarray)]
    assert held and all(v.size <= 36_001 for v in held)
    # Peak memory: one bool per item would be 36 MB and the labels as float64 288 MB. The
    # build needs a few O(N) arrays (<= 8 x 36,001 x 8 B = 2.3 MB) and labelling 20,000
    # positions about 30 temporaries of 20,000 x 8 B; 16 MB bounds both with room to spare.
    assert peak < 16_000_000
    with pytest.raises(ValueError, match=r"more than `max_items` = 10000000"):
        big.materialise()
    with pytest.raises(BudgetExhausted):
        oracle.label(np.arange(50_000))


def test_positions_beyond_two_to_the_32_use_the_high_counter_word():
    lst = ScaledList([0.5], 2**33, rng=0)
    low = lst.label(np.arange(1_000))
    high = lst.label(np.arange(1_000) + 2**32)
    assert (low != high).any()
    assert abs(lst.label(np.arange(2**32, 2**32 + 20_000)).mean() - 0.5) < 0.02


# --- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([0, 1, 2], 10), {}, r"`labels` not 0/1: .* entry 2 is 2\."),
        (([], 10), {}, "`labels` must contain at least one label"),
        (([0, 1], 0), {}, r"`factor` must be an integer >= 1; got 0\."),
        (([0, 1], 2.5), {}, r"`factor` must be an integer >= 1; got 2\.5\."),
        (([0, 1], 2), {"window": 0}, r"`window` must be an integer >= 1; got 0\."),
        (([0, 1], 2), {"rng": "seed"}, "`rng` must be None, an int seed"),
    ],
)
def test_scale_up_validates_its_arguments(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        scale_up(*args, **kwargs)


def test_scaled_list_validates_probabilities_ranks_and_positions():
    allowed = r"`probabilities` must be a non-empty 1-d array of numbers in the closed interval"
    with pytest.raises(ValueError, match=allowed + r" \[0, 1\]; got \[0\.5, 1\.5\] \(entry 1"):
        ScaledList([0.5, 1.5], 2)
    with pytest.raises(ValueError, match=allowed + r".*; got \[\]\."):
        ScaledList([], 2)
    lst = ScaledList([0.5, 0.2], 10, rng=0)
    with pytest.raises(ValueError, match=r"`ranks` must be in \[1, n_items\] = \[1, 20\]"):
        lst.true_precision([1, 21])
    with pytest.raises(
        ValueError, match=r"`ranks` must be in \[1, n_items\] = \[1, 20\]; entry 0 is 0\."
    ):
        lst.true_precision(0)
    with pytest.raises(ValueError, match=r"`positions` must be in \[0, n_items\) = \[0, 20\)"):
        lst.label(20)
    with pytest.raises(ValueError, match=r"`max_items` must be an integer >= 1"):
        lst.materialise(max_items=0)
    assert repr(lst) == "ScaledList(n_items=20, blocks=2, factor=10)"
