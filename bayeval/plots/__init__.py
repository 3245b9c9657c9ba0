"""Every plot of bayeval: axes in (or a new figure), axes out; nothing is written to a file.

matplotlib is imported only when a plot is drawn.

Modules
-------
curves
    :func:`plot_curve` and :func:`plot_ranks`: precision curves (:mod:`bayeval.curves`).
sampling
    :func:`plot_history` and :func:`plot_pr_curve`: a sampler's run (``bayeval evaluate``).
coverage
    :func:`plot_binomial_coverage` and :func:`plot_coverage_study`: coverage (Webber 2013).
intervals
    :func:`plot_intervals`: the estimates and intervals of any result on the protocol.
comparison
    :func:`plot_differences`, :func:`plot_differences_from` and :func:`plot_prob_best`: several
    systems (``bayeval compare``).

Results draw themselves with ``.plot()``, which calls these; the module knows results only by
what they offer (``summary``, ``at``, ``lower``, ...), so it sits below them in the layers.
"""

from bayeval.plots.comparison import (
    differences_from,
    plot_differences,
    plot_differences_from,
    plot_prob_best,
)
from bayeval.plots.coverage import plot_binomial_coverage, plot_coverage_study
from bayeval.plots.curves import METHOD_NAMES, plot_curve, plot_ranks
from bayeval.plots.intervals import plot_intervals
from bayeval.plots.sampling import plot_history, plot_pr_curve, pr_thresholds

__all__ = [
    "METHOD_NAMES",
    "differences_from",
    "plot_binomial_coverage",
    "plot_coverage_study",
    "plot_curve",
    "plot_differences",
    "plot_differences_from",
    "plot_history",
    "plot_intervals",
    "plot_pr_curve",
    "plot_prob_best",
    "plot_ranks",
    "pr_thresholds",
]
