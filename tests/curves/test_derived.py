"""Derived curves (yield, PR, AP) from PAULA, LogStrat and the random baseline, against the truth.

Synthetic lists whose truth is computed exactly at every rank. As in test_algorithms.py, the
deterministic ``low_discrepancy`` list (prefix counts floor(F(r)) for a concave F) makes
Assumption A.1 hold, verified here, so the envelopes hold at every rank (PAULA deterministically,
LogStrat with probability >= 1 - delta; Hoeffding + union bound is conservative, so zero failures
over the fixed seeds). Yield/recall/AP bounds are functions of the envelope, so they must contain
the truth at every rank too.
"""

import numpy as np
import pytest

from bayeval import curves
from bayeval.curves.derived import grid_average_precision, prefix_terms
from bayeval.oracles import LabelOracle


def low_discrepancy(n, a=0.55, b=0.4, c=0.5, scale=1000.0):
    r = np.arange(n + 1, dtype=np.float64)
    total = a * r + b * scale**c * r ** (1 - c) / (1 - c)
    return np.diff(np.floor(total + 1e-9).astype(np.int64)).astype(bool)


def precision(labels):
    return np.cumsum(labels) / np.arange(1, labels.size + 1)


def a1_violations(p, r_tilde, m):
    suffix_max = np.maximum.accumulate(p[::-1])[::-1]
    r1 = np.arange(r_tilde, p.size - m + 1)
    return r1[p[r1 - 1] < suffix_max[r1 - 1 + m]]


@pytest.fixture(scope="module")
def smooth():
    labels = low_discrepancy(300_000)
    p = precision(labels)
    plan = curves.plan_paula(labels.size)
    assert a1_violations(p, plan.r_tilde, plan.m).size == 0  # A.1 holds (m = 103)
    return labels, p


@pytest.fixture(scope="module")
def bernoulli():
    # the posterior tests' list: Bernoulli labels on a precision curve falling from 0.9 to 0.5
    n = 60_000
    return np.random.default_rng(11).random(n) < np.linspace(0.9, 0.5, n)


def true_ap(labels):
    return float(precision(labels)[labels].mean())


def check_contains_truth(res, labels, p):
    n = labels.size
    ranks = np.arange(1, n + 1)
    ys = curves.yield_curve(res, ranks)
    y = np.cumsum(labels)
    assert np.all(ys["lower"].values <= y + 1e-9) and np.all(y <= ys["upper"].values + 1e-9)
    pr = curves.pr_curve(res, ranks)
    recall = y / y[-1]
    assert np.all(pr["recall_lower"].values <= recall + 1e-12)
    assert np.all(recall <= pr["recall_upper"].values + 1e-12)
    np.testing.assert_array_equal(pr["precision"].values, res.at(ranks))
    ap = curves.average_precision(res)
    truth = true_ap(labels)
    assert float(ap["lower"]) <= truth <= float(ap["upper"])
    return pr, ap, truth


# --------------------------------------------------------------------------- envelopes


def test_paula_derived_bounds_contain_truth(smooth):
    labels, p = smooth
    res = curves.paula(LabelOracle(labels), labels.size)
    assert not (
        (p < res.lower(np.arange(1, p.size + 1))) | (p > res.upper(np.arange(1, p.size + 1)))
    ).any()
    pr, ap, truth = check_contains_truth(res, labels, p)
    # the estimate: every p-hat is within c = gamma (1 + eps) of p, so Y-hat(r) / Y-hat(N) is
    # within c^2 of the recall; the AP estimate is far closer than that (errors average out)
    c = res.plan.approximation
    recall = np.cumsum(labels) / labels.sum()
    ratio = pr["recall"].values / recall
    assert np.all((ratio <= c**2) & (ratio >= c**-2))
    assert abs(float(ap["estimate"]) - truth) < 0.01 * truth
    assert ap.attrs["max_ratio"] <= 1.001


def test_logstrat_and_random_derived_bounds_contain_truth(smooth):
    labels, p = smooth
    for seed in range(3):
        for res in (
            curves.logstrat(LabelOracle(labels), labels.size, rng=seed),
            curves.random_baseline(LabelOracle(labels), labels.size, p_min=0.55, rng=seed),
        ):
            _, ap, truth = check_contains_truth(res, labels, p)
            assert abs(float(ap["estimate"]) - truth) < 0.01 * truth


def test_census_ap_is_exact(smooth):
    labels = smooth[0][:5000]
    res = curves.paula(LabelOracle(labels), labels.size, r_tilde=5000)
    assert res.exact_len == labels.size
    ap = curves.average_precision(res)
    truth = true_ap(labels)
    assert float(ap["estimate"]) == pytest.approx(truth, rel=1e-12)
    # the envelope is exact, so the identity bounds collapse onto the truth
    assert float(ap["lower"]) == pytest.approx(truth, rel=1e-9)
    assert float(ap["upper"]) == pytest.approx(truth, rel=1e-9)


# --------------------------------------------------------------------------- discretisation


@pytest.mark.parametrize("ratio", [1.001, 1.02, 1.2])
def test_ap_discretisation_error_within_bound(smooth, bernoulli, ratio):
    # AP_K with the TRUE p on the grid: |AP - AP_K| <= max((rho - 1) AP_K, (1 - 1/rho) / 2)
    for labels in (smooth[0], bernoulli):
        p = precision(labels)
        res = curves.paula(LabelOracle(labels), labels.size)
        grid = curves.rank_grid(res, ratio=ratio)
        prefix_sum, y_prefix, e = prefix_terms(res, labels.size)
        beyond = grid[grid > e]
        ap_k = grid_average_precision(
            prefix_sum, y_prefix, beyond.astype(float), p[beyond - 1], labels.sum()
        )
        rho = np.max(beyond / (np.concatenate([[e], beyond[:-1]]) + 1.0))
        assert rho <= ratio
        error = true_ap(labels) - ap_k
        assert -(1 - 1 / rho) / 2 <= error <= (rho - 1) * ap_k
    # the package's attribute states the same bound
    ap = curves.average_precision(res, grid)
    assert ap.attrs["discretisation_bound"] == pytest.approx(
        max((rho - 1) * float(ap["estimate"]), (1 - 1 / rho) / 2)
    )


def test_rank_grid_scales_to_two_billion():
    from bayeval.oracles import CallableOracle

    n = 2 * 10**9
    res = curves.paula(CallableOracle(lambda i: (i * 2654435761) % 1000 < 600, n_items=n), n)
    grid = curves.rank_grid(res)
    assert grid[0] == 1 and grid[-1] == n and grid.size < 20_000
    assert np.all(grid[1:] / (grid[:-1] + 1.0) <= 1.001)
    ap = curves.average_precision(res)
    assert float(ap["lower"]) <= float(ap["estimate"]) <= float(ap["upper"])
    assert float(ap["estimate"]) == pytest.approx(0.6, abs=0.02)
    assert curves.pr_curve(res, [1, n])["recall"].values[-1] == 1.0


# --------------------------------------------------------------------------- posterior


def test_posterior_recall_and_ap_cover_the_truth(bernoulli):
    # Frequentist coverage of 90% equal-tailed intervals over 60 independent LogStrat runs.
    # Binomial sd of a 60-run coverage at 0.9 is 0.039; accept [0.75, 1.0] (about 4 sd below).
    # Observed with these seeds: AP 0.90, recall 0.88-0.92 at the checked stratum ends.
    labels = bernoulli
    n = labels.size
    y = np.cumsum(labels)
    ap_truth = true_ap(labels)
    runs = 60
    covered_ap, covered_recall = 0, None
    for seed in range(runs):
        res = curves.logstrat(LabelOracle(labels), n, rng=seed)
        post = curves.derived_from_posterior(res, draws=400, chains=2, rng=seed)["posterior"]
        ends = res.strata[1:][::8]
        truth = y[ends - 1] / y[-1]
        q = post["recall"].sel(rank=ends).quantile([0.05, 0.95], dim=("chain", "draw")).values
        hit = (q[0] <= truth) & (truth <= q[1])
        covered_recall = hit.astype(int) if covered_recall is None else covered_recall + hit
        lo, hi = post["average_precision"].quantile([0.05, 0.95]).values
        covered_ap += lo <= ap_truth <= hi
    assert 0.75 <= covered_ap / runs <= 1.0, covered_ap
    rates = covered_recall / runs
    assert np.all(rates >= 0.75) and rates.mean() <= 1.0, rates


def test_posterior_structure(bernoulli):
    labels = bernoulli
    res = curves.logstrat(LabelOracle(labels), labels.size, rng=1)
    tree = curves.derived_from_posterior(res, draws=50, chains=3, rng=0)
    post = tree["posterior"]
    for name in ("precision", "yield", "recall"):
        assert post[name].dims == ("chain", "draw", "rank")
    assert post["average_precision"].dims == ("chain", "draw")
    assert post["average_precision"].shape == (3, 50)
    assert "not sampled" in post.attrs["tail"]  # g_L < N for LogStrat
    # random baseline: one stratum reaching N, no tail
    res = curves.random_baseline(LabelOracle(labels), labels.size, rng=1)
    band = res.posterior_band(ranks=[30_000, labels.size], draws=20, chains=2, rng=0)
    post = curves.derived_from_posterior(res, band)["posterior"]
    assert post.attrs["tail"].startswith("none")
    np.testing.assert_allclose(post["recall"].sel(rank=labels.size).values, 1.0)


def test_shapes_and_dims(smooth):
    labels, _ = smooth
    res = curves.paula(LabelOracle(labels), labels.size)
    ys = curves.yield_curve(res, [10, 5, 10, 300_000])
    assert ys["rank"].values.tolist() == [5, 10, 300_000]  # sorted, distinct
    assert set(ys.data_vars) == {"estimate", "lower", "upper"}
    pr = curves.pr_curve(res)
    assert pr["recall"].dims == ("rank",) and pr["rank"].values[-1] == labels.size
    assert float(pr["recall"][-1]) == 1.0 and float(pr["recall_lower"][-1]) == 1.0


# --------------------------------------------------------------------------- errors


def test_errors_name_the_parameter(smooth, bernoulli):
    labels, _ = smooth
    res = curves.paula(LabelOracle(labels), labels.size)
    with pytest.raises(ValueError, match="`result`"):
        curves.yield_curve(labels, [1])
    with pytest.raises(ValueError, match="`ranks`"):
        curves.pr_curve(res, [0])
    with pytest.raises(ValueError, match="`ranks`"):
        curves.average_precision(res, [])
    with pytest.raises(ValueError, match="`ratio`"):
        curves.rank_grid(res, ratio=1.0)
    with pytest.raises(ValueError, match="`result`"):
        curves.derived_from_posterior(res)  # PAULA has no design posterior
    ls = curves.logstrat(LabelOracle(bernoulli), bernoulli.size, rng=0)
    with pytest.raises(ValueError, match="`per_stratum`"):
        curves.derived_from_posterior(ls, per_stratum=0)
    band = ls.posterior_band(ranks=[10_000], draws=10, chains=1, rng=0)
    with pytest.raises(ValueError, match="`tree`: its ranks must include"):
        curves.derived_from_posterior(ls, band)
    with pytest.raises(ValueError, match="`band_options`"):
        curves.derived_from_posterior(ls, band, draws=10)
    with pytest.raises(ValueError, match="`tree`"):
        curves.derived_from_posterior(ls, {"x": 1})
