"""Stratum prevalences partially pooled within segments (non-centred hierarchical model).

Tolerances are four Monte Carlo standard errors, each derived from ArviZ's effective sample
size of the quantity compared (see tests/models/test_segment_yields.py). The settings under
which zero divergences are asserted are the defaults of ``sample_hierarchical_yields``
(draws=1000, tune=1000, chains=2, target_accept=0.95) with the seeds below.
"""

import arviz as az
import numpy as np
import pytest
from scipy import stats

from bayeval.models import SEGMENTS, hierarchical_yields_model, sample_hierarchical_yields
from bayeval.stratified_sample import StratifiedSample

pytestmark = pytest.mark.slow

Z = 4.0

# TREC-Legal-like design (Webber 2013, §4.4): 16 intersection strata, 8 per segment, samples
# of 4-60 items, five strata with r = 0, one with r = n, and a huge, sparsely sampled bottom
# stratum (documents no team retrieved) in the unretrieved segment.
TREC = StratifiedSample(
    population=[1200, 340, 90, 2600, 45, 700, 150, 30, 5200, 800, 260, 95, 40, 1500, 120, 650000],
    sampled=[25, 12, 6, 30, 5, 15, 8, 4, 30, 15, 10, 6, 4, 20, 8, 60],
    positives=[18, 5, 6, 11, 2, 14, 0, 3, 4, 3, 0, 1, 0, 6, 2, 0],
    retrieved=[True] * 8 + [False] * 8,
)

# The retrieved segment is a single stratum: nothing to pool there.
SINGLE = StratifiedSample(
    population=[3000, 900, 400, 120000, 60],
    sampled=[40, 15, 10, 50, 5],
    positives=[31, 2, 0, 0, 1],
    retrieved=[True, False, False, False, False],
)


@pytest.fixture(scope="module")
def trec_fit():
    return sample_hierarchical_yields(TREC, rng=2009)


@pytest.fixture(scope="module")
def single_fit():
    return sample_hierarchical_yields(SINGLE, rng=11)


def _mean_and_mcse(dt, name):
    draws = dt["posterior"][name]
    ess = az.ess(dt, var_names=[name], method="mean")[name].values
    return (
        draws.mean(("chain", "draw")).values,
        draws.std(("chain", "draw")).values / np.sqrt(ess),
    )


# -- building the model (no sampling) ----------------------------------------------------------
def test_model_structure():
    model = hierarchical_yields_model(TREC)
    assert [v.name for v in model.free_RVs] == ["typical_prevalence", "sigma", "z"]
    assert [v.name for v in model.deterministics] == ["mu", "prevalence"]
    assert [v.name for v in model.observed_RVs] == ["sampled_positives"]
    assert model.coords["segment"] == SEGMENTS
    assert model.coords["stratum"] == TREC.names
    continuous = hierarchical_yields_model(TREC, finite_population=False)
    assert [v.name for v in continuous.deterministics][-2:] == ["stratum_yield", "segment_yield"]


def test_single_stratum_segment_prevalence_is_its_typical_prevalence():
    # With one stratum in the retrieved segment, sigma and z do not enter its prevalence.
    model = hierarchical_yields_model(SINGLE)
    (graph,) = model.replace_rvs_by_values([model["prevalence"]])
    prevalence = model.compile_fn(graph, inputs=model.value_vars)  # a function of a point
    point = model.initial_point()
    low = prevalence(point)
    point["sigma_log__"] = point["sigma_log__"] + 3.0
    point["z"] = point["z"] + 1.0
    high = prevalence(point)
    assert low[0] == high[0]
    assert not np.allclose(low[1:], high[1:])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"prior": (0.5, [0.5, 0.5, 0.5])}, "a 1-d array of 2 positive numbers"),
        ({"sigma_scale": -1.0}, "sigma_scale"),
        ({"sigma_scale": [1.0, 2.0, 3.0]}, "sigma_scale"),
        ({"finite_population": 1}, "finite_population"),
    ],
)
def test_model_rejects_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        hierarchical_yields_model(TREC, **kwargs)


# -- TREC-like design ---------------------------------------------------------------------------
def test_trec_diagnostics(trec_fit):
    assert int(trec_fit["sample_stats"]["diverging"].sum()) == 0
    rhat = az.rhat(trec_fit)
    assert max(float(rhat[name].max()) for name in rhat.data_vars) < 1.01
    table = az.summary(trec_fit, var_names=["mu", "sigma", "segment_yield"])
    assert len(table) == 6


def test_trec_shrinkage(trec_fit):
    raw = TREC.positives / TREC.sampled
    seg = np.where(TREC.retrieved, 0, 1)
    totals = TREC.segment_totals()
    pooled = (totals["r"] / totals["n"])[seg]
    mean, mcse = _mean_and_mcse(trec_fit, "prevalence")
    lo, hi = np.minimum(raw, pooled), np.maximum(raw, pooled)
    # Every stratum's posterior mean lies between its raw and its segment's pooled proportion...
    assert ((mean > lo - Z * mcse) & (mean < hi + Z * mcse)).all()
    # ... and strata far from their segment are visibly pulled away from their raw proportion.
    far = np.abs(raw - pooled) > 0.3
    assert far.sum() == 3
    assert (np.abs(mean - raw)[far] > Z * mcse[far]).all()


def test_trec_yields(trec_fit):
    post = trec_fit["posterior"]
    y = post["stratum_yield"]
    assert np.issubdtype(y.dtype, np.integer)
    r = TREC.positives
    upper = r + TREC.population - TREC.sampled
    assert (y.values >= r).all() and (y.values <= upper).all()
    for k, name in enumerate(SEGMENTS):
        members = [s for s, ret in zip(TREC.names, TREC.retrieved, strict=True) if ret == (k == 0)]
        np.testing.assert_array_equal(
            post["segment_yield"].sel(segment=name), y.sel(stratum=members).sum("stratum")
        )


# -- a single-stratum segment -----------------------------------------------------------------
def test_single_stratum_segment(single_fit):
    assert int(single_fit["sample_stats"]["diverging"].sum()) == 0
    rhat = az.rhat(single_fit, var_names=["prevalence", "mu", "segment_yield"])
    assert max(float(rhat[name].max()) for name in rhat.data_vars) < 1.01
    # The retrieved segment's parameters see only its own stratum, whose prevalence is the
    # typical prevalence with the Beta(0.5, 0.5) prior: the posterior is Beta(0.5 + r, 0.5 + n - r)
    # exactly, as in the independent model (Webber §2.7).
    exact = stats.beta(0.5 + 31, 0.5 + 40 - 31)
    mean, mcse = _mean_and_mcse(single_fit, "prevalence")
    assert abs(mean[0] - exact.mean()) < Z * mcse[0]
    draws = single_fit["posterior"]["prevalence"].isel(stratum=0)
    for p in (0.05, 0.95):
        ess = float(az.ess(draws.values, method="quantile", prob=p))
        q_nuts = float(draws.quantile(p))
        assert abs(exact.cdf(q_nuts) - p) < Z * np.sqrt(p * (1 - p) / ess)
