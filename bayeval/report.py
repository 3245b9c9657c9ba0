"""Deprecated import path: the plots are in :mod:`bayeval.plots.sampling` (removed in 0.2).

The functions there draw on axes and return them; these wrappers keep release 0.1's signatures
(a ``path`` to write a PNG to) for one release.
"""

import warnings
from typing import Any

from bayeval.plots import sampling
from bayeval.plots.sampling import pr_thresholds

__all__ = ["plot_history", "plot_pr_curve", "pr_thresholds"]

warnings.warn(
    "bayeval.report moved to bayeval.plots.sampling, whose functions take `axes` and return "
    "them instead of writing a file; import them from there (the old path is removed in 0.2).",
    DeprecationWarning,
    stacklevel=2,
)


def plot_history(history: Any, path: Any, **options: Any) -> None:
    """Save :func:`bayeval.plots.sampling.plot_history` as a PNG at ``path``."""
    _save(sampling.plot_history(history, **options), path)


def plot_pr_curve(estimate: Any, prob: float, path: Any, **options: Any) -> None:
    """Save :func:`bayeval.plots.sampling.plot_pr_curve` as a PNG at ``path``."""
    _save(sampling.plot_pr_curve(estimate, prob, **options), path)


def _save(axes, path) -> None:
    import matplotlib.pyplot as plt

    figure = axes[0].figure
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)
