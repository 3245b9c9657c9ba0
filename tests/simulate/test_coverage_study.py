"""Coverage studies (Webber 2013, §4.2) against brute force and against the paper's findings.

The paper's tables (Table 4.2.5 mean coverage "cvr"; lines L474/L482 of
../shared/papers/recall-intervals-webber-2013.txt) come from 1,000 realizations x 1,000
resamples; the suite runs reduced studies (120 x 200) and asserts the qualitative findings with
tolerances from simulation error. A reduced study's mean coverage has two error sources: the
resampling (sd sqrt(0.95 0.05 / (120 200)) = 0.0014) and the realizations (the spread of
per-realization coverage, sd <= 0.06 for the good methods, over sqrt(120): <= 0.006). So +-0.02
around 0.95 is more than 3 sd for the beta-binomial half prior.
"""

import numpy as np
import pytest

import bayeval as be
from bayeval import simulate
from bayeval._core.koopman import ratio_interval, score_statistic
from bayeval.simulate._decisions import misses

REALIZATIONS, RESAMPLES = 120, 200


@pytest.fixture(scope="module", params=["neutral", "legal", "small"])
def study(request):
    return simulate.coverage_study(
        request.param, realizations=REALIZATIONS, resamples=RESAMPLES, width_resamples=3,
        rng=2013, progress=False,
    )  # fmt: skip


def test_decisions_equal_the_intervals_themselves():
    """The shortcut (CDF / score statistic at the truth) agrees with recall_interval's ends."""
    gen = np.random.default_rng(5)
    for name in ("neutral", "legal", "small"):
        pops = simulate.preset(name).realizations(4, rng=gen)
        for pop in pops.to_dict("records"):
            r1 = gen.hypergeometric(pop["R1"], pop["N1"] - pop["R1"], pop["n1"], size=12)
            r0 = gen.hypergeometric(pop["R0"], pop["N0"] - pop["R0"], pop["n0"], size=12)
            t = pop["R1"] / (pop["R1"] + pop["R0"])
            for method in simulate.METHODS:
                below, above = misses(method, pop, r1, r0, 0.95)
                for i in range(r1.size):
                    sample = be.StratifiedSample.two_segments(
                        N1=pop["N1"], n1=pop["n1"], r1=int(r1[i]),
                        N0=pop["N0"], n0=pop["n0"], r0=int(r0[i]),
                    )  # fmt: skip
                    res = be.recall_interval(sample, method=method, prob=0.95)
                    assert (t < res.lower, t > res.upper) == (below[i], above[i]), (method, pop)


def test_koopman_score_and_interval_against_statsmodels():
    """Away from all-positive samples our score interval is statsmodels' (Koopman 1984)."""
    import warnings

    from statsmodels.stats.proportion import confint_proportions_2indep

    for r1, n1, r0, n0 in ((120, 300, 30, 900), (45, 300, 3, 900), (280, 300, 800, 900)):
        low, high = confint_proportions_2indep(
            r0, n0, r1, n1, compare="ratio", method="score", correction=False, alpha=0.05
        )
        z = score_statistic(np.array([r1, r1]), n1, np.array([r0, r0]), n0, np.array([low, high]))
        np.testing.assert_allclose(np.abs(z), 1.959964, rtol=1e-4)
        np.testing.assert_allclose(ratio_interval(r1, n1, r0, n0, 0.05), (low, high), rtol=1e-10)
    # an all-positive retrieved sample: statsmodels' roots turn complex and its interval
    # (0.667, 3.06) excludes the estimate 0.5; ours holds it, and its ends have |z| = 1.96
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sm_low, _ = confint_proportions_2indep(1, 2, 1, 1, compare="ratio", method="score",
                                               correction=False, alpha=0.05)  # fmt: skip
    assert np.real(sm_low) > 0.5
    low, high = ratio_interval(1, 1, 1, 2, 0.05)
    assert low < 0.5 < high
    np.testing.assert_allclose(np.abs(score_statistic(1, 1, 1, 2, np.array([low, high]))), 1.959964,
                               rtol=1e-6)  # fmt: skip


def test_table_is_consistent(study):
    table = study.table()
    assert list(table.index) == list(simulate.METHODS)
    cov = study.stats[:, :, 0]
    np.testing.assert_allclose(cov + study.stats[:, :, 1] + study.stats[:, :, 2], 1.0)
    assert table["closest_share"].sum() == pytest.approx(1.0)
    assert np.all(table["q25_coverage"] <= table["median_coverage"])
    assert np.all(table["median_coverage"] <= table["q75_coverage"])
    np.testing.assert_allclose(table["rmse"] ** 2, ((cov - 0.95) ** 2).mean(axis=0))
    ds = study.per_realization
    assert ds["coverage"].dims == ("interval", "realization")
    assert ds.sizes == {"interval": 9, "realization": REALIZATIONS}
    np.testing.assert_array_equal(ds["coverage"].sel(interval="koopman"), cov[:, 4])
    assert table.attrs["width_resamples"] == 3


def test_paper_findings(study):
    table = study.table()
    cvr = table["mean_coverage"]
    rmse = table["rmse"]
    # beta-binomial half prior: "accurate in all conditions examined" (Table 3, L293)
    assert abs(cvr["beta-binomial-half"] - 0.95) <= 0.02
    # the RMSE floor of 200 resamples is sqrt(0.95 0.05 / 200) = 0.015; the half prior's
    # Table 4.2.6 values (0.008 / 0.014 / 0.010 at 1,000) sit on their floor of 0.007
    assert rmse["beta-binomial-half"] < 0.03
    # the naive binomial is the worst in every scenario (Table 4.2.6)
    assert rmse["naive-binomial"] == rmse.max()
    if study.scenario == "legal":
        # normal MLE under-covers (0.86 in Table 4.2.5); Laplace only partly corrects (0.90);
        # Agresti-Coull is worse than the MLE (0.83), the good methods are near 0.95
        assert cvr["normal-mle"] < 0.91 and cvr["normal-laplace"] < 0.93
        assert cvr["normal-agresti-coull"] < cvr["normal-laplace"]
        assert rmse["normal-mle"] > 5 * rmse["beta-binomial-half"]
        for method in ("koopman", "beta-jeffreys", "beta-binomial-uniform", "beta-binomial-mcp"):
            assert abs(cvr[method] - 0.95) <= 0.02
    if study.scenario == "small":
        # heavy samples: Koopman over-covers (0.97), Jeffreys under-covers (0.92)
        assert cvr["koopman"] > 0.96 and cvr["beta-jeffreys"] < 0.935
    if study.scenario == "neutral":
        # balance (Fig. 12): the MLE's misses lean to overstating recall (lower gap), the
        # adjusted normal methods' to understating it
        gaps = table["lower_gap"] - table["upper_gap"]
        assert gaps["normal-agresti-coull"] < 0
        assert gaps["normal-agresti-coull"] < gaps["normal-mle"]


def test_same_seed_same_study_whatever_the_chunks():
    kwargs = {"realizations": 9, "resamples": 50, "width_resamples": 1, "progress": False}
    a = simulate.coverage_study("small", ["normal-mle", "koopman"], rng=3, chunk_size=2, **kwargs)
    b = simulate.coverage_study("small", ["normal-mle", "koopman"], rng=3, chunk_size=9, **kwargs)
    c = simulate.coverage_study("small", ["normal-mle", "koopman"], rng=4, **kwargs)
    assert np.array_equal(a.stats, b.stats) and not np.array_equal(a.stats, c.stats)


def test_dask_cluster_gives_the_same_result():
    from distributed import Client, LocalCluster

    kwargs = {"realizations": 12, "resamples": 60, "width_resamples": 1, "progress": False}
    methods = ["normal-laplace", "koopman", "beta-binomial-half"]
    local = simulate.coverage_study("legal", methods, rng=11, **kwargs)
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        spread = simulate.coverage_study("legal", methods, rng=11, client=client, chunk_size=5,
                                         **kwargs)  # fmt: skip
    assert np.array_equal(local.stats, spread.stats)


def test_plot(study):
    import matplotlib.pyplot as plt

    axes = study.plot()
    assert len(axes) == 2 and axes[0].get_xlabel() == "coverage per realization"
    plt.close("all")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"scenario": "huge"}, "`scenario`"),
        ({"scenario": 3}, "`scenario`"),
        ({"methods": ["wald"]}, "`methods`"),
        ({"methods": []}, "`methods`"),
        ({"realizations": 0}, "`realizations`"),
        ({"resamples": 2.5}, "`resamples`"),
        ({"prob": 1.5}, "`prob`"),
        ({"rng": "x"}, "`rng`"),
    ],
)
def test_bad_input_names_parameter(kwargs, match):
    args = {"scenario": "small", "realizations": 2, "resamples": 5} | kwargs
    with pytest.raises(ValueError, match=match):
        simulate.coverage_study(args.pop("scenario"), **args)


def test_one_realization_has_no_standard_error():
    study = simulate.coverage_study("small", ["normal-mle"], realizations=1, resamples=20,
                                    width_resamples=1, progress=False)  # fmt: skip
    assert np.isnan(study.table()["mean_coverage_se"].iloc[0])
