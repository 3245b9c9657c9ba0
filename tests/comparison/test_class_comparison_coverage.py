"""Coverage of the confusion model's intervals on multiclass pools, labels drawn at random.

Three systems of accuracy 0.7, 0.8 and 0.9 on 400 items, 100 of them labelled uniformly, in
seeded runs. A 95% interval's coverage over 40 runs has a Monte Carlo standard error of
sqrt(0.95 * 0.05 / 40) = 0.034; the floor of 0.80 is 4.4 of them below 0.95 (a count below 32 of
40 has probability 3e-5 under true 95% coverage), so a failure is a real shortfall, not chance.
The coverages measured stand in the model card (``models/system_confusion/spec.md``), some of
them below 0.95 but above the floor.
"""

import numpy as np
import pytest

from bayeval.models import SystemConfusion

FLOOR = 0.80


def class_pool(n_classes, shared_class, rng):
    """Return ``(truth, predictions)``: wrong predictions name another class, one per item if
    ``shared_class`` (every system wrong on the item names it) or one per system otherwise."""
    n = 400
    truth = rng.integers(0, n_classes, n)
    other = rng.integers(1, n_classes, (n, 1) if shared_class else (n, 3))
    right = rng.random((n, 3)) < [0.7, 0.8, 0.9]
    return truth, np.where(right, truth[:, None], (truth[:, None] + other) % n_classes)


def coverage(spec, shared_class, runs):
    """Each system's share of runs whose 95% accuracy interval covers the pool's accuracy."""
    covered = []
    for run in range(runs):
        rng = np.random.default_rng(run)
        truth, predictions = class_pool(spec.n_classes, shared_class, rng)
        labelled = rng.choice(truth.size, 100, replace=False)
        dt = spec.posterior(predictions, labelled, truth[labelled], rng=run)
        draws = dt["posterior"]["accuracy"].values.reshape(-1, 3)
        lower, upper = np.quantile(draws, [0.025, 0.975], axis=0)
        # a share of this pool's items, and an estimate inside its own interval
        assert np.all((draws >= 0) & (draws <= 1))
        assert np.all((lower <= draws.mean(axis=0)) & (draws.mean(axis=0) <= upper))
        accuracy = (predictions == truth[:, None]).mean(axis=0)
        covered.append((lower <= accuracy) & (accuracy <= upper))
    return np.mean(covered, axis=0)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayeval.models.ConfusionWarning")
def test_five_classes_of_independent_errors_are_covered():
    # the default weight of a wrong class, 1 / (C - 1), keeps a system's prior accuracy at 2/3;
    # a weight of 1 says 1/3 with five classes and pulls the best system's accuracy down. 50
    # runs: a count below 40 of 50 has probability 3e-5 under true 95% coverage
    spec = SystemConfusion(n_classes=5, draws=400)
    assert np.all(coverage(spec, False, runs=50) >= FLOOR)
    one = coverage(SystemConfusion(n_classes=5, draws=400, error_prior=1.0), False, runs=50)
    assert one[-1] < FLOOR


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayeval.models.ConfusionWarning")
def test_errors_that_name_one_class_are_covered_with_shared_errors():
    independent = coverage(SystemConfusion(n_classes=3, draws=400), True, runs=40)
    # the pool breaks independence: the worst system, wrong with the others on an item and
    # naming the same class, is read as right there, and the independent model misses
    assert independent[0] < 0.75
    shared = coverage(SystemConfusion(n_classes=3, draws=400, shared_errors=True), True, runs=40)
    assert np.all(shared >= FLOOR)
