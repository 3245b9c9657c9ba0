"""Benchmark: an automatic judge on every item plus a few human labels, against PPI++.

On each pool of :data:`bayeval.simulate.judge_pools.JUDGE_POOLS` (a fully labelled pool whose
judge is accurate, biased towards positives, good on easy items and poor on hard ones,
uninformative, a probability, or accurate on a pool with 0.5% positives), and on real pools
where a weaker model judges a stronger one (``--model-selector``: GLUE QNLI's most accurate of
Model Selector's 90 models judged by one right on about 85% of the items; ``--river``: UCI
Shuttle, a logistic regression judged by a naive Bayes trained here, see
:func:`trained_judge_pool`), every repeat draws
``n`` items uniformly without replacement as the human labels and scores, on the same labels:

- ``bayeval``: the posterior of the measure of the pool under ``ScoreCalibration``, which
  learns from the labels how far the judge is to be trusted (the judge's level is a group of
  the model of the labels), or, where the system's scores are its 0/1 predictions (QNLI),
  under ``CellRates``, a rate per cell of prediction and judge's level (the default model of
  such a pool);
- ``bayeval, no judge``: the same model on the same pool without the judge;
- ``classical``: the human labels alone, ``ppi_py.classical_mean_ci`` (accuracy, precision);
- ``PPI++``: ``ppi_py.ppi_mean_ci`` with its power tuning (``lam=None``; Angelopoulos et al.
  2023), the judge's answer as the prediction (accuracy: whether the judge agrees with the
  system; precision: the judge on the items the system predicts positive);

and, with ``--active``, ``bayeval AIS``: the AIS sampler built for F1 on the pool with the
judge, its labels chosen where the model (judge included) is least sure, to ``n`` distinct
labels. Each 95% interval is scored for coverage of the pool's true value and width; the
labels needed for a mean width of 0.05 are interpolated (log-log) between the budgets.
``--floor`` sets the model's floor prior; several names give the robust variant's interval, the
hull of each floor prior's (``ScoreCalibration.robust`` with ``--floor open jeffreys
sceptical``). AIS's proposal keeps its own floor, ``"open"``.

PPI++ needs ``ppi_python`` (MIT), which is not a dependency of bayeval: install it apart, e.g.
``pip install --no-deps --target /tmp/ppi ppi_python==0.2.3 scikit-learn joblib
threadpoolctl`` and run with ``PYTHONPATH=/tmp/ppi`` (its own dependencies numpy, scipy,
pandas, numba and statsmodels are in bayeval's test environment). ``--river DIR`` needs
``pip install --no-deps --target DIR river==0.26.1`` (only its data file is read) and the
scikit-learn above.

Run from the repository root::

    PYTHONPATH=/tmp/ppi .venv/bin/python -m benchmarks.judges --repeats 200

(as a module: run as a script, ``benchmarks/coverage.py`` would shadow the ``coverage`` package
that numba imports)
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

import bayeval as be
from bayeval.models import CalibrationWarning, CellRates, ScoreCalibration
from bayeval.models.cell_rates import has_two_scores
from bayeval.simulate.judge_pools import JUDGE_POOLS, judge_pool

MEASURES = {
    "accuracy": be.measures.Accuracy(),
    "precision": be.measures.Precision(),
    "recall": be.measures.Recall(),
    "f1": be.measures.FScore(),
}
PPI_MEASURES = ("accuracy", "precision")
PROB = 0.95


def posterior_interval(bound, labelled, labels, seed):
    """Equal-tailed ``PROB`` interval of the model's posterior draws of the measure.

    With several floor priors, the hull of their intervals (the robust variant's).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        fit = bound.fit(labelled, labels, rng=seed)
    by_floor = getattr(fit, "floor_prior_draws", lambda: None)() or {"one": fit.measure}
    ends = np.array(
        [np.nanquantile(d.ravel(), [(1 - PROB) / 2, (1 + PROB) / 2]) for d in by_floor.values()]
    )
    return float(ends[:, 0].min()), float(ends[:, 1].max())


def mean_terms(measure, pool, truth, judge):
    """The items a mean runs over, their human values and the judge's predictions of them.

    Accuracy: every item, whether the system is right, and the judge's probability that it
    is. Precision: the items predicted positive, their labels, and the judge's answer.
    """
    pred = pool.predictions.astype(bool)
    judge = np.asarray(judge, dtype=float)
    if measure == "accuracy":
        agrees = np.where(pred, judge, 1 - judge)
        return np.ones(pool.size, bool), (pred == truth).astype(float), agrees
    return pred, truth.astype(float), judge


def ppi_intervals(measure, pool, truth, labelled):
    """``{"classical": (lo, hi), "PPI++": (lo, hi)}`` from ppi_python on the same labels.

    Empty where fewer than two labelled items enter the mean (precision with a handful of
    predicted positives): neither interval is defined there, and the table counts the runs.
    """
    from ppi_py import classical_mean_ci, ppi_mean_ci

    among, y, yhat = mean_terms(measure, pool, truth, pool.judge)
    is_labelled = np.zeros(pool.size, bool)
    is_labelled[labelled] = True
    lab = among & is_labelled
    unl = among & ~is_labelled
    if lab.sum() < 2:
        return {}
    alpha = 1 - PROB
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        classical = classical_mean_ci(y[lab], alpha=alpha)
        ppi = ppi_mean_ci(y[lab], yhat[lab], yhat[unl], alpha=alpha)
    return {
        "classical": tuple(float(np.ravel(v)[0]) for v in classical),
        "PPI++": tuple(float(np.ravel(v)[0]) for v in ppi),
    }


def active_intervals(pool, truth, budgets, seed, bound, options):
    """Run AIS (built for F1, the judge in its model) and score every measure at each budget.

    ``options`` are the model's (``ScoreCalibration(**options)``), for AIS's proposal too.
    """
    proposal = ScoreCalibration(**{**options, "floor": "open"})  # AIS's default floor
    sampler = be.sampling.AIS(pool, MEASURES["f1"], calibration=proposal, rng=seed)
    out = {}
    for n in budgets:
        while sampler.labels_used < n:
            ids = sampler.ask(min(sampler.batch_size, n - sampler.labels_used))
            sampler.tell(ids, truth[pool.positions(ids)])
        ids, labels = sampler.labelled()
        positions = pool.positions(ids)
        for name in MEASURES:
            out[n, name] = posterior_interval(bound[name], positions, labels, seed)
    return out


def run_pool(pool_name, pool, truth, budgets, repeats, active, options=None):
    """Rows ``(pool, measure, method, budget, seed, lower, upper, truth)`` of every interval.

    ``options``: of the model, ``ScoreCalibration(**options)`` (default: its defaults).
    """
    options = options or {}
    bare = be.Pool(pool.scores, pool.predictions)
    truths = {
        name: float(m.value(truth, predictions=pool.predictions)[0]) for name, m in MEASURES.items()
    }
    # the default model of Sampler.estimate: CellRates where the scores are 0/1 predictions
    spec = CellRates() if has_two_scores(pool) and not options else ScoreCalibration(**options)
    bound = {name: spec.bind(pool, m) for name, m in MEASURES.items()}
    bound_bare = {name: spec.bind(bare, m) for name, m in MEASURES.items()}
    rows = []
    for seed in range(repeats):
        rng = np.random.default_rng(seed)
        order = rng.permutation(pool.size)
        found = {}
        for n in budgets:
            labelled = np.sort(order[:n])
            labels = truth[labelled]
            for name in MEASURES:
                found[n, name, "bayeval"] = posterior_interval(bound[name], labelled, labels, seed)
                found[n, name, "bayeval, no judge"] = posterior_interval(
                    bound_bare[name], labelled, labels, seed
                )
                if name in PPI_MEASURES:
                    for method, ci in ppi_intervals(name, pool, truth, labelled).items():
                        found[n, name, method] = ci
        if active:
            found_active = active_intervals(pool, truth, budgets, seed, bound, options)
            for (n, name), ci in found_active.items():
                found[n, name, "bayeval AIS"] = ci
        for (n, name, method), (lo, hi) in found.items():
            rows.append([pool_name, name, method, n, seed, lo, hi, truths[name]])
    return rows


def summarise(rows):
    """Coverage (with its Monte Carlo standard error), misses on each side and mean width."""
    import pandas as pd

    df = pd.DataFrame(rows, columns=["pool", "measure", "method", "n", "seed", "lo", "hi", "truth"])
    df["covered"] = (df["lo"] <= df["truth"]) & (df["truth"] <= df["hi"])
    df["width"] = df["hi"] - df["lo"]
    df["truth_below"] = df["truth"] < df["lo"]  # the interval lies above the truth
    df["truth_above"] = df["truth"] > df["hi"]
    out = df.groupby(["pool", "measure", "method", "n"], sort=False).agg(
        coverage=("covered", "mean"), width=("width", "mean"), repeats=("seed", "size"),
        below=("truth_below", "sum"), above=("truth_above", "sum"),
    )  # fmt: skip
    out[["below", "above"]] = out[["below", "above"]].astype(int)
    out["mc_se"] = np.sqrt(out["coverage"] * (1 - out["coverage"]) / out["repeats"])
    return out.reset_index()


def labels_for_width(summary, target=0.05):
    """Labels at which each method's mean width reaches ``target`` (log-log interpolation)."""
    result = {}
    for key, cell in summary.groupby(["pool", "measure", "method"], sort=False):
        n, w = cell["n"].to_numpy(float), cell["width"].to_numpy(float)
        if w.min() > target:
            result[key] = f"> {int(n.max())}"
            continue
        if w.max() <= target:
            result[key] = f"<= {int(n.min())}"
            continue
        i = int(np.flatnonzero(w <= target)[0])
        x = np.interp(np.log(target), np.log(w[[i, i - 1]]), np.log(n[[i, i - 1]]))
        result[key] = str(int(round(float(np.exp(x)))))
    return result


def model_selector_pool(root: Path, task: str, judge_accuracy: float = 0.85):
    """A real pool: Model Selector's GLUE ``task``, its most accurate model judged by a weaker one.

    ``root/glue/<task>/{predictions,oracle}.npy`` (fetched from github RobustML-Lab/
    model-selector; not shipped, no license): the evaluated system is the most accurate model
    (its 0/1 predictions are its scores), the judge the model whose accuracy is nearest
    ``judge_accuracy``.
    """
    predictions = np.load(root / "glue" / task / "predictions.npy")
    truth = np.load(root / "glue" / task / "oracle.npy").astype(bool)
    accuracy = (predictions == truth[:, None]).mean(axis=0)
    system = int(np.argmax(accuracy))
    judge = int(np.argmin(np.abs(accuracy - judge_accuracy)))
    print(f"{task}: system {system} (accuracy {accuracy[system]:.3f}), judge {judge} "
          f"(accuracy {accuracy[judge]:.3f})", flush=True)  # fmt: skip
    scores = predictions[:, system].astype(float)
    return be.Pool(scores, judge=predictions[:, judge].astype(np.int8)), truth


def trained_judge_pool(river_path: Path):
    """A real pool whose judge is a weaker model trained here: UCI Statlog (Shuttle).

    The data of ``load_shuttle_pool()`` rebuilt from ``river`` 0.26.1's
    ``river/datasets/shuttle.csv.gz`` (49,097 rows, 9 features, 7.2% anomalies; installed apart,
    with scikit-learn): the same stratified half split (``random_state=0``), the same system (a
    standardised logistic regression, the bundled pool's scores) and, as the judge, a Gaussian
    naive Bayes fitted on the same training half, whose 0/1 predictions are its answers: right
    on 99.2% of the pool against the system's 99.6% (precision 0.93 against 0.999).
    """
    import pandas as pd
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    frame = pd.read_csv(river_path / "river" / "datasets" / "shuttle.csv.gz")
    features = frame.drop(columns="anomaly").to_numpy(float)
    label = frame["anomaly"].to_numpy() == 1
    x_train, x_pool, y_train, truth = train_test_split(
        features, label, test_size=0.5, stratify=label, random_state=0
    )
    system = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))
    scores = system.fit(x_train, y_train).predict_proba(x_pool)[:, 1]
    judge = GaussianNB().fit(x_train, y_train).predict(x_pool)
    print(f"shuttle: system accuracy {np.mean((scores >= 0.5) == truth):.4f}, judge "
          f"{np.mean(judge == truth):.4f}", flush=True)  # fmt: skip
    return be.Pool(scores, judge=judge.astype(np.int8)), truth


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pools", nargs="*", default=list(JUDGE_POOLS))
    parser.add_argument("--budgets", nargs="*", type=int, default=[100, 200, 400, 800])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--active", action="store_true", help="also run AIS with the judge")
    parser.add_argument(
        "--judge-strata", type=int, default=None,
        help="ScoreCalibration(judge_strata=...): score strata of the judge's shift",
    )  # fmt: skip
    parser.add_argument(
        "--judge-step", type=float, default=None,
        help="ScoreCalibration(judge_step=...): the shift's step from stratum to stratum",
    )  # fmt: skip
    parser.add_argument(
        "--river", type=Path, default=None,
        help="a folder holding the river package: adds Shuttle with a naive Bayes judge",
    )  # fmt: skip
    parser.add_argument(
        "--floor", nargs="*", default=None,
        help="ScoreCalibration(floor=...): one floor prior, or several for the robust hull",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, default=None, help="write every interval (JSON)")
    parser.add_argument(
        "--model-selector", type=Path, default=None,
        help="Model Selector's resources/datasets folder: adds GLUE QNLI as a real pool",
    )  # fmt: skip
    args = parser.parse_args()
    from benchmarks._common import machine_info, markdown_table

    start = time.perf_counter()
    options = {
        name: value
        for name, value in (("judge_strata", args.judge_strata), ("judge_step", args.judge_step))
        if value is not None
    }
    if args.floor:
        options["floor"] = args.floor[0] if len(args.floor) == 1 else tuple(args.floor)
    rows = []
    for name in args.pools:
        pool, truth = judge_pool(name, size=args.size, rng=0)
        rows += run_pool(name, pool, truth, args.budgets, args.repeats, args.active, options)
        print(f"{name}: done at {time.perf_counter() - start:.0f} s", flush=True)
    if args.model_selector is not None:
        pool, truth = model_selector_pool(args.model_selector, "qnli")
        rows += run_pool("qnli", pool, truth, args.budgets, args.repeats, args.active, options)
    if args.river is not None:
        pool, truth = trained_judge_pool(args.river)
        rows += run_pool("shuttle", pool, truth, args.budgets, args.repeats, args.active, options)
    summary = summarise(rows)
    needed = labels_for_width(summary)
    table = []
    for r in summary.itertuples():
        runs = "" if r.repeats == args.repeats else f" ({r.repeats} runs)"  # undefined in others
        table.append([r.pool, r.measure, r.method, r.n, f"{r.coverage:.3f} ± {r.mc_se:.3f}{runs}",
                      f"{r.below} / {r.above}", f"{r.width:.4f}",
                      needed[r.pool, r.measure, r.method]])  # fmt: skip
    header = ["pool", "measure", "method", "n", "coverage ± se", "misses: truth below / above",
              "width", "n for width 0.05"]  # fmt: skip
    print(markdown_table(header, table))
    print(json.dumps(machine_info(), indent=1))
    print(f"total {time.perf_counter() - start:.0f} s")
    if args.out is not None:
        args.out.write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
