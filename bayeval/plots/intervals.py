"""Plots of any result on the protocol (:mod:`bayeval.results`): estimates with intervals."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["plot_intervals"]


def plot_intervals(result: Any, prob: float | None = None, kind: str = "eti", *, ax: Any = None):
    """Plot the estimate and interval of each row of ``result.summary(prob, kind)``.

    Parameters
    ----------
    result : bayeval.results.Result
        Any result on the protocol (its ``summary`` gives the rows).
    prob : float, optional
        Probability of the intervals; default the result's.
    kind : {"eti", "hdi", "lower", "upper"}, default "eti"
        Shape of the intervals.
    ax : matplotlib.axes.Axes, optional
        Default a new figure, its height by the number of rows.

    Returns
    -------
    matplotlib.axes.Axes
        One row per entry of the summary (its index, e.g. measure and basis), top to bottom.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import bayeval as be
    >>> s = be.StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    >>> ax = plot_intervals(be.recall_interval(s))
    >>> [label.get_text() for label in ax.get_yticklabels()]
    ['recall beta-binomial-half posterior']
    >>> plt.close("all")
    """
    table = result.summary(prob, kind)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 0.5 + 0.4 * len(table)))
    labels = [
        " ".join(map(str, key)) if isinstance(key, tuple) else str(key) for key in table.index
    ]
    y = np.arange(len(table))[::-1]
    ax.errorbar(
        table["estimate"],
        y,
        xerr=[table["estimate"] - table["lower"], table["upper"] - table["estimate"]],
        fmt="o",
        capsize=3,
    )
    ax.set_yticks(y, labels)
    probs = ", ".join(f"{p:.0%}" for p in dict.fromkeys(table["ci_prob"]))
    ax.set_xlabel(f"estimate and {probs} {kind} interval")
    return ax
