"""Deprecated import path: the module is :mod:`bayeval._core.envelope` (removed in 0.2)."""

import warnings

from bayeval._core.envelope import as_points, bounds, height, line_pieces, ratio_range

__all__ = ["as_points", "bounds", "height", "line_pieces", "ratio_range"]

warnings.warn(
    "bayeval.curves.envelope moved to bayeval._core.envelope (a numpy kernel); import it from "
    "there (the old path is removed in 0.2).",
    DeprecationWarning,
    stacklevel=2,
)
