import json

import pytest
from typer.testing import CliRunner

from bayeval.cli import app

runner = CliRunner()
WEBBER = ["--retrieved", "2000,100,50", "--unretrieved", "100000,100,3"]


def test_version():
    from bayeval._version import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"bayeval {__version__}"


def test_interval_table():
    result = runner.invoke(
        app,
        ["interval", "recall", *WEBBER, "--method", "koopman", "--method", "beta-binomial-half"],
    )
    assert result.exit_code == 0, result.output
    assert "koopman" in result.output and "beta-binomial-half" in result.output
    assert "0.1111" in result.output  # the half-prior lower bound of Webber's example


def test_interval_json_matches_the_library():
    import bayeval as be

    result = runner.invoke(app, ["interval", "f1", *WEBBER, "--json", "--prob", "0.9"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    s = be.StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    ref = be.f1_interval(s, prob=0.9, rng=0)
    assert row["measure"] == "f1" and row["prob"] == 0.9
    assert (row["lower"], row["upper"]) == pytest.approx((ref.lower, ref.upper))


def test_interval_from_strata_csv(tmp_path, stratified_sample):
    path = tmp_path / "strata.csv"
    stratified_sample.to_frame().reset_index().to_csv(path, index=False)
    result = runner.invoke(app, ["interval", "recall", "--strata", str(path), "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert row["mc_error"] is not None  # stratified: the exact engine's Monte Carlo path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--retrieved", "2000,100"], "expected three whole numbers N,n,r"),
        (
            ["--retrieved", "2000,100,500", "--unretrieved", "10,5,1"],
            "`positives` cannot exceed `sampled`",
        ),
        ([*WEBBER, "--method", "magic"], "`method` must be one of"),
    ],
)
def test_interval_errors_are_clear(args, message):
    result = runner.invoke(app, ["interval", "recall", *args])
    assert result.exit_code == 2
    assert message in result.output


def test_demo_writes_plot(tmp_path):
    result = runner.invoke(app, ["demo", "--output", str(tmp_path)], terminal_width=150)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "febrl_intervals.png").stat().st_size > 10_000
    assert "beta-binomial-half" in result.output and "truth" in result.output
