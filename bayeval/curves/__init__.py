"""Deterministic precision-curve methods for massive ranked lists.

A ranked list of ``N`` items is read only at the ranks a method queries, so lists of ``2 * 10**9``
items work without arrays of length ``N``. The planners say, before any label is bought, which ranks
a method queries and how many items it annotates:

- :func:`plan_random`: the random-sampling baseline (Sabharwal & Sedghi 2017, Section 3);
- :func:`plan_logstrat`: LogStrat, logarithmic stratified sampling (their Algorithm 1);
- :func:`plan_paula`: PAULA (their Algorithm 2);
- :func:`plan_adastrat`: AdaStrat's exhaustive prefix and worst-case costs (Sabharwal & Xue 2018;
  its queries depend on the labels).

The methods label the planned items through an :class:`~bayeval.oracles.Oracle` and return a
:class:`CurveResult` (exact prefix, step-function estimate, lower and upper bounds):

- :func:`random_baseline`, :func:`logstrat`, :func:`paula`;
- :func:`adastrat`, adaptive stratified sampling (an :class:`AdaStratResult`, whose estimate and
  bounds are envelopes rather than step functions).

:class:`CurveQuestions` runs any of them by ask and tell, so that people give the labels (one
batch of ranks at a time).

The plans' result objects are in :mod:`bayeval.curves.plans`, the geometric ranks in
:mod:`bayeval.curves.geometry`.
"""

from bayeval.curves.adastrat import AdaStratResult, adastrat
from bayeval.curves.asktell import CurveQuestions
from bayeval.curves.derived import average_precision, pr_curve, rank_grid, yield_curve
from bayeval.curves.logstrat import logstrat
from bayeval.curves.paula import paula
from bayeval.curves.planning import plan_adastrat, plan_logstrat, plan_paula, plan_random
from bayeval.curves.posterior import derived_from_posterior
from bayeval.curves.random_baseline import random_baseline
from bayeval.curves.result import CurveResult

__all__ = [
    "AdaStratResult",
    "CurveQuestions",
    "CurveResult",
    "adastrat",
    "average_precision",
    "derived_from_posterior",
    "logstrat",
    "paula",
    "plan_adastrat",
    "plan_logstrat",
    "plan_paula",
    "plan_random",
    "pr_curve",
    "random_baseline",
    "rank_grid",
    "yield_curve",
]
