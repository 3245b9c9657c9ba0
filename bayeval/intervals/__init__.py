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
from bayeval.intervals.result import Interval, IntervalResult

__all__ = [
    "BINOMIAL_METHODS",
    "F1_METHODS",
    "PRECISION_METHODS",
    "RECALL_METHODS",
    "Interval",
    "IntervalResult",
    "binomial_interval",
    "f1_interval",
    "precision_interval",
    "recall_interval",
]
