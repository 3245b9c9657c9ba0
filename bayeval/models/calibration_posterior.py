"""Posterior draws of a bound :class:`~bayeval.models.ScoreCalibration`, and their DataTree.

:meth:`bayeval.models.score_calibration.BoundCalibration.posterior` returns a
:class:`CalibrationPosterior`: the calibration parameters and the measure of the pool under the
first floor prior (and under each further one of a class of floor priors), which
:meth:`CalibrationPosterior.to_datatree` lays out as ArviZ groups.
"""

from __future__ import annotations

import numpy as np

from bayeval._core import calibration as kernel
from bayeval.measures.layout import measure_variables, output_layout

__all__ = ["CalibrationPosterior"]


class CalibrationPosterior:
    """Posterior draws of a :class:`BoundCalibration`: parameters and the measure.

    Attributes
    ----------
    theta : numpy.ndarray
        ``(draws, dim)`` unconstrained parameters (layout of
        :func:`bayeval._core.calibration.unpack`).
    measure : numpy.ndarray
        ``(draws, outputs)`` the measure of the pool (NaN where a draw leaves it undefined,
        e.g. recall when a draw has no positive at all).
    attrs : dict
        The engine and its diagnostics (the importance sampler's effective sample size).
    others : dict
        Under each further floor prior of the specification (``floor`` a tuple), its
        ``(theta, measure)`` draws; empty with one floor prior.
    """

    def __init__(self, bound, theta, measure, rows, counts, attrs, sample_stats, seed, others):
        self.bound, self.theta, self.measure = bound, theta, measure
        self.rows, self.counts, self.attrs = rows, counts, attrs
        self._sample_stats, self._seed = sample_stats, seed
        self.others = others

    def measure_draws(self) -> np.ndarray:
        """``(draws, outputs)`` draws of the measure (under the first floor prior)."""
        return self.measure

    def floor_prior_draws(self) -> dict[str, np.ndarray] | None:
        """``(draws, outputs)`` draws of the measure under each floor prior, or ``None`` with one.

        The credible interval of a class of floor priors is the hull of these draws'
        intervals (:class:`bayeval.sampling.Estimate`).
        """
        if not self.others:
            return None
        first = self.bound.spec.floors[0]
        return {first: self.measure, **{name: draws for name, (_, draws) in self.others.items()}}

    def to_datatree(self):
        """Return the ArviZ ``xarray.DataTree`` of the posterior.

        Groups ``posterior`` (``intercept`` (dims ``group`` with several systems), ``slope``,
        ``floor`` (unless ``floor="none"``), ``ceiling_gap`` (with ``ceiling=True``) and
        one variable per measure, such as ``f1``, with dims ``system`` and ``threshold`` where
        the outputs have them), ``prior`` (the same
        variables under the prior, labelled items still known), ``posterior_predictive``
        (``y``: replicated positives of each labelled row), ``log_likelihood`` and
        ``observed_data`` (``y`` over dim ``row``), ``constant_data`` (each row's ``t`` and
        ``trials``) and, for ``engine="pymc"``, ``sample_stats``. With several floor priors
        the ``posterior`` group is the first one's and ``floor_priors`` holds its variables
        under each of them (dim ``floor_prior``; ``floor`` only where every prior has one).
        """
        import xarray as xr
        from scipy import special

        bound, rows, theta = self.bound, self.rows, self.theta
        spec, prior = bound.spec, bound.prior
        rng = np.random.default_rng(self._seed)
        C = spec.chains
        D = theta.shape[0] // C

        def variables(draws, measure, prior=prior):
            intercept, slope, phi, psi = kernel.unpack(draws, prior)
            data = {}
            if prior.n_groups > 1:
                data["intercept"] = (("chain", "draw", "group"), intercept.reshape(C, D, -1))
            else:
                data["intercept"] = (("chain", "draw"), intercept[:, 0].reshape(C, D))
            data["slope"] = (("chain", "draw"), slope.reshape(C, D))
            if prior.floor is not None:
                data["floor"] = (("chain", "draw"), phi.reshape(C, D))
            if prior.ceiling is not None:
                data["ceiling_gap"] = (("chain", "draw"), psi.reshape(C, D))
            variables, _ = measure_variables(measure.reshape(C, D, -1), bound.target.outputs)
            return {**data, **variables}

        coords = {
            "chain": np.arange(C),
            "draw": np.arange(D),
            **{
                dim: values
                for dim, values in output_layout(bound.target.outputs)[1].items()
                if dim != "measure"  # each measure is its own variable
            },
        }
        if prior.n_groups > 1:
            coords["group"] = np.arange(prior.n_groups)
        prior_theta = bound.prior_draws(theta.shape[0], rng)
        prior_measure = bound.measure_draws(prior_theta, self.counts, rng)
        trials = rows.k + rows.m
        p = kernel.positive_probability(theta, prior, rows.t, rows.group)  # (draws, rows)
        row_coords = {"chain": np.arange(C), "draw": np.arange(D), "row": np.arange(rows.t.size)}
        replicated = rng.binomial(trials.astype(np.int64), p)
        # binomial log pmf: the kernel's terms plus the binomial coefficient of each row
        log_choose = special.gammaln(trials + 1) - special.gammaln(rows.k + 1)
        log_choose -= special.gammaln(rows.m + 1)
        loglik = kernel.log_likelihood(theta, prior, rows) + log_choose
        dims = ("chain", "draw", "row")
        groups = {
            "posterior": xr.Dataset(
                variables(theta, self.measure), coords=coords, attrs=self.attrs
            ),
            "prior": xr.Dataset(variables(prior_theta, prior_measure), coords=coords),
            "posterior_predictive": xr.Dataset(
                {"y": (dims, replicated.reshape(C, D, -1))}, coords=row_coords
            ),
            "log_likelihood": xr.Dataset(
                {"y": (dims, loglik.reshape(C, D, -1))}, coords=row_coords
            ),
            "observed_data": xr.Dataset({"y": ("row", rows.k)}, coords={"row": row_coords["row"]}),
            "constant_data": xr.Dataset(
                {"t": ("row", rows.t), "trials": ("row", trials)},
                coords={"row": row_coords["row"]},
            ),
        }
        if self._sample_stats is not None:
            groups["sample_stats"] = self._sample_stats
        by_floor = self.floor_prior_draws()
        if by_floor is not None:
            members = [variables(self.theta, self.measure)] + [
                variables(theta_, draws, member)
                for (theta_, draws), member in zip(
                    self.others.values(), bound.priors[1:], strict=True
                )
            ]
            shared = [v for v in members[0] if all(v in m for m in members)]  # "none" has no floor
            groups["floor_priors"] = xr.Dataset(
                {
                    v: (("floor_prior", *members[0][v][0]), np.stack([m[v][1] for m in members]))
                    for v in shared
                },
                coords={**coords, "floor_prior": list(by_floor)},
            )
        return xr.DataTree.from_dict(groups)
