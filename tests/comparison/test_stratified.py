"""stratified_difference: Webber's paired setting (two retrievals, one stratified sample).

Coverage is measured over repeated stratified samples of one fixed pool (the finite population
is the target), on a pool like Webber's and on one whose relevant documents are rare (few
positives in the large stratum that neither system retrieves)."""

import numpy as np
import pytest

import bayeval as be
from bayeval.comparison import stratified_difference


def retrievals(seed, n=20_000, prevalence=0.02, recall_b=0.7):
    """Two retrievals: recall 0.8 and ``recall_b``, 1% of the irrelevant documents retrieved."""
    rng = np.random.default_rng(seed)
    relevant = rng.random(n) < prevalence
    a = np.where(relevant, rng.random(n) < 0.8, rng.random(n) < 0.01).astype(int)
    b = np.where(relevant, rng.random(n) < recall_b, rng.random(n) < 0.01).astype(int)
    return relevant, a, b


def sample(a, b, per_cell, rng):
    """``per_cell`` documents at random from each of the four joint retrievals."""
    cell = 2 * a + b
    return np.concatenate(
        [rng.choice(np.flatnonzero(cell == c), per_cell, replace=False) for c in range(4)]
    )


def test_a_pool_judged_in_full_gives_the_true_difference_in_both_bases():
    relevant, a, b = retrievals(0, n=2_000, prevalence=0.1)
    everything = np.arange(a.size)
    for measure in ("recall", "precision", "f1"):
        m = be.measures.by_name(measure)
        truth = m.value(relevant, predictions=a)[0] - m.value(relevant, predictions=b)[0]
        result = stratified_difference(a, b, everything, relevant, measure=measure, rng=0)
        for basis in ("posterior", "design"):
            np.testing.assert_allclose(result.interval(basis=basis).values, truth, atol=1e-9)


def test_strata_split_the_cells_and_bad_input_is_refused():
    relevant, a, b = retrievals(1, n=4_000)
    judged = sample(a, b, 30, np.random.default_rng(0))
    halves = (np.arange(a.size) < 2_000).astype(int)
    result = stratified_difference(a, b, judged, relevant[judged], strata=halves, rng=0)
    assert result.posterior["observed_data"].sizes["cell"] == 8
    with pytest.raises(ValueError, match="`first` and `second` must give one prediction"):
        stratified_difference(a, b[:-1], judged, relevant[judged])
    with pytest.raises(ValueError, match="`strata` must give one stratum per item"):
        stratified_difference(a, b, judged, relevant[judged], strata=[0, 1])
    with pytest.raises(ValueError, match="`measure` must be measures of a system's predictions"):
        stratified_difference(a, b, judged, relevant[judged], measure="brier")


def test_the_design_needs_two_judged_items_in_every_cell():
    relevant, a, b = retrievals(2, n=4_000)
    judged = sample(a, b, 1, np.random.default_rng(0))
    result = stratified_difference(a, b, judged, relevant[judged], rng=0)
    assert np.isnan(result.interval(basis="design").values).all()
    assert np.isfinite(result.interval(basis="posterior").values).all()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("pool", "per_cell", "design_holds"),
    [
        ({"prevalence": 0.02}, 100, True),
        ({"prevalence": 0.02, "recall_b": 0.78}, 100, True),
        ({"prevalence": 0.005}, 50, False),
    ],
    ids=["webber-like", "close-systems", "rare-relevant"],
)
def test_coverage_over_repeated_stratified_samples(pool, per_cell, design_holds):
    """95% intervals over 100 samples: coverage at least 0.95 - 3 se (se 0.022 at 100).

    Recorded on 2026-11-27 over 200 samples (recall, precision, F1): posterior 0.925 / 0.92 /
    0.935 (Webber-like), 0.945 / 0.945 / 0.945 (close), 0.92 / 0.97 / 0.965 (rare); design
    0.91 / 0.915 / 0.925, 0.94 / 0.945 / 0.94, 0.90 / 0.97 / 0.97. With rare relevant
    documents the design interval of recall falls short (0.90: few positives in the large
    unretrieved stratum make its variance estimate too small, Webber's finding), so it is not
    held to the bound there.
    """
    relevant, a, b = retrievals(0, **pool)
    rng = np.random.default_rng(1)
    repeats, floor = 100, 0.95 - 3 * np.sqrt(0.95 * 0.05 / 100)
    for measure in ("recall", "precision", "f1"):
        m = be.measures.by_name(measure)
        truth = m.value(relevant, predictions=a)[0] - m.value(relevant, predictions=b)[0]
        covered = {"posterior": 0, "design": 0}
        for r in range(repeats):
            judged = sample(a, b, per_cell, rng)
            result = stratified_difference(
                a, b, judged, relevant[judged], measure=measure, draws=1000, rng=r
            )
            for basis in covered:
                lower, upper = result.interval(basis=basis).values
                covered[basis] += lower <= truth <= upper
        assert covered["posterior"] / repeats >= floor, (measure, covered)
        if design_holds:
            assert covered["design"] / repeats >= floor, (measure, covered)
