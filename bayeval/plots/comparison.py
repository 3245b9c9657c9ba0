"""Plots of a comparison of systems: pairwise differences, and P(best) against labels used."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["differences_from", "plot_differences", "plot_differences_from", "plot_prob_best"]


def plot_differences(comparison: Any, *, ax: Any = None):
    """Plot the matrix of P(row system > column system), each cell with its mean difference.

    Parameters
    ----------
    comparison : bayeval.comparison.Comparison or bayeval.comparison.Differences
        Known by ``systems``, ``prob_better`` and (a Comparison) ``differences``.
    ax : matplotlib.axes.Axes, optional
        Default a new figure sized by the number of systems.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt, numpy as np, xarray as xr
    >>> from bayeval.comparison import Comparison
    >>> draws = np.random.default_rng(0).normal([0.80, 0.78], 0.01, size=(1, 500, 2))
    >>> tree = xr.DataTree.from_dict({"posterior": xr.Dataset(
    ...     {"accuracy": (("chain", "draw", "system"), draws)}, coords={"system": ["a", "b"]})})
    >>> ax = plot_differences(Comparison(measure="accuracy", model="example", posterior=tree))
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['a', 'b']
    >>> plt.close("all")
    """
    import matplotlib.pyplot as plt

    systems = comparison.systems
    better = comparison.prob_better.sel(system=systems, other=systems).values
    mean = _pairwise(comparison).estimate.sel(system=systems, other=systems).values
    if ax is None:
        size = 1.5 + 0.6 * len(systems)
        _, ax = plt.subplots(figsize=(size + 1.5, size))
    image = ax.imshow(better, vmin=0.0, vmax=1.0, cmap="RdBu")
    for i in range(len(systems)):
        for j in range(len(systems)):
            if i != j and len(systems) <= 12:  # numbers only where they stay readable
                ax.text(j, i, f"{mean[i, j]:+.3f}", ha="center", va="center", fontsize=7)
    ticks = np.arange(len(systems))
    ax.set_xticks(ticks, systems, rotation=90)
    ax.set_yticks(ticks, systems)
    ax.set_xlabel("other")
    ax.set_ylabel("system")
    ax.set_title(f"P(system > other); the {comparison.measure} difference in each cell")
    ax.figure.colorbar(image, ax=ax, fraction=0.046)
    return ax


def differences_from(comparison: Any, system: str, prob: float | None = None):
    """Return each system's difference from ``system``: estimates, lower and upper bounds.

    Three ``(n_systems,)`` arrays in the order of ``comparison.systems`` (equal-tailed
    intervals of probability ``prob``, default the comparison's); ``comparison`` is a
    :class:`~bayeval.comparison.Comparison` or a :class:`~bayeval.comparison.Differences`.
    """
    differences = _pairwise(comparison)
    ci = differences.interval(prob).sel(other=system).transpose("system", "ci_bound").values
    estimate = differences.estimate.sel(other=system).values
    return estimate, ci[:, 0], ci[:, 1]


def plot_differences_from(comparison: Any, system: str, prob: float | None = None, *, ax=None):
    """Plot each system's difference from ``system`` with its credible interval (a forest).

    Parameters
    ----------
    comparison : bayeval.comparison.Comparison or bayeval.comparison.Differences
        Known by ``systems``, ``measure`` and (a Comparison) ``differences``.
    system : str
        The system subtracted (the leader, usually).
    prob : float, optional
        Probability of the intervals; default the comparison's.
    ax : matplotlib.axes.Axes, optional
        Default a new figure sized by the number of systems.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt, numpy as np, xarray as xr
    >>> from bayeval.comparison import Comparison
    >>> draws = np.random.default_rng(0).normal([0.80, 0.78], 0.01, size=(1, 500, 2))
    >>> tree = xr.DataTree.from_dict({"posterior": xr.Dataset(
    ...     {"accuracy": (("chain", "draw", "system"), draws)}, coords={"system": ["a", "b"]})})
    >>> ax = plot_differences_from(Comparison(measure="accuracy", model="x", posterior=tree), "a")
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['a', 'b']
    >>> plt.close("all")
    """
    import matplotlib.pyplot as plt

    estimate, lower, upper = differences_from(comparison, system, prob)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 0.8 + 0.35 * len(estimate)))
    y = np.arange(len(estimate))[::-1]
    ax.errorbar(estimate, y, xerr=[estimate - lower, upper - estimate], fmt="o", capsize=3)
    ax.axvline(0.0, color="grey", linewidth=1)
    ax.set_yticks(y, comparison.systems)
    ax.set_xlabel(f"{comparison.measure} minus {system}'s")
    return ax


def _pairwise(result: Any):
    """Return the pairwise differences of a Comparison, or ``result`` if it is a Differences."""
    return getattr(result, "differences", result)


def plot_prob_best(history: Any, *, target: float | None = None, ax: Any = None):
    """Plot each system's P(best) against the labels used.

    Parameters
    ----------
    history : xarray.Dataset
        ``prob_best`` over dims ``labels`` and ``system``
        (:meth:`bayeval.sampling.ModelSelection.run`).
    target : float, optional
        The stopping rule's P(best), drawn as a line.
    ax : matplotlib.axes.Axes, optional
        Default a new figure.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt, xarray as xr
    >>> history = xr.Dataset({"prob_best": (("labels", "system"), [[0.5, 0.5], [0.9, 0.1]])},
    ...                      coords={"labels": [1, 2], "system": ["a", "b"]})
    >>> ax = plot_prob_best(history, target=0.95)
    >>> [line.get_label() for line in ax.get_lines()][:2]
    ['a', 'b']
    >>> plt.close("all")
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    prob_best = history["prob_best"]
    # the systems ever likely to be best, at most ten of them, in the legend
    shown = prob_best.max("labels").values.argsort()[::-1][:10]
    for k in shown:
        name = str(prob_best["system"].values[k])
        ax.plot(prob_best["labels"], prob_best.isel(system=k), label=name)
    if target is not None:
        ax.axhline(target, color="grey", linestyle=":", linewidth=1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("labels used")
    ax.set_ylabel("P(best)")
    ax.legend(fontsize=7)
    return ax
