"""Benchmark: are comparisons of many systems honest? Coverage and P(best) of the label models.

Two kinds of pool:

- ``synthetic``: ``--systems`` systems on 2,000 items (40% positives), system ``k`` wrong on an
  easy item with probability ``0.12 - 0.1 k / (K - 1)``; a share ``--hard`` of the items is hard,
  where each system errs with probability 0.45 on its own and 80% of the systems follow one
  shared coin instead (errors that systems share);
- ``classes``: three systems of accuracy 0.7, 0.8 and 0.9 on 400 items of ``--classes`` classes,
  each wrong prediction a class other than the truth; with ``--shared-class`` the systems wrong
  on an item all name the same wrong class there (errors that share the class they name);
- a Model Selector task (``--data DIR``, a checkout of RobustML-Lab/model-selector, which has no
  license and is not shipped): ``resources/datasets/glue/<task>/{predictions,oracle}.npy``, and
  ``pacs`` (seven classes, 30 models) from ``resources/datasets/pacs/``.

Models: ``consensus`` (``ConsensusCalibration``), ``confusion`` (``SystemConfusion``), ``shared``
(``SystemConfusion(shared_errors=True)``, the multiclass default of ``be.compare``) and
``patterns`` (``PredictionPatterns``, ``ModelSelection``'s model); the last three take classes.

``--design random`` labels ``--labels`` items drawn uniformly (``disagreements``: drawn uniformly
from the items on which the systems do not all agree); the table reports how often the
95% intervals of every system's accuracy covered the truth, the difference best - worst
(synthetic), and how often P(best) >= 0.95 was reported and right. ``--design active`` follows
Model Selector's protocol (pools of a task's ``numSamples`` items, items on which every system
agrees dropped): each step labels a random item on which the two systems most likely best
disagree, refitting every five labels, up to ``--labels``; it reports, per number of labels, how
often the most likely best system is the true best and the mean P(best). ``--design selection``
labels with ``ModelSelection`` (``--choose``) until it stops or ``--labels`` are used (on Model
Selector's tasks, pools of its ``numSamples`` items, PACS 1,000, those on which every model
agrees dropped) and reports how often the differences between its leading system and each other
cover the truth, read from its own draws and from ``--model`` fitted to the same labels.

Run from the repository root (single-threaded BLAS is faster on a busy machine)::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/compare_honesty.py --pool synthetic \\
        --systems 5 --hard 0.3 --model consensus --runs 30
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/compare_honesty.py --pool sst2 \\
        --data ../model-selector --model confusion --labels 100 --runs 20
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/compare_honesty.py --pool sst2 \\
        --data ../model-selector --model consensus --design active --labels 60 --runs 12
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/compare_honesty.py --pool classes \\
        --classes 5 --shared-class --model shared --labels 100 --runs 40
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np

from bayeval.models import (
    ConsensusCalibration,
    PredictionPatterns,
    ScoreCalibration,
    SystemConfusion,
)

#: Model Selector's pool size per task (its configs' ``numSamples``).
POOL_SIZES = {"sst2": 750, "mrpc": 350, "cola": 800, "rte": 250, "qnli": 1000}
#: The models that take classes.
CLASS_MODELS = ("confusion", "shared", "patterns")


def synthetic_pool(systems: int, hard: float, rng: np.random.Generator):
    """Return ``(truth, predictions)`` of the synthetic pool with shared errors on hard items."""
    n = 2_000
    truth = rng.random(n) < 0.4
    is_hard = rng.random(n) < hard
    skill = np.linspace(0.0, 0.1, systems)
    shared = rng.random(n) < 0.5
    own = rng.random((n, systems)) < np.where(is_hard[:, None], 0.45, 0.12 - skill[None, :])
    follows = is_hard[:, None] & (rng.random((n, systems)) < 0.8)
    wrong = np.where(follows, shared[:, None], own)
    return truth.astype(int), np.where(wrong, ~truth[:, None], truth[:, None]).astype(int)


def class_pool(classes: int, shared_class: bool, rng: np.random.Generator):
    """Return ``(truth, predictions)`` of three systems of accuracy 0.7, 0.8, 0.9, 400 items."""
    n = 400
    truth = rng.integers(0, classes, n)
    # a wrong prediction is another class, the same for every system wrong on the item or not
    other = rng.integers(1, classes, (n, 1) if shared_class else (n, 3))
    right = rng.random((n, 3)) < [0.7, 0.8, 0.9]
    return truth, np.where(right, truth[:, None], (truth[:, None] + other) % classes)


def accuracy_draws(model: str, predictions, labelled, truth, rng, draws: int = 1000, classes=2):
    """Posterior draws ``(draws, systems)`` of every system's accuracy on the pool."""
    if model in ("confusion", "shared"):
        spec = SystemConfusion(draws=draws, n_classes=classes, shared_errors=model == "shared")
    elif model == "patterns":
        spec = PredictionPatterns(draws=draws, n_classes=classes)
    else:
        spec = ConsensusCalibration(calibration=ScoreCalibration(draws=draws))
    dt = spec.posterior(predictions, labelled, truth[labelled], rng=rng)
    return dt["posterior"]["accuracy"].values.reshape(-1, predictions.shape[1])


def prob_best(draws: np.ndarray) -> np.ndarray:
    """P(each system is the best), ties split evenly (as ``Comparison.prob_best``)."""
    top = draws == draws.max(axis=1, keepdims=True)
    return (top / top.sum(axis=1, keepdims=True)).mean(axis=0)


def random_design(args, pool_of):
    """Print coverage and P(best) reports of labels drawn uniformly at random."""
    covered, top_covered, top_bias, best_worst, reports = [], [], [], [], []
    each = []
    for run in range(args.runs):
        rng = np.random.default_rng(run)
        truth, predictions = pool_of(rng)
        accuracy = (predictions == truth[:, None]).mean(axis=0)
        candidates = np.arange(truth.size)
        if args.design == "disagreements":
            candidates = np.flatnonzero((predictions != predictions[:, :1]).any(axis=1))
        labelled = rng.choice(candidates, min(args.labels, candidates.size), replace=False)
        draws = accuracy_draws(
            args.model, predictions, labelled, truth, run, classes=args.classes or 2
        )
        lower, upper = np.quantile(draws, [0.025, 0.975], axis=0)
        inside = covers(lower, upper, accuracy)
        covered.append(inside.mean())
        each.append(inside)
        top = np.argsort(accuracy)[-5:]  # the five most accurate systems
        top_covered.append(inside[top].mean())
        top_bias.append((draws.mean(axis=0) - accuracy)[top].mean())
        if args.pool in ("synthetic", "classes"):  # the last system is the best, the first worst
            difference = draws[:, -1] - draws[:, 0]
            low, high = np.quantile(difference, [0.025, 0.975])
            best_worst.append(covers(low, high, accuracy[-1] - accuracy[0]))
        p = prob_best(draws)
        reports.append((p.max(), accuracy[p.argmax()] == accuracy.max()))
    reports = np.array(reports)
    sure = reports[:, 0] >= 0.95
    difference = f"; best - worst covered {np.mean(best_worst):.3f}" if best_worst else ""
    if args.pool == "classes":
        shown = ", ".join(f"{v:.3f}" for v in np.mean(each, axis=0))
        difference += f"; each system covered (worst first) {shown}"
    print(
        f"{args.pool}, {args.classes or 2} classes{', shared class' * args.shared_class}, "
        f"{args.model}, {args.labels} labels ({args.design}), {args.runs} runs: accuracy "
        f"covered {np.mean(covered):.3f} (the five best systems {np.mean(top_covered):.3f}, "
        f"their posterior means off by {np.mean(top_bias):+.3f}){difference}; "
        f"P(best) >= 0.95 in {int(sure.sum())} runs, right in {int(reports[sure, 1].sum())}; "
        f"mean P(best) {reports[:, 0].mean():.3f}, its system "
        f"the best in {reports[:, 1].mean():.3f}"
    )


def active_design(args, predictions_all, truth_all):
    """Print, per number of labels, how often the pick is right under active labels."""
    rows = []
    size = POOL_SIZES[args.pool]
    for run in range(args.runs):
        rng = np.random.default_rng(run)
        chosen = rng.choice(truth_all.size, size, replace=False)
        predictions, truth = predictions_all[chosen], truth_all[chosen]
        disagree = ~(predictions == predictions[:, :1]).all(axis=1)
        predictions, truth = predictions[disagree], truth[disagree]
        accuracy = (predictions == truth[:, None]).mean(axis=0)
        labelled = list(rng.choice(truth.size, 2, replace=False))
        while len(labelled) <= args.labels:
            draws = accuracy_draws(args.model, predictions, np.array(labelled), truth, rng, 400)
            p = prob_best(draws)
            rows.append((len(labelled), p.max(), accuracy[p.argmax()] == accuracy.max()))
            first, second = np.argsort(-p)[:2]
            for _ in range(5):
                unlabelled = np.setdiff1d(np.arange(truth.size), labelled)
                split = unlabelled[
                    predictions[unlabelled, first] != predictions[unlabelled, second]
                ]
                labelled.append(int(rng.choice(split if split.size else unlabelled)))
    rows = np.array(rows, dtype=float)
    for n in np.unique(rows[:, 0]).astype(int):
        at = rows[rows[:, 0] == n]
        sure = at[:, 1] >= 0.95
        print(
            f"{args.pool}, {args.model}, {n} active labels: best picked in {at[:, 2].mean():.2f} "
            f"of {len(at)} pools; mean P(best) {at[:, 1].mean():.2f}; P(best) >= 0.95 in "
            f"{int(sure.sum())}, right in {int(at[sure, 2].sum())}"
        )


def selection_design(args, pool_of):
    """Print the coverage of the leader-minus-others differences after ``ModelSelection``.

    Each run labels with ``ModelSelection`` (choosing by ``--choose``) until it stops or
    ``--labels`` are used, then reads the differences between its leading system and every
    other from its own draws (``PredictionPatterns``) and from ``--model`` fitted to the same
    labels. With ``--audit N``, it then draws ``N`` more labels uniformly among the
    disagreements it left (``ModelSelection.ask_audit``) and reads every difference from
    them too (``ModelSelection.audited_differences``); with ``--audit-agreements M`` also
    ``M`` among the agreements, and each system's accuracy (``audited_levels``), on pools
    that keep their agreements when ``--keep-agreements`` is given.
    """
    import bayeval as be

    own, refit, right, used, refit_sure, runner_up = [], [], [], [], [], []
    audited, audited_half, levels, levels_half, leaders_level = [], [], [], [], []
    for run in range(args.runs):
        rng = np.random.default_rng(run)
        truth, predictions = pool_of(rng)
        keep = predictions.min(axis=1) != predictions.max(axis=1)  # as Model Selector's pools
        if args.pool in (*POOL_SIZES, "pacs"):  # Model Selector's pool size (PACS: 1,000)
            rows = rng.choice(truth.size, POOL_SIZES.get(args.pool, 1_000), replace=False)
            rows = rows if args.keep_agreements else rows[keep[rows]]
            truth, predictions = truth[rows], predictions[rows]
        names = [f"s{k}" for k in range(predictions.shape[1])]
        if args.classes:
            classes = [f"c{c}" for c in range(args.classes)]
            pool = be.Pool(np.ones(predictions.shape), predictions, classes=classes, systems=names)
        else:
            pool = be.Pool(predictions.astype(float), systems=names)
        sampler = be.sampling.ModelSelection(pool, choose=args.choose, rng=run)
        budget = min(args.labels, sampler.disagreements)
        while sampler.labels_used < budget and not sampler.done:
            ids = sampler.ask(1)
            sampler.tell(ids, truth[ids])
        accuracy = (predictions == truth[:, None]).mean(axis=0)
        leader = names.index(sampler.best)
        others = np.arange(len(names)) != leader
        labelled = np.asarray(sampler.labelled()[0], dtype=int)
        posterior = sampler.estimate(refit=False).posterior["posterior"]["accuracy"]
        draws_own = posterior.values.reshape(-1, len(names))
        draws_refit = accuracy_draws(
            args.model, predictions, labelled, truth, run, 1000, args.classes or 2
        )
        used.append(sampler.labels_used)  # chosen, before any audit
        true = accuracy[leader] - accuracy
        for draws, out in ((draws_own, own), (draws_refit, refit)):
            difference = draws[:, [leader]] - draws
            lower, upper = np.quantile(difference, [0.025, 0.975], axis=0)
            out.append(covers(lower, upper, true)[others])
        if args.audit:
            agreements = min(args.audit_agreements, sampler.agreements_left)
            ids = sampler.ask_audit(min(args.audit, sampler.audit_left), agreements=agreements)
            sampler.tell(ids, truth[pool.positions(ids)])
            interval = sampler.audited_differences().interval(0.95).sel(system=names[leader])
            lower, upper = interval.sel(ci_bound="lower").values, interval.sel(ci_bound="upper")
            audited.append(covers(lower, upper.values, true)[others])
            audited_half.append(((upper.values - lower) / 2)[others].mean())
        if args.audit and args.audit_agreements:
            lower, upper = sampler.audited_levels().interval(0.95).values.T
            levels.append(covers(lower, upper, accuracy))
            leaders_level.append(levels[-1][leader])
            levels_half.append(((upper - lower) / 2).mean())
        runner_up.append(np.argmax(accuracy[others]))  # the most accurate of the others
        right.append(accuracy[leader] == accuracy.max())
        p = prob_best(draws_refit)
        refit_sure.append((p.max() >= 0.95, accuracy[p.argmax()] == accuracy.max()))

    def shown(covered):  # and each other system's, in order, where they are few
        if len(covered[0]) > 4:  # many: the most accurate other system's
            closest = np.mean([c[k] for c, k in zip(covered, runner_up, strict=True)])
            return f"{np.mean(covered):.3f} (the most accurate other {closest:.3f})"
        each = ", ".join(f"{v:.3f}" for v in np.mean(covered, axis=0))
        return f"{np.mean(covered):.3f} ({each})"

    print(
        f"{args.pool}, {args.classes or 2} classes{', shared class' * args.shared_class}, "
        f"ModelSelection ({args.choose}) then {args.model}, up to {args.labels} labels, "
        f"{args.runs} runs: "
        f"median labels {np.median(used):.0f}; leader the true best in {np.mean(right):.3f}; "
        f"leader - other covered by its own draws {shown(own)}, "
        f"by {args.model} on its labels {shown(refit)}, whose P(best) >= 0.95 in "
        f"{sum(sure for sure, _ in refit_sure)} runs, right in "
        f"{sum(sure and hit for sure, hit in refit_sure)}"
        + (
            f"; after {args.audit} audit labels {shown(audited)}, mean half-width "
            f"{np.mean(audited_half):.3f}"
            if args.audit
            else ""
        )
        + (
            f"; each system's accuracy after {args.audit_agreements} audited agreements too "
            f"{np.mean(levels):.3f} (the leader's {np.mean(leaders_level):.3f}), "
            f"mean half-width {np.mean(levels_half):.3f}"
            if levels
            else ""
        )
    )


def covers(lower, upper, true):
    """Whether each interval holds the truth, allowing for the rounding of sums of 0/1.

    A difference that no unlabelled item can move is known exactly, its interval a point; the
    draws' sum and the truth's mean may then differ in the last bit.
    """
    return (lower - 1e-9 <= true) & (true <= upper + 1e-9)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    pools = ["synthetic", "classes", "pacs", *POOL_SIZES]
    parser.add_argument("--pool", default="synthetic", choices=pools)
    parser.add_argument("--data", type=Path, help="a checkout of RobustML-Lab/model-selector")
    models = ["consensus", *CLASS_MODELS]
    parser.add_argument("--model", default="consensus", choices=models)
    designs = ["random", "disagreements", "active", "selection"]
    parser.add_argument("--design", default="random", choices=designs)
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--hard", type=float, default=0.3)
    parser.add_argument("--classes", type=int, help="classes of --pool classes (default 3)")
    parser.add_argument("--shared-class", action="store_true", help="errors name one class")
    parser.add_argument("--labels", type=int, default=200)
    parser.add_argument(
        "--choose",
        default="information",
        choices=["information", "leaders"],
        help="ModelSelection's choice of items (--design selection)",
    )
    parser.add_argument(
        "--audit", type=int, default=0, help="uniform labels after selection (--design selection)"
    )
    parser.add_argument(
        "--audit-agreements", type=int, default=0, help="and this many among the agreements"
    )
    parser.add_argument(
        "--keep-agreements",
        action="store_true",
        help="keep the items all models agree on in Model Selector's pools (it drops them)",
    )
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # the models' mixing warnings, counted in the tables instead
    if args.pool == "pacs":
        args.classes = 7
    elif args.pool == "classes":
        args.classes = args.classes or 3
    if args.classes and args.model not in CLASS_MODELS:
        parser.error(f"--pool {args.pool} has classes: --model must be one of {CLASS_MODELS}")
    if args.design == "active" and args.pool not in POOL_SIZES:
        parser.error("--design active needs a Model Selector GLUE task (--pool sst2 ...)")
    design = selection_design if args.design == "selection" else random_design
    if args.pool == "synthetic":
        design(args, lambda rng: synthetic_pool(args.systems, args.hard, rng))
        return
    if args.pool == "classes":
        design(args, lambda rng: class_pool(args.classes, args.shared_class, rng))
        return
    if args.data is None:
        parser.error(f"--pool {args.pool} needs --data (a Model Selector checkout)")
    datasets = args.data / "resources" / "datasets"
    task = datasets / "pacs" if args.pool == "pacs" else datasets / "glue" / args.pool
    predictions = np.load(task / "predictions.npy").astype(int)
    truth = np.load(task / "oracle.npy").astype(int)
    if args.design == "active":
        active_design(args, predictions, truth)
    else:
        design(args, lambda rng: (truth, predictions))


if __name__ == "__main__":
    main()
