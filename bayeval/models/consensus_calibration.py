"""A model of the label given many systems' predictions: their consensus, calibrated by labels.

The systems' predictions are reduced to one score per item, the log-odds of a Dawid-Skene model
fitted without labels (:func:`bayeval._core.consensus.consensus_log_odds`); the label is then
modelled from that score as :class:`~bayeval.models.ScoreCalibration` models it from a system's
score, a curve learned from the labels. The consensus is treated as a score, not as a
probability: where systems share errors it is overconfident, and the learned curve flattens it.
Model card: ``models/system_confusion/spec.md`` (the section on the consensus).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from bayeval._constraints import Instance, Integer, validate_fields
from bayeval._core import calibration as kernel
from bayeval._core.consensus import consensus_log_odds
from bayeval._validation import check_rng
from bayeval.models._systems import (
    binary_confusion_draws,
    check_labelled,
    check_measure,
    check_predictions,
    measure_from_counts,
    system_names,
)
from bayeval.models.score_calibration import ScoreCalibration

__all__ = ["ConsensusCalibration"]


@dataclass(frozen=True, kw_only=True)
@validate_fields(
    calibration=Instance(
        ScoreCalibration, "a bayeval.models.ScoreCalibration", example=ScoreCalibration
    ),
    iterations=Integer(minimum=1),
)
class ConsensusCalibration:
    """The label of each item from the systems' consensus, calibrated by the labels.

    Each item's score is the log-odds of a positive under a Dawid-Skene model of the systems'
    predictions fitted *without* the labels (so the labels are used once, by the curve); the
    probability of a positive is then ``ScoreCalibration``'s learned curve of that score, with
    its floor and ceiling gap. Labelled items are known; the unlabelled ones are drawn from the
    posterior predictive, and each draw gives every system's confusion counts on *this* pool.

    Parameters
    ----------
    calibration : bayeval.models.ScoreCalibration, default ScoreCalibration()
        The curve: its priors, floor, draws, chains and engine (one floor prior).
    iterations : int, default 500
        At most this many EM steps for the consensus.

    Notes
    -----
    The curve sees each item only through the consensus: a system that is right where the
    consensus is wrong is credited only as often as the labels show the consensus wrong at that
    score, so the best systems' measures are pulled toward the crowd's (measured in the model
    card; the comparison's P(best) is then cautious rather than overconfident).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models import ConsensusCalibration
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(3_000) < 0.4
    >>> right = rng.random((3_000, 5)) < [0.95, 0.9, 0.85, 0.8, 0.75]
    >>> predictions = np.where(right, truth[:, None], ~truth[:, None]).astype(int)
    >>> labelled = rng.choice(3_000, 200, replace=False)
    >>> dt = ConsensusCalibration().posterior(predictions, labelled, truth[labelled], rng=1)
    >>> accuracy = dt["posterior"]["accuracy"]
    >>> [round(float(v), 2) for v in accuracy.median(("chain", "draw"))]
    [0.94, 0.9, 0.86, 0.81, 0.73]
    >>> [round(float(v), 2) for v in (predictions == truth[:, None]).mean(axis=0)]  # the truth
    [0.95, 0.91, 0.86, 0.81, 0.73]
    """

    calibration: ScoreCalibration = field(default_factory=ScoreCalibration)
    iterations: int = 500

    def __post_init__(self):
        """Refuse a robust calibration (several floor priors): one posterior is drawn."""
        if len(self.calibration.floors) > 1:
            raise ValueError(
                "`calibration` must have one floor prior for ConsensusCalibration; got "
                f"floor={self.calibration.floor!r}."
            )

    def consensus(self, predictions: Any) -> np.ndarray:
        """Return each item's consensus log-odds of a positive (the score the curve calibrates).

        Parameters
        ----------
        predictions : array_like of {0, 1}, shape (n_items, n_systems)
            Each system's prediction of each item.
        """
        preds = check_predictions(predictions, 2)
        patterns, inverse = np.unique(preds, axis=0, return_inverse=True)
        sizes = np.bincount(inverse, minlength=patterns.shape[0]).astype(float)
        return consensus_log_odds(patterns, sizes, iterations=self.iterations)[inverse]

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
        """Posterior of the curve and of each system's measures on this pool.

        Parameters
        ----------
        predictions : array_like of {0, 1}, shape (n_items, n_systems)
            Each system's prediction of each item.
        labelled : array_like of int
            Positions of the labelled items (distinct).
        labels : array_like of {0, 1}
            Their labels, in the order of ``labelled``.
        measures : sequence of str or bayeval.measures.Measure, default ("accuracy",)
            Measures of a system's predictions.
        systems : sequence of str, optional
            Names of the systems; default ``"system0", "system1", ...``.
        rng : int, numpy.random.Generator or None
            Seed or generator of every draw.

        Returns
        -------
        xarray.DataTree
            The groups of :meth:`ScoreCalibration.posterior` for the curve of the consensus
            (``posterior``: ``intercept``, ``slope``, ``floor``, ``ceiling_gap``; ``prior``,
            ``posterior_predictive``, ``log_likelihood``, ``observed_data`` over its rows), and
            in ``posterior`` each measure with dim ``system``; ``constant_data`` also holds
            ``consensus``, each item's score (dim ``item``).
        """
        import xarray as xr

        from bayeval.measures import Accuracy
        from bayeval.pool import Pool

        rng = check_rng(rng)
        preds = check_predictions(predictions, 2)
        n_items, K = preds.shape
        positions, classes = check_labelled(labelled, labels, n_items, 2)
        if positions.size == 0:
            raise ValueError(
                "ConsensusCalibration needs labels to learn the curve from; got no labelled items."
            )
        names = system_names(systems, K)
        measure_list = [check_measure(m, 2) for m in measures]
        score = self.consensus(preds)
        # the consensus probability as a pool's score: its logit, clipped at +/-13.8, is the
        # covariate of the curve
        bound = self.calibration.bind(Pool(special.expit(score)), Accuracy())
        fit = bound.fit(positions, classes, rng=rng)

        def probability(items):  # the curve at each item's consensus, in every draw
            t = bound.covariate(items)
            return kernel.positive_probability(fit.theta, bound.prior, t, np.zeros(items.size, int))

        counts = binary_confusion_draws(
            preds, positions, classes, probability, fit.theta.shape[0], rng
        )
        tree = fit.to_datatree()
        posterior = tree["posterior"].to_dataset().drop_vars("accuracy")
        chains, per_chain = posterior.sizes["chain"], posterior.sizes["draw"]
        posterior = posterior.assign_coords(system=names)
        with np.errstate(invalid="ignore", divide="ignore"):
            for m in measure_list:
                values = measure_from_counts(m, counts).reshape(chains, per_chain, K)
                posterior[m.name] = (("chain", "draw", "system"), values)
        posterior.attrs["n_items"], posterior.attrs["n_labelled"] = n_items, positions.size
        groups = {node.path.lstrip("/"): node.to_dataset() for node in tree.subtree}
        groups.pop("", None)
        groups["posterior"] = posterior
        groups["prior"] = groups["prior"].drop_vars("accuracy")
        constant = groups.get("constant_data", xr.Dataset())
        groups["constant_data"] = constant.assign(consensus=("item", score))
        return xr.DataTree.from_dict(groups)
