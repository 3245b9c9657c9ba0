"""Result objects for intervals: they know how they were computed and can recompute.

An :class:`IntervalResult` holds a *bounds engine* (one of the small classes in
:mod:`bayeval.intervals._engines`) that answers "give me the interval at probability ``p`` of kind
``k``" without resampling, in the way ``scipy.stats.binomtest(...).proportion_ci()`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from bayeval._validation import check_choice, check_prob

if TYPE_CHECKING:
    import pandas as pd
    import xarray as xr

__all__ = ["KINDS", "Interval", "IntervalResult"]

Kind = Literal["equal-tailed", "hdi", "lower", "upper"]
KINDS = ("equal-tailed", "hdi", "lower", "upper")


@dataclass(frozen=True)
class Interval:
    """An interval ``[low, high]`` at probability ``prob``; unpacks as ``low, high``.

    ``kind="lower"`` is a one-sided lower bound (``high`` is the measure's largest value) and
    ``kind="upper"`` a one-sided upper bound (``low`` is its smallest value).
    """

    low: float
    high: float
    prob: float
    kind: str

    def __iter__(self):
        yield self.low
        yield self.high

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.high - self.low


def check_kind(kind: Any) -> str:
    """Validate an interval kind; ``"eti"`` (ArviZ's name) is read as ``"equal-tailed"``."""
    if kind == "eti":
        return "equal-tailed"
    return check_choice(kind, KINDS, "kind")


@dataclass(frozen=True, repr=False)
class IntervalResult:
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
    low, high : float
        Bounds of the interval requested in the call.
    prob : float
        Its probability (confidence or credibility level).
    kind : str
        ``"equal-tailed"``, ``"hdi"``, ``"lower"`` or ``"upper"``.
    engine : str or None
        ``"exact"`` or ``"pymc"`` for posterior methods, ``None`` otherwise.
    """

    measure: str
    method: str
    estimate: float
    low: float
    high: float
    prob: float
    kind: str
    engine: str | None
    _bounds: Any = field(compare=False)

    def interval(self, prob: float | None = None, kind: Kind = "equal-tailed") -> Interval:
        """Recompute the interval at another probability or of another kind, without resampling.

        Parameters
        ----------
        prob : float, optional
            Probability in (0, 1); default: the probability of the original call.
        kind : {"equal-tailed", "hdi", "lower", "upper"}
            Two-sided equal-tailed, highest-density (posterior methods only), or one-sided.

        Returns
        -------
        Interval
        """
        prob = self.prob if prob is None else check_prob(prob)
        kind = check_kind(kind)
        low, high = self._bounds.bounds(prob, kind)
        return Interval(float(low), float(high), prob, kind)

    @property
    def posterior(self) -> xr.DataTree:
        """An ArviZ-ready ``xarray.DataTree`` with a ``posterior`` group (posterior methods).

        Groups: ``posterior`` (``prevalence``, ``stratum_yield``, ``segment_yield`` and the
        measure), ``observed_data``, ``constant_data`` and, for ``engine="pymc"``,
        ``sample_stats``. When each segment is one stratum the exact engine computes the bounds
        by quadrature and this tree holds independent exact draws for inspection (``draws``
        per chain, 4 chains); quantiles of those draws carry Monte Carlo error that the bounds
        do not.
        """
        posterior = getattr(self._bounds, "posterior", None)
        if posterior is None:
            raise AttributeError(
                f"method {self.method!r} is not a posterior method and has no posterior draws; "
                "posterior methods are 'beta-jeffreys' and the 'beta-binomial-*' family."
            )
        return posterior()

    @property
    def mc_error(self) -> tuple[float, float] | None:
        """Monte Carlo standard errors of ``(low, high)``, or ``None`` without sampling.

        ``None`` for closed forms and for the exact engine's quadrature, whose numerical error
        in the bounds is below 1e-4.
        """
        mc_error = getattr(self._bounds, "mc_error", None)
        return None if mc_error is None else mc_error(self.prob, self.kind)

    def summary(self) -> pd.DataFrame:
        """One-row table: measure, method, engine, estimate, bounds, probability, kind."""
        import pandas as pd

        row = {
            "measure": self.measure,
            "method": self.method,
            "engine": self.engine,
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "prob": self.prob,
            "kind": self.kind,
        }
        mc = self.mc_error
        if mc is not None:
            row["mc_error_low"], row["mc_error_high"] = mc
        return pd.DataFrame([row]).set_index(["measure", "method"])

    def __repr__(self) -> str:
        engine = f", engine={self.engine!r}" if self.engine else ""
        return (
            f"IntervalResult({self.measure}, method={self.method!r}{engine}, "
            f"estimate={self.estimate:.4f}, {self.kind} {self.prob:.0%} interval "
            f"[{self.low:.4f}, {self.high:.4f}])"
        )
