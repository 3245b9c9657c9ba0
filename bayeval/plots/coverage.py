"""Plots of coverage: binomial interval methods (Webber 2013, Figures 4-7) and coverage studies.

Functions
---------
plot_binomial_coverage
    A coverage curve of :func:`bayeval.simulate.binomial_coverage`.
plot_coverage_study
    Box plots of a :class:`bayeval.simulate.CoverageStudy` (Figures 9-12).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_binomial_coverage", "plot_coverage_study"]


def plot_binomial_coverage(result: xr.Dataset, ax: Axes | None = None) -> Axes:
    """Plot a coverage curve in the style of Webber's Figures 4-7.

    Parameters
    ----------
    result : xarray.Dataset
        The output of :func:`binomial_coverage`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default a new figure from :func:`matplotlib.pyplot.subplots`.

    Returns
    -------
    matplotlib.axes.Axes
        The axes, with the curve in black, broken at the interval ends, each jump as a grey
        vertical segment (from the lowest to the highest of the left limit, the value and the
        right limit), the nominal level as a dashed line, and the method, ``n`` and the exact
        mean coverage in the title.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from bayeval.plots.coverage import plot_binomial_coverage
    >>> from bayeval.simulate.binomial import binomial_coverage
    >>> ax = plot_binomial_coverage(binomial_coverage(20, "clopper-pearson"))
    >>> ax.get_title()
    'Clopper-Pearson, n = 20: mean coverage 97.7% (nominal 95%)'
    >>> plt.close("all")
    """
    if not isinstance(result, xr.Dataset) or "coverage" not in result or "endpoint" not in result:
        raise ValueError(
            "`result` must be the xarray.Dataset returned by binomial_coverage; "
            f"got {type(result).__name__}."
        )
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6.0, 4.0))

    ends = result["endpoint"].values
    order = np.argsort(result["prevalence"].values, kind="stable")
    x = result["prevalence"].values[order]
    y = result["coverage"].values[order]
    # Break the line at every end: points between the same two ends form one smooth piece.
    left = np.searchsorted(ends, x, side="left")
    off_end = (left >= ends.size) | (ends[np.minimum(left, ends.size - 1)] != x)
    x, y, piece = x[off_end], y[off_end], left[off_end]
    breaks = np.flatnonzero(np.diff(piece)) + 1
    x = np.insert(x, breaks, np.nan)
    y = np.insert(y, breaks, np.nan)

    limits = np.stack(
        [result[v].values for v in ("coverage_below", "coverage_at", "coverage_above")]
    )
    ax.vlines(ends, np.nanmin(limits, axis=0), np.nanmax(limits, axis=0), colors="0.6", lw=0.8)
    ax.plot(x, y, color="black", lw=1.0, label="coverage")
    prob = float(result.attrs["prob"])
    ax.axhline(prob, color="black", ls="--", lw=0.8, label=f"nominal {prob:.0%}")
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("Population prevalence")
    ax.set_ylabel("Coverage")
    name = result.attrs.get("method_name", result.attrs.get("method", ""))
    ax.set_title(
        f"{name}, n = {result.attrs['n']}: mean coverage "
        f"{result.attrs['mean_coverage']:.1%} (nominal {prob:.0%})"
    )
    return ax


def plot_coverage_study(study: Any, axes: Any = None) -> np.ndarray:
    """Box plots of coverage per realization (Figures 9-11) and of the two gaps (Figure 12).

    Parameters
    ----------
    study : bayeval.simulate.CoverageStudy
        The study to plot, from :func:`bayeval.simulate.coverage_study`.
    axes : sequence of two matplotlib Axes, optional
        Default a new figure with two side by side.

    Returns
    -------
    numpy.ndarray of two matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from bayeval.simulate import coverage_study
    >>> study = coverage_study("small", ["koopman"], realizations=3, resamples=20, rng=0,
    ...                        progress=False)
    >>> [ax.get_xlabel() for ax in plot_coverage_study(study)]
    ['coverage per realization', 'share of samples missing on each side']
    >>> plt.close("all")
    """
    import matplotlib.pyplot as plt

    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11, 0.45 * len(study.methods) + 1.5))
    axes = np.asarray(axes).reshape(-1)
    names = list(study.methods)
    cov = study.stats[:, :, 0]
    axes[0].boxplot(cov, orientation="horizontal", tick_labels=names, showmeans=True)
    axes[0].axvline(study.prob, color="0.5", linestyle="--", linewidth=1)
    axes[0].set_xlabel("coverage per realization")
    axes[0].set_title(f"{study.scenario}: {len(cov)} realizations x {study.resamples} samples")
    positions = np.arange(1, len(names) + 1)
    for k, (offset, label) in enumerate(((-0.18, "lower gap"), (0.18, "upper gap"))):
        axes[1].boxplot(
            study.stats[:, :, 1 + k], positions=positions + offset, widths=0.3,
            orientation="horizontal", boxprops={"color": f"C{k}"},
            medianprops={"color": f"C{k}"}, flierprops={"markeredgecolor": f"C{k}"},
        )  # fmt: skip
        axes[1].plot([], [], color=f"C{k}", label=label)
    axes[1].set_yticks(positions, names)
    for ax in axes[:2]:
        ax.invert_yaxis()  # the first method on top, as in the table
    axes[1].axvline((1 - study.prob) / 2, color="0.5", linestyle="--", linewidth=1)
    axes[1].set_xlabel("share of samples missing on each side")
    axes[1].legend(loc="lower right")
    axes[0].figure.tight_layout()
    return axes
