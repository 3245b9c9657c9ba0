"""SystemConfusion: its draws against the exact posterior of a pool small enough to enumerate."""

import itertools

import numpy as np
import pytest
from scipy import special

from bayeval import measures
from bayeval._core.multiclass import confusion_measures
from bayeval._core.shared_errors_gibbs import concentration_grid
from bayeval.models import ConfusionWarning, SystemConfusion
from bayeval.models._systems import measure_from_counts

# Eight items, two systems; items 0 and 5 labelled: the other six have 2**6 completions.
PREDICTIONS = np.array([[1, 1], [1, 0], [0, 0], [1, 1], [0, 1], [0, 0], [1, 1], [0, 0]])
LABELLED = np.array([0, 5])
LABELS = np.array([1, 0])


def _log_dirichlet_multinomial(counts, alpha):
    """log P(a sequence with these category counts) under Dirichlet(alpha)-categorical."""
    return (
        special.gammaln(alpha.sum())
        - special.gammaln(alpha.sum() + counts.sum())
        + (special.gammaln(alpha + counts) - special.gammaln(alpha)).sum()
    )


def _log_independent(spec, y):
    """log P(classes y, predictions) of Dawid-Skene, pi and theta integrated out."""
    prior = spec.confusion_prior
    log_p = _log_dirichlet_multinomial(np.bincount(y, minlength=2), np.ones(2))
    for k in range(2):
        for c in range(2):
            made = np.bincount(PREDICTIONS[y == c, k], minlength=2)
            log_p += _log_dirichlet_multinomial(made, prior[c])
    return log_p


def _stirling_first_kind(n):
    """Unsigned Stirling numbers of the first kind ``s[m, t]`` for ``m, t <= n``."""
    s = np.zeros((n + 1, n + 1))
    s[0, 0] = 1.0
    for m in range(n):
        s[m + 1, 1:] = m * s[m, 1:] + s[m, :-1]
    return s


def _log_shared_errors(spec, y):
    """log P(classes y, predictions) of the Dirichlet process centred on Dawid-Skene.

    The items of class ``c`` and pattern ``x`` (a cell) sit at ``t`` tables with weight
    ``s(n, t) (alpha B(c, x))^t``; ``B``'s parameters are integrated out given the tables
    (Dirichlet-multinomial in the tables' class totals and confusion counts), and ``alpha``
    summed over its grid, every point a priori alike.
    """
    patterns, cell = np.unique(PREDICTIONS, axis=0, return_inverse=True)
    n = np.zeros((len(patterns), 2), dtype=int)
    np.add.at(n, (cell, y), 1)
    stirling = _stirling_first_kind(len(y))
    grid = concentration_grid(len(y))
    occupied = np.argwhere(n > 0)
    total = -np.inf
    for counts in itertools.product(*(range(1, n[p, c] + 1) for p, c in occupied)):
        tables = np.zeros_like(n)
        tables[tuple(occupied.T)] = counts
        log_t = np.log(stirling[n[tuple(occupied.T)], counts]).sum()
        log_t += _log_dirichlet_multinomial(tables.sum(axis=0), np.ones(2))
        for k in range(2):
            for c in range(2):
                made = np.bincount(patterns[:, k], weights=tables[:, c], minlength=2)
                log_t += _log_dirichlet_multinomial(made, spec.confusion_prior[c])
        log_alpha = (
            tables.sum() * np.log(grid) + special.gammaln(grid) - special.gammaln(grid + len(y))
        )
        total = np.logaddexp(total, log_t + special.logsumexp(log_alpha) - np.log(grid.size))
    return total


def _exact_accuracy_distribution(spec):
    """P(accuracy of system 0, accuracy of system 1) over every completion of the labels."""
    log_joint = _log_shared_errors if spec.shared_errors else _log_independent
    unlabelled = np.setdiff1d(np.arange(len(PREDICTIONS)), LABELLED)
    weights = {}
    for completion in itertools.product((0, 1), repeat=unlabelled.size):
        y = np.empty(len(PREDICTIONS), dtype=int)
        y[LABELLED], y[unlabelled] = LABELS, completion
        key = tuple((PREDICTIONS == y[:, None]).sum(axis=0))
        weights[key] = weights.get(key, 0.0) + np.exp(log_joint(spec, y))
    total = sum(weights.values())
    return {key: w / total for key, w in weights.items()}


def _check_against_exact(spec, rng):
    exact = _exact_accuracy_distribution(spec)
    dt = spec.posterior(PREDICTIONS, LABELLED, LABELS, rng=rng)
    correct = np.rint(dt["posterior"]["accuracy"].values.reshape(-1, 2) * len(PREDICTIONS))
    n = correct.shape[0]
    for key, p in exact.items():
        observed = np.mean((correct == key).all(axis=1))
        # the draws are close to independent (the thinning is chosen for it); 4.5 standard
        # errors of a proportion from n draws, so that none of ~20 cells fails by chance
        assert abs(observed - p) <= 4.5 * np.sqrt(p * (1 - p) / n) + 1e-3, (key, observed, p)


def test_the_gibbs_draws_follow_the_exact_posterior():
    _check_against_exact(SystemConfusion(draws=20_000), rng=0)


def test_the_gibbs_draws_with_shared_errors_follow_the_exact_posterior():
    _check_against_exact(SystemConfusion(draws=20_000, shared_errors=True), rng=2)


@pytest.mark.slow
def test_nuts_draws_follow_the_exact_posterior():
    _check_against_exact(SystemConfusion(draws=4_000, engine="pymc"), rng=1)


def test_every_item_labelled_gives_the_truth_in_every_draw():
    truth = np.array([1, 0, 1, 1, 0, 0, 1, 0])
    dt = SystemConfusion(draws=40).posterior(
        PREDICTIONS, np.arange(8), truth, measures=("accuracy", "f1")
    )
    for k in range(2):
        f1 = measures.FScore().value(truth, predictions=PREDICTIONS[:, k])[0]
        assert np.all(dt["posterior"]["f1"].isel(system=k).values == pytest.approx(f1))
        accuracy = (PREDICTIONS[:, k] == truth).mean()
        assert np.all(dt["posterior"]["accuracy"].isel(system=k).values == pytest.approx(accuracy))


@pytest.mark.parametrize("name", ["accuracy", "precision", "recall", "f1", "matthews_correlation"])
def test_a_measure_from_confusion_counts_is_the_measure_of_the_items(name):
    rng = np.random.default_rng(3)
    truth = rng.random(200) < 0.4
    predictions = rng.random((200, 3)) < 0.5
    counts = np.zeros((3, 2, 2))
    for k in range(3):
        np.add.at(counts[k], (truth.astype(int), predictions[:, k].astype(int)), 1)
    measure = measures.by_name(name)
    expected = [measure.value(truth, predictions=predictions[:, k])[0] for k in range(3)]
    assert measure_from_counts(measure, counts) == pytest.approx(expected)


def test_the_observed_group_holds_the_labelled_confusion_counts():
    dt = SystemConfusion().posterior(PREDICTIONS, LABELLED, LABELS, systems=["a", "b"], rng=0)
    observed = dt["observed_data"]["labelled_confusion"]
    # item 0: label 1, both predict 1; item 5: label 0, both predict 0
    assert observed.sel(system="a").values.tolist() == [[1, 0], [0, 1]]
    assert list(dt["posterior"]["system"].values) == ["a", "b"]


def test_few_draws_of_a_slowly_mixing_chain_are_flagged():
    rng = np.random.default_rng(0)
    truth = rng.random(2_000) < 0.3
    right = rng.random((2_000, 3)) < [0.9, 0.8, 0.7]
    predictions = np.where(right, truth[:, None], ~truth[:, None]).astype(int)
    with pytest.warns(ConfusionWarning, match="`accuracy` has bulk ESS"):
        SystemConfusion(draws=400, thin=1, warmup=0).posterior(
            predictions, np.arange(50), truth[:50], rng=0
        )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"predictions": np.zeros(5)}, "`predictions` must be a 2-d array"),
        ({"predictions": np.full((5, 2), 2)}, r"`predictions` must be classes 0 \.\. 1"),
        ({"labelled": [0, 0], "labels": [1, 1]}, "`labelled` must not repeat"),
        ({"labelled": [9]}, "`labelled`"),
        ({"labels": [1, 0, 1]}, "`labels` must give one class per labelled item"),
        ({"labels": [2]}, r"`labels` must be classes 0 \.\. 1"),
        ({"systems": ["a"]}, "`systems` must name each of the 2 systems"),
        ({"measures": ("brier",)}, "`measures`"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(arguments, message):
    given = {"predictions": np.zeros((5, 2), int), "labelled": [0], "labels": [1]}
    given.update(arguments)
    with pytest.raises(ValueError, match=message):
        SystemConfusion(draws=8).posterior(**given)


def test_draws_must_split_into_chains():
    with pytest.raises(ValueError, match="`draws` must be a multiple of `chains`"):
        SystemConfusion(draws=10, chains=4)


def test_shared_errors_are_a_flag_of_the_fast_engine():
    with pytest.raises(ValueError, match="`shared_errors` must be True or False; got 'yes'"):
        SystemConfusion(shared_errors="yes")
    with pytest.raises(ValueError, match="`shared_errors=True` is sampled by engine='fast' only"):
        SystemConfusion(shared_errors=True, engine="pymc")


def test_shared_errors_survive_a_base_that_underflows():
    # 600 systems: every class's Dawid-Skene probability of a pattern is below 1e-200, so the
    # concentrations of a pattern's classes are rescaled before the Dirichlet draw; with so many
    # systems, right 60% of the time, every unlabelled class is certain, and the draws exact
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, 200)
    wrong = (truth[:, None] + rng.integers(1, 3, (200, 600))) % 3
    predictions = np.where(rng.random((200, 600)) < 0.6, truth[:, None], wrong)
    spec = SystemConfusion(n_classes=3, shared_errors=True, draws=40, thin=1, warmup=10)
    dt = spec.posterior(predictions, np.arange(20), truth[:20], rng=0)
    accuracy = dt["posterior"]["accuracy"].values.reshape(-1, 600)
    true = (predictions == truth[:, None]).mean(axis=0)
    np.testing.assert_allclose(accuracy, np.broadcast_to(true, accuracy.shape))


def test_shared_errors_report_the_concentration():
    dt = SystemConfusion(draws=40, shared_errors=True).posterior(
        PREDICTIONS, LABELLED, LABELS, rng=0
    )
    concentration = dt["posterior"]["concentration"]
    assert concentration.dims == ("chain", "draw")
    grid = concentration_grid(len(PREDICTIONS))
    assert np.isin(concentration.values, grid).all()


def test_three_classes():
    rng = np.random.default_rng(4)
    truth = rng.integers(0, 3, 1_500)
    right = rng.random((1_500, 3)) < [0.9, 0.75, 0.6]
    wrong = (truth[:, None] + rng.integers(1, 3, (1_500, 3))) % 3  # another class at random
    predictions = np.where(right, truth[:, None], wrong)
    labelled = rng.choice(1_500, 150, replace=False)
    spec = SystemConfusion(n_classes=3)
    dt = spec.posterior(predictions, labelled, truth[labelled], rng=0)
    assert dt["posterior"]["confusion"].shape[-2:] == (3, 3)
    draws = dt["posterior"]["accuracy"].values.reshape(-1, 3)
    lower, upper = np.quantile(draws, [0.005, 0.995], axis=0)
    true = (predictions == truth[:, None]).mean(axis=0)
    assert np.all((lower <= true) & (true <= upper))  # errors independent: the model's case
    with pytest.raises(ValueError, match=r"with 3 classes must be one of \['accuracy', "):
        spec.posterior(predictions, labelled, truth[labelled], measures=("f1",))
    # the other measures of a confusion matrix of any number of classes cover as accuracy does
    names = ("accuracy", "balanced_accuracy", "macro_f1", "micro_f1")
    dt = spec.posterior(predictions, labelled, truth[labelled], measures=names, rng=0)
    counts = np.zeros((3, 3, 3))
    np.add.at(counts, (np.arange(3), truth[:, None], predictions), 1)
    for name in names[1:]:
        true = confusion_measures(counts)[name]
        draws = dt["posterior"][name].values.reshape(-1, 3)
        lower, upper = np.quantile(draws, [0.005, 0.995], axis=0)
        assert np.all((lower <= true) & (true <= upper)), name
    # with one label per item every error is one false positive and one false negative
    posterior = dt["posterior"]
    np.testing.assert_allclose(posterior["micro_f1"], posterior["accuracy"], rtol=1e-12)
