"""``make docs`` builds: the Sphinx site with warnings as errors, its pages and its plots."""

import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).parents[1] / "docs"


@pytest.mark.slow
def test_the_documentation_builds_with_warnings_as_errors(tmp_path):
    out = tmp_path / "html"
    built = subprocess.run(
        [sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-b", "html", "-q",
         str(DOCS), str(out)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    for page in ("index", "which_method", "api", "gallery", "notebooks/07_compare_systems"):
        assert (out / f"{page}.html").exists(), page
    # the API reference has a page per public name; the gallery's plots are drawn
    assert (out / "generated" / "bayeval.widget.label.html").exists()
    assert (out / "generated" / "bayeval.curves.CurveQuestions.html").exists()
    drawn = {p.name for p in (out / "_images").glob("*.png")}
    assert {"pr_curve.png", "recall_intervals.png", "differences.png"} <= drawn
    # the guide links each situation to its function's page
    which = (out / "which_method.html").read_text()
    for name in (
        "bayeval.sampling.evaluate",
        "bayeval.widget.label",
        "bayeval.comparison.compare",
        "bayeval.intervals.recall_interval",
        "bayeval.curves.CurveQuestions",
    ):
        assert f'href="generated/{name}.html' in which, name
