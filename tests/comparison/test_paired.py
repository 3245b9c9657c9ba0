"""paired_difference: the Dirichlet and copula posteriors and Agresti & Min's interval."""

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


def paired_simulation(seed, repeats, n, shared=True):
    """Bowyer, Aitchison & Ivanova's (2025) paired generator: accuracies uniform, the items'
    right/wrong correlated through a bivariate normal with rho ~ 2 Beta(4, 2) - 1 (errors
    mostly shared), or its mirror image ``-rho`` (errors mostly on different items)."""
    rng = np.random.default_rng(seed)
    theta = rng.random((repeats, 2))
    rho = (2 * rng.beta(4, 2, repeats) - 1) * (1 if shared else -1)
    z = rng.standard_normal((repeats, n, 2))
    z2 = rho[:, None] * z[..., 0] + np.sqrt(1 - rho[:, None] ** 2) * z[..., 1]
    first = z[..., 0] < stats.norm.ppf(theta[:, :1])
    second = z2 < stats.norm.ppf(theta[:, 1:])
    return theta[:, 0] - theta[:, 1], first, second


def coverage_90(prior, shared):
    truth, first, second = paired_simulation(7, 600, 10, shared)
    covered = []
    for r in range(truth.size):
        result = paired_difference(first[r], second[r], prior=prior, draws=2000, rng=r)
        ci = result.interval(0.9)
        covered.append(ci[0] <= truth[r] <= ci[1])
    return np.mean(covered)


# a calibrated 90% interval: 0.90 +- 3 binomial standard errors of 600 repeats (0.037)
THREE_SE = 3 * np.sqrt(0.09 / 600)


@pytest.mark.parametrize("prior", [0.5, pytest.param("copula", marks=pytest.mark.slow)])
def test_posterior_coverage_under_a_paired_simulation(prior):
    assert coverage_90(prior, shared=True) == pytest.approx(0.90, abs=THREE_SE)


@pytest.mark.slow
def test_coverage_where_the_errors_fall_on_different_items():
    """The copula prior expects shared errors; where the systems err on different items the
    default (Dirichlet) stays calibrated and the copula under-covers. Recorded on 2026-11-27:
    0.865 for the copula's 90% interval (its documented shortfall); the floor of 0.80 guards
    against a worse one."""
    assert coverage_90(0.5, shared=False) == pytest.approx(0.90, abs=THREE_SE)
    assert coverage_90("copula", shared=False) >= 0.80


def test_the_copula_posterior_agrees_with_importance_sampling_from_its_prior():
    from bayeval._core.paired_copula import outcome_shares

    # reference: 400,000 draws of the prior (accuracies uniform, rho = 2 Beta(4, 2) - 1)
    # weighted by the multinomial likelihood of the counts (effective sample size ~70,000)
    rng = np.random.default_rng(1)
    theta = rng.random((400_000, 2))
    rho = 2 * rng.beta(4, 2, 400_000) - 1
    counts = np.array([5, 3, 1, 1])  # both right, first only, second only, neither
    log_weight = np.log(outcome_shares(theta[:, 0], theta[:, 1], rho)) @ counts
    weight = np.exp(log_weight - log_weight.max())
    weight /= weight.sum()
    difference = theta[:, 0] - theta[:, 1]
    reference_mean, reference_better = weight @ difference, weight @ (difference > 0)

    first = np.repeat([1, 1, 0, 0], counts)
    second = np.repeat([1, 0, 1, 0], counts)
    result = paired_difference(first, second, prior="copula", draws=200_000, rng=0)
    draws = result.posterior["posterior"]["difference"].values.ravel()
    # Monte Carlo standard errors, both sides together: about 0.0007 for the mean and 0.0016
    # for the probability (recorded: 0.16857 against 0.16859, 0.8450 against 0.8461)
    assert draws.mean() == pytest.approx(reference_mean, abs=0.003)
    assert result.prob_better == pytest.approx(reference_better, abs=0.0065)


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
        ([1, 0], [1, 0], {"prior": "shared"}, "`prior` must be"),
    ],
)
def test_bad_input_is_refused(first, second, options, message):
    with pytest.raises(ValueError, match=message):
        paired_difference(first, second, **options)
