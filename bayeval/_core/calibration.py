"""Numpy kernels of the score-calibration model of the labels (``bayeval.models.ScoreCalibration``).

The model (model card: ``models/score_calibration/spec.md``): an item with covariate ``t`` (its
logit-score) in prediction group ``g`` is positive with probability

    P(t) = phi + (1 - phi - psi) * sigmoid(a + delta_g + b t),

``a ~ N(0, intercept_scale)``, ``delta_g ~ N(0, group_scale)`` (only with several groups;
groups that are the score strata of one judge's answer follow a random walk instead, see
:class:`CalibrationPrior`),
``b ~ HalfCauchy(slope_scale)`` (or ``HalfNormal``), and optionally a floor ``phi``
(positives that no score predicts) and a ceiling gap ``psi`` (negatives that no score
predicts), each with a :class:`SharePrior` on its logarithm (uniform on a range, or a normal law
truncated to it); a share the model does not have is 0.

Items are aggregated into *rows*: fine bins of ``t`` crossed with the group and the loss
pattern of the measure. A row holds its mean ``t``, its labelled positives ``k`` and negatives
``m`` and its unlabelled items ``u``. All kernels are vectorised over rows and over parameter
draws; nothing loops over items.

Parameters are handled unconstrained, as ``theta = [a, delta_1 .. delta_G, log b, v, w]`` with
``v = logit((log phi - lo) / (hi - lo))`` for the floor and ``w`` likewise for ``psi`` (each
absent without it; ``lo, hi`` from its :class:`SharePrior`). Densities include the Jacobians of
these transforms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

__all__ = [
    "CalibrationPrior",
    "Rows",
    "SharePrior",
    "draw_parameters",
    "fit_mode",
    "log_posterior",
    "positive_probability",
    "predict_positives",
]


@dataclass(frozen=True)
class SharePrior:
    """Prior of the logarithm of a floor or ceiling gap, on ``[lo, hi]``.

    Uniform there without ``sd`` (the share is log-uniform); with it, ``Normal(centre, sd)``
    truncated to ``[lo, hi]``; with ``jeffreys``, the share itself has Jeffreys' prior of a
    binomial proportion, ``Beta(1/2, 1/2)``, truncated to ``[e^lo, e^hi]``.
    """

    lo: float
    hi: float
    centre: float = 0.0
    sd: float | None = None
    jeffreys: bool = False

    def log_share(self, v: np.ndarray) -> np.ndarray:
        """``log share = lo + (hi - lo) expit(v)`` of the unconstrained ``v``."""
        return self.lo + (self.hi - self.lo) * special.expit(v)

    def log_density(self, v: np.ndarray) -> np.ndarray:
        """Log prior density of ``v``: the transform's log Jacobian, plus the shape's term."""
        out = -np.logaddexp(0, v) - np.logaddexp(0, -v)  # log expit(v) (1 - expit(v))
        if self.sd is not None:
            out = out - 0.5 * ((self.log_share(v) - self.centre) / self.sd) ** 2
        if self.jeffreys:
            # x = log share: Beta(1/2, 1/2) in the share is e^(x/2) (1 - e^x)^(-1/2) in x
            x = self.log_share(v)
            out = out + x / 2 - 0.5 * np.log1p(-np.exp(x))
        return out

    def d_log_density(self, v: float) -> float:
        """Return the derivative of :meth:`log_density` in ``v``."""
        e = special.expit(v)
        out = 1 - 2 * e
        dx_dv = (self.hi - self.lo) * e * (1 - e)
        if self.sd is not None:
            out -= (self.log_share(v) - self.centre) / self.sd**2 * dx_dv
        if self.jeffreys:
            share = math.exp(self.log_share(v))
            out += (0.5 + 0.5 * share / (1 - share)) * dx_dv
        return out


@dataclass(frozen=True)
class CalibrationPrior:
    """Scales of the priors, the number of groups and the shares' priors (see the module notes).

    ``slope_law`` is the slope's prior, ``"halfcauchy"`` or ``"halfnormal"`` with scale
    ``slope_scale``. The groups come in consecutive runs of ``walk_length`` (a judge's score
    strata, lowest first, for one prediction pattern and judge answer); within a run the shifts
    are a Gaussian random walk, the first ``N(0, group_scale)`` and each next the one before
    plus ``N(0, walk_scale)``, so neighbouring strata share what the labels say about the judge
    and the shift may still change across the scores where the labels demand it.
    """

    intercept_scale: float
    slope_scale: float
    group_scale: float
    n_groups: int
    floor: SharePrior | None  # of phi, or None (phi = 0)
    ceiling: SharePrior | None  # of psi, or None (psi = 0)
    slope_law: str = "halfcauchy"
    walk_length: int = 1
    walk_scale: float = 1.0

    @property
    def dim(self) -> int:
        """Length of the unconstrained parameter vector."""
        groups = self.n_groups if self.n_groups > 1 else 0
        return 2 + groups + (self.floor is not None) + (self.ceiling is not None)

    @property
    def bounded(self) -> tuple[SharePrior, ...]:
        """The priors of the floor and of the ceiling gap that the model has, in order."""
        return tuple(r for r in (self.floor, self.ceiling) if r is not None)


@dataclass(frozen=True)
class Rows:
    """Aggregated data: ``t``, ``group``, labelled ``k`` (positive) / ``m`` (negative) per row."""

    t: np.ndarray
    group: np.ndarray
    k: np.ndarray
    m: np.ndarray


def _slope_index(prior: CalibrationPrior) -> int:
    return 1 + (prior.n_groups if prior.n_groups > 1 else 0)


def _bounded_share(x: np.ndarray, share: SharePrior | None) -> np.ndarray:
    """Return the floor or ceiling gap of an unconstrained ``x`` (0 where the model has none)."""
    if share is None:
        return np.zeros(np.shape(x))
    return np.exp(share.log_share(x))


def unpack(theta: np.ndarray, prior: CalibrationPrior):
    """Split draws ``(..., dim)`` into intercept per group ``(..., G)``, slope, ``phi``, ``psi``.

    ``phi`` (the floor) and ``psi`` (the ceiling gap) are zeros where the model has none.
    """
    a = theta[..., :1]
    G = prior.n_groups
    delta = theta[..., 1 : 1 + G] if G > 1 else np.zeros(theta.shape[:-1] + (1,))
    at = _slope_index(prior)
    log_slope = theta[..., at]
    # a share the model does not have reads the log slope only for its shape, and is 0
    at_phi, at_psi = at + 1, at + 1 + (prior.floor is not None)
    phi = _bounded_share(theta[..., at_phi] if prior.floor is not None else log_slope, prior.floor)
    psi = _bounded_share(
        theta[..., at_psi] if prior.ceiling is not None else log_slope, prior.ceiling
    )
    return a + delta, np.exp(log_slope), phi, psi


def _linear_predictor(theta, prior, t, group):
    intercept, slope, phi, psi = unpack(theta, prior)
    if prior.n_groups > 1:
        intercept = np.take(intercept, group, axis=-1)
    eta = intercept + slope[..., None] * t  # one group: (..., 1) broadcasts over the rows
    return eta, phi[..., None], psi[..., None]


def _curve_share(phi, psi):
    """``1 - phi - psi``, the share the curve spans, never negative.

    Each share is at most one half, but their sum may round above 1 at the top of both ranges.
    """
    return np.maximum(1 - phi - psi, 0.0)


def positive_probability(theta, prior, t, group) -> np.ndarray:
    """``P(t)`` of rows ``(t, group)`` for draws ``theta (..., dim)``: ``(..., rows)``."""
    eta, phi, psi = _linear_predictor(theta, prior, t, group)
    prob = special.expit(eta, out=eta)  # in place: (draws, rows) arrays are the cost here
    prob *= _curve_share(phi, psi)
    prob += phi
    return prob


def _log_normal(x, scale: float):
    """``scipy.stats.norm.logpdf(x, scale=scale)`` without scipy's per-call overhead."""
    return -0.5 * (x / scale) ** 2 - np.log(scale * np.sqrt(2 * np.pi))


def log_prior(theta: np.ndarray, prior: CalibrationPrior) -> np.ndarray:
    """Log prior density of unconstrained draws ``(..., dim)``, Jacobians included."""
    G = prior.n_groups
    out = _log_normal(theta[..., 0], prior.intercept_scale)
    if G > 1:
        runs = _runs(theta[..., 1 : 1 + G], prior)
        out = out + _log_normal(runs[..., 0], prior.group_scale).sum(-1)
        out = out + _log_normal(np.diff(runs, axis=-1), prior.walk_scale).sum((-2, -1))
    at = _slope_index(prior)
    u = theta[..., at]  # log slope: the slope's density times the Jacobian e^u
    ratio = np.exp(u) / prior.slope_scale
    if prior.slope_law == "halfcauchy":
        out = out + np.log(2 / (np.pi * prior.slope_scale)) - np.log1p(ratio**2) + u
    else:  # HalfNormal: twice the normal's density
        out = out + _log_normal(np.exp(u), prior.slope_scale) + np.log(2) + u
    for j, share in enumerate(prior.bounded):
        out = out + share.log_density(theta[..., at + 1 + j])
    return out


def _runs(delta: np.ndarray, prior: CalibrationPrior) -> np.ndarray:
    """Reshape the group shifts ``(..., G)`` into ``(..., G / walk_length, walk_length)`` walks."""
    return delta.reshape(delta.shape[:-1] + (-1, prior.walk_length))


def _d_log_prior_groups(delta: np.ndarray, prior: CalibrationPrior) -> np.ndarray:
    """Gradient of the groups' log prior at one point ``delta (G,)``."""
    runs = _runs(delta, prior)
    grad = np.zeros_like(runs)
    grad[:, 0] = -runs[:, 0] / prior.group_scale**2
    step = np.diff(runs, axis=-1) / prior.walk_scale**2  # each step pulls its two ends together
    grad[:, 1:] -= step
    grad[:, :-1] += step
    return grad.ravel()


def log_likelihood(theta: np.ndarray, prior: CalibrationPrior, rows: Rows) -> np.ndarray:
    """Binomial log likelihood of each row's labels (constant terms dropped): ``(..., rows)``."""
    eta, phi, psi = _linear_predictor(theta, prior, rows.t, rows.group)
    # P = phi + c sigmoid(eta) and Q = 1 - P = psi + c sigmoid(-eta), c = 1 - phi - psi. A
    # side with its share is at least that share (> 0), so its log is safe; a side without it
    # is c times a sigmoid, whose log is taken exactly (c >= 1/2 then).
    c = _curve_share(phi, psi)
    if prior.floor is not None and prior.ceiling is not None:
        return _log_likelihood_both_shares(eta, phi, psi, c, rows)
    log_sig_neg = -np.logaddexp(0, eta)  # log sigmoid(-eta), exact in both tails
    if not prior.bounded:
        return rows.k * (eta + log_sig_neg) + rows.m * log_sig_neg
    if prior.floor is not None:
        log_pos = np.log(phi + c * special.expit(eta))
    else:
        log_pos = np.log(c) + eta + log_sig_neg
    if prior.ceiling is not None:
        log_neg = np.log(psi + c * special.expit(-eta))
    else:
        log_neg = np.log(c) + log_sig_neg
    return rows.k * log_pos + rows.m * log_neg


def _log_likelihood_both_shares(eta, phi, psi, c, rows: Rows) -> np.ndarray:
    """:func:`log_likelihood` when the model has a floor and a ceiling gap (the hot path).

    One sigmoid ``s`` serves both sides: ``Q = psi + c (1 - s)``, where the rounding of
    ``1 - s`` (below 1e-16) is negligible against ``psi >= 0.1 / M``. ``log P`` is taken only
    for rows with labelled positives (most rows have none); arrays are updated in place.
    """
    s = special.expit(eta)
    has_positive = rows.k > 0
    log_pos = np.log(phi + c * s[..., has_positive])
    out = np.subtract(1.0, s, out=s)
    out *= c
    out += psi
    np.log(out, out=out)
    out *= rows.m
    out[..., has_positive] += rows.k[has_positive] * log_pos
    return out


def log_posterior(theta: np.ndarray, prior: CalibrationPrior, rows: Rows) -> np.ndarray:
    """Unnormalised log posterior of draws ``(..., dim)``."""
    return log_prior(theta, prior) + log_likelihood(theta, prior, rows).sum(-1)


def _gradient(theta: np.ndarray, prior: CalibrationPrior, rows: Rows) -> np.ndarray:
    """Gradient of :func:`log_posterior` at one point ``theta (dim,)``."""
    G = prior.n_groups
    intercept, slope, phi, psi = unpack(theta, prior)
    eta = intercept[rows.group] + slope * rows.t
    s, s_neg = special.expit(eta), special.expit(-eta)
    c = _curve_share(phi, psi)
    k, m = rows.k, rows.m
    # With P = phi + c s and Q = psi + c s_neg: d log P / d eta = (c s / P) s_neg and
    # d log Q / d eta = -(c s_neg / Q) s. The ratios c s / P and c s_neg / Q lie in [0, 1]; a
    # side without its share has ratio 1 exactly (P = c s), so nothing is divided by an
    # underflowing probability. A side with its share is at least that share.
    P = phi + c * s if prior.floor is not None else None
    Q = psi + c * s_neg if prior.ceiling is not None else None
    pos_fraction = c * s / P if P is not None else 1.0
    neg_fraction = c * s_neg / Q if Q is not None else 1.0
    d_eta = k * pos_fraction * s_neg - m * neg_fraction * s
    grad = np.zeros(prior.dim)
    grad[0] = d_eta.sum() - theta[0] / prior.intercept_scale**2
    if G > 1:
        grad[1 : 1 + G] = np.bincount(rows.group, weights=d_eta, minlength=G)
        grad[1 : 1 + G] += _d_log_prior_groups(theta[1 : 1 + G], prior)
    at = _slope_index(prior)
    ratio2 = (slope / prior.slope_scale) ** 2  # d/du of the log prior, Jacobian included:
    if prior.slope_law == "halfcauchy":  # -log(1 + r^2) + u with r = e^u / s
        d_prior = 1 - 2 * ratio2 / (1 + ratio2)
    else:  # -r^2 / 2 + u
        d_prior = 1 - ratio2
    grad[at] = (d_eta * rows.t).sum() * slope + d_prior
    # d P / d phi = s_neg and d P / d psi = -s, Q = 1 - P moving the other way. A side without
    # its share is log c + log sigmoid, whose derivative in the other share is -1 / c.
    d_shares = []
    if prior.floor is not None:
        d_log_q = -s_neg / Q if Q is not None else -1 / c
        d_shares.append((prior.floor, phi, (k * s_neg / P + m * d_log_q).sum()))
    if prior.ceiling is not None:
        d_log_p = -s / P if P is not None else -1 / c
        d_shares.append((prior.ceiling, psi, (k * d_log_p + m * s / Q).sum()))
    for j, (share_prior, share, d_share) in enumerate(d_shares, start=at + 1):
        e = special.expit(theta[j])
        # share = exp(lo + (hi - lo) e): d share / d v = share (hi - lo) e (1 - e)
        grad[j] = d_share * share * (share_prior.hi - share_prior.lo) * e * (1 - e)
        grad[j] += share_prior.d_log_density(theta[j])
    return grad


@dataclass(frozen=True)
class Mode:
    """The posterior mode and the inverse of the negative Hessian there (Laplace covariance)."""

    theta: np.ndarray
    covariance: np.ndarray


def fit_mode(prior: CalibrationPrior, rows: Rows, start: np.ndarray | None = None) -> Mode:
    """Find the posterior mode (BFGS on the analytic gradient) and its Laplace covariance.

    The Hessian is the central difference of the analytic gradient (``dim`` is a handful), made
    positive definite by clipping its eigenvalues, so a flat direction (no label informs it
    yet) gets the prior's scale rather than an infinite variance.
    """
    from scipy import optimize  # heavy; only where a fit happens

    # start at slope 1 (log slope 0: a calibrated curve) and mid-range floor and ceiling
    x0 = np.zeros(prior.dim) if start is None else np.asarray(start, dtype=float)
    res = optimize.minimize(
        lambda x: -log_posterior(x, prior, rows),
        x0,
        jac=lambda x: -_gradient(x, prior, rows),
        method="BFGS",
        options={"gtol": 1e-6, "maxiter": 500},
    )
    theta = res.x
    step = 1e-4
    eye = np.eye(prior.dim) * step
    hess = np.stack(
        [
            (_gradient(theta + e, prior, rows) - _gradient(theta - e, prior, rows)) / (2 * step)
            for e in eye
        ]
    )
    hess = -(hess + hess.T) / 2
    vals, vecs = np.linalg.eigh(hess)
    vals = np.maximum(vals, 1e-6)
    return Mode(theta, (vecs / vals) @ vecs.T)


@dataclass(frozen=True)
class ParameterDraws:
    """Draws of ``theta``, the importance sampler's effective sample size and the moves after it.

    ``moves`` is 0 where the importance weights sufficed, else the Metropolis steps every draw
    took (see :func:`draw_parameters`) and ``acceptance`` their mean acceptance rate.
    """

    theta: np.ndarray  # (draws, dim)
    ess: float
    n_proposals: int
    moves: int = 0
    acceptance: float = 1.0


def draw_parameters(
    prior: CalibrationPrior,
    rows: Rows,
    n_draws: int,
    rng: np.random.Generator,
    *,
    n_proposals: int | None = None,
    df: float = 4.0,
    start: np.ndarray | None = None,
    rounds: int = 6,
    min_ess: float = 0.2,
    moves: int = 200,
) -> ParameterDraws:
    """Draw ``theta`` from the posterior by adaptive importance sampling, then resample.

    The first proposal is a multivariate ``t`` (``df`` degrees of freedom, heavier tails than
    the posterior) centred on the mode with the Laplace covariance inflated by 1.5. While the
    effective sample size ``(sum w)^2 / sum w^2`` of the weights is below half the proposals
    (a skewed or curved posterior: the floor and the intercept both explain positives among low
    scores), a further round draws as many proposals from a ``t`` matched to the weighted
    mean and covariance so far (again x 1.5), up to ``rounds`` rounds. Every proposal is then
    weighted against the equal mixture of all rounds' densities (the balance heuristic, Veach &
    Guibas 1995; deterministic-mixture weights, Owen & Zhou 2000), which keeps the weights
    bounded wherever any round covered the posterior. ``n_draws`` draws are taken from the
    weighted proposals by systematic resampling (Rubin's sampling-importance-resampling) and
    shuffled.

    The posterior can have a second mode that the first proposal's ``t`` never reaches and
    whose absence no weight reveals: a steeper curve over a large floor (positives among the
    low scores explained as hidden positives) beside a shallower one with next to no floor,
    as on labels that an active sampler took where the model was unsure. So the mode is also
    searched from a large floor and from a large ceiling gap (:func:`_further_starts`);
    each distinct mode found adds a ``t`` of its own to the first round, which draws
    ``n_proposals`` from each, and the deterministic-mixture weights below give each mode its
    mass.

    Where the effective sample size stays below ``min_ess`` times ``n_draws`` (a posterior
    far from any ``t``, as with many groups of few labels each: the judge's score strata), the
    resampled draws, a few distinct points, are moved (resample-move, Gilks & Berzuini 2001):
    each takes ``moves`` steps of a random-walk Metropolis chain whose target is the posterior,
    all draws in parallel, its proposal normal with the weighted covariance scaled by
    ``2.38^2 / dim`` (Roberts, Gelman & Gilks 1997). Started near the posterior, every chain
    keeps it as its stationary law, and the steps spread the duplicates apart.
    """
    modes = [fit_mode(prior, rows, start)]
    for further in _further_starts(prior, modes[0].theta):
        mode = fit_mode(prior, rows, further)
        if all(np.abs(mode.theta - m.theta).max() > MODES_APART for m in modes):
            modes.append(mode)
    S = n_draws if n_proposals is None else n_proposals
    # every proposal draws S points: the mixture below weighs their densities equally
    proposals = [(mode.theta, 1.5 * mode.covariance) for mode in modes]
    thetas, log_post = [], []
    for mean, cov in proposals[:-1]:  # all modes but the last draw here, the last in round 1
        thetas.append(_draw_t(mean, cov, df, S, rng))
        lp = log_posterior(thetas[-1], prior, rows)
        log_post.append(np.where(np.isfinite(lp), lp, -np.inf))
    for _ in range(rounds):
        mean, cov = proposals[-1]
        theta = _draw_t(mean, cov, df, S, rng)
        thetas.append(theta)
        lp = log_posterior(theta, prior, rows)
        log_post.append(np.where(np.isfinite(lp), lp, -np.inf))
        every = np.concatenate(thetas)
        log_q = special.logsumexp([_log_t(every, m, c, df) for m, c in proposals], axis=0) - np.log(
            len(proposals)
        )
        log_w = np.concatenate(log_post) - log_q
        w = np.exp(log_w - log_w.max())
        w /= w.sum()
        ess = 1.0 / np.sum(w**2)
        if ess >= 0.5 * S or len(proposals) == rounds + len(modes) - 1:
            break
        centre = w @ every
        dev = every - centre
        matched = (dev * w[:, None]).T @ dev
        proposals.append((centre, 1.5 * matched + 1e-9 * np.eye(prior.dim)))
    # systematic resampling: one uniform, n_draws evenly spaced points on the weights' CDF
    points = (rng.random() + np.arange(n_draws)) / n_draws
    picked = np.minimum(np.searchsorted(np.cumsum(w), points), every.shape[0] - 1)
    theta = every[rng.permutation(picked)]
    if ess >= min_ess * n_draws or moves == 0:
        return ParameterDraws(theta, float(ess), every.shape[0])
    centre = w @ every
    dev = every - centre
    covariance = (dev * w[:, None]).T @ dev + 1e-9 * np.eye(prior.dim)
    theta, acceptance = _metropolis(theta, prior, rows, covariance, moves, rng)
    return ParameterDraws(theta, float(ess), every.shape[0], moves, acceptance)


# Two modes closer than this in every unconstrained coordinate are one
MODES_APART = 0.1


def _further_starts(prior: CalibrationPrior, first: np.ndarray) -> list[np.ndarray]:
    """Return the further mode searches' starts: ``first`` with a large floor or ceiling gap.

    The share's unconstrained coordinate at 6 (its prior range's top, in log: the share near
    its largest) and the log slope at -1.5 (a shallow curve), from which BFGS climbs to the
    mode where the share explains what the curve does not, if the posterior has one.
    """
    at = _slope_index(prior)
    starts = []
    for offset in range(1, len(prior.bounded) + 1):  # the floor's coordinate, then the gap's
        x = np.array(first, dtype=float)
        x[at], x[at + offset] = -1.5, 6.0
        starts.append(x)
    return starts


def _metropolis(theta, prior, rows, covariance, steps, rng):
    """Move every draw ``steps`` random-walk Metropolis steps; return them and the acceptance."""
    chol = np.linalg.cholesky(covariance * 2.38**2 / prior.dim)
    log_post = log_posterior(theta, prior, rows)
    accepted = 0
    for _ in range(steps):
        proposal = theta + rng.standard_normal(theta.shape) @ chol.T
        log_new = log_posterior(proposal, prior, rows)
        accept = np.log(rng.random(theta.shape[0])) < np.where(
            np.isfinite(log_new), log_new - log_post, -np.inf
        )
        theta[accept], log_post[accept] = proposal[accept], log_new[accept]
        accepted += int(accept.sum())
    return theta, accepted / (steps * theta.shape[0])


def _draw_t(mean, cov, df, n, rng):
    chol = np.linalg.cholesky(cov)
    z = rng.standard_normal((n, mean.size))
    return mean + (z @ chol.T) * np.sqrt(df / rng.chisquare(df, size=n))[:, None]


def _log_t(theta, mean, cov, df):
    """Log density of a multivariate ``t``, up to a constant shared by every ``(mean, cov)``."""
    chol = np.linalg.cholesky(cov)
    z = np.linalg.solve(chol, (theta - mean).T)
    maha = np.sum(z**2, axis=0)
    return -np.log(np.diag(chol)).sum() - (df + mean.size) / 2 * np.log1p(maha / df)


# Rows whose probability is below this (or above 1 minus it) draw their unlabelled positives
# (negatives) as one Poisson count per pattern: a sum of binomials whose ``p`` are this small
# is Poisson within a relative variance error of ``p`` (the Poisson variance is larger: the
# approximation errs on the wide side).
POISSON_BELOW = 0.005


def predict_positives(
    prob: np.ndarray,
    unlabelled: np.ndarray,
    pattern: np.ndarray,
    n_patterns: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Draw the positives among the unlabelled items, summed by loss pattern.

    Parameters
    ----------
    prob : numpy.ndarray
        ``(draws, rows)`` probability of a positive in each row, per draw.
    unlabelled : numpy.ndarray
        ``(rows,)`` unlabelled items per row.
    pattern : numpy.ndarray
        ``(rows,)`` loss pattern of each row.
    n_patterns : int
        Number of loss patterns: the columns of the result.
    rng : numpy.random.Generator
        Generator of the binomial and Poisson draws.

    Returns
    -------
    numpy.ndarray
        ``(draws, n_patterns)`` positives among the unlabelled items of each pattern: a draw of
        ``sum_rows Binomial(u_row, p_row)`` (finite-population posterior predictive), exact for
        rows with ``POISSON_BELOW <= p <= 1 - POISSON_BELOW`` and Poisson-summed elsewhere.
    """
    n = np.asarray(unlabelled, dtype=np.int64)
    keep = n > 0  # rows without unlabelled items add nothing
    prob, n, pattern = prob[:, keep], n[keep], pattern[keep]
    by_pattern = np.zeros((n.size, n_patterns))
    by_pattern[np.arange(n.size), pattern] = 1.0
    low = prob < POISSON_BELOW
    high = prob > 1 - POISSON_BELOW
    mid = ~(low | high)
    # Poisson parts: rare positives of low rows, rare negatives of high rows, summed by pattern
    lam_pos = np.where(low, n * prob, 0.0) @ by_pattern
    lam_neg = np.where(high, n * (1 - prob), 0.0) @ by_pattern
    sure = high @ (n[:, None] * by_pattern)  # items of high rows, all positive but lam_neg
    out = rng.poisson(lam_pos) + sure - np.minimum(rng.poisson(lam_neg), sure)
    if mid.any():
        exact = np.zeros(prob.shape)
        exact[mid] = rng.binomial(np.broadcast_to(n, prob.shape)[mid], prob[mid])
        out += exact @ by_pattern
    return out
