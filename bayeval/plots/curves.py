"""Plots of precision curves (:mod:`bayeval.curves`).

Functions
---------
plot_curve
    A precision-curve approximation (:class:`~bayeval.curves.CurveResult`): estimate, envelope,
    queried ranks, exact prefix and, when known, the true precision curve, in the style of
    Figure 4 of Sabharwal & Xue (2018).
plot_ranks
    The ranks a curve is evaluated at for a plot: a few thousand, whatever the list's length.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from bayeval._constraints import AnyOf, Flag, Instance, Optional, Text, validate

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["METHOD_NAMES", "plot_curve", "plot_ranks"]

#: Points of each of the two grids (log-spaced and evenly spaced) a curve is evaluated on.
_GRID_POINTS = 2000
#: Step-function corners are added to the grid only up to this many (beyond, the grid alone
#: already draws the curve finer than a screen resolves).
_MAX_CORNERS = 5000

#: Up to this many queried ranks are drawn with larger markers.
_FEW_QUERIES = 60

METHOD_NAMES = {
    "random": "random baseline",
    "logstrat": "LogStrat",
    "paula": "PAULA",
    "adastrat": "AdaStrat",
}


def plot_ranks(result: Any) -> np.ndarray:
    """Increasing ranks at which :func:`plot_curve` evaluates a curve result.

    Parameters
    ----------
    result : bayeval.curves.CurveResult
        A precision-curve approximation over ``N = result.n_items`` ranks.

    Returns
    -------
    numpy.ndarray of int64
        About 2,000 log-spaced and 2,000 evenly spaced ranks in ``[1, N]``, ``exact_len``, ``N``
        and the step functions' corners (if there are at most 5,000 of them), without repeats.
        For an :class:`~bayeval.curves.AdaStratResult`, whose envelopes are smooth between
        kinks near each corner, also the ranks on both sides of every kink (a dozen per corner
        and envelope). Its size never grows with ``N`` beyond the corners, so lists of
        ``2 * 10**9`` items plot as fast as short ones.
    """
    n = int(result.n_items)
    parts = [
        np.geomspace(1.0, n, _GRID_POINTS),
        np.linspace(1.0, n, _GRID_POINTS),
        np.array([1.0, n, max(1, min(n, int(result.exact_len)))]),
    ]
    corners = np.asarray(result.corners, dtype=np.int64)
    if corners.size <= _MAX_CORNERS:
        parts.append(corners.astype(np.float64))
        parts.extend(_envelope_kinks(result))
    ranks = np.unique(np.clip(np.rint(np.concatenate(parts)), 1, n).astype(np.int64))
    return ranks


def _is_adastrat(result: Any) -> bool:
    """Whether ``result`` is AdaStrat's (smooth envelopes) rather than a step function's."""
    return getattr(result, "method", None) == "adastrat"


def _envelope_kinks(result: Any) -> list[np.ndarray]:
    """Ranks on both sides of every kink of an AdaStrat result's three envelopes.

    Through a point ``(y, Y)`` each bound (Theorem 2 of Sabharwal & Xue 2018) changes piece at
    ``y - m``, ``y - k``, ``y``, ``y + 1``, ``y + k + 1`` and ``y + m + 1``
    (``k = floor(m Y / y)``); between these ranks it is a curve ``A / r + B``. The envelope is
    the minimum (maximum) of the points' bounds, whose main crossings are those of neighbouring
    points ``i < j``: the count bound ``Y_i / r`` of one with the flat bound ``Y_j / y_j`` of
    the other, at ``r = Y_i y_j / Y_j`` (and with ``i``, ``j`` swapped).
    """
    from bayeval._core.envelope import as_points

    if not _is_adastrat(result) or result.corners.size == 0:
        return []
    m = int(result.m)
    out = []
    for yields in (result.point_yields, result.yield_low, result.yield_high):
        y, big_y, k = as_points(result.corners, yields, m)
        starts = np.concatenate([y - m, y - k, y, y + 1, y + k + 1, y + m + 1])
        with np.errstate(divide="ignore", invalid="ignore"):
            cross = np.concatenate(
                [big_y[:-1] * y[1:] / big_y[1:], big_y[1:] * y[:-1] / big_y[:-1]]
            )
        cross = cross[np.isfinite(cross)]
        out += [starts, starts - 1, np.floor(cross), np.ceil(cross)]
    return out


def _true_values(true_precision: Any, ranks: np.ndarray, n_items: int) -> np.ndarray:
    """Evaluate the true precision (array over ranks ``1..N`` or callable) at ``ranks``."""
    if callable(true_precision):
        values = np.asarray(true_precision(ranks), dtype=np.float64)
        if values.shape != ranks.shape:
            raise ValueError(
                f"`true_precision` must return one value per rank (shape {ranks.shape}) when "
                f"called with an array of ranks; got shape {values.shape}."
            )
        return values
    try:
        values = np.asarray(true_precision, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            "`true_precision` must be an array of the precision at ranks 1..N or a callable of "
            f"ranks; got {type(true_precision).__name__}."
        ) from None
    if values.shape != (n_items,):
        raise ValueError(
            f"`true_precision` must have one value per rank 1..N, shape ({n_items},); got shape "
            f"{values.shape}."
        )
    return values[ranks - 1]


@validate(
    ax=Optional(Instance("matplotlib.axes.Axes", "a matplotlib Axes")),
    log_x=Flag(),
    title=AnyOf(Text(), Flag()),
    legend=Flag(),
)
def plot_curve(
    result: Any,
    *,
    true_precision: ArrayLike | Callable[[np.ndarray], ArrayLike] | None = None,
    ax: Axes | None = None,
    log_x: bool = True,
    title: str | bool = True,
    legend: bool = True,
) -> Axes:
    """Plot a precision-curve approximation: estimate, envelope, queried ranks and the truth.

    Parameters
    ----------
    result : bayeval.curves.CurveResult
        The output of :func:`~bayeval.curves.random_baseline`, :func:`~bayeval.curves.logstrat`,
        :func:`~bayeval.curves.paula` or :func:`~bayeval.curves.adastrat`.
    true_precision : array_like or callable, optional
        The true precision function, when known (simulations): an array of ``p(r)`` for ranks
        ``r = 1..N`` (index 0 is rank 1), or a function taking an int64 array of ranks and
        returning the precision at each. A callable is asked only for the plotted ranks, so it
        suits lists too long to hold.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default a new figure from :func:`matplotlib.pyplot.subplots`.
    log_x : bool, default True
        Logarithmic rank axis (the geometric queried points are then evenly spread).
    title : str or bool, default True
        ``True``: a title naming the method, the annotations, the number of queried ranks (if
        any) and ``N``; ``False``: no title (e.g. in a grid of panels); a string: that title.
    legend : bool, default True
        Draw a legend (in the lower left corner). With ``False`` the artists keep their labels,
        so a legend drawn later (``ax.legend()``) lists them.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on, with labelled axes, and the title and legend asked for.

    Notes
    -----
    Drawn, in order: the ``[lower, upper]`` envelope as a shaded band, the exact prefix (ranks
    ``1..exact_len``, where the estimate is the true precision) as a light span, the estimate as
    a line, the true precision (a thin black line on top) when given, and the queried ranks as
    square markers on the estimate (the random baseline queries no rank, so has none).

    Every curve is evaluated at :func:`plot_ranks`: a few thousand log-spaced and evenly spaced
    ranks plus the corners, never at all ``N`` ranks. Inside the exact prefix the exact precision
    is drawn at the grid ranks. Beyond it, the random baseline's, LogStrat's and PAULA's curves
    are step functions changing only at the corners, drawn as steps, so the drawing is exact
    (when the corners are at most 5,000; the random baseline's can be more, and are then drawn at
    the grid's resolution). AdaStrat's estimate and envelope are smooth between kinks near its
    corners (Figure 4, top, of the reference); they are drawn as lines through the grid and the
    ranks on both sides of every kink, so the bends near each queried rank are drawn sharply.

    References
    ----------
    A. Sabharwal and Y. Xue, "Adaptive stratified sampling for precision-recall estimation",
    UAI 2018, Figure 4.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from bayeval import curves
    >>> from bayeval.oracles import LabelOracle
    >>> from bayeval.plots import plot_curve
    >>> n = 50_000
    >>> rng = np.random.default_rng(0)
    >>> labels = rng.random(n) < np.linspace(0.95, 0.55, n)   # positives thin out down the list
    >>> true_p = np.cumsum(labels) / np.arange(1, n + 1)       # p(r) at ranks 1..N
    >>> res = curves.paula(LabelOracle(labels), n)
    >>> ax = plot_curve(res, true_precision=true_p)
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('rank r', 'precision p(r)')
    >>> ax.get_title()
    'PAULA: 12,492 annotations, 90 queried ranks (N = 50,000)'
    >>> [text.get_text() for text in ax.get_legend().get_texts()]
    ['envelope [lower, upper]', 'exact prefix (ranks 1 to 3,492)', 'estimate', 'true precision',
     'queried ranks (90)']
    >>> plt.close(ax.figure)
    """
    if not all(hasattr(result, name) for name in ("at", "lower", "upper", "exact_len")):
        raise ValueError(
            f"`result` must be a bayeval.curves.CurveResult; got {type(result).__name__}."
        )
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4.8), layout="constrained")

    n = int(result.n_items)
    ranks = plot_ranks(result)
    truth = None if true_precision is None else _true_values(true_precision, ranks, n)
    estimate = result.at(ranks)
    lower = result.lower(ranks)
    upper = result.upper(ranks)

    steps = not _is_adastrat(result)  # AdaStrat's functions are smooth
    ax.fill_between(
        ranks, lower, upper, step="post" if steps else None, color="C3", alpha=0.22,
        linewidth=0, label="envelope [lower, upper]",
    )  # fmt: skip
    exact_len = int(result.exact_len)
    if exact_len > 1:
        ax.axvspan(
            1, exact_len, color="0.5", alpha=0.12, linewidth=0,
            label=f"exact prefix (ranks 1 to {exact_len:,})",
        )  # fmt: skip
    ax.plot(
        ranks, estimate, drawstyle="steps-post" if steps else "default", color="C2",
        linewidth=2.0, label="estimate",
    )  # fmt: skip
    if truth is not None:
        ax.plot(ranks, truth, color="black", linewidth=0.8, zorder=2.5, label="true precision")
    queried = np.asarray(result.queried, dtype=np.int64)
    if queried.size:
        few = queried.size <= _FEW_QUERIES  # e.g. AdaStrat's: larger markers
        ax.plot(
            queried, result.at(queried), linestyle="none", marker="s",
            markersize=4.0 if few else 2.5, markerfacecolor="none", markeredgecolor="C3",
            markeredgewidth=1.0 if few else 0.6, alpha=0.9 if few else 0.8,
            label=f"queried ranks ({queried.size:,})", zorder=3,
        )  # fmt: skip

    if log_x:
        ax.set_xscale("log")
    if n > 1:
        ax.set_xlim(1, n)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("rank r")
    ax.set_ylabel("precision p(r)")
    if isinstance(title, str):
        ax.set_title(title)
    elif title:
        name = METHOD_NAMES.get(result.method, result.method)
        queries = f", {queried.size:,} queried ranks" if queried.size else ""
        ax.set_title(f"{name}: {result.annotations:,} annotations{queries} (N = {n:,})")
    ax.grid(True, which="major", alpha=0.3)
    if legend:
        ax.legend(loc="lower left", fontsize="small")
    return ax
