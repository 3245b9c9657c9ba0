"""paired_difference: the Dirichlet posterior and Agresti & Min's interval of the difference."""

import numpy as np
import pytest
from scipy import stats

from bayeval.comparison import paired_difference
from bayeval.comparison.paired import agresti_min_interval


def test_the_draws_have_the_dirichlet_posterior_moments():
    first = [1] * 30 + [1] * 12 + [0] * 5 + [0] * 13  # both, first only, second only, neither
    second = [1] * 30 + [0] * 12 + [1] * 5 + [0] * 13
    result = paired_difference(first, second, draws=40_000, rng=0)
    alpha = np.array([30, 12, 5, 13]) + 0.5
    total = alpha.sum()
    mean = (alpha[1] - alpha[2]) / total
    # Var(phi_T - phi_U) for a Dirichlet: the two variances plus twice minus their covariance
    var = (
        alpha[1] * (total - alpha[1]) + alpha[2] * (total - alpha[2]) + 2 * alpha[1] * alpha[2]
    ) / (total**2 * (total + 1))
    draws = result.posterior["posterior"]["difference"].values.ravel()
    assert draws.mean() == pytest.approx(mean, abs=4 * np.sqrt(var / draws.size))
    # the sd of a sample sd is about sd / sqrt(2 n): 4 of them
    assert draws.std() == pytest.approx(np.sqrt(var), rel=4 / np.sqrt(2 * draws.size))


def test_agresti_min_on_agrestis_presidential_approval_example():
    # Agresti, Categorical Data Analysis (2002), Table 10.1: 1,600 people asked twice; 794
    # approve both times, 150 then disapprove, 86 the reverse, 570 disapprove both times. The
    # Wald interval of the change is 0.040 +- 0.019, (0.021, 0.059); half a count per cell moves
    # each end by less than 0.001.
    lower, upper = agresti_min_interval(np.array([794, 150, 86, 570]), 0.95)
    assert lower == pytest.approx(0.021, abs=0.001)
    assert upper == pytest.approx(0.059, abs=0.001)


def test_the_design_interval_stays_in_range_and_holds_its_estimate_on_every_small_table():
    for n in range(1, 9):
        for t in range(n + 1):
            for u in range(n - t + 1):
                counts = np.array([n - t - u, t, u, 0])
                lower, upper = agresti_min_interval(counts, 0.95)
                estimate = (t - u) / n
                assert -1 <= lower <= estimate <= upper <= 1, (counts, lower, upper)


def test_posterior_coverage_under_a_paired_simulation():
    # Bowyer, Aitchison & Ivanova's (2025) paired generator: accuracies uniform, the items'
    # right/wrong correlated through a bivariate normal with rho ~ 2 Beta(4, 2) - 1; 10 items.
    rng = np.random.default_rng(7)
    repeats, n = 600, 10
    theta = rng.random((repeats, 2))
    rho = 2 * rng.beta(4, 2, repeats) - 1
    z = rng.standard_normal((repeats, n, 2))
    z2 = rho[:, None] * z[..., 0] + np.sqrt(1 - rho[:, None] ** 2) * z[..., 1]
    first = z[..., 0] < stats.norm.ppf(theta[:, :1])
    second = z2 < stats.norm.ppf(theta[:, 1:])
    covered = []
    for r in range(repeats):
        ci = paired_difference(first[r], second[r], draws=2000, rng=r).interval(0.9)
        covered.append(ci[0] <= theta[r, 0] - theta[r, 1] <= ci[1])
    # a calibrated 90% interval: 0.90 +- 3 binomial standard errors of 600 repeats (0.037)
    assert np.mean(covered) == pytest.approx(0.90, abs=3 * np.sqrt(0.09 / repeats))


def test_prob_better_and_the_round_trip(tmp_path):
    import bayeval as be

    result = paired_difference([1, 0, 1, 0], [0, 1, 1, 0], systems=("a", "b"), rng=1)
    assert result.prob_better == pytest.approx(0.5, abs=0.03)  # one each way: symmetric
    result.to_netcdf(tmp_path / "paired.nc")
    loaded = be.load(tmp_path / "paired.nc")
    assert loaded.systems == ("a", "b")
    assert loaded.interval().values.tolist() == result.interval().values.tolist()
    assert loaded.counts.tolist() == [1, 1, 1, 1]


@pytest.mark.parametrize(
    ("first", "second", "options", "message"),
    [
        ([1, 0, 1], [1, 0], {}, "`first` and `second` must judge the same items"),
        ([1, 2], [1, 0], {}, "`first` must hold 0"),
        ([], [], {}, "`first` must be a non-empty 1-d sequence"),
        ([1, 0], [1, 0], {"systems": ("a", "a")}, "`systems` must be two distinct names"),
    ],
)
def test_bad_input_is_refused(first, second, options, message):
    with pytest.raises(ValueError, match=message):
        paired_difference(first, second, **options)
