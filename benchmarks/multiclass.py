"""Benchmark: coverage and width of multiclass measures' intervals (ClassCalibration).

Pools (each fully labelled, so the truth of every measure is known):

- the five simulated pools of :mod:`bayeval.simulate.multiclass_pools` (20,000 items);
- ``image-segments``: the bundled real pool (UCI Image Segmentation, 1,155 items, seven
  classes, an overconfident Gaussian naive Bayes);
- ``pacs-<k>`` with ``--model-selector ROOT``: PACS from Model Selector (Okanovic et al. 2025;
  ``ROOT/pacs/{predictions,oracle}.npy``, 9,991 images, seven classes, 30 classifiers'
  predicted classes and no scores; fetched from github RobustML-Lab/model-selector, which has
  no license and is not shipped): its least accurate, median and most accurate classifiers.

Designs: ``uniform`` (labels drawn uniformly, ``n_strata=1``) and ``stratified`` (as many labels
from every cell of four confidence strata per predicted class, ``n_strata=4``; pools with a
confidence only). Per pool, design and number of labels, ``--runs`` runs report the coverage of
the 95% intervals of accuracy, balanced accuracy and macro-F1, the mean and the lowest
coverage over the classes of per-class precision and recall, and the mean widths of accuracy's
and macro-F1's intervals. Beside them, for uniform labels, the classical intervals on the same
labels: Wilson's for accuracy, and a percentile bootstrap of the labelled items (1,000
resamples) for macro-F1.

With ``--judges``: the five simulated pools, uniform labels, without a judge and with each judge
of :data:`bayeval.simulate.multiclass_pools.MULTICLASS_JUDGES` (``ClassCalibration``'s cells
cut by the judge's class); beside them, for accuracy, the PPI++ interval (Angelopoulos et al.
2023, the power-tuned mean estimator, written here from its formulas): whether the system is
right is the outcome and whether it agrees with the judge its prediction, on every item (the
rows without a judge keep the classical intervals). With ``--active`` too, each uniform row is
followed by one of ``ActiveStratified`` (design ``active``: labels in stages of 50 sent where
the posterior of macro-F1 is least sure, two confidence strata, ``--floor`` of proportional
allocation; the model's cells are the design's, ``n_strata=2``). PPI++ needs uniform labels,
so active rows have none.

Run from the repository root::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.multiclass --runs 100 \\
        --model-selector /work/ms_data
    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.multiclass --runs 100 --judges \
        --labels 200
    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.multiclass --runs 100 --judges \
        --active --labels 200
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np
from scipy import stats

import bayeval as be
from bayeval._core.multiclass import confusion_measures
from bayeval.datasets import load_image_segments_pool
from bayeval.models import ClassCalibration
from bayeval.simulate.multiclass_pools import (
    MULTICLASS_JUDGES,
    MULTICLASS_POOLS,
    multiclass_judge,
    multiclass_pool,
)
from benchmarks._common import machine_info, markdown_table

DRAWS = 1000
ACTIVE_STRATA = 2  # confidence strata of the active design (and of its model's cells)
SCALARS = ("accuracy", "balanced_accuracy", "macro_f1")
PER_CLASS = ("precision", "recall")


def pools(model_selector: Path | None):
    """Yield ``(name, predicted, confidence or None, truth)`` for every pool."""
    for kind in MULTICLASS_POOLS:
        yield (kind, *multiclass_pool(kind, np.random.default_rng(7)))
    probabilities, truth = load_image_segments_pool()
    yield "image-segments", probabilities.argmax(axis=1), probabilities.max(axis=1), truth
    if model_selector is not None:
        predictions = np.load(model_selector / "pacs" / "predictions.npy").astype(np.int64)
        truth = np.load(model_selector / "pacs" / "oracle.npy").astype(np.int64)
        order = np.argsort((predictions == truth[:, None]).mean(axis=0))
        for k in order[[0, order.size // 2, -1]]:
            yield f"pacs-{k}", predictions[:, k], None, truth


def _labels(rng, design, cell, n_items, n_labels):
    if design == "uniform":
        return rng.choice(n_items, n_labels, replace=False)
    cells = np.unique(cell)
    per = n_labels // cells.size
    return np.concatenate([rng.choice(np.flatnonzero(cell == g), min(per, int(np.sum(cell == g))),
                                      replace=False) for g in cells])  # fmt: skip


def _active_labels(predicted, confidence, truth, judge, n_labels, floor, rng):
    """Positions labelled by ``ActiveStratified`` aimed at macro-F1, in stages of 50."""
    C = int(max(predicted.max(), truth.max())) + 1
    pool = be.Pool(confidence, predicted, judge=judge, classes=[str(c) for c in range(C)])
    measure = be.measures.ClassMeasure("macro_f1", n_classes=C)
    sampler = be.sampling.ActiveStratified(
        pool, measure, n_strata=ACTIVE_STRATA, floor=floor, rng=rng
    )
    while sampler.labels_used < n_labels:
        ids = sampler.ask(min(50, n_labels - sampler.labels_used))
        sampler.tell(ids, truth[ids])
    return sampler.labelled()[0]


def _classical(predicted, truth, rng):
    """Wilson's interval of the labelled accuracy and a bootstrap interval of macro-F1."""
    n, right = truth.size, int(np.sum(predicted == truth))
    accuracy = stats.binomtest(right, n).proportion_ci(0.95, method="wilson")
    C = int(max(predicted.max(), truth.max())) + 1
    resample = rng.integers(0, n, size=(1000, n))
    counts = np.zeros((1000, C, C))
    np.add.at(counts, (np.arange(1000)[:, None], truth[resample], predicted[resample]), 1)
    macro = np.nanquantile(confusion_measures(counts)["macro_f1"], [0.025, 0.975])
    return (accuracy.low, accuracy.high), tuple(macro)


def _ppi_accuracy(right, agree_labelled, agree_unlabelled):
    """PPI++'s 95% interval of the accuracy (power-tuned mean, Angelopoulos et al. 2023).

    ``right``: whether the system is right on each labelled item; ``agree_*``: whether it
    agrees with the judge on the labelled and on the unlabelled items.
    """
    n, N = right.size, agree_unlabelled.size
    f, y = agree_labelled.astype(float), right.astype(float)
    var_f = f.var(ddof=1)
    # lambda minimising the variance: cov(y, f) / ((1 + n / N) var(f)), clipped to [0, 1]
    lam = 0.0 if var_f == 0 else np.clip(np.cov(y, f)[0, 1] / ((1 + n / N) * var_f), 0, 1)
    estimate = y.mean() + lam * (agree_unlabelled.mean() - f.mean())
    se = np.sqrt((y - lam * f).var(ddof=1) / n + lam**2 * agree_unlabelled.var(ddof=1) / N)
    return estimate - 1.959964 * se, estimate + 1.959964 * se


def one_setting(name, predicted, confidence, truth, design, n_labels, runs, seed, judge=None,
                floor=0.5):  # fmt: skip
    """Every figure of one pool, design, number of labels and judge (a dict)."""
    C = int(max(predicted.max(), truth.max())) + 1
    counts = np.zeros((C, C))
    np.add.at(counts, (truth, predicted), 1)
    true = confusion_measures(counts)
    n_strata = {"uniform": 1, "stratified": 4, "active": ACTIVE_STRATA}[design]
    spec = ClassCalibration(n_classes=C, n_strata=n_strata, draws=DRAWS)
    cell = spec.cells(predicted, confidence)
    rng = np.random.default_rng(seed)
    hits = {m: [] for m in SCALARS + PER_CLASS}
    width = {"accuracy": [], "macro_f1": []}
    classical = {"accuracy": [], "macro_f1": [], "width_accuracy": [], "width_macro_f1": []}
    for _ in range(runs):
        if design == "active":
            labelled = _active_labels(predicted, confidence, truth, judge, n_labels, floor, rng)
        else:
            labelled = _labels(rng, design, cell, truth.size, n_labels)
        posterior = spec.posterior(predicted, labelled, truth[labelled], confidence=confidence,
                                   judge=judge, rng=rng)["posterior"]  # fmt: skip
        for m in hits:
            draws = posterior[m].values.reshape(DRAWS, -1)
            lower, upper = np.nanquantile(draws, [0.025, 0.975], axis=0)
            hits[m].append((lower <= true[m]) & (true[m] <= upper))
            if m in width:
                width[m].append(float(upper[0] - lower[0]))
        if judge is not None and design == "uniform":
            rest = np.ones(truth.size, dtype=bool)
            rest[labelled] = False
            agree = predicted == judge
            lower, upper = _ppi_accuracy(
                predicted[labelled] == truth[labelled], agree[labelled], agree[rest]
            )
            classical["accuracy"].append(lower <= true["accuracy"] <= upper)
            classical["width_accuracy"].append(upper - lower)
        elif design == "uniform":
            intervals = _classical(predicted[labelled], truth[labelled], rng)
            for m, (lower, upper) in zip(("accuracy", "macro_f1"), intervals, strict=True):
                classical[m].append(lower <= true[m] <= upper)
                classical[f"width_{m}"].append(upper - lower)
    row = {"pool": name, "design": design, "labels": n_labels, "runs": runs}
    for m in SCALARS:
        row[m] = float(np.mean(hits[m]))
    for m in PER_CLASS:
        share = np.mean(hits[m], axis=0)
        row[f"{m}_mean"], row[f"{m}_min"] = float(share.mean()), float(share.min())
    row["width_accuracy"], row["width_macro_f1"] = (float(np.mean(width[m])) for m in width)
    for key, values in classical.items():
        row[f"classical_{key}"] = float(np.mean(values)) if values else None
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--labels", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--model-selector", type=Path, help="folder with pacs/*.npy")
    parser.add_argument("--pools", nargs="+", help="only these pools (names as in the table)")
    parser.add_argument("--judges", action="store_true", help="the simulated pools' judges")
    parser.add_argument("--active", action="store_true", help="with --judges: ActiveStratified")
    parser.add_argument("--floor", type=float, default=0.5, help="ActiveStratified's floor")
    parser.add_argument("--judge-kinds", nargs="+", choices=("none", *MULTICLASS_JUDGES),
                        help="with --judges: only these rows (each row's seeds as in the "
                             "full run)")  # fmt: skip
    args = parser.parse_args()
    start = time.time()
    rows = []
    if args.judges:
        rows = judged_rows(args)
    for name, predicted, confidence, truth in [] if args.judges else pools(args.model_selector):
        if args.pools and name not in args.pools:
            continue
        designs = ("uniform",) if confidence is None else ("uniform", "stratified")
        for design in designs:
            for n_labels in args.labels:
                if n_labels >= truth.size:
                    continue
                rows.append(one_setting(name, predicted, confidence, truth, design, n_labels,
                                        args.runs, seed=n_labels))  # fmt: skip
                print(rows[-1], flush=True)

    def fmt(value):
        return "–" if value is None else f"{value:.2f}" if value <= 1 else f"{value:.3f}"

    def width(value):
        return "–" if value is None else f"{value:.3f}"

    header = ["pool", "judge" if args.judges else "design", "labels", "accuracy", "balanced acc.",
              "macro-F1",
              "precision mean / min", "recall mean / min", "width acc. (classical)",
              "width macro-F1 (classical)", "classical cov. acc. / macro-F1"]  # fmt: skip
    table = []
    for r in rows:
        table.append([
            r["pool"], r.get("judge", r["design"]), str(r["labels"]), fmt(r["accuracy"]),
            fmt(r["balanced_accuracy"]), fmt(r["macro_f1"]),
            f"{fmt(r['precision_mean'])} / {fmt(r['precision_min'])}",
            f"{fmt(r['recall_mean'])} / {fmt(r['recall_min'])}",
            f"{r['width_accuracy']:.3f} ({width(r['classical_width_accuracy'])})",
            f"{r['width_macro_f1']:.3f} ({width(r['classical_width_macro_f1'])})",
            f"{fmt(r['classical_accuracy'])} / {fmt(r['classical_macro_f1'])}",
        ])  # fmt: skip
    if args.judges:
        header[-3:] = [h.replace("classical", "PPI++ or classical") for h in header[-3:]]
    print(markdown_table(header, table))
    print(f"\n{time.time() - start:.0f} s; {machine_info()}")


def judged_rows(args):
    """The rows of ``--judges``: each simulated pool without a judge and with each judge."""
    rows, designs = [], ("uniform", "active") if args.active else ("uniform",)
    for kind in MULTICLASS_POOLS:
        if args.pools and kind not in args.pools:
            continue
        predicted, confidence, truth = multiclass_pool(kind, np.random.default_rng(7))
        for judge_kind in args.judge_kinds or ("none", *MULTICLASS_JUDGES):
            judge = None
            if judge_kind != "none":
                rng = np.random.default_rng(8)
                judge = multiclass_judge(judge_kind, predicted, confidence, truth, rng)
            for n_labels, design in itertools.product(args.labels, designs):
                row = one_setting(kind, predicted, confidence, truth, design, n_labels, args.runs,
                                  seed=n_labels, judge=judge, floor=args.floor)  # fmt: skip
                shown = judge_kind if design == "uniform" else f"{judge_kind}, active"
                rows.append({**row, "judge": shown})
                print(rows[-1], flush=True)
    return rows


if __name__ == "__main__":
    main()
