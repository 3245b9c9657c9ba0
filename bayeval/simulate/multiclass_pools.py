"""Fully labelled multiclass pools: a system's predicted class, its confidence, the truth.

Each pool breaks an assumption a model of multiclass labels could lean on, so that the
coverage of :class:`bayeval.models.ClassCalibration`'s intervals is measured where it is hard:

- ``"calibrated"``: five classes of unequal prevalence; the system is right with probability
  equal to its confidence, its errors spread evenly.
- ``"overconfident"``: the confidence overstates the accuracy (right with probability
  ``confidence**4``) and the errors fall mostly on one neighbouring class.
- ``"hidden"``: items of the rarest class are predicted as the commonest class at high
  confidence six times in ten, so its errors hide among confident predictions.
- ``"rare"``: one class holds half a percent of the items.
- ``"many-classes"``: twenty classes of Zipf-like prevalence.

:func:`multiclass_judge` adds an automatic judge's class for every item, one that helps,
misleads or says nothing (:data:`MULTICLASS_JUDGES`):

- ``"accurate"``: the true class on 90% of the items, another class at random otherwise.
- ``"biased"``: the commonest class on 40% of the items of every other class, otherwise as
  the accurate judge (a judge drawn to one answer).
- ``"easy-hard"``: right on 97% of the items the system is surer of than its median and on
  half of the others, where the system's own errors are.
- ``"echo"``: the system's own prediction on 80% of the items and the truth on the rest, so
  that it shares the system's mistakes (a judge that agrees is then no evidence).
- ``"uninformative"``: a class drawn at random, whatever the item.

Examples
--------
>>> import numpy as np
>>> predicted, confidence, truth = multiclass_pool("hidden", np.random.default_rng(0))
>>> predicted.shape, int(truth.max()) + 1
((20000,), 5)
>>> round(float((predicted[truth == 4] == 4).mean()), 2)  # the rare class's recall
0.27
>>> judge = multiclass_judge("echo", predicted, confidence, truth, np.random.default_rng(1))
>>> round(float((judge == predicted).mean()), 2), round(float((judge == truth).mean()), 2)
(0.93, 0.69)
"""

from __future__ import annotations

import numpy as np

__all__ = ["MULTICLASS_JUDGES", "MULTICLASS_POOLS", "multiclass_judge", "multiclass_pool"]

MULTICLASS_POOLS = ("calibrated", "overconfident", "hidden", "rare", "many-classes")
MULTICLASS_JUDGES = ("accurate", "biased", "easy-hard", "echo", "uninformative")


def multiclass_pool(
    kind: str, rng: np.random.Generator, size: int = 20_000
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw a pool of ``kind`` (one of :data:`MULTICLASS_POOLS`).

    Returns
    -------
    predicted, confidence, truth : numpy.ndarray
        Each item's predicted class, the system's confidence in it (in (0, 1]) and its true
        class.
    """
    if kind not in MULTICLASS_POOLS:
        raise ValueError(f"`kind` must be one of {list(MULTICLASS_POOLS)}; got {kind!r}.")
    if kind == "many-classes":
        prevalence = 1 / np.arange(1, 21)
    elif kind == "rare":
        prevalence = np.array([0.45, 0.3, 0.15, 0.095, 0.005])
    else:
        prevalence = np.array([0.4, 0.25, 0.15, 0.12, 0.08])
    C = prevalence.size
    truth = rng.choice(C, size=size, p=prevalence / prevalence.sum())
    confidence = rng.uniform(0.6 if kind == "overconfident" else 0.3, 1.0, size)
    p_right = confidence**4 if kind == "overconfident" else confidence
    right = rng.random(size) < p_right
    other = (truth + rng.integers(1, C, size)) % C  # any other class, evenly
    if kind == "overconfident":
        other = np.where(rng.random(size) < 0.7, (truth + 1) % C, other)
    predicted = np.where(right, truth, other)
    if kind == "hidden":
        hide = (truth == C - 1) & (rng.random(size) < 0.6)
        predicted[hide] = 0
        confidence[hide] = rng.uniform(0.9, 1.0, int(hide.sum()))
    return predicted, confidence, truth


def multiclass_judge(
    kind: str,
    predicted: np.ndarray,
    confidence: np.ndarray,
    truth: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Return an automatic judge's class for every item of a pool (see the module notes).

    ``kind`` is one of :data:`MULTICLASS_JUDGES`; ``predicted``, ``confidence`` and ``truth``
    are a pool's, as :func:`multiclass_pool` returns them.
    """
    if kind not in MULTICLASS_JUDGES:
        raise ValueError(f"`kind` must be one of {list(MULTICLASS_JUDGES)}; got {kind!r}.")
    C, size = int(max(predicted.max(), truth.max())) + 1, truth.size
    other = (truth + rng.integers(1, C, size)) % C  # another class, evenly
    u = rng.random(size)
    if kind == "uninformative":
        return rng.integers(0, C, size)
    if kind == "echo":
        return np.where(u < 0.8, predicted, truth)
    if kind == "easy-hard":
        wrong = np.where(confidence > np.median(confidence), 0.03, 0.5)
        return np.where(u < wrong, other, truth)
    judge = np.where(u < 0.1, other, truth)  # accurate
    if kind == "biased":
        drawn = (truth != 0) & (rng.random(size) < 0.4)
        judge = np.where(drawn, 0, judge)
    return judge
