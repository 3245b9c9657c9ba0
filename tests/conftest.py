"""Shared fixtures: Webber's worked example and a stratified sample; wide CLI output."""

import os
import shutil

import numpy as np
import pandas as pd
import pytest

import bayeval as be


@pytest.fixture(autouse=True)
def wide_console(monkeypatch):
    """Print the CLI's output 200 columns wide: rich wraps at 80 without a terminal, which
    splits the long temporary paths of parallel workers that the tests look for."""
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def text_pool_file(tmp_path):
    """Return a maker of pool files for labelling by hand, and their items' true labels.

    ``make(n, rate, seed)`` writes ``pool.csv`` (id ``doc-000`` ..., score, prediction, and
    ``text``, the field a person reads) with about ``rate`` positives, and returns its path,
    the frame and each id's label.
    """

    def make(n: int, rate: float, seed: int):
        gen = np.random.default_rng(seed)
        truth = (gen.random(n) < rate).astype(int)
        score = np.where(truth == 1, gen.beta(5, 2, n), gen.beta(1, 6, n)).round(6)
        ids = [f"doc-{i:03d}" for i in range(n)]
        frame = pd.DataFrame({"id": ids, "score": score, "prediction": (score >= 0.5).astype(int),
                              "text": [f"document {i}" for i in range(n)]})  # fmt: skip
        frame.to_csv(tmp_path / "pool.csv", index=False)
        return tmp_path / "pool.csv", frame, dict(zip(ids, truth.tolist(), strict=True))

    return make


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


# -- a real browser: Debian's chromium, driven by Playwright -----------------------------------
# ``make test`` installs chromium with apt (as root); Playwright is never asked to download a
# browser. The path is ``BAYEVAL_CHROMIUM`` or ``chromium`` on the PATH. With ``CI=true`` a
# missing browser fails the tests that need it (the widget's, the HTML report's); elsewhere
# they skip.


@pytest.fixture(scope="module")
def browser():
    """Return Debian's chromium, launched headless by Playwright (one per test module)."""
    path = os.environ.get("BAYEVAL_CHROMIUM") or shutil.which("chromium")
    if path is None:
        message = "no chromium (make test installs Debian's chromium with apt, as root)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; with CI=true the browser tests must run.")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path)
        try:
            yield launched
        finally:
            launched.close()
