"""Drive a sampler's ask/tell loop with an oracle until the label budget is spent."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayeval._constraints import AnyOf, Instance, Integer, OneOf, Optional, Prob, Seed, validate
from bayeval._validation import check_choice
from bayeval.measures.registry import by_name
from bayeval.sampling.base import Sampler
from bayeval.sampling.estimate import Estimate

__all__ = ["BINARY_SAMPLERS", "SAMPLERS", "Run", "evaluate", "labeller", "sampler_class"]

#: The samplers that take a pool of yes/no labels (the honesty battery's).
BINARY_SAMPLERS = ("ais", "oasis", "passive", "static_is", "stochastic_ais", "stratified")
#: The samplers that estimate a measure (:func:`evaluate`, the command line's ``--sampler``):
#: ``"active_stratified"`` takes a multiclass pool only.
SAMPLERS = (*BINARY_SAMPLERS, "active_stratified")
#: Every sampler by name, model selection and a precision curve's included (what a session may
#: hold).
ALL_SAMPLERS = (*SAMPLERS, "model_selection", "curve")


def sampler_class(name: str) -> type[Sampler]:
    """Return the sampler class of a name in :data:`ALL_SAMPLERS`.

    Examples
    --------
    >>> sampler_class("static_is").__name__
    'StaticIS'
    """
    from bayeval.sampling import (
        AIS,
        OASIS,
        ActiveStratified,
        CurveSampler,
        ModelSelection,
        Passive,
        StaticIS,
        StochasticAIS,
        Stratified,
    )

    name = check_choice(name, ALL_SAMPLERS, "sampler")
    classes = (AIS, ActiveStratified, CurveSampler, OASIS, ModelSelection, Passive, StaticIS,
               StochasticAIS, Stratified)  # fmt: skip
    return {cls.method: cls for cls in classes}[name]


@dataclass(frozen=True)
class Run:
    """The outcome of :func:`evaluate`.

    Attributes
    ----------
    sampler : Sampler
        The sampler, with every label (it can go on: ``run.sampler.ask(...)``).
    estimate : Estimate
        The final estimate.
    history : xarray.Dataset
        ``estimate``, ``lower``, ``upper`` (the design basis's estimate and ``prob`` interval,
        which fall back to the posterior's where the design gives none; attributes ``ci_prob``,
        ``ci_kind`` and ``basis``), ``value`` (the sampler's own design estimate,
        :attr:`Estimate.value`: NaN where undefined, never a fallback) and ``se`` over dims
        ``labels`` (labels used
        after each stage), ``system`` (several systems), ``measure`` and ``threshold``
        (precision-recall curves).
    """

    sampler: Sampler
    estimate: Estimate
    history: Any


@validate(
    budget=Integer(minimum=1),
    sampler=Optional(AnyOf(Instance(Sampler, "a bayeval.sampling.Sampler"), OneOf(SAMPLERS))),
    batch_size=Integer(minimum=1),
    prob=Prob(),
    rng=Seed(),
)
def evaluate(
    pool: Any,
    measure: Any,
    oracle: Any,
    budget: int,
    sampler: str | Sampler | None = None,
    *,
    batch_size: int = 50,
    prob: float = 0.95,
    rng: Any = None,
    progress: Callable[[int, Estimate], None] | None = None,
    **sampler_options: Any,
) -> Run:
    """Label ``budget`` items chosen by a sampler and estimate ``measure`` after every stage.

    Parameters
    ----------
    pool : bayeval.Pool
        The items to sample from, with their scores.
    measure : bayeval.measures.Measure or str
        A binary-label measure; with several systems in the pool it is applied to each. Or a
        name (:func:`bayeval.measures.by_name`): on a multiclass pool ``"accuracy"``,
        ``"balanced_accuracy"``, ``"macro_f1"`` or ``"micro_f1"``.
    oracle : array_like, callable or bayeval.oracles.Oracle
        The true labels of every pool item (in pool order), a function from an array of ids
        to their 0/1 labels (a multiclass pool: class indices or names), or an oracle over
        pool positions.
    budget : int
        Distinct items to label, at most the pool size.
    sampler : str or Sampler, optional
        A name of :data:`SAMPLERS` ("ais", "oasis", "passive", "static_is", "stochastic_ais",
        "stratified", "active_stratified"), built with ``sampler_options``, ``batch_size`` and
        ``rng``, or a sampler. Default ``"ais"``; ``"passive"`` on a multiclass pool (which
        also takes ``"stratified"`` and ``"active_stratified"``).
    batch_size : int, default 50
        Items per stage (the last stage may be smaller, to end at ``budget``).
    prob : float, default 0.95
        Probability of the intervals in ``history``.
    rng : int or numpy.random.Generator, optional
        Seed of the sampler built from a name (a ``Sampler`` instance keeps its own).
    progress : callable, optional
        Called as ``progress(labels_used, estimate)`` after every stage.
    **sampler_options
        Passed to the sampler's constructor.

    Returns
    -------
    Run

    Examples
    --------
    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(5000) < 0.05
    >>> scores = np.where(truth, rng.beta(5, 2, 5000), rng.beta(1, 8, 5000))
    >>> run = be.evaluate(be.Pool(scores), be.measures.Precision(), truth, budget=200,
    ...                   sampler="static_is", rng=0)
    >>> run.history.sizes["labels"], run.estimate.labels_used
    (4, 200)
    """
    if budget > pool.size:
        raise ValueError(f"`budget` must be at most the pool size ({pool.size}); got {budget}.")
    multiclass = getattr(pool, "classes", None) is not None
    if isinstance(measure, str):
        measure = by_name(measure, n_classes=pool.n_classes if multiclass else None)
    if sampler is None:
        sampler = "passive" if multiclass else "ais"
    if isinstance(sampler, Sampler):
        if sampler_options:
            raise ValueError(
                "`sampler_options` apply only when `sampler` is a name; got a Sampler and "
                f"{sorted(sampler_options)}."
            )
        instance = sampler
    else:
        cls = sampler_class(sampler)
        instance = cls(pool, measure, batch_size=batch_size, rng=rng, **sampler_options)
    label = labeller(oracle, pool)
    rows, stages = [], []
    while instance.labels_used < budget:
        ids = instance.ask(min(batch_size, budget - instance.labels_used))
        instance.tell(ids, label(ids))
        est = instance.estimate()
        rows.append((*est.per_output(prob), est.value, est.standard_error))
        stages.append(instance.labels_used)
        if progress is not None:
            progress(instance.labels_used, est)
    return Run(instance, est, _history(rows, stages, est.outputs, prob))


def labeller(oracle: Any, pool: Any) -> Callable[[np.ndarray], np.ndarray]:
    """Return a function from pool ids to labels: ``oracle`` as labels, function or Oracle."""
    from bayeval.oracles import Oracle

    if isinstance(oracle, Oracle):
        return lambda ids: oracle.label(pool.positions(ids))
    if callable(oracle):
        return lambda ids: np.asarray(oracle(ids))
    truth = np.asarray(oracle)
    if truth.shape != (pool.size,):
        raise ValueError(
            f"`oracle` given as labels must hold one label per pool item ({pool.size}); got "
            f"shape {truth.shape}."
        )
    return lambda ids: truth[pool.positions(ids)]


def _history(rows, stages, outputs, prob):
    import xarray as xr

    from bayeval.measures.layout import label_outputs

    estimate, lower, upper, value, se = (np.array(col) for col in zip(*rows, strict=True))
    dims = ("labels", "output")
    history = xr.Dataset(
        {
            "estimate": (dims, estimate),
            "lower": (dims, lower),
            "upper": (dims, upper),
            "value": (dims, value),
            "se": (dims, se),
        },
        coords={"labels": stages, "output": list(outputs)},
        attrs={"ci_prob": prob, "ci_kind": "eti", "basis": "design"},
    )
    return label_outputs(history)
