"""Fully labelled pools with an automatic judge: where a judge helps, misleads or says nothing.

Every pool has the same system: ``size`` items, a share ``prevalence`` positive, each item's
logit-score ``s = 3 y - 1.5 + Normal(0, 1.5)`` and its score ``sigmoid(3 s)``, overconfident
(the scores are not probabilities), predicted positive at ``score >= 0.5``. The pools differ
in the judge:

- ``accurate``: the truth, flipped on 5% of the items.
- ``biased``: says 1 on 95% of the positives and on 30% of the negatives (a lenient judge).
- ``easy-hard``: right on 97% of the items the system finds easy (``|s| >= 1``) and on 60% of
  the hard ones, where the system's own errors are.
- ``uninformative``: a coin flip, whatever the item.
- ``probability``: a probability, ``sigmoid(2.5 (2 y - 1) + Normal(0, 1.5))``, over-confident
  and wrong on about one item in eight.
- ``rare``: the accurate judge on a pool with 0.5% positives, so that most of the judge's
  1s are its mistakes.

Examples
--------
>>> pool, truth = judge_pool("biased", size=2_000, rng=0)
>>> pool.size, pool.judge.dtype, round(float(truth.mean()), 2)
(2000, dtype('int8'), 0.1)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayeval._constraints import Integer, OneOf, Optional, Prob, Seed, validate

__all__ = ["JUDGE_POOLS", "judge_pool"]

JUDGE_POOLS = ("accurate", "biased", "easy-hard", "uninformative", "probability", "rare")


@validate(
    name=OneOf(JUDGE_POOLS), size=Integer(minimum=100), prevalence=Optional(Prob()), rng=Seed()
)
def judge_pool(
    name: str, *, size: int = 20_000, prevalence: float | None = None, rng: Any = 0
) -> tuple[Any, np.ndarray]:
    """Return a pool with an automatic judge and the true label of every item.

    Parameters
    ----------
    name : str
        One of :data:`JUDGE_POOLS` (the module notes say what each judge does).
    size : int, default 20,000
        Items in the pool.
    prevalence : float, optional
        Share of positives; default 0.1 (0.005 for ``"rare"``).
    rng : int or numpy.random.Generator, default 0
        Seed of the pool (the truth, the scores and the judge).

    Returns
    -------
    pool : bayeval.Pool
        Scores, predictions and ``judge``.
    truth : numpy.ndarray of bool
    """
    from bayeval.pool import Pool

    rng = np.random.default_rng(rng)
    if prevalence is None:
        prevalence = 0.005 if name == "rare" else 0.1
    truth = rng.random(size) < prevalence
    s = 3.0 * truth - 1.5 + rng.normal(0.0, 1.5, size)
    scores = 1.0 / (1.0 + np.exp(-3.0 * s))
    u = rng.random(size)
    if name in ("accurate", "rare"):
        judge = truth ^ (u < 0.05)
    elif name == "biased":
        judge = np.where(truth, u < 0.95, u < 0.30)
    elif name == "easy-hard":
        judge = truth ^ (u < np.where(np.abs(s) < 1.0, 0.40, 0.03))
    elif name == "uninformative":
        judge = u < 0.5
    else:  # probability
        logit = 2.5 * (2.0 * truth - 1.0) + rng.normal(0.0, 1.5, size)
        judge = 1.0 / (1.0 + np.exp(-logit))
    return Pool(scores, judge=judge), truth
