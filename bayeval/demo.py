"""The ``bayeval demo`` walk-through: intervals from a stratified sample of a real scored pool.

The bundled FEBRL pool (:func:`bayeval.datasets.load_febrl_pairs`) has every record pair scored
by a classifier and a known true label, so the true recall, precision and F1 of its predictions
are known and the intervals can be checked against them. The unretrieved segment (pairs predicted
non-matching) is split into score strata, because the few missed matches sit just below the
decision threshold; each stratum is sampled without replacement and "labelled" from the truth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bayeval.stratified_sample import StratifiedSample

__all__ = ["DEMO_DESIGN", "DemoResult", "plot_demo", "run_demo"]

LESSON = (
    "Precision is pinned down by 80 labels of the retrieved pairs. Recall is not: the 426,349 "
    "'far' pairs hold no true match, but a sample of 150 of them cannot tell 0 matches from a "
    "few thousand (the rule of three), so the posterior keeps that possibility and the recall "
    "interval stays wide and low. normal-mle's narrow interval is overconfidence: a stratum "
    "with no sampled positive contributes zero variance (Webber 2013, §3.2). Certifying high "
    "recall here needs far more labels where matches are rare, or adaptive importance "
    "sampling."
)

# (stratum, in retrieved segment?, lower score bound, upper score bound, sample size)
DEMO_DESIGN = (
    ("retrieved", True, 0.5, np.inf, 80),
    ("edge", False, 0.1, 0.5, 60),
    ("near", False, 1e-3, 0.1, 150),
    ("far", False, -np.inf, 1e-3, 150),
)
DEMO_METHODS = {
    "recall": [
        "beta-binomial-half",
        "beta-binomial-uniform",
        "beta-jeffreys",
        "normal-mle",
        "normal-laplace",
    ],
    "precision": ["beta-binomial-half", "wilson", "clopper-pearson"],
    "f1": ["beta-binomial-half", "beta-jeffreys"],
}


@dataclass(frozen=True)
class DemoResult:
    """What the demo computed: the sample, the truth, and a table of intervals."""

    sample: StratifiedSample
    truth: dict[str, float]
    table: pd.DataFrame


def draw_febrl_sample(rng: np.random.Generator) -> tuple[StratifiedSample, dict[str, float]]:
    """Stratify the FEBRL pool by score, sample each stratum, and label from the truth.

    Returns
    -------
    sample : StratifiedSample
    truth : dict
        The pool's true recall, precision and F1 of the classifier's predictions.
    """
    from bayeval.datasets import load_febrl_pairs

    pairs = load_febrl_pairs()
    score = pairs["score"].to_numpy()
    label = pairs["label"].to_numpy()
    predicted = pairs["predicted"].to_numpy()
    population, sampled, positives, retrieved, names = [], [], [], [], []
    for name, is_retrieved, low, high, size in DEMO_DESIGN:
        members = np.flatnonzero((predicted == is_retrieved) & (score >= low) & (score < high))
        chosen = rng.choice(members, size=min(size, members.size), replace=False)
        population.append(members.size)
        sampled.append(chosen.size)
        positives.append(int(label[chosen].sum()))
        retrieved.append(is_retrieved)
        names.append(name)
    tp = int((label & predicted).sum())
    truth = {
        "recall": tp / int(label.sum()),
        "precision": tp / int(predicted.sum()),
        "f1": 2 * tp / (int(label.sum()) + int(predicted.sum())),
    }
    return StratifiedSample(population, sampled, positives, retrieved, names), truth


def run_demo(rng: int | np.random.Generator = 2013, prob: float = 0.95) -> DemoResult:
    """Draw the demo sample and compute every demo interval.

    Examples
    --------
    >>> from bayeval.demo import run_demo
    >>> result = run_demo()
    >>> int(result.sample.sampled.sum())
    440
    >>> covered = (result.table["lower"] <= result.table["truth"]) & (
    ...     result.table["truth"] <= result.table["upper"])
    >>> bool(covered.loc["precision", "beta-binomial-half"])
    True
    """
    import bayeval as be

    gen = np.random.default_rng(rng)
    sample, truth = draw_febrl_sample(gen)
    functions = {
        "recall": be.recall_interval,
        "precision": be.precision_interval,
        "f1": be.f1_interval,
    }
    rows = []
    for measure, methods in DEMO_METHODS.items():
        for method in methods:
            res = functions[measure](sample, method=method, prob=prob, rng=gen)
            row = res.summary().reset_index().iloc[0].to_dict()
            row["truth"] = truth[measure]
            rows.append(row)
    table = pd.DataFrame(rows).set_index(["measure", "method"])
    return DemoResult(sample, truth, table)


def plot_demo(result: DemoResult, axes: Any = None) -> np.ndarray:
    """Plot the intervals of every measure next to the truth, one panel per measure.

    Parameters
    ----------
    result : DemoResult
        The intervals and the truth to plot, from :func:`run_demo`.
    axes : sequence of matplotlib Axes, optional
        One per measure; default a new figure with a row of them.

    Returns
    -------
    numpy.ndarray of matplotlib Axes
    """
    measures = list(DEMO_METHODS)
    if axes is None:
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(1, len(measures), figsize=(11, 3.2), layout="constrained")
    axes = np.asarray(axes).reshape(-1)
    for ax, measure in zip(axes, measures, strict=True):
        part = result.table.loc[measure]
        y = np.arange(len(part))
        ax.errorbar(
            part["estimate"],
            y,
            xerr=[part["estimate"] - part["lower"], part["upper"] - part["estimate"]],
            fmt="o",
            capsize=3,
        )
        ax.axvline(result.truth[measure], color="black", linestyle="--", label="truth")
        ax.set_yticks(y, part.index)
        ax.set_title(measure)
        ax.invert_yaxis()
    axes[0].legend(loc="center left", fontsize=8)
    axes[0].figure.suptitle(f"FEBRL pool, {int(result.sample.sampled.sum())} labels: 95% intervals")
    return axes
