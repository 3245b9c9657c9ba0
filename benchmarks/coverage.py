"""Benchmark: Webber's (2013) coverage study at full scale, against the paper's tables.

Runs :func:`bayeval.simulate.coverage_study` on the three scenarios (neutral, legal, small) with
the paper's design, 1,000 realizations x 1,000 resamples and all nine methods, times it, and
compares mean coverage, RMSE of coverage and mean width with Webber's Tables 4.2.5 and 4.2.6
(read from ``tests/simulate/reference/webber_2013_tables.csv``). Every cell gets a tolerance
from simulation error and table rounding, and a verdict:

- mean coverage: ``0.005 + Z sqrt(2) sd_i(c_i) / sqrt(M)``. The paper prints 2 dp (rounding
  error <= 0.005); ``sd_i(c_i) / sqrt(M)`` is the standard error of a mean over ``M``
  realizations (resampling noise included, since each ``c_i`` carries it), and ``sqrt(2)``
  because the paper's value comes from its own, independent ``M`` realizations.
- RMSE: ``0.0005 + Z sqrt(2) se``, with ``se = sd_i((c_i - 0.95)^2) / (2 RMSE sqrt(M))`` (delta
  method). Both RMSEs carry the same resampling floor ``sqrt(0.95 0.05 / 1000) = 0.0069`` when
  ``resamples = 1000``; with fewer resamples ours is first moved to 1,000 resamples (the
  ``rmse_at_1000`` column: ``MSE + mean_i c_i (1 - c_i) S / (S - 1) (1/1000 - 1/S)``).
- mean width: ``0.005 + Z sqrt(2) sd_i(w_i) / sqrt(M)``. Koopman and posterior widths are the
  mean over the first ``width_resamples`` outcomes of each realization (the others use all).
  Our normal-type intervals are clipped to [0, 1]; the paper's apparently are not (it reports
  an upper bound of 1.070 and widths above 1), so the script also recomputes the normal widths
  unclipped on the same outcomes and judges both.

``Z = 3`` (27 cells per quantity; at ``Z = 2`` about one would fail by chance alone).

Run from the repository root::

    .venv/bin/python benchmarks/coverage.py --workers 2     # the recorded run, ~4.5 minutes
    .venv/bin/python benchmarks/coverage.py                 # one process, ~7.5 minutes
    .venv/bin/python benchmarks/coverage.py --quick         # 40 x 100 smoke test, writes nothing
    .venv/bin/python benchmarks/coverage.py --show benchmarks/results/coverage.json

Results go to ``benchmarks/results/coverage.json`` (``--output PATH`` to change) and the
comparison is printed as Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy
from _common import git_status, machine_info, sample_load

from bayeval import simulate
from bayeval.simulate._decisions import NORMAL_TYPE, normal_bounds

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_OUTPUT = HERE / "results" / "coverage.json"
REFERENCE = REPO / "tests" / "simulate" / "reference" / "webber_2013_tables.csv"

SCENARIOS = ("neutral", "legal", "small")
SEED = 2013
PROB = 0.95
Z = 3.0
PAPER_RESAMPLES = 1000
WIDTH_ROUNDING, RMSE_ROUNDING = 0.005, 0.0005  # the tables print 2 dp and 3 dp
#: Scenario means printed in Webber's Tables 4.1.1-4.1.3 (Mean column), as a check on ours.
PAPER_POPULATION_MEANS = {
    "neutral": {"N": 2_000_500, "precision": 0.64, "n1": 1935, "n0": 1995},
    "legal": {"N": 1_075_000, "precision": 0.48, "n1": 820, "n0": 3170},
    "small": {"N": 5500, "precision": 0.51, "n1": 290, "n0": 815},
}


def read_paper(path: Path = REFERENCE) -> dict:
    """``{scenario: {method: {width, cvr, rmse}}}`` from the reference CSV (``mean``: rmse)."""
    frame = pd.read_csv(path, comment="#")
    out: dict = {}
    for row in frame.itertuples(index=False):
        values = {k: getattr(row, k) for k in ("width", "cvr", "rmse")}
        out.setdefault(row.scenario, {})[row.method] = {
            k: None if pd.isna(v) else float(v) for k, v in values.items()
        }
    return out


# --------------------------------------------------------------------------- unclipped widths


def raw_normal_widths(study, seed: int) -> dict[str, np.ndarray]:
    """Per-realization mean unclipped width of the normal-type methods, on the study's outcomes.

    Re-derives each realization's outcomes from the seed as ``coverage_study`` does (root
    ``SeedSequence(seed)``, second child, one grandchild per realization) and checks that
    clipping the result gives the study's own widths, so a change there cannot go unnoticed.
    """
    methods = [m for m in study.methods if m in NORMAL_TYPE]
    _, outcome_seed = np.random.SeedSequence(seed).spawn(2)
    seeds = outcome_seed.spawn(len(study.populations))
    out = {m: np.empty(len(seeds)) for m in methods}
    for i, (pop, s) in enumerate(zip(study.populations.to_dict("records"), seeds, strict=True)):
        gen = np.random.default_rng(s)
        r1 = gen.hypergeometric(pop["R1"], pop["N1"] - pop["R1"], pop["n1"], study.resamples)
        r0 = gen.hypergeometric(pop["R0"], pop["N0"] - pop["R0"], pop["n0"], study.resamples)
        for m in methods:
            low, high = normal_bounds(m, pop, r1, r0, study.prob, clip=False)
            out[m][i] = np.mean(high - low)
            clipped = normal_bounds(m, pop, r1, r0, study.prob)
            if not np.isclose(np.mean(clipped[1] - clipped[0]), study.stats[i, _col(study, m), 3]):
                raise RuntimeError(f"outcomes of realization {i} not reproduced ({m})")
    return out


def _col(study, method: str) -> int:
    return study.methods.index(method)


# --------------------------------------------------------------------------- the study


def summarise(study, raw_widths: dict[str, np.ndarray]) -> dict:
    """Per-method numbers (with their standard errors) of one scenario's study."""
    table = study.table()
    m_count = len(study.populations)
    s = study.resamples
    out = {}
    for method in study.methods:
        cov = study.stats[:, _col(study, method), 0]
        width = study.stats[:, _col(study, method), 3]
        sq = (cov - study.prob) ** 2
        mse = sq.mean()
        rmse = math.sqrt(mse)
        noise = np.mean(cov * (1 - cov)) * s / (s - 1)  # E[c(1-c)] per outcome, unbiased
        row = {key: float(v) for key, v in table.loc[method].items()}
        row |= {
            "coverage_sd": float(cov.std(ddof=1)),
            "coverage_se": float(cov.std(ddof=1) / math.sqrt(m_count)),
            "rmse_se": float(sq.std(ddof=1) / math.sqrt(m_count) / (2 * rmse)) if rmse else 0.0,
            "rmse_at_1000": math.sqrt(max(mse + noise * (1 / PAPER_RESAMPLES - 1 / s), 0.0)),
            "rmse_no_resampling": math.sqrt(max(mse - noise / s, 0.0)),
            "width_se": float(width.std(ddof=1) / math.sqrt(m_count)),
            "min_coverage": float(cov.min()),
        }
        if method in raw_widths:
            raw = raw_widths[method]
            row |= {
                "mean_width_raw": float(raw.mean()),
                "width_raw_se": float(raw.std(ddof=1) / math.sqrt(m_count)),
            }
        out[method] = row
    return out


def population_summary(pops) -> dict:
    means = {c: float(pops[c].mean()) for c in ("N", "prevalence", "recall", "precision")}
    means |= {c: float(pops[c].mean()) for c in ("n1", "n0")}
    means["realized_precision"] = float((pops["R1"] / pops["N1"]).mean())
    means["recall_is_1"] = int((pops["R0"] == 0).sum())
    return means


def run(
    scenarios, realizations, resamples, width_resamples, workers, chunk_size, seed, dask_trim=False
) -> dict:
    import distributed

    machine = machine_info(
        scipy=scipy.__version__, pandas=pd.__version__, distributed=distributed.__version__
    )
    client = cluster = None
    loads, stop = [], threading.Event()
    sampler = threading.Thread(target=sample_load, args=(loads, stop), daemon=True)
    sampler.start()
    began = time.perf_counter()
    if workers:
        import dask
        from distributed import Client, LocalCluster

        # dask's nannies set MALLOC_TRIM_THRESHOLD_=65536 in their workers, which turns off
        # glibc's adaptive mmap threshold: every array of more than 64 KiB is then mapped and
        # unmapped afresh, and on this machine the page faults made the workers ~35% slower
        # (8 s against 11 s for 100 small-scenario realizations; 2.8x the minor faults).
        # Unset, the workers allocate as the single process does.
        unset = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
        with dask.config.set(unset if not dask_trim else {}):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=":0")
        client = Client(cluster)
    started = time.perf_counter() - began
    results = {}
    try:
        for name in scenarios:
            print(f"{name}: {realizations} x {resamples} ...", file=sys.stderr, flush=True)
            study = simulate.coverage_study(
                name, realizations=realizations, resamples=resamples, prob=PROB, rng=seed,
                client=client, width_resamples=width_resamples, chunk_size=chunk_size,
            )  # fmt: skip
            print(f"  {study.seconds:.1f} s", file=sys.stderr, flush=True)
            raw = raw_normal_widths(study, seed)
            results[name] = {
                "seconds": study.seconds,
                "rejected": int(study.populations.attrs["rejected"]),
                "population_means": population_summary(study.populations),
                "methods": summarise(study, raw),
            }
    finally:
        if client is not None:
            client.close()
            cluster.close()
    stop.set()
    sampler.join()
    machine["loadavg_end"] = list(os.getloadavg())
    machine["git_status_bayeval"] = git_status()
    machine["loadavg_1min_during"] = {"mean": float(np.mean(loads)), "max": float(np.max(loads))}
    return {
        "benchmark": "coverage",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "settings": {
            "scenarios": list(scenarios),
            "realizations": realizations,
            "resamples": resamples,
            "width_resamples": width_resamples,
            "prob": PROB,
            "rng": seed,
            "workers": workers,
            "chunk_size": chunk_size,
            "methods": list(simulate.METHODS),
            "z": Z,
            "dask_malloc_trim_threshold": "dask default (65536)" if dask_trim else "unset",
        },  # fmt: skip
        "machine": machine,
        "cluster_start_seconds": started,
        "study_seconds": sum(r["seconds"] for r in results.values()),
        "total_seconds": time.perf_counter() - began,
        "paper": read_paper(),
        "paper_population_means": PAPER_POPULATION_MEANS,
        "scenarios": results,
    }


# --------------------------------------------------------------------------- comparison


def _printed(value: float, quantity: str) -> str:
    """``value`` as the paper prints it: RMSE to 3 dp, coverage and width to 2 dp."""
    return f"{value:.3f}" if quantity == "rmse" else f"{value:.2f}"


def compare(report: dict) -> list[dict]:
    """One row per (scenario, method, quantity): paper, ours, tolerance and verdict."""
    rows = []
    root2 = math.sqrt(2)
    for name, result in report["scenarios"].items():
        paper = report["paper"][name]
        for method, ours in result["methods"].items():
            ref = paper[method]
            cells = [
                ("cvr", ours["mean_coverage"],
                 WIDTH_ROUNDING + Z * root2 * ours["coverage_se"]),
                ("rmse", ours["rmse_at_1000"],
                 RMSE_ROUNDING + Z * root2 * ours["rmse_se"]),
                ("width", ours["mean_width"],
                 WIDTH_ROUNDING + Z * root2 * ours["width_se"]),
            ]  # fmt: skip
            if "mean_width_raw" in ours:
                cells.append(
                    ("width_raw", ours["mean_width_raw"],
                     WIDTH_ROUNDING + Z * root2 * ours["width_raw_se"])
                )  # fmt: skip
            for quantity, value, tol in cells:
                target = ref["width" if quantity == "width_raw" else quantity]
                rows.append({
                    "scenario": name, "method": method, "quantity": quantity, "paper": target,
                    "ours": value, "tolerance": tol, "agrees": abs(value - target) <= tol,
                    "same_printed": _printed(value, quantity) == _printed(target, quantity),
                })  # fmt: skip
    return rows


def _mark(row: dict) -> str:
    return "✓" if row["agrees"] else "✗"


def format_report(report: dict) -> str:
    settings = report["settings"]
    machine = report["machine"]
    rows = compare(report)
    lookup = {(r["scenario"], r["method"], r["quantity"]): r for r in rows}
    lines = [
        f"Settings: {settings['realizations']} realizations x {settings['resamples']} resamples "
        f"per scenario, {len(settings['methods'])} methods, prob {settings['prob']}, rng "
        f"{settings['rng']}, width_resamples {settings['width_resamples']}, workers "
        f"{settings['workers'] or 'none (one process)'}, chunk_size {settings['chunk_size']}"
        + (
            f" (MALLOC_TRIM_THRESHOLD_ in the workers: {settings['dask_malloc_trim_threshold']})"
            if settings["workers"] and "dask_malloc_trim_threshold" in settings
            else ""
        )
        + ".",
        f"Machine: {machine['platform']}, {machine['cpu_model']}, cpu_count "
        f"{machine['cpu_count']}, Python {machine['python']}, numpy {machine['numpy']}, scipy "
        f"{machine['scipy']}, distributed {machine['distributed']}, git {machine['git_commit']}, "
        f"{machine['date']}, 1-min load {machine['loadavg_start'][0]:.2f} at the start, "
        f"{machine['loadavg_end'][0]:.2f} at the end, "
        f"{machine['loadavg_1min_during']['mean']:.2f} on average during the run (max "
        f"{machine['loadavg_1min_during']['max']:.2f}; the run itself accounts for about "
        f"{max(settings['workers'], 1)}).",
    ]
    dirty = machine.get("git_status_bayeval")
    if dirty:
        lines.append(f"Uncommitted changes under bayeval/ at run time: {', '.join(dirty)}.")
    lines += [
        "",
        "### Time",
        "",
        "| scenario | seconds | rejected draws | realizations with recall 1 |",
        "|---|---|---|---|",
    ]
    for name, result in report["scenarios"].items():
        lines.append(
            f"| {name} | {result['seconds']:.1f} | {result['rejected']} | "
            f"{result['population_means']['recall_is_1']} |"
        )
    lines += [
        f"| **total** | **{report['study_seconds']:.1f}** "
        f"(+{report['cluster_start_seconds']:.1f} cluster start; "
        f"{report['total_seconds']:.1f} wall in all) | | |",
        "",
        "### Scenario means: ours (paper's Mean column)",
        "",
        "| scenario | N | precision (drawn) | n1 | n0 |",
        "|---|---|---|---|---|",
    ]
    for name, result in report["scenarios"].items():
        ours, paper = result["population_means"], report["paper_population_means"][name]
        lines.append(
            f"| {name} | {ours['N']:,.0f} ({paper['N']:,}) | {ours['precision']:.3f} "
            f"({paper['precision']}) | {ours['n1']:,.0f} ({paper['n1']:,}) | "
            f"{ours['n0']:,.0f} ({paper['n0']:,}) |"
        )
    rmse_note = "" if settings["resamples"] == PAPER_RESAMPLES else " (moved to 1,000 resamples)"
    for name, result in report["scenarios"].items():
        lines += [
            "",
            f"### {name}: ours ± tolerance vs paper (Tables 4.2.5, 4.2.6)",
            "",
            f"| method | cvr paper | cvr ours | | RMSE paper | RMSE ours{rmse_note} | | "
            "width paper | width ours (clipped) | | width ours (unclipped) | |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for method in result["methods"]:
            c, r, w = (lookup[(name, method, q)] for q in ("cvr", "rmse", "width"))
            raw = lookup.get((name, method, "width_raw"))
            raw_cells = (
                f"{raw['ours']:.3f} ± {raw['tolerance']:.3f} | {_mark(raw)}" if raw else "- | "
            )
            lines.append(
                f"| {method} | {c['paper']:.2f} | {c['ours']:.3f} ± {c['tolerance']:.3f} | "
                f"{_mark(c)} | {r['paper']:.3f} | {r['ours']:.3f} ± {r['tolerance']:.3f} | "
                f"{_mark(r)} | {w['paper']:.2f} | {w['ours']:.3f} ± {w['tolerance']:.3f} | "
                f"{_mark(w)} | {raw_cells} |"
            )
    if set(report["scenarios"]) == set(SCENARIOS):
        lines += [
            "",
            "### RMSE, mean over the three scenarios (Table 4.2.6, Mean column)",
            "",
            "| method | paper | ours |",
            "|---|---|---|",
        ]
        for method in settings["methods"]:
            ours = np.mean([report["scenarios"][s]["methods"][method]["rmse_at_1000"]
                            for s in SCENARIOS])  # fmt: skip
            lines.append(f"| {method} | {report['paper']['mean'][method]['rmse']:.3f} | "
                         f"{ours:.3f} |")  # fmt: skip
    lines += [
        "",
        "### Balance and wins: lower gap / upper gap (Fig. 12), closest share (Fig. 13)",
        "",
        "| method | " + " | ".join(f"{s} gaps | {s} closest" for s in report["scenarios"]) + " |",
        "|---|" + "---|---|" * len(report["scenarios"]),
    ]
    for method in settings["methods"]:
        cells = []
        for result in report["scenarios"].values():
            row = result["methods"][method]
            cells.append(f"{row['lower_gap']:.3f} / {row['upper_gap']:.3f}")
            cells.append(f"{row['closest_share']:.3f}")
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    failed = [r for r in rows if not r["agrees"]]
    lines += ["", f"{len(rows) - len(failed)} of {len(rows)} cells agree within tolerance."]
    for quantity in ("cvr", "rmse", "width", "width_raw"):
        these = [r for r in rows if r["quantity"] == quantity]
        same = sum(r["same_printed"] for r in these)
        lines.append(
            f"- {quantity}: {sum(r['agrees'] for r in these)} of {len(these)} within tolerance; "
            f"{same} of {len(these)} print the same as the paper "
            f"({'3' if quantity == 'rmse' else '2'} dp)."
        )
    if failed:
        lines.append("Disagreeing: " + ", ".join(
            f"{r['scenario']}/{r['method']}/{r['quantity']} ({r['ours']:.3f} vs {r['paper']})"
            for r in failed
        ) + ".")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="run on a dask LocalCluster of N one-thread workers (default: none)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: 40 x 100 per scenario; writes only with --output",
    )
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--realizations", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--width-resamples", type=int, default=20)
    parser.add_argument("--chunk-size", type=int, default=25)
    parser.add_argument(
        "--dask-malloc-trim",
        action="store_true",
        help="keep dask's MALLOC_TRIM_THRESHOLD_=65536 in the workers (slower; see run())",
    )
    parser.add_argument("--seed", type=int, default=SEED, help=f"rng of the study (default {SEED})")
    parser.add_argument("--output", type=Path, help=f"JSON file (default {DEFAULT_OUTPUT})")
    parser.add_argument("--show", type=Path, metavar="JSON",
                        help="print the tables of a saved run and exit")  # fmt: skip
    args = parser.parse_args(argv)
    if args.show is not None:
        print(format_report(json.loads(args.show.read_text())))
        return
    if args.quick:
        args.realizations, args.resamples, args.width_resamples = 40, 100, 3
    report = run(
        args.scenarios, args.realizations, args.resamples, args.width_resamples, args.workers,
        args.chunk_size, args.seed, args.dask_malloc_trim,
    )  # fmt: skip
    print(format_report(report))
    output = args.output if args.output is not None or args.quick else DEFAULT_OUTPUT
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(report, indent=1) + "\n")
        print(f"\nwrote {output}")


if __name__ == "__main__":
    main()
