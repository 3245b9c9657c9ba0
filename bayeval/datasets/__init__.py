"""Bundled real data sets for examples, tests and benchmarks.

Functions
---------
load_febrl_pairs
    All 499,500 record pairs of the FEBRL1 record-linkage data set, scored by a classifier
    trained on FEBRL2, with predicted and true match labels.
scale_up, ScaledList, window_average
    Scaled-up ranked lists (Sabharwal & Xue 2018, §5): a label list smoothed by a sliding window
    and expanded ``factor``-fold with lazily drawn Bernoulli labels.
"""

from bayeval.datasets._febrl import load_febrl_pairs
from bayeval.datasets.scale_up import ScaledList, scale_up, window_average

__all__ = ["ScaledList", "load_febrl_pairs", "scale_up", "window_average"]
