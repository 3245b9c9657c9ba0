"""The result of every interval function: it knows how it was computed and can recompute.

An :class:`IntervalResult` holds a *bounds engine* (one of the small classes in
:mod:`bayeval.intervals._engines`) that answers "give me the interval at probability ``p`` of kind
``k``" without resampling, in the way ``scipy.stats.binomtest(...).proportion_ci()`` does. It
follows the protocol of :mod:`bayeval.results`.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from bayeval.results import Result

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["IntervalResult"]


class IntervalResult(Result):
    """An interval estimate of recall, precision, F1 or a proportion.

    Attributes
    ----------
    measure : str
        ``"recall"``, ``"precision"``, ``"f1"`` or ``"proportion"``.
    method : str
        The interval method, e.g. ``"beta-binomial-half"``.
    estimate : float
        Point estimate: the posterior median for posterior methods, the interval centre for
        normal methods, the maximum-likelihood (plug-in) estimate otherwise.
    lower, upper : float
        Bounds of the interval requested in the call.
    prob : float
        Its probability (confidence or credibility level).
    kind : str
        ``"eti"``, ``"hdi"``, ``"lower"`` or ``"upper"``.
    engine : str or None
        ``"exact"`` or ``"pymc"`` for posterior methods, ``None`` otherwise.
    bases : tuple of str
        ``("posterior",)`` for posterior methods, ``("design",)`` for the others.

    Examples
    --------
    >>> import bayeval as be
    >>> s = be.StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    >>> r = be.recall_interval(s)
    >>> r.estimate, r.lower, r.upper
    (0.2397, 0.1111, 0.5416)
    >>> ci = r.interval(0.9, kind="hdi")
    >>> ci.attrs["ci_kind"], [round(float(v), 3) for v in ci]
    ('hdi', [0.1, 0.426])
    """

    def __init__(
        self,
        measure: str,
        method: str,
        estimate: float,
        lower: float,
        upper: float,
        prob: float,
        kind: str,
        engine: str | None,
        bounds: Any,
        inputs: dict,
    ):
        self.measure, self.method, self.engine = measure, method, engine
        self._point = float(estimate)
        self.lower, self.upper = float(lower), float(upper)
        self.prob, self.kind = float(prob), kind
        self.bases = ("posterior",) if hasattr(bounds, "posterior") else ("design",)
        self._engine = bounds
        # what rebuilds the engine after `load`: {"sample": StratifiedSample} or {"r":, "n":}
        self._inputs = inputs

    @property
    def low(self) -> float:
        """Deprecated: :attr:`lower`."""
        warnings.warn("`low` is deprecated: use `lower`.", DeprecationWarning, stacklevel=2)
        return self.lower

    @property
    def high(self) -> float:
        """Deprecated: :attr:`upper`."""
        warnings.warn("`high` is deprecated: use `upper`.", DeprecationWarning, stacklevel=2)
        return self.upper

    def interval(self, prob: float | None = None, kind: str = "eti", basis: str | None = None):
        """Recompute the interval at another probability or of another kind, without resampling.

        Parameters
        ----------
        prob : float, optional
            Probability in (0, 1); default: the probability of the original call.
        kind : {"eti", "hdi", "lower", "upper"}, default "eti"
            Two-sided equal-tailed, highest-density (posterior methods only), or one-sided.
        basis : str, optional
            The result's only basis (see :attr:`bases`).

        Returns
        -------
        xarray.DataArray
            Dim ``ci_bound`` (``lower``, ``upper``); attributes ``ci_prob``, ``ci_kind``,
            ``basis``.
        """
        return super().interval(self.prob if prob is None else prob, kind, basis)

    def _estimate_values(self, basis):
        return self._point

    def _bounds(self, prob, kind, basis):
        return self._engine.bounds(prob, kind)

    def _posterior_tree(self):
        make = getattr(self._engine, "posterior", None)
        return None if make is None else make()

    def _no_posterior_message(self):
        return (
            f"method {self.method!r} is not a posterior method and has no posterior draws; "
            "posterior methods are 'beta-jeffreys' and the 'beta-binomial-*' family."
        )

    @property
    def mc_error(self) -> tuple[float, float] | None:
        """Monte Carlo standard errors of ``(lower, upper)``, or ``None`` without sampling.

        ``None`` for closed forms and for the exact engine's quadrature, whose numerical error
        in the bounds is below 1e-4.
        """
        mc_error = getattr(self._engine, "mc_error", None)
        return None if mc_error is None else mc_error(self.prob, self.kind)

    def _state(self) -> dict[str, xr.Dataset]:
        import xarray as xr

        attrs = {
            "measure": self.measure,
            "method": self.method,
            "engine": self.engine or "",
            "estimate": self._point,
            "lower": self.lower,
            "upper": self.upper,
            "prob": self.prob,
            "kind": self.kind,
            "bounds": type(getattr(self._engine, "inner", self._engine)).__name__,
        }
        sample = self._inputs.get("sample")
        if sample is None:
            return {
                "call": xr.Dataset(attrs={**attrs, "r": self._inputs["r"], "n": self._inputs["n"]})
            }
        data = xr.Dataset(
            {
                "population": ("stratum", sample.population),
                "sampled": ("stratum", sample.sampled),
                "positives": ("stratum", sample.positives),
                "retrieved": ("stratum", sample.retrieved.astype(np.int8)),
            },
            coords={"stratum": list(sample.names)},
            attrs=attrs,
        )
        return {"call": data}

    @classmethod
    def _from_state(cls, tree, posterior):
        from bayeval.intervals.api import rebuild

        return rebuild(tree["call"].to_dataset(), posterior)

    def _summary_labels(self):
        return {"measure": self.measure, "method": self.method}

    def __repr__(self) -> str:
        engine = f", engine={self.engine!r}" if self.engine else ""
        return (
            f"IntervalResult({self.measure}, method={self.method!r}{engine}, "
            f"estimate={self.estimate:.4f}, {self.kind} {self.prob:.0%} interval "
            f"[{self.lower:.4f}, {self.upper:.4f}])"
        )
