"""Deterministic precision-curve methods for massive ranked lists.

A ranked list of ``N`` items is read only at the ranks a method queries, so lists of ``2 * 10**9``
items work without arrays of length ``N``. The planners say, before any label is bought, which ranks
a method queries and how many items it annotates:

- :func:`plan_random`: the random-sampling baseline (Sabharwal & Sedghi 2017, Section 3);
- :func:`plan_logstrat`: LogStrat, logarithmic stratified sampling (their Algorithm 1);
- :func:`plan_paula`: PAULA (their Algorithm 2).

Their result objects are in :mod:`bayeval.curves.planning`.
"""

from bayeval.curves.planning import plan_logstrat, plan_paula, plan_random

__all__ = ["plan_logstrat", "plan_paula", "plan_random"]
