"""AdaStrat (Sabharwal & Xue 2018) against its guarantees, Theorems 4 and 8, and Lemmas 1-2.

Paper: ../shared/papers/adastrat-sabharwal-xue-2018.txt (Algorithm 1, Eq. 5, Section 4.3).
The lists are the deterministic ones of test_algorithms.py, on which weak monotonicity
(Definition 1, i.e. LogStrat's A.1 with the same ``r_tilde`` and ``m``) is verified, not presumed.
AdaStrat is probabilistic: with probability <= delta some rank may leave its envelope. The
Hoeffding + union bound behind Eq. 5 is conservative, so with fixed seeds we assert zero
violations over several seeds, with margins.
"""

import math

import numpy as np
import pytest

from bayeval import curves
from bayeval._core.envelope import height
from bayeval.curves.planning import adastrat_sample_size
from bayeval.oracles import CallableOracle, LabelOracle, NoisyOracle

SEEDS = range(5)


def precision(labels):
    return np.cumsum(labels) / np.arange(1, labels.size + 1)


def low_discrepancy(n, a=0.55, b=0.4, c=0.5, scale=1000.0):
    """Labels whose prefix counts are floor(a r + b scale^c r^(1-c) / (1-c)) (test_algorithms)."""
    r = np.arange(n + 1, dtype=np.float64)
    total = a * r + b * scale**c * r ** (1 - c) / (1 - c)
    return np.diff(np.floor(total + 1e-9).astype(np.int64)).astype(bool)


def a1_violations(p, r_tilde, m):
    """Ranks r1 >= r_tilde with p(r1) < p(r2) for some r2 >= r1 + m (Definition 1 fails)."""
    suffix_max = np.maximum.accumulate(p[::-1])[::-1]
    r1 = np.arange(r_tilde, p.size - m + 1)
    return r1[p[r1 - 1] < suffix_max[r1 - 1 + m]]


def outside(res, p, ranks):
    return (p[ranks - 1] < res.lower(ranks)) | (p[ranks - 1] > res.upper(ranks))


@pytest.fixture(scope="module")
def smooth():
    """3e5 items, p decreasing from 1 to 0.595; weakly monotone at m = 103 beyond 3400."""
    labels = low_discrepancy(300_000)
    return labels, precision(labels)


def power_oracle(n, exponent):
    """Labels with prefix counts floor(0.9 r) up to 1000, floor(0.9 r^(1 - a) 1000^a) after.

    p is 0.9 up to rank 1000 and then decays like r^-a (the count's slope stays below 0.9, so
    every prefix count is exactly the number of positive labels).
    """

    def count(r):
        r = np.asarray(r, dtype=np.float64)
        decayed = 0.9 * np.maximum(r, 1000.0) ** (1 - exponent) * 1000.0**exponent
        return np.floor(np.where(r < 1000, 0.9 * r, decayed) + 1e-9)

    def label(i):
        return count(i + 1) > count(i)

    return CallableOracle(label, n_items=n, vectorized=True), count


# --------------------------------------------------------------------------- guarantees


def test_bounds_hold_at_every_rank_over_seeds(smooth):
    labels, p = smooth
    plan = curves.plan_adastrat(labels.size)
    assert a1_violations(p, plan.r_tilde, plan.m).size == 0  # Definition 1 holds
    assert p[plan.r_tilde - 1 :].min() >= plan.p_min
    ranks = np.arange(1, labels.size + 1)
    beyond = ranks > plan.l_tilde
    b, eps = plan.beta, plan.epsilon
    for seed in SEEDS:
        res = curves.adastrat(LabelOracle(labels), labels.size, rng=seed)
        assert not outside(res, p, ranks).any()
        est = res.at(ranks)
        assert np.all(res.lower(ranks) <= est) and np.all(est <= res.upper(ranks))
        # Theorem 3 (with Hoeffding's low side 2 - beta, as for LogStrat)
        ratio = (est / p)[beyond]
        assert ratio.min() >= 1 / (b * (1 + eps)) and ratio.max() <= (1 + eps) / (2 - b)
        # in practice the estimate is far inside the guarantee
        assert np.abs(np.log(ratio)).max() < math.log(1.04)
        np.testing.assert_array_equal(res.at(ranks[~beyond]), p[~beyond])


def test_every_final_range_meets_the_stopping_rule(smooth):
    """After the recursion and the re-check, each range between corners is accepted."""
    labels, _ = smooth
    res = curves.adastrat(LabelOracle(labels), labels.size, rng=1)
    limit = (1 + res.plan.epsilon) ** 2
    corners = res.corners
    assert corners[0] == res.plan.l_tilde and corners[-1] == labels.size
    np.testing.assert_array_equal(np.sort(res.queried), corners[1:])
    for low, high in zip(corners[:-1], corners[1:], strict=True):
        h = height(int(low), int(high), corners, res.point_yields, res.m, res.r_tilde, res.n_items)
        assert high <= low * limit or h <= limit


# --------------------------------------------------------------------------- queries


def test_fewer_queries_and_annotations_than_logstrat(smooth):
    labels, _ = smooth
    res = curves.adastrat(LabelOracle(labels), labels.size, rng=0)
    log = curves.logstrat(LabelOracle(labels), labels.size, rng=0)
    assert res.n_queries <= res.plan.max_queries  # Theorem 4
    assert res.n_queries < log.n_queries / 5  # 10 vs 150
    assert res.annotations < 0.7 * log.annotations  # 19,752 vs 32,676
    assert res.annotations <= res.plan.annotations


@pytest.mark.parametrize("exponent", [0.0, 0.2, 0.5, 0.8, 1.0])
def test_theorem_4_on_power_law_curves(exponent):
    # p(r) ~ r^-exponent between flat (Lemma 1) and fastest decay (Lemma 2); 0.5 is the
    # hardest for the envelope. Never more queries than Theorem 4's bound or LogStrat.
    # (p_min = 0.5 only sets the sample size here: the query count is what is tested)
    n = 10**8
    oracle, _ = power_oracle(n, exponent)
    res = curves.adastrat(oracle, n, rng=0)
    assert res.n_queries <= res.plan.max_queries
    assert res.n_queries <= curves.plan_logstrat(n).n_queries
    assert res.annotations <= res.plan.annotations
    assert res.crossing is None
    if exponent in (0.0, 1.0):
        assert res.n_queries <= 2  # Lemmas 1 and 2


def test_a_rising_list_crosses_and_warns():
    # the prefix is all negative and the rest all positive: p rises, Definition 1 fails, and
    # the guaranteed envelope crosses (p(l_tilde) = 0 forces upper = 0 beyond l_tilde + m)
    n = 10**6
    oracle = CallableOracle(lambda i: np.asarray(i) >= 3400, n_items=n, vectorized=True)
    with pytest.warns(RuntimeWarning, match="crosses"):
        res = curves.adastrat(oracle, n, rng=0)
    assert res.crossing is not None and res.crossing[1] == n
    assert res.n_queries == 1  # a crossing is not split (splitting cannot resolve it)


def test_lemma_1_flat_curve_stops_after_one_query():
    oracle = CallableOracle(lambda i: i % 4 != 3, n_items=10**7, vectorized=True)
    res = curves.adastrat(oracle, 10**7, rng=0)
    assert res.n_queries == 1 and list(res.queried) == [10**7]
    ranks = np.geomspace(3401, 10**7, 50).astype(np.int64)
    assert np.all(np.abs(res.at(ranks) / 0.75 - 1) < 0.02)


def test_lemma_2_fastest_decay_stops_after_one_query():
    # every item after the prefix is negative: p(r) = Y(l_tilde) / r, the fastest decay
    n = 10**7
    oracle = CallableOracle(lambda i: (i < 3400) & (i % 3 == 0), n_items=n, vectorized=True)
    res = curves.adastrat(oracle, n, rng=0)  # the sampled strata are all negative
    assert res.n_queries == 1
    ranks = np.geomspace(3401, n, 50).astype(np.int64)
    np.testing.assert_allclose(res.at(ranks), 1134 / ranks, rtol=1e-12)


# --------------------------------------------------------------------------- sampling


def test_stratum_densities_follow_theorem_8(smooth):
    labels, _ = smooth
    res = curves.adastrat(LabelOracle(labels), labels.size, rng=2)
    k = res.n_queries
    _, s = adastrat_sample_size(k, delta=0.05, beta=1.05, p_min=0.5, eta=0.0)
    positions, observed = res.labels
    assert res.annotations == positions.size  # every label is a distinct item
    np.testing.assert_array_equal(observed, labels[positions])
    bounds = res.strata
    counts = np.diff(np.searchsorted(positions, bounds))
    sizes = np.diff(bounds)
    wanted = np.minimum(sizes, -(-sizes * s // bounds[1:]))
    assert np.all(counts >= wanted)
    # deepening tops up but never over-samples much: at most one stratum's worth per query
    assert counts.sum() - wanted.sum() < k * s / 4
    # reuse: far fewer labels than fresh samples per query (Section 4.3, Theorem 8's K s)
    assert res.annotations - res.exact_len < 0.5 * k * s


def test_same_seed_same_result_and_labels_are_kept(smooth):
    labels, _ = smooth
    a = curves.adastrat(LabelOracle(labels), labels.size, rng=3)
    b = curves.adastrat(LabelOracle(labels), labels.size, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(a.queried, b.queried)
    np.testing.assert_array_equal(a.labels[0], b.labels[0])
    # an oracle that already holds labels does not charge for them again
    oracle = LabelOracle(labels)
    first = curves.adastrat(oracle, labels.size, rng=3)
    again = curves.adastrat(oracle, labels.size, rng=3)
    assert first.annotations > 0 and again.annotations == 0


# --------------------------------------------------------------------------- noise


def test_eta_enlarges_the_sample_as_eq_5_says():
    real0, s0 = adastrat_sample_size(10, delta=0.05, beta=1.2, p_min=0.5, eta=0.0)
    real1, s1 = adastrat_sample_size(10, delta=0.05, beta=1.2, p_min=0.5, eta=0.1)
    assert real0 == pytest.approx(math.log(2 * 10 / 0.05) / (2 * 0.2**2 * 0.5**2), rel=1e-14)
    assert real1 == pytest.approx(real0 * 1.1**2 * 0.2**2 / 0.1**2, rel=1e-14)
    assert (s0, s1) == (math.ceil(real0), math.ceil(real1))


def test_noisy_annotations_bounds_hold_where_eq_5_applies(smooth):
    # eta = 0.05 flips; beta = 1.15 > 1 + eta. The labels' expected precision is
    # p + eta (1 - 2 p), within eta p of p for p >= 1/3; with s <= l_tilde the noisy prefix
    # is an estimate like the others and the bounds hold beyond it.
    labels, p = smooth
    eta = 0.05
    ranks = np.arange(3401, labels.size + 1)
    for seed in range(3):
        oracle = NoisyOracle(LabelOracle(labels), eta, rng=seed)
        res = curves.adastrat(oracle, labels.size, beta=1.15, eta=eta, rng=seed)
        _, s = adastrat_sample_size(res.n_queries + 1, delta=0.05, beta=1.15, p_min=0.5, eta=eta)
        assert s <= res.exact_len == 3400
        assert not outside(res, p, ranks).any()
        assert res.n_queries <= res.plan.max_queries
        # the noisy prefix is biased low here (p ~ 0.85 > 1/2): eta (1 - 2 p) = -0.035
        assert res.at(3400) < p[3399] - 0.02


# --------------------------------------------------------------------------- scale and edges


def test_two_billion_items():
    n = 2 * 10**9
    oracle, count = power_oracle(n, 0.05)  # p(N) = 0.49
    res = curves.adastrat(oracle, n, p_min=0.45, rng=0)
    assert res.n_queries <= 20  # of at most 449 (LogStrat: 448)
    assert res.annotations < 0.6 * curves.plan_logstrat(n, p_min=0.45).annotations
    ranks = np.unique(np.geomspace(res.exact_len + 1, n, 500).astype(np.int64))
    truth = count(ranks) / ranks
    assert np.all((res.lower(ranks) <= truth) & (truth <= res.upper(ranks)))
    ratio = res.at(ranks) / truth  # Theorem 3's factors, as in the first test
    assert ratio.min() >= 1 / (1.05 * 1.03) and ratio.max() <= 1.03 / 0.95


def test_short_list_is_a_census():
    labels = low_discrepancy(3000)
    res = curves.adastrat(LabelOracle(labels), labels.size, r_tilde=3000)  # l_tilde = N
    ranks = np.arange(1, labels.size + 1)
    assert res.n_queries == 0 and res.annotations == labels.size
    np.testing.assert_array_equal(res.at(ranks), precision(labels))
    np.testing.assert_array_equal(res.lower(ranks), res.upper(ranks))


def test_average_precision_bounds_hold(smooth):
    labels, p = smooth
    res = curves.adastrat(LabelOracle(labels), labels.size, rng=0)
    ap = curves.average_precision(res)
    truth = float(p[labels].mean())
    assert float(ap["lower"]) <= truth <= float(ap["upper"])
    assert abs(float(ap["estimate"]) - truth) < 0.01
    # the step functions behind the bounds lie below lower / above upper everywhere
    for which, sign in (("lower", 1), ("upper", -1)):
        starts, values = res._steps(which)
        ends = np.append(starts[1:] - 1, labels.size - 1)
        ranks = np.unique(np.concatenate([starts, ends, (starts + ends) // 2]))
        steps = values[np.searchsorted(starts, ranks, side="right") - 1]
        assert np.all(sign * (getattr(res, which)(ranks) - steps) >= -1e-12)


def test_posterior_band_covers_the_truth_at_the_queried_ranks(smooth):
    labels, p = smooth
    inside = []
    for seed in range(10):
        res = curves.adastrat(LabelOracle(labels), labels.size, rng=seed)
        band = res.posterior_band(0.9, ranks=res.corners[1:], draws=2000, rng=seed)["band"]
        truth = p[band["rank"].values - 1]
        inside.append((band["lower"].values <= truth) & (truth <= band["upper"].values))
    coverage = np.concatenate(inside).mean()
    # ~110 checks; binomial sd at 0.9 is 0.03 (neighbouring ranks share strata, so wider)
    assert coverage >= 0.8


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": 1.5}, "epsilon"),
        ({"r_tilde": 10**6}, "r_tilde"),
        ({"m": 0}, "m"),
        ({"beta": 1.0}, "beta"),
        ({"beta": 1.05, "eta": 0.05}, "beta"),
        ({"beta": 2.0, "eta": 0.5}, "eta"),
        ({"eta": -0.1}, "eta"),
        ({"delta": 0}, "delta"),
        ({"p_min": 1.5}, "p_min"),
        ({"rng": "seed"}, "rng"),
    ],
)
def test_bad_input_names_parameter(kwargs, name):
    oracle = LabelOracle(np.ones(10_000, dtype=bool))
    with pytest.raises(ValueError, match=f"`{name}`"):
        curves.adastrat(oracle, 10_000, **kwargs)


def test_bad_oracle_names_parameter():
    with pytest.raises(ValueError, match="`oracle`"):
        curves.adastrat(np.ones(10), 10_000)
    with pytest.raises(ValueError, match="`n_items`"):
        curves.adastrat(LabelOracle(np.ones(10_000, dtype=bool)), 20_000)
