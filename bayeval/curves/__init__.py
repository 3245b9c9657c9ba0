"""Deterministic precision-curve methods for massive ranked lists.

A ranked list of ``N`` items is read only at the ranks a method queries, so lists of ``2 * 10**9``
items work without arrays of length ``N``. The planners say, before any label is bought, which ranks
a method queries and how many items it annotates:

- :func:`plan_random`: the random-sampling baseline (Sabharwal & Sedghi 2017, Section 3);
- :func:`plan_logstrat`: LogStrat, logarithmic stratified sampling (their Algorithm 1);
- :func:`plan_paula`: PAULA (their Algorithm 2).

The methods label the planned items through an :class:`~bayeval.oracles.Oracle` and return a
:class:`CurveResult` (exact prefix, step-function estimate, lower and upper bounds):

- :func:`random_baseline`, :func:`logstrat`, :func:`paula`.

The plans' result objects are in :mod:`bayeval.curves.planning`.
"""

from bayeval.curves.derived import (
    average_precision,
    derived_from_posterior,
    pr_curve,
    rank_grid,
    yield_curve,
)
from bayeval.curves.logstrat import logstrat
from bayeval.curves.paula import paula
from bayeval.curves.planning import plan_logstrat, plan_paula, plan_random
from bayeval.curves.random_baseline import random_baseline
from bayeval.curves.result import CurveResult

__all__ = [
    "CurveResult",
    "average_precision",
    "derived_from_posterior",
    "logstrat",
    "paula",
    "plan_logstrat",
    "plan_paula",
    "plan_random",
    "pr_curve",
    "random_baseline",
    "rank_grid",
    "yield_curve",
]
