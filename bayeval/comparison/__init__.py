"""Which system is better: several systems judged on one set of labels.

- :func:`compare`: the joint posterior of the systems' measure from a model of the labels,
  returned as a :class:`Comparison` (each system's measure, P(best), expected regret, ranks)
  whose :attr:`~Comparison.differences` are a :class:`Differences` (every pairwise difference
  with its interval);
- :func:`audited_differences`: labels chosen in any way (by model selection, say) and a random
  audit of the items left, every pairwise difference of accuracy with nothing assumed about how
  the systems err (a :class:`Differences`); :func:`audited_levels`: each system's own
  measure, from an audit of the agreements left too (:class:`Levels`);
- :func:`paired_difference`: two systems right or wrong on the same items, the paired posterior
  of the difference of their accuracies (:class:`PairedDifference`);
- :func:`stratified_difference`: two systems' predictions judged on one stratified sample
  (Webber's setting), the difference of their recall, precision or F1 with a posterior and a
  design-based interval (:class:`StratifiedDifference`).
"""

from bayeval.comparison.audited import audited_differences, audited_levels
from bayeval.comparison.compare import MAX_SCORED_SYSTEMS, compare
from bayeval.comparison.paired import PairedDifference, paired_difference
from bayeval.comparison.result import Comparison, Differences, Levels
from bayeval.comparison.stratified import StratifiedDifference, stratified_difference

__all__ = [
    "MAX_SCORED_SYSTEMS",
    "Comparison",
    "Differences",
    "Levels",
    "PairedDifference",
    "StratifiedDifference",
    "audited_differences",
    "audited_levels",
    "compare",
    "paired_difference",
    "stratified_difference",
]
