"""Annotators who disagree: Dawid–Skene's posterior, its aggregated labels and its coverage.

The reference for the posterior mode is Dawid & Skene's EM written out answer by answer below
(crowd-kit's ``DawidSkene`` gives the same labels; the comparison, which needs crowd-kit, is in
``benchmarks/annotators.py``).
"""

import warnings

import arviz as az
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayeval as be
from bayeval._core import dawid_skene as kernel
from bayeval.models import CalibrationWarning, DawidSkene, ScoreCalibration
from bayeval.simulate.crowds import noisy_labels, simulated_crowd
from bayeval.simulate.judge_pools import judge_pool


def simulate(rng, n_items=600, n_annotators=8, per_item=3):
    """Binary items, each answered by ``per_item`` annotators of known sensitivity/specificity."""
    return simulated_crowd(rng, n_items, n_annotators, per_item)


def reference_em(item, who, answer, n_items, n_annotators, iterations):
    """Dawid & Skene's EM (maximum likelihood), item by item: the textbook recursion."""
    votes = np.zeros((n_items, 2))
    for i, y in zip(item, answer, strict=True):
        votes[i, y] += 1
    T = votes / votes.sum(axis=1, keepdims=True)
    for _ in range(iterations):
        pi = T.mean(axis=0)
        theta = np.zeros((n_annotators, 2, 2))
        for i, a, y in zip(item, who, answer, strict=True):
            theta[a, :, y] += T[i]
        theta /= theta.sum(axis=2, keepdims=True)
        log_t = np.tile(np.log(pi), (n_items, 1))
        for i, a, y in zip(item, who, answer, strict=True):
            log_t[i] += np.log(theta[a, :, y])
        T = np.exp(log_t - log_t.max(axis=1, keepdims=True))
        T /= T.sum(axis=1, keepdims=True)
    return T


def test_em_is_dawid_and_skenes_recursion():
    truth, item, who, answer, _ = simulate(np.random.default_rng(0), n_items=200)
    responses = kernel.answer_counts(item, who, answer, (200, 8, 2))
    mode = kernel.em(responses, np.full(200, -1), confusion_prior=np.ones((2, 2)),
                     class_prior=np.ones(2), tol=0.0, max_iter=50)  # fmt: skip
    np.testing.assert_allclose(mode.posterior, reference_em(item, who, answer, 200, 8, 50),
                               atol=1e-10)  # fmt: skip


def test_the_posterior_mode_labels_are_em_labels_where_answers_are_plentiful():
    truth, item, who, answer, _ = simulate(np.random.default_rng(1), per_item=5)
    ids = np.array([f"item{i}" for i in item])
    names = np.array([f"ann{a}" for a in who])
    fit = DawidSkene().fit(ids, names, answer, rng=0)
    responses = kernel.answer_counts(item, who, answer, (600, 8, 2))
    mode = kernel.em(responses, np.full(600, -1), confusion_prior=np.ones((2, 2)),
                     class_prior=np.ones(2))  # fmt: skip
    em_labels = pd.Series(mode.posterior.argmax(axis=1), index=[f"item{i}" for i in range(600)])
    agree = (fit.labels() == em_labels.loc[fit.labels().index]).mean()
    assert agree >= 0.99, agree  # measured: 0.998 (one item, near a tie)
    assert (fit.labels().to_numpy() == truth).mean() > 0.9


@pytest.mark.slow
def test_the_accuracy_intervals_cover_the_annotators_accuracy():
    # 20 simulated crowds of 8 annotators: 160 intervals at 90%. Their misses are nearly
    # independent (different annotators, different crowds): 3 sd of a binomial share is 0.07
    covered = []
    for seed in range(20):
        _, item, who, answer, accuracy = simulate(np.random.default_rng(100 + seed))
        fit = DawidSkene().fit(item, [f"a{w}" for w in who], answer, rng=seed)
        summary = fit.annotator_summary(0.9).loc[[f"a{a}" for a in range(8)]]
        covered += list((summary["accuracy_lower"] <= accuracy)
                        & (accuracy <= summary["accuracy_upper"]))  # fmt: skip
    assert 0.83 <= np.mean(covered) <= 0.97, np.mean(covered)


def test_gold_items_are_known_and_every_answer_counts():
    items = ["q1", "q1", "q1", "q1", "q2", "q2"]
    annotators = ["ann", "ann", "bob", "cy", "ann", "bob"]  # ann answered q1 twice
    answers = [0, 1, 1, 1, 0, 0]
    fit = DawidSkene(draws=400).fit(items, annotators, answers, gold={"q3": 1}, rng=0)
    assert list(fit.items) == ["q1", "q2", "q3"]
    assert (fit.label_probability().loc["q3", 1]) == 1.0
    assert fit.annotator_summary().loc["ann", "answers"] == 3  # both of ann's answers to q1
    dt = fit.to_datatree()
    assert dt["posterior"]["confusion"].dims == ("chain", "draw", "annotator", "true_class",
                                                  "answer")  # fmt: skip
    assert set(np.unique(dt["posterior"]["label"].sel(item="q3"))) == {1}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"annotators": ["a", 7, "b"]}, r"`annotators` must be strings .*entry 1 is 7\."),
        (
            {"answers": [0, 1, 2], "classes": [0, 1]},
            r"`answers` must hold classes of \[0, 1\]; got 2",
        ),
        ({"items": ["q1", "q2"]}, r"1-d arrays of one entry per answer"),
        (
            {"gold": pd.Series([0, 1], index=["q1", "q1"])},
            r"`gold` gives item 'q1' conflicting classes: \[0, 1\]",
        ),
        ({"gold": {"q1": 3}, "classes": [0, 1]}, r"`gold` must hold classes of \[0, 1\]; got 3"),
        ({"gold": [("q1", 1)]}, r"`gold` must be a mapping .*; got list"),
    ],
)
def test_bad_answers_are_refused_naming_the_parameter(kwargs, message):
    arguments = {"items": ["q1", "q1", "q2"], "annotators": ["a", "b", "a"], "answers": [0, 1, 1]}
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        DawidSkene(draws=40).fit(**arguments, rng=0)


def test_a_multiclass_label_in_a_binary_measure_is_refused():
    pool, _ = judge_pool("accurate", size=500)
    fit = DawidSkene(draws=40).fit([0, 1, 2], ["a", "b", "a"], ["cat", "dog", "cat"], rng=0)
    with pytest.raises(ValueError, match=r"`classes` must be \(0, 1\) .*\['cat', 'dog'\]"):
        fit.measure_posterior(ScoreCalibration().bind(pool, be.measures.Recall()))


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"sweeps": 0}, "`sweeps` must be an integer >= 1; got 0"),
        ({"imputations": 0}, "`imputations` must be an integer >= 1; got 0"),
        ({"burn": -1}, "`burn` must be an integer >= 0; got -1"),
    ],
)
def test_bad_rounds_of_the_joint_posterior_name_the_parameter(option, message):
    pool, _ = judge_pool("accurate", size=500)
    fit = DawidSkene(draws=40).fit([0, 1, 2], ["a", "b", "a"], [0, 1, 1], rng=0)
    with pytest.raises(ValueError, match=message):
        fit.measure_posterior(ScoreCalibration().bind(pool, be.measures.Recall()), **option)


@pytest.mark.slow
def test_annotator_noise_widens_the_measure_interval():
    # 1,000 of a 5,000-item pool's items, each answered by 3 of 6 annotators right on 65-85% of
    # the items (the majority is wrong on about one item in eight). Taking the majority as the
    # truth, the accuracy's interval misses every time; the joint posterior of the labels,
    # the annotators and the scores covered 32 of 40 runs (seeds 0-39, benchmarks/README.md,
    # annotators): below the nominal 95%, a known limit stated in models/dawid_skene/spec.md.
    # Ten runs here: a calibrated interval covers 6 or fewer of 10 with probability 0.001, an
    # interval that covers 85% with probability 0.05
    pool, truth = judge_pool("uninformative", size=5_000)
    measure = be.measures.Accuracy()
    true = measure.value(truth, predictions=pool.predictions)[0]
    bound = ScoreCalibration(draws=400).bind(pool, measure)
    covered = {"dawid-skene": 0, "majority": 0}
    for seed in range(10):
        labelled, item, answer, majority, names = noisy_labels(
            truth, 1_000, np.random.default_rng(seed)
        )
        fit = DawidSkene(draws=400).fit(item, names, answer, pool=pool, rng=seed)
        with warnings.catch_warnings():  # a fit with concentrated weights is scored all the same
            warnings.simplefilter("ignore", CalibrationWarning)
            draws = fit.measure_posterior(bound, rng=seed).measure_draws()
            alone = bound.fit(labelled, majority, rng=seed).measure
        for key, values in (("dawid-skene", draws), ("majority", alone)):
            lo, hi = np.quantile(values, [0.025, 0.975])
            covered[key] += bool(lo <= true <= hi)
    assert covered["dawid-skene"] >= 7 and covered["majority"] <= 1, covered


@pytest.mark.slow
def test_joint_measure_posterior_by_data_augmentation_agrees_with_nuts():
    # The data augmentation of measure_posterior (engine "fast": alternately the curve given
    # the labels, the confusions and the labels given the rest) must draw the same posterior
    # as NUTS on the model with each item's label summed out (engine "pymc"): 400 of a
    # 2,000-item pool's items, each answered by 3 of 6 annotators right on 65-85%, the
    # default curve (sceptical floor, ceiling), and 20 items with a gold class.
    pool0, truth = judge_pool("uninformative", size=2_000)
    pool = be.Pool(pool0.scores, pool0.predictions)  # no judge: the curve has 4 parameters
    measure = be.measures.Accuracy()
    rng = np.random.default_rng(3)
    labelled, item, answer, _, names = noisy_labels(truth, 400, rng)
    gold = {int(i): int(truth[i]) for i in labelled[:20]}
    fit = DawidSkene(draws=400).fit(item, names, answer, gold=gold, pool=pool, rng=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        nuts = fit.measure_posterior(
            ScoreCalibration(engine="pymc", draws=4000).bind(pool, measure), rng=4
        )
        fast = ScoreCalibration(draws=400).bind(pool, measure)
        chains = [fit.measure_posterior(fast, imputations=200, rng=seed) for seed in range(6)]
    # gold items keep their class in every draw of either engine
    is_gold = np.isin(fit.items, list(gold))
    expected = np.array([gold[i] for i in fit.items[is_gold]])
    for draws in (nuts.label_draws, *(c.label_draws for c in chains)):
        assert (draws[:, is_gold] == expected).all()
    # Monte Carlo error of each quantile from the effective sample sizes: the six chains'
    # draws in their order (arviz.ess; the rounds are autocorrelated) and NUTS' draws taken
    # as independent (4,000 draws of 4 chains: an ESS of 1,000 or more for the measure)
    augmented = np.stack([c.measure_draws()[:, 0] for c in chains])
    ess = float(az.ess(augmented))
    assert ess >= 50, ess  # so that 4 SE of the median stay under 0.75 posterior sd
    augmented = augmented.ravel()
    sd = nuts.measure_draws()[:, 0].std()
    for q in (0.1, 0.5, 0.9):
        # SE of a quantile: sqrt(q (1 - q) / ESS) / density, the density normal's at q
        density = stats.norm.pdf(stats.norm.ppf(q)) / sd
        se = np.sqrt(q * (1 - q) * (1 / ess + 1 / 1000)) / density
        a, b = np.quantile(augmented, q), np.quantile(nuts.measure_draws()[:, 0], q)
        assert abs(a - b) < 4 * se, (q, a, b, se, ess)


@pytest.mark.slow
def test_engines_agree():
    # NUTS against Gibbs: the accuracies' 10/50/90% quantiles within 0.15 posterior sd (4 Monte
    # Carlo standard errors of a quantile at an effective sample size of 1,000 or more)
    _, item, who, answer, _ = simulate(np.random.default_rng(7), n_items=300, n_annotators=5)
    names = [f"a{w}" for w in who]
    fits = {e: DawidSkene(engine=e, draws=4000).fit(item, names, answer, rng=1)
            for e in ("fast", "pymc")}  # fmt: skip
    fast, nuts = (fits[e].accuracy_draws().reshape(4000, -1) for e in ("fast", "pymc"))
    np.testing.assert_allclose(np.quantile(fast, [0.1, 0.5, 0.9], axis=0),
                               np.quantile(nuts, [0.1, 0.5, 0.9], axis=0),
                               atol=0.15 * nuts.std(axis=0).max())  # fmt: skip
    # each item's class probability: two Monte Carlo estimates, each of sd <= 0.5 / sqrt(1,000)
    # (effective sample size 1,000 or more), so their difference's sd is <= 0.022 and the
    # largest of 600 differences lies within 3.6 sd
    np.testing.assert_allclose(fits["fast"].label_probability(), fits["pymc"].label_probability(),
                               atol=0.08)  # fmt: skip
