"""Benchmark: the honesty battery, coverage of every interval on pools that break assumptions.

For each pool of ``bayeval.simulate.battery.BATTERY_POOLS`` (or ``--pools``), each sampler
(``--samplers``) and ``--repeats`` seeds, one run of the sampler for F1 is scored after each
budget (``--budgets``): the 95% design-based interval and the credible intervals of the default
``ScoreCalibration`` and of its robust variant (``ScoreCalibration.robust()``), for precision,
recall and F1 from the same labels (``bayeval.simulate.battery.honesty_run``). Per cell it
reports coverage with its Monte Carlo standard error and 95% Wilson interval, the median width
and the share of runs whose estimate lies inside its own interval.

``timing()`` records the cost of a credible interval and of a 2,000-label AIS run against
baselines measured in the same run (see its docstring).

A cell *passes* the issue's target when the Wilson interval of its coverage overlaps
[0.93, 0.99] (at budget 50: reaches 0.90).

Run from the repository root::

    .venv/bin/python benchmarks/honesty.py                        # the full battery (hours)
    .venv/bin/python benchmarks/honesty.py --repeats 40 --samplers passive,static_is,ais
    .venv/bin/python benchmarks/honesty.py --quick                # smoke test, writes nothing
    .venv/bin/python benchmarks/honesty.py --timing-only          # costs, printed
    .venv/bin/python benchmarks/honesty.py --show benchmarks/results/honesty.json
    .venv/bin/python benchmarks/honesty.py --pools shuttle --output shuttle.json  # pool by pool
    .venv/bin/python benchmarks/honesty.py --show shuttle.json separated.json      # merged

Results go to ``benchmarks/results/honesty.json`` (``--output``) and are printed as Markdown.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, git_status, machine_info, markdown_table, sample_load  # noqa: E402

from bayeval.simulate.battery import (  # noqa: E402
    BATTERY_POOLS,
    coverage_battery,
    summarise_battery,
)

OUTPUT = REPO / "benchmarks" / "results" / "honesty.json"


def passes(row) -> bool:
    """Whether a cell's 95% Wilson interval of coverage meets the issue's window."""
    if row["budget"] <= 50:
        return row["coverage_upper"] >= 0.90
    return row["coverage_upper"] >= 0.93 and row["coverage_lower"] <= 0.99


def tables(cells: pd.DataFrame) -> str:
    """One Markdown table per pool: rows sampler x budget x measure, columns the intervals."""
    out = []
    for pool, by_pool in cells.groupby("pool", sort=False):
        header = ["sampler", "labels", "measure"]
        for kind in ("design", "default", "robust"):
            header += [f"{kind} cover", f"{kind} width"]
        header.append("inside")
        rows = []
        keys = ["sampler", "budget", "measure"]
        for (sampler, budget, measure), g in by_pool.groupby(keys, sort=False):
            row = [sampler, str(budget), measure]
            inside = []
            for kind in ("design", "default", "robust"):
                cell = g[g["interval"] == kind].iloc[0]
                mark = "" if passes(cell) else " ✗"
                row += [
                    f"{cell['coverage']:.2f}±{cell['coverage_se']:.2f}{mark}",
                    f"{cell['median_width']:.3f}",
                ]
                inside.append(cell["inside"])
            row.append(f"{min(inside):.2f}")
            rows.append(row)
        runs = int(by_pool["runs"].max())
        out.append(f"### Pool `{pool}` ({runs} runs per cell)\n\n{markdown_table(header, rows)}")
    return "\n\n".join(out)


def overview(cells: pd.DataFrame) -> str:
    """Per pool: passing cells and lowest coverage of each interval; AIS's F1 MSE over StaticIS.

    The MSE ratio is that of the design estimates at 1,000 and 2,000 labels, with the standard
    error propagated from both MSEs' (first order, independent runs).
    """
    kinds = ("design", "default", "robust")
    header = ["pool", *(f"{kind}: passing, min cover" for kind in kinds), "F1 MSE AIS / StaticIS"]
    rows = []
    for pool, by_pool in cells.groupby("pool", sort=False):
        row = [pool]
        for kind in kinds:
            g = by_pool[by_pool["interval"] == kind]
            ok = [passes(r) for _, r in g.iterrows()]
            row.append(f"{sum(ok)} / {len(ok)}, {g['coverage'].min():.2f}")
        ratios = []
        f1 = by_pool[(by_pool["measure"] == "f1") & (by_pool["interval"] == "design")]
        for budget in (1000, 2000):
            at = f1[f1["budget"] == budget].set_index("sampler")
            if {"ais", "static_is"} <= set(at.index):
                a, b = at.loc["ais"], at.loc["static_is"]
                ratio = a["mse"] / b["mse"]
                se = ratio * np.hypot(a["mse_se"] / a["mse"], b["mse_se"] / b["mse"])
                ratios.append(f"{ratio:.2f} ± {se:.2f} ({budget:,})")
        row.append(", ".join(ratios) or "-")
        rows.append(row)
    return markdown_table(header, rows)


def timing(repeats: int = 7) -> dict:
    """Median wall times on the ``separated`` pool (10^5 items), with same-run baselines.

    (a) A credible interval after 2,000 StaticIS labels (a fresh ``estimate()`` each time,
    the model already bound), against the design interval of the same estimate. (b) A full
    2,000-label AIS run with the default calibration-driven proposal, against the same without
    the fast engine's further mode searches (``ais_one_mode``: ``_further_starts`` patched to
    find no start, the engine before 2676824), AIS with the Dirichlet tree's response
    (``calibration=None``) and StaticIS, interleaved.
    """
    from unittest import mock

    import bayeval as be
    from bayeval.simulate.battery import battery_pool

    pool, truth = battery_pool("separated")
    f1 = be.measures.FScore()

    def label(sampler, budget=2000):
        while sampler.labels_used < budget:
            ids = sampler.ask(50)
            sampler.tell(ids, truth[ids])
        return sampler

    sampler = label(be.sampling.StaticIS(pool, f1, rng=0))
    sampler.estimate().interval(basis="posterior")  # binds the model once
    credible, design = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        sampler.estimate().interval(basis="posterior")
        credible.append(time.perf_counter() - t)
        t = time.perf_counter()
        sampler.estimate().interval()
        design.append(time.perf_counter() - t)

    def one_mode(r):
        with mock.patch("bayeval._core.calibration._further_starts", return_value=[]):
            return label(be.sampling.AIS(pool, f1, rng=r))

    makers = {
        "ais": lambda r: label(be.sampling.AIS(pool, f1, rng=r)),
        "ais_one_mode": one_mode,
        "ais_tree": lambda r: label(be.sampling.AIS(pool, f1, rng=r, calibration=None)),
        "static_is": lambda r: label(be.sampling.StaticIS(pool, f1, rng=r)),
    }
    runs = {name: [] for name in makers}
    for r in range(repeats):
        for name, run in makers.items():
            t = time.perf_counter()
            run(r)
            runs[name].append(time.perf_counter() - t)
    return {
        "credible_interval_ms": 1e3 * float(np.median(credible)),
        "design_interval_ms": 1e3 * float(np.median(design)),
        "run_2000_s": {name: float(np.median(v)) for name, v in runs.items()},
    }


def cells_of(path: Path) -> list[dict]:
    """The cells of a results file, or of the runs a checkpoint holds so far (``.jsonl``)."""
    if path.suffix != ".jsonl":
        return json.loads(path.read_text())["cells"]
    runs = []
    for line in path.read_text().splitlines()[1:]:  # after the settings
        try:
            runs.extend(json.loads(line)["rows"])
        except json.JSONDecodeError:  # a line being written
            break
    return summarise_battery(pd.DataFrame(runs)).to_dict("records")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pools", default=",".join(BATTERY_POOLS))
    parser.add_argument("--samplers", default="passive,stratified,static_is,oasis,ais")
    parser.add_argument("--budgets", default="50,250,1000,2000")
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2, help="dask workers (0: none)")
    parser.add_argument("--size", type=int, default=None, help="items of the synthetic pools")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument(
        "--checkpoint",
        type=Path,
        help="file of finished runs (JSON lines): rerun the same command on the same code to "
        "resume an interrupted battery",
    )
    parser.add_argument("--quick", action="store_true", help="tiny run, writes nothing")
    parser.add_argument(
        "--show",
        type=Path,
        nargs="+",
        help="print the tables of results files (one per pool), or of checkpoints so far",
    )
    parser.add_argument("--timing-only", action="store_true", help="only the timing section")
    args = parser.parse_args(argv)
    if args.show:
        cells = [cell for path in args.show for cell in cells_of(path)]
        print(overview(pd.DataFrame(cells)), tables(pd.DataFrame(cells)), sep="\n\n")
        return
    if args.timing_only:
        print(json.dumps({"machine": machine_info(), "timing": timing()}, indent=1))
        return
    pools = tuple(args.pools.split(","))
    samplers = tuple(args.samplers.split(","))
    budgets = tuple(int(b) for b in args.budgets.split(","))
    repeats, size = args.repeats, args.size
    if args.quick:
        pools, samplers, budgets, repeats, size = ("separated",), ("static_is",), (250,), 2, 5000
    client = None
    if args.workers and not args.quick:
        from distributed import Client

        client = Client(n_workers=args.workers, threads_per_worker=1, dashboard_address=":0")
    # at the start: the commit (and uncommitted files) whose code the workers run
    machine, uncommitted = machine_info(), git_status()
    loads, stop = [], threading.Event()
    threading.Thread(target=sample_load, args=(loads, stop), daemon=True).start()
    started = time.perf_counter()
    cells = coverage_battery(
        pools, samplers, budgets, repeats, client=client, size=size, checkpoint=args.checkpoint
    )
    seconds = time.perf_counter() - started
    stop.set()
    if client is not None:
        client.close()
    print(overview(cells), tables(cells), sep="\n\n")
    cells["passes"] = [passes(row) for _, row in cells.iterrows()]
    if args.quick:
        return
    record = {
        "machine": machine,
        "uncommitted": uncommitted,
        "command": "benchmarks/honesty.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "seconds": seconds,
        "loadavg_during": float(np.mean(loads)) if loads else None,
        "timing": timing(),
        "cells": json.loads(cells.to_json(orient="records")),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(record, indent=1))
    print(f"\n{len(cells)} cells in {seconds / 60:.1f} min; written to {args.output}")


if __name__ == "__main__":
    main()
