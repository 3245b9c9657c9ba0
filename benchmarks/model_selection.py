"""Benchmark: active model selection on Model Selector's tasks, and the cost of one label.

``--data DIR`` is a checkout of RobustML-Lab/model-selector (commit 6aa57e57; it has no license
and is not shipped): ``resources/datasets/glue/<task>/{predictions,oracle}.npy``, and
``resources/datasets/pacs/`` for PACS (seven classes: a multiclass pool, modelled by
``PredictionPatterns(n_classes=7)``). Model
Selector's protocol: each realisation is a pool of the task's ``numSamples`` items drawn without
replacement; the true best is the most accurate system on that pool (every system tied for it
counts); items on which all systems agree are dropped. :class:`bayeval.sampling.ModelSelection`
labels one item at a time up to ``--budget`` (its stopping rule is recorded, not obeyed) and
the table reports, after ``b`` labels, the identification probability (the share of
realisations whose most likely best system is a true best; ``identification_least_regret``
the same for the system of least expected regret, ``identification_most_right`` for the system
right on most of the labels, Model Selector's pick, ties shared) and, for the rule "stop when
P(best) >= 0.95", how many realisations stopped within the budget, how many of those picked a
true best, and the median labels at the stop. ``--choose`` runs the baselines under the same
model and protocol; ``--vote`` fixes the weight of the systems' vote in the model's prior.

``--timing`` instead times ask + tell over 100 labels on a synthetic pool of 10,000 items and
100 systems (the issue's target: at most 50 ms per label).

Run from the repository root::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/model_selection.py \\
        --data ../model-selector --task sst2 --runs 10 --budget 100
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/model_selection.py --timing
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import bayeval as be

#: Model Selector's pool size per task (its configs' ``numSamples``).
POOL_SIZE = {"sst2": 750, "mrpc": 350, "cola": 800, "rte": 250, "qnli": 1000, "pacs": 1000}
#: Labels at which identification is reported (Model Selector's budgets among them).
CHECKS = (10, 20, 30, 40, 50, 75, 100, 130, 160, 190, 250)


def load_task(data: Path, task: str) -> tuple[np.ndarray, np.ndarray]:
    folder = data / "resources" / "datasets" / ("pacs" if task == "pacs" else f"glue/{task}")
    predictions = np.load(folder / "predictions.npy")
    oracle = np.load(folder / "oracle.npy")
    if predictions.shape[0] != oracle.shape[0]:
        predictions = predictions.T
    return predictions.astype(np.int64), oracle.astype(np.int64)


def task_pool(predictions: np.ndarray, truth: np.ndarray):
    """A pool of the systems' predictions: binary, or multiclass when there are more classes."""
    n_classes = int(max(predictions.max(), truth.max())) + 1
    if n_classes == 2:
        return be.Pool(predictions.astype(float))
    classes = [f"class{c}" for c in range(n_classes)]
    return be.Pool(np.ones(predictions.shape), predictions, classes=classes)


def realisation(predictions, truth, budget, choose, seed, vote="learned"):
    """One pool; returns the labels at the stop (or None), whether it was right, and the picks."""
    pool = task_pool(predictions, truth)
    correct = (predictions == truth[:, None]).sum(axis=0)
    true_best = set(np.flatnonzero(correct == correct.max()).tolist())
    n_classes = 2 if pool.classes is None else pool.n_classes
    model = be.models.PredictionPatterns(vote=vote, n_classes=n_classes)
    sampler = be.sampling.ModelSelection(pool, choose=choose, model=model, rng=seed)
    budget = min(budget, sampler.disagreements)
    stop, right, picks = None, None, {}
    labelled_right = np.zeros(predictions.shape[1])
    while sampler.labels_used < budget:
        ids = sampler.ask(1)
        sampler.tell(ids, truth[ids])
        labelled_right += predictions[ids[0]] == truth[ids[0]]
        pick = int(np.lexsort((sampler.expected_regret, -sampler.prob_best))[0])
        least_regret = int(np.lexsort((-sampler.prob_best, sampler.expected_regret))[0])
        # Model Selector's pick: the system right on most labels (a tie shared out)
        leaders = np.flatnonzero(labelled_right == labelled_right.max())
        most_right = float(np.mean([m in true_best for m in leaders]))
        if stop is None and sampler.done:
            stop, right = sampler.labels_used, pick in true_best
        if sampler.labels_used in CHECKS:
            picks[sampler.labels_used] = (pick in true_best, least_regret in true_best, most_right)
    for b in CHECKS:  # fewer disagreements than b: the last pick stands
        if b not in picks and b <= budget:
            picks[b] = (pick in true_best, least_regret in true_best, most_right)
    return stop, right, picks


def run_task(args) -> dict:
    predictions, truth = load_task(Path(args.data), args.task)
    rng = np.random.default_rng(args.seed)
    stops, hits, started = [], {}, time.perf_counter()
    for r in range(args.runs):
        rows = rng.choice(truth.size, POOL_SIZE[args.task], replace=False)
        p, t = predictions[rows], truth[rows]
        keep = p.min(axis=1) != p.max(axis=1)
        stop, right, picks = realisation(
            p[keep], t[keep], args.budget, args.choose, seed=r, vote=args.vote
        )
        stops.append((stop, right))
        for b, hit in picks.items():
            hits.setdefault(b, []).append(hit)
    stopped = [(s, r) for s, r in stops if s is not None]
    return {
        "task": args.task,
        "choose": args.choose,
        "vote": args.vote,
        "runs": args.runs,
        "budget": args.budget,
        "identification": {b: float(np.mean([h[0] for h in v])) for b, v in sorted(hits.items())},
        "identification_least_regret": {
            b: float(np.mean([h[1] for h in v])) for b, v in sorted(hits.items())
        },
        "identification_most_right": {
            b: float(np.mean([h[2] for h in v])) for b, v in sorted(hits.items())
        },
        "stopped": len(stopped),
        "stopped_right": int(sum(r for _, r in stopped)),
        "median_labels_at_stop": float(np.median([s for s, _ in stopped])) if stopped else None,
        "seconds": round(time.perf_counter() - started, 1),
    }


def timing(n_items=10_000, n_systems=100, steps=100, seed=0) -> dict:
    """Milliseconds per ask + tell on a synthetic pool (systems of accuracy 0.70 to 0.90).

    The default model (the weight of the vote learned) and, as the baseline in the same run,
    the weight fixed at 16 (no weight to learn). The first labels cost the most: the weight is
    then least certain, and each draw whose weight a label moves is redrawn in every cell.
    ``ms_setup`` is the sampler's construction (the draws before any label), once per pool.
    """
    rng = np.random.default_rng(seed)
    truth = rng.random(n_items) < 0.4
    accuracy = np.linspace(0.70, 0.90, n_systems)
    right = rng.random((n_items, n_systems)) < accuracy
    predictions = np.where(right, truth[:, None], ~truth[:, None]).astype(float)
    result = {"items": n_items, "systems": n_systems, "steps": steps}
    for vote in ("learned", 16.0):
        model = be.models.PredictionPatterns(vote=vote)
        started = time.perf_counter()
        sampler = be.sampling.ModelSelection(be.Pool(predictions), model=model, rng=seed)
        setup = time.perf_counter() - started
        seconds = []
        for _ in range(steps):
            started = time.perf_counter()
            ids = sampler.ask(1)
            sampler.tell(ids, truth[ids])
            seconds.append(time.perf_counter() - started)
        ms = 1e3 * np.array(seconds)
        result[f"vote {vote}"] = {
            "ms_per_label": round(float(ms.mean()), 1),
            "ms_median": round(float(np.median(ms)), 1),
            "ms_first_10": round(float(ms[:10].mean()), 1),
            "ms_max": round(float(ms.max()), 1),
            "ms_setup": round(1e3 * setup, 1),
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="a checkout of RobustML-Lab/model-selector")
    parser.add_argument("--task", choices=sorted(POOL_SIZE), default="sst2")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument(
        "--choose", choices=be.sampling.model_selection.CHOICES, default="information"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--vote",
        type=lambda v: v if v == "learned" else float(v),
        default="learned",
        help="PredictionPatterns' weight of the systems' vote: 'learned' or a number",
    )
    parser.add_argument("--timing", action="store_true")
    args = parser.parse_args()
    result = timing() if args.timing else run_task(args)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
