"""Every result type follows one protocol (bayeval.results): one parametrised test per promise.

Each case builds a real result the way a user does. The checks: ``.estimate``; ``.interval``
in ArviZ's layout for every kind and basis; ``.summary()``'s columns; ``.posterior`` or
``NoPosteriorError``; pickle and netCDF round trips that give the same intervals; ``.plot()``.
"""

import pickle

import matplotlib
import numpy as np
import pytest

import bayeval as be
from bayeval.results import SUMMARY_COLUMNS, NoPosteriorError

matplotlib.use("Agg")

WEBBER = dict(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
STRATA = dict(
    population=[800, 1200, 5000, 20000, 75000],
    sampled=[60, 40, 80, 60, 50],
    positives=[50, 20, 12, 4, 1],
    retrieved=[True, True, False, False, False],
)


def _webber():
    return be.StratifiedSample.two_segments(**WEBBER)


CASES = {
    # closed forms (design basis only)
    "recall normal-mle": lambda: be.recall_interval(_webber(), method="normal-mle"),
    "recall koopman": lambda: be.recall_interval(_webber(), method="koopman"),
    "proportion wilson": lambda: be.binomial_interval(7, 40, method="wilson", prob=0.9),
    "precision clopper-pearson": lambda: be.precision_interval(_webber(), method="clopper-pearson"),
    # posterior: quadrature with exact draws for inspection, and exact Monte Carlo draws
    "recall quadrature": lambda: be.recall_interval(_webber(), rng=0, draws=500),
    "f1 quadrature": lambda: be.f1_interval(_webber(), rng=1, draws=500),
    "recall exact draws": lambda: be.recall_interval(
        be.StratifiedSample(**STRATA), rng=2, draws=20_000
    ),
}


def _sampler_estimate(sampler="static_is", measure=None, systems=1, labels=300, **options):
    """A sampler's estimate after ``labels`` labels of a seeded pool (positives 3%)."""
    return _sampler_run(sampler, measure, systems, labels, **options).estimate


def _sampler_run(sampler="static_is", measure=None, systems=1, labels=300, **options):
    """A sampler's run of ``labels`` labels on a seeded pool (positives 3%)."""
    gen = np.random.default_rng(11)
    truth = gen.random(4000) < 0.03
    scores = np.where(truth, gen.beta(5, 2, 4000), gen.beta(1, 10, 4000))
    if systems > 1:
        scores = np.stack([scores, np.clip(scores + gen.normal(0, 0.2, 4000), 0, 1)], axis=1)
    pool = be.Pool(scores, systems=None if systems == 1 else ["a", "b"])
    return be.evaluate(
        pool, measure or be.measures.FScore(), truth, labels, sampler=sampler, rng=0, **options
    )


CASES.update(
    {
        # sampler estimates: design and posterior bases, labelled dims, no model, fallback
        "static_is f1": lambda: _sampler_estimate(),
        "static_is f1, robust model (a hull of floor priors)": lambda: (
            _sampler_run().sampler.estimate(model=be.models.ScoreCalibration.robust())
        ),
        "ais f1 of two systems": lambda: _sampler_estimate("ais", systems=2),
        "passive pr curve": lambda: _sampler_estimate(
            "passive", be.measures.PrecisionRecallCurve([0.3, 0.6])
        ),
        "passive recall, design falls back": lambda: _sampler_estimate(
            "passive", be.measures.Recall(), labels=50
        ),
        "stratified brier (no model)": lambda: _sampler_estimate(
            "stratified", be.measures.BrierScore(), labels=200
        ),
    }
)


def _ranked_labels(n=60_000):
    """Labels of a ranked list whose precision falls from 0.9 to 0.5 (seeded)."""
    return np.random.default_rng(0).random(n) < np.linspace(0.9, 0.5, n)


def _curve(method, **options):
    from bayeval import curves
    from bayeval.oracles import LabelOracle

    labels = _ranked_labels()
    return getattr(curves, method)(LabelOracle(labels), labels.size, **options)


CASES.update(
    {
        # precision curves: the envelope (design, at its planned probability) and the posterior
        "logstrat curve": lambda: _curve("logstrat", rng=1),
        "adastrat curve": lambda: _curve("adastrat", rng=2),
        "random baseline curve": lambda: _curve("random_baseline", rng=3),
        "paula curve (design only)": lambda: _curve("paula"),
    }
)


def _ondemand():
    uni = be.ondemand.synthetic_universe(n_systems=3, rng=1)
    ev = be.ondemand.OnDemandEvaluator(uni.exhaustive(200, rng=2), target_se=0.05, rng=0)
    for name, predicted in uni.systems.items():
        ids = ev.ask(ev.submit(name, predicted))
        ev.tell(ids, uni.label(ids))
    return ev.estimate(draws=250)


CASES["ondemand systems"] = _ondemand


def _comparison():
    gen = np.random.default_rng(5)
    truth = gen.random(600) < 0.4
    right = gen.random((600, 3)) < [0.9, 0.8, 0.7]
    predictions = np.where(right, truth[:, None], ~truth[:, None]).astype(int)
    return be.compare(predictions, np.arange(80), truth[:80], measure="f1", rng=0)


CASES["comparison"] = _comparison
CASES["comparison differences"] = lambda: _comparison().differences
CASES["audited levels"] = lambda: be.comparison.audited_levels(
    np.array([[1, 1], [0, 1], [1, 0], [0, 0], [1, 1], [0, 1]]),
    [0],
    [1],
    [1, 3, 4],
    [0, 0, 1],
    draws=200,
    rng=0,
)
CASES["paired difference"] = lambda: be.comparison.paired_difference(
    [1, 1, 0, 1, 0, 1], [1, 0, 0, 1, 1, 0], rng=0
)
CASES["paired difference, copula prior"] = lambda: be.comparison.paired_difference(
    [1, 1, 0, 1, 0, 1], [1, 0, 0, 1, 1, 0], prior="copula", rng=0
)
CASES["stratified difference"] = lambda: be.comparison.stratified_difference(
    [1, 1, 0, 0, 1, 0, 1, 0],
    [1, 0, 1, 0, 1, 0, 0, 1],
    [0, 1, 2, 3, 4, 5, 6, 7],
    [1, 1, 0, 0, 1, 0, 1, 1],
    draws=200,
    rng=0,
)
CASES["coverage study"] = lambda: be.simulate.coverage_study(
    "small", realizations=4, resamples=50, width_resamples=10, rng=0
)
SLOW_CASES = {
    "recall pymc": lambda: be.recall_interval(
        _webber(), engine="pymc", rng=0, draws=200, sampler_options={"tune": 200, "chains": 2}
    ),
}
ALL = [pytest.param(name, id=name) for name in CASES] + [
    pytest.param(name, id=name, marks=pytest.mark.slow) for name in SLOW_CASES
]


@pytest.fixture(scope="module")
def results():
    built = {}

    def get(name):
        if name not in built:
            built[name] = {**CASES, **SLOW_CASES}[name]()
        return built[name]

    return get


def _same_intervals(a, b):
    """Every kind and basis of ``a`` and ``b`` agree to round-off."""
    for basis in a.bases:
        for kind in _kinds(a, basis):
            np.testing.assert_allclose(
                a.interval(_prob(a, basis), kind, basis).values,
                b.interval(_prob(a, basis), kind, basis).values,
                rtol=0,
                atol=1e-12,
            )


def _kinds(result, basis):
    return result.kinds(basis)


def _prob(result, basis, prob=0.8):
    """``prob``, or the probability a basis is fixed at (a curve's envelope: 1 - delta)."""
    fixed = result._fixed_prob(basis)
    return prob if fixed is None else fixed


@pytest.mark.parametrize("name", ALL)
def test_interval_has_arviz_layout(results, name):
    result = results(name)
    for basis in result.bases:
        for kind in _kinds(result, basis):
            prob = _prob(result, basis, 0.9)
            ci = result.interval(prob, kind, basis)
            assert ci.dims[-1] == "ci_bound"
            assert ci["ci_bound"].values.tolist() == ["lower", "upper"]
            assert {"ci_prob": prob, "ci_kind": kind, "basis": basis}.items() <= ci.attrs.items()
            lower, upper = ci.sel(ci_bound="lower").values, ci.sel(ci_bound="upper").values
            defined = ~np.isnan(lower)
            assert np.all(lower[defined] <= upper[defined])
            if result.bounded:
                low, high = result.value_range
                assert np.all((low <= lower[defined]) & (upper[defined] <= high))
        eti = result.interval(_prob(result, basis, 0.9), "eti", basis)
        estimate = np.asarray(result.estimate_of(basis))
        assert np.all(eti.sel(ci_bound="lower") <= estimate)
        assert np.all(estimate <= eti.sel(ci_bound="upper"))


@pytest.mark.parametrize("name", ALL)
def test_estimate_is_the_default_basis(results, name):
    result = results(name)
    assert result.default_basis == result.bases[0]
    np.testing.assert_array_equal(
        np.asarray(result.estimate), np.asarray(result.estimate_of(result.bases[0]))
    )


@pytest.mark.parametrize("name", ALL)
def test_summary_has_the_same_columns(results, name):
    result = results(name)
    table = result.summary(0.9)
    assert list(table.columns) == list(SUMMARY_COLUMNS)
    assert table.index.names[-1] == "basis"
    assert sorted(set(table.index.get_level_values("basis"))) == sorted(result.bases)
    assert (table["ci_kind"] == "eti").all()
    for basis in result.bases:
        rows = table.xs(basis, level="basis")
        assert (rows["ci_prob"] == _prob(result, basis, 0.9)).all()
        ci = result.interval(_prob(result, basis, 0.9), "eti", basis)
        np.testing.assert_allclose(rows["lower"], np.ravel(ci.sel(ci_bound="lower")))
        np.testing.assert_allclose(rows["upper"], np.ravel(ci.sel(ci_bound="upper")))


@pytest.mark.parametrize("name", ALL)
def test_posterior_or_a_clear_error(results, name):
    result = results(name)
    if "posterior" in result.bases:
        tree = result.posterior
        assert "posterior" in tree.children
        assert {"chain", "draw"} <= set(tree["posterior"].dims)
    else:
        with pytest.raises(NoPosteriorError, match="no posterior draws.*(methods are|basis=)"):
            _ = result.posterior
        assert not hasattr(result, "posterior")


@pytest.mark.parametrize("name", ALL)
def test_pickle_round_trip(results, name):
    result = results(name)
    again = pickle.loads(pickle.dumps(result))
    assert type(again) is type(result)
    _same_intervals(result, again)


@pytest.mark.parametrize("name", ALL)
def test_netcdf_round_trip(results, name, tmp_path):
    result = results(name)
    path = tmp_path / "result.nc"
    result.to_netcdf(path)
    again = be.load(path)
    assert type(again) is type(result)
    assert again.bases == result.bases
    np.testing.assert_array_equal(np.asarray(again.estimate), np.asarray(result.estimate))
    _same_intervals(result, again)
    if "posterior" in result.bases:
        # the draws themselves come back, not new ones
        for var in result.posterior["posterior"].data_vars:
            np.testing.assert_array_equal(
                again.posterior["posterior"][var].values, result.posterior["posterior"][var].values
            )


@pytest.mark.parametrize("name", ALL)
def test_plot_draws_every_basis(results, name):
    result = results(name)
    axes = np.ravel(result.plot())
    assert axes[0].figure is not None
    if type(result).plot is be.results.Result.plot:  # a result's own plot shows more
        assert len(axes[0].get_yticklabels()) == len(result.summary())
    matplotlib.pyplot.close("all")


@pytest.mark.parametrize("name", ALL)
def test_design_intervals_have_no_hdi(results, name):
    result = results(name)
    if "design" in result.bases:
        with pytest.raises(ValueError, match=r"`kind` must be one of .*needs a posterior"):
            result.interval(kind="hdi", basis="design")


def test_a_curve_envelope_holds_only_at_its_planned_probability(results):
    result = results("logstrat curve")  # delta = 0.05
    assert result.prob == pytest.approx(0.95)
    with pytest.raises(ValueError, match=r"`prob` must be 0.95.* for basis='design'.*; got 0.8"):
        result.interval(0.8, basis="design")
    with pytest.raises(ValueError, match=r"`kind` must be one of 'eti' for basis='design'"):
        result.interval(kind="lower", basis="design")
    assert result.interval(0.8, "lower", "posterior").attrs["ci_prob"] == 0.8


def test_a_curve_estimate_is_labelled_and_the_old_call_warns(results):
    result = results("logstrat curve")
    assert result.estimate.dims == ("rank",)
    np.testing.assert_array_equal(result.estimate["rank"], np.unique(result.queried))
    with pytest.warns(DeprecationWarning, match=r"estimate\(ranks\) is deprecated: use .*at"):
        old = result.estimate([1, 500])
    np.testing.assert_array_equal(old, result.at([1, 500]))


def test_a_degenerate_design_interval_says_it_fell_back(results):
    # 50 passive labels drew no false negative: recall's design interval has zero width
    result = results("passive recall, design falls back")
    assert result.interval().attrs["fallback"] == ["recall"]
    assert float(result.estimate[0]) == float(result.estimate_of("posterior")[0])


def test_load_refuses_a_file_that_is_no_result(tmp_path):
    import xarray as xr

    path = tmp_path / "other.nc"
    xr.DataTree(xr.Dataset({"x": ("i", [1.0, 2.0])})).to_netcdf(path)
    with pytest.raises(ValueError, match=r"`path` '.*other.nc' holds no bayeval result"):
        be.load(path)


def test_bad_kind_and_basis_name_the_parameter():
    result = CASES["recall quadrature"]()
    with pytest.raises(ValueError, match=r"`kind` must be one of 'eti', 'hdi'.*; got 'central'"):
        result.interval(kind="central")
    with pytest.raises(ValueError, match=r"`basis` must be one of 'posterior', 'design'; got 'x'"):
        result.interval(basis="x")
    with pytest.raises(ValueError, match=r"means basis='design', which contradicts `basis`"):
        result.interval(kind="confidence", basis="posterior")
