"""An automatic judge in the model of the labels: its level is a group the labels calibrate.

The coverage checks run on the pools of :mod:`bayeval.simulate.judge_pools`, whose judges help
(accurate), mislead (biased towards positives, good only where the system is sure), say
nothing (a coin), speak in probabilities, or are mostly wrong when they say 1 (0.5%
positives). With 20 runs a calibrated 95% interval covers 15 times or fewer with probability
0.003 (binomial), so ``>= 16 / 20`` fails such an interval about once in 400 checks.
"""

import warnings

import numpy as np
import pytest
from scipy import stats

import bayeval as be
from bayeval._core import calibration as kernel
from bayeval.models import CalibrationWarning, ScoreCalibration
from bayeval.simulate.judge_pools import JUDGE_POOLS, judge_pool

MEASURES = {
    "precision": be.measures.Precision(),
    "recall": be.measures.Recall(),
    "accuracy": be.measures.Accuracy(),
}


def _interval(bound, labelled, labels, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)  # counted apart, in the battery
        draws = bound.fit(labelled, labels, rng=seed).measure.ravel()
    # over the draws where the measure is defined (a draw with no positive has no recall), as
    # the samplers' estimates do
    return np.nanquantile(draws, [0.025, 0.975])


def test_the_judges_level_is_a_group_of_the_model():
    labels, _ = judge_pool("accurate", size=1_000)
    probabilities, _ = judge_pool("probability", size=1_000)
    spec = ScoreCalibration(judge_bins=4, judge_strata=1)
    assert spec.bind(labels, MEASURES["recall"]).n_groups == 2
    bound = spec.bind(probabilities, MEASURES["recall"])
    assert bound.n_groups == 4
    expected = np.minimum((probabilities.judge * 4).astype(int), 3)
    np.testing.assert_array_equal(bound.judge_level(np.arange(1_000)), expected)
    two_systems = be.Pool(
        np.stack([labels.scores, labels.scores[::-1]], axis=1), judge=labels.judge
    )
    assert spec.bind(two_systems, MEASURES["recall"]).n_groups == 4 * 2
    # by default each level has 8 score strata
    assert ScoreCalibration().bind(two_systems, MEASURES["recall"]).n_groups == 4 * 2 * 8


def test_the_judges_shift_follows_its_reliability_across_the_scores():
    pool, truth = judge_pool("easy-hard", size=5_000)
    bound = ScoreCalibration().bind(pool, MEASURES["recall"])
    assert bound.n_groups == 2 * 8
    labelled = np.arange(0, 5_000, 5)
    dt = bound.posterior(labelled, truth[labelled], rng=0)
    shift = dt["posterior"]["intercept"].values.reshape(-1, 2, 8)  # (draw, judge, stratum)
    gap = np.median(shift[:, 1] - shift[:, 0], axis=0)  # the judge's shift in each stratum
    # the judge is right on 97% of the items the system is sure of and on 60% of the others
    # (logit-scores within 3 of 0; the strata are 3.45 wide from -13.8, so strata 3 and 4 are
    # the hard ones): measured 1.27 and 2.26 there, 4.6-4.9 among the highest scores (strata
    # 5-7) and 2.9-3.4 among the lowest (strata 0-2), where positives are rare
    assert gap[3:5].max() + 1.5 < gap[5:].min(), gap
    assert gap[3] + 1 < gap[:3].min(), gap
    assert ScoreCalibration().bind(be.Pool(pool.scores), MEASURES["recall"]
                                   ).n_groups == 1  # no judge, no strata  # fmt: skip


def test_an_accurate_judge_narrows_the_interval_of_the_same_labels():
    pool, truth = judge_pool("accurate")
    bare = be.Pool(pool.scores)
    labelled = np.sort(np.random.default_rng(1).choice(pool.size, 300, replace=False))
    for name, measure in MEASURES.items():
        true = measure.value(truth, predictions=pool.predictions)[0]
        judged = _interval(ScoreCalibration().bind(pool, measure), labelled, truth[labelled], 0)
        alone = _interval(ScoreCalibration().bind(bare, measure), labelled, truth[labelled], 0)
        assert judged[0] <= true <= judged[1], name
        # measured at these labels: 0.56 (precision), 0.75 (recall), 0.56 (accuracy) of the
        # width without the judge
        assert np.diff(judged)[0] < 0.9 * np.diff(alone)[0], name


def test_the_judge_is_posterior_data_in_the_datatree():
    pool, truth = judge_pool("biased", size=5_000)
    labelled = np.arange(0, 5_000, 10)
    dt = (
        ScoreCalibration()
        .bind(pool, MEASURES["recall"])
        .posterior(labelled, truth[labelled], rng=0)
    )
    intercept = dt["posterior"]["intercept"]
    assert intercept.sizes["group"] == 2 * 8  # the judge's answer x its score stratum
    by_answer = intercept.values.reshape(-1, 2, 8)
    # the lenient judge: a positive is far likelier where it says 1 than where it says 0
    assert np.quantile((by_answer[:, 1] - by_answer[:, 0]).mean(axis=1), 0.025) > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", JUDGE_POOLS)
def test_the_interval_covers_whatever_the_judge(name):
    pool, truth = judge_pool(name)
    spec = ScoreCalibration(draws=400)  # 2.5% and 97.5% quantiles of 400 draws: a third the time
    bound = {m: spec.bind(pool, measure) for m, measure in MEASURES.items()}
    true = {m: measure.value(truth, predictions=pool.predictions)[0] for m, measure in
            MEASURES.items()}  # fmt: skip
    covered = dict.fromkeys(MEASURES, 0)
    for seed in range(20):
        labelled = np.sort(np.random.default_rng(seed).choice(pool.size, 300, replace=False))
        for m in MEASURES:
            lo, hi = _interval(bound[m], labelled, truth[labelled], seed)
            covered[m] += bool(lo <= true[m] <= hi)
    assert min(covered.values()) >= 16, covered


@pytest.mark.slow
def test_an_uninformative_judge_costs_no_width():
    pool, truth = judge_pool("uninformative")
    bare = be.Pool(pool.scores)
    ratios = []
    for seed in range(10):
        labelled = np.sort(np.random.default_rng(seed).choice(pool.size, 300, replace=False))
        for measure in MEASURES.values():
            judged = _interval(ScoreCalibration().bind(pool, measure), labelled, truth[labelled],
                               seed)  # fmt: skip
            alone = _interval(ScoreCalibration().bind(bare, measure), labelled, truth[labelled],
                              seed)  # fmt: skip
            ratios.append(np.diff(judged)[0] / np.diff(alone)[0])
    # one more group deviation to learn: a few percent wider at most, on average
    assert np.mean(ratios) < 1.1, np.mean(ratios)


def test_ais_with_the_judge_needs_fewer_labels_than_uniform_ones():
    # the judge in AIS's model: its proposal sends labels where the model, judge included, is
    # least sure (active prediction-powered inference); same pool, same 400 labels each
    pool, truth = judge_pool("accurate")
    f1 = be.measures.FScore()
    true = f1.value(truth, predictions=pool.predictions)[0]
    width = {}
    for sampler in ("ais", "passive"):
        run = be.evaluate(pool, f1, truth, 400, sampler, rng=3)
        _, lower, upper = (float(v[0]) for v in run.estimate.per_output(0.95, "posterior"))
        assert lower <= true <= upper, sampler
        width[sampler] = upper - lower
    # measured at this seed: 0.053 (AIS) and 0.077 (uniform)
    assert width["ais"] < 0.8 * width["passive"], width


@pytest.mark.slow
def test_ais_intervals_hold_where_the_judges_reliability_varies_with_the_score():
    # AIS spends its labels where the model is unsure; with one shift of the curve per judge
    # answer the rest of the pool is left to a shift that averages a judge right on 97% of the
    # easy items and 60% of the hard ones. The default shift per score stratum covered all 20
    # runs and the one shift 3 of them (measured), so the contrast cannot pass by luck
    pool, truth = judge_pool("easy-hard")
    f1 = be.measures.FScore()
    true = f1.value(truth, predictions=pool.predictions)[0]
    covered = {"default": 0, "one shift": 0}
    models = {"default": ScoreCalibration(), "one shift": ScoreCalibration(judge_strata=1)}
    for seed in range(20):
        run = be.evaluate(pool, f1, truth, 400, "ais", rng=seed)
        for name, model in models.items():
            with warnings.catch_warnings():  # the misfit one shift concentrates the weights
                warnings.simplefilter("ignore", CalibrationWarning)
                estimate = run.sampler.estimate(model=model)
            _, lower, upper = (float(v[0]) for v in estimate.per_output(0.95, "posterior"))
            covered[name] += bool(lower <= true <= upper)
    # a calibrated 95% interval covers 15 or fewer of 20 with probability 0.003 (binomial)
    assert covered["default"] >= 16, covered
    assert covered["one shift"] <= 12, covered


@pytest.mark.slow
def test_fast_engine_finds_both_modes_on_active_labels():
    # AIS's 400 labels on the easy-hard pool (seed 0) leave the curve two modes of about equal
    # mass (Laplace: a shallow curve with next to no floor, a steeper one over a large floor).
    # A t at the first mode never proposes the second, and no importance weight shows it: the
    # single-mode engine fails this test with a healthy effective sample size (NUTS and
    # PyMC's SMC, run by hand, missed most of the second mode too). Reference: random-walk
    # Metropolis on the exact log posterior (its starts and steps set only its speed), 400
    # chains of 20,000 steps, half started at each mode, their covariance the two modes' Laplace
    # covariances pooled with the modes' spread.
    pool, truth = judge_pool("easy-hard", size=20_000)
    measure = be.measures.FScore()
    sampler = be.sampling.AIS(pool, measure, calibration=ScoreCalibration(floor="open"), rng=0)
    while sampler.labels_used < 400:
        ids = sampler.ask(min(sampler.batch_size, 400 - sampler.labels_used))
        sampler.tell(ids, truth[pool.positions(ids)])
    ids, labels = sampler.labelled()
    positions = pool.positions(ids)
    bound = ScoreCalibration(draws=4000).bind(pool, measure)
    fast = bound.fit(positions, labels, rng=0)

    k, m = bound.labelled_rows(positions, labels)
    has = (k + m) > 0
    rows = kernel.Rows(bound.t[has], bound.group[has], k[has], m[has])
    first = kernel.fit_mode(bound.prior, rows)
    modes = [first] + [kernel.fit_mode(bound.prior, rows, x)
                       for x in kernel._further_starts(bound.prior, first.theta)]  # fmt: skip
    centres = np.array([mode.theta for mode in modes])
    spread = np.mean([mode.covariance for mode in modes], axis=0) + np.cov(centres.T)
    rng = np.random.default_rng(1)
    start = np.repeat(centres[[0, 1]], 200, axis=0)  # the first mode, the large floor's
    reference, acceptance = kernel._metropolis(start, bound.prior, rows, 0.25 * spread, 20_000,
                                               rng)  # fmt: skip
    assert acceptance > 0.1, acceptance
    floor = reference[:, kernel._slope_index(bound.prior) + 1]
    assert 0.2 < np.mean(floor > 1.5) < 0.8  # two modes of substantial mass, or no test
    counts = (k, m, bound.sizes - (k + m), True)
    halves = [bound.measure_draws(reference[h : h + 200], counts, rng)[:, 0] for h in (0, 200)]
    truth_draws = np.concatenate(halves)  # the reference's F1
    sd = truth_draws.std()

    def se(q, *n):
        """Monte Carlo SE of the difference of two ``q`` quantiles from ``n`` draws each."""
        density = stats.norm.pdf(stats.norm.ppf(q)) / sd
        return np.sqrt(q * (1 - q) * sum(1 / x for x in n)) / density

    # the chains' last draws are independent; the fast engine's 4,000 resampled draws are
    # taken as 1,000 independent ones
    for q in (0.1, 0.5, 0.9):
        # the chains forgot their starts: the 200 from either mode agree
        gap = np.quantile(halves[0], q) - np.quantile(halves[1], q)
        assert abs(gap) < 4 * se(q, 200, 200), (q, gap)
        error = np.quantile(fast.measure[:, 0], q) - np.quantile(truth_draws, q)
        assert abs(error) < 4 * se(q, 400, 1000), (q, error, se(q, 400, 1000))


@pytest.mark.slow
def test_engines_agree_with_a_judge():
    # as test_score_calibration's test_engines_agree: medians and 10/90% quantiles within
    # 0.15 posterior sd (4 Monte Carlo standard errors of a quantile at ESS >= 1000)
    pool, truth = judge_pool("biased", size=5_000)
    labelled = np.random.default_rng(2).choice(pool.size, 300, replace=False)
    draws = {}
    for engine in ("fast", "pymc"):
        spec = ScoreCalibration(engine=engine, draws=4000)
        draws[engine] = spec.bind(pool, MEASURES["precision"]).posterior(
            labelled, truth[labelled], rng=1
        )
    for name in ("intercept", "slope", "precision"):
        fast = draws["fast"]["posterior"][name].values.reshape(4000, -1)
        nuts = draws["pymc"]["posterior"][name].values.reshape(4000, -1)
        np.testing.assert_allclose(
            np.quantile(fast, [0.1, 0.5, 0.9], axis=0),
            np.quantile(nuts, [0.1, 0.5, 0.9], axis=0),
            atol=0.15 * nuts.std(axis=0).max(),
        )
