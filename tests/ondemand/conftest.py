"""A small universe shared by the on-demand tests, and a loop that answers every question."""

import numpy as np
import pytest

import bayeval as be


@pytest.fixture(scope="session")
def universe():
    """Six overlapping systems with precision 0.3-0.7 and recall 0.2-0.4 (2,400 instances)."""
    return be.ondemand.synthetic_universe(
        6,
        n_true=600,
        n_false=1800,
        agreement=0.7,
        precision=[0.3, 0.5, 0.7, 0.5, 0.6, 0.4],
        recall=[0.2, 0.3, 0.4, 0.3, 0.25, 0.35],
        rng=3,
    )


@pytest.fixture(scope="session")
def run():
    """Return the loop that submits every system and answers its questions from the truth."""
    return _run


@pytest.fixture(scope="session")
def exact_variance():
    """Return Theorem 1's exact variance of every system's estimator."""
    return exact_precision_variance


def _run(universe, seed, *, n_samples=None, n0=100, target_se=0.02, systems=None):
    """Submit every system in order, answering each system's questions from the truth."""
    ev = be.ondemand.OnDemandEvaluator(
        universe.exhaustive(n0, rng=np.random.default_rng([seed, 1])), target_se=target_se, rng=seed
    )
    for name in systems or universe.systems:
        ev.submit(name, universe.systems[name], n_samples=n_samples)
        ids = ev.ask()
        ev.tell(ids, universe.label(ids))
    return ev


def exact_precision_variance(universe, n, weights):
    """Theorem 1's variance of each system's estimator, summed over the whole universe."""
    p = dense_p(universe)
    f = universe.truth.astype(float)
    q = weights @ p
    var = np.zeros(p.shape[0])
    for i in range(p.shape[0]):
        y = np.divide(p[i] * f, q[i], out=np.zeros_like(f), where=q[i] > 0)
        for j in range(p.shape[0]):
            if weights[i, j] > 0:
                var[i] += weights[i, j] ** 2 / n[j] * (p[j] @ y**2 - (p[j] @ y) ** 2)
    return var


def dense_p(universe):
    """Return the (systems x instances) matrix of uniform ``p_i``."""
    p = np.zeros((len(universe.systems), universe.size))
    for i, ids in enumerate(universe.systems.values()):
        p[i, ids] = 1 / ids.size
    return p
