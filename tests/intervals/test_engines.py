"""The exact and PyMC engines give the same posterior intervals within Monte Carlo error."""

import arviz as az
import numpy as np
import pytest

import bayeval as be

pytestmark = pytest.mark.slow

SAMPLES = {
    "webber": be.StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3),
    "finite": be.StratifiedSample.two_segments(N1=120, n1=60, r1=40, N0=600, n0=150, r0=6),
    "stratified": be.StratifiedSample(
        population=[800, 1200, 5000, 20000],
        sampled=[60, 40, 80, 60],
        positives=[50, 20, 12, 1],
        retrieved=[True, True, False, False],
    ),
}
CASES = [
    ("webber", "recall", "beta-binomial-half"),
    ("webber", "recall", "beta-jeffreys"),
    ("finite", "f1", "beta-binomial-uniform"),
    ("finite", "precision", "beta-binomial-mcp"),
    ("stratified", "recall", "beta-binomial-half"),
]
FUNCTIONS = {"recall": be.recall_interval, "precision": be.precision_interval, "f1": be.f1_interval}


@pytest.mark.parametrize(("name", "measure", "method"), CASES)
def test_engines_agree(name, measure, method):
    sample = SAMPLES[name]
    fn = FUNCTIONS[measure]
    exact = fn(sample, method=method, rng=1, draws=50_000)  # 4 x 50,000 independent draws
    nuts = fn(
        sample,
        method=method,
        engine="pymc",
        rng=2,
        draws=2000,
        sampler_options={"chains": 2, "tune": 1000},
    )
    reference = np.sort(exact.posterior["posterior"][measure].values.ravel())
    tree = nuts.posterior
    # Compare in probability, which also works for discrete posteriors (precision of a small
    # segment has atoms 1/N1 apart, where quantile MCSEs are 0): the exact posterior CDF at
    # each NUTS bound must reach its level q from the right side, within 4.5 combined Monte
    # Carlo standard errors of a q-quantile's rank (NUTS's from its quantile ESS).
    for q, bound in ((0.025, nuts.lower), (0.975, nuts.upper)):
        ess = float(az.ess(tree, var_names=[measure], method="quantile", prob=q)[measure])
        tol = 4.5 * np.sqrt(q * (1 - q) * (1 / ess + 1 / reference.size))
        below = np.searchsorted(reference, bound, side="left") / reference.size
        at_or_below = np.searchsorted(reference, bound, side="right") / reference.size
        assert below <= q + tol and at_or_below >= q - tol, (q, bound, below, at_or_below, tol)
    # And the exact engine's own bounds lie in the same place (quadrature or its draws).
    assert np.searchsorted(reference, exact.lower, side="right") / reference.size >= 0.025 - 0.002
    assert int(tree["sample_stats"]["diverging"].sum()) == 0
    assert float(az.rhat(tree, var_names=[measure])[measure]) < 1.01


def test_hierarchical_recall_runs_through_the_public_api():
    s = be.StratifiedSample(
        population=[400, 900, 1500, 3000, 8000, 20000, 60000, 150000],
        sampled=[30, 30, 30, 30, 40, 40, 40, 60],
        positives=[25, 18, 9, 4, 3, 1, 0, 0],
        retrieved=[True, True, True, True, False, False, False, False],
    )
    res = be.recall_interval(
        s, method="beta-binomial-hierarchical", rng=3, draws=1000, sampler_options={"chains": 2}
    )
    assert res.engine == "pymc"
    assert 0 < res.lower < res.estimate < res.upper < 1
    tree = res.posterior
    assert int(tree["sample_stats"]["diverging"].sum()) == 0
    assert set(tree["posterior"]["stratum_yield"].coords["stratum"].values) == set(s.names)
