"""The score-calibration model as a PyMC model, sampled with NUTS (``engine="pymc"``).

:meth:`bayeval.models.BoundCalibration.posterior` calls :func:`sample_score_calibration` when
the specification's engine is ``"pymc"``. The likelihood is binomial over the labelled rows
(the same aggregation as the fast engine), so the model's size does not grow with the labels.
Model card: ``models/score_calibration/spec.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bayeval.models._common import SEED_HIGH

if TYPE_CHECKING:
    import pymc as pm

__all__ = ["sample_score_calibration", "score_calibration_model"]


def score_calibration_model(prior: Any, rows: Any) -> pm.Model:
    """Build the calibration model of :mod:`bayeval._core.calibration` in PyMC.

    Parameters
    ----------
    prior : bayeval._core.calibration.CalibrationPrior
        Prior scales, number of groups, and the priors of the floor and ceiling gap (if any).
    rows : bayeval._core.calibration.Rows
        Labelled rows: logit-score ``t``, prediction ``group``, positives ``k``, negatives ``m``.

    Returns
    -------
    pymc.Model
        Coordinates ``row`` (and ``group`` with several groups); data ``t``, ``trials``; free
        variables ``intercept`` (``a``), ``delta`` (several groups; with judge strata the
        deterministic sum of ``delta_first`` and ``delta_step``), ``slope``, ``log_floor``
        (with a floor) and ``log_ceiling_gap`` (with a ceiling); deterministic ``floor`` and
        ``ceiling_gap``; observed ``y`` (positives per row).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval._core.calibration import CalibrationPrior, Rows
    >>> prior = CalibrationPrior(5.0, 2.5, 2.0, 1, None, None)
    >>> rows = Rows(np.array([-2.0, 0.0, 2.0]), np.zeros(3, int), np.array([0.0, 2, 5]),
    ...             np.array([6.0, 3, 1]))
    >>> [v.name for v in score_calibration_model(prior, rows).free_RVs]
    ['intercept', 'slope']
    """
    import pymc as pm

    coords: dict[str, Any] = {"row": np.arange(rows.t.size)}
    G = prior.n_groups
    if G > 1:
        coords["group"] = np.arange(G)
    trials = (rows.k + rows.m).astype(np.int64)
    with pm.Model(coords=coords) as model:
        t = pm.Data("t", rows.t, dims="row")
        a = pm.Normal("intercept", 0.0, prior.intercept_scale)
        if G > 1:
            if prior.walk_length > 1:  # each run of judge strata a random walk (the kernel's)
                runs, length = G // prior.walk_length, prior.walk_length
                first = pm.Normal("delta_first", 0.0, prior.group_scale, shape=(runs, 1))
                steps = pm.Normal("delta_step", 0.0, prior.walk_scale, shape=(runs, length - 1))
                walk = pm.math.cumsum(pm.math.concatenate([first, steps], axis=1), axis=1)
                delta = pm.Deterministic("delta", walk.reshape((G,)), dims="group")
            else:
                delta = pm.Normal("delta", 0.0, prior.group_scale, dims="group")
            a = a + delta[rows.group]
        if prior.slope_law == "halfcauchy":
            b = pm.HalfCauchy("slope", prior.slope_scale)
        else:
            b = pm.HalfNormal("slope", prior.slope_scale)
        p = pm.math.sigmoid(a + b * t)
        phi = psi = 0.0
        if prior.floor is not None:
            log_floor = _log_share("log_floor", prior.floor)
            phi = pm.Deterministic("floor", pm.math.exp(log_floor))
        if prior.ceiling is not None:
            log_gap = _log_share("log_ceiling_gap", prior.ceiling)
            psi = pm.Deterministic("ceiling_gap", pm.math.exp(log_gap))
        if prior.bounded:
            p = phi + (1 - phi - psi) * p
        pm.Binomial("y", n=trials, p=p, observed=rows.k.astype(np.int64), dims="row")
    return model


def _log_share(name: str, share: Any):
    """Return the log of a floor or ceiling gap, a PyMC variable with its ``SharePrior``."""
    import pymc as pm

    if share.sd is not None:
        return pm.TruncatedNormal(name, share.centre, share.sd, lower=share.lo, upper=share.hi)
    log_share = pm.Uniform(name, share.lo, share.hi)
    if share.jeffreys:  # Beta(1/2, 1/2) in the share: e^(x/2) (1 - e^x)^(-1/2) in its log x
        pm.Potential(f"{name}_jeffreys", log_share / 2 - 0.5 * pm.math.log1mexp(log_share))
    return log_share


def sample_score_calibration(prior: Any, rows: Any, spec: Any, *, rng: np.random.Generator):
    """Draw the curve's parameters with NUTS.

    Returns
    -------
    theta : numpy.ndarray
        ``(draws, dim)`` unconstrained parameters in the fast engine's layout
        (:func:`bayeval._core.calibration.unpack`), chain after chain.
    sample_stats : xarray.Dataset
        NUTS statistics from :func:`pymc.sample`.
    """
    import pymc as pm

    model = score_calibration_model(prior, rows)
    draws = spec.draws // spec.chains
    dt = pm.sample(
        draws=draws,
        tune=1000,
        chains=spec.chains,
        random_seed=int(rng.integers(SEED_HIGH)),
        progressbar=False,
        nuts_sampler=spec.nuts_sampler,
        target_accept=0.9,
        model=model,
    )
    _warn_on_diagnostics(dt)
    post = dt["posterior"].to_dataset()
    cols = [post["intercept"].values.reshape(-1)]
    if prior.n_groups > 1:
        cols.extend(post["delta"].values.reshape(-1, prior.n_groups).T)
    cols.append(np.log(post["slope"].values.reshape(-1)))
    for name, share in (("log_floor", prior.floor), ("log_ceiling_gap", prior.ceiling)):
        if share is not None:
            u = (post[name].values.reshape(-1) - share.lo) / (share.hi - share.lo)
            cols.append(np.log(u) - np.log1p(-u))
    return np.stack(cols, axis=1), dt["sample_stats"].to_dataset()


def _warn_on_diagnostics(dt: Any, *, max_rhat: float = 1.01, min_ess: float = 400.0) -> None:
    """Warn, naming the variable, when a chain diagnostic says the draws are unreliable.

    ``r_hat > 1.01`` or a bulk effective sample size below 400 (Vehtari et al. 2021's advice for
    four chains: 100 per chain).
    """
    import warnings

    import arviz as az

    from bayeval.models.score_calibration import CalibrationWarning

    rhat = az.rhat(dt, group="posterior")
    ess = az.ess(dt, group="posterior", method="bulk")
    for name in rhat.data_vars:
        r, e = float(rhat[name].max()), float(ess[name].min())
        if not r <= max_rhat or not e >= min_ess:
            warnings.warn(
                f"ScoreCalibration (engine='pymc'): `{name}` has r_hat {r:.3f} and bulk ESS "
                f"{e:.0f} (wanted r_hat <= {max_rhat} and ESS >= {min_ess:.0f}); draw more "
                "(ScoreCalibration(draws=...)) before trusting its intervals.",
                CalibrationWarning,
                stacklevel=3,
            )
