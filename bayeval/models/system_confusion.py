"""A model of the labels given several systems' predictions: one confusion matrix per system.

For systems that give predictions and no scores, or too many systems for
:class:`~bayeval.models.ScoreCalibration`'s prediction patterns (``2**K`` of them), the label
of an item is modelled from what every system predicts for it (Dawid & Skene 1979; CODA,
Kay et al. 2025, uses the same model to select among classifiers). Model card:
``models/system_confusion/spec.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from bayeval._constraints import Flag, Integer, OneOf, Optional, Positive, validate_fields
from bayeval._core.confusion_gibbs import gibbs_confusion, one_hot_patterns
from bayeval._core.shared_errors_gibbs import gibbs_shared_errors
from bayeval._validation import check_draws, check_rng
from bayeval.models._systems import (
    check_labelled,
    check_measure,
    check_predictions,
    measure_from_counts,
    system_names,
)

__all__ = ["ConfusionWarning", "SystemConfusion"]

#: Sweeps per chain of the pilot run that chooses the thinning (``thin=None``), and the most
#: thinning it chooses.
PILOT_SWEEPS = 100
MAX_THIN = 50
#: Below this bulk effective sample size (of 4 chains: 100 per chain, Vehtari et al. 2021), or
#: half the draws if fewer, a :class:`ConfusionWarning` names the measure.
MIN_ESS = 400.0


class ConfusionWarning(UserWarning):
    """The posterior draws of a :class:`SystemConfusion` may be unreliable."""


@dataclass(frozen=True, kw_only=True)
@validate_fields(
    class_prior=Positive(),
    correct_prior=Positive(),
    error_prior=Optional(Positive()),
    n_classes=Integer(minimum=2),
    draws=Integer(minimum=1),
    chains=Integer(minimum=1),
    warmup=Integer(minimum=0),
    thin=Optional(Integer(minimum=1)),
    engine=OneOf(("fast", "pymc")),
    shared_errors=Flag(),
)
class SystemConfusion:
    """The label of each item given the predictions of ``K`` systems (Dawid-Skene).

    Item ``i`` is of class ``y_i`` with probability ``pi[y_i]``; system ``k`` predicts class
    ``j`` for it with probability ``theta[k, y_i, j]``, independently of the other systems
    given ``y_i``. Labelled items are known; the unlabelled ones are drawn from the posterior
    predictive, so every draw holds the confusion counts of each system on *this* pool and any
    measure of its predictions (finite-population inference).

    Parameters
    ----------
    class_prior : float, default 1.0
        ``pi ~ Dirichlet(class_prior, ..., class_prior)``: every prevalence alike.
    correct_prior : float, default 2.0
        Each row ``theta[k, c] ~ Dirichlet`` has ``correct_prior`` on the right class ``c``.
    error_prior : float, optional
        The weight of each wrong class in every row ``theta[k, c]``; default
        ``1 / (n_classes - 1)``, one in all, so that a priori a system is right two times in
        three on average whatever the number of classes (with two classes: spread flat from 0
        to 1). This tells the classes apart where no label is yet known; a few labels outweigh
        it. (A weight of one on each wrong class says, with five classes, that a system is
        right one time in three, and pulled the best system's accuracy down: model card.)
    n_classes : int, default 2
        Classes ``0 .. n_classes - 1`` of the labels and predictions.
    draws, chains : int, default 1000 and 4
        Posterior draws in all, split into ``chains``.
    warmup : int, default 200
        Gibbs sweeps discarded per chain (``engine="fast"``); NUTS tunes 1,000 steps.
    thin : int, optional
        Keep every ``thin``-th Gibbs sweep. Default: chosen by a pilot run of 100 sweeps per
        chain so that the draws are about as good as independent ones (at most 50): with few
        systems and many unlabelled items the classes and the confusion matrices move slowly
        together (a sweep is worth much less than an independent draw), with many systems
        every sweep is close to independent.
    engine : {"fast", "pymc"}, default "fast"
        ``"fast"``: Gibbs sampling over the classes of the unlabelled items of each pattern of
        predictions and the parameters (conjugate; one sweep costs a few matrix products over
        the distinct patterns, never a loop over items). ``"pymc"``: NUTS on the parameters
        with the classes of the unlabelled items summed out, then drawn given each draw.
        Either warns (:class:`ConfusionWarning`) when a measure's bulk effective sample size is
        below 400 or its ``r_hat`` above 1.01.
    shared_errors : bool, default False
        Let the joint law of an item's class and predictions depart from the independent one:
        a Dirichlet process centred on it, whose concentration is learned
        (:mod:`bayeval._core.shared_errors_gibbs`). A pattern of predictions whose labels
        contradict independence (systems that err together and name the same wrong class)
        then has its unlabelled items follow its labels; where the errors are independent the
        concentration grows and the model is Dawid-Skene's. ``engine="fast"`` only.

    Notes
    -----
    The systems' errors are assumed independent given the class (unless ``shared_errors``).
    Systems that err on the same hard items make the model too sure of the unlabelled items'
    classes; the labels correct this only where they fall (the model card's Known limits, and
    the coverage of P(best) in ``benchmarks/README.md``). ``shared_errors`` corrects it pattern
    by pattern, so only where patterns repeat: with many systems, whose patterns are nearly all
    seen once, it is Dawid-Skene's model (model card).

    References
    ----------
    A. P. Dawid and A. M. Skene. Maximum likelihood estimation of observer error-rates using
    the EM algorithm. Applied Statistics 28(1), 1979.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models import SystemConfusion
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(2_000) < 0.3
    >>> right = rng.random((2_000, 3)) < [0.9, 0.8, 0.7]
    >>> predictions = np.where(right, truth[:, None], ~truth[:, None]).astype(int)
    >>> labelled = rng.choice(2_000, 100, replace=False)
    >>> dt = SystemConfusion().posterior(predictions, labelled, truth[labelled], rng=1)
    >>> accuracy = dt["posterior"]["accuracy"]
    >>> accuracy.dims
    ('chain', 'draw', 'system')
    >>> [round(float(v), 2) for v in accuracy.median(("chain", "draw"))]
    [0.92, 0.78, 0.71]
    >>> [round(float(v), 3) for v in (predictions == truth[:, None]).mean(axis=0)]  # the truth
    [0.901, 0.79, 0.71]

    Three classes, and the systems wrong on an item all name the same wrong class there:

    >>> truth = rng.integers(0, 3, 600)
    >>> wrong = (truth + rng.integers(1, 3, 600)) % 3
    >>> right = rng.random((600, 3)) < [0.7, 0.8, 0.9]
    >>> predictions = np.where(right, truth[:, None], wrong[:, None])
    >>> labelled = rng.choice(600, 150, replace=False)
    >>> spec = SystemConfusion(n_classes=3, shared_errors=True)
    >>> dt = spec.posterior(predictions, labelled, truth[labelled], rng=1)
    >>> lower, upper = dt["posterior"]["accuracy"].quantile([0.025, 0.975], ("chain", "draw"))
    >>> true = (predictions == truth[:, None]).mean(axis=0)
    >>> ((lower <= true) & (true <= upper)).values.tolist()
    [True, True, True]
    >>> float(dt["posterior"]["concentration"].median()) < 1_000  # far from independence
    True
    """

    class_prior: float = 1.0
    correct_prior: float = 2.0
    error_prior: float | None = None
    n_classes: int = 2
    draws: int = 1000
    chains: int = 4
    warmup: int = 200
    thin: int | None = None
    engine: Literal["fast", "pymc"] = "fast"
    shared_errors: bool = False

    def __post_init__(self):
        """Check ``draws`` against ``chains``, and the engine of ``shared_errors``."""
        check_draws(self.draws, self.chains)
        if self.shared_errors and self.engine != "fast":
            raise ValueError(
                f"`shared_errors=True` is sampled by engine='fast' only; got "
                f"engine={self.engine!r}. Pass engine='fast', or shared_errors=False for NUTS."
            )

    @property
    def confusion_prior(self) -> np.ndarray:
        """The Dirichlet concentrations of each row ``theta[k, c]``: ``(n_classes, n_classes)``."""
        C = self.n_classes
        error = 1 / (C - 1) if self.error_prior is None else self.error_prior
        return np.where(np.eye(C, dtype=bool), self.correct_prior, error)

    def posterior(
        self,
        predictions: Any,
        labelled: Any,
        labels: Any,
        *,
        measures: Sequence[Any] = ("accuracy",),
        systems: Sequence[str] | None = None,
        rng: Any = None,
    ):
        """Posterior of the parameters and of each system's measures on this pool.

        Parameters
        ----------
        predictions : array_like of int, shape (n_items, n_systems)
            Each system's predicted class of each item, in ``0 .. n_classes - 1``.
        labelled : array_like of int
            Positions of the labelled items (distinct).
        labels : array_like of int
            Their classes, in the order of ``labelled``.
        measures : sequence of str or bayeval.measures.Measure, default ("accuracy",)
            Measures of a system's predictions (names as in :func:`bayeval.measures.by_name`);
            with more than two classes ``"accuracy"``, ``"balanced_accuracy"``,
            ``"macro_f1"`` or ``"micro_f1"`` (the last two with any number of classes).
        systems : sequence of str, optional
            Names of the systems; default ``"system0", "system1", ...``.
        rng : int, numpy.random.Generator or None
            Seed or generator of every draw.

        Returns
        -------
        xarray.DataTree
            ``posterior``: ``class_prior`` (``true_class``), ``confusion`` (``system``,
            ``true_class``, ``predicted``) and each measure (``system``), dims ``chain`` and
            ``draw`` first; ``observed_data``: ``labelled_confusion``, each system's confusion
            counts on the labelled items. Attributes ``engine``, ``n_items``, ``n_labelled``.
            With ``shared_errors``, ``concentration`` too (the process's ``alpha``), and
            ``class_prior`` and ``confusion`` are those of its centre.
        """
        rng = check_rng(rng)
        preds = check_predictions(predictions, self.n_classes)
        n_items, K = preds.shape
        positions, classes = check_labelled(labelled, labels, n_items, self.n_classes)
        names = system_names(systems, K)
        measure_list = [check_measure(m, self.n_classes) for m in measures]
        patterns, inverse = np.unique(preds, axis=0, return_inverse=True)
        P, C = patterns.shape[0], self.n_classes
        labelled_counts = np.zeros((P, C))
        np.add.at(labelled_counts, (inverse[positions], classes), 1.0)
        unlabelled_counts = np.bincount(inverse, minlength=P) - labelled_counts.sum(axis=1)
        per_chain = self.draws // self.chains
        if self.engine == "fast":
            draws = self._gibbs(patterns, labelled_counts, unlabelled_counts, per_chain, rng)
        else:
            from bayeval.models._system_confusion_pymc import sample_system_confusion

            draws = sample_system_confusion(
                self, patterns, labelled_counts, unlabelled_counts, names, rng=rng
            )
        tree = _datatree(self, draws, measure_list, names, n_items, positions.size)
        observed = labelled_counts.T @ one_hot_patterns(patterns, C)  # (C, K * C)
        tree["observed_data"] = _observed(observed.reshape(C, K, C).transpose(1, 0, 2), names)
        _warn_on_mixing(tree, [m.name for m in measure_list])
        return tree

    def _gibbs(self, patterns, labelled_counts, unlabelled_counts, per_chain, rng):
        """Run the Gibbs sampler, after a pilot run that chooses the thinning if need be."""
        common = {
            "class_prior": np.full(self.n_classes, self.class_prior),
            "confusion_prior": self.confusion_prior,
            "chains": self.chains,
            "rng": rng,
        }
        unlabelled = unlabelled_counts.astype(np.int64)
        sampler = gibbs_shared_errors if self.shared_errors else gibbs_confusion
        thin, warmup, start = self.thin, self.warmup, None
        if thin is None:
            pilot = sampler(
                patterns, labelled_counts, unlabelled, draws=PILOT_SWEEPS, warmup=warmup, **common
            )
            thin, warmup, start = _thinning(pilot["counts"]), 0, pilot["state"]
        return sampler(
            patterns,
            labelled_counts,
            unlabelled,
            draws=per_chain,
            warmup=warmup,
            thin=thin,
            start=start,
            **common,
        )


def _thinning(counts: np.ndarray) -> int:
    """Return the thinning that makes a draw of every system's accuracy about independent."""
    import arviz as az
    import xarray as xr

    accuracy = np.trace(counts, axis1=-2, axis2=-1) / counts.sum(axis=(-1, -2))
    moving = accuracy[..., accuracy.reshape(-1, accuracy.shape[-1]).std(axis=0) > 0]
    if moving.size == 0:  # every item labelled: the draws are the truth
        return 1
    ess = az.ess(xr.Dataset({"a": (("chain", "draw", "system"), moving)}), method="bulk")
    per_sweep = float(ess["a"].min()) / (moving.shape[0] * moving.shape[1])
    return int(np.clip(np.ceil(1 / per_sweep), 1, MAX_THIN)) if per_sweep > 0 else MAX_THIN


def _datatree(spec, draws, measures, names, n_items, n_labelled):
    import xarray as xr

    chains, per_chain = draws["class_prior"].shape[:2]
    classes = np.arange(spec.n_classes)
    coords = {
        "chain": np.arange(chains),
        "draw": np.arange(per_chain),
        "system": names,
        "true_class": classes,
        "predicted": classes,
    }
    sampled = ("chain", "draw")
    data = {
        "class_prior": (sampled + ("true_class",), draws["class_prior"]),
        "confusion": (sampled + ("system", "true_class", "predicted"), draws["confusion"]),
    }
    if "concentration" in draws:  # shared_errors: the Dirichlet process's alpha
        data["concentration"] = (sampled, draws["concentration"])
    with np.errstate(invalid="ignore", divide="ignore"):
        for m in measures:
            data[m.name] = (sampled + ("system",), measure_from_counts(m, draws["counts"]))
    attrs = {"engine": spec.engine, "n_items": n_items, "n_labelled": n_labelled}
    return xr.DataTree.from_dict({"posterior": xr.Dataset(data, coords=coords, attrs=attrs)})


def _observed(counts: np.ndarray, names: list[str]):
    import xarray as xr

    classes = np.arange(counts.shape[-1])
    return xr.DataTree(
        xr.Dataset(
            {"labelled_confusion": (("system", "true_class", "predicted"), counts)},
            coords={"system": names, "true_class": classes, "predicted": classes},
        )
    )


def _warn_on_mixing(tree, names: list[str]) -> None:
    import arviz as az

    posterior = tree["posterior"].to_dataset()[names]
    chains, per_chain = posterior.sizes["chain"], posterior.sizes["draw"]
    if per_chain < 4:  # too few draws for the diagnostics
        return
    wanted = min(MIN_ESS, chains * per_chain / 2)
    for name in names:
        draws = posterior[name]
        # systems whose measure is the same in every draw (known, or undefined) have nothing
        # to mix; the others are diagnosed together
        moving = draws.std(("chain", "draw")) > 0
        if not moving.any():
            continue
        draws = draws.isel(system=moving.values)
        with np.errstate(invalid="ignore", divide="ignore"):  # ties: a system that rarely moves
            e = float(az.ess(draws.to_dataset(), method="bulk")[name].min())
            r = float(az.rhat(draws.to_dataset())[name].max()) if chains > 1 else 1.0
        r = 1.0 if np.isnan(r) else r  # no variation within chains to compare with
        if not e >= wanted or not r <= 1.01:
            warnings.warn(
                f"SystemConfusion: `{name}` has bulk ESS {e:.0f} and r_hat {r:.3f} (wanted ESS "
                f">= {wanted:.0f} and r_hat <= 1.01); draw more (SystemConfusion(draws=...)) "
                "before trusting its intervals.",
                ConfusionWarning,
                stacklevel=3,
            )
