"""Planners of the precision-curve methods against every count the two papers state.

PAULA paper: Sabharwal & Sedghi (2017), ../shared/papers/paula-logstrat-sabharwal-sedghi-2017.txt.
AdaStrat paper: Sabharwal & Xue (2018), ../shared/papers/adastrat-sabharwal-xue-2018.txt.
Figures written "18K" in a paper are compared after rounding to the nearest thousand, as the papers
round; figures written in full are compared exactly.
"""

import dataclasses
import math
import time
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest

from bayeval import curves
from bayeval.curves.planning import (
    LogStratPlan,
    PaulaPlan,
    RandomPlan,
    geometric_points,
)

PPDB = 35_615  # PPDB-36K (PAULA §5.2; AdaStrat §5)
PPDB_100X = 3_561_500  # PPDB-36K-100x (AdaStrat §5)
PPDB_1000X = 35_615_000  # PPDB-36K-1000x (AdaStrat §5)
SCIENCE_KB = 217_077  # PAULA §4.4.3 (§5.3 says 217,076)


def thousands(x):
    return round(x / 1000)


def exact_g(epsilon, j):
    ratio = 1 + Fraction(repr(epsilon))
    return -(-(ratio.numerator**j) // ratio.denominator**j)


# --------------------------------------------------------------------------- PAULA


@pytest.mark.parametrize(
    ("n_items", "epsilon", "expected", "where"),
    [
        (PPDB, 0.03, 11_292, "PAULA §5.2, Figure 2 (top)"),
        (PPDB, 0.05, 7_822, "PAULA §5.2, Figure 2 (bottom)"),
        (SCIENCE_KB, 0.03, 17_392, "PAULA §4.4.3 (N = 217,077)"),
        (217_076, 0.03, 17_392, "PAULA §5.3, Figure 3 (N = 217,076)"),
    ],
)
def test_paula_annotations_match_paper(n_items, epsilon, expected, where):
    plan = curves.plan_paula(n_items, epsilon=epsilon, window=100)
    assert plan.annotations == expected, where
    # Theorem 3: g_ell + Delta (L - ell)
    assert plan.annotations == plan.g_ell + 100 * (plan.L - plan.ell)
    assert plan.annotations_formula == expected


@pytest.mark.parametrize(
    ("n_items", "paper_k", "computed", "where"),
    [
        (SCIENCE_KB, 17, 17_392, "PAULA abstract and §1: 17K for the 217K Science KB"),
        (169_000_000, 40, 39_892, "PAULA §5.2: 40K for all of PPDB 2.0 (169M items)"),
        (2 * 10**9, 48, 48_292, "PAULA abstract: 48K for 2B items"),
    ],
)
def test_paula_rounded_counts_match_paper(n_items, paper_k, computed, where):
    plan = curves.plan_paula(n_items)
    assert plan.annotations == computed, where
    assert thousands(plan.annotations) == paper_k, where


def test_paula_intro_47k_for_2b_items_is_inconsistent_with_abstract():
    # PAULA §1 says "a resource with 2B items ... only 47K annotations"; the abstract says 48K.
    # Theorem 3 gives 48,292 (48K); 47K would need L - ell = 438, i.e. N in [1.46e9, 1.51e9).
    assert thousands(curves.plan_paula(2 * 10**9).annotations) == 48
    assert thousands(curves.plan_paula(1_480_000_000).annotations) == 47


def test_paula_derived_quantities_section_4_2():
    plan = curves.plan_paula(PPDB)
    assert plan.r_tilde == 3400  # ceil((100 + 2) / 0.03)
    assert (plan.ell, plan.L, plan.g_ell, plan.m) == (276, 354, 3492, 103)
    assert plan.gamma == pytest.approx(1 + 0.03 + 2.03 / 103)
    assert plan.approximation == pytest.approx(plan.gamma * 1.03)
    assert plan.m > plan.window  # Section 4.2: m > Delta, so windows never overlap
    eps05 = curves.plan_paula(PPDB, epsilon=0.05)
    assert (eps05.r_tilde, eps05.ell, eps05.L, eps05.g_ell) == (2040, 157, 214, 2122)


def test_paula_annotated_ranks_are_prefix_plus_disjoint_windows():
    plan = curves.plan_paula(PPDB)
    ranks = plan.annotated_ranks()
    assert ranks.size == plan.annotations
    assert np.all(np.diff(ranks) > 0)
    assert ranks[0] == 1 and ranks[-1] == plan.queried[-1] <= plan.n_items
    np.testing.assert_array_equal(ranks[: plan.g_ell], np.arange(1, plan.g_ell + 1))
    windows = ranks[plan.g_ell :].reshape(plan.n_queries, plan.window)
    np.testing.assert_array_equal(windows[:, -1], plan.queried)
    np.testing.assert_array_equal(windows[:, 0], plan.queried - plan.window + 1)


# --------------------------------------------------------------------------- queries


@pytest.mark.parametrize(
    ("n_items", "expected"),
    [(PPDB, 78), (PPDB_100X, 234), (PPDB_1000X, 312)],
)
def test_logstrat_and_paula_query_counts_match_adastrat_paper(n_items, expected):
    # AdaStrat §1 and §5.1 (Figure 2, Figure 4): 78, 234 and 312 queries, the same for both.
    paula = curves.plan_paula(n_items)
    logstrat = curves.plan_logstrat(n_items)
    assert paula.n_queries == logstrat.n_queries == expected
    np.testing.assert_array_equal(paula.queried, logstrat.queried)
    # AdaStrat Theorem 1: "LOGSTRAT queries p at L - ell points"
    assert logstrat.n_queries == logstrat.L - logstrat.ell


def test_queried_points_are_the_geometric_points_after_ell():
    plan = curves.plan_logstrat(PPDB_100X)
    assert plan.queried.dtype == np.int64 and plan.points.dtype == np.int64
    np.testing.assert_array_equal(plan.points, geometric_points(0.03, plan.ell, plan.L))
    np.testing.assert_array_equal(plan.queried, plan.points[1:])
    assert plan.points[0] == plan.g_ell >= plan.r_tilde > exact_g(0.03, plan.ell - 1)
    assert plan.points[-1] <= plan.n_items < exact_g(0.03, plan.L + 1)
    assert np.all(np.diff(plan.points) >= plan.m)  # g_{j+1} - g_j >= m for j >= ell


@pytest.mark.parametrize("epsilon", [0.001, 0.01, 0.03, 0.05, 0.1, 0.123, 0.25, 0.5, 0.7, 1.0])
def test_geometric_points_are_exact_integers(epsilon):
    stop = int(math.log(2e9) / math.log1p(epsilon)) + 1
    got = geometric_points(epsilon, 0, stop)
    step = max(1, stop // 400)  # exact big-integer check on a subsample for small epsilon
    for j in range(0, stop + 1, step):
        assert got[j] == exact_g(epsilon, j), j


def test_geometric_points_epsilon_one_are_powers_of_two():
    plan = curves.plan_paula(1024, epsilon=1.0, window=1)
    assert (plan.r_tilde, plan.ell, plan.L, plan.m, plan.gamma) == (3, 2, 10, 3, 3.0)
    np.testing.assert_array_equal(plan.queried, 2 ** np.arange(3, 11))
    assert plan.annotations == 4 + 8


# --------------------------------------------------------------------------- LogStrat


def test_logstrat_section_4_4_4_example():
    # PAULA §4.4.4: delta = 0.05, eps = 0.03, p_min = 0.5, r_tilde = 1000 give ell = 234,
    # L = 311 (389) for N = 10,000 (100,000), and the factor multiplying L - ell in Theorem 2,
    # eps / (2 (gamma - 1)^2 (1 + eps) p_min^2) ln((L - ell) / (delta / 2)), "roughly
    # 5.8 log 40 (L - 234)", evaluates to 46.6 (50.6). Here beta = gamma = 1.1 (m = 29).
    gamma = curves.plan_paula(10_000, r_tilde=1000, window=28).gamma
    assert gamma == pytest.approx(1.1)
    small = curves.plan_logstrat(10_000, r_tilde=1000, beta=gamma)
    large = curves.plan_logstrat(100_000, r_tilde=1000, beta=gamma)
    assert (small.ell, small.L, large.L) == (234, 311, 389)
    coefficient = 0.03 / (2 * (gamma - 1) ** 2 * 1.03 * 0.25)
    assert coefficient == pytest.approx(5.825, abs=0.001)
    # The paper rounds the coefficient to 5.8 before multiplying (5.8 ln 3080 = 46.59 and
    # 5.8 ln 6200 = 50.65, printed 46.6 and 50.6); unrounded, the factor is 46.79 and 50.87.
    assert round(5.8 * math.log(40 * 77), 1) == 46.6
    assert math.floor(10 * 5.8 * math.log(40 * 155)) / 10 == 50.6
    assert small.samples_per_query == pytest.approx(46.79, abs=0.01)
    assert large.samples_per_query == pytest.approx(50.87, abs=0.01)


# AdaStrat §5.1 (eps = 0.03, delta = 0.05, beta = 1.05): LogStrat "growing from 18K annotations to
# 73K"; footnote 2 (§1): "LOGSTRAT needs 54K" at 3.5M items. Theorem 2 of the PAULA paper with
# p_min = 0.5 gives the values below; the last two round to 53K and 72K, not 54K and 73K.
LOGSTRAT_PAPER = [
    (PPDB, 18, 18_114.7, "AdaStrat §5.1, Figure 3"),
    (PPDB_100X, 54, 53_350.1, "AdaStrat §1 footnote 2 and §5.1, Figure 3"),
    (PPDB_1000X, 73, 72_060.9, "AdaStrat §5.1, Figure 3"),
]


@pytest.mark.parametrize(("n_items", "paper_k", "theorem_2", "where"), LOGSTRAT_PAPER)
def test_logstrat_annotations_against_adastrat_paper(n_items, paper_k, theorem_2, where):
    plan = curves.plan_logstrat(n_items, p_min=0.5)
    assert plan.annotations_formula == pytest.approx(theorem_2, abs=0.1), where
    if n_items == PPDB:
        assert thousands(plan.annotations_formula) == paper_k
    else:  # not reproducible with p_min = 0.5: off by one thousand after rounding
        assert thousands(plan.annotations_formula) == paper_k - 1


@pytest.mark.parametrize("p_min", [0.4949, 0.497, 0.4984])
def test_logstrat_paper_figures_need_p_min_just_below_half(p_min):
    # The setting that does reproduce 18K, 54K and 73K together: p_min in about [0.4949, 0.4984]
    # (NOTES.md: "match LogStrat's formula only with p_min about 0.5").
    for n_items, paper_k, _, where in LOGSTRAT_PAPER:
        plan = curves.plan_logstrat(n_items, p_min=p_min)
        assert thousands(plan.annotations_formula) == paper_k, where


def test_logstrat_p_min_03_needs_about_2_5_times_more():
    # NOTES.md: "with p_min = 0.3 the same settings need roughly 2.5x more" (at 3.5M items).
    ratio = (
        curves.plan_logstrat(PPDB_100X, p_min=0.3).annotations_formula
        / curves.plan_logstrat(PPDB_100X, p_min=0.5).annotations_formula
    )
    assert ratio == pytest.approx(2.66, abs=0.01)


@pytest.mark.parametrize("n_items", [PPDB, PPDB_100X, PPDB_1000X, 2 * 10**9])
def test_logstrat_sample_size_and_strata(n_items):
    plan = curves.plan_logstrat(n_items)
    k = plan.L - plan.ell
    # Algorithm 1: s = ceil(ln((L - ell) / (delta / 2)) / (2 (beta - 1)^2 p_min^2))
    assert plan.s == math.ceil(math.log(k / 0.025) / (2 * 0.05**2 * 0.25))
    sizes = np.diff(plan.points)
    samples = plan.stratum_samples
    assert samples.size == plan.n_queries and np.all(samples <= sizes)
    # strategy S (AdaStrat §4.3): density min(1, s / g_k) in stratum (g_{k-1}, g_k]
    assert np.all(samples >= np.minimum(sizes, sizes * plan.s / plan.queried))
    assert np.all(samples == np.minimum(sizes, np.ceil(sizes * plan.s / plan.queried)))
    # Hoeffding: for every queried point g_j the stratified estimator's squared ranges sum to
    # at most 1 / s, as for s uniform draws (census strata contribute nothing)
    sampled = samples < sizes
    terms = np.where(sampled, sizes.astype(float) ** 2 / np.maximum(samples, 1), 0.0)
    assert np.all(np.cumsum(terms) / plan.queried.astype(float) ** 2 <= 1 / plan.s * (1 + 1e-12))
    assert plan.annotations == plan.g_ell + samples.sum()
    # the census cap only removes items; per-stratum ceilings add less than one each
    assert plan.annotations <= plan.annotations_formula + plan.n_queries


def test_logstrat_defaults_and_approximation():
    plan = curves.plan_logstrat(PPDB)
    assert (plan.r_tilde, plan.ell, plan.L, plan.m, plan.s) == (3400, 276, 354, 103, 6437)
    assert plan.approximation == pytest.approx(1.05 * 1.03)
    assert plan.samples_per_query == pytest.approx(0.03 / 1.03 * math.log(78 / 0.025) / 0.00125)


# --------------------------------------------------------------------------- random baseline


def test_random_baseline_science_kb_section_4_4_3():
    # PAULA §4.4.3: "needs 47030 annotations to achieve the same approximation (with error
    # probability delta = 0.05 and p(r) ~ 0.7)"; §1 says 47K. Eq. 5 gives 47,030.5 with
    # alpha = 0.08, the paper's gamma (1 + eps) - 1 = 0.0812 rounded to two decimals.
    plan = curves.plan_random(SCIENCE_KB, alpha=0.08, p_min=0.7, delta=0.05)
    assert plan.annotations_formula == pytest.approx(47_030.5, abs=0.1)
    assert int(plan.annotations_formula) == 47_030
    assert plan.annotations == 47_031  # integer optimum: n_prefix + n_samples
    assert (plan.n_prefix, plan.n_samples) == (23_516, 23_515)
    assert thousands(plan.annotations) == 47
    # the unrounded alpha = gamma (1 + eps) - 1 = 0.0812 would give 46,336 (46K)
    gamma = curves.plan_paula(SCIENCE_KB).gamma
    exact = curves.plan_random(SCIENCE_KB, alpha=gamma * 1.03 - 1, p_min=0.7)
    assert exact.annotations_formula == pytest.approx(46_335.5, abs=0.1)


def test_random_baseline_n_alpha_s_section_4_4_3_not_reproducible():
    # PAULA §4.4.3: with the same s = 17,392 samples the baseline is accurate "only for
    # r >= n_{alpha,s} = 41056". Eq. 4 gives 31,795 (alpha = 0.08) or 30,862 (alpha = 0.0812)
    # at p = 0.7; 41,056 would need alpha ~ 0.0704 at p = 0.7, or p ~ 0.607 at alpha = 0.0812.
    plan = curves.plan_random(SCIENCE_KB, alpha=0.08, p_min=0.7, n_samples=17_392)
    assert plan.n_prefix == 31_795
    assert plan.n_prefix != 41_056
    assert curves.plan_random(SCIENCE_KB, alpha=0.0704, p_min=0.7, n_samples=17_392).n_prefix == (
        pytest.approx(41_056, rel=0.001)
    )


def test_random_baseline_adastrat_counts():
    # AdaStrat §1 footnote 2: "The conventional method needs 284K annotations" (3.5M items);
    # AdaStrat §5.1: p_min = 0.5 ... the random curve is "reaching close to 1M" at 35M items.
    # alpha = beta (1 + eps) - 1 = 0.0815 with eps = 0.03, beta = 1.05 (the default).
    plan = curves.plan_random(PPDB_100X, p_min=0.5)
    assert plan.alpha == pytest.approx(0.0815)
    assert plan.annotations == 283_785
    assert thousands(plan.annotations) == 284
    big = curves.plan_random(PPDB_1000X, p_min=0.5)
    assert big.annotations == 950_846
    assert 0.9e6 < big.annotations < 1e6
    assert curves.plan_random(PPDB_100X, epsilon=0.03, beta=1.05).annotations == 283_785


def test_adastrat_efficiency_percentages_are_consistent_with_the_planners():
    # AdaStrat §5.1: AdaStrat used 24K and 28K annotations on the two larger lists and has
    # "20%-61% higher annotation efficiency than LOGSTRAT and 41%-97% higher than conventional
    # random sampling", read as 1 - adastrat / other.
    logstrat = curves.plan_logstrat(PPDB_1000X).annotations_formula
    random = curves.plan_random(PPDB_1000X).annotations
    assert round(1 - 28_000 / logstrat, 2) == 0.61
    assert round(1 - 28_000 / random, 2) == 0.97
    # at PPDB-36K both percentages imply the same AdaStrat count (about 14.5K)
    implied_by_logstrat = 0.80 * curves.plan_logstrat(PPDB).annotations_formula
    implied_by_random = 0.59 * curves.plan_random(PPDB).annotations
    assert implied_by_logstrat == pytest.approx(implied_by_random, rel=0.01)


def test_random_baseline_census_for_short_lists():
    plan = curves.plan_random(1000, p_min=0.5)
    assert (plan.annotations, plan.n_prefix, plan.n_samples) == (1000, 1000, 0)
    assert plan.n_queries == 0 and plan.queried.dtype == np.int64


# --------------------------------------------------------------------------- scale


@pytest.mark.parametrize("planner", [curves.plan_random, curves.plan_logstrat, curves.plan_paula])
def test_two_billion_items_fast_and_small(planner):
    n_items = 2 * 10**9
    planner(n_items)  # warm up imports
    tracemalloc.start()
    start = time.perf_counter()
    plan = planner(n_items)
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert elapsed < 0.25
    assert peak < 200_000  # bytes: O(queries), 448 points here
    assert plan.n_items == n_items
    if planner is not curves.plan_random:
        assert plan.n_queries == 448 and plan.points.size == 449


# --------------------------------------------------------------------------- edge cases


def test_whole_list_annotated_when_g_ell_exceeds_n():
    plan = curves.plan_paula(3450)  # r_tilde = 3400 <= N but g_ell = 3492 > N
    assert plan.L < plan.ell and plan.n_queries == 0 and plan.annotations == 3450
    assert plan.annotated_ranks().size == 3450
    logstrat = curves.plan_logstrat(3450)
    assert logstrat.n_queries == 0 and logstrat.annotations == 3450 and logstrat.s == 0


def test_results_are_frozen_and_read_only():
    plan = curves.plan_paula(PPDB)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.annotations = 0
    with pytest.raises(ValueError, match="read-only"):
        plan.queried[0] = 1
    assert isinstance(plan, PaulaPlan)
    assert isinstance(curves.plan_logstrat(PPDB), LogStratPlan)
    assert isinstance(curves.plan_random(PPDB), RandomPlan)


def test_repr_is_readable():
    text = repr(curves.plan_paula(PPDB))
    assert text.startswith("PaulaPlan(n_items=35615, queried=[3597, 3705, ..., 35025] (78 ranks)")
    assert "n_queries=78" in text and "annotations=11292" in text and "gamma=1.04971" in text


def test_curves_exports_planners_and_algorithms():
    planners = {"plan_logstrat", "plan_paula", "plan_random"}
    algorithms = {"random_baseline", "logstrat", "paula"}
    assert planners | algorithms <= set(curves.__all__)
    assert all(callable(getattr(curves, name)) for name in planners | algorithms)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: curves.plan_paula(PPDB, epsilon=0), r"`epsilon`.*\(0, 1\].*got 0"),
        (lambda: curves.plan_paula(PPDB, epsilon=1.5), r"`epsilon`.*got 1\.5"),
        (lambda: curves.plan_logstrat(PPDB, epsilon=-0.1), r"`epsilon`.*got -0\.1"),
        (lambda: curves.plan_logstrat(PPDB, epsilon=float("nan")), r"`epsilon`.*finite"),
        (lambda: curves.plan_paula(PPDB, r_tilde=40_000), r"`r_tilde`.*35615.*got 40000"),
        (lambda: curves.plan_logstrat(PPDB, r_tilde=40_000), r"`r_tilde`.*got 40000"),
        (lambda: curves.plan_paula(1000), r"`r_tilde`.*default.*3400"),
        (lambda: curves.plan_paula(PPDB, r_tilde=3000), r"`r_tilde`.*at least.*3400.*got 3000"),
        (lambda: curves.plan_logstrat(PPDB, r_tilde=10), r"`r_tilde`.*m >= 1.*got 10"),
        (lambda: curves.plan_paula(PPDB, window=0), r"`window`.*>= 1.*got 0"),
        (lambda: curves.plan_paula(PPDB, window=2.5), r"`window`.*got 2\.5"),
        (lambda: curves.plan_logstrat(PPDB, beta=1.0), r"`beta`.*greater than 1.*got 1\.0"),
        (lambda: curves.plan_random(PPDB, beta=0.9), r"`beta`.*got 0\.9"),
        (lambda: curves.plan_logstrat(PPDB, p_min=0), r"`p_min`.*\(0, 1\].*got 0"),
        (lambda: curves.plan_random(PPDB, p_min=1.2), r"`p_min`.*got 1\.2"),
        (lambda: curves.plan_logstrat(PPDB, delta=1.0), r"`delta`.*\(0, 1\).*got 1\.0"),
        (lambda: curves.plan_random(PPDB, delta=0), r"`delta`.*got 0"),
        (lambda: curves.plan_random(PPDB, alpha=0), r"`alpha`.*greater than 0.*got 0"),
        (lambda: curves.plan_random(PPDB, alpha=0.1, beta=1.05), r"either `alpha`"),
        (lambda: curves.plan_random(PPDB, n_samples=0), r"`n_samples`.*got 0"),
        (lambda: curves.plan_paula(0), r"`n_items`.*>= 1.*got 0"),
        (lambda: curves.plan_paula(True), r"`n_items`.*got True"),
        (lambda: curves.plan_logstrat("35615"), r"`n_items`.*got '35615'"),
        (lambda: curves.plan_random(2**60), r"`n_items`.*at most"),
    ],
)
def test_invalid_parameters_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_whole_floats_are_accepted_for_n_items():
    assert curves.plan_paula(2e9).annotations == curves.plan_paula(2 * 10**9).annotations
