"""Recall, precision, F1 and binomial intervals from stratified samples (Webber 2013)."""

from bayeval.intervals.api import (
    BINOMIAL_METHODS,
    F1_METHODS,
    PRECISION_METHODS,
    RECALL_METHODS,
    binomial_interval,
    f1_interval,
    precision_interval,
    recall_interval,
)
from bayeval.intervals.design import (
    Allocation,
    EstimatorDistribution,
    WidthEstimate,
    expected_interval_width,
    expected_width_grid,
    recall_estimator_distribution,
    recommend_allocation,
)
from bayeval.intervals.result import IntervalResult

__all__ = [
    # method names
    "BINOMIAL_METHODS",
    "F1_METHODS",
    "PRECISION_METHODS",
    "RECALL_METHODS",
    # intervals and their results
    "IntervalResult",
    "binomial_interval",
    "f1_interval",
    "precision_interval",
    "recall_interval",
    # design: the estimator's sampling distribution, expected widths, allocation
    "Allocation",
    "EstimatorDistribution",
    "WidthEstimate",
    "expected_interval_width",
    "expected_width_grid",
    "recall_estimator_distribution",
    "recommend_allocation",
]
