"""The simple and joint estimators: exact expectations, simulated bias and variance."""

import numpy as np
import pytest

from bayeval._core import joint_is

R = 400  # repeats of the whole on-demand evaluation (about 4 s)


@pytest.fixture(scope="module")
def repeats(universe, run):
    """Estimates of R evaluations with 60 draws per system and |Y_0| = 100."""
    tables = {"joint": [], "simple": []}
    for seed in range(R):
        ev = run(universe, seed, n_samples=60)
        for estimator in tables:
            tables[estimator].append(ev.table(estimator))
    return {
        estimator: {m: np.array([t[m].to_numpy() for t in tabs]) for m in ("precision", "recall")}
        for estimator, tabs in tables.items()
    }


@pytest.mark.parametrize("estimator", ["joint", "simple"])
@pytest.mark.parametrize("measure", ["precision", "recall"])
def test_estimators_are_unbiased(repeats, universe, estimator, measure):
    # Mean over R seeded repeats within 4 Monte Carlo standard errors of the truth, for every
    # system. Joint recall is a ratio estimator (consistent, Theorem 2); its O(1/N) bias with
    # N = 360 labelled draws is far below the Monte Carlo error.
    est = repeats[estimator][measure]
    truth = universe.scores()[measure].to_numpy()
    mc_se = est.std(axis=0, ddof=1) / np.sqrt(R)
    assert np.all(np.abs(est.mean(axis=0) - truth) < 4 * mc_se)


def test_joint_varies_less_than_simple_when_systems_overlap(repeats, universe, exact_variance):
    # agreement=0.7: every system shares most predictions with others. Exactly (Theorem 1, the
    # simple estimator being the joint one with identity weights):
    n = np.full(len(universe.systems), 60.0)
    p = _dense(universe)
    joint = exact_variance(universe, n, joint_is.mixing_weights(p @ p.T, n))
    simple = exact_variance(universe, n, np.eye(n.size))
    assert np.all(joint < 0.8 * simple), joint / simple
    # Simulated: a ratio of two sample sds has a relative Monte Carlo error of about 1/sqrt(R)
    # = 5% at most; the exact ratios of sds are 0.57-0.80 for precision.
    for measure in ("precision", "recall"):
        ratio = repeats["joint"][measure].std(axis=0) / repeats["simple"][measure].std(axis=0)
        assert np.all(ratio < 1.0), (measure, ratio)
        assert np.mean(ratio) < (0.8 if measure == "precision" else 0.95), (measure, ratio)


def test_theorem_1_variance_matches_simulation(repeats, universe, exact_variance):
    # The exact variance (summed over the universe) against the sd of the R joint estimates.
    n = np.full(len(universe.systems), 60.0)
    p = _dense(universe)
    weights = joint_is.mixing_weights(p @ p.T, n)
    exact_sd = np.sqrt(exact_variance(universe, n, weights))
    simulated = repeats["joint"]["precision"].std(axis=0, ddof=1)
    # relative sd of a sample sd with R = 400 is ~3.5%: 4 of them
    np.testing.assert_allclose(simulated, exact_sd, rtol=0.14)


def test_identity_weights_give_the_simple_estimator(universe, run):
    ev = run(universe, 0, n_samples=30)
    draws, _ = ev._design("simple")
    ones = np.ones((1, draws.f.size))
    est = joint_is.weighted_estimates(
        draws, np.eye(6), ones, np.ones((1, draws.n0)), estimator="simple"
    )
    own_mean = [draws.f[draws.group == i].mean() for i in range(6)]
    np.testing.assert_allclose(est["precision"][0], own_mean, rtol=1e-12)


def test_recall_weighting_covers_systems_disjoint_from_the_one_estimated():
    # Two disjoint systems, all predictions true, 10 true instances in all: system 0 holds 4,
    # so nu_0 = 0.4. A mixture q_0 tailored to system 0 (Section 4.3) gives system 1's draws
    # weight 0 and would estimate nu_0 = 1; the pool's mixture (Appendix B.2) gets 0.4.
    p = np.zeros((2, 10))
    p[0, :4], p[1, 4:] = 1 / 4, 1 / 6
    codes = np.r_[np.arange(4), np.arange(4, 10)]  # every instance drawn once
    group = np.r_[np.zeros(4, int), np.ones(6, int)]
    draws = joint_is.Draws(
        p=p[:, codes], group=group, f=np.ones(10), n0=1, member0=np.array([[True, False]])
    )
    weights = joint_is.mixing_weights(p @ p.T, draws.n)
    assert weights[0, 1] == 0
    est = joint_is.weighted_estimates(
        draws, weights, np.ones((1, 10)), np.ones((1, 1)), estimator="joint"
    )
    np.testing.assert_allclose(est["nu"][0], [0.4, 0.6])


def _dense(universe):
    p = np.zeros((len(universe.systems), universe.size))
    for i, ids in enumerate(universe.systems.values()):
        p[i, ids] = 1 / ids.size
    return p
