"""The estimate a sampler returns: value, covariance, intervals, confidence ellipsoid, posterior."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from scipy import special, stats

from bayeval._validation import check_choice, check_prob

__all__ = ["DataTreePosterior", "Estimate", "design_bounds"]


class Estimate:
    """A sampler's estimate of a measure ``G`` from the labels collected so far.

    Attributes
    ----------
    outputs : tuple of str
        Names of the entries of ``G``.
    value : numpy.ndarray
        ``(m,)`` the design-based estimate (for importance samplers ``g(R_hat)`` of Eq. 1 of
        Marchant & Rubinstein 2021; for stratified sampling the stratified estimator).
    R : numpy.ndarray
        ``(d,)`` the estimated mean loss.
    covariance : numpy.ndarray
        ``(m, m)`` estimated covariance of ``value`` (delta method; §3.3.2 for importance
        samplers), NaN where undefined.
    labels_used : int
        Distinct items labelled.
    n_samples : int
        Samples behind ``value`` (draws, counting re-draws of labelled items, for importance
        samplers; labelled items for stratified sampling).
    df : float
        Degrees of freedom of the ``t`` reference distribution of :meth:`interval`.
    method : str
        The sampler.
    value_range : tuple of float
        The values the measure can take.

    Notes
    -----
    Two kinds of interval.

    ``kind="credible"``: equal-tailed quantiles of the posterior draws of ``G``
    (:attr:`posterior`, by default from :class:`bayeval.models.ScoreCalibration`: a calibration
    curve of the labels given the scores, learned from the labels, with the unlabelled items
    drawn from its posterior predictive), reported with the posterior median, which always lies
    inside it.

    ``kind="confidence"``: the design-based interval, ``value +/- t_{df} se`` on the logit
    scale of the measure's range and mapped back (the logit interval for survey proportions:
    Korn & Graubard 1999, §5.2; R's ``survey::svyciprop(method="logit")``), so it never leaves
    the range and the estimate always lies inside it. Where the design gives no interval (the
    estimate is undefined, at the edge of the range, or has a zero standard error because the
    labels showed no variation: recall 1 when no false negative was drawn), it falls back to
    the credible interval; the outputs that did are listed in the attribute ``fallback``.
    """

    def __init__(
        self,
        *,
        outputs: tuple[str, ...],
        value: np.ndarray,
        R: np.ndarray,
        covariance: np.ndarray,
        labels_used: int,
        n_samples: int,
        df: float,
        method: str,
        value_range: tuple[float, float] = (0.0, 1.0),
        posterior: Callable[[], Any] | None = None,
    ):
        self.outputs = tuple(outputs)
        self.value = np.asarray(value, dtype=float)
        self.R = np.asarray(R, dtype=float)
        self.covariance = np.asarray(covariance, dtype=float)
        self.labels_used = int(labels_used)
        self.n_samples = int(n_samples)
        self.df = float(df)
        self.method = method
        self.value_range = (float(value_range[0]), float(value_range[1]))
        self._posterior_fn = posterior
        self._source = None
        self._posterior = None

    def _posterior_source(self):
        """Return the model's draws (computed on first use), or ``None`` without a model."""
        if self._source is None and self._posterior_fn is not None:
            self._source = self._posterior_fn()
        return self._source

    @property
    def posterior(self):
        """Posterior draws of ``G`` and of the model of the labels, as an ``xarray.DataTree``.

        The variable ``measure`` has dims ``chain, draw, output``; ``None`` where no model
        applies (a loss that varies with each score, such as the Brier score). Computed on
        first access from the labels at the time of the estimate.
        """
        if self._posterior is None and self._posterior_source() is not None:
            self._posterior = self._posterior_source().to_datatree()
        return self._posterior

    @property
    def standard_error(self) -> np.ndarray:
        """``(m,)`` square roots of the covariance's diagonal."""
        # a covariance with NaN entries is not clipped (clip_covariance); round-off leaves -1e-33
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

    def _measure_draws(self) -> np.ndarray:
        source = self._posterior_source()
        if source is None:
            raise ValueError(
                f"kind='credible' needs a model of the labels; none applies to this "
                f"{self.method} estimate (a loss that varies with each score). Use "
                "kind='confidence'."
            )
        return source.measure_draws().reshape(-1, len(self.outputs))

    @property
    def posterior_median(self) -> np.ndarray:
        """``(m,)`` the posterior median of ``G``: the Bayesian point estimate.

        Draws in which an output is undefined (recall of a draw with no positive at all) are
        left out, so the median and the credible interval are conditional on the output being
        defined; NaN only if it is undefined in every draw.
        """
        return _nan_quantiles(self._measure_draws(), [0.5])[0]

    def interval(self, prob: float = 0.95, kind: Literal["confidence", "credible"] = "confidence"):
        """Return an equal-tailed interval for each output.

        Parameters
        ----------
        prob : float, default 0.95
        kind : {"confidence", "credible"}, default "confidence"
            See the class notes.

        Returns
        -------
        xarray.Dataset
            ``estimate``, ``lower`` and ``upper`` over the dimension ``output``; attributes
            ``prob``, ``kind`` and, for ``kind="confidence"``, ``fallback`` (the outputs
            whose interval and estimate are the credible ones).
        """
        import xarray as xr

        prob = check_prob(prob)
        kind = check_choice(kind, ("confidence", "credible"), "kind")
        attrs: dict = {"prob": prob, "kind": kind}
        if kind == "confidence":
            half = stats.t.ppf(0.5 + prob / 2, self.df) * self.standard_error
            lower, upper, ok = design_bounds(self.value, half, self.value_range)
            estimate = self.value.copy()
            if not ok.all() and self._posterior_fn is not None:
                cred = self.interval(prob, "credible")
                estimate[~ok] = cred["estimate"].values[~ok]
                lower[~ok] = cred["lower"].values[~ok]
                upper[~ok] = cred["upper"].values[~ok]
                attrs["fallback"] = [o for o, k in zip(self.outputs, ok, strict=True) if not k]
            elif not ok.all():  # no model: the untransformed interval, clipped to the range
                lower[~ok] = np.clip(self.value - half, *self.value_range)[~ok]
                upper[~ok] = np.clip(self.value + half, *self.value_range)[~ok]
                attrs["fallback"] = []
            else:
                attrs["fallback"] = []
        else:
            lower, estimate, upper = _nan_quantiles(
                self._measure_draws(), [0.5 - prob / 2, 0.5, 0.5 + prob / 2]
            )
        return xr.Dataset(
            {
                "estimate": ("output", estimate),
                "lower": ("output", lower),
                "upper": ("output", upper),
            },
            coords={"output": list(self.outputs)},
            attrs=attrs,
        )

    def ellipsoid_contains(self, G, prob: float = 0.95) -> bool:
        """Whether ``G`` lies in the ``prob`` confidence ellipsoid of §3.3.2.

        The region is ``(G - value)^T C^{-1} (G - value) <= (N - 1) k / (N - k) F_{k, N-k}``
        with ``C`` the covariance of ``value`` (the paper's ``Sigma_hat / N``), ``k`` outputs
        and ``N`` samples; for one output it is the (untransformed) ``t`` interval.
        """
        prob = check_prob(prob)
        diff = np.asarray(G, dtype=float) - self.value
        k, n = self.value.size, self.n_samples
        if n <= k:
            raise ValueError(f"the ellipsoid needs more samples ({n}) than outputs ({k}).")
        bound = (n - 1) * k / (n - k) * stats.f.ppf(prob, k, n - k)
        return bool(diff @ np.linalg.pinv(self.covariance) @ diff <= bound)

    def summary(self, prob: float = 0.95):
        """Tabulate both kinds of interval, one row per output.

        Columns ``estimate``, ``se``, ``lower``, ``upper`` (design-based, see :meth:`interval`)
        and, where a model of the labels applies, ``posterior_median``, ``credible_lower``,
        ``credible_upper``.
        """
        import pandas as pd

        conf = self.interval(prob)
        table = pd.DataFrame(
            {
                "estimate": conf["estimate"].values,
                "se": self.standard_error,
                "lower": conf["lower"].values,
                "upper": conf["upper"].values,
            },
            index=pd.Index(self.outputs, name="output"),
        )
        if self._posterior_fn is not None:
            cred = self.interval(prob, "credible")
            table["posterior_median"] = cred["estimate"].values
            table["credible_lower"] = cred["lower"].values
            table["credible_upper"] = cred["upper"].values
        return table

    def __repr__(self) -> str:
        values = ", ".join(f"{o}={v:.4g}" for o, v in zip(self.outputs, self.value, strict=True))
        return f"Estimate({self.method}: {values}; labels_used={self.labels_used})"


class DataTreePosterior:
    """Adapt a ready ``DataTree`` whose posterior has ``measure`` to :class:`Estimate`."""

    def __init__(self, tree):
        self.tree = tree

    def measure_draws(self) -> np.ndarray:
        """``(draws, outputs)`` draws of ``measure``."""
        values = self.tree["posterior"]["measure"].values
        return values.reshape(-1, values.shape[-1])

    def to_datatree(self):
        """Return the tree."""
        return self.tree


def _nan_quantiles(draws: np.ndarray, q: list[float]) -> np.ndarray:
    """Quantiles ``q`` of each column of ``draws`` over its defined (finite) entries."""
    out = np.full((len(q), draws.shape[1]), np.nan)
    for j in range(draws.shape[1]):
        column = draws[:, j]
        column = column[np.isfinite(column)]
        if column.size:
            out[:, j] = np.quantile(column, q)
    return out


def design_bounds(value, half_width, value_range):
    """Map ``value +/- half_width`` through the logit of ``value_range`` and back.

    With ``u = (value - lo) / (hi - lo)`` the delta method gives ``u``'s logit a standard
    error ``se / ((hi - lo) u (1 - u))``, so the half-width ``h`` on the measure's scale becomes
    ``h / ((hi - lo) u (1 - u))`` on the logit scale. A range open on one side uses the log
    of the distance to the closed end instead; an unbounded range leaves the interval as it is.

    Returns
    -------
    lower, upper : numpy.ndarray
    ok : numpy.ndarray of bool
        Where the design gives an interval: the value is finite and strictly inside the range
        and the half-width is positive and finite.

    Examples
    --------
    >>> lower, upper, ok = design_bounds(np.array([0.98, 1.0]), np.array([0.05, 0.0]), (0, 1))
    >>> lower.round(3), upper.round(3), ok
    (array([0.793,   nan]), array([0.998,   nan]), array([ True, False]))
    """
    value = np.asarray(value, dtype=float)
    half = np.asarray(half_width, dtype=float)
    lo, hi = value_range
    ok = np.isfinite(value) & (value > lo) & (value < hi) & np.isfinite(half) & (half > 0)
    v = np.where(ok, value, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        if np.isfinite(lo) and np.isfinite(hi):
            u = (v - lo) / (hi - lo)
            h = half / ((hi - lo) * u * (1 - u))
            centre = np.log(u) - np.log1p(-u)
            lower = lo + (hi - lo) * special.expit(centre - h)
            upper = lo + (hi - lo) * special.expit(centre + h)
        elif np.isfinite(lo):
            h = half / (v - lo)
            lower, upper = lo + (v - lo) * np.exp(-h), lo + (v - lo) * np.exp(h)
        elif np.isfinite(hi):
            h = half / (hi - v)
            lower, upper = hi - (hi - v) * np.exp(h), hi - (hi - v) * np.exp(-h)
        else:
            lower, upper = v - half, v + half
    return lower, upper, ok
