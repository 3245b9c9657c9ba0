"""``bayeval evaluate --report DIR``: report.html is one self-contained page that a browser shows
without loading anything, with the estimates, plots, warnings, diagnostics and settings."""

import json
import re

import numpy as np
import pandas as pd
from typer.testing import CliRunner

import bayeval as be
from bayeval.cli import app

runner = CliRunner()


def test_report_html_is_one_self_contained_page_that_a_browser_shows(tmp_path, browser):
    gen = np.random.default_rng(1)
    truth = (gen.random(3000) < 0.1).astype(int)
    score = np.where(truth == 1, gen.beta(5, 2, 3000), gen.beta(1, 6, 3000)).round(6)
    pd.DataFrame({"score": score, "label": truth}).to_csv(tmp_path / "pool.csv", index=False)
    report = tmp_path / "report"
    result = runner.invoke(app, ["evaluate", "--pool", str(tmp_path / "pool.csv"), "--budget",
                                 "200", "--report", str(report), "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["report"][-1] == str(report / "report.html")
    page_text = (report / "report.html").read_text()
    # both plots inside the page; nothing fetched from elsewhere, no script
    assert page_text.count("src='data:image/png;base64,") == 2
    assert not re.search(r"""(src|href)\s*=\s*['"]?(https?:|//)""", page_text)
    assert "<script" not in page_text
    # the estimates with both intervals, as the command's JSON has them
    for row in out["estimates"]:
        for key in ("posterior_estimate", "posterior_lower", "design_estimate", "design_upper"):
            assert f"{row[key]:.4f}" in page_text, (row["output"], key)
    # AIS's design interval under-covers (the honesty battery): said; the settings and version
    assert "The design interval of ais is known to fall short" in page_text
    assert f"<td>bayeval</td><td>{be.__version__}</td>" in page_text
    assert "<td>seed</td><td>0</td>" in page_text
    # in a real browser: only the file itself is requested, and both images decode
    page = browser.new_page(viewport={"width": 1100, "height": 1400})
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    try:
        page.goto((report / "report.html").as_uri())
        widths = page.eval_on_selector_all("img", "images => images.map(i => i.naturalWidth)")
        assert len(widths) == 2 and min(widths) > 300
        diagnostics = page.inner_text("table.diagnostics")
        assert "r_hat" in diagnostics and "f1" in diagnostics
        assert "credible interval" in page.inner_text("table.estimates")
        page.screenshot(path=tmp_path / "report.png", full_page=True)  # the test's artefact
    finally:
        page.close()
    assert requested == [(report / "report.html").as_uri()]
    assert (tmp_path / "report.png").stat().st_size > 10_000
