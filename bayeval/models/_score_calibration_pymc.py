"""The score-calibration model as a PyMC model, sampled with NUTS (``engine="pymc"``).

:meth:`bayeval.models.BoundCalibration.posterior` calls :func:`sample_score_calibration` when
the specification's engine is ``"pymc"``. The likelihood is binomial over the labelled rows
(the same aggregation as the fast engine), so the model's size does not grow with the labels.
:func:`sample_with_answers` adds items whose labels only annotators' answers tell (the joint
model of :meth:`bayeval.models.AnnotatorPosterior.measure_posterior`), each item's unknown
label summed out of its likelihood. Model card: ``models/score_calibration/spec.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from bayeval.models._common import SEED_HIGH

if TYPE_CHECKING:
    import pymc as pm

__all__ = [
    "AnsweredItems",
    "sample_score_calibration",
    "sample_with_answers",
    "score_calibration_model",
]


class AnsweredItems(NamedTuple):
    """Items labelled by annotators, for the joint model (:func:`sample_with_answers`).

    ``t`` and ``group``: each item's curve covariates (its row's); ``responses[i, a * 2 + j]``:
    how often annotator ``a`` answered class ``j`` for item ``i``, classes in the order whose
    index ``positive`` is the label 1; ``known[i]``: the item's class index where gold gives
    it, ``-1`` otherwise; ``confusion_prior``: the ``(2, 2)`` Dirichlet concentrations of each
    row ``confusion[a, c]``.
    """

    t: np.ndarray
    group: np.ndarray
    responses: np.ndarray
    known: np.ndarray
    positive: int
    confusion_prior: np.ndarray


def score_calibration_model(prior: Any, rows: Any, answered: Any = None) -> pm.Model:
    """Build the calibration model of :mod:`bayeval._core.calibration` in PyMC.

    Parameters
    ----------
    prior : bayeval._core.calibration.CalibrationPrior
        Prior scales, number of groups, and the priors of the floor and ceiling gap (if any).
    rows : bayeval._core.calibration.Rows
        Labelled rows: logit-score ``t``, prediction ``group``, positives ``k``, negatives ``m``
        (none: no ``y``).
    answered : AnsweredItems, optional
        Items whose labels the annotators' answers tell: adds ``confusion`` (``annotator``,
        ``true_class``, ``answer``; Dirichlet rows) and the potential ``answers``, each item's
        ``log sum_c P(c | curve) prod P(answer | c)`` (only its gold class where it has one).

    Returns
    -------
    pymc.Model
        Coordinates ``row`` (and ``group`` with several groups); data ``t``; free
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
        probability = _curve(prior)
        if rows.t.size:
            pm.Binomial("y", n=trials, p=probability(t, rows.group),
                        observed=rows.k.astype(np.int64), dims="row")  # fmt: skip
        if answered is not None:
            _answers_potential(probability, answered)
    return model


def _curve(prior: Any):
    """Add the curve's parameters to the model in context; return ``P(y = 1 | t, group)``."""
    import pymc as pm

    G = prior.n_groups
    a = pm.Normal("intercept", 0.0, prior.intercept_scale)
    delta = None
    if G > 1:
        if prior.walk_length > 1:  # each run of judge strata a random walk (the kernel's)
            runs, length = G // prior.walk_length, prior.walk_length
            first = pm.Normal("delta_first", 0.0, prior.group_scale, shape=(runs, 1))
            steps = pm.Normal("delta_step", 0.0, prior.walk_scale, shape=(runs, length - 1))
            walk = pm.math.cumsum(pm.math.concatenate([first, steps], axis=1), axis=1)
            delta = pm.Deterministic("delta", walk.reshape((G,)), dims="group")
        else:
            delta = pm.Normal("delta", 0.0, prior.group_scale, dims="group")
    if prior.slope_law == "halfcauchy":
        b = pm.HalfCauchy("slope", prior.slope_scale)
    else:
        b = pm.HalfNormal("slope", prior.slope_scale)
    phi = psi = 0.0
    if prior.floor is not None:
        log_floor = _log_share("log_floor", prior.floor)
        phi = pm.Deterministic("floor", pm.math.exp(log_floor))
    if prior.ceiling is not None:
        log_gap = _log_share("log_ceiling_gap", prior.ceiling)
        psi = pm.Deterministic("ceiling_gap", pm.math.exp(log_gap))

    def probability(t, group):
        p = pm.math.sigmoid((a if delta is None else a + delta[group]) + b * t)
        return phi + (1 - phi - psi) * p if prior.bounded else p

    return probability


def _answers_potential(probability, answered: AnsweredItems) -> None:
    """Add the annotators' confusions and each answered item's likelihood, its label summed out.

    ``log P(answers_i) = logsumexp_c [log P(c | t_i) + sum_{a, j} n_iaj log confusion[a, c, j]]``
    over the classes ``c`` (the gold class only, where the item has one).
    """
    import pymc as pm
    import pytensor.tensor as pt

    A = answered.responses.shape[1] // 2
    concentration = np.broadcast_to(answered.confusion_prior, (A, 2, 2))
    confusion = pm.Dirichlet("confusion", a=concentration, shape=(A, 2, 2))
    p = pt.clip(probability(answered.t, answered.group), 1e-12, 1 - 1e-12)
    log_class = [pt.log1p(-p), pt.log(p)]  # by label 0, 1
    if answered.positive == 0:
        log_class.reverse()  # by class index
    log_confusion = pt.log(confusion)
    terms = []
    for c in range(2):
        # responses (items, A * 2) against log confusion[a, c, j] laid out as a * 2 + j
        term = log_class[c] + pt.dot(answered.responses, log_confusion[:, c, :].reshape((-1,)))
        excluded = (answered.known >= 0) & (answered.known != c)
        terms.append(pt.where(excluded, -np.inf, term))
    pm.Potential("answers", pm.math.logsumexp(pt.stack(terms), axis=0).sum())


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
    dt = _nuts(score_calibration_model(prior, rows), spec, rng)
    return _unpack(dt["posterior"].to_dataset(), prior), dt["sample_stats"].to_dataset()


def sample_with_answers(prior: Any, answered: AnsweredItems, spec: Any, *, rng):
    """Draw the curve's parameters and the annotators' confusions jointly with NUTS.

    The curve is learned from the items of ``answered`` alone, each with its label summed out
    (:func:`_answers_potential`); the caller draws the labels afterwards, draw by draw, from
    their conditional posterior.

    Returns
    -------
    theta : numpy.ndarray
        ``(draws, dim)`` as :func:`sample_score_calibration`'s.
    confusion : numpy.ndarray
        ``(draws, A, 2, 2)``: ``confusion[d, a, c, j]`` = P(annotator ``a`` answers class
        ``j`` | class ``c``) in draw ``d``.
    sample_stats : xarray.Dataset
    """
    from bayeval._core.calibration import Rows

    none = Rows(np.empty(0), np.empty(0, dtype=np.int64), np.empty(0), np.empty(0))
    dt = _nuts(score_calibration_model(prior, none, answered), spec, rng)
    post = dt["posterior"].to_dataset()
    theta, confusion = _unpack(post, prior), post["confusion"].values
    confusion = confusion.reshape(theta.shape[0], *confusion.shape[2:])
    return theta, confusion, dt["sample_stats"].to_dataset()


def _nuts(model: Any, spec: Any, rng: np.random.Generator):
    """``spec.draws`` NUTS draws of ``model`` in ``spec.chains`` chains; warn if unreliable."""
    import pymc as pm

    dt = pm.sample(
        draws=spec.draws // spec.chains,
        tune=1000,
        chains=spec.chains,
        random_seed=int(rng.integers(SEED_HIGH)),
        progressbar=False,
        nuts_sampler=spec.nuts_sampler,
        target_accept=0.9,
        model=model,
    )
    _warn_on_diagnostics(dt)
    return dt


def _unpack(post: Any, prior: Any) -> np.ndarray:
    """``(draws, dim)``: NUTS draws in the fast engine's unconstrained layout, chain after chain."""
    cols = [post["intercept"].values.reshape(-1)]
    if prior.n_groups > 1:
        cols.extend(post["delta"].values.reshape(-1, prior.n_groups).T)
    cols.append(np.log(post["slope"].values.reshape(-1)))
    for name, share in (("log_floor", prior.floor), ("log_ceiling_gap", prior.ceiling)):
        if share is not None:
            u = (post[name].values.reshape(-1) - share.lo) / (share.hi - share.lo)
            cols.append(np.log(u) - np.log1p(-u))
    return np.stack(cols, axis=1)


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
