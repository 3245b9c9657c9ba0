"""Deprecated import path: the module is :mod:`bayeval.stratified_sample` (removed in 0.2)."""

import warnings

from bayeval.stratified_sample import StratifiedSample

__all__ = ["StratifiedSample"]

warnings.warn(
    "bayeval.sample moved to bayeval.stratified_sample (beside bayeval.sampling, the old name "
    "misled); import StratifiedSample from bayeval or from there (the old path is removed in "
    "0.2).",
    DeprecationWarning,
    stacklevel=2,
)
