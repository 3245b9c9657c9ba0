"""Which system is better: several systems judged on one set of labels.

- :func:`compare`: the joint posterior of the systems' measure from a model of the labels,
  returned as a :class:`Comparison` (each system's measure, P(best), expected regret, ranks)
  whose :attr:`~Comparison.differences` are a :class:`Differences` (every pairwise difference
  with its interval);
- :func:`paired_difference`: two systems right or wrong on the same items, the paired posterior
  of the difference of their accuracies (:class:`PairedDifference`).
"""

from bayeval.comparison.compare import MAX_SCORED_SYSTEMS, compare
from bayeval.comparison.paired import PairedDifference, paired_difference
from bayeval.comparison.result import Comparison, Differences

__all__ = [
    "MAX_SCORED_SYSTEMS",
    "Comparison",
    "Differences",
    "PairedDifference",
    "compare",
    "paired_difference",
]
