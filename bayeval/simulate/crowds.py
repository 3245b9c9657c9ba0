"""Simulated annotators: answers to items of known class, from each annotator's confusion.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> truth = rng.random(5) < 0.5
>>> item, who, answer = crowd_answers(truth, [0.9, 0.8, 0.7], [0.9, 0.8, 0.7], 2, rng)
>>> item.tolist(), sorted(set(who.tolist())) <= [0, 1, 2], answer.size
([0, 0, 1, 1, 2, 2, 3, 3, 4, 4], True, 10)
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["class_answers", "crowd_answers", "noisy_labels", "simulated_crowd"]


def crowd_answers(
    truth: Any, sensitivity: Any, specificity: Any, per_item: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw ``per_item`` answers for each item, from distinct annotators chosen at random.

    Parameters
    ----------
    truth : array_like of bool
        Each item's true label.
    sensitivity, specificity : array_like of float
        Each annotator's chance of answering 1 for a positive and 0 for a negative.
    per_item : int
        Answers per item (at most the number of annotators).
    rng : numpy.random.Generator
        The source of the annotators' choice and of their answers.

    Returns
    -------
    item, annotator, answer : numpy.ndarray
        One entry per answer: the item's index, the annotator's index and the 0/1 answer.
    """
    truth = np.asarray(truth, dtype=bool)
    sensitivity, specificity = np.asarray(sensitivity), np.asarray(specificity)
    item = np.repeat(np.arange(truth.size), per_item)
    who = np.concatenate([rng.choice(sensitivity.size, per_item, replace=False)
                          for _ in range(truth.size)])  # fmt: skip
    p_one = np.where(truth[item], sensitivity[who], 1 - specificity[who])
    return item, who, (rng.random(item.size) < p_one).astype(int)


def simulated_crowd(
    rng: np.random.Generator, n_items: int, n_annotators: int, per_item: int, prevalence=0.3
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Draw a crowd: items, annotators of known sensitivity and specificity, their answers.

    Each item is positive with probability ``prevalence``; each annotator's sensitivity and
    specificity are uniform on [0.6, 0.95]; each item is answered by ``per_item`` of them.

    Returns
    -------
    truth : numpy.ndarray of int
    item, annotator, answer : numpy.ndarray
        One entry per answer (:func:`crowd_answers`).
    accuracy : numpy.ndarray
        Each annotator's chance of a right answer, ``prevalence * sensitivity +
        (1 - prevalence) * specificity``.
    """
    truth = (rng.random(n_items) < prevalence).astype(int)
    sensitivity = rng.uniform(0.6, 0.95, n_annotators)
    specificity = rng.uniform(0.6, 0.95, n_annotators)
    item, who, answer = crowd_answers(truth, sensitivity, specificity, per_item, rng)
    accuracy = prevalence * sensitivity + (1 - prevalence) * specificity
    return truth, item, who, answer, accuracy


def noisy_labels(
    truth: Any, n_labelled: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list]:
    """Label ``n_labelled`` items drawn uniformly, each by 3 of 6 annotators right on 65–85%.

    The setting where the annotators' noise dominates a measure's interval (the majority of
    three is wrong on about one item in eight): each annotator is right with one chance for
    either class, drawn uniformly from [0.65, 0.85].

    Returns
    -------
    labelled : numpy.ndarray
        The items' positions, in the order drawn.
    item, answer : numpy.ndarray
        One entry per answer: the item's position and the 0/1 answer (three per item, in
        the order of ``labelled``).
    majority : numpy.ndarray of bool
        Each labelled item's majority answer.
    annotators : list of str
        Who gave each answer (``"a0"`` .. ``"a5"``).
    """
    truth = np.asarray(truth, dtype=bool)
    labelled = rng.choice(truth.size, n_labelled, replace=False)
    accuracy = rng.uniform(0.65, 0.85, 6)
    item = np.repeat(labelled, 3)
    who = np.concatenate([rng.choice(6, 3, replace=False) for _ in labelled])
    answer = np.where(rng.random(item.size) < accuracy[who], truth[item], ~truth[item])
    majority = answer.reshape(-1, 3).sum(axis=1) >= 2
    return labelled, item, answer.astype(int), majority, [f"a{w}" for w in who]


def class_answers(
    truth: Any, accuracy: Any, n_classes: int, per_item: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw ``per_item`` answers of distinct annotators for each item of a multiclass truth.

    Annotator ``a`` answers the true class with probability ``accuracy[a]``, otherwise one of
    the other ``n_classes - 1`` classes at random.

    Returns
    -------
    item, annotator, answer : numpy.ndarray
        One entry per answer: the item's index, the annotator's index and the class answered.
    """
    truth, accuracy = np.asarray(truth), np.asarray(accuracy)
    item = np.repeat(np.arange(truth.size), per_item)
    who = np.concatenate([rng.choice(accuracy.size, per_item, replace=False)
                          for _ in range(truth.size)])  # fmt: skip
    wrong = (truth[item] + rng.integers(1, n_classes, item.size)) % n_classes
    answer = np.where(rng.random(item.size) < accuracy[who], truth[item], wrong)
    return item, who, answer
