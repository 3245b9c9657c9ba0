import io
import subprocess
import sys
import time

import numpy as np
import pytest

from bayeval import curves
from bayeval.oracles import CallableOracle, LabelOracle
from bayeval.plots import plot_curve, plot_ranks

N = 50_000


@pytest.fixture(autouse=True)
def _agg_backend():
    import matplotlib

    matplotlib.use("Agg")
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture(scope="module")
def ranked_labels():
    rng = np.random.default_rng(7)
    return rng.random(N) < np.linspace(0.95, 0.5, N)  # precision decays down the list


@pytest.fixture(scope="module")
def true_p(ranked_labels):
    return np.cumsum(ranked_labels) / np.arange(1, N + 1)


@pytest.fixture(scope="module")
def paula_result(ranked_labels):
    return curves.paula(LabelOracle(ranked_labels), N)


def _lines_by_label(ax):
    return {line.get_label(): line for line in ax.get_lines()}


def test_returns_axes_with_labels_and_title(paula_result, true_p):
    from matplotlib.axes import Axes

    ax = plot_curve(paula_result, true_precision=true_p)
    assert isinstance(ax, Axes)
    assert ax.get_xlabel() == "rank r" and ax.get_ylabel() == "precision p(r)"
    title = ax.get_title()
    assert "PAULA" in title and f"{paula_result.annotations:,} annotations" in title
    assert f"{paula_result.n_queries:,} queried ranks" in title
    assert ax.get_xscale() == "log"
    assert ax.get_xlim() == pytest.approx((1, N))


def test_draws_estimate_envelope_queried_prefix_and_truth(paula_result, true_p):
    from matplotlib.collections import FillBetweenPolyCollection

    res = paula_result
    ax = plot_curve(res, true_precision=true_p)
    lines = _lines_by_label(ax)
    assert set(lines) == {"estimate", "true precision", f"queried ranks ({res.n_queries})"}

    estimate = lines["estimate"]
    ranks = np.asarray(estimate.get_xdata())
    np.testing.assert_array_equal(ranks, plot_ranks(res))
    assert estimate.get_drawstyle() == "steps-post"
    np.testing.assert_array_equal(estimate.get_ydata(), res.at(ranks))
    # the step functions change only at corners: every corner is drawn, so the step is exact
    assert np.isin(res.corners, ranks).all()

    truth = lines["true precision"]
    np.testing.assert_array_equal(truth.get_ydata(), true_p[ranks - 1])

    queried = lines[f"queried ranks ({res.n_queries})"]
    np.testing.assert_array_equal(queried.get_xdata(), res.queried)
    np.testing.assert_array_equal(queried.get_ydata(), res.at(res.queried))
    assert queried.get_marker() == "s" and queried.get_linestyle() == "None"

    (band,) = [c for c in ax.collections if isinstance(c, FillBetweenPolyCollection)]
    assert band.get_label() == "envelope [lower, upper]"
    vertices = band.get_paths()[0].vertices
    assert vertices[:, 1].min() == pytest.approx(res.lower(ranks).min())
    assert vertices[:, 1].max() == pytest.approx(res.upper(ranks).max())

    (prefix,) = [p for p in ax.patches if p.get_label().startswith("exact prefix")]
    assert prefix.get_label() == f"exact prefix (ranks 1 to {res.exact_len:,})"
    assert prefix.get_x() == 1 and prefix.get_x() + prefix.get_width() == res.exact_len

    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [
        "envelope [lower, upper]",
        f"exact prefix (ranks 1 to {res.exact_len:,})",
        "estimate",
        "true precision",
        f"queried ranks ({res.n_queries})",
    ]


def test_callable_truth_matches_array_and_truth_is_optional(paula_result, true_p):
    ax = plot_curve(paula_result, true_precision=lambda r: true_p[r - 1])
    lines = _lines_by_label(ax)
    np.testing.assert_array_equal(
        lines["true precision"].get_ydata(), true_p[plot_ranks(paula_result) - 1]
    )
    bare = plot_curve(paula_result)
    assert "true precision" not in _lines_by_label(bare)


def test_draws_on_given_axes_and_linear_axis(paula_result):
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    assert plot_curve(paula_result, ax=ax, log_x=False) is ax
    assert ax.get_xscale() == "linear"


def test_random_baseline_has_no_queried_markers(ranked_labels, true_p):
    res = curves.random_baseline(LabelOracle(ranked_labels), N, rng=0)
    ax = plot_curve(res, true_precision=true_p)
    assert set(_lines_by_label(ax)) == {"estimate", "true precision"}
    assert ax.get_title() == f"random baseline: {res.annotations:,} annotations (N = {N:,})"


def test_logstrat_result_plots(ranked_labels):
    res = curves.logstrat(LabelOracle(ranked_labels), N, rng=0)
    ax = plot_curve(res)
    assert ax.get_title().startswith("LogStrat: ")
    assert f"queried ranks ({res.n_queries})" in _lines_by_label(ax)


def test_huge_list_is_never_evaluated_at_all_ranks():
    n = 2 * 10**9
    oracle = CallableOracle(
        lambda i: (i * 0.6180339887) % 1 < 0.9 - 0.4 * np.log1p(i) / np.log(n),
        n_items=n,
        vectorized=True,
    )
    res = curves.paula(oracle, n)
    asked = []

    def truth(ranks):
        asked.append(ranks.size)
        return 0.9 - 0.4 * np.log(ranks) / np.log(n)

    start = time.perf_counter()
    ax = plot_curve(res, true_precision=truth)
    elapsed = time.perf_counter() - start
    assert asked == [plot_ranks(res).size]
    assert asked[0] < 10_000  # a few thousand grid ranks plus the 449 corners, not 2e9
    assert all(len(line.get_xdata()) < 10_000 for line in ax.get_lines())
    assert elapsed < 5.0
    assert ax.get_xlim() == pytest.approx((1, n))


def test_plot_ranks_are_sorted_unique_and_cover_the_ends(paula_result):
    ranks = plot_ranks(paula_result)
    assert ranks.dtype == np.int64
    assert ranks[0] == 1 and ranks[-1] == N
    assert (np.diff(ranks) > 0).all()
    assert paula_result.exact_len in ranks


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"true_precision": np.ones(10)}, r"`true_precision` must have one value per rank 1..N"),
        ({"true_precision": lambda r: np.ones(3)}, r"`true_precision` must return one value"),
        ({"true_precision": "high"}, r"`true_precision` must be an array"),
        ({"ax": "axes"}, r"`ax` must be a matplotlib Axes; got 'axes'"),
        ({"log_x": "yes"}, r"`log_x` must be True or False"),
    ],
)
def test_errors_name_the_parameter(paula_result, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plot_curve(paula_result, **kwargs)


def test_result_must_be_a_curve_result():
    with pytest.raises(ValueError, match="`result` must be a bayeval.curves.CurveResult; got list"):
        plot_curve([0.5, 0.4])


def test_importing_bayeval_does_not_import_matplotlib():
    code = "import sys, bayeval, bayeval.plots; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_estimates_plot_as_gaps(ranked_labels):
    import dataclasses

    res = curves.random_baseline(LabelOracle(ranked_labels), N, rng=0)
    values = res.corner_estimate.copy()
    values[:5] = np.nan  # the baseline has no estimate where no sample lies above a rank
    gappy = dataclasses.replace(res, corner_estimate=values)
    ax = plot_curve(gappy)
    ax.figure.savefig(io.BytesIO(), format="png")  # no warning while drawing
    assert np.isnan(_lines_by_label(ax)["estimate"].get_ydata()).any()


# ------------------------------------------------------------------------------------ AdaStrat


@pytest.fixture(scope="module")
def adastrat_result(ranked_labels):
    return curves.adastrat(LabelOracle(ranked_labels), N, rng=0)


def test_adastrat_is_drawn_smooth_with_its_queried_points(adastrat_result, true_p):
    from matplotlib.collections import FillBetweenPolyCollection

    res = adastrat_result
    assert 1 < res.n_queries < 20  # adaptive: far fewer than LogStrat's and PAULA's
    ax = plot_curve(res, true_precision=true_p)
    assert ax.get_title() == (
        f"AdaStrat: {res.annotations:,} annotations, {res.n_queries} queried ranks (N = {N:,})"
    )
    lines = _lines_by_label(ax)
    label = f"queried ranks ({res.n_queries})"
    assert set(lines) == {"estimate", "true precision", label}

    estimate = lines["estimate"]
    ranks = np.asarray(estimate.get_xdata())
    np.testing.assert_array_equal(ranks, plot_ranks(res))
    assert estimate.get_drawstyle() == "default"  # a smooth envelope, not a step function
    np.testing.assert_array_equal(estimate.get_ydata(), res.at(ranks))
    np.testing.assert_array_equal(lines["true precision"].get_ydata(), true_p[ranks - 1])

    queried = lines[label]
    np.testing.assert_array_equal(queried.get_xdata(), res.queried)
    np.testing.assert_array_equal(queried.get_ydata(), res.at(res.queried))
    assert queried.get_marker() == "s" and queried.get_linestyle() == "None"

    (band,) = [c for c in ax.collections if isinstance(c, FillBetweenPolyCollection)]
    assert band.get_label() == "envelope [lower, upper]"
    vertices = band.get_paths()[0].vertices
    assert len(vertices) < 2 * ranks.size + 10  # one vertex per rank and side: no steps
    lower, upper = res.lower(ranks), res.upper(ranks)
    assert vertices[:, 1].min() == pytest.approx(lower.min())
    assert vertices[:, 1].max() == pytest.approx(upper.max())
    assert (lower <= res.at(ranks) + 1e-12).all()
    assert (res.at(ranks) <= upper + 1e-12).all()

    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [
        "envelope [lower, upper]",
        f"exact prefix (ranks 1 to {res.exact_len:,})",
        "estimate",
        "true precision",
        label,
    ]


def test_adastrat_plot_ranks_hold_corners_and_their_neighbours(adastrat_result):
    res = adastrat_result
    ranks = plot_ranks(res)
    for offset in (-1, 0, 1):
        near = res.corners + offset
        assert np.isin(near[near <= N], ranks).all()
    m = res.m
    assert np.isin(res.queried[res.queried < N] + m + 1, ranks).all()  # the kink at y + m + 1
    assert ranks.size < 10_000


def test_adastrat_drawing_follows_the_envelope_between_plotted_ranks(adastrat_result):
    res = adastrat_result
    ranks = plot_ranks(res)
    every = np.arange(res.exact_len + 1, N + 1)
    for which in ("at", "lower", "upper"):
        f = getattr(res, which)
        drawn = np.interp(every, ranks, f(ranks))  # what the line shows between plotted ranks
        assert np.abs(drawn - f(every)).max() < 1e-3, which


def test_adastrat_flat_curve_and_census_plot():
    n = 100_000
    flat = curves.adastrat(CallableOracle(lambda i: i % 4 != 3, n_items=n, vectorized=True), n)
    assert flat.n_queries == 1
    ax = plot_curve(flat, true_precision=lambda r: (r - r // 4) / r)
    queried = _lines_by_label(ax)["queried ranks (1)"]
    assert queried.get_xdata().tolist() == [n]
    assert queried.get_ydata() == pytest.approx([0.75], abs=0.02)

    labels = np.arange(2000) % 3 != 0
    census = curves.adastrat(LabelOracle(labels), 2000, r_tilde=2000, m=1)
    assert census.n_queries == 0 and census.exact_len == 2000
    ax = plot_curve(census)
    assert set(_lines_by_label(ax)) == {"estimate"}
    assert ax.get_title() == "AdaStrat: 2,000 annotations (N = 2,000)"


def test_adastrat_on_two_billion_items_plots_fast():
    n = 2 * 10**9
    oracle = CallableOracle(
        lambda i: (i * 0.6180339887) % 1 < 0.9 - 0.4 * np.log1p(i) / np.log(n),
        n_items=n,
        vectorized=True,
    )
    res = curves.adastrat(oracle, n, rng=0)
    assert res.n_queries <= res.plan.max_queries
    asked = []

    def truth(ranks):
        asked.append(ranks.size)
        return 0.9 - 0.4 * np.log(ranks) / np.log(n)

    start = time.perf_counter()
    ax = plot_curve(res, true_precision=truth)
    elapsed = time.perf_counter() - start
    assert asked == [plot_ranks(res).size] and asked[0] < 10_000
    assert all(len(line.get_xdata()) < 10_000 for line in ax.get_lines())
    assert elapsed < 5.0
    assert ax.get_xlim() == pytest.approx((1, n))


# ------------------------------------------------------------------------------ title, legend


def test_title_option(paula_result):
    assert plot_curve(paula_result, title=False).get_title() == ""
    assert plot_curve(paula_result, title="left panel").get_title() == "left panel"
    assert plot_curve(paula_result, title=True).get_title().startswith("PAULA: ")


def test_legend_option_keeps_labels_for_a_later_legend(paula_result, true_p):
    ax = plot_curve(paula_result, true_precision=true_p, legend=False)
    assert ax.get_legend() is None
    labels = [t.get_text() for t in ax.legend().get_texts()]
    assert labels[0] == "envelope [lower, upper]" and "true precision" in labels


def test_panels_without_titles_and_legends(paula_result, adastrat_result, true_p):
    from matplotlib.figure import Figure

    axes = Figure().subplots(1, 2)
    for ax, res in zip(axes, (paula_result, adastrat_result), strict=True):
        plot_curve(res, true_precision=true_p, ax=ax, title=False, legend=ax is axes[1])
    assert [ax.get_title() for ax in axes] == ["", ""]
    assert axes[0].get_legend() is None and axes[1].get_legend() is not None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"title": None}, r"`title` must be a string, True or False; got None"),
        ({"title": 3}, r"`title` must be a string, True or False; got 3"),
        ({"legend": "yes"}, r"`legend` must be True or False; got 'yes'"),
    ],
)
def test_title_and_legend_errors(paula_result, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plot_curve(paula_result, **kwargs)


@pytest.fixture(scope="module")
def run_and_curve():
    """A StaticIS run (its history) and the same labels' precision-recall curve estimate."""
    import bayeval as be
    from bayeval.plots.sampling import pr_thresholds

    rng = np.random.default_rng(3)
    truth = rng.random(4_000) < 0.05
    scores = np.where(truth, rng.beta(5, 2, truth.size), rng.beta(1, 8, truth.size))
    run = be.evaluate(be.Pool(scores), be.measures.FScore(), truth, 150, "static_is", rng=3)
    curve = be.measures.PrecisionRecallCurve(pr_thresholds(scores, 4))
    return run, run.sampler.estimate(measure=curve)


def test_run_plots_draw_on_the_axes_given(run_and_curve):
    from matplotlib.figure import Figure

    from bayeval.plots import plot_history, plot_pr_curve

    run, curve_estimate = run_and_curve
    axes = Figure().subplots(1, 1, squeeze=False)
    drawn = plot_history(run.history, axes=axes, truth={"f1": 0.5})
    assert drawn[0] is axes[0, 0] and drawn[0].get_title() == "f1"
    assert "truth" in [t.get_text() for t in drawn[0].get_legend().get_texts()]
    pair = Figure().subplots(1, 2)
    drawn = plot_pr_curve(curve_estimate, 0.9, axes=pair, title="pool")
    assert list(drawn) == list(pair) and pair[0].figure.get_suptitle() == "pool"
    assert any("90% design band" in t.get_text() for t in pair[0].get_legend().get_texts())


def test_run_plots_need_one_axes_per_panel(run_and_curve):
    from matplotlib.figure import Figure

    from bayeval.plots import plot_history, plot_pr_curve

    run, curve_estimate = run_and_curve
    with pytest.raises(ValueError, match=r"`axes` must hold one Axes per output \(1\); got 2"):
        plot_history(run.history, axes=Figure().subplots(1, 2))
    with pytest.raises(ValueError, match=r"`axes` must hold two Axes; got 3"):
        plot_pr_curve(curve_estimate, axes=Figure().subplots(1, 3))


def test_a_curve_result_plots_itself(paula_result):
    ax = paula_result.plot(title="PAULA")
    assert ax.get_title() == "PAULA"
    assert "envelope [lower, upper]" in [t.get_text() for t in ax.get_legend().get_texts()]
    with pytest.raises(ValueError, match=r"`kind` of a curve's envelope is 'eti'; got 'hdi'"):
        paula_result.plot(kind="hdi")
    with pytest.raises(ValueError, match=r"`prob` must be 1.0 for basis='design'"):
        paula_result.plot(0.9)


def test_any_result_plots_its_summary():
    import bayeval as be

    sample = be.StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    ax = be.recall_interval(sample).plot(0.9)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["recall beta-binomial-half posterior"]
    assert ax.get_xlabel() == "estimate and 90% eti interval"
