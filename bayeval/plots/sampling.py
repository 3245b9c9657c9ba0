"""Plots of a sampler's run: what ``bayeval evaluate`` reports.

A sampler's labels say more than its own measure: ``sampler.estimate(measure=...)`` estimates
precision, recall and the precision-recall curve from the labels an F1 run bought (sample
reuse, Marchant & Rubinstein 2021, §3.3.1). This module draws what comes out; each function
draws on the axes it is given (or on a new figure) and returns them.

Contents
--------
pr_thresholds
    Evenly spaced score thresholds for a precision-recall curve of a pool.
plot_history
    Estimates and intervals against the number of labels used.
plot_pr_curve
    Precision and recall by threshold, and the precision-recall curve, with their bands.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayeval._constraints import Integer, validate
from bayeval.measures.layout import format_threshold

__all__ = ["plot_history", "plot_pr_curve", "pr_thresholds"]


@validate(n=Integer(minimum=0))
def pr_thresholds(scores: np.ndarray, n: int = 19) -> np.ndarray:
    """Return up to ``n`` evenly spaced thresholds strictly inside the range of ``scores``.

    Each is rounded to three significant digits (so the outputs have short names), and
    repeats are dropped; a pool with a single score value gets none.

    Examples
    --------
    >>> from bayeval.plots.sampling import pr_thresholds
    >>> pr_thresholds(np.array([0.0, 0.3, 1.0]), n=4)
    array([0.2, 0.4, 0.6, 0.8])
    """
    lo, hi = float(np.min(scores)), float(np.max(scores))
    inner = np.linspace(lo, hi, n + 2)[1:-1]
    rounded = np.unique([float(f"{t:.3g}") for t in inner])
    return rounded[(rounded > lo) & (rounded < hi)]


def plot_history(
    history: Any, *, truth: dict | None = None, title: str = "", axes: Any = None
) -> np.ndarray:
    """Plot the estimate and interval of each output against the labels used.

    Parameters
    ----------
    history : xarray.Dataset
        ``estimate``, ``lower`` and ``upper`` over dims ``labels``, ``measure`` and optionally
        ``system`` and ``threshold`` (as :attr:`bayeval.Run.history`), with attributes
        ``ci_prob`` and ``basis``; optionally ``design_lower`` and ``design_upper``, drawn as
        dashed lines beside the band.
    truth : dict, optional
        True value of some outputs (by output name, ``[system/]measure[@threshold]``), drawn as
        dashed lines.
    title : str, optional
        The figure's title.
    axes : sequence of matplotlib Axes, optional
        One per output; default a new figure with a row of them.

    Returns
    -------
    numpy.ndarray of matplotlib Axes
        One per output, titled with its name.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(5_000) < 0.05
    >>> scores = np.where(truth, rng.beta(5, 2, truth.size), rng.beta(1, 8, truth.size))
    >>> run = be.evaluate(be.Pool(scores), be.measures.FScore(), truth, 200, "static_is", rng=0)
    >>> [ax.get_title() for ax in plot_history(run.history)]
    ['f1']
    >>> plt.close("all")
    """
    entries = [d for d in history.dims if d != "labels"]
    flat = history.stack(entry=entries)
    outputs = [_output_name(dict(zip(entries, key, strict=True))) for key in flat["entry"].values]
    labels = history["labels"].values
    if axes is None:
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(
            1,
            len(outputs),
            figsize=(3.6 * len(outputs) + 0.8, 3.4),
            squeeze=False,
            layout="constrained",
        )
    axes = np.asarray(axes).reshape(-1)
    if axes.size != len(outputs):
        raise ValueError(f"`axes` must hold one Axes per output ({len(outputs)}); got {axes.size}.")
    band = f"{history.attrs['ci_prob']:.0%} {history.attrs['basis']} interval"
    for i, (ax, output) in enumerate(zip(axes, outputs, strict=True)):
        h = flat.isel(entry=i)
        ax.fill_between(labels, h["lower"], h["upper"], color="C0", alpha=0.25, label=band)
        ax.plot(labels, h["estimate"], color="C0", marker=".", label="estimate")
        if "design_lower" in h:
            ax.plot(labels, h["design_lower"], color="C1", linestyle=":", label="design interval")
            ax.plot(labels, h["design_upper"], color="C1", linestyle=":")
        if truth and output in truth:
            ax.axhline(truth[output], color="black", linestyle="--", linewidth=1, label="truth")
        ax.set_title(output)
        ax.set_xlabel("labels used")
        ax.grid(True, alpha=0.3)
    axes[0].legend(loc="lower right", fontsize="small")
    if title:
        axes[0].figure.suptitle(title)
    return axes


def _output_name(labels: dict) -> str:
    """``[system/]measure[@threshold]`` of one entry of a labelled history."""
    name = str(labels["measure"])
    if "threshold" in labels:
        name += f"@{format_threshold(labels['threshold'])}"
    return f"{labels['system']}/{name}" if "system" in labels else name


def plot_pr_curve(
    estimate: Any,
    prob: float = 0.95,
    *,
    truth: np.ndarray | None = None,
    title: str = "",
    axes: Any = None,
) -> np.ndarray:
    """Plot precision and recall by threshold, and the precision-recall curve.

    Parameters
    ----------
    estimate : bayeval.sampling.Estimate
        An estimate of a :class:`~bayeval.measures.PrecisionRecallCurve` (dims ``measure`` and
        ``threshold``).
    prob : float, default 0.95
        Probability of the bands.
    truth : numpy.ndarray, optional
        The true ``2L`` values (the precisions, then the recalls), drawn dashed.
    title : str, optional
        The figure's title.
    axes : sequence of two matplotlib Axes, optional
        Default a new figure with two side by side.

    Returns
    -------
    numpy.ndarray of two matplotlib Axes

    Notes
    -----
    Left: precision and recall against the threshold, with the design-based band (shaded)
    and, where the estimate has a model of the labels, the posterior band (hatched). Right:
    the curve of (recall, precision) pairs, with each point's design interval on both axes.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(5_000) < 0.05
    >>> scores = np.where(truth, rng.beta(5, 2, truth.size), rng.beta(1, 8, truth.size))
    >>> sampler = be.sampling.StaticIS(be.Pool(scores), be.measures.FScore(), rng=0)
    >>> ids = sampler.ask(300)
    >>> sampler.tell(ids, truth[ids])
    >>> curve = be.measures.PrecisionRecallCurve(pr_thresholds(scores, 5))
    >>> [ax.get_title() for ax in plot_pr_curve(sampler.estimate(measure=curve))]
    ['by threshold', 'precision-recall curve']
    >>> plt.close("all")
    """

    def by_measure(values):  # {"precision": (L,), "recall": (L,)} from a labelled array
        return {m: np.asarray(values.sel(measure=m), dtype=float) for m in ("precision", "recall")}

    point = estimate.estimate_of("design")
    t = np.asarray(point["threshold"].values, dtype=float)
    design = estimate.interval(prob, basis="design")
    conf = {
        "estimate": by_measure(point),
        "lower": by_measure(design.sel(ci_bound="lower")),
        "upper": by_measure(design.sel(ci_bound="upper")),
    }
    cred = None
    if "posterior" in estimate.bases:
        posterior = estimate.interval(prob, basis="posterior")
        cred = {b: by_measure(posterior.sel(ci_bound=b)) for b in ("lower", "upper")}
    true = None
    if truth is not None:
        truth = np.asarray(truth, dtype=float)
        true = {"precision": truth[: t.size], "recall": truth[t.size :]}
    if axes is None:
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(1, 2, figsize=(11, 4.6), layout="constrained")
    axes = np.asarray(axes).reshape(-1)
    if axes.size != 2:
        raise ValueError(f"`axes` must hold two Axes; got {axes.size}.")
    left, right = axes
    for which, color in (("precision", "C0"), ("recall", "C1")):
        left.fill_between(
            t, conf["lower"][which], conf["upper"][which], color=color, alpha=0.25, linewidth=0,
            label=f"{which}: {prob:.0%} design band",
        )  # fmt: skip
        if cred is not None:
            left.fill_between(
                t, cred["lower"][which], cred["upper"][which], facecolor="none", edgecolor=color,
                hatch="///", linewidth=0.8, label=f"{which}: {prob:.0%} posterior band (model)",
            )  # fmt: skip
        left.plot(t, conf["estimate"][which], color=color, marker=".")
        if true is not None:
            left.plot(t, true[which], color=color, linestyle="--", linewidth=1)
    if true is not None:
        left.plot([], [], color="black", linestyle="--", linewidth=1, label="truth")
    left.set_xlabel("score threshold")
    left.set_ylabel("precision, recall")
    left.set_title("by threshold")

    p, r = conf["estimate"]["precision"], conf["estimate"]["recall"]
    right.errorbar(
        r, p, xerr=[r - conf["lower"]["recall"], conf["upper"]["recall"] - r],
        yerr=[p - conf["lower"]["precision"], conf["upper"]["precision"] - p], color="C2",
        marker="o", markersize=3, capsize=2, linewidth=1, elinewidth=0.7, ecolor="C2",
        alpha=0.8, label=f"estimate, {prob:.0%} design intervals",
    )  # fmt: skip
    if true is not None:
        right.plot(
            true["recall"], true["precision"], color="black", linestyle="--", linewidth=1,
            label="truth",
        )  # fmt: skip
    right.set_xlabel("recall")
    right.set_ylabel("precision")
    right.set_title("precision-recall curve")
    for ax in (left, right):
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize="x-small")
    if title:
        left.figure.suptitle(title)
    return axes
