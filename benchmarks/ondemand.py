"""Benchmark: pooled, simple and joint estimators of many systems (issue 5).

Chaganty et al. (2017), Section 6, on ``bayeval.ondemand``'s synthetic universe (the TAC KBP
2015 data is not available).

**The universe.** ``be.ondemand.synthetic_universe`` with 70 systems in 18 teams (consecutive
systems, 3-4 a team), 2,000 true and 20,000 false instances, ``agreement=0.5`` (the latent
shared by all systems) and ``team_agreement=0.3`` (the latent shared within a team), and each
system's expected precision drawn from U(0.2, 0.6) and recall from U(0.1, 0.4), all from
``numpy.random.default_rng(2017)``. It is built once and described: sizes, true scores, and how
much the systems overlap (the share of a system's predictions that no other team predicts).

**Experiment 1 (Section 6.1, Figure 4c-d).** ``--repeats`` (default 500) repeats; repeat ``r``
draws everything from ``default_rng([seed, 0, r])``. It picks 9 of the 18 teams as pooled. The
pooled evaluation dataset is every prediction of the pooled teams' systems plus 150 "manual"
finds (true instances drawn uniformly without replacement), each judged by the truth. Every
system of the other 9 teams is then evaluated three ways:

- pooled: ``be.ondemand.pooled_scores(systems, judged)`` (an unjudged prediction counts as
  false; recall is against the judged true instances);
- simple and joint: one ``OnDemandEvaluator(exhaustive=uni.exhaustive(150), rng=...)`` to which
  every evaluated system is submitted (in random order) with ``n_samples=150``, every ``ask()``
  answered with ``uni.label(ids)``; then ``ev.table("simple")`` and ``ev.table("joint")``, with
  the normal 90% interval, and in the first ``--boot-repeats`` repeats (default 200) also the
  percentile-bootstrap 90% interval (``interval="bootstrap"``, 2,000 replicates).

Against ``uni.scores()`` it reports, per measure and estimator: the bias (mean of estimate -
truth over all (repeat, system) pairs, with a standard error clustered by repeat, since the
systems of one repeat share ``Y_0`` and the pool), the RMSE, the median width of the reported
90% interval, its coverage (binomial standard error, and the one clustered by repeat), the
median over systems of the spread between the 5th and 95th percentiles of a system's estimates
across the repeats that evaluated it (the empirical 90% range), and how many systems have a
mean error more than 3 of its standard errors from 0.

**Experiment 2 (Section 6.2, Figure 4e).** ``--trials`` (default 100) trials; trial ``t`` draws
from ``default_rng([seed, 1, t])``. The 40 systems with the highest true F1 are submitted in a
random order with the adaptive sample size (no ``n_samples``), ``target_se = 0.5 / sqrt(500)``
(the first system's worst-case variance is 1/4, so it is planned at about 500 draws), with 150
draws of ``Y_0``. Per position it records the draws planned and the new labels bought, and the
same for a second evaluator given the same order and ``Y_0`` with a fixed ``n_samples=500``
(which still reuses labels bought for earlier systems); at the end, the joint estimates' error;
and, in the adaptive run, each system's joint precision right after its submission (one
``table`` per submission: most of this experiment's time), against the standard error planned
for it.

Run from the repository root::

    .venv/bin/python benchmarks/ondemand.py --workers 2    # the recorded run, ~16 minutes
    .venv/bin/python benchmarks/ondemand.py --quick        # smoke test, ~40 s, writes nothing
    .venv/bin/python benchmarks/ondemand.py --show benchmarks/results/ondemand.json

Results go to ``benchmarks/results/ondemand.json`` (``--output PATH`` to change; ``--raw
PATH.npz`` also saves every estimate and bound) and are printed as Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import scipy
from _common import git_status, machine_info, markdown_table, sample_load
from scipy import stats

import bayeval as be

HERE = Path(__file__).resolve().parent
DEFAULT_OUTPUT = HERE / "results" / "ondemand.json"

UNIVERSE = {
    "n_systems": 70,
    "n_teams": 18,
    "n_true": 2000,
    "n_false": 20000,
    "agreement": 0.5,
    "team_agreement": 0.3,
    "precision": (0.2, 0.6),  # each system's expected precision ~ U(low, high)
    "recall": (0.1, 0.4),
    "seed": 2017,
}
SEED = 2017
POOLED_TEAMS = 9
MANUAL = 150  # true instances found by hand, added to the pooled dataset
N0 = 150  # draws of Y_0 for the on-demand evaluators
N_SAMPLES = 150  # draws per system in experiment 1
PROB = 0.9
N_BOOT = 2000
MEASURES = ("precision", "recall", "f1")
VARIANTS = ("pooled", "simple", "joint", "simple_bootstrap", "joint_bootstrap")
#: Section 6.1: median 90% interval widths, simple -> joint.
PAPER_WIDTHS = {"precision": (0.14, 0.06), "recall": (0.14, 0.08)}
ADAPTIVE_SYSTEMS = 40
GROUPS = ((1, 10), (11, 20), (21, 30), (31, 40))  # positions of submission
FIRST_SAMPLES = 500
TARGET_SE = 0.5 / np.sqrt(FIRST_SAMPLES)
FIXED_SAMPLES = 500
POSITIONS = (1, 2, 5, 10, 20, 40)
PRECISION_COLUMNS = ("precision", "precision_lower", "precision_upper")
MIN_PER_SYSTEM = 20  # repeats a system needs for its per-system spread and bias

_UNI: be.ondemand.SyntheticUniverse | None = None


# -- the universe -------------------------------------------------------------------------------
def make_universe() -> be.ondemand.SyntheticUniverse:
    cfg = UNIVERSE
    rng = np.random.default_rng(cfg["seed"])
    n = cfg["n_systems"]
    precision = rng.uniform(*cfg["precision"], size=n)
    recall = rng.uniform(*cfg["recall"], size=n)
    return be.ondemand.synthetic_universe(
        n,
        n_true=cfg["n_true"],
        n_false=cfg["n_false"],
        precision=precision,
        recall=recall,
        agreement=cfg["agreement"],
        n_teams=cfg["n_teams"],
        team_agreement=cfg["team_agreement"],
        rng=rng,
    )


def _init_worker() -> None:
    global _UNI
    _UNI = make_universe()


def _universe() -> be.ondemand.SyntheticUniverse:
    if _UNI is None:
        _init_worker()
    return _UNI


def membership(uni) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """System names, the (systems x instances) prediction matrix, team names, team of each."""
    names = list(uni.systems)
    member = np.zeros((len(names), uni.size), dtype=bool)
    for i, name in enumerate(names):
        member[i, uni.systems[name]] = True
    teams = sorted(set(uni.teams.values()))
    team_of = np.array([teams.index(uni.teams[name]) for name in names])
    return names, member, teams, team_of


def describe_universe(uni) -> dict:
    names, member, teams, team_of = membership(uni)
    truth = uni.truth
    by_team = np.zeros((len(teams), uni.size), dtype=bool)
    for t in range(len(teams)):
        by_team[t] = member[team_of == t].any(axis=0)
    teams_per_instance = by_team.sum(axis=0)
    only_own = teams_per_instance == 1
    sizes = member.sum(axis=1)
    unique = (member & only_own).sum(axis=1) / sizes
    unique_true = (member & only_own & truth).sum(axis=1) / np.maximum((member & truth).sum(1), 1)
    unique_true_of_all = (member & only_own & truth).sum(axis=1) / sizes
    inter = member.astype(np.int32) @ member.T.astype(np.int32)
    jaccard = inter / (sizes[:, None] + sizes[None, :] - inter)
    same = team_of[:, None] == team_of[None, :]
    off = ~np.eye(len(names), dtype=bool)
    union = member.any(axis=0)
    scores = uni.scores()
    return {
        "instances": uni.size,
        "true_instances": int(truth.sum()),
        "systems": len(names),
        "teams": len(teams),
        "team_sizes": [int(v) for v in np.bincount(team_of)],
        "system_sizes": _quantiles(sizes),
        "true_scores": {m: _quantiles(scores[m].to_numpy()) for m in MEASURES},
        "pool_of_all_systems": int(union.sum()),
        "pool_recall_theta": float((union & truth).sum() / truth.sum()),
        "unique_to_team_share": _quantiles(unique),
        "unique_to_team_share_of_true": _quantiles(unique_true),
        "jaccard_within_team": _quantiles(jaccard[same & off]),
        "jaccard_between_teams": _quantiles(jaccard[~same]),
        "per_system": {
            name: {
                "team": uni.teams[name],
                "size": int(sizes[i]),
                "unique_to_team_share": float(unique[i]),
                "unique_true_share": float(unique_true_of_all[i]),
                **{m: float(scores.loc[name, m]) for m in MEASURES},
            }
            for i, name in enumerate(names)
        },
    }


def _quantiles(x) -> dict:
    x = np.asarray(x, dtype=float)
    q = np.quantile(x, [0, 0.25, 0.5, 0.75, 1])
    return dict(zip(("min", "q1", "median", "q3", "max"), q.tolist(), strict=True))


# -- experiment 1 -------------------------------------------------------------------------------
def run_repeat(r: int, seed: int, bootstrap: bool) -> dict:
    """One repeat: pool 9 teams, evaluate the other teams' systems pooled, simple and joint."""
    uni = _universe()
    names = list(uni.systems)
    rng = np.random.default_rng([seed, 0, r])
    teams = sorted(set(uni.teams.values()))
    pooled_teams = sorted(rng.choice(teams, POOLED_TEAMS, replace=False).tolist())
    evaluated = [i for i, name in enumerate(names) if uni.teams[name] not in pooled_teams]
    seconds = {}

    start = time.perf_counter()
    pooled_ids = [uni.systems[name] for name in names if uni.teams[name] in pooled_teams]
    manual = rng.choice(np.flatnonzero(uni.truth), MANUAL, replace=False)
    ids = np.unique(np.concatenate([*pooled_ids, manual]))
    judged = dict(zip(ids.tolist(), uni.truth[ids].astype(int).tolist(), strict=True))
    evaluated_systems = {names[i]: uni.systems[names[i]] for i in evaluated}
    pooled = be.ondemand.pooled_scores(evaluated_systems, judged)
    seconds["pooled"] = time.perf_counter() - start

    start = time.perf_counter()
    ev = be.ondemand.OnDemandEvaluator(uni.exhaustive(N0, rng=rng), rng=rng)
    for i in rng.permutation(evaluated):
        ev.submit(names[i], uni.systems[names[i]], n_samples=N_SAMPLES)
        asked = ev.ask()
        ev.tell(asked, uni.label(asked))
    seconds["submit"] = time.perf_counter() - start
    tables = {"pooled": pooled}
    for estimator in ("simple", "joint"):
        start = time.perf_counter()
        tables[estimator] = ev.table(estimator, prob=PROB)
        seconds[estimator] = time.perf_counter() - start
    if bootstrap:
        for estimator in ("simple", "joint"):
            start = time.perf_counter()
            tables[f"{estimator}_bootstrap"] = ev.table(
                estimator, interval="bootstrap", prob=PROB, n_boot=N_BOOT
            )
            seconds[f"{estimator}_bootstrap"] = time.perf_counter() - start

    order = [names[i] for i in evaluated]
    out = {
        "repeat": r,
        "pooled_teams": pooled_teams,
        "evaluated": evaluated,
        "judged": len(judged),
        "judged_true": int(sum(judged.values())),
        "labels": int(ev.submissions["new_labels"].sum()),
        "seconds": seconds,
        "tables": {},
    }
    for variant, table in tables.items():
        t = table.loc[order]
        est = t[list(MEASURES)].to_numpy(dtype=float)
        if variant == "pooled":
            lower = upper = np.full_like(est, np.nan)
        else:
            lower = t[[f"{m}_lower" for m in MEASURES]].to_numpy(dtype=float)
            upper = t[[f"{m}_upper" for m in MEASURES]].to_numpy(dtype=float)
        out["tables"][variant] = (est, lower, upper)
    return out


def _repeat_chunk(args) -> list[dict]:
    repeats, seed, n_boot_repeats = args
    return [run_repeat(r, seed, r < n_boot_repeats) for r in repeats]


def experiment1(repeats: int, boot_repeats: int, seed: int, pool) -> dict:
    uni = _universe()
    names = list(uni.systems)
    truth = uni.scores().loc[names, list(MEASURES)].to_numpy()
    chunks = [list(range(i, min(i + 10, repeats))) for i in range(0, repeats, 10)]
    tasks = [(c, seed, boot_repeats) for c in chunks]
    began = time.perf_counter()
    results = []
    mapper = pool.map(_repeat_chunk, tasks) if pool is not None else map(_repeat_chunk, tasks)
    for part in mapper:
        results += part
        print(
            f"  experiment 1: {len(results)}/{repeats} repeats, "
            f"{time.perf_counter() - began:.0f} s",
            file=sys.stderr,
            flush=True,
        )
    wall = time.perf_counter() - began
    n_sys = len(names)
    arrays = {v: np.full((3, repeats, n_sys, 3), np.nan) for v in VARIANTS}
    evaluated = np.zeros((repeats, n_sys), dtype=bool)
    for res in results:
        r, idx = res["repeat"], res["evaluated"]
        evaluated[r, idx] = True
        for variant, triple in res["tables"].items():
            for k, values in enumerate(triple):
                arrays[variant][k, r, idx] = values
    per_variant = {}
    for variant in VARIANTS:
        rows = np.arange(repeats) < (boot_repeats if "bootstrap" in variant else repeats)
        per_variant[variant] = summarise(arrays[variant], truth, evaluated & rows[:, None])
    normal_on_boot = {}
    boot_rows = (np.arange(repeats) < boot_repeats)[:, None]
    for variant in ("simple", "joint"):
        normal_on_boot[variant] = summarise(arrays[variant], truth, evaluated & boot_rows)
    per_system_pooled_bias = {
        names[s]: float(np.nanmean(arrays["pooled"][0, evaluated[:, s], s, 0] - truth[s, 0]))
        for s in range(n_sys)
        if evaluated[:, s].sum() >= MIN_PER_SYSTEM
    }
    seconds = {
        k: _quantiles([res["seconds"][k] for res in results if k in res["seconds"]])
        for k in ("pooled", "submit", "simple", "joint", "simple_bootstrap", "joint_bootstrap")
        if any(k in res["seconds"] for res in results)
    }
    return {
        "repeats": repeats,
        "boot_repeats": min(boot_repeats, repeats),
        "wall_seconds": wall,
        "evaluated_per_repeat": _quantiles(evaluated.sum(axis=1)),
        "evaluated_repeats_per_system": _quantiles(evaluated.sum(axis=0)),
        "judged": _quantiles([res["judged"] for res in results]),
        "judged_true": _quantiles([res["judged_true"] for res in results]),
        "labels": _quantiles([res["labels"] for res in results]),
        "draws": _quantiles([N0 + N_SAMPLES * len(res["evaluated"]) for res in results]),
        "pooled_teams": [res["pooled_teams"] for res in results],
        "seconds": seconds,
        "summary": per_variant,
        "normal_on_boot_repeats": normal_on_boot,
        "per_system_pooled_precision_bias": per_system_pooled_bias,
        "_arrays": arrays,
        "_evaluated": evaluated,
    }


def summarise(arr: np.ndarray, truth: np.ndarray, rows: np.ndarray) -> dict:
    """Per measure: bias, RMSE, width, coverage and the per-system spread over repeats.

    ``arr`` is (3, repeats, systems, measures): estimate, lower, upper (NaN where not
    evaluated); ``rows`` (repeats, systems) selects the (repeat, system) pairs.
    """
    est, lower, upper = arr
    out = {}
    for k, measure in enumerate(MEASURES):
        e, lo, hi = est[..., k], lower[..., k], upper[..., k]
        t = truth[None, :, k]
        defined = rows & np.isfinite(e)
        err = np.where(defined, e - t, 0.0)
        n = int(defined.sum())
        if n == 0:
            out[measure] = {"pairs": 0, "undefined": int(rows.sum())}
            continue
        bias = float(err.sum() / n)
        bounded = defined & np.isfinite(lo) & np.isfinite(hi)
        covered = bounded & (lo <= t) & (t <= hi)
        nb = int(bounded.sum())
        coverage = float(covered.sum() / nb) if nb else None
        spreads, sds, sys_bias, sys_t = [], [], [], []
        for s in range(e.shape[1]):
            col = e[defined[:, s], s]
            if col.size < MIN_PER_SYSTEM:
                continue
            q5, q95 = np.quantile(col, [0.05, 0.95])
            spreads.append(q95 - q5)
            sd = col.std(ddof=1)
            sds.append(sd)
            b = col.mean() - truth[s, k]
            sys_bias.append(b)
            sys_t.append(b / (sd / np.sqrt(col.size)) if sd > 0 else (0.0 if b == 0 else np.inf))
        sys_t = np.asarray(sys_t)
        width = (hi - lo)[bounded]
        out[measure] = {
            "pairs": n,
            "undefined": int((rows & ~np.isfinite(e)).sum()),
            "bias": bias,
            "bias_se": _cluster_se(err, defined, bias),
            "rmse": float(np.sqrt((err**2).sum() / n)),
            "bounded": nb,
            "median_width": float(np.median(width)) if nb else None,
            "coverage": coverage,
            "coverage_se_binomial": float(np.sqrt(coverage * (1 - coverage) / nb)) if nb else None,
            "coverage_se_clustered": (
                _cluster_se(covered.astype(float), bounded, coverage) if nb else None
            ),
            "systems": len(spreads),
            "median_spread_5_95": float(np.median(spreads)) if spreads else None,
            "median_sd_over_repeats": float(np.median(sds)) if sds else None,
            "per_system_bias": _quantiles(sys_bias) if sys_bias else None,
            "systems_abs_t_above_3": int((np.abs(sys_t) > 3).sum()),
        }
    return out


def _cluster_se(values: np.ndarray, mask: np.ndarray, mean: float) -> float:
    """Standard error of ``sum(values[mask]) / mask.sum()`` with repeats (rows) as clusters."""
    resid = (np.where(mask, values, 0.0) - mean * mask).sum(axis=1)
    g = int((mask.sum(axis=1) > 0).sum())
    if g < 2:
        return float("nan")
    return float(np.sqrt((resid**2).sum() * g / (g - 1)) / mask.sum())


# -- experiment 2 -------------------------------------------------------------------------------
def run_trial(t: int, seed: int) -> dict:
    """One trial of Section 6.2: the top systems in random order, adaptive and fixed 500."""
    uni = _universe()
    scores = uni.scores()
    top = scores["f1"].sort_values(ascending=False).index[:ADAPTIVE_SYSTEMS].tolist()
    rng = np.random.default_rng([seed, 1, t])
    order = [top[i] for i in rng.permutation(len(top))]
    exhaustive = uni.exhaustive(N0, rng=rng)
    ev_seed, fixed_seed = (int(x) for x in rng.integers(2**63, size=2))
    out = {"trial": t, "order": order}
    for label, n_samples, ev_rng in (
        ("adaptive", None, ev_seed),
        ("fixed", FIXED_SAMPLES, fixed_seed),
    ):
        start = time.perf_counter()
        ev = be.ondemand.OnDemandEvaluator(exhaustive, target_se=TARGET_SE, rng=ev_rng)
        at_submission, table_seconds = [], 0.0
        for name in order:
            ev.submit(name, uni.systems[name], n_samples=n_samples)
            asked = ev.ask()
            ev.tell(asked, uni.label(asked))
            if label == "adaptive":  # the new system's joint precision before later systems
                began = time.perf_counter()
                row = ev.table("joint", prob=PROB).loc[name]
                at_submission.append([float(row[k]) for k in PRECISION_COLUMNS])
                table_seconds += time.perf_counter() - began
        seconds = time.perf_counter() - start - table_seconds
        sub = ev.submissions.loc[order]
        table = ev.table("joint", prob=PROB).loc[order]
        out[label] = {
            "samples": sub["samples"].astype(int).tolist(),
            "new_labels": sub["new_labels"].astype(int).tolist(),
            "planned_se": sub["planned_se"].astype(float).tolist(),
            "seconds": seconds,
            "at_submission": at_submission,
            "estimate": table[list(MEASURES)].to_numpy(dtype=float).tolist(),
            "lower": table[[f"{m}_lower" for m in MEASURES]].to_numpy(dtype=float).tolist(),
            "upper": table[[f"{m}_upper" for m in MEASURES]].to_numpy(dtype=float).tolist(),
        }
    return out


def _trial_chunk(args) -> list[dict]:
    trials, seed = args
    return [run_trial(t, seed) for t in trials]


def experiment2(trials: int, seed: int, pool) -> dict:
    uni = _universe()
    scores = uni.scores()
    chunks = [list(range(i, min(i + 10, trials))) for i in range(0, trials, 10)]
    tasks = [(c, seed) for c in chunks]
    began = time.perf_counter()
    results = []
    mapper = pool.map(_trial_chunk, tasks) if pool is not None else map(_trial_chunk, tasks)
    for part in mapper:
        results += part
    wall = time.perf_counter() - began
    print(f"  experiment 2: {trials} trials, {wall:.0f} s", file=sys.stderr, flush=True)
    out = {"trials": trials, "wall_seconds": wall, "target_se": TARGET_SE}
    for label in ("adaptive", "fixed"):
        samples = np.array([res[label]["samples"] for res in results])
        new = np.array([res[label]["new_labels"] for res in results])
        cumulative = new.cumsum(axis=1)
        by_position = []
        for p in range(ADAPTIVE_SYSTEMS):
            by_position.append(
                {
                    "position": p + 1,
                    "samples_mean": float(samples[:, p].mean()),
                    "new_labels_mean": float(new[:, p].mean()),
                    "new_labels_sd": float(new[:, p].std(ddof=1)) if trials > 1 else None,
                    "new_labels_median": float(np.median(new[:, p])),
                    "cumulative_new_labels_mean": float(cumulative[:, p].mean()),
                    "cumulative_samples_mean": float(samples[:, : p + 1].sum(axis=1).mean()),
                }
            )
        est = np.array([res[label]["estimate"] for res in results])
        lower = np.array([res[label]["lower"] for res in results])
        upper = np.array([res[label]["upper"] for res in results])
        truth = np.array([scores.loc[res["order"], list(MEASURES)].to_numpy() for res in results])
        accuracy = {}
        for k, m in enumerate(MEASURES):
            e, t = est[..., k], truth[..., k]
            defined = np.isfinite(e)
            err = np.where(defined, e - t, 0.0)
            n = int(defined.sum())
            covered = defined & (lower[..., k] <= t) & (t <= upper[..., k])
            bias = float(err.sum() / n) if n else None
            groups = {}
            for g in range(0, ADAPTIVE_SYSTEMS, 10):
                sel = defined[:, g : g + 10]
                groups[f"{g + 1}-{g + 10}"] = (
                    float(np.sqrt((err[:, g : g + 10] ** 2).sum() / sel.sum()))
                    if sel.any()
                    else None
                )
            accuracy[m] = {
                "pairs": n,
                "undefined": int((~defined).sum()),
                "bias": bias,
                "bias_se": _cluster_se(err, defined, bias) if n else None,
                "rmse": float(np.sqrt((err**2).sum() / n)) if n else None,
                "rmse_by_position": groups,
                "coverage": float(covered.sum() / n) if n else None,
                "coverage_se_clustered": _cluster_se(
                    covered.astype(float), defined, covered.sum() / n
                )
                if n
                else None,
                "median_width": float(np.median((upper[..., k] - lower[..., k])[defined]))
                if n
                else None,
            }
        at_submission = None
        if label == "adaptive":
            sub = np.array([res[label]["at_submission"] for res in results])  # (T, 40, 3)
            planned = np.array([res[label]["planned_se"] for res in results])
            z = stats.norm.ppf(0.5 + PROB / 2)
            err = sub[..., 0] - truth[..., 0]
            reported = (sub[..., 2] - sub[..., 1]) / (2 * z)
            covered = (sub[..., 1] <= truth[..., 0]) & (truth[..., 0] <= sub[..., 2])
            at_submission = {}
            for g in (*((p, p) for p in (1, 2, ADAPTIVE_SYSTEMS)), *GROUPS):
                lo, hi = g
                cols = slice(lo - 1, hi)
                at_submission[f"{lo}-{hi}" if lo != hi else str(lo)] = {
                    "rmse": float(np.sqrt(np.nanmean(err[:, cols] ** 2))),
                    "bias": float(np.nanmean(err[:, cols])),
                    "planned_se_mean": float(planned[:, cols].mean()),
                    "reported_se_median": float(np.nanmedian(reported[:, cols])),
                    "coverage": float(covered[:, cols].mean()),
                    "undefined": int(np.isnan(err[:, cols]).sum()),
                }
        positions = np.arange(2, ADAPTIVE_SYSTEMS + 1)
        mean_new = new.mean(axis=0)[1:]
        usable = mean_new > 0
        slope = (
            float(np.polyfit(np.log(positions[usable]), np.log(mean_new[usable]), 1)[0])
            if usable.sum() > 2
            else None
        )
        out[label] = {
            "by_position": by_position,
            "total_new_labels": _quantiles(new.sum(axis=1)),
            "total_samples": _quantiles(samples.sum(axis=1)),
            "first_samples": _quantiles(samples[:, 0]),
            "planned_se": _quantiles([se for res in results for se in res[label]["planned_se"]]),
            "loglog_slope_new_labels_2_40": slope,
            "seconds": _quantiles([res[label]["seconds"] for res in results]),
            "accuracy": accuracy,
            "precision_at_submission": at_submission,
        }
    keep = ("samples", "new_labels", "planned_se", "seconds")
    out["raw"] = [
        {"trial": res["trial"], "order": res["order"]}
        | {label: {k: res[label][k] for k in keep} for label in ("adaptive", "fixed")}
        for res in results
    ]
    return out


# -- the run ------------------------------------------------------------------------------------
def run(args) -> dict:
    machine = machine_info(scipy=scipy.__version__, pandas=pd.__version__)
    machine["git_status_bayeval"] = git_status()
    loads, stop = [], threading.Event()
    watcher = threading.Thread(target=sample_load, args=(loads, stop), daemon=True)
    watcher.start()
    began = time.perf_counter()
    report = {
        "benchmark": "ondemand",
        "command": " ".join([".venv/bin/python", *sys.argv]),
        "settings": {
            "universe": UNIVERSE,
            "seed": args.seed,
            "repeats": args.repeats,
            "boot_repeats": args.boot_repeats,
            "trials": args.trials,
            "workers": args.workers,
            "pooled_teams": POOLED_TEAMS,
            "manual": MANUAL,
            "n0": N0,
            "n_samples": N_SAMPLES,
            "prob": PROB,
            "n_boot": N_BOOT,
            "adaptive_systems": ADAPTIVE_SYSTEMS,
            "target_se": TARGET_SE,
            "fixed_samples": FIXED_SAMPLES,
            "paper_widths": PAPER_WIDTHS,
        },
        "machine": machine,
    }
    uni = _universe()
    report["universe"] = describe_universe(uni)
    print(format_universe(report["universe"]), file=sys.stderr, flush=True)
    pool = (
        ProcessPoolExecutor(max_workers=args.workers, initializer=_init_worker)
        if args.workers > 1
        else None
    )
    try:
        report["experiment1"] = experiment1(args.repeats, args.boot_repeats, args.seed, pool)
        report["experiment2"] = experiment2(args.trials, args.seed, pool)
        bias = report["experiment1"]["per_system_pooled_precision_bias"]
        per_system = report["universe"]["per_system"]
        if len(bias) > 2:
            report["experiment1"]["spearman_pooled_precision_bias"] = {
                key: float(
                    stats.spearmanr(
                        [per_system[n][key] for n in bias], list(bias.values())
                    ).statistic
                )
                for key in ("unique_to_team_share", "unique_true_share")
            }
    finally:
        if pool is not None:
            pool.shutdown()
    stop.set()
    watcher.join()
    machine["loadavg_end"] = list(os.getloadavg())
    machine["loadavg_1min_during"] = {"mean": float(np.mean(loads)), "max": float(np.max(loads))}
    report["total_seconds"] = time.perf_counter() - began
    return report


def _dumps(value, indent: str = "") -> str:
    """JSON with one key per line, and lists of scalars on one line."""
    inner = indent + " "
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(str(k))}: {_dumps(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        return "[\n" + ",\n".join(inner + _dumps(v, inner) for v in value) + "\n" + indent + "]"
    return json.dumps(value)


def _jsonable(value):
    """Non-finite floats as ``None`` (strict JSON), numpy scalars as Python ones, recursively."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items() if not str(k).startswith("_")}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


# -- the report ---------------------------------------------------------------------------------
def _f(x, digits: int = 3) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def _signed(x, digits: int = 4) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:+.{digits}f}"


def _q(d: dict | None, digits: int = 3) -> str:
    if d is None:
        return "n/a"
    return f"{_f(d['median'], digits)} [{_f(d['min'], digits)}, {_f(d['max'], digits)}]"


def format_universe(u: dict) -> str:
    ts = u["true_scores"]
    sizes = u["system_sizes"]
    lines = [
        f"Universe: {u['instances']:,} instances ({u['true_instances']:,} true), "
        f"{u['systems']} systems in {u['teams']} teams of {min(u['team_sizes'])}-"
        f"{max(u['team_sizes'])}.",
        "",
        markdown_table(
            ["quantity", "median", "min", "q1", "q3", "max"],
            [
                [label, *(_f(d[k], digits) for k in ("median", "min", "q1", "q3", "max"))]
                for label, d, digits in (
                    ("predictions per system", sizes, 0),
                    ("true precision", ts["precision"], 3),
                    ("true recall", ts["recall"], 3),
                    ("true F1", ts["f1"], 3),
                    (
                        "share of a system's predictions no other team makes",
                        u["unique_to_team_share"],
                        3,
                    ),
                    ("the same, of its true predictions", u["unique_to_team_share_of_true"], 3),
                    ("Jaccard overlap, two systems of one team", u["jaccard_within_team"], 3),
                    ("Jaccard overlap, systems of two teams", u["jaccard_between_teams"], 3),
                )
            ],
        ),  # fmt: skip
        "",
        f"All 70 systems together predict {u['pool_of_all_systems']:,} distinct instances and "
        f"{u['pool_recall_theta']:.1%} of the true ones (the pool's recall theta).",
    ]
    return "\n".join(lines)


_LABELS = {
    "pooled": "pooled",
    "simple": "simple",
    "joint": "joint",
    "simple_bootstrap": "simple, bootstrap interval",
    "joint_bootstrap": "joint, bootstrap interval",
}


def format_experiment1(e: dict) -> list[str]:
    out = [
        f"\n#### Experiment 1 (Section 6.1): {e['repeats']} repeats, "
        f"{e['evaluated_per_repeat']['median']:.0f} systems evaluated a repeat "
        f"({e['evaluated_per_repeat']['min']:.0f}-{e['evaluated_per_repeat']['max']:.0f}); "
        f"every system evaluated in {e['evaluated_repeats_per_system']['min']:.0f}-"
        f"{e['evaluated_repeats_per_system']['max']:.0f} repeats\n",
        f"Pooled dataset: median {e['judged']['median']:,.0f} judged instances "
        f"({e['judged']['min']:,.0f}-{e['judged']['max']:,.0f}), of which "
        f"{e['judged_true']['median']:,.0f} true. On-demand: {e['draws']['median']:,.0f} draws "
        f"a repeat ({N0} of Y_0 and {N_SAMPLES} per system), of which "
        f"{e['labels']['median']:,.0f} distinct new labels (median; "
        f"{e['labels']['min']:,.0f}-{e['labels']['max']:,.0f}) besides the {N0} of Y_0.\n",
        "Over all (repeat, evaluated system) pairs: bias = mean(estimate - truth) ± standard "
        "error clustered by repeat; RMSE; median width and coverage of the reported 90% "
        "interval (± binomial se, clustered se in brackets); empirical 90% range = median over "
        "systems of (95th - 5th percentile) of a system's estimates across repeats; biased "
        "systems = systems whose mean error is more than 3 standard errors from 0.\n",
    ]
    rows = []
    for m in MEASURES:
        for v in ("pooled", "simple", "joint"):
            s = e["summary"][v][m]
            rows.append(_row(m, _LABELS[v], s))
    out.append(
        markdown_table(
            [
                "measure",
                "estimator",
                "bias ± se",
                "RMSE",
                "median 90% width",
                "coverage ± se (clustered)",
                "empirical 90% range",
                "biased systems",
                "undefined",
            ],
            rows,
        )
    )
    out.append(
        f"\nPer-system mean error (median [min, max] over the "
        f"{e['summary']['pooled']['precision']['systems']} systems):\n"
    )
    rows = []
    for m in MEASURES:
        rows.append(
            [m]
            + [_q(e["summary"][v][m]["per_system_bias"], 4) for v in ("pooled", "simple", "joint")]
        )
    out.append(markdown_table(["measure", "pooled", "simple", "joint"], rows))
    rho = e.get("spearman_pooled_precision_bias")
    if rho is not None:
        out.append(
            "\nSpearman correlation over systems of the pooled precision's mean error with the "
            "share of the system's predictions that no other team makes: "
            f"{rho['unique_to_team_share']:+.2f}; with the share of its predictions that are "
            f"true and that no other team makes: {rho['unique_true_share']:+.2f}."
        )

    out.append(
        "\nAgainst the paper (Section 6.1: 'the median 90% confidence intervals reduce from 0.14 "
        "to 0.06 precision and from 0.14 to 0.08 for recall'), simple -> joint:\n"
    )
    rows = []
    for m in MEASURES:
        s, j = e["summary"]["simple"][m], e["summary"]["joint"][m]
        paper = PAPER_WIDTHS.get(m)
        rows.append(
            [
                m,
                f"{paper[0]:.2f} -> {paper[1]:.2f}" if paper else "-",
                f"{_f(s['median_width'])} -> {_f(j['median_width'])}",
                f"{_f(s['median_spread_5_95'])} -> {_f(j['median_spread_5_95'])}",
                f"{_f(s['median_sd_over_repeats'])} -> {_f(j['median_sd_over_repeats'])}",
            ]
        )
    out.append(
        markdown_table(
            [
                "measure",
                "paper",
                "ours: median width of the 90% interval",
                "ours: empirical 90% range",
                "ours: median sd over repeats",
            ],
            rows,
        )
    )

    b = e["boot_repeats"]
    if b:
        out.append(
            f"\nBootstrap against normal intervals on the first {b} repeats (percentile "
            f"bootstrap, {N_BOOT} replicates; coverage ± clustered se):\n"
        )
        rows = []
        for m in MEASURES:
            for est in ("simple", "joint"):
                nrm = e["normal_on_boot_repeats"][est][m]
                bt = e["summary"][f"{est}_bootstrap"][m]
                rows.append(
                    [
                        m,
                        est,
                        _f(nrm["median_width"]),
                        f"{_f(nrm['coverage'])} ± {_f(nrm['coverage_se_clustered'])}",
                        _f(bt["median_width"]),
                        f"{_f(bt['coverage'])} ± {_f(bt['coverage_se_clustered'])}",
                    ]
                )
        out.append(
            markdown_table(
                [
                    "measure",
                    "estimator",
                    "normal: median width",
                    "normal: coverage",
                    "bootstrap: median width",
                    "bootstrap: coverage",
                ],
                rows,
            )
        )
    sec = e["seconds"]
    out.append(
        f"\nSeconds per repeat (median [min, max]); experiment 1 took {e['wall_seconds']:.0f} s "
        "of wall time:\n"
    )
    labels = {
        "pooled": "pooled dataset + pooled_scores",
        "submit": f"evaluator: submit/ask/tell of every system ({N_SAMPLES} draws each)",
        "simple": "table('simple'), normal",
        "joint": "table('joint'), normal",
        "simple_bootstrap": f"table('simple', interval='bootstrap'), {N_BOOT} replicates",
        "joint_bootstrap": f"table('joint', interval='bootstrap'), {N_BOOT} replicates",
    }
    out.append(
        markdown_table(
            ["part", "seconds"], [[labels[k], _q(v, 3)] for k, v in sec.items() if k in labels]
        )
    )
    return out


def _row(measure: str, label: str, s: dict) -> list[str]:
    if not s.get("pairs"):
        return [measure, label, "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", str(s.get("undefined"))]
    cov = (
        f"{_f(s['coverage'])} ± {_f(s['coverage_se_binomial'])} ({_f(s['coverage_se_clustered'])})"
        if s["coverage"] is not None
        else "-"
    )
    return [
        measure,
        label,
        f"{_signed(s['bias'])} ± {_f(s['bias_se'], 4)}",
        _f(s["rmse"], 4),
        _f(s["median_width"]) if s["median_width"] is not None else "-",
        cov,
        _f(s["median_spread_5_95"]),
        f"{s['systems_abs_t_above_3']}/{s['systems']}",
        str(s["undefined"]),
    ]


def format_experiment2(e: dict) -> list[str]:
    a, f = e["adaptive"], e["fixed"]
    out = [
        f"\n#### Experiment 2 (Section 6.2, Figure 4e): {e['trials']} trials, the "
        f"{ADAPTIVE_SYSTEMS} systems with the highest true F1 in random order, target_se = "
        f"{e['target_se']:.5f} (0.5 / sqrt({FIRST_SAMPLES}))\n",
        f"First system planned at {a['first_samples']['median']:.0f} draws "
        f"({a['first_samples']['min']:.0f}-{a['first_samples']['max']:.0f}); planned standard "
        f"errors {_f(a['planned_se']['min'], 5)}-{_f(a['planned_se']['max'], 5)}. 'fixed "
        f"{FIXED_SAMPLES}' draws {FIXED_SAMPLES} per system from the same Y_0 and order, and "
        "also buys only the labels it does not have yet. Means over trials:\n",
    ]
    rows = []
    for p in POSITIONS:
        ap, fp = a["by_position"][p - 1], f["by_position"][p - 1]
        rows.append(
            [
                str(p),
                f"{ap['samples_mean']:.0f}",
                f"{ap['new_labels_mean']:.0f} ± {ap['new_labels_sd'] or 0:.0f}",
                f"{fp['new_labels_mean']:.0f}",
                f"{ap['cumulative_new_labels_mean']:,.0f}",
                f"{fp['cumulative_new_labels_mean']:,.0f}",
                f"{FIXED_SAMPLES * p:,}",
                f"{ap['new_labels_mean'] / a['by_position'][0]['new_labels_mean']:.2f}",
                f"{1 / np.sqrt(p):.2f}",
            ]
        )
    out.append(
        markdown_table(
            [
                "position",
                "adaptive: draws",
                "adaptive: new labels (± sd)",
                f"fixed {FIXED_SAMPLES}: new labels",
                "adaptive: cumulative new labels",
                f"fixed {FIXED_SAMPLES}: cumulative new labels",
                f"{FIXED_SAMPLES} x position",
                "adaptive new labels / position 1",
                "1/sqrt(position)",
            ],
            rows,
        )
    )
    slope = a["loglog_slope_new_labels_2_40"]
    out.append(
        f"\nLog-log slope of the mean new labels against position (positions 2-40): adaptive "
        f"{_f(slope, 2)}, fixed {FIXED_SAMPLES} {_f(f['loglog_slope_new_labels_2_40'], 2)} "
        "(-0.5 would be 1/sqrt(position)). Total labels for 40 systems (median over trials): "
        f"adaptive {a['total_new_labels']['median']:,.0f}, fixed {FIXED_SAMPLES} with reuse "
        f"{f['total_new_labels']['median']:,.0f}, fixed {FIXED_SAMPLES} without reuse "
        f"{FIXED_SAMPLES * ADAPTIVE_SYSTEMS:,} (plus {N0} of Y_0 each).\n"
    )
    out.append(
        "Joint estimates after all 40 systems, over trials x systems (bias ± clustered se; "
        "coverage of the 90% normal interval ± clustered se; RMSE by position of "
        f"submission; target_se = {e['target_se']:.4f}):\n"
    )
    rows = []
    for label, d in (("adaptive", a), (f"fixed {FIXED_SAMPLES}", f)):
        for m in MEASURES:
            s = d["accuracy"][m]
            rows.append(
                [
                    label,
                    m,
                    f"{_signed(s['bias'])} ± {_f(s['bias_se'], 4)}",
                    _f(s["rmse"], 4),
                    _f(s["median_width"]),
                    f"{_f(s['coverage'])} ± {_f(s['coverage_se_clustered'])}",
                    " / ".join(_f(v, 4) for v in s["rmse_by_position"].values()),
                    str(s["undefined"]),
                ]
            )
    out.append(
        markdown_table(
            [
                "sizes",
                "measure",
                "bias ± se",
                "RMSE",
                "median width",
                "coverage",
                "RMSE at positions 1-10 / 11-20 / 21-30 / 31-40",
                "undefined",
            ],
            rows,
        )
    )
    sub = a.get("precision_at_submission")
    if sub:
        out.append(
            "\nAdaptive sizes: each system's joint precision right after its submission (before "
            "later systems add samples), against the standard error planned for it "
            "(over trials; reported se = half the 90% normal interval's width / 1.645):\n"
        )
        rows = [
            [
                k,
                _f(v["rmse"], 4),
                _signed(v["bias"]),
                _f(v["planned_se_mean"], 4),
                _f(v["reported_se_median"], 4),
                _f(v["coverage"]),
                _f(v["rmse"] / v["planned_se_mean"], 2),
            ]
            for k, v in sub.items()
        ]
        out.append(
            markdown_table(
                [
                    "position",
                    "RMSE",
                    "bias",
                    "planned se",
                    "median reported se",
                    "coverage",
                    "RMSE / planned se",
                ],
                rows,
            )
        )
    out.append(
        f"\nSeconds per trial (median): adaptive {a['seconds']['median']:.2f}, fixed "
        f"{f['seconds']['median']:.2f}; experiment 2 took {e['wall_seconds']:.0f} s of wall time."
    )
    return out


def format_report(report: dict) -> str:
    m = report["machine"]
    out = [
        f"`{report['command']}` at {m['date']}, commit {m['git_commit']}"
        + (
            f" (uncommitted under bayeval/: {len(m['git_status_bayeval'])})"
            if m.get("git_status_bayeval")
            else ""
        ),
        f"Machine: {m['platform']}, {m['cpu_model']}, {m['cpu_count']} CPUs; Python {m['python']}, "
        f"numpy {m['numpy']}, scipy {m['scipy']}, pandas {m['pandas']}, bayeval {m['bayeval']}",
        f"Load (1 min): {m['loadavg_start'][0]:.2f} at the start, {m['loadavg_end'][0]:.2f} at the "
        f"end, mean {m['loadavg_1min_during']['mean']:.2f} (max "
        f"{m['loadavg_1min_during']['max']:.2f}); total {report['total_seconds']:.0f} s with "
        f"{report['settings']['workers']} worker(s)\n",
        format_universe(report["universe"]),
    ]
    out += format_experiment1(report["experiment1"])
    out += format_experiment2(report["experiment2"])
    return "\n".join(out)


def save_raw(path: Path, e: dict) -> None:
    arrays = {"evaluated": e["_evaluated"]}
    for v, arr in e["_arrays"].items():
        for k, part in enumerate(("estimate", "lower", "upper")):
            arrays[f"{v}_{part}"] = arr[k]
    np.savez_compressed(path, **arrays)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=500, help="experiment 1 (default 500)")
    parser.add_argument(
        "--boot-repeats", type=int, default=200,
        help="repeats of experiment 1 that also compute bootstrap intervals (default 200)",
    )  # fmt: skip
    parser.add_argument("--trials", type=int, default=100, help="experiment 2 (default 100)")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--seed", type=int, default=SEED, help=f"(default {SEED})")
    parser.add_argument(
        "--quick", action="store_true",
        help="smoke test: 20 repeats (5 with bootstrap), 10 trials; writes only with --output",
    )  # fmt: skip
    parser.add_argument("--output", type=Path, help=f"JSON file (default {DEFAULT_OUTPUT})")
    parser.add_argument("--raw", type=Path, metavar="NPZ", help="also save every estimate")
    parser.add_argument("--show", type=Path, metavar="JSON", help="print a saved run and exit")
    args = parser.parse_args(argv)
    if args.show is not None:
        print(format_report(json.loads(args.show.read_text())))
        return
    if args.quick:
        args.repeats, args.boot_repeats, args.trials = 20, 5, 10
    if min(args.repeats, args.trials, args.workers) < 1 or args.boot_repeats < 0:
        parser.error("--repeats, --trials and --workers must be >= 1, --boot-repeats >= 0")
    args.boot_repeats = min(args.boot_repeats, args.repeats)
    report = run(args)
    print(format_report(_jsonable(report)))
    if args.raw is not None:
        save_raw(args.raw, report["experiment1"])
        print(f"\nwrote {args.raw}")
    output = args.output if args.output is not None or args.quick else DEFAULT_OUTPUT
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(_dumps(_jsonable(report)) + "\n")
        print(f"\nwrote {output}")


if __name__ == "__main__":
    main()
