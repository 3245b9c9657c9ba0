"""Bundled real data sets for examples, tests and benchmarks.

Functions
---------
load_febrl_pairs
    All 499,500 record pairs of the FEBRL1 record-linkage data set, scored by a classifier
    trained on FEBRL2, with predicted and true match labels.
"""

from bayeval.datasets._febrl import load_febrl_pairs

__all__ = ["load_febrl_pairs"]
