"""The report folder of ``bayeval evaluate``: its plots, and ``report.html`` that holds them.

``report.html`` is one self-contained file (plots embedded as PNG data, styles inline, nothing
loaded from the network): the estimates with both intervals (posterior and design), their
history against the labels used, the precision-recall curve with its band, the warnings the
command printed, diagnostics of the posterior draws (``r_hat`` and bulk ESS, from ArviZ), the
settings and the versions.
"""

from __future__ import annotations

import base64
import html
import platform
from pathlib import Path

from bayeval.cli._shared import save_png

__all__ = ["DESIGN_UNDERCOVERS", "write_html", "write_plots"]

#: Thresholds of the precision-recall curve in the report.
PR_THRESHOLDS = 19

#: Samplers whose design interval the honesty battery found short of its level (README,
#: "Which interval?"): F1's covered 38-81% of runs on the README's pool at 250-2,000 labels.
DESIGN_UNDERCOVERS = ("ais", "oasis", "static_is")

#: Flagged in the diagnostics: the thresholds ArviZ's guidance uses.
RHAT_MAX, ESS_MIN = 1.01, 400

STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 70em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.8em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.warning { color: #8a4b00; }
.flag { color: #b00020; font-weight: bold; }
img { max-width: 100%; }
.meta { color: #666; }
"""


def write_plots(folder: Path, source, sampler, tracker, truth) -> list[Path]:
    """Save the history plot and, where the draws allow, the precision-recall curve plot."""
    from bayeval.measures import PrecisionRecallCurve
    from bayeval.plots.sampling import plot_history, plot_pr_curve, pr_thresholds

    folder.mkdir(parents=True, exist_ok=True)
    title = (
        f"{source.name}: {sampler.method} for {tracker.names[0]}, {sampler.labels_used:,} labels"
    )
    files = [folder / "estimates.png"]
    save_png(plot_history(tracker.history(), truth=truth, title=title), files[0])
    if source.pool.classes is not None:
        tracker.unavailable["pr_curve"] = "a multiclass pool has no precision-recall curve"
        return files
    thresholds = pr_thresholds(source.pool.scores, PR_THRESHOLDS)
    if thresholds.size == 0:
        tracker.unavailable["pr_curve"] = "every item has the same score"
        return files
    curve = PrecisionRecallCurve(thresholds)
    if not sampler.covers(curve):
        tracker.unavailable["pr_curve"] = (
            f"the {sampler.method} proposal never draws some items the curve needs"
        )
        return files
    est = sampler.estimate(measure=curve)
    true_curve = None
    if source.truth is not None:
        true_curve = curve.value(source.truth, scores=source.pool.scores)
    files.append(folder / "pr_curve.png")
    save_png(plot_pr_curve(est, tracker.prob, truth=true_curve, title=title), files[1])
    return files


def write_html(folder: Path, result: dict, plots: list[Path], estimates: dict, warnings) -> Path:
    """Write ``report.html`` from the command's ``result`` and its ``plots``; return its path.

    ``estimates`` maps each measure to its result (for the diagnostics of its draws);
    ``warnings`` are the lines the command printed as warnings.
    """
    parts = [f"<h1>bayeval report: {_e(result['pool'])}</h1>", _summary(result)]
    parts += [_estimates_table(result), _warnings(result, warnings)]
    captions = {"estimates.png": "Estimates against the labels used",
                "pr_curve.png": "Precision-recall curve, with its posterior band"}  # fmt: skip
    for path in plots:
        data = base64.b64encode(path.read_bytes()).decode()
        caption = captions.get(path.name, path.name)
        parts.append(f"<h2>{_e(caption)}</h2><img alt='{_e(caption)}' "
                     f"src='data:image/png;base64,{data}'>")  # fmt: skip
    parts += [_diagnostics(estimates), _settings(result)]
    page = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>bayeval report: {_e(result['pool'])}</title><style>{STYLE}</style></head>"
        f"<body>{''.join(parts)}</body></html>\n"
    )
    path = folder / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _number(value) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _summary(result: dict) -> str:
    return (
        f"<p>{result['items']:,} items; {result['labels_in_estimate']:,} labels chosen by "
        f"{_e(result['sampler'])} for {_e(result['measure'])}; {result['prob']:.0%} "
        "equal-tailed intervals.</p>"
    )


def _estimates_table(result: dict) -> str:
    rows = result["estimates"]
    known = any(row["truth"] is not None for row in rows)
    head = ["output", "role", "posterior median", "credible interval", "design estimate",
            "design interval"] + (["truth"] if known else [])  # fmt: skip
    lines = ["<h2>Estimates</h2><table class='estimates'><tr>"]
    lines += [f"<th>{_e(h)}</th>" for h in head] + ["</tr>"]
    for row in rows:
        cells = [
            row["output"], row["role"], _number(row["posterior_estimate"]),
            f"[{_number(row['posterior_lower'])}, {_number(row['posterior_upper'])}]",
            _number(row["design_estimate"]),
            f"[{_number(row['design_lower'])}, {_number(row['design_upper'])}]",
        ] + ([_number(row["truth"])] if known else [])  # fmt: skip
        lines.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
    lines.append("</table>")
    lines.append(
        "<p class='meta'>credible: the posterior of the model of the labels; design: the "
        "sampler's own estimator and its interval (importance weights).</p>"
    )
    return "".join(lines)


def _warnings(result: dict, warnings) -> str:
    items = list(warnings)
    if result["sampler"] in DESIGN_UNDERCOVERS:
        items.append(
            f"The design interval of {result['sampler']} is known to fall short of its level: "
            "in bayeval's honesty battery F1's covered 38-81% of runs on the README's pool at "
            "250-2,000 labels (benchmarks/README.md). Read the credible interval."
        )
    if not items:
        return ""
    listed = "".join(f"<li>{_e(item)}</li>" for item in items)
    return f"<h2>Warnings</h2><ul class='warning'>{listed}</ul>"


def _diagnostics(estimates: dict) -> str:
    """Return a table of each posterior variable's largest ``r_hat`` and smallest bulk ESS."""
    import arviz as az

    from bayeval.results import NoPosteriorError

    lines = ["<h2>Diagnostics of the posterior draws</h2>"]
    rows = []
    for name, est in estimates.items():
        try:
            draws = est.posterior["posterior"].to_dataset()
        except NoPosteriorError:
            continue
        rhat, ess = az.rhat(draws), az.ess(draws, method="bulk")
        for variable in draws.data_vars:
            r, e = float(rhat[variable].max()), float(ess[variable].min())
            flag = r > RHAT_MAX or e < ESS_MIN
            rows.append((name, variable, r, e, flag))
    if not rows:
        return lines[0] + "<p>No posterior draws (no model of the labels for these measures).</p>"
    lines.append("<table class='diagnostics'><tr><th>measure</th><th>variable</th>"
                 "<th>r_hat (largest)</th><th>bulk ESS (smallest)</th></tr>")  # fmt: skip
    for name, variable, r, e, flag in rows:
        mark = " class='flag'" if flag else ""
        lines.append(f"<tr{mark}><td>{_e(name)}</td><td>{_e(variable)}</td><td>{r:.3f}</td>"
                     f"<td>{e:.0f}</td></tr>")  # fmt: skip
    lines.append(
        f"</table><p class='meta'>Flagged: r_hat above {RHAT_MAX} or bulk ESS below {ESS_MIN}.</p>"
    )
    return "".join(lines)


def _settings(result: dict) -> str:
    import arviz
    import numpy

    import bayeval

    keys = ("pool", "items", "sampler", "measure", "budget", "batch_size", "seed", "prob",
            "ci_kind", "oracle", "completed", "labels_used", "seconds")  # fmt: skip
    rows = [(k, result[k]) for k in keys if k in result]
    rows = [(k, f"{v:.1f}" if k == "seconds" else v) for k, v in rows]
    rows += [("bayeval", bayeval.__version__), ("python", platform.python_version()),
             ("numpy", numpy.__version__), ("arviz", arviz.__version__)]  # fmt: skip
    cells = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in rows)
    return f"<h2>Settings and versions</h2><table class='settings'>{cells}</table>"
