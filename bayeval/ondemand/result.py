"""Every system's precision, recall and F1 from the on-demand labels, on the result protocol."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from scipy import special

from bayeval.results import Result, draws_interval

__all__ = ["SystemEstimates"]

MEASURES = ("precision", "recall", "f1")


class SystemEstimates(Result):
    """Precision, recall and F1 of every submitted system, labelled by ``system`` and ``measure``.

    Returned by :meth:`bayeval.ondemand.OnDemandEvaluator.estimate`; follows the protocol of
    :mod:`bayeval.results`.

    Two bases:

    - ``"design"`` (the default): the joint or simple estimators of Chaganty et al. (2017) with
      their normal intervals, ``estimate -/+ z se`` (Theorem 1 and delta-method standard
      errors), the same numbers as ``table(interval="normal")``;
    - ``"posterior"``: the Bayesian bootstrap of each independent sample (Rubin 1981), whose
      draws are :attr:`posterior`; its estimate is their median.

    A measure the labelled draws cannot yet estimate without bias is NaN in both.

    Attributes
    ----------
    estimator : str
        ``"joint"`` or ``"simple"``.
    systems : list of str
    standard_error : xarray.DataArray
        The design estimate's standard errors (``system``, ``measure``).

    Notes
    -----
    The joint precision estimate is unbiased, not bounded: with few draws of its own a system
    can get an estimate above 1. The design interval is not clipped, so that it holds its
    estimate (:attr:`bounded` is False).
    """

    bases: ClassVar[tuple[str, ...]] = ("design", "posterior")
    #: Design intervals are reported as computed, not clipped to [0, 1] (see the notes).
    bounded: ClassVar[bool] = False

    def __init__(self, *, systems, estimate, se, estimator: str, posterior):
        self.systems = [str(s) for s in systems]
        self._point = np.asarray(estimate, dtype=float)  # (system, measure)
        self._se = np.asarray(se, dtype=float)
        self.estimator = estimator
        self._tree = posterior

    @property
    def standard_error(self):
        """The design estimate's standard errors, dims ``system`` and ``measure``."""
        return self._labelled(self._se)

    def _layout(self):
        return ("system", "measure"), {"system": self.systems, "measure": list(MEASURES)}

    def _draws(self):
        posterior = self._tree["posterior"].to_dataset()
        return (
            posterior[list(MEASURES)]
            .to_dataarray("measure")
            .transpose("chain", "draw", "system", "measure")
        )

    def _estimate_values(self, basis):
        if basis == "design":
            return self._point
        return np.where(np.isnan(self._point), np.nan, self._draws().median(("chain", "draw")))

    def _bounds(self, prob, kind, basis):
        if basis == "posterior":
            ci = draws_interval(self._draws(), prob, kind, basis=basis)
            lower, upper = ci.sel(ci_bound="lower").values, ci.sel(ci_bound="upper").values
        else:
            tail = (1 - prob) / 2 if kind == "eti" else 1 - prob
            half = -special.ndtri(tail) * self._se
            lower = self._point - half if kind != "upper" else np.full_like(self._point, -np.inf)
            upper = self._point + half if kind != "lower" else np.full_like(self._point, np.inf)
        undefined = np.isnan(self._point)
        return np.where(undefined, np.nan, lower), np.where(undefined, np.nan, upper)

    def _posterior_tree(self):
        return self._tree

    def _state(self):
        import xarray as xr

        dims, coords = self._layout()
        data = xr.Dataset(
            {"estimate": (dims, self._point), "se": (dims, self._se)},
            coords=coords,
            attrs={"estimator": self.estimator},
        )
        return {"systems": data}

    @classmethod
    def _from_state(cls, tree, posterior):
        data = tree["systems"].to_dataset()
        return cls(
            systems=data["system"].values.tolist(),
            estimate=data["estimate"].values,
            se=data["se"].values,
            estimator=str(data.attrs["estimator"]),
            posterior=posterior,
        )

    def __repr__(self) -> str:
        return f"SystemEstimates({self.estimator}: {len(self.systems)} systems)"
