"""An interrupted honesty battery resumes from its checkpoint and gives the same cells."""

import json

import pandas as pd
import pytest
from distributed import Client, LocalCluster

from bayeval.simulate.battery import coverage_battery

SETTINGS = dict(pools=("separated",), samplers=("passive",), budgets=(60,), size=5000)


def test_a_resumed_battery_gives_the_cells_of_an_uninterrupted_one(tmp_path):
    whole = coverage_battery(repeats=3, **SETTINGS)
    checkpoint = tmp_path / "runs.jsonl"
    coverage_battery(repeats=2, checkpoint=checkpoint, **SETTINGS)
    lines = checkpoint.read_text().splitlines()
    assert [json.loads(line)["task"] for line in lines[1:]] == [
        ["separated", "passive", 0],
        ["separated", "passive", 1],
    ]
    # the interruption cut the last run's line short: that run is done again, on a cluster
    checkpoint.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        resumed = coverage_battery(repeats=3, checkpoint=checkpoint, client=client, **SETTINGS)
    pd.testing.assert_frame_equal(resumed, whole)
    tasks = [json.loads(line)["task"] for line in checkpoint.read_text().splitlines()[1:]]
    assert sorted(tasks) == [["separated", "passive", seed] for seed in range(3)]


def test_a_checkpoint_of_other_settings_is_refused(tmp_path):
    checkpoint = tmp_path / "runs.jsonl"
    coverage_battery(repeats=1, checkpoint=checkpoint, **SETTINGS)
    other = {**SETTINGS, "budgets": (40,)}
    with pytest.raises(ValueError, match=r"`checkpoint` .* holds runs with .*'budgets': \[60\]"):
        coverage_battery(repeats=1, checkpoint=checkpoint, **other)
