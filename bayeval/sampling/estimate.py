"""The estimate a sampler returns: value, covariance, intervals, confidence ellipsoid, posterior."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np
from scipy import stats

from bayeval._validation import check_choice, check_prob

__all__ = ["Estimate"]


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

    Notes
    -----
    Two kinds of interval. ``kind="confidence"``: ``value +/- t_{df} sqrt(diag covariance)``,
    the asymptotic interval of the design. ``kind="credible"``: equal-tailed quantiles of the
    posterior draws of ``G`` from the sampler's oracle model combined with the observed labels
    (:attr:`posterior`), computed when first asked for.
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
        posterior: Callable[[], object] | None = None,
    ):
        self.outputs = tuple(outputs)
        self.value = np.asarray(value, dtype=float)
        self.R = np.asarray(R, dtype=float)
        self.covariance = np.asarray(covariance, dtype=float)
        self.labels_used = int(labels_used)
        self.n_samples = int(n_samples)
        self.df = float(df)
        self.method = method
        self._posterior_fn = posterior
        self._posterior = None

    @property
    def posterior(self):
        """Posterior draws of ``G`` and of the oracle model, as an ``xarray.DataTree``.

        The variable ``measure`` has dims ``chain, draw, output``; ``None`` for samplers
        without a model. Computed on first access from the labels at the time of the estimate.
        """
        if self._posterior is None and self._posterior_fn is not None:
            self._posterior = self._posterior_fn()
        return self._posterior

    @property
    def standard_error(self) -> np.ndarray:
        """``(m,)`` square roots of the covariance's diagonal."""
        # a covariance with NaN entries is not clipped by _psd; round-off can leave -1e-33
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

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
            ``prob`` and ``kind``.
        """
        import xarray as xr

        prob = check_prob(prob)
        kind = check_choice(kind, ("confidence", "credible"), "kind")
        if kind == "confidence":
            half = stats.t.ppf(0.5 + prob / 2, self.df) * self.standard_error
            lower, upper = self.value - half, self.value + half
        else:
            post = self.posterior
            if post is None:
                raise ValueError(
                    f"kind='credible' needs an oracle model; the {self.method} sampler has none. "
                    "Use kind='confidence'."
                )
            draws = post["posterior"]["measure"].values.reshape(-1, len(self.outputs))
            lower, upper = np.quantile(draws, [0.5 - prob / 2, 0.5 + prob / 2], axis=0)
        return xr.Dataset(
            {
                "estimate": ("output", self.value),
                "lower": ("output", lower),
                "upper": ("output", upper),
            },
            coords={"output": list(self.outputs)},
            attrs={"prob": prob, "kind": kind},
        )

    def ellipsoid_contains(self, G, prob: float = 0.95) -> bool:
        """Whether ``G`` lies in the ``prob`` confidence ellipsoid of §3.3.2.

        The region is ``(G - value)^T C^{-1} (G - value) <= (N - 1) k / (N - k) F_{k, N-k}``
        with ``C`` the covariance of ``value`` (the paper's ``Sigma_hat / N``), ``k`` outputs
        and ``N`` samples; for one output it is the ``t`` interval of :meth:`interval`.
        """
        prob = check_prob(prob)
        diff = np.asarray(G, dtype=float) - self.value
        k, n = self.value.size, self.n_samples
        if n <= k:
            raise ValueError(f"the ellipsoid needs more samples ({n}) than outputs ({k}).")
        bound = (n - 1) * k / (n - k) * stats.f.ppf(prob, k, n - k)
        return bool(diff @ np.linalg.pinv(self.covariance) @ diff <= bound)

    def summary(self, prob: float = 0.95):
        """Tabulate value, standard error and both kinds of interval (one row per output)."""
        import pandas as pd

        conf = self.interval(prob)
        table = pd.DataFrame(
            {
                "estimate": self.value,
                "se": self.standard_error,
                "lower": conf["lower"].values,
                "upper": conf["upper"].values,
            },
            index=pd.Index(self.outputs, name="output"),
        )
        if self._posterior_fn is not None:
            cred = self.interval(prob, "credible")
            table["credible_lower"] = cred["lower"].values
            table["credible_upper"] = cred["upper"].values
        return table

    def __repr__(self) -> str:
        values = ", ".join(f"{o}={v:.4g}" for o, v in zip(self.outputs, self.value, strict=True))
        return f"Estimate({self.method}: {values}; labels_used={self.labels_used})"
