"""Coverage curves of binomial intervals: Webber (2013) §2.5-2.7, Figures 4-7.

Line references (``Lnnn``) are to ``/work/shared/papers/recall-intervals-webber-2013.txt``.
"""

import math

import numpy as np
import pytest
import xarray as xr
from scipy import integrate, stats

import bayeval as be
from bayeval.simulate.binomial import binomial_coverage, plot_binomial_coverage

METHODS = ["wald", "wilson", "agresti-coull", "clopper-pearson", "jeffreys"]


def brute_intervals(n, method, prob=0.95):
    """The n + 1 intervals through the public one-interval function (its own Jeffreys forcing)."""
    out = [be.binomial_interval(r, n, method, prob=prob) for r in range(n + 1)]
    return [res.lower for res in out], [res.upper for res in out]


def brute_coverage(pi, n, low, high):
    """C(pi) by a plain loop over the outcomes, closed intervals, pmf from math.comb."""
    total = 0.0
    for r in range(n + 1):
        if low[r] <= pi <= high[r]:
            total += math.comb(n, r) * pi**r * (1 - pi) ** (n - r)
    return total


def brute_mean(n, method, prob=0.95):
    """Mean of C over uniform pi by adaptive quadrature of the brute-force curve, piece by piece
    between consecutive interval ends (C is a polynomial on each piece)."""
    low, high = brute_intervals(n, method, prob)
    ends = np.unique(np.concatenate([[0.0, 1.0], low, high]))
    pieces = [
        integrate.quad(brute_coverage, a, b, args=(n, low, high), epsabs=1e-13, epsrel=1e-12)[0]
        for a, b in zip(ends[:-1], ends[1:], strict=True)
    ]
    return math.fsum(pieces)


# --------------------------------------------------------------------------------------------
# The paper's numbers


@pytest.mark.parametrize(
    ("method", "reported"),
    [
        # Fig. 4 caption L170, text L172: "average coverage is 97.7%" (Clopper-Pearson exact).
        ("clopper-pearson", 0.977),
        # Fig. 6 caption L190, text L196: "Mean coverage here is 95.3%" (Wilson, Eq. 12).
        ("wilson", 0.953),
        # Fig. 7 caption L223, text L229: "mean coverage here is 95.1%" (Jeffreys, forced ends).
        ("jeffreys", 0.951),
    ],
)
def test_mean_coverage_reproduces_webber_figures(method, reported):
    cov = binomial_coverage(20, method)
    assert cov.attrs["mean_coverage"] == pytest.approx(reported, abs=0.0005)  # printed digit


def test_wald_mean_coverage_exact_and_about_85_percent():
    # Fig. 5 caption L185, text L187: "mean coverage is 85.1%" for Wald at n = 20, 95%.
    # The paper does not state the prevalence grid it averaged over. The exact average over a
    # uniform prevalence is 0.8458; grid averages come out higher because the curve falls to 0
    # in a sliver next to 0 and 1 that a coarse grid steps over: the 101 points 0, 0.01, ..., 1
    # give 0.856 (0.01, ..., 0.99 give 0.853). No simple grid gives 0.851 exactly, so we assert
    # the exact value against an independent quadrature and the paper's "about 85%".
    cov = binomial_coverage(20, "wald")
    exact = cov.attrs["mean_coverage"]
    assert exact == pytest.approx(brute_mean(20, "wald"), abs=1e-10)
    assert exact == pytest.approx(0.8458, abs=0.00005)
    assert exact == pytest.approx(0.85, abs=0.01)
    grid = binomial_coverage(20, "wald", prevalences=np.linspace(0, 1, 101))
    assert float(grid.coverage.mean()) == pytest.approx(0.856, abs=0.0005)
    inner = binomial_coverage(20, "wald", prevalences=np.linspace(0.01, 0.99, 99))
    assert float(inner.coverage.mean()) == pytest.approx(0.853, abs=0.0005)


def test_agresti_coull_mean_coverage():
    # Eq. 13 (L200-L204) has no figure; this is the exact value at n = 20 (regression, not paper).
    assert binomial_coverage(20, "agresti-coull").attrs["mean_coverage"] == pytest.approx(
        0.9618, abs=0.00005
    )


def test_clopper_pearson_never_below_nominal():
    # Eq. 10 (exact intervals guarantee at least 1 - alpha everywhere); L172: "achieves coverage
    # of at least 1 - alpha for all theta".
    for n in (1, 5, 20, 50):
        for prob in (0.8, 0.95):
            cov = binomial_coverage(n, "clopper-pearson", prob=prob)
            assert cov.coverage.min() >= prob - 1e-12
            limits = [cov[v] for v in ("coverage_below", "coverage_at", "coverage_above")]
            assert all(float(v.min()) >= prob - 1e-12 for v in limits)  # NaNs are skipped


def test_clopper_pearson_higher_at_non_mediate_prevalences():
    # L172: "closer to 99% for non-mediate prevalences".
    cov = binomial_coverage(20, "clopper-pearson", prevalences=np.linspace(0, 1, 20001))
    pi = cov.prevalence
    edges = float(cov.coverage.where((pi < 0.2) | (pi > 0.8)).mean())
    middle = float(cov.coverage.where((pi > 0.3) & (pi < 0.7)).mean())
    assert edges > 0.98 > middle


def test_wald_drops_to_zero_at_the_edges():
    # L187: "coverage drops close to 0 for edge cases"; the interval for r = 0 is [0, 0] and for
    # r = n is [1, 1], so just inside [0, 1] almost nothing is covered.
    cov = binomial_coverage(20, "wald")
    assert float(cov.coverage_above.sel(endpoint=0.0)) == 0.0
    assert float(cov.coverage_below.sel(endpoint=1.0)) == 0.0
    assert float(cov.coverage.sel(prevalence=0.0)) == 1.0  # [0, 0] does cover pi = 0
    near = binomial_coverage(20, "wald", prevalences=[1e-3, 1 - 1e-3])
    assert (near.coverage < 0.05).all()


# --------------------------------------------------------------------------------------------
# Exactness of the curve and of its mean


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("n", "prob"), [(1, 0.95), (7, 0.9), (20, 0.95), (33, 0.99)])
def test_curve_equals_brute_force_double_loop(method, n, prob):
    rng = np.random.default_rng([METHODS.index(method), n])
    pis = np.concatenate([[0.0, 1.0], rng.random(200)])
    cov = binomial_coverage(n, method, prevalences=pis, prob=prob)
    low, high = brute_intervals(n, method, prob)
    expected = [brute_coverage(p, n, low, high) for p in pis]
    np.testing.assert_allclose(cov.coverage.values, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(cov.prevalence.values, pis)  # order kept


@pytest.mark.parametrize("method", METHODS)
def test_intervals_are_those_of_binomial_interval(method):
    cov = binomial_coverage(20, method)
    low, high = brute_intervals(20, method)
    np.testing.assert_allclose(cov.lower.values, low, rtol=0, atol=1e-14)
    np.testing.assert_allclose(cov.upper.values, high, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(cov.r.values, np.arange(21))
    if method == "jeffreys":  # L229: forced ends
        assert cov.lower.values[0] == 0.0 and cov.upper.values[-1] == 1.0


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("n", "prob"), [(3, 0.95), (20, 0.9), (20, 0.95)])
def test_mean_coverage_equals_quadrature_and_fine_grid(method, n, prob):
    cov = binomial_coverage(n, method, prob=prob)
    exact = cov.attrs["mean_coverage"]
    assert exact == pytest.approx(brute_mean(n, method, prob), abs=1e-10)
    # A midpoint rule on 200,000 cells: the jumps cost at most (number of ends) / 200,000.
    mids = (np.arange(200_000) + 0.5) / 200_000
    fine = binomial_coverage(n, method, prevalences=mids, prob=prob)
    assert float(fine.coverage.mean()) == pytest.approx(exact, abs=2e-4)


def test_wilson_mean_tends_to_nominal():
    cov = binomial_coverage(400, "wilson", prevalences=[0.5])
    assert cov.attrs["mean_coverage"] == pytest.approx(0.95, abs=0.005)
    assert float(cov.coverage[0]) == pytest.approx(0.95, abs=0.01)


# --------------------------------------------------------------------------------------------
# Shape of the curve


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n", [1, 2, 20, 150])
def test_coverage_is_a_probability(method, n):
    cov = binomial_coverage(n, method)
    values = cov.coverage.values
    assert np.isfinite(values).all()
    assert (values >= 0).all() and (values <= 1).all()
    for name in ("coverage_below", "coverage_at", "coverage_above"):
        v = cov[name].values
        assert ((v >= 0) & (v <= 1) | np.isnan(v)).all()
    # NaN only where a one-sided limit does not exist.
    assert np.isnan(cov.coverage_below.values).sum() == (cov.endpoint.values == 0).sum()
    assert np.isnan(cov.coverage_above.values).sum() == (cov.endpoint.values == 1).sum()
    prev = cov.prevalence.values
    assert prev[0] == 0.0 and prev[-1] == 1.0 and (np.diff(prev) > 0).all()


@pytest.mark.parametrize("method", METHODS)
def test_endpoints_are_the_interval_ends(method):
    cov = binomial_coverage(20, method)
    ends = np.unique(np.concatenate([cov.lower.values, cov.upper.values]))
    np.testing.assert_array_equal(cov.endpoint.values, ends)
    grid = cov.prevalence.values
    inner = ends[(ends > 0) & (ends < 1)]
    # The default grid holds each end and the floats on both sides of it.
    for pts in (inner, np.nextafter(inner, -np.inf), np.nextafter(inner, np.inf)):
        assert np.isin(pts, grid).all()


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n", [5, 20])
def test_jumps_happen_exactly_at_endpoints(method, n):
    cov = binomial_coverage(n, method)
    low, high, ends = cov.lower.values, cov.upper.values, cov.endpoint.values
    pi, values = cov.prevalence.values, cov.coverage.values
    r = np.arange(n + 1)

    # 1. Between two consecutive ends the covering outcomes do not change, so C is the same
    #    polynomial there: no jump inside a gap.
    for a, b in zip(ends[:-1], ends[1:], strict=True):
        inside = (pi > a) & (pi < b)
        mid = (a + b) / 2
        members = (low <= mid) & (mid <= high)
        smooth = stats.binom.pmf(r[members, None], n, pi[None, inside]).sum(axis=0)
        np.testing.assert_allclose(values[inside], smooth, rtol=0, atol=1e-12)

    # 2. At each end the one-sided limits are the curve at the neighbouring floats, and C
    #    steps by the pmf of the outcomes whose interval opens there minus those closing there.
    for i, e in enumerate(ends):
        at = cov.coverage_at.values[i]
        assert at == values[pi == e][0]
        pmf = stats.binom.pmf(r, n, e)
        if e > 0:
            below = cov.coverage_below.values[i]
            assert below == pytest.approx(values[pi == np.nextafter(e, -1)][0], abs=1e-12)
            assert at - below == pytest.approx(pmf[low == e].sum(), abs=1e-12)
        if e < 1:
            above = cov.coverage_above.values[i]
            assert above == pytest.approx(values[pi == np.nextafter(e, 2)][0], abs=1e-12)
            assert at - above == pytest.approx(pmf[high == e].sum(), abs=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_every_inner_end_is_a_visible_jump_at_n20(method):
    # The grey lines of Figures 4-7: at n = 20 each end inside (0, 1) is a jump of at least 0.1
    # percentage points.
    cov = binomial_coverage(20, method)
    inner = (cov.endpoint > 0) & (cov.endpoint < 1)
    jump = abs(cov.coverage_above - cov.coverage_below).where(inner, drop=True)
    assert (jump > 1e-3).all()


def test_closed_interval_at_the_ends():
    # Jeffreys at n = 20: the value at each end counts the interval that ends (or starts) there.
    cov = binomial_coverage(20, "jeffreys")
    low, high = cov.lower.values, cov.upper.values
    for i, e in enumerate(cov.endpoint.values):
        expected = brute_coverage(e, 20, low, high)
        assert cov.coverage_at.values[i] == pytest.approx(expected, abs=1e-12)


def test_result_metadata():
    cov = binomial_coverage(20, "wilson", prob=0.9)
    assert isinstance(cov, xr.Dataset)
    assert cov.coverage.dims == ("prevalence",)
    assert cov.lower.dims == cov.upper.dims == ("r",)
    assert cov.attrs["method"] == "wilson"
    assert cov.attrs["n"] == 20 and isinstance(cov.attrs["n"], int)
    assert cov.attrs["prob"] == 0.9
    assert isinstance(cov.attrs["mean_coverage"], float)
    # Fewer points with an explicit grid; a scalar prevalence works too.
    assert binomial_coverage(20, "wilson", prevalences=0.3).sizes["prevalence"] == 1
    assert binomial_coverage(20.0, "wilson").attrs["n"] == 20
    assert binomial_coverage(np.int64(20), "wilson").attrs["n"] == 20


# --------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("n", [0, -3, 2.5, True, "20", None, float("nan"), float("inf")])
def test_bad_n(n):
    with pytest.raises(ValueError, match="`n`"):
        binomial_coverage(n, "wilson")


@pytest.mark.parametrize("method", ["exact", "Wilson", None, "normal"])
def test_bad_method_lists_the_options(method):
    with pytest.raises(ValueError, match="`method` must be one of") as info:
        binomial_coverage(20, method)
    for name in METHODS:
        assert repr(name) in str(info.value)


@pytest.mark.parametrize(
    ("prevalences", "match"),
    [
        ([0.1, -0.1], "entry 1 is -0.1"),
        ([1.5], r"\[0, 1\]"),
        ([0.2, float("nan")], "entry 1 is nan"),
        ([[0.1, 0.2]], "1-d"),
        ([], "non-empty"),
        ("abc", "array of numbers"),
    ],
)
def test_bad_prevalences(prevalences, match):
    with pytest.raises(ValueError, match=match) as info:
        binomial_coverage(20, "wilson", prevalences=prevalences)
    assert "`prevalences`" in str(info.value)


@pytest.mark.parametrize("prob", [0, 1, 1.5, -0.2, "x", None])
def test_bad_prob(prob):
    with pytest.raises(ValueError, match="`prob`"):
        binomial_coverage(20, "wilson", prob=prob)


# --------------------------------------------------------------------------------------------
# Plot


@pytest.fixture
def _agg():
    import matplotlib

    matplotlib.use("Agg")
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.mark.usefixtures("_agg")
@pytest.mark.parametrize("method", METHODS)
def test_plot(method):
    import matplotlib.pyplot as plt

    cov = binomial_coverage(20, method)
    _, ax = plt.subplots()
    assert plot_binomial_coverage(cov, ax=ax) is ax
    assert f"{cov.attrs['mean_coverage']:.1%}" in ax.get_title()
    assert "n = 20" in ax.get_title()
    (vlines,) = ax.collections  # one grey segment per end
    assert len(vlines.get_segments()) == cov.sizes["endpoint"]
    curve, nominal = ax.lines
    assert set(nominal.get_ydata()) == {0.95}
    # The black curve is broken at every end (NaN separators), so no piece bridges a jump.
    x = np.asarray(curve.get_xdata())
    gap = np.searchsorted(cov.endpoint.values, x)
    pieces = np.split(gap, np.flatnonzero(np.isnan(x)))
    assert all(np.unique(piece[1:] if i else piece).size == 1 for i, piece in enumerate(pieces))


@pytest.mark.usefixtures("_agg")
def test_plot_new_axes_and_bad_input():
    ax = plot_binomial_coverage(binomial_coverage(10, "wald", prevalences=[0.2, 0.5, 0.1]))
    assert ax.get_xlabel() == "Population prevalence"
    with pytest.raises(ValueError, match="`result`"):
        plot_binomial_coverage({"coverage": [0.9]})
