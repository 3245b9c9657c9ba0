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

Examples
--------
>>> import numpy as np
>>> predicted, confidence, truth = multiclass_pool("hidden", np.random.default_rng(0))
>>> predicted.shape, int(truth.max()) + 1
((20000,), 5)
>>> round(float((predicted[truth == 4] == 4).mean()), 2)  # the rare class's recall
0.27
"""

from __future__ import annotations

import numpy as np

__all__ = ["MULTICLASS_POOLS", "multiclass_pool"]

MULTICLASS_POOLS = ("calibrated", "overconfident", "hidden", "rare", "many-classes")


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
