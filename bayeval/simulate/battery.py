"""The honesty battery: intervals scored on fully labelled pools that break their assumptions.

Each pool of :data:`BATTERY_POOLS` is fully labelled, so every run of a sampler on it can be
scored: after each budget, does the 95% interval of precision, recall and F1 hold the pool's
true value? Three intervals are scored side by side: the design-based one
(``kind="confidence"``), the credible interval of the default model of the labels
(:class:`bayeval.models.ScoreCalibration`) and that of its robust variant
(:meth:`ScoreCalibration.robust`: the hull over a class of floor priors).

- ``separated``: 100,000 items, 0.2% positives, scores Beta(6, 2) / Beta(1, 12): well
  separated and not probabilities (the README's pool).
- ``hidden``: 100,000 items, 1% positives, overconfident scores (Beta(12, 0.5) / Beta(0.5,
  12)), 30% of the positives scored like negatives.
- ``calibrated``: 100,000 items, scores Beta(0.2, 4), each label Bernoulli(score).
- ``febrl``: the bundled FEBRL pool (499,500 record pairs, 500 matches).
- ``shuttle``: UCI Statlog (Shuttle), 24,549 records, 1,756 anomalies, scored by a logistic
  regression trained on the other half (AUC 0.985).
- ``lending_club``: modeldata's Lending Club loans, 4,929, 259 bad, scored likewise (AUC 0.73);
  the top 5% of scores are predicted bad (a 0.5 threshold flags only 9 loans).
- ``extreme``: 1,000,000 items, 10 positives, scores Beta(6, 2) / Beta(1, 12).

Predictions are ``score >= 0.5`` unless said otherwise. The pools are fixed (seed 0); runs
differ in the sampler's seed, so coverage is that of the design over this finite population.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from bayeval._constraints import (
    Instance,
    Integer,
    OneOf,
    Optional,
    Prob,
    Seed,
    SequenceOf,
    Whole,
    validate,
)
from bayeval.sampling.run import BINARY_SAMPLERS

__all__ = ["BATTERY_POOLS", "battery_pool", "coverage_battery", "honesty_run"]

BATTERY_POOLS = ("separated", "hidden", "calibrated", "febrl", "shuttle", "lending_club", "extreme")
MEASURES = ("precision", "recall", "f1")
INTERVALS = ("design", "default", "robust")
#: Label counts at which a run is scored.
BUDGETS = SequenceOf(Whole(minimum=1))


@validate(name=OneOf(BATTERY_POOLS), size=Optional(Integer(minimum=100)))
def battery_pool(name: str, *, size: int | None = None) -> tuple[Any, np.ndarray]:
    """Return a pool of the battery and its true labels.

    Parameters
    ----------
    name : str
        One of :data:`BATTERY_POOLS`.
    size : int, optional
        Items of a synthetic pool (default: the battery's size); ignored for the real pools
        (``febrl``, ``shuttle``, ``lending_club``).

    Returns
    -------
    pool : bayeval.Pool
    truth : numpy.ndarray of bool

    Examples
    --------
    >>> pool, truth = battery_pool("hidden", size=10_000)
    >>> pool.size, int(truth.sum())
    (10000, 100)
    """
    return _cached_pool(name, size)


@functools.lru_cache(maxsize=4)
def _cached_pool(name: str, size: int | None) -> tuple[Any, np.ndarray]:
    """Build a battery pool once per process (they are fixed; runs only read them)."""
    from bayeval.pool import Pool

    if name == "febrl":
        from bayeval.datasets import load_febrl_pairs

        frame = load_febrl_pairs()
        return Pool(frame["score"].to_numpy(np.float64)), frame["label"].to_numpy(bool)
    if name in ("shuttle", "lending_club"):
        from bayeval import datasets

        scores, labels = getattr(datasets, f"load_{name}_pool")()
        if name == "lending_club":  # a weak scorer: flag the top 5% (about the bad-loan rate)
            return Pool(scores, threshold=float(np.quantile(scores, 0.95))), labels
        return Pool(scores), labels
    default = 1_000_000 if name == "extreme" else 100_000
    M = default if size is None else size
    rng = np.random.default_rng(0)
    if name == "calibrated":
        scores = rng.beta(0.2, 4, M)
        truth = rng.random(M) < scores
        return Pool(scores), truth
    n_pos = {"separated": round(0.002 * M), "hidden": round(0.01 * M), "extreme": 10}[name]
    truth = np.zeros(M, dtype=bool)
    truth[rng.choice(M, n_pos, replace=False)] = True
    if name == "hidden":
        hidden = truth & (rng.random(M) < 0.3)
        visible = truth & ~hidden
        scores = np.where(visible, rng.beta(12, 0.5, M), rng.beta(0.5, 12, M))
    else:
        scores = np.where(truth, rng.beta(6, 2, M), rng.beta(1, 12, M))
    return Pool(scores), truth


@validate(sampler=OneOf(BINARY_SAMPLERS), budgets=BUDGETS, prob=Prob(), rng=Seed())
def honesty_run(
    pool: Any,
    truth: np.ndarray,
    sampler: str,
    budgets: tuple[int, ...],
    *,
    prob: float = 0.95,
    rng: Any = 0,
    **sampler_options: Any,
) -> list[dict]:
    """Run one sampler for F1 and score its intervals of precision, recall and F1 at each budget.

    Returns
    -------
    list of dict
        One row per budget, measure and interval kind: ``budget``, ``measure``, ``interval``
        (``design``, ``default`` or ``robust``), ``truth``, ``estimate``, ``lower``, ``upper``,
        ``covered``, ``width`` and ``inside`` (the estimate lies in its interval).
    """
    from bayeval import measures
    from bayeval.models import ScoreCalibration
    from bayeval.sampling.run import sampler_class

    by_name = {
        "precision": measures.Precision(),
        "recall": measures.Recall(),
        "f1": measures.FScore(),
    }
    true_value = {
        name: float(m.value(truth, predictions=pool.predictions)[0]) for name, m in by_name.items()
    }
    models = {"default": ScoreCalibration(), "robust": ScoreCalibration.robust()}
    instance = sampler_class(sampler)(pool, by_name["f1"], rng=rng, **sampler_options)
    rows = []
    for budget in sorted(budgets):
        while instance.labels_used < budget:
            ids = instance.ask(min(instance.batch_size, budget - instance.labels_used))
            instance.tell(ids, truth[pool.positions(ids)])
        for name, measure in by_name.items():
            intervals = {"design": instance.estimate(measure=measure).per_output(prob, "design")}
            for kind, model in models.items():
                est = instance.estimate(measure=measure, model=model)
                intervals[kind] = est.per_output(prob, "posterior")
            for kind, ci in intervals.items():
                est_, lo, hi = (float(values[0]) for values in ci)
                rows.append(
                    {
                        "budget": budget,
                        "measure": name,
                        "interval": kind,
                        "truth": true_value[name],
                        "estimate": est_,
                        "lower": lo,
                        "upper": hi,
                        "covered": lo <= true_value[name] <= hi,
                        "width": hi - lo,
                        "inside": lo <= est_ <= hi,
                    }
                )
    return rows


@validate(
    pools=SequenceOf(OneOf(BATTERY_POOLS)),
    samplers=SequenceOf(OneOf(BINARY_SAMPLERS)),  # checked first: a typo must not cost an hour
    budgets=BUDGETS,
    repeats=Integer(minimum=1),
    prob=Prob(),
    size=Optional(Integer(minimum=100)),
    checkpoint=Optional(Instance((str, os.PathLike), "a file path (str or os.PathLike)")),
)
def coverage_battery(
    pools: tuple[str, ...] = BATTERY_POOLS,
    samplers: tuple[str, ...] = ("passive", "stratified", "static_is", "oasis", "ais"),
    budgets: tuple[int, ...] = (50, 250, 1000, 2000),
    repeats: int = 200,
    *,
    prob: float = 0.95,
    client: Any = None,
    size: int | None = None,
    checkpoint: str | os.PathLike | None = None,
):
    """Coverage, width and consistency of every interval over repeated runs on every pool.

    Parameters
    ----------
    pools, samplers, budgets : tuple
        Pools to run on (names of :data:`BATTERY_POOLS`), samplers to run (names of
        ``bayeval.sampling.run.BINARY_SAMPLERS``), and the label counts at which each run is scored.
    repeats : int, default 200
        Runs per pool and sampler (seeds ``0 .. repeats - 1``).
    prob : float, default 0.95
        Probability of every interval scored.
    client : dask.distributed.Client, optional
        Runs the (pool, sampler, seed) tasks on a cluster.
    size : int, optional
        Items of the synthetic pools (see :func:`battery_pool`).
    checkpoint : str or os.PathLike, optional
        A file of finished runs (JSON lines, created if missing). Each run is appended as soon
        as it finishes, and runs already in the file are not run again, so a battery that was
        interrupted resumes where it stopped. The file's first line holds ``budgets``,
        ``prob`` and ``size``; a file written with other values is refused.

    Returns
    -------
    pandas.DataFrame
        One row per pool, sampler, budget, measure and interval: ``coverage`` with its
        Monte Carlo standard error ``coverage_se`` and 95% Wilson interval
        (``coverage_lower``, ``coverage_upper``), ``median_width``, ``inside`` (the share of
        runs whose estimate lies in its interval), the mean squared error of the estimate
        (``mse``, ``mse_se``; the design estimate or the posterior median) and ``runs``.
    """
    import pandas as pd

    budgets = tuple(int(b) for b in budgets)
    tasks = [(p, s, r) for p in pools for s in samplers for r in range(repeats)]
    finished = {}
    if checkpoint is not None:
        settings = {"budgets": list(budgets), "prob": prob, "size": size}
        finished = _resume(Path(checkpoint), settings)

    def one(task):
        p, s, r = task
        pool, truth = battery_pool(p, size=size)
        return [
            {"pool": p, "sampler": s, "seed": r, **row}
            for row in honesty_run(pool, truth, s, budgets, prob=prob, rng=r)
        ]

    def keep(task, rows):
        if checkpoint is not None:
            with open(checkpoint, "a") as file:
                file.write(json.dumps({"task": task, "rows": rows}) + "\n")
        return rows

    todo = [t for t in tasks if t not in finished]
    if client is None:
        for task in todo:
            finished[task] = keep(task, one(task))
    else:
        from distributed import as_completed

        futures = dict(zip(client.map(one, todo, pure=False), todo, strict=True))
        for future in as_completed(futures):
            task = futures.pop(future)  # released: a kept run need not be held (or redone) by dask
            finished[task] = keep(task, future.result())
    runs = pd.DataFrame([row for task in tasks for row in finished[task]])
    return summarise_battery(runs)


def _resume(path: Path, settings: dict) -> dict:
    """Return the runs a checkpoint holds, by (pool, sampler, seed); give a new file its header."""
    header = json.dumps({"settings": settings})
    if not path.exists() or path.stat().st_size == 0:
        path.write_text(header + "\n")
        return {}
    lines = path.read_text().splitlines()
    written = json.loads(lines[0]).get("settings")
    if written != json.loads(header)["settings"]:
        raise ValueError(
            f"`checkpoint` {str(path)!r} holds runs with {written}, not {settings}; "
            "give another file or the same settings."
        )
    finished, whole = {}, [lines[0]]
    for line in lines[1:]:
        try:
            run = json.loads(line)
        except json.JSONDecodeError:  # the last line, cut short by the interruption
            break
        finished[tuple(run["task"])] = run["rows"]
        whole.append(line)
    path.write_text("\n".join(whole) + "\n")  # without a cut line, so that appends stay whole
    return finished


def summarise_battery(runs):
    """Summarise the rows of :func:`honesty_run` (with ``pool`` and ``sampler`` columns)."""
    from scipy import stats

    keys = ["pool", "sampler", "budget", "measure", "interval"]
    runs = runs.assign(squared_error=(runs["estimate"] - runs["truth"]) ** 2)
    grouped = runs.groupby(keys, sort=False)
    out = grouped.agg(
        coverage=("covered", "mean"),
        median_width=("width", "median"),
        inside=("inside", "mean"),
        mse=("squared_error", "mean"),
        mse_se=("squared_error", lambda e: e.std() / np.sqrt(e.size)),
        runs=("covered", "size"),
    ).reset_index()
    n, p = out["runs"].to_numpy(float), out["coverage"].to_numpy(float)
    out["coverage_se"] = np.sqrt(p * (1 - p) / n)
    z = stats.norm.ppf(0.975)
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    out["coverage_lower"], out["coverage_upper"] = centre - half, centre + half
    return out
