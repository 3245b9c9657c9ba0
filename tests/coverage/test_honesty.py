"""A reduced, seeded honesty battery: coverage of the 95% intervals on pools that break them.

The full battery (``benchmarks/honesty.py``) runs every pool, sampler and budget with 200
repeats; here three pools of 20,000 items, two samplers, 500 labels and 20 repeats. With 20 runs
a perfectly calibrated 95% interval covers 15 or fewer times with probability 0.003
(binomial), so ``>= 0.8`` fails a calibrated interval about once in 400 cells.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from bayeval.models import CalibrationWarning
from bayeval.simulate.battery import battery_pool, honesty_run, summarise_battery

REPEATS = 20


@pytest.fixture(scope="module")
def battery():
    rows = []
    for pool_name in ("separated", "hidden", "calibrated"):
        pool, truth = battery_pool(pool_name, size=20_000)
        for sampler in ("static_is", "ais"):
            for seed in range(REPEATS):
                # a fit whose importance weights are concentrated warns; the intervals are
                # scored all the same and the runs that warned are counted (any other warning
                # is still an error)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("error")
                    warnings.simplefilter("always", CalibrationWarning)
                    run = honesty_run(pool, truth, sampler, (500,), rng=seed)
                warned = any(issubclass(w.category, CalibrationWarning) for w in caught)
                for row in run:
                    rows.append(
                        {"pool": pool_name, "sampler": sampler, "seed": seed, "warned": warned,
                         **row}
                    )  # fmt: skip
    return pd.DataFrame(rows)


def _coverage(battery, pool, interval):
    cells = summarise_battery(battery)
    return cells[(cells["pool"] == pool) & (cells["interval"] == interval)]


@pytest.mark.slow
@pytest.mark.parametrize("pool", ["separated", "calibrated"])
def test_the_default_model_covers_where_its_assumption_holds(battery, pool):
    cells = _coverage(battery, pool, "default")
    assert (cells["coverage"] >= 0.8).all(), cells


@pytest.mark.slow
def test_the_robust_model_covers_positives_hidden_among_low_scores(battery):
    cells = _coverage(battery, "hidden", "robust")
    assert (cells["coverage"] >= 0.8).all(), cells
    # and the default model does not: no label can see the hidden positives (documented)
    default = _coverage(battery, "hidden", "default")
    assert default.loc[default["measure"] == "recall", "coverage"].max() < 0.85


@pytest.mark.slow
def test_the_fast_engine_rarely_warns_of_concentrated_weights(battery):
    # measured at commit 2e9544a with 40 repeats: 1 run of 240 warned (calibrated, StaticIS); a
    # fast engine whose importance weights degenerate on these pools warns in most runs
    runs = battery.drop_duplicates(["pool", "sampler", "seed"])
    assert runs["warned"].mean() <= 0.05, runs.groupby(["pool", "sampler"])["warned"].sum()


@pytest.mark.slow
def test_every_estimate_lies_in_its_own_interval(battery):
    assert battery["inside"].all()


@pytest.mark.slow
def test_design_intervals_stay_in_range_and_are_never_points(battery):
    design = battery[battery["interval"] == "design"]
    assert ((design["lower"] >= 0) & (design["upper"] <= 1)).all()
    assert (design["width"] > 0).all()
    assert np.isfinite(design[["lower", "upper", "estimate"]].to_numpy()).all()
