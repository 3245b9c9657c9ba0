"""Shared fixtures: Webber's worked example and a stratified sample; wide CLI output."""

import pytest

import bayeval as be


@pytest.fixture(autouse=True)
def wide_console(monkeypatch):
    """Print the CLI's output 200 columns wide: rich wraps at 80 without a terminal, which
    splits the long temporary paths of parallel workers that the tests look for."""
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def webber_example():
    """Webber (2013) Table 2.4 as a sample: 50 of 100 retrieved and 3 of 100 unretrieved
    sampled items relevant (the yields the example population makes most likely)."""
    return be.StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)


@pytest.fixture
def stratified_sample():
    """Two retrieved and three unretrieved strata sampled at different rates."""
    return be.StratifiedSample(
        population=[800, 1200, 5000, 20000, 75000],
        sampled=[60, 40, 80, 60, 50],
        positives=[50, 20, 12, 4, 1],
        retrieved=[True, True, False, False, False],
        names=["top", "mid", "near", "far", "rest"],
    )
