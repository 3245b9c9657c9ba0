"""The Bayesian precision band from the stratified samples of LogStrat and the random baseline."""

import numpy as np
import pytest

import bayeval as be
from bayeval import curves
from bayeval.oracles import LabelOracle


@pytest.fixture(scope="module")
def ranked_labels():
    # A fixed list with a smoothly decreasing precision curve (0.9 -> 0.5), Bernoulli labels.
    n = 60_000
    return np.random.default_rng(11).random(n) < np.linspace(0.9, 0.5, n)


def test_random_baseline_band_equals_the_foundation_posterior(ranked_labels):
    # At rank r the random baseline's posterior is that of a two-stratum sample: the exact
    # prefix (a census) and the cut tail [n_prefix, r) with its uniform samples; precision is
    # their total yield over r. bayeval.precision_interval computes that from the same model.
    res = curves.random_baseline(LabelOracle(ranked_labels), ranked_labels.size, rng=3)
    n_prefix = res.exact_len
    r = 40_000
    positions, labels = res.labels
    tail = (positions >= n_prefix) & (positions < r)
    sample = be.StratifiedSample(
        population=[n_prefix, r - n_prefix],
        sampled=[n_prefix, int(tail.sum())],
        positives=[int(ranked_labels[:n_prefix].sum()), int(labels[tail].sum())],
        retrieved=[True, True],
    )
    ref = be.precision_interval(sample, prob=0.9, rng=4, draws=200_000)
    band = res.posterior_band(0.9, ranks=[r], draws=50_000, chains=4, rng=5)["band"]
    low, high = float(band["lower"][0]), float(band["upper"][0])
    # Both are Monte Carlo quantiles (200,000 draws each): 5 combined standard errors.
    se_low, se_high = ref.mc_error
    assert abs(low - ref.lower) < 5 * np.sqrt(2) * se_low
    assert abs(high - ref.upper) < 5 * np.sqrt(2) * se_high


def test_logstrat_band_covers_the_true_curve_at_its_rate(ranked_labels):
    # Frequentist coverage of the 90% pointwise band over 100 independent LogStrat runs on
    # the same list. Binomial sd of a 100-run coverage at 0.9 is 0.03: accept [0.81, 0.99].
    ranks = np.array([8_000, 20_000, 45_000])
    truth = np.cumsum(ranked_labels)[ranks - 1] / ranks
    covered = np.zeros(ranks.size)
    for seed in range(100):
        res = curves.logstrat(LabelOracle(ranked_labels), ranked_labels.size, rng=seed)
        band = res.posterior_band(0.9, ranks=ranks, draws=500, chains=2, rng=seed)["band"]
        covered += (band["lower"].values <= truth) & (truth <= band["upper"].values)
    rate = covered / 100
    assert np.all((0.81 <= rate) & (rate <= 0.99)), rate


def test_band_structure_and_exact_prefix(ranked_labels):
    res = curves.logstrat(LabelOracle(ranked_labels), ranked_labels.size, rng=1)
    tree = res.posterior_band(rng=2)
    precision = tree["posterior"]["precision"]
    assert precision.dims == ("chain", "draw", "rank")
    ranks = precision["rank"].values
    # default ranks: every stratum's end (the queried ranks) and its midpoint
    assert set(res.queried.tolist()) <= set(ranks.tolist())
    band = tree["band"].to_dataset()
    assert np.all(band["lower"] <= band["median"]) and np.all(band["median"] <= band["upper"])
    assert tree["band"].attrs["prob"] == 0.95
    # ranks in the exact prefix have no uncertainty
    exact = res.posterior_band(ranks=[10, res.exact_len], rng=3)["posterior"]["precision"]
    spread = exact.max(("chain", "draw")) - exact.min(("chain", "draw"))
    assert np.all(spread.values == 0.0)
    assert float(exact.isel(rank=0)[0, 0]) == pytest.approx(ranked_labels[:10].mean())


def test_band_is_coherent_across_whole_strata(ranked_labels):
    # Within a draw, a whole stratum's yield is shared by every later rank: the yield between
    # two stratum ends is the same draw-by-draw whichever later rank is evaluated.
    res = curves.logstrat(LabelOracle(ranked_labels), ranked_labels.size, rng=1)
    ends = res.strata[1:4]
    draws = res.posterior_band(ranks=ends, rng=7)["posterior"]["precision"].values
    yields = draws * ends  # top-r yields per draw
    assert np.all(np.diff(yields, axis=-1) >= 0)  # yields never decrease along the ranks


def test_paula_has_no_design_posterior(ranked_labels):
    res = curves.paula(LabelOracle(ranked_labels), ranked_labels.size)
    with pytest.raises(ValueError, match="no design-based posterior"):
        res.posterior_band()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"draws": 0}, "`draws` must be an integer >= 1"),
        ({"prior": 0}, "`prior` must be"),
        ({"ranks": [0]}, "`ranks` must be in"),
        ({"prob": 1.5}, "`prob` must be in"),
    ],
)
def test_band_bad_input(ranked_labels, kwargs, message):
    res = curves.logstrat(LabelOracle(ranked_labels), ranked_labels.size, rng=1)
    with pytest.raises(ValueError, match=message):
        res.posterior_band(**kwargs)
