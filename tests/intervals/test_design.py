import numpy as np
import pytest

from bayeval.intervals.design import (
    expected_interval_width,
    expected_width_grid,
    recall_estimator_distribution,
)


def test_webber_example_bias():
    # Webber (2013) §2.4, Table 2.4 and Figure 2: true recall 0.25, estimator mean 0.31; the
    # issue states the exact value 0.314 to three digits.
    d = recall_estimator_distribution(N1=2000, R1=1000, N0=100000, R0=3000, n1=100, n0=100)
    assert d.true_recall == 0.25
    assert d.mean == pytest.approx(0.314, abs=0.0005)
    assert d.bias == pytest.approx(d.mean - 0.25)
    assert d.probabilities.sum() + d.undefined_probability == pytest.approx(1.0, abs=1e-12)


def test_estimator_distribution_matches_simulation():
    d = recall_estimator_distribution(N1=300, R1=120, N0=3000, R0=90, n1=30, n0=60)
    rng = np.random.default_rng(4)
    r1 = rng.hypergeometric(120, 180, 30, size=200_000)
    r0 = rng.hypergeometric(90, 2910, 60, size=200_000)
    y1, y0 = 300 * r1 / 30, 3000 * r0 / 60
    ok = y1 + y0 > 0
    est = y1[ok] / (y1[ok] + y0[ok])
    assert est.mean() == pytest.approx(d.mean, abs=4 * est.std() / np.sqrt(est.size))
    assert (~ok).mean() == pytest.approx(d.undefined_probability, abs=0.002)


def test_estimator_distribution_is_degenerate_for_a_census():
    d = recall_estimator_distribution(N1=50, R1=20, N0=80, R0=20, n1=50, n0=80)
    assert d.values.tolist() == [0.5] and d.bias == pytest.approx(0.0)


def test_estimator_distribution_bad_input():
    with pytest.raises(ValueError, match="`R1` cannot exceed `N1`"):
        recall_estimator_distribution(N1=10, R1=11, N0=100, R0=3, n1=5, n0=5)
    with pytest.raises(ValueError, match="`n0` must be"):
        recall_estimator_distribution(N1=10, R1=5, N0=100, R0=3, n1=5, n0=0)
    # a sequence is refused, not cut to its first entry; numbers are shown as Python's
    with pytest.raises(ValueError, match=r"`N1` must be a whole number >= 0; got \[100, 7\]"):
        recall_estimator_distribution(N1=[100, 7], R1=5, N0=100, R0=3, n1=5, n0=5)
    with pytest.raises(ValueError, match="`n1` must be a whole number >= 1; got 2.5"):
        recall_estimator_distribution(N1=10, R1=5, N0=100, R0=3, n1=np.float64(2.5), n0=5)


def test_expected_width_shrinks_with_sample_size():
    common = dict(
        population=5_000_000,
        retrieved=500_000,
        recall=0.5,
        precision=0.5,
        retrieved_share=0.3,
        outcomes=60,
        rng=2,
    )
    small = expected_interval_width(sample_size=1000, **common)
    large = expected_interval_width(sample_size=4000, **common)
    assert large.mean < small.mean - 4 * np.hypot(small.se, large.se)
    # Roughly 1/sqrt(n) at mediate prevalence (Webber Fig. 15): quadrupling n halves width.
    assert large.mean / small.mean == pytest.approx(0.5, abs=0.1)


def test_expected_width_favours_unretrieved_for_high_recall():
    # Webber §4.3 / Fig. 14: low precision and high recall favour sampling the unretrieved
    # segment.
    common = dict(
        population=5_000_000,
        retrieved=500_000,
        recall=0.9,
        precision=0.1,
        sample_size=2000,
        outcomes=60,
        rng=3,
    )
    mostly_retrieved = expected_interval_width(retrieved_share=0.8, **common)
    mostly_unretrieved = expected_interval_width(retrieved_share=0.2, **common)
    assert mostly_unretrieved.mean < mostly_retrieved.mean


def test_expected_width_bad_input():
    common = dict(population=1000, retrieved=100, recall=0.5, sample_size=100)
    with pytest.raises(ValueError, match="`retrieved_share` must be in the open interval"):
        expected_interval_width(precision=0.5, retrieved_share=1.0, **common)
    with pytest.raises(ValueError, match="they do not fit"):
        expected_interval_width(
            population=1000,
            retrieved=900,
            recall=0.01,
            precision=0.9,
            sample_size=100,
            retrieved_share=0.5,
        )
    with pytest.raises(ValueError, match="exactly one of `precision` and `prevalence`"):
        expected_interval_width(precision=0.5, prevalence=0.1, retrieved_share=0.5, **common)
    with pytest.raises(ValueError, match="`measure` must be one of"):
        expected_interval_width(prevalence=0.1, retrieved_share=0.5, measure="accuracy", **common)


def test_prevalence_and_precision_describe_the_same_population():
    # 5M items, prevalence 0.1 -> 500,000 positives; recall 0.5 -> R1 = 250,000; with 500,000
    # retrieved that is precision 0.5: both parameterisations give the same design.
    common = dict(
        population=5_000_000,
        retrieved=500_000,
        recall=0.5,
        sample_size=800,
        retrieved_share=0.5,
        outcomes=10,
    )
    a = expected_interval_width(prevalence=0.1, rng=4, **common)
    b = expected_interval_width(precision=0.5, rng=4, **common)
    assert a.mean == b.mean


def test_width_grid():
    grid = expected_width_grid(
        population=20_000,
        retrieved=2_000,
        recall=0.6,
        prevalence=0.05,
        sample_sizes=[200, 800, 5000],
        retrieved_shares=[0.3, 0.7],
        outcomes=20,
        rng=5,
    )
    assert grid["mean_width"].dims == ("sample_size", "retrieved_share")
    width = grid["mean_width"]
    assert np.all(width.sel(sample_size=800) < width.sel(sample_size=200))
    # 70% of 5000 labels exceeds the 2000 retrieved items: that design does not fit.
    assert np.isnan(float(width.sel(sample_size=5000, retrieved_share=0.7)))


# --------------------------------------------------------------------------- allocation

FIG15 = {"population": 5_000_000, "retrieved": 500_000, "recall": 0.5, "precision": 0.5}


def test_recommended_allocation_meets_the_target_and_no_smaller_total_does():
    from bayeval.intervals import recommend_allocation

    plan = recommend_allocation(**FIG15, target_width=0.1, method="normal-mle")
    assert plan.width.mean <= 0.1 and plan.n1 + plan.n0 == plan.sample_size
    # the search stops within 1% of the smallest total: 2% fewer labels miss the target at
    # every split it tried for that total
    tried = plan.evaluated
    smaller = tried[tried["sample_size"] < 0.99 * plan.sample_size]
    best = smaller.groupby("sample_size")["mean_width"].min()
    assert (best > 0.1).all() and len(best) >= 3
    # Webber §4.3 (Fig. 14): about a 20:80 split is close to the narrowest at recall =
    # precision = 0.5
    assert 0.12 < plan.retrieved_share < 0.35


def test_high_recall_low_precision_favours_the_unretrieved_segment():
    from bayeval.intervals import recommend_allocation

    # Webber §4.3: "low precision and high recall" is wide and favours the unretrieved segment;
    # "low recall and high precision" is narrow and insensitive to the split
    # (the half prior: normal intervals collapse to [1, 1] when the sparse unretrieved sample
    # holds no positive, which would make tiny designs look precise)
    wide = recommend_allocation(population=5_000_000, retrieved=500_000, recall=0.9,
                                precision=0.1, target_width=0.1, outcomes=30)  # fmt: skip
    narrow = recommend_allocation(population=5_000_000, retrieved=500_000, recall=0.1,
                                  precision=0.9, target_width=0.1, outcomes=30)  # fmt: skip
    assert wide.retrieved_share < 0.3 and wide.sample_size > 5000  # 11,300 at 11%
    assert narrow.sample_size == 100  # the smallest total considered already suffices


def test_recommended_allocation_errors():
    from bayeval.intervals import recommend_allocation

    with pytest.raises(ValueError, match="`target_width`"):
        recommend_allocation(**FIG15, target_width=1.5, method="normal-mle")
    with pytest.raises(ValueError, match="not reached with up to 400 labels"):
        recommend_allocation(**FIG15, target_width=0.01, method="normal-mle", max_sample_size=400)
    with pytest.raises(ValueError, match="`rng`"):
        recommend_allocation(**FIG15, target_width=0.1, method="normal-mle", rng=None)


def test_recommended_allocation_sample_size_bounds():
    from bayeval.intervals import recommend_allocation

    for bounds in ({"max_sample_size": 1}, {"min_sample_size": 500, "max_sample_size": 400}):
        with pytest.raises(ValueError, match="`min_sample_size` and `max_sample_size`"):
            recommend_allocation(**FIG15, target_width=0.1, method="normal-mle", **bounds)
