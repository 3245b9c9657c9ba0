"""The estimate a sampler returns: value, covariance, intervals, confidence ellipsoid, posterior."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from scipy import special, stats

from bayeval._validation import check_prob
from bayeval.measures.layout import flat_draws, output_layout
from bayeval.results import Result, draws_interval

__all__ = ["DataTreePosterior", "Estimate", "design_bounds"]


class Estimate(Result):
    """A sampler's estimate of a measure ``G`` from the labels collected so far.

    It follows the protocol of :mod:`bayeval.results`: ``.estimate``, ``.interval(prob, kind,
    basis)``, ``.summary()``, ``.posterior``, ``.to_netcdf``. Its entries are labelled by the
    dims ``system`` (pools of several systems), ``measure`` and ``threshold`` (precision-recall
    curves).

    Attributes
    ----------
    outputs : tuple of str
        Names of the entries of ``G`` (``[system/]measure[@threshold]``).
    value : numpy.ndarray
        ``(m,)`` the design-based estimate (for importance samplers ``g(R_hat)`` of Eq. 1 of
        Marchant & Rubinstein 2021; for stratified sampling the stratified estimator), NaN
        where undefined.
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
        Degrees of freedom of the ``t`` reference distribution of the design interval.
    method : str
        The sampler.
    value_range : tuple of float
        The values the measure can take.
    bases : tuple of str
        ``("design", "posterior")``, or ``("design",)`` where no model of the labels applies
        (a loss that varies with each score, such as the Brier score).

    Notes
    -----
    Two bases of interval.

    ``basis="posterior"``: intervals of the posterior draws of ``G`` (:attr:`posterior`, by
    default from :class:`bayeval.models.ScoreCalibration`: a calibration curve of the labels
    given the scores, learned from the labels, with the unlabelled items drawn from its
    posterior predictive), with the posterior median as the estimate, which always lies inside
    the equal-tailed interval. A model fitted under a class of floor priors
    (:meth:`~bayeval.models.ScoreCalibration.robust`) gives the hull of the intervals under
    each prior (the tree's ``floor_priors`` group) and the first prior's median.

    ``basis="design"`` (the default): the design-based interval, ``value +/- t_{df} se`` on the
    logit scale of the measure's range and mapped back (the logit interval for survey
    proportions: Korn & Graubard 1999, §5.2; R's ``survey::svyciprop(method="logit")``), so it
    never leaves the range and the estimate always lies inside it. Where the design gives no
    interval (the estimate is undefined, at the edge of the range, or has a zero standard error
    because the labels showed no variation: recall 1 when no false negative was drawn), estimate
    and interval fall back to the posterior ones; the interval's attribute ``fallback`` lists
    the outputs that did. It has no ``kind="hdi"``.
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
        self.bases = ("design", "posterior") if posterior is not None else ("design",)
        self._posterior_fn = posterior
        self._source = None

    def __getstate__(self):
        # the model's draws, not the function that fits it (a closure over the sampler)
        state = dict(self.__dict__)
        state["_source"] = self._posterior_source()
        state["_posterior_fn"] = None
        return state

    def _posterior_source(self):
        """Return the model's draws (computed on first use), or ``None`` without a model."""
        if self._source is None and self._posterior_fn is not None:
            self._source = self._posterior_fn()
        return self._source

    def _posterior_tree(self):
        source = self._posterior_source()
        return None if source is None else source.to_datatree()

    def _no_posterior_message(self):
        return (
            f"this {self.method} estimate has no posterior draws: no model of the labels applies "
            "to its measure (a loss that varies with each score, such as the Brier score). Use "
            "basis='design'."
        )

    @property
    def standard_error(self) -> np.ndarray:
        """``(m,)`` square roots of the covariance's diagonal."""
        # a covariance with NaN entries is not clipped (clip_covariance); round-off leaves -1e-33
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

    def _layout(self):
        dims, coords, _ = output_layout(self.outputs)
        return dims, coords

    def _shaped(self, values: np.ndarray) -> np.ndarray:
        return np.asarray(values, dtype=float).reshape(output_layout(self.outputs)[2])

    def _measure_draws(self):
        """Posterior draws of ``G`` as a DataArray (``chain``, ``draw`` and the layout's dims).

        A model fitted under several floor priors adds the dim ``floor_prior``.
        """
        import xarray as xr

        source = self._posterior_source()
        by_floor = getattr(source, "floor_prior_draws", lambda: None)()
        if by_floor is None:
            by_floor = {None: source.measure_draws()}
        dims, coords = self._layout()
        shape = output_layout(self.outputs)[2]
        draws = np.stack([d.reshape(1, -1, *shape) for d in by_floor.values()])
        if None in by_floor:
            return xr.DataArray(draws[0], dims=("chain", "draw", *dims), coords=coords)
        return xr.DataArray(
            draws,
            dims=("floor_prior", "chain", "draw", *dims),
            coords={**coords, "floor_prior": list(by_floor)},
        )

    def _posterior_median(self) -> np.ndarray:
        """``(m,)`` the posterior median of ``G``, over the draws where it is defined."""
        draws = self._posterior_source().measure_draws().reshape(-1, len(self.outputs))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "All-NaN slice encountered", RuntimeWarning)
            return np.nanmedian(draws, axis=0)

    def _design(self, prob: float):
        """Design bounds ``(lower, upper, ok)`` of every output (see the class notes)."""
        half = stats.t.ppf(0.5 + prob / 2, self.df) * self.standard_error
        lower, upper, ok = design_bounds(self.value, half, self.value_range)
        if not ok.all() and "posterior" not in self.bases:  # no model: plain interval, clipped
            lower[~ok] = np.clip(self.value - half, *self.value_range)[~ok]
            upper[~ok] = np.clip(self.value + half, *self.value_range)[~ok]
        return lower, upper, ok

    def _fallback(self) -> np.ndarray:
        """Where the design interval falls back to the posterior (independent of ``prob``)."""
        if "posterior" not in self.bases:
            return np.zeros(len(self.outputs), dtype=bool)
        return ~self._design(0.5)[2]

    def _estimate_values(self, basis):
        if basis == "posterior":
            return self._shaped(self._posterior_median())
        value = self.value.copy()
        fallback = self._fallback()
        if fallback.any():
            value[fallback] = self._posterior_median()[fallback]
        return self._shaped(value)

    def _bounds(self, prob, kind, basis):
        if basis == "posterior":
            ci = draws_interval(
                self._measure_draws(), prob, kind, basis=basis, value_range=self.value_range
            )
            lower, upper = ci.sel(ci_bound="lower"), ci.sel(ci_bound="upper")
            if "floor_prior" in ci.dims:  # a class of floor priors: the hull of their intervals
                lower, upper = lower.min("floor_prior"), upper.max("floor_prior")
            return lower.values, upper.values
        if kind == "eti":
            lower, upper, _ = self._design(prob)
        else:  # one-sided: one end of the two-sided interval at 2 prob - 1
            two_lower, two_upper, _ = self._design(2 * prob - 1)
            lower = two_lower if kind == "lower" else np.full_like(two_lower, self.value_range[0])
            upper = two_upper if kind == "upper" else np.full_like(two_upper, self.value_range[1])
        fallback = self._fallback()
        if fallback.any():
            post_lower, post_upper = self._bounds(prob, kind, "posterior")
            lower[fallback] = np.ravel(post_lower)[fallback]
            upper[fallback] = np.ravel(post_upper)[fallback]
        return self._shaped(lower), self._shaped(upper)

    def interval(self, prob: float | None = None, kind: str = "eti", basis: str | None = None):
        """Return the interval of every entry (see :meth:`bayeval.results.Result.interval`).

        Parameters
        ----------
        prob : float, default 0.95
            Probability of the interval, in (0, 1).
        kind : {"eti", "hdi", "lower", "upper"}, default "eti"
            ``"credible"`` and ``"confidence"`` still work for one release (now
            ``basis="posterior"`` and ``basis="design"``), with a ``DeprecationWarning``.
        basis : {"design", "posterior"}, optional
            Default ``"design"``. See the class notes.

        Returns
        -------
        xarray.DataArray
            Dims ``[system,] measure[, threshold], ci_bound``; attributes ``ci_prob``,
            ``ci_kind``, ``basis`` and, for the design basis, ``fallback`` (the outputs whose
            interval is the posterior's).
        """
        ci = super().interval(prob, kind, basis)
        if ci.attrs["basis"] == "design":
            ci.attrs["fallback"] = [
                o for o, f in zip(self.outputs, self._fallback(), strict=True) if f
            ]
        return ci

    def per_output(self, prob: float | None = None, basis: str | None = None):
        """Estimate and equal-tailed bounds as flat arrays in the order of :attr:`outputs`.

        Parameters
        ----------
        prob : float, default 0.95
            Probability of the equal-tailed interval, in (0, 1).
        basis : {"design", "posterior"}, optional
            Default ``"design"``; a basis the estimate does not have gives NaN.

        Returns
        -------
        estimate, lower, upper : numpy.ndarray
            ``(m,)`` each.
        """
        if basis is not None and basis not in self.bases:
            nan = np.full(len(self.outputs), np.nan)
            return nan, nan.copy(), nan.copy()
        ci = self.interval(prob, "eti", basis).values.reshape(-1, 2)  # ci_bound is last
        return np.ravel(self.estimate_of(basis)), ci[:, 0], ci[:, 1]

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

    def _state(self):
        import xarray as xr

        data = xr.Dataset(
            {
                "value": ("output", self.value),
                "covariance": (("output", "output_2"), self.covariance),
                "R": ("loss", self.R),
            },
            coords={"output": list(self.outputs)},
            attrs={
                "labels_used": self.labels_used,
                "n_samples": self.n_samples,
                "df": self.df,
                "method": self.method,
                "value_range": list(self.value_range),
            },
        )
        return {"estimate": data}

    @classmethod
    def _from_state(cls, tree, posterior):
        data = tree["estimate"].to_dataset()
        a = data.attrs
        outputs = tuple(str(o) for o in data["output"].values)
        return cls(
            outputs=outputs,
            value=data["value"].values,
            R=data["R"].values,
            covariance=data["covariance"].values,
            labels_used=int(a["labels_used"]),
            n_samples=int(a["n_samples"]),
            df=float(a["df"]),
            method=str(a["method"]),
            value_range=tuple(float(v) for v in a["value_range"]),
            posterior=None if posterior is None else partial(DataTreePosterior, posterior, outputs),
        )

    def __repr__(self) -> str:
        values = ", ".join(f"{o}={v:.4g}" for o, v in zip(self.outputs, self.value, strict=True))
        return f"Estimate({self.method}: {values}; labels_used={self.labels_used})"


class DataTreePosterior:
    """Adapt a ready ``DataTree`` to :class:`Estimate`: its posterior has one variable per measure.

    Parameters
    ----------
    tree : xarray.DataTree
    outputs : tuple of str
        The outputs of ``G`` (see :mod:`bayeval.measures.layout`).
    """

    def __init__(self, tree, outputs: tuple[str, ...]):
        self.tree, self.outputs = tree, tuple(outputs)

    def measure_draws(self) -> np.ndarray:
        """``(draws, outputs)`` draws of ``G``."""
        return flat_draws(self.tree["posterior"].to_dataset(), self.outputs)

    def floor_prior_draws(self) -> dict[str, np.ndarray] | None:
        """``(draws, outputs)`` draws of ``G`` under each floor prior, or ``None`` with one."""
        if "floor_priors" not in self.tree.children:
            return None
        data = self.tree["floor_priors"].to_dataset()
        return {
            str(name): flat_draws(data.sel(floor_prior=name), self.outputs)
            for name in data["floor_prior"].values
        }

    def to_datatree(self):
        """Return the tree."""
        return self.tree


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
