"""Benchmark: annotators who disagree, Dawid–Skene against crowd-kit's.

Simulated crowds: ``--items`` items (30% positive), ``--annotators`` annotators whose
sensitivity and specificity are drawn uniformly from [0.6, 0.95], each item answered by
``--per-item`` distinct annotators. Per crowd, on the same answers:

- crowd-kit's ``DawidSkene`` (EM, its defaults: 100 iterations, tolerance 1e-5) and
  ``MajorityVote``: their aggregated labels;
- bayeval's ``DawidSkene`` (Gibbs, the default priors): the most probable label of each item,
  and each annotator's accuracy interval (``annotator_summary``);
- bayeval's EM kernel with flat priors run as long as crowd-kit's (the same algorithm: their
  posteriors should agree to rounding).

Reported: the share of items where bayeval's labels agree with crowd-kit's, each method's
share of right labels, the largest difference between the two EMs' posteriors, and the
coverage of the annotators' 90% and 95% accuracy intervals (the truth: ``sum_c pi_c
theta[a, c, c]`` with the simulation's prevalence and confusions).

crowd-kit is not a dependency of bayeval: install it apart, e.g. ``pip install --no-deps
--target /tmp/ck crowd-kit attrs tqdm nltk regex click joblib scikit-learn threadpoolctl``, and
run from the repository root with ``PYTHONPATH=/tmp/ck``::

    PYTHONPATH=/tmp/ck .venv/bin/python -m benchmarks.annotators --crowds 20

``--measure-runs N`` instead measures how the annotators' noise reaches a measure's interval
(:func:`measure_runs`; ``--pool plain`` without the pool's coin-flip judge, ``--engine pymc``
the joint posterior by NUTS), and ``--autocorrelation N`` how strongly the data augmentation's
rounds are correlated over ``N`` rounds (:func:`round_autocorrelation`); neither needs
crowd-kit.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from bayeval.simulate.crowds import simulated_crowd


def one_crowd(seed, n_items, n_annotators, per_item):
    """Every figure of one simulated crowd (a dict)."""
    import pandas as pd
    from crowdkit.aggregation import DawidSkene as CrowdKitDS
    from crowdkit.aggregation import MajorityVote

    from bayeval._core import dawid_skene as kernel
    from bayeval.models import DawidSkene

    rng = np.random.default_rng(seed)
    truth, item, who, answer, accuracy = simulated_crowd(rng, n_items, n_annotators, per_item)
    frame = pd.DataFrame({"task": item, "worker": [f"a{w}" for w in who], "label": answer})
    crowd_kit = CrowdKitDS(n_iter=100)
    ck_labels = crowd_kit.fit_predict(frame).sort_index().to_numpy()
    majority = MajorityVote().fit_predict(frame).sort_index().to_numpy()
    fit = DawidSkene().fit(item, [f"a{w}" for w in who], answer, rng=seed)
    ours = fit.labels().sort_index().to_numpy(dtype=int)
    responses = kernel.answer_counts(item, who, answer, (n_items, n_annotators, 2))
    em = kernel.em(responses, np.full(n_items, -1), confusion_prior=np.ones((2, 2)),
                   class_prior=np.ones(2), tol=0.0,
                   max_iter=len(crowd_kit.loss_history_))  # fmt: skip
    ck_posterior = crowd_kit.probas_.sort_index()[1].to_numpy()
    names = [f"a{a}" for a in range(n_annotators)]
    covered = {}
    for prob in (0.9, 0.95):
        summary = fit.annotator_summary(prob).loc[names]
        inside = (summary["accuracy_lower"] <= accuracy) & (accuracy <= summary["accuracy_upper"])
        covered[prob] = inside.to_numpy()
    return {
        "agree": float((ours == ck_labels).mean()),
        "right_bayeval": float((ours == truth).mean()),
        "right_crowdkit": float((ck_labels == truth).mean()),
        "right_majority": float((majority == truth).mean()),
        "em_vs_crowdkit": float(np.abs(em.posterior[:, 1] - ck_posterior).max()),
        "covered90": covered[0.9].tolist(),
        "covered95": covered[0.95].tolist(),
    }


def _noisy_setting(pool_kind: str = "judge", engine: str = "fast", draws: int = 400):
    """The pool, its accuracy, the bound model and a function from a seed to its answers.

    ``pool_kind``: ``"judge"``, ``judge_pool("uninformative")`` with its coin-flip judge (the
    curve gets a shift per judge level and score stratum, 16 more parameters); ``"plain"``,
    the same scores and predictions without the judge (a 4-parameter curve). ``engine``: the
    joint posterior by data augmentation (``"fast"``) or by NUTS (``"pymc"``, 1,000 draws);
    ``draws``: the data augmentation's draws in all (``imputations`` rounds share them).
    """
    import bayeval as be
    from bayeval.models import DawidSkene, ScoreCalibration
    from bayeval.simulate.crowds import noisy_labels
    from bayeval.simulate.judge_pools import judge_pool

    pool, truth = judge_pool("uninformative", size=5_000)
    if pool_kind == "plain":
        pool = be.Pool(pool.scores, pool.predictions)
    measure = be.measures.Accuracy()
    true = measure.value(truth, predictions=pool.predictions)[0]
    bound = ScoreCalibration(draws=draws).bind(pool, measure)
    joint = bound if engine == "fast" else ScoreCalibration(engine=engine).bind(pool, measure)

    def answers(seed):
        labelled, item, answer, majority, names = noisy_labels(
            truth, 1_000, np.random.default_rng(seed)
        )
        fit = DawidSkene(draws=400).fit(item, names, answer, pool=pool, rng=seed)
        return labelled, majority, fit

    return truth, true, bound, joint, answers


def round_autocorrelation(seeds: int, rounds: int, sweeps: int):
    """The autocorrelation of the measure's round means over ``rounds`` rounds (20 burnt).

    The setting of :func:`measure_runs`; per seed one chain of ``measure_posterior`` with one
    round per imputation (``bound.spec.draws / rounds`` draws each, averaged).
    """
    import warnings

    import arviz as az

    from bayeval.models import CalibrationWarning

    _, _, bound, _, answers = _noisy_setting()
    rows = []
    for seed in range(seeds):
        _, _, fit = answers(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CalibrationWarning)
            imputed = fit.measure_posterior(
                bound, imputations=rounds, burn=20, sweeps=sweeps, rng=seed
            )
        means = imputed.measure_draws().reshape(rounds, -1).mean(axis=1)
        x = means - means.mean()
        acf = [np.sum(x[:-lag] * x[lag:]) / np.sum(x * x) for lag in (1, 2, 5, 10)]
        ess = float(az.ess(means[None, :]))  # one chain of the round means
        rows.append([sweeps, seed, rounds, *(f"{a:+.2f}" for a in acf), f"{ess:.0f}"])
    return rows


def measure_runs(
    runs, imputations, burn, sweeps, pool_kind="judge", engine="fast", n_draws=400, first_seed=0
):
    """Coverage of the accuracy's 95% interval when annotators' labels are noisy.

    A 5,000-item pool (``judge_pool("uninformative")``'s system, :func:`_noisy_setting`),
    1,000 items labelled uniformly, each answered by 3 of 6 annotators right on 65-85% of the
    items; per run the intervals from the joint posterior (``measure_posterior``), from the
    majority of the answers taken as the truth, and from the true labels. Besides coverage,
    the misses on either side and the spread of the medians' errors: for the joint posterior
    also the part of the error the labelled items make (their imputed labels' count of right
    predictions against the true count, over the pool's size) beside its posterior sd, the
    sd of that count over the rounds kept (over the draws with NUTS). Seeds ``first_seed``
    on; ``n_draws`` as ``draws`` in :func:`_noisy_setting` (a longer chain: more draws and
    rounds).
    """
    import warnings

    from bayeval.models import CalibrationWarning

    truth, true, bound, joint, answers = _noisy_setting(pool_kind, engine, n_draws)
    predictions = bound.target.pool.predictions.astype(bool)
    found = {"joint": [], "majority": [], "true labels": []}
    labelled_part = []  # (error, posterior sd) of the labelled items' share of right predictions
    for seed in range(first_seed, first_seed + runs):
        labelled, majority, fit = answers(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CalibrationWarning)
            imputed = fit.measure_posterior(
                joint, imputations=imputations, burn=burn, sweeps=sweeps, rng=seed
            )
            positions = bound.target.pool.positions(fit.items)
            right = (imputed.label_draws.astype(bool) == predictions[positions]).sum(axis=1)
            right_truly = (truth[positions] == predictions[positions]).sum()
            labelled_part.append(((right.mean() - right_truly) / truth.size,
                                  right.std() / truth.size))  # fmt: skip
            draws = {
                "joint": imputed.measure_draws(),
                "majority": bound.fit(labelled, majority, rng=seed).measure,
                "true labels": bound.fit(labelled, truth[labelled], rng=seed).measure,
            }  # fmt: skip
        for key, values in draws.items():
            lo, median, hi = np.quantile(values, [0.025, 0.5, 0.975])
            found[key].append((lo <= true <= hi, true < lo, true > hi, median - true, hi - lo))
    error_l, sd_l = np.array(labelled_part).T
    rows = []
    for key, results in found.items():
        covered, below, above, error, width = (
            np.array(v, dtype=float) for v in zip(*results, strict=True)
        )
        part = f"{error_l.std():.4f} / {sd_l.mean():.4f}" if key == "joint" else "-"
        rows.append([pool_kind, engine, key, f"{first_seed}-{first_seed + runs - 1}", n_draws,
                     imputations, burn, sweeps,
                     f"{int(covered.sum())} / {runs}", f"{int(below.sum())} / {int(above.sum())}",
                     f"{error.mean():+.4f}", f"{error.std():.4f}",
                     f"{width.mean():.4f}", part])  # fmt: skip
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crowds", type=int, default=20)
    parser.add_argument("--items", nargs="*", type=int, default=[200, 1000, 5000])
    parser.add_argument("--annotators", type=int, default=10)
    parser.add_argument("--per-item", nargs="*", type=int, default=[3, 5])
    parser.add_argument(
        "--measure-runs", type=int, default=0,
        help="instead: this many runs of the accuracy's coverage under noisy labels",
    )  # fmt: skip
    parser.add_argument(
        "--autocorrelation", type=int, default=0,
        help="instead: the autocorrelation of this many rounds' measure (--seeds chains)",
    )  # fmt: skip
    parser.add_argument("--seeds", type=int, default=4, help="chains of --autocorrelation")
    parser.add_argument("--imputations", type=int, default=100)
    parser.add_argument("--burn", type=int, default=20)
    parser.add_argument("--sweeps", type=int, default=10)
    parser.add_argument("--draws", type=int, default=400, help="--measure-runs: draws in all")
    parser.add_argument("--first-seed", type=int, default=0, help="--measure-runs: from it")
    parser.add_argument(
        "--pool",
        choices=["judge", "plain"],
        default="judge",
        help="--measure-runs: with the coin-flip judge or without",
    )
    parser.add_argument(
        "--engine",
        choices=["fast", "pymc"],
        default="fast",
        help="--measure-runs: the joint posterior by data augmentation or NUTS",
    )
    args = parser.parse_args()
    from benchmarks._common import machine_info, markdown_table

    if args.autocorrelation:
        rows = round_autocorrelation(args.seeds, args.autocorrelation, args.sweeps)
        header = ["sweeps", "seed", "rounds", "lag 1", "lag 2", "lag 5", "lag 10", "ESS"]
        print(markdown_table(header, rows))
        print(json.dumps(machine_info(), indent=1))
        return
    if args.measure_runs:
        rows = measure_runs(args.measure_runs, args.imputations, args.burn, args.sweeps,
                            args.pool, args.engine, args.draws, args.first_seed)  # fmt: skip
        header = ["pool", "engine", "labels from", "seeds", "draws", "rounds kept",
                  "rounds burnt", "sweeps",
                  "covered", "misses: truth below / above",
                  "median error (mean)", "median error (sd)", "width",
                  "labelled items' error: sd / posterior sd"]  # fmt: skip
        print(markdown_table(header, rows))
        print(json.dumps(machine_info(), indent=1))
        return

    start = time.perf_counter()
    rows = []
    for n_items in args.items:
        for per_item in args.per_item:
            runs = [one_crowd(seed, n_items, args.annotators, per_item)
                    for seed in range(args.crowds)]  # fmt: skip
            cov90 = np.concatenate([r["covered90"] for r in runs])
            cov95 = np.concatenate([r["covered95"] for r in runs])
            rows.append([
                n_items, per_item,
                f"{np.mean([r['agree'] for r in runs]):.4f}",
                f"{np.min([r['agree'] for r in runs]):.4f}",
                f"{np.mean([r['right_bayeval'] for r in runs]):.4f}",
                f"{np.mean([r['right_crowdkit'] for r in runs]):.4f}",
                f"{np.mean([r['right_majority'] for r in runs]):.4f}",
                f"{np.max([r['em_vs_crowdkit'] for r in runs]):.1e}",
                f"{cov90.mean():.3f} ({cov90.size})", f"{cov95.mean():.3f}",
            ])  # fmt: skip
            print(f"{n_items} items x {per_item}: {time.perf_counter() - start:.0f} s", flush=True)
    header = ["items", "answers/item", "agree (mean)", "agree (min)", "right: bayeval",
              "right: crowd-kit DS", "right: majority", "EM vs crowd-kit", "cover 90%",
              "cover 95%"]  # fmt: skip
    print(markdown_table(header, rows))
    print(json.dumps(machine_info(), indent=1))


if __name__ == "__main__":
    main()
