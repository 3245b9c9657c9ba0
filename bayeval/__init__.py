"""bayeval: label-efficient, Bayesian evaluation of ranked and scored pools.

Decide which items to label, and turn a few labels into calibrated intervals on precision,
recall and F-scores, with full posteriors inspectable in ArviZ.
"""

from bayeval import intervals, oracles, results
from bayeval._version import __version__
from bayeval.intervals import (
    IntervalResult,
    binomial_interval,
    f1_interval,
    precision_interval,
    recall_interval,
)
from bayeval.pool import Pool
from bayeval.results import NoPosteriorError, load
from bayeval.stratified_sample import StratifiedSample

_LAZY_SUBMODULES = (
    "comparison",
    "curves",
    "datasets",
    "demo",
    "measures",
    "models",
    "ondemand",
    "plots",
    "sampling",
    "session",
    "simulate",
    "strata",
)


def __getattr__(name: str):
    """Import the heavier subpackages on first use (``be.datasets``, ``be.models``)."""
    if name in ("evaluate", "Run"):
        from bayeval.sampling import run

        return getattr(run, name)
    if name == "compare":
        from bayeval.comparison import compare

        return compare
    if name == "Session":
        from bayeval.session import Session

        return Session
    if name == "label":  # the notebook widget (anywidget)
        from bayeval.widget import label

        return label
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"bayeval.{name}")
    raise AttributeError(f"module 'bayeval' has no attribute {name!r}")


def __dir__() -> list[str]:
    """Names for tab completion: the eager ones and the lazy subpackages and entry points."""
    return sorted({*globals(), *_LAZY_SUBMODULES, "compare", "evaluate", "label", "Run", "Session"})


__all__ = [
    "__version__",
    # data
    "Pool",
    "StratifiedSample",
    "datasets",
    # results: one protocol (estimate, interval, summary, posterior, netCDF)
    "NoPosteriorError",
    "load",
    # intervals
    "IntervalResult",
    "binomial_interval",
    "f1_interval",
    "intervals",
    "oracles",
    "results",
    "precision_interval",
    "recall_interval",
    # label-efficient evaluation of a scored pool (ask/tell samplers)
    "Run",
    "Session",
    "evaluate",
    "sampling",
    # precision curves of ranked lists
    "curves",
    # many systems submitted one after another: joint estimators, labels bought on demand
    "ondemand",
    # generalized measures (loss vector, g, Jacobian) for importance-sampling estimators
    "measures",
    # which system is better: P(best), pairwise differences, ranks
    "compare",
    "comparison",
    # models for engine="pymc"
    "models",
    # simulation studies of interval methods
    "simulate",
    # strata from scores, and trees over them
    "strata",
]
