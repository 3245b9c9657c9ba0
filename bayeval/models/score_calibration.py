"""A model of the labels given the scores, learned from the labels: every sampler's posterior.

Model card: ``models/score_calibration/spec.md``. :class:`ScoreCalibration` is the
specification (priors, the optional floor, bins, engine); :meth:`ScoreCalibration.bind` attaches
it to a pool and a measure, giving a :class:`BoundCalibration` whose :meth:`~BoundCalibration.
posterior` turns labelled items into an ArviZ ``DataTree`` with the posterior of the measure of
this pool.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from bayeval._constraints import Flag, Integer, OneOf, Positive, validate_fields
from bayeval._core import calibration as kernel
from bayeval._validation import check_binary, check_choice, check_draws, check_rng
from bayeval.models.calibration_posterior import CalibrationPosterior

__all__ = ["BoundCalibration", "CalibrationPosterior", "CalibrationWarning", "ScoreCalibration"]

_CHUNK = 1 << 22
_CLIP = 1e-6  # scores in [0, 1] are clipped to [1e-6, 1 - 1e-6] before the logit
# The open priors of the floor and of the ceiling gap: log-uniform from SHARE_MIN_EXPECTED items
# of the pool (so a pool with no such item is inside the prior) to half the pool
SHARE_MIN_EXPECTED = 0.1
SHARE_MAX = 0.5
# The sceptical floor: log(phi M) ~ Normal(log 0.001, 4), so a priori P(at least one hidden
# positive) = P(phi M > 1) = 4% and P(phi M > 10) = 1%; truncated 6 sd below its centre
SCEPTICAL_MEDIAN_EXPECTED = 0.001
SCEPTICAL_SD = 4.0
FLOORS = ("none", "sceptical", "open", "jeffreys")
# The robust variant's class of floor priors; the first gives the estimate (see `robust`)
ROBUST_FLOORS = ("open", "jeffreys", "sceptical")


# Below this mean acceptance rate the fast engine's Metropolis moves (after too concentrated
# importance weights) leave its draws near the few points they started from: say so
MIN_ACCEPTANCE = 0.05


class CalibrationWarning(UserWarning):
    """The posterior draws of a :class:`ScoreCalibration` may be unreliable."""


@dataclass(frozen=True, kw_only=True)
@validate_fields(
    intercept_scale=Positive(),
    slope_scale=Positive(),
    slope_prior=OneOf(("halfcauchy", "halfnormal")),
    group_scale=Positive(),
    ceiling=Flag(),
    bins=Integer(minimum=2),
    judge_bins=Integer(minimum=2),
    judge_strata=Integer(minimum=1),
    judge_step=Positive(),
    chains=Integer(minimum=1),
    draws=Integer(minimum=1),
    engine=OneOf(("fast", "pymc")),
    nuts_sampler=OneOf(("pymc", "nutpie")),
)
class ScoreCalibration:
    """A learned calibration curve of the labels given each item's score.

    An item whose logit-score is ``t`` is positive with probability
    ``phi + (1 - phi - psi) sigmoid(a + delta_g + b t)``: a logistic curve in the logit-score whose
    intercept ``a`` and slope ``b`` are learned from the labels, so the scores shape the
    answer without being trusted as probabilities (a calibrated classifier has ``a = 0,
    b = 1``; an overconfident one ``b < 1``; scores that are not probabilities any ``b``).
    With several systems in a pool, each pattern of their predictions ``g`` gets its own
    intercept ``a + delta_g`` and ``t`` is the mean of their logit-scores. The floor ``phi``
    is the share of positives that no score predicts, the ceiling gap ``psi`` (``ceiling=True``,
    the default) the share of negatives that no score predicts. By default the floor's prior is
    sceptical (hidden positives are unlikely until labels among low scores show some);
    :meth:`robust` fits the model under a class of floor priors, from sceptical to open, and
    reports the hull of their intervals.

    Labelled items are known; the unlabelled items are drawn from the posterior predictive, so
    the posterior is that of the measure of *this* pool (finite-population inference).

    Parameters
    ----------
    intercept_scale : float, default 5.0
        ``a ~ Normal(0, intercept_scale)``: the logit of ``P(positive)`` at score 0.5.
    slope_scale : float, default 2.5
        ``b ~ HalfCauchy(slope_scale)``: the curve rises with the score (a score that ranks
        positives low is not a score), from flat (scores carry no information) to far steeper
        than calibrated; the weakly informative default of Gelman, Jakulin, Pittau & Su (2008)
        for logistic regression coefficients, restricted to rising curves. Its heavy tail
        keeps steep curves (well-separated scores) plausible without favouring them: with one
        to three positives labelled the slope's prior decides how many positives the
        unlabelled scores hide (the model card's Known limits).
    slope_prior : {"halfcauchy", "halfnormal"}, default "halfcauchy"
        The slope's prior family. ``slope_prior="halfnormal", slope_scale=5`` is the prior of
        release 0.1, for checks of the answer's sensitivity to the slope's prior: on the log
        scale it favours slopes near 5 three to one over a calibrated curve.
    group_scale : float, default 2.0
        ``delta_g ~ Normal(0, group_scale)``, several systems only.
    floor : {"sceptical", "open", "jeffreys", "none"} or tuple of them, default "sceptical"
        The prior of the floor, for a pool of ``M`` items. ``"sceptical"``:
        ``log(phi M) ~ Normal(log 0.001, 4)``, the expected hidden positives ``phi M`` below
        one with probability 0.96 and below ten with 0.99: the model trusts that positives
        become as rare among low scores as the fitted curve says, unless labelled positives
        among low scores say otherwise (one or two raise the floor to what they show).
        ``"open"``: ``log phi ~ Uniform(log(0.1 / M), log(1 / 2))``, every order of magnitude
        of hidden positives from a tenth of an item to half the pool equally plausible before
        the labels; intervals stay wide until many labels fall among the low scores, but
        they hold where positives hide in numbers no label can see. ``"jeffreys"``:
        ``phi ~ Beta(1/2, 1/2)`` truncated to the same range, Jeffreys' prior of a proportion
        (Brown, Cai & DasGupta 2001): more weight on larger floors than ``"open"`` (about 1% of
        the prior below ten hidden positives where ``"open"`` has a third), so with no positive
        found among ``n`` low-score labels its 97.5% bound of ``n phi`` is about 2.5 where
        ``"open"``'s is about 1.2 and the exact Poisson bound 3.7. ``"none"``: ``phi = 0``,
        the plain curve. A tuple of two or more: the model is fitted under each floor prior
        and the credible intervals of :class:`bayeval.sampling.Estimate` are the hull of
        theirs, an interval that holds under every prior of the class and every mixture of
        them (robust Bayesian analysis, Berger 1994); the first prior gives the posterior
        draws, the estimate and the ``posterior`` group, the others the ``floor_priors`` group
        (:meth:`robust`).
    ceiling : bool, default True
        ``log psi ~ Uniform(log(0.1 / M), log(1 / 2))`` likewise: negatives among the
        highest scores, which a curve rising to 1 rules out (false positives that no score
        predicts). On by default because it is cheap: the high scores are few and densely
        labelled, so the labels bound ``psi`` quickly (on the battery's ``separated`` pool it
        changed no median width by more than 2%, 12 AIS runs at 250 and 1,000 labels; on
        Shuttle it made precision intervals cover); ``ceiling=False`` is the plain logistic.
    bins : int, default 1024
        Equal-width bins of the logit-score between the pool's lowest and highest; items are
        aggregated by bin, prediction pattern and loss pattern (see the model card for why
        this changes nothing).
    judge_bins : int, default 5
        With a pool whose judge gives probabilities (``be.Pool(..., judge=...)``): the
        equal-width bins of [0, 1] that make the judge's levels (a 0/1 judge has two). Each
        level is a group of the curve: its own intercept ``a + delta_g``.
    judge_strata : int, default 8
        With a judge: equal-width strata of the logit-score, each with its own shift per
        judge level (groups = pattern x judge level x stratum), so the judge may be trusted
        more at some scores than at others (a judge right where the system is sure and not
        elsewhere). 1: one shift per level at every score, which makes active sampling
        dishonest where the judge's reliability varies: AIS spends its labels where the model
        is unsure and leaves the rest to the misfitted shift (on
        ``bayeval.simulate.judge_pools``' ``easy-hard`` pool its intervals of accuracy, recall
        and F1 at 400 labels covered in about a fifth of the runs; benchmarks/README.md).
    judge_step : float, default 0.7
        With ``judge_strata > 1``: the scale of the change of a judge level's shift from one
        score stratum to the next (a Gaussian random walk over the strata, lowest first, its
        first stratum's shift ``N(0, group_scale)``). Small: the strata share one shift
        unless many labels show otherwise; large: each stratum learns its own shift from its
        own labels. The defaults made AIS's intervals cover on every judge pool of the
        benchmark (``benchmarks/README.md``, judges); where the judge is equally reliable at
        every score they cost width against one shift with AIS (the accurate judge's pool at
        400 labels: 9% for F1, 20% for accuracy and recall) and next to none with uniform
        labels.
    draws, chains : int, default 1000 and 4
        Posterior draws in all (split into ``chains``). With ``engine="pymc"`` a
        :class:`CalibrationWarning` names any variable whose ``r_hat`` exceeds 1.01 or whose
        bulk effective sample size is below 400.
    engine : {"fast", "pymc"}, default "fast"
        ``"fast"``: the Laplace approximation at the posterior mode corrected by importance
        resampling, adaptive where the posterior is skewed (milliseconds); a
        :class:`CalibrationWarning` says when the importance weights' effective sample size
        is below a fifth of ``draws``. ``"pymc"``: NUTS through :func:`pymc.sample`.
    nuts_sampler : {"pymc", "nutpie"}, default "pymc"
        NUTS implementation for ``engine="pymc"``.

    Examples
    --------
    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(20_000) < 0.02
    >>> scores = np.where(truth, rng.beta(6, 2, truth.size), rng.beta(1, 12, truth.size))
    >>> pool = be.Pool(scores)
    >>> model = be.models.ScoreCalibration().bind(pool, be.measures.FScore())
    >>> labelled = rng.choice(pool.size, 400, replace=False)
    >>> dt = model.posterior(labelled, truth[labelled], rng=1)
    >>> f1 = dt["posterior"]["f1"]
    >>> bool(f1.quantile(0.025) < be.measures.FScore().value(truth, predictions=scores >= 0.5)[0]
    ...      < f1.quantile(0.975))
    True
    """

    intercept_scale: float = 5.0
    slope_scale: float = 2.5
    slope_prior: Literal["halfcauchy", "halfnormal"] = "halfcauchy"
    group_scale: float = 2.0
    floor: str | tuple[str, ...] = "sceptical"
    ceiling: bool = True
    bins: int = 1024
    judge_bins: int = 5
    judge_strata: int = 8
    judge_step: float = 0.7
    draws: int = 1000
    chains: int = 4
    engine: Literal["fast", "pymc"] = "fast"
    nuts_sampler: Literal["pymc", "nutpie"] = "pymc"

    def __post_init__(self):
        """Check the floor spec and ``draws`` against ``chains`` (the fields are checked)."""
        floors = self.floor if isinstance(self.floor, tuple) else (self.floor,)
        for name in floors:
            check_choice(name, FLOORS, "floor")
        if isinstance(self.floor, tuple) and (len(floors) < 2 or len(set(floors)) < len(floors)):
            raise ValueError(
                f"`floor` must be one of {list(FLOORS)} or a tuple of two or more distinct ones; "
                f"got {self.floor!r}."
            )
        check_draws(self.draws, self.chains)

    @property
    def floors(self) -> tuple[str, ...]:
        """The floor priors the model is fitted under, the one giving the estimate first."""
        return self.floor if isinstance(self.floor, tuple) else (self.floor,)

    @classmethod
    def robust(cls, **options: Any) -> ScoreCalibration:
        """Return the robust variant: the hull over the open, Jeffreys and sceptical floors.

        With no positive found among the low scores, the labels cannot tell "no hidden
        positive" from "a few hidden positives per thousand items"; each floor prior then
        decides alone, and none is right on every pool (the model card's Known limits: the
        open prior is too sure on pools that hide positives, Jeffreys' pulls recall down where
        none hide, the sceptical one assumes none). The robust variant's interval holds under
        all three; its estimate is the open floor's posterior median.

        Examples
        --------
        >>> ScoreCalibration.robust(draws=400).floors
        ('open', 'jeffreys', 'sceptical')
        """
        return cls(floor=ROBUST_FLOORS, ceiling=True, **options)

    def bind(self, pool: Any, target: Any) -> BoundCalibration:
        """Aggregate ``pool`` into the model's rows for a measure.

        Parameters
        ----------
        pool : bayeval.Pool
            The pool whose items the rows aggregate (unused when ``target`` is a ``Target``,
            which carries its own pool).
        target : bayeval.measures.Measure or bayeval.sampling.Target
            A measure of the pool's predictions or a precision-recall curve (losses that
            take finitely many values per item).
        """
        from bayeval.measures.target import Target

        if not isinstance(target, Target):
            target = Target(pool, target)
        if target.table is None:
            raise ValueError(
                f"`target` {target.measure!r} varies with each score; ScoreCalibration needs a "
                "measure of predictions or a precision-recall curve."
            )
        return BoundCalibration(self, target)


class BoundCalibration:
    """A :class:`ScoreCalibration` bound to a pool and a measure: rows and their sizes.

    One pass over the pool (in chunks) finds every item's row ``(bin, group, loss pattern)``,
    the rows' sizes and mean logit-scores; a posterior needs only the labelled items' rows.
    """

    def __init__(self, spec: ScoreCalibration, target: Any):
        self.spec, self.target = spec, target
        pool = target.pool
        self.n_items = pool.size
        S = pool.n_systems
        judge = pool.judge
        # a 0/1 judge has two levels; a judge's probability is cut into equal-width bins
        self.n_judge_levels = (
            1 if judge is None else 2 if judge.dtype == np.int8 else spec.judge_bins
        )
        self.n_judge_strata = 1 if judge is None else spec.judge_strata
        self.n_groups = (2**S if S > 1 else 1) * self.n_judge_levels * self.n_judge_strata
        self.n_patterns = target.table.shape[0]
        self._probability_scores = [
            bool(pool._lo[s] >= 0.0 and pool._hi[s] <= 1.0) for s in range(S)
        ]
        self._standardise = self._standardisation()
        lo, hi = self._covariate_range()
        self._edges = (lo, (hi - lo) / spec.bins if hi > lo else 1.0)
        self._judge_edges = (lo, (hi - lo) / self.n_judge_strata if hi > lo else 1.0)
        n_rows = spec.bins * self.n_groups * self.n_patterns
        if n_rows > 1 << 26:
            raise ValueError(
                f"{spec.bins} bins x {self.n_groups} prediction patterns x {self.n_patterns} "
                f"loss patterns give {n_rows} rows; use fewer bins or systems."
            )
        sizes = np.zeros(n_rows)
        t_sum = np.zeros(n_rows)
        for start in range(0, pool.size, _CHUNK):
            part = np.arange(start, min(start + _CHUNK, pool.size))
            row, t = self._rows_of(part)
            sizes += np.bincount(row, minlength=n_rows)
            t_sum += np.bincount(row, weights=t, minlength=n_rows)
        used = np.flatnonzero(sizes)
        self._compact = np.full(n_rows, -1, dtype=np.int64)
        self._compact[used] = np.arange(used.size)
        self.sizes = sizes[used].astype(np.int64)
        self.t = t_sum[used] / self.sizes
        self.group = (used // self.n_patterns) % self.n_groups
        self.pattern = used % self.n_patterns
        share_range = (math.log(SHARE_MIN_EXPECTED / pool.size), math.log(SHARE_MAX))
        open_share = kernel.SharePrior(*share_range)
        centre = math.log(SCEPTICAL_MEDIAN_EXPECTED / pool.size)
        floors = {
            "none": None,
            "open": open_share,
            "jeffreys": kernel.SharePrior(*share_range, jeffreys=True),
            "sceptical": kernel.SharePrior(
                centre - 6 * SCEPTICAL_SD, math.log(SHARE_MAX), centre, SCEPTICAL_SD
            ),
        }
        #: one prior per floor of ``spec.floors``; the first is :attr:`prior`
        self.priors = tuple(
            kernel.CalibrationPrior(
                spec.intercept_scale,
                spec.slope_scale,
                spec.group_scale,
                self.n_groups,
                floors[name],
                open_share if spec.ceiling else None,
                spec.slope_prior,
                walk_length=self.n_judge_strata,
                walk_scale=spec.judge_step,
            )
            for name in spec.floors
        )
        self.prior = self.priors[0]

    # -- rows -------------------------------------------------------------------------------
    def _standardisation(self) -> list[tuple[float, float]]:
        """``(centre, scale)`` per system: identity for scores in [0, 1] (logits), else z-scores."""
        pool = self.target.pool
        out = []
        for s, is_prob in enumerate(self._probability_scores):
            if is_prob:
                out.append((0.0, 1.0))
                continue
            total, squares = 0.0, 0.0
            for start in range(0, pool.size, _CHUNK):
                x = _system_scores(pool, slice(start, start + _CHUNK), s)
                total, squares = total + x.sum(), squares + (x**2).sum()
            mean = total / pool.size
            sd = math.sqrt(max(squares / pool.size - mean**2, 0.0))
            out.append((mean, sd if sd > 0 else 1.0))
        return out

    def covariate(self, positions: Any) -> np.ndarray:
        """Logit-score ``t`` of the items at ``positions`` (the mean over systems)."""
        pool = self.target.pool
        t = None
        for s, is_prob in enumerate(self._probability_scores):
            x = _system_scores(pool, positions, s)
            if is_prob:
                x = np.clip(x, _CLIP, 1 - _CLIP)
                x = np.log(x) - np.log1p(-x)
            else:
                centre, scale = self._standardise[s]
                x = (x - centre) / scale
            t = x if t is None else t + x
        return t / pool.n_systems

    def _covariate_range(self) -> tuple[float, float]:
        pool = self.target.pool
        lo, hi = math.inf, -math.inf
        for start in range(0, pool.size, _CHUNK):
            t = self.covariate(slice(start, start + _CHUNK))
            lo, hi = min(lo, float(t.min())), max(hi, float(t.max()))
        return lo, hi

    def _rows_of(self, positions: Any) -> tuple[np.ndarray, np.ndarray]:
        """Uncompacted row of each item at ``positions`` and its logit-score."""
        t = self.covariate(positions)
        lo, width = self._edges
        b = np.clip(((t - lo) / width).astype(np.int64), 0, self.spec.bins - 1)
        group = self._groups_of(positions, t)
        pattern = self.target.patterns[positions].astype(np.int64)
        return (b * self.n_groups + group) * self.n_patterns + pattern, t

    def _groups_of(self, positions: Any, t: np.ndarray) -> np.ndarray | int:
        """Group of the items at ``positions`` (logit-scores ``t``).

        Prediction pattern x the judge's level x the judge's score stratum.
        """
        pool = self.target.pool
        group = 0
        if pool.n_systems > 1:
            pred = pool.predictions[positions].reshape(t.size, -1).astype(np.int64)
            group = pred @ (2 ** np.arange(pool.n_systems))
        if self.n_judge_levels > 1:
            group = group * self.n_judge_levels + self.judge_level(positions).astype(np.int64)
        if self.n_judge_strata > 1:
            lo, width = self._judge_edges
            stratum = np.clip(((t - lo) / width).astype(np.int64), 0, self.n_judge_strata - 1)
            group = group * self.n_judge_strata + stratum
        return group

    def judge_level(self, positions: Any) -> np.ndarray:
        """Return the judge's level at ``positions``: its 0/1 label, or its probability's bin."""
        judge = self.target.pool.judge[positions]
        if judge.dtype == np.int8:
            return judge
        bins = self.n_judge_levels
        return np.minimum((judge * bins).astype(np.int8), bins - 1)

    def item_covariates(self, positions: Any) -> tuple[np.ndarray, np.ndarray]:
        """Return the curve's covariates of the items at ``positions``: their rows' t, group."""
        row = self._compact[self._rows_of(np.asarray(positions, dtype=np.int64))[0]]
        return self.t[row], self.group[row]

    def probability_at(self, theta: np.ndarray, positions: Any) -> np.ndarray:
        """``P(y = 1)`` of the items at ``positions`` under parameter draws ``theta (draws, dim)``.

        Each item's row (its bin's mean logit-score and its group): ``(draws, items)``.
        """
        return kernel.positive_probability(theta, self.prior, *self.item_covariates(positions))

    def row_of(self, positions: Any) -> np.ndarray:
        """Each item's row, an index into :attr:`sizes` (the rows that hold items)."""
        return self._compact[self._rows_of(np.asarray(positions, dtype=np.int64))[0]]

    def labelled_rows(self, positions: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
        """Labelled positives ``k`` and negatives ``m`` per row (items may repeat)."""
        labels = np.asarray(labels).astype(bool)
        row = self.row_of(positions)
        n = self.sizes.size
        k = np.bincount(row[labels], minlength=n).astype(float)
        m = np.bincount(row[~labels], minlength=n).astype(float)
        return k, m

    def cell_covariates(self, cell_of: np.ndarray, n_cells: int) -> tuple[np.ndarray, np.ndarray]:
        """Mean logit-score and prediction group of each cell of another partition of the pool.

        ``cell_of`` gives each item's cell (a sampler's strata x patterns); the group of a cell
        is that of its last item (the cells of samplers never mix prediction patterns).
        """
        pool = self.target.pool
        t_sum = np.zeros(n_cells)
        group = np.zeros(n_cells, dtype=np.int64)
        for start in range(0, pool.size, _CHUNK):
            part = np.arange(start, min(start + _CHUNK, pool.size))
            t = self.covariate(part)
            t_sum += np.bincount(cell_of[part], weights=t, minlength=n_cells)
            if self.n_groups > 1:
                group[cell_of[part]] = self._groups_of(part, t)
        sizes = np.bincount(cell_of, minlength=n_cells)
        return t_sum / np.maximum(sizes, 1), group

    def response(
        self, positions, labels, t, group, *, rng: Any = None, draws: int = 200, start=None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior predictive probability of a positive at covariates ``t`` in ``group``.

        The mean of ``P(t)`` over ``draws`` posterior draws of the curve (the fast engine,
        whatever the specification's engine: this serves proposals, stage after stage).
        ``start`` warm-starts the mode search; the draws' median is returned as the next
        ``start``, so a caller that keeps it gets the same answers on replay.

        Returns
        -------
        probability : numpy.ndarray
        start : numpy.ndarray
        """
        rng = check_rng(rng)
        k, m = self.labelled_rows(positions, labels)
        has = (k + m) > 0
        rows = kernel.Rows(self.t[has], self.group[has], k[has], m[has])
        fit = kernel.draw_parameters(
            self.prior, rows, draws, rng, n_proposals=2 * draws, start=start
        )
        probability = kernel.positive_probability(fit.theta, self.prior, t, group).mean(axis=0)
        return probability, np.median(fit.theta, axis=0)

    # -- the posterior ----------------------------------------------------------------------
    def posterior(self, positions: Any, labels: Any, *, rng: Any = None, finite: bool = True):
        """Posterior of the calibration curve and of the measure, as an ``xarray.DataTree``.

        ``fit(positions, labels, rng=rng, finite=finite).to_datatree()``; see :meth:`fit`
        and :meth:`CalibrationPosterior.to_datatree`.
        """
        return self.fit(positions, labels, rng=rng, finite=finite).to_datatree()

    def fit(
        self, positions: Any, labels: Any, *, rng: Any = None, finite: bool = True
    ) -> CalibrationPosterior:
        """Draw the curve's parameters and the measure from their posterior.

        Parameters
        ----------
        positions : array_like of int
            Pool positions of the labelled items (distinct when ``finite``).
        labels : array_like of {0, 1}
            Label of each item of ``positions``, in the same order.
        rng : int or numpy.random.Generator, optional
            Seed of every posterior draw (the curve's parameters and the measure).
        finite : bool, default True
            ``True``: the measure of this pool, labelled items at their labels and the
            unlabelled ones drawn from the posterior predictive. ``False``: the measure under
            the curve for every item (``E_y`` of the loss; a stochastic oracle's target), each
            label one Bernoulli observation (an item may be labelled several times).

        Returns
        -------
        CalibrationPosterior

        Raises
        ------
        ValueError
            Without labels (the curve is learned from them), for labels outside ``{0, 1}``
            or of another length than ``positions``, or repeated positions with ``finite``.
        """
        rng = check_rng(rng)
        positions, labels = self.check_labelled(
            positions, labels, finite, "ScoreCalibration needs labels to learn the curve from"
        )
        k, m = self.labelled_rows(positions, labels)
        has = (k + m) > 0
        rows = kernel.Rows(self.t[has], self.group[has], k[has], m[has])
        unlabelled = self.sizes - (k + m if finite else 0)
        counts = (k, m, unlabelled, finite)
        theta, attrs, sample_stats = self._draw_parameters(self.prior, rows, rng)
        measure = self.measure_draws(theta, counts, rng)
        others = {}  # the other floor priors of the class: their parameters and measure
        for name, prior in zip(self.spec.floors[1:], self.priors[1:], strict=True):
            other_theta, _, _ = self._draw_parameters(prior, rows, rng)
            others[name] = (other_theta, self.measure_draws(other_theta, counts, rng, prior))
        seed = int(rng.integers(2**63))  # for the extra groups of to_datatree
        return CalibrationPosterior(
            self, theta, measure, rows, counts, attrs, sample_stats, seed, others
        )

    def check_labelled(
        self, positions: Any, labels: Any, finite: bool, no_labels: str
    ) -> tuple[np.ndarray, np.ndarray]:
        """Return the labelled ``positions`` and their 0/1 ``labels``, checked, as arrays.

        ``no_labels`` begins the message when there is no label to learn from.
        """
        positions = np.atleast_1d(np.asarray(positions, dtype=np.int64))
        labels = check_binary(labels, "labels")
        if positions.size == 0:
            raise ValueError(f"{no_labels}; got no labelled items.")
        if labels.shape != positions.shape:
            raise ValueError(
                f"`labels` must have one label per position: {positions.size} positions, "
                f"{labels.size} labels."
            )
        if positions.min() < 0 or positions.max() >= self.n_items:
            raise ValueError(
                f"`positions` must be pool positions in [0, {self.n_items}); got "
                f"{int(positions.min())} .. {int(positions.max())}."
            )
        if finite and np.unique(positions).size != positions.size:
            raise ValueError("`positions` must not repeat an item when `finite` is True.")
        return positions, labels

    def _draw_parameters(self, prior, rows, rng):
        """Posterior draws ``theta`` under ``prior``, the engine's attributes and NUTS stats."""
        spec = self.spec
        if spec.engine == "pymc":
            from bayeval.models._score_calibration_pymc import sample_score_calibration

            theta, sample_stats = sample_score_calibration(prior, rows, spec, rng=rng)
            return theta, {"engine": "pymc", "nuts_sampler": spec.nuts_sampler}, sample_stats
        # no warm start: the same labels and seed give the same draws, whatever ran before
        fit = kernel.draw_parameters(prior, rows, spec.draws, rng, n_proposals=2 * spec.draws)
        if fit.moves and fit.acceptance < MIN_ACCEPTANCE:
            warnings.warn(
                f"ScoreCalibration: the importance weights of the fast engine are "
                f"concentrated (effective sample size {fit.ess:.0f} from {fit.n_proposals} "
                f"proposals, for {spec.draws} draws) and the Metropolis moves after them "
                f"accepted {fit.acceptance:.1%} of {fit.moves} steps; "
                "its draws of `intercept` and `slope` may be unreliable: use "
                "engine='pymc'.",
                CalibrationWarning,
                stacklevel=3,
            )
        attrs = {
            "engine": "fast",
            "importance_ess": fit.ess,
            "proposals": fit.n_proposals,
            "metropolis_moves": fit.moves,
            "metropolis_acceptance": fit.acceptance,
        }
        return fit.theta, attrs, None

    def prior_draws(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``(n, dim)`` unconstrained parameter draws from the (first floor's) prior."""
        from scipy import stats

        prior = self.prior

        G = prior.n_groups
        cols = [rng.normal(0, prior.intercept_scale, n)]
        if G > 1:  # each run of judge strata a random walk from its lowest stratum
            steps = rng.normal(0, prior.walk_scale, (G // prior.walk_length, prior.walk_length, n))
            steps[:, 0] = rng.normal(0, prior.group_scale, (G // prior.walk_length, n))
            cols.extend(np.cumsum(steps, axis=1).reshape(G, n))
        half = rng.standard_cauchy(n) if prior.slope_law == "halfcauchy" else rng.normal(size=n)
        cols.append(np.log(prior.slope_scale * np.abs(half)))
        for share in prior.bounded:  # position in the log range: its logit
            if share.jeffreys:  # Beta(1/2, 1/2) truncated to the range, by its inverse CDF
                ends = stats.beta.cdf(np.exp([share.lo, share.hi]), 0.5, 0.5)
                phi = stats.beta.ppf(rng.uniform(*ends, n), 0.5, 0.5)
                u = (np.log(phi) - share.lo) / (share.hi - share.lo)
            elif share.sd is None:
                u = rng.random(n)
            else:
                lo, hi = ((x - share.centre) / share.sd for x in (share.lo, share.hi))
                log_share = stats.truncnorm.rvs(
                    lo, hi, loc=share.centre, scale=share.sd, size=n, random_state=rng
                )
                u = (log_share - share.lo) / (share.hi - share.lo)
            cols.append(np.log(u) - np.log1p(-u))
        return np.stack(cols, axis=1)

    def measure_draws(self, theta, counts, rng, prior=None) -> np.ndarray:
        """Draws of the measure ``(draws, outputs)`` given parameter draws ``theta`` of ``prior``.

        ``prior`` defaults to :attr:`prior`.
        """
        prior = self.prior if prior is None else prior
        prob = kernel.positive_probability(theta, prior, self.t, self.group)
        return self.measure_at(prob, counts, rng)

    def measure_at(self, prob: np.ndarray, counts: tuple, rng: np.random.Generator) -> np.ndarray:
        """Draws of the measure ``(draws, outputs)`` given each row's chance of a positive.

        ``prob`` is ``(draws, rows)``; ``counts`` is ``(k, m, unlabelled, finite)``: the rows'
        labelled positives and negatives, their unlabelled items, and whether the measure is
        of this pool (the unlabelled drawn) or its expectation under ``prob``.
        """
        k, m, unlabelled, finite = counts
        target = self.target
        table = target.table  # (P, 2, D)
        if finite:
            loss = table[self.pattern]  # (rows, 2, D)
            known = k @ loss[:, 1] + m @ loss[:, 0]
            positives = kernel.predict_positives(
                prob, unlabelled, self.pattern, self.n_patterns, rng
            )
            per_pattern = np.bincount(self.pattern, weights=unlabelled, minlength=self.n_patterns)
            total = known + (per_pattern - positives) @ table[:, 0] + positives @ table[:, 1]
        else:
            loss = table[self.pattern]
            expected_pos = prob * self.sizes  # (draws, rows)
            total = (self.sizes - expected_pos) @ loss[:, 0] + expected_pos @ loss[:, 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            return target.g(total / self.n_items)


def _system_scores(pool: Any, positions: Any, system: int) -> np.ndarray:
    x = pool.scores[positions]
    if x.ndim == 2:
        x = x[:, system]
    return np.asarray(x, dtype=float)
