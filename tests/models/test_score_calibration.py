"""The score-calibration model of the labels: kernels, engines, finite-population posterior."""

import warnings

import arviz as az
import numpy as np
import pytest
from scipy import integrate, special, stats

import bayeval as be
from bayeval._core import calibration as kernel
from bayeval.models import CalibrationWarning, ScoreCalibration

F1 = be.measures.FScore()


def _pool(size=20_000, prevalence=0.01, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.random(size) < prevalence
    scores = np.where(truth, rng.beta(6, 2, size), rng.beta(1, 12, size))
    return be.Pool(scores), truth


def _rows(seed=0, groups=1, n=40):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.normal(-1, 2, n))
    group = rng.integers(0, groups, n)
    trials = rng.integers(1, 6, n)
    k = rng.binomial(trials, special.expit(-0.5 + 1.3 * t))
    return kernel.Rows(t, group, k.astype(float), (trials - k).astype(float))


_SHARE = kernel.SharePrior(np.log(1e-5), np.log(0.5))
_SCEPTICAL = kernel.SharePrior(np.log(1e-12), np.log(0.5), centre=np.log(1e-7), sd=4.0)
_JEFFREYS = kernel.SharePrior(np.log(1e-5), np.log(0.5), jeffreys=True)


def _central_differences(theta, prior, rows, h):
    """The gradient of the log posterior by central differences of step ``h``."""
    steps = np.eye(prior.dim) * h
    return [
        (
            kernel.log_posterior(theta + e, prior, rows)
            - kernel.log_posterior(theta - e, prior, rows)
        )
        / (2 * h)
        for e in steps
    ]


_SHARES = [
    (None, None),
    (_SHARE, None),
    (None, _SHARE),
    (_SHARE, _SHARE),
    (_SCEPTICAL, _SHARE),
    (_JEFFREYS, _SHARE),
]


@pytest.mark.parametrize("slope_law", ["halfcauchy", "halfnormal"])
@pytest.mark.parametrize("groups, walk", [(1, 1), (3, 1), (6, 3)])
@pytest.mark.parametrize("floor, ceiling", _SHARES)
def test_gradient_matches_central_differences(groups, walk, floor, ceiling, slope_law):
    prior = kernel.CalibrationPrior(
        5.0, 2.5, 2.0, groups, floor, ceiling, slope_law, walk_length=walk, walk_scale=0.7
    )
    rows = _rows(groups=groups)
    theta = np.random.default_rng(1).normal(0, 0.5, prior.dim)
    grad = kernel._gradient(theta, prior, rows)
    numeric = _central_differences(theta, prior, rows, h=1e-6)
    # central differences are accurate to O(h^2) times the third derivative: 1e-5 is ample
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-5)


def test_the_judge_strata_shifts_are_random_walks_checked_against_scipy():
    # two runs of three strata: delta_1 ~ N(0, 2^2), delta_k = delta_(k-1) + N(0, 0.7^2), so a
    # run is normal with covariance s^2 + w^2 (min(i, j) - 1) between strata i and j (1-based)
    prior = kernel.CalibrationPrior(5.0, 2.5, 2.0, 6, None, None, walk_length=3, walk_scale=0.7)
    theta = np.random.default_rng(2).normal(0, 1.5, prior.dim)
    i = np.arange(3)
    run_cov = 2.0**2 + 0.7**2 * np.minimum.outer(i, i)
    groups = sum(stats.multivariate_normal(np.zeros(3), run_cov).logpdf(theta[r : r + 3])
                 for r in (1, 4))  # fmt: skip
    # the rest of the prior (intercept; log slope, Jacobian included) as without groups
    alone = kernel.CalibrationPrior(5.0, 2.5, 2.0, 1, None, None)
    rest = kernel.log_prior(theta[[0, 7]], alone)
    np.testing.assert_allclose(kernel.log_prior(theta, prior), groups + rest, rtol=1e-12)


@pytest.mark.parametrize("floor, ceiling", _SHARES)
@pytest.mark.parametrize("intercept", [-700.0, 700.0])
def test_gradient_stays_finite_and_exact_far_in_the_tails(floor, ceiling, intercept):
    # a line search may try |eta| ~ 700, where a sigmoid underflows: the gradient must stay
    # finite (warnings are errors here) and agree with the log density's central differences
    prior = kernel.CalibrationPrior(5.0, 5.0, 2.0, 1, floor, ceiling)
    rows = kernel.Rows(
        np.array([0.0, 1.0]), np.zeros(2, int), np.array([100.0, 3]), np.array([2.0, 50])
    )
    theta = np.zeros(prior.dim)
    theta[0] = intercept
    grad = kernel._gradient(theta, prior, rows)
    numeric = _central_differences(theta, prior, rows, h=1e-5)
    assert np.all(np.isfinite(grad))
    # the log density is ~1e5 here, so its differences carry ~1e-11 / 1e-5 = 1e-6 of rounding
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-3)


class _JeffreysOfLog:
    """The law of ``log phi`` when ``phi ~ Beta(1/2, 1/2)`` (unnormalised on a range)."""

    @staticmethod
    def logpdf(x):
        return stats.beta.logpdf(np.exp(x), 0.5, 0.5) + x  # change of variable: d phi = phi dx


@pytest.mark.parametrize(
    "floor_kind, slope_law",
    [
        ("open", "halfcauchy"),
        ("sceptical", "halfcauchy"),
        ("jeffreys", "halfcauchy"),
        ("open", "halfnormal"),
    ],
)
def test_log_posterior_is_the_models_density_checked_against_scipy(floor_kind, slope_law):
    # reference: the densities of the model card written with scipy on the constrained scale,
    # plus the log-Jacobians of b = exp(u), log phi = lo + (hi - lo) expit(v) and likewise psi;
    # log phi uniform on its range, normal truncated to it (the sceptical floor), or phi
    # Beta(1/2, 1/2) truncated to its range (Jeffreys)
    lo, hi = np.log(1e-4), np.log(0.5)
    lo_c, hi_c = np.log(1e-6), np.log(0.5)
    centre, sd = np.log(1e-3), 1.5
    floor = {
        "open": kernel.SharePrior(lo, hi),
        "sceptical": kernel.SharePrior(lo, hi, centre, sd),
        "jeffreys": kernel.SharePrior(lo, hi, jeffreys=True),
    }[floor_kind]
    prior = kernel.CalibrationPrior(
        5.0, 4.0, 2.0, 1, floor, kernel.SharePrior(lo_c, hi_c), slope_law
    )
    rows = _rows(seed=3)
    a, u, v, w = 0.3, 0.2, -0.4, 0.7
    b = np.exp(u)
    e, f = special.expit(v), special.expit(w)
    phi = np.exp(lo + (hi - lo) * e)
    psi = np.exp(lo_c + (hi_c - lo_c) * f)
    p = phi + (1 - phi - psi) * special.expit(a + b * rows.t)
    trials = rows.k + rows.m
    floor_law = {
        "open": stats.uniform(lo, hi - lo),
        "sceptical": stats.truncnorm((lo - centre) / sd, (hi - centre) / sd, loc=centre, scale=sd),
        "jeffreys": _JeffreysOfLog,
    }[floor_kind]
    slope_laws = {
        "halfcauchy": stats.halfcauchy(scale=4.0),
        "halfnormal": stats.halfnorm(scale=4.0),
    }
    expected = (
        stats.norm.logpdf(a, scale=5.0)
        + slope_laws[slope_law].logpdf(b)
        + u
        + floor_law.logpdf(np.log(phi))
        + np.log((hi - lo) * e * (1 - e))
        + stats.uniform.logpdf(np.log(psi), lo_c, hi_c - lo_c)
        + np.log((hi_c - lo_c) * f * (1 - f))
        + (stats.binom.logpmf(rows.k, trials, p) - np.log(special.comb(trials, rows.k))).sum()
    )
    got = kernel.log_posterior(np.array([a, u, v, w]), prior, rows)
    # the kernel drops constants: the truncated normal's normaliser (and the uniform's, which
    # the log-Jacobian's (hi - lo) cancels), so compare differences between two points
    v2 = v + 0.9
    e2 = special.expit(v2)
    phi2 = np.exp(lo + (hi - lo) * e2)
    p2 = phi2 + (1 - phi2 - psi) * special.expit(a + b * rows.t)
    expected2 = (
        expected
        - floor_law.logpdf(np.log(phi))
        - np.log((hi - lo) * e * (1 - e))
        + floor_law.logpdf(np.log(phi2))
        + np.log((hi - lo) * e2 * (1 - e2))
        - (stats.binom.logpmf(rows.k, trials, p) - stats.binom.logpmf(rows.k, trials, p2)).sum()
    )
    got2 = kernel.log_posterior(np.array([a, u, v2, w]), prior, rows)
    if floor_kind == "open":  # the uniform's constants cancel exactly
        assert got == pytest.approx(expected, rel=1e-10)
    assert got2 - got == pytest.approx(expected2 - expected, rel=1e-9)


def test_metropolis_moves_mend_concentrated_importance_weights():
    # two judge answers x eight score strata, 60 rows of 1-3 labels: the seed's importance
    # weights keep an effective sample size of 35 of 2,000 proposals (measured). The moved draws
    # against a long random-walk chain from the Laplace approximation (1,000 chains x 2,000
    # steps): 10/50/90% quantiles of every parameter within 0.4 of its posterior sd (measured
    # 0.17; two halves of a longer reference chain differed by up to 0.1), where the unmoved
    # resample is off by 1.10 sd
    share = kernel.SharePrior(np.log(1e-5), np.log(0.5))
    prior = kernel.CalibrationPrior(5.0, 2.5, 2.0, 16, share, share, walk_length=8, walk_scale=0.7)
    rng = np.random.default_rng(5)
    t = np.sort(rng.normal(-2, 4, 60))
    group = rng.integers(0, 16, 60)
    trials = rng.integers(1, 4, 60)
    k = rng.binomial(trials, special.expit(-1 + 1.5 * t))
    rows = kernel.Rows(t, group, k.astype(float), (trials - k).astype(float))
    fits = {
        moves: kernel.draw_parameters(
            prior, rows, 1000, np.random.default_rng(2), n_proposals=2000, moves=moves
        )
        for moves in (0, 200)
    }
    assert fits[0].ess < 0.2 * 1000 and fits[200].moves == 200
    assert 0.1 < fits[200].acceptance < 0.5  # a random walk tuned for its dimension
    mode = kernel.fit_mode(prior, rows)
    start = kernel._draw_t(mode.theta, mode.covariance, 4.0, 1000, np.random.default_rng(1))
    reference, _ = kernel._metropolis(
        start, prior, rows, mode.covariance, 2000, np.random.default_rng(1)
    )
    sd = reference.std(axis=0)

    def error(draws):
        q = [0.1, 0.5, 0.9]
        return (
            np.abs(np.quantile(draws, q, axis=0) - np.quantile(reference, q, axis=0)) / sd
        ).max()

    assert error(fits[200].theta) < 0.4, error(fits[200].theta)
    assert error(fits[0].theta) > 0.8, error(fits[0].theta)


def test_fast_engine_matches_quadrature_on_a_grid():
    # reference: the two-parameter posterior integrated on a fine grid (independent of the
    # importance sampler); 4000 draws give posterior means within ~0.03 sd (MC error)
    prior = kernel.CalibrationPrior(5.0, 5.0, 2.0, 1, None, None)
    rows = _rows(seed=2, n=25)
    a = np.linspace(-6, 6, 401)
    u = np.linspace(-4, 3, 401)
    A, U = np.meshgrid(a, u, indexing="ij")
    logp = kernel.log_posterior(np.stack([A, U], axis=-1), prior, rows)
    dens = np.exp(logp - logp.max())
    Z = integrate.trapezoid(integrate.trapezoid(dens, u, axis=1), a)
    mean_a = integrate.trapezoid(integrate.trapezoid(dens * A, u, axis=1), a) / Z
    mean_b = integrate.trapezoid(integrate.trapezoid(dens * np.exp(U), u, axis=1), a) / Z
    sd_a = np.sqrt(
        integrate.trapezoid(integrate.trapezoid(dens * A**2, u, axis=1), a) / Z - mean_a**2
    )
    draws = kernel.draw_parameters(prior, rows, 4000, np.random.default_rng(0))
    intercept, slope, _, _ = kernel.unpack(draws.theta, prior)
    assert draws.ess > 1000
    assert intercept.mean() == pytest.approx(mean_a, abs=0.1 * sd_a)
    assert slope.mean() == pytest.approx(mean_b, rel=0.05)


def test_poisson_shortcut_keeps_the_mean_and_errs_wide_on_the_variance():
    rng = np.random.default_rng(0)
    n = np.array([4000, 3000, 50, 20, 10])
    p = np.array([0.001, 0.004, 0.3, 0.995, 0.999])
    pattern = np.array([0, 0, 0, 1, 1])
    draws = kernel.predict_positives(np.tile(p, (20_000, 1)), n, pattern, 2, rng)
    exact_mean = np.bincount(pattern, weights=n * p)
    exact_var = np.bincount(pattern, weights=n * p * (1 - p))
    # 20,000 draws: the means are within 4 standard errors
    assert np.all(np.abs(draws.mean(0) - exact_mean) < 4 * np.sqrt(exact_var / 20_000))
    var = draws.var(0)
    # Poisson variance n p exceeds n p (1 - p) by a factor 1 / (1 - p) <= 1.005 here; the sample
    # variance of 20,000 draws has a relative sd of about 1%
    assert np.all(var > 0.95 * exact_var) and np.all(var < 1.1 * exact_var)


def test_labelling_every_item_gives_the_truth_with_no_width():
    pool, truth = _pool(size=2000, prevalence=0.05)
    bound = ScoreCalibration(draws=200).bind(pool, F1)
    every = np.arange(pool.size)
    draws = bound.fit(every, truth, rng=0).measure_draws()
    expected = F1.value(truth, predictions=pool.predictions)[0]
    np.testing.assert_allclose(draws, expected, rtol=1e-12)


def test_the_posterior_holds_the_truth_and_has_every_arviz_group():
    pool, truth = _pool()
    rng = np.random.default_rng(3)
    labelled = rng.choice(pool.size, 500, replace=False)
    dt = ScoreCalibration().bind(pool, F1).posterior(labelled, truth[labelled], rng=1)
    for group in ("posterior", "prior", "posterior_predictive", "log_likelihood"):
        assert group in dt.children
    assert "ceiling_gap" in dt["posterior"] and "floor" in dt["posterior"]  # the default
    assert set(dt["observed_data"].data_vars) == {"y"}
    f1 = dt["posterior"]["f1"].values.ravel()
    lo, hi = np.quantile(f1, [0.025, 0.975])
    assert lo < F1.value(truth, predictions=pool.predictions)[0] < hi
    summary = az.summary(dt, var_names=["slope", "intercept"], ci_kind="eti", ci_prob=0.9)
    assert (summary["mean"] == summary["mean"]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Pareto-k of a few influential rows
        loo = az.loo(dt)
    assert np.isfinite(loo.elpd)


def test_the_prior_of_each_share_is_log_uniform_on_its_range():
    pool, truth = _pool(size=5000)
    bound = ScoreCalibration.robust(draws=2000).bind(pool, F1)
    dt = bound.posterior([0, 1, 2], truth[:3], rng=0)
    for name, share in (("floor", bound.prior.floor), ("ceiling_gap", bound.prior.ceiling)):
        log_share = np.log(dt["prior"][name].values.ravel())
        lo, hi = share.lo, share.hi
        # the range is a tenth of an item of the pool to half the pool
        assert lo == pytest.approx(np.log(0.1 / pool.size)) and hi == pytest.approx(np.log(0.5))
        # Kolmogorov-Smirnov against the uniform law (seeded): p ~ U(0, 1) if the law is right
        assert stats.kstest(log_share, stats.uniform(lo, hi - lo).cdf).pvalue > 0.001


def test_the_jeffreys_floor_is_beta_half_half_on_its_range():
    pool, truth = _pool(size=5000)
    bound = ScoreCalibration(floor="jeffreys", draws=2000).bind(pool, F1)
    dt = bound.posterior([0, 1, 2], truth[:3], rng=0)
    phi = dt["prior"]["floor"].values.ravel()
    lo, hi = np.exp([bound.prior.floor.lo, bound.prior.floor.hi])
    ends = stats.beta.cdf([lo, hi], 0.5, 0.5)

    def truncated_cdf(x):
        return (stats.beta.cdf(x, 0.5, 0.5) - ends[0]) / (ends[1] - ends[0])

    # Kolmogorov-Smirnov against Beta(1/2, 1/2) truncated to [0.1 / M, 1/2] (seeded)
    assert stats.kstest(phi, truncated_cdf).pvalue > 0.001


def test_the_sceptical_floor_expects_a_thousandth_of_a_hidden_positive():
    pool, truth = _pool(size=5000)
    bound = ScoreCalibration(draws=2000).bind(pool, F1)
    dt = bound.posterior([0, 1, 2], truth[:3], rng=0)
    hidden = dt["prior"]["floor"].values.ravel() * pool.size
    # log(phi M) ~ Normal(log 0.001, 4) (truncated 6 sd away): Kolmogorov-Smirnov, seeded
    assert stats.kstest(np.log(hidden), stats.norm(np.log(0.001), 4).cdf).pvalue > 0.001


def test_the_sceptical_floor_follows_low_scored_positives_that_the_curve_cannot_explain():
    # 20,000 items score 1e-6..1e-4 and hide 60 positives (0.3%; a curve through the other
    # items predicts about one); 3,000 calibrated items above them are all labelled, and 1,000
    # labels among the low scores find 3 of the hidden positives. The plain curve
    # (floor="none") is sure of about one hidden positive: recall [0.740, 0.741] against the true
    # 0.714. The sceptical floor learns the share the labels show: [0.690, 0.740]. Seeded; the
    # 2.5% and 97.5% quantiles of 1,000 draws carry a Monte Carlo error of about 0.003.
    rng = np.random.default_rng(11)
    low = np.exp(rng.uniform(np.log(1e-6), np.log(1e-4), 20_000))
    mid = rng.uniform(0.01, 0.99, 3000)
    scores = np.concatenate([low, mid])
    truth = np.zeros(scores.size, bool)
    truth[rng.choice(20_000, 60, replace=False)] = True
    truth[20_000:] = rng.random(mid.size) < mid
    pool = be.Pool(scores)
    recall = be.measures.Recall()
    hidden, others = np.flatnonzero(truth[:20_000]), np.flatnonzero(~truth[:20_000])
    labelled = np.concatenate(
        [hidden[:3], rng.choice(others, 997, replace=False), 20_000 + np.arange(mid.size)]
    )
    true_recall = recall.value(truth, predictions=pool.predictions)[0]
    q = {}
    for floor in ("none", "sceptical"):
        model = ScoreCalibration(floor=floor).bind(pool, recall)
        draws = model.fit(labelled, truth[labelled], rng=0).measure_draws()[:, 0]
        q[floor] = np.quantile(draws, [0.025, 0.975])
    assert true_recall < q["none"][0]
    assert q["sceptical"][0] < true_recall < q["sceptical"][1]


def test_the_ceiling_gap_lets_unlabelled_high_scores_hold_negatives():
    # 1,000 items at the top of the scores (0.99-1), 5 of them negative (precision 0.995); 100
    # top items are labelled, all positive. A logistic curve rising to 1 is sure that the 900
    # unlabelled top items hold at most a negative or two and misses; the ceiling gap leaves
    # room for what 100 labels cannot rule out (interval ends: about 0.998 against 0.990; the
    # truth is 2-3 items from each, several Monte Carlo errors of a 2.5% quantile)
    rng = np.random.default_rng(5)
    size = 20_000
    scores = 0.45 * rng.beta(1, 12, size)  # every other item is predicted negative
    top = rng.choice(size, 1000, replace=False)
    scores[top] = rng.uniform(0.99, 1.0, top.size)
    truth = np.zeros(size, bool)
    truth[top[:995]] = True
    pool = be.Pool(scores)
    precision = be.measures.Precision()
    others = np.setdiff1d(np.arange(size), top)
    labelled = np.concatenate([top[:100], rng.choice(others, 300, replace=False)])
    true_precision = precision.value(truth, predictions=pool.predictions)[0]
    lower = {}
    for ceiling in (False, True):
        model = ScoreCalibration(ceiling=ceiling).bind(pool, precision)
        draws = model.fit(labelled, truth[labelled], rng=0).measure_draws()[:, 0]
        lower[ceiling] = np.quantile(draws, 0.025)
    assert lower[True] < true_precision < lower[False]


def test_fine_bins_change_nothing():
    # 1024 bins against 16,384 (nearly item by item): the 2.5/50/97.5% quantiles of F1 differ by
    # less than four Monte Carlo standard errors of a difference of two fits (the quantiles' sd
    # over six seeds of 4000 draws here: at most 0.013, 0.0023, 0.0016 for either bin count —
    # the lower tail, where two labelled positives leave the curve's steepness open, is noisy)
    pool, truth = _pool()
    labelled = np.random.default_rng(4).choice(pool.size, 400, replace=False)
    q = []
    for bins in (1024, 16_384):
        draws = (
            ScoreCalibration(bins=bins, draws=4000)
            .bind(pool, F1)
            .fit(labelled, truth[labelled], rng=5)
            .measure_draws()
        )
        q.append(np.quantile(draws, [0.025, 0.5, 0.975]))
    mc_sd = np.array([0.013, 0.0023, 0.0016])
    np.testing.assert_array_less(np.abs(q[0] - q[1]), 4 * np.sqrt(2) * mc_sd)


def test_several_systems_get_an_intercept_per_prediction_pattern():
    rng = np.random.default_rng(0)
    truth = rng.random(5000) < 0.05
    a = np.where(truth, rng.beta(5, 2, 5000), rng.beta(1, 8, 5000))
    b = np.clip(a + rng.normal(0, 0.1, 5000), 0, 1)
    pool = be.Pool(np.stack([a, b], axis=1), systems=["a", "b"])
    labelled = rng.choice(5000, 600, replace=False)
    dt = ScoreCalibration().bind(pool, F1).posterior(labelled, truth[labelled], rng=0)
    assert dt["posterior"]["intercept"].dims == ("chain", "draw", "group")
    truths = [F1.value(truth, predictions=pool.predictions[:, s])[0] for s in range(2)]
    assert dt["posterior"]["f1"].dims == ("chain", "draw", "system")
    for name, true in zip(("a", "b"), truths, strict=True):
        draws = dt["posterior"]["f1"].sel(system=name).values.ravel()
        assert np.quantile(draws, 0.005) < true < np.quantile(draws, 0.995)


def test_a_stochastic_target_uses_every_draw_as_an_observation():
    # finite=False: the measure under the curve for every item; repeated items are allowed
    pool, truth = _pool(size=5000, prevalence=0.05)
    positions = np.random.default_rng(1).integers(0, pool.size, 800)
    post = ScoreCalibration().bind(pool, F1).fit(positions, truth[positions], finite=False, rng=0)
    assert np.isfinite(post.measure_draws()).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"slope_scale": 0}, "`slope_scale` must be a positive number; got 0"),
        (
            {"slope_prior": "cauchy"},
            "`slope_prior` must be one of 'halfcauchy', 'halfnormal'; got 'cauchy'",
        ),
        ({"intercept_scale": float("nan")}, "`intercept_scale` must be a positive number"),
        (
            {"floor": True},
            "`floor` must be one of 'none', 'sceptical', 'open', 'jeffreys'; got True",
        ),
        ({"floor": ("open",)}, "a tuple of two or more distinct ones; got \\('open',\\)"),
        ({"floor": ("open", "open")}, "two or more distinct ones; got \\('open', 'open'\\)"),
        ({"floor": ("open", "wide")}, "`floor` must be one of .*; got 'wide'"),
        ({"ceiling": "yes"}, "`ceiling` must be True or False; got 'yes'"),
        ({"bins": 1}, "`bins`"),
        ({"draws": 1001}, "`draws` must be a multiple of `chains` \\(4\\); got 1001"),
        ({"engine": "exact"}, "`engine` must be one of 'fast', 'pymc'; got 'exact'"),
    ],
)
def test_bad_specifications_name_the_parameter(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ScoreCalibration(**kwargs)


def test_bad_data_is_refused_with_a_clear_message():
    pool, truth = _pool(size=1000)
    bound = ScoreCalibration().bind(pool, F1)
    with pytest.raises(ValueError, match="needs labels to learn the curve"):
        bound.fit([], [])
    with pytest.raises(ValueError, match="one label per position: 2 positions, 1 labels"):
        bound.fit([1, 2], [0])
    with pytest.raises(ValueError, match="must not repeat an item"):
        bound.fit([1, 1], [0, 0])
    with pytest.raises(ValueError, match=r"pool positions in \[0, 1000\); got 0 .. 1000"):
        bound.fit([0, 1000], [0, 0])
    with pytest.raises(ValueError, match="varies with each score"):
        ScoreCalibration().bind(pool, be.measures.BrierScore())


@pytest.mark.slow
@pytest.mark.parametrize("floor", ["sceptical", "open", "jeffreys"])
def test_engines_agree(floor):  # every floor prior, each beside the ceiling gap
    # NUTS (4 x 1000 draws) against the fast engine (4000 draws): medians and 10/90% quantiles
    # of every variable within 4 Monte Carlo standard errors of a quantile, about
    # sd * sqrt(q (1 - q) / ESS) / density; 0.15 posterior sd bounds it for ESS >= 1000
    pool, truth = _pool()
    labelled = np.random.default_rng(2).choice(pool.size, 300, replace=False)
    draws = {}
    for engine in ("fast", "pymc"):
        spec = ScoreCalibration(floor=floor, engine=engine, draws=4000)
        draws[engine] = spec.bind(pool, F1).posterior(labelled, truth[labelled], rng=1)
    names = ["intercept", "slope", "f1", "ceiling_gap", "floor"]
    for name in names:
        fast = draws["fast"]["posterior"][name].values.ravel()
        nuts = draws["pymc"]["posterior"][name].values.ravel()
        if name in ("floor", "ceiling_gap"):  # orders of magnitude: compare on the log scale
            fast, nuts = np.log(fast), np.log(nuts)
        sd = nuts.std()
        np.testing.assert_allclose(
            np.quantile(fast, [0.1, 0.5, 0.9]), np.quantile(nuts, [0.1, 0.5, 0.9]), atol=0.15 * sd
        )


def test_concentrated_weights_warn_and_name_the_remedy(monkeypatch):
    pool, truth = _pool(size=1000)
    bound = ScoreCalibration(draws=100).bind(pool, F1)

    def degenerate(*args, **kwargs):  # weights on 3 proposals, moves that hardly moved them
        theta = np.zeros((100, bound.prior.dim))
        return kernel.ParameterDraws(theta, ess=3.0, n_proposals=200, moves=200, acceptance=0.01)

    monkeypatch.setattr(kernel, "draw_parameters", degenerate)
    with pytest.warns(
        CalibrationWarning,
        match="effective sample size 3 from 200 proposals, for 100 draws.*accepted 1.0% of 200 "
        "steps.*engine='pymc'",
    ):
        bound.fit([0, 1, 2], [0, 0, 1], rng=0)


def test_labels_outside_zero_one_are_refused():
    pool, _ = _pool(size=1000)
    bound = ScoreCalibration().bind(pool, F1)
    with pytest.raises(ValueError, match="`labels` must contain only 0 and 1; entry 1 is 2"):
        bound.fit([0, 1], [0, 2])
