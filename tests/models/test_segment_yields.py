"""NUTS twin of the closed-form beta-binomial yields (Webber 2013, §2.8, §3.5-3.6).

Every comparison with a closed form uses a tolerance of four Monte Carlo standard errors, the
standard error being derived from ArviZ's effective sample size of the quantity compared:
``sd / sqrt(ess_mean)`` for a mean, ``sqrt(p (1 - p) / ess_quantile)`` for the exact CDF at
an estimated ``p``-quantile, ``sqrt(p (1 - p) / ess)`` for a probability estimated by a
frequency. With the
seeds fixed the tests are deterministic; four standard errors keep them robust to a change of
seed or of PyMC version (a false failure has probability ~6e-5 per comparison).
"""

import subprocess
import sys

import arviz as az
import numpy as np
import pytest
import xarray as xr
from scipy import stats

from bayeval.models import SEGMENTS, sample_segment_yields, segment_yields_model
from bayeval.stratified_sample import StratifiedSample

pytestmark = pytest.mark.slow

Z = 4.0  # Monte Carlo standard errors allowed in every comparison

# Five strata covering the edge cases: r = n (s1), N = n (s2, known yield), n = 0 (s3, prior
# only, with its own informative prior), r = 0 in a large stratum (s4).
EDGE = StratifiedSample(
    population=[500, 50, 30, 1000, 20000],
    sampled=[40, 10, 30, 0, 60],
    positives=[12, 10, 7, 0, 0],
    retrieved=[True, True, False, False, False],
    names=["s0", "s1", "s2", "s3", "s4"],
)
A = np.array([0.5, 1.0, 0.5, 2.0, 0.3])  # per-stratum priors, as the most conservative
B = np.array([0.5, 1.0, 0.5, 5.0, 0.3])  # prior would give (but distinct to be checkable)
RANDOM = ["s0", "s1", "s3", "s4"]  # strata whose yield is uncertain (N > n)


@pytest.fixture(scope="module")
def edge_fit():
    # Four chains (not the default two) so that the r-hat < 1.01 check is itself reliable: the
    # Beta(0.3, 60.3) posterior of s4 has a long left tail on the log-odds scale NUTS works on,
    # and with two chains of 1000 draws its r-hat exceeds 1.01 for some seeds.
    return sample_segment_yields(EDGE, prior=(A, B), chains=4, rng=20130101)


@pytest.fixture(scope="module")
def continuous_fit():
    sample = StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    return sample, sample_segment_yields(sample, finite_population=False, rng=7)


def _posterior_beta(sample, a, b):
    return stats.beta(a + sample.positives, b + sample.sampled - sample.positives)


def _per_stratum(values, post):
    """A per-stratum constant as a DataArray aligned with the posterior's ``stratum`` dim."""
    return xr.DataArray(np.asarray(values), dims="stratum", coords={"stratum": post["stratum"]})


# -- building the model (no sampling) ----------------------------------------------------------
def test_import_does_not_import_pymc():
    code = "import sys, bayeval.models; assert 'pymc' not in sys.modules, 'pymc imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_model_structure():
    model = segment_yields_model(EDGE, prior=(A, B))
    assert [v.name for v in model.free_RVs] == ["prevalence"]
    assert [v.name for v in model.observed_RVs] == ["sampled_positives"]
    assert model.coords["stratum"] == EDGE.names
    assert model.coords["segment"] == SEGMENTS
    assert model.deterministics == []
    continuous = segment_yields_model(EDGE, finite_population=False)
    assert [v.name for v in continuous.deterministics] == ["stratum_yield", "segment_yield"]


def test_per_stratum_prior_is_used():
    import pymc as pm

    model = segment_yields_model(EDGE, prior=(A, B))
    x = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
    logp = pm.logp(model["prevalence"], x).eval()
    np.testing.assert_allclose(logp, stats.beta.logpdf(x, A, B), rtol=1e-10)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"prior": (0.5,)}, "pair"),
        ({"prior": "jeffreys"}, "pair"),
        ({"prior": (0.5, [1, 1])}, "one per stratum"),
        ({"prior": (0.0, 0.5)}, "positive"),
        ({"prior": (np.nan, 0.5)}, "positive"),
        ({"finite_population": "yes"}, "finite_population"),
    ],
)
def test_model_rejects_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        segment_yields_model(EDGE, **kwargs)


def test_rejects_non_sample():
    with pytest.raises(TypeError, match="StratifiedSample"):
        segment_yields_model({"N": [10, 10]})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"draws": 0}, "draws"),
        ({"chains": 1.5}, "chains"),
        ({"tune": -1}, "tune"),
        ({"target_accept": 1.0}, "target_accept"),
        ({"rng": "seed"}, "rng"),
    ],
)
def test_sampler_rejects_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sample_segment_yields(EDGE, **kwargs)


# -- NUTS against the closed form ---------------------------------------------------------------
def test_diagnostics(edge_fit):
    assert int(edge_fit["sample_stats"]["diverging"].sum()) == 0
    assert set(edge_fit.children) >= {"posterior", "sample_stats", "observed_data"}
    rhat = az.rhat(edge_fit, var_names=["prevalence", "segment_yield"])
    assert float(rhat["prevalence"].max()) < 1.01
    assert float(rhat["segment_yield"].max()) < 1.01
    yield_rhat = az.rhat(edge_fit, var_names=["stratum_yield"], coords={"stratum": RANDOM})
    assert float(yield_rhat["stratum_yield"].max()) < 1.01


def test_prevalence_matches_beta_posterior(edge_fit):
    exact = _posterior_beta(EDGE, A, B)
    draws = edge_fit["posterior"]["prevalence"]
    ess = az.ess(edge_fit, var_names=["prevalence"], method="mean")["prevalence"].values
    sd = draws.std(("chain", "draw")).values
    mean = draws.mean(("chain", "draw")).values
    np.testing.assert_array_less(np.abs(mean - exact.mean()), Z * sd / np.sqrt(ess))
    # Quantiles are compared on the probability scale, F(q_nuts) against p, where the Monte
    # Carlo error sqrt(p (1 - p) / ess_quantile) needs no density (the Beta(0.3, 60.3) density
    # is unbounded near its 5% quantile, which makes the delta method unreliable there).
    for p in (0.05, 0.95):
        ess_q = az.ess(edge_fit, var_names=["prevalence"], method="quantile", prob=p)
        q_nuts = draws.quantile(p, dim=("chain", "draw")).values
        mcse = np.sqrt(p * (1 - p) / ess_q["prevalence"].values)
        np.testing.assert_array_less(np.abs(exact.cdf(q_nuts) - p), Z * mcse)


def test_unsampled_stratum_reproduces_its_prior(edge_fit):
    # s3 has n = 0 and its own Beta(2, 5) prior: posterior = prior, mean 2/7.
    draws = edge_fit["posterior"]["prevalence"].sel(stratum="s3")
    ess = float(az.ess(draws.values, method="mean"))
    assert abs(float(draws.mean()) - 2 / 7) < Z * float(draws.std()) / np.sqrt(ess)


def test_stratum_yield_is_beta_binomial(edge_fit):
    post = edge_fit["posterior"]
    y = post["stratum_yield"]
    assert np.issubdtype(y.dtype, np.integer)
    r, n, N = EDGE.positives, EDGE.sampled, EDGE.population
    assert (y >= _per_stratum(r, post)).all()
    assert (y <= _per_stratum(r + N - n, post)).all()
    assert (y.sel(stratum="s2") == 7).all()  # N = n: the yield is known
    assert (y.sel(stratum="s1") >= 10).all()  # r = n: at least the sampled positives

    # Mean: r + (N - n) (a + r) / (a + b + n), Webber Eq. 17.
    exact_mean = r + (N - n) * (A + r) / (A + B + n)
    for s in RANDOM:
        i = EDGE.names.index(s)
        d = y.sel(stratum=s)
        ess = float(az.ess(d.values, method="mean"))
        tol = Z * float(d.std()) / np.sqrt(ess)
        assert abs(float(d.mean()) - exact_mean[i]) < tol, s

    # Whole distribution: P(R - r <= median) against the beta-binomial CDF (Eq. 17).
    for s in RANDOM:
        i = EDGE.names.index(s)
        exact = stats.betabinom(N[i] - n[i], A[i] + r[i], B[i] + n[i] - r[i])
        k = exact.ppf(0.5)
        p = exact.cdf(k)
        hit = (y.sel(stratum=s) - r[i] <= k).values.astype(float)
        ess = float(az.ess(hit, method="mean"))
        assert abs(hit.mean() - p) < Z * np.sqrt(p * (1 - p) / ess), s


def test_segment_yield_sums_stratum_yields(edge_fit):
    post = edge_fit["posterior"]
    assert post["segment_yield"].dims == ("chain", "draw", "segment")
    assert tuple(post["segment"].values) == SEGMENTS
    retrieved = post["stratum_yield"].sel(stratum=["s0", "s1"]).sum("stratum")
    unretrieved = post["stratum_yield"].sel(stratum=["s2", "s3", "s4"]).sum("stratum")
    np.testing.assert_array_equal(post["segment_yield"].sel(segment="retrieved"), retrieved)
    np.testing.assert_array_equal(post["segment_yield"].sel(segment="unretrieved"), unretrieved)


def test_same_seed_same_draws():
    kwargs = {"draws": 30, "tune": 30, "rng": 5}
    first = sample_segment_yields(EDGE, **kwargs)["posterior"]
    second = sample_segment_yields(EDGE, **kwargs)["posterior"]
    np.testing.assert_array_equal(first["prevalence"], second["prevalence"])
    np.testing.assert_array_equal(first["stratum_yield"], second["stratum_yield"])


# -- continuous yields (Webber §3.5) and ArviZ ----------------------------------------------------
def test_continuous_yields(continuous_fit):
    sample, dt = continuous_fit
    post = dt["posterior"]
    assert int(dt["sample_stats"]["diverging"].sum()) == 0
    unsampled = _per_stratum(sample.population - sample.sampled, post)
    expected = _per_stratum(sample.positives, post) + post["prevalence"] * unsampled
    xr.testing.assert_allclose(
        post["stratum_yield"], expected.transpose(*post["stratum_yield"].dims)
    )
    np.testing.assert_allclose(
        post["segment_yield"].values, post["stratum_yield"].values, rtol=1e-12
    )  # one stratum per segment
    exact_mean = sample.positives + (sample.population - sample.sampled) * (
        0.5 + sample.positives
    ) / (1 + sample.sampled)
    ess = az.ess(dt, var_names=["stratum_yield"], method="mean")["stratum_yield"].values
    sd = post["stratum_yield"].std(("chain", "draw")).values
    mean = post["stratum_yield"].mean(("chain", "draw")).values
    np.testing.assert_array_less(np.abs(mean - exact_mean), Z * sd / np.sqrt(ess))


def test_arviz_summaries(continuous_fit):
    _, dt = continuous_fit
    table = az.summary(dt, ci_kind="eti", ci_prob=0.95)
    assert {
        "prevalence[retrieved]",
        "stratum_yield[unretrieved]",
        "segment_yield[retrieved]",
    } <= set(table.index)
    assert set(az.ess(dt).data_vars) == {"prevalence", "stratum_yield", "segment_yield"}
    assert float(az.rhat(dt)["segment_yield"].max()) < 1.01
