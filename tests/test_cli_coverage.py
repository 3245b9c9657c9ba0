"""``bayeval coverage``: a reduced coverage study from the command line."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from bayeval import simulate
from bayeval.cli import app

runner = CliRunner()
SMALL = ["coverage", "--scenario", "small", "--realizations", "6", "--resamples", "40",
         "--width-resamples", "1"]  # fmt: skip


def test_table_and_plot(tmp_path):
    path = tmp_path / "boxes.png"
    result = runner.invoke(app, [*SMALL, "--plot", str(path)])
    assert result.exit_code == 0, result.output
    assert "beta-binomial-half" in result.output and "small: coverage of 95%" in result.output
    assert path.stat().st_size > 10_000 and f"plot saved to {path}" in result.output


def test_json_matches_the_library(tmp_path):
    args = [*SMALL, "--method", "koopman", "--method", "normal-mle", "--seed", "4", "--json",
            "--plot", str(tmp_path / "b.png")]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    study = simulate.coverage_study(
        "small",
        ["koopman", "normal-mle"],
        realizations=6,
        resamples=40,
        width_resamples=1,
        rng=4,
        progress=False,
    )
    table = study.table()
    assert [row["method"] for row in out["methods"]] == ["koopman", "normal-mle"]
    got = [row["mean_coverage"] for row in out["methods"]]
    np.testing.assert_allclose(got, table["mean_coverage"].to_numpy())
    assert out["realizations"] == 6 and out["resamples"] == 40


def test_workers_give_the_same_numbers(tmp_path):
    base = [*SMALL, "--method", "normal-laplace", "--json", "--plot", str(tmp_path / "c.png")]
    alone = json.loads(runner.invoke(app, base).output)
    spread = runner.invoke(app, [*base, "--workers", "2"])
    assert spread.exit_code == 0, spread.output
    assert json.loads(spread.output)["methods"] == alone["methods"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--workers", "-1"], "--workers"),
        (["--method", "wald"], "`methods`"),
        (["--realizations", "0"], "`realizations`"),
        (["--prob", "2"], "`prob`"),
    ],
)
def test_bad_input_is_a_clear_error(extra, message):
    result = runner.invoke(app, [*SMALL, *extra])
    assert result.exit_code == 2
    assert message in result.output


def test_battery_json_matches_the_library():
    args = ["coverage", "--battery", "--pool", "separated", "--sampler", "static_is",
            "--budget", "100", "--runs", "2", "--size", "5000", "--json"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    cells = json.loads(result.output)["cells"]
    from bayeval.simulate.battery import coverage_battery

    expected = coverage_battery(("separated",), ("static_is",), (100,), 2, size=5000)
    assert [c["coverage"] for c in cells] == expected["coverage"].tolist()
    assert {c["interval"] for c in cells} == {"design", "default", "robust"}


def test_battery_table_checkpoint_and_bad_pool(tmp_path):
    checkpoint = tmp_path / "runs.jsonl"
    args = ["coverage", "--battery", "--pool", "separated", "--sampler", "passive",
            "--budget", "60", "--runs", "1", "--size", "3000",
            "--checkpoint", str(checkpoint)]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "pool separated: coverage of 95% intervals" in result.output
    header, run = (json.loads(line) for line in checkpoint.read_text().splitlines())
    assert header["settings"] == {"budgets": [60], "prob": 0.95, "size": 3000}
    assert run["task"] == ["separated", "passive", 0] and len(run["rows"]) == 9
    bad = runner.invoke(app, ["coverage", "--battery", "--pool", "nowhere", "--runs", "1"])
    assert bad.exit_code == 2
    assert "`pools` must be a non-empty sequence, each entry one of 'separated'" in bad.output
    assert "(entry 0 is 'nowhere')" in bad.output
    typo = runner.invoke(app, ["coverage", "--battery", "--sampler", "staticis", "--runs", "1"])
    assert typo.exit_code == 2
    assert "`samplers` must be a non-empty sequence, each entry one of 'ais'" in typo.output
    assert "(entry 0 is 'staticis')" in typo.output
