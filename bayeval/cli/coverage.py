"""``bayeval coverage``: a coverage study of recall intervals (Webber 2013, §4) from the shell.

Examples
--------
``bayeval coverage --scenario legal --realizations 1000 --resamples 1000 --workers 2``
``bayeval coverage --battery --pool hidden --sampler ais --budget 1000 --runs 50 --workers 2``
``bayeval coverage --scenario small --realizations 100 --resamples 200 --method koopman``
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer


class ScenarioName(StrEnum):
    """Webber's three scenarios (Tables 4.1.1-4.1.3)."""

    neutral = "neutral"
    legal = "legal"
    small = "small"


def coverage(
    scenario: Annotated[
        ScenarioName, typer.Option(help="Webber's scenario (Tables 4.1.1-4.1.3).")
    ] = ScenarioName.legal,
    realizations: Annotated[int, typer.Option(help="Populations drawn from the scenario.")] = 1000,
    resamples: Annotated[int, typer.Option(help="Samples drawn from each population.")] = 1000,
    method: Annotated[
        list[str] | None,
        typer.Option(help="Interval method; repeat for several (default: Webber's nine)."),
    ] = None,
    prob: Annotated[float, typer.Option(help="Nominal coverage.")] = 0.95,
    workers: Annotated[
        int, typer.Option(help="Worker processes of a local dask cluster (0: no cluster).")
    ] = 0,
    width_resamples: Annotated[
        int, typer.Option(help="Samples per population behind Koopman and posterior widths.")
    ] = 20,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    plot: Annotated[
        Path | None,
        typer.Option(dir_okay=False, help="Box plots of coverage and gaps (PNG, PDF, SVG)."),
    ] = Path("coverage.png"),
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    battery: Annotated[
        bool,
        typer.Option(
            "--battery",
            help="Instead: the honesty battery, the samplers' intervals on pools that break "
            "their assumptions (bayeval.simulate.battery).",
        ),
    ] = False,
    pool: Annotated[
        list[str] | None, typer.Option(help="--battery: a pool; repeat (default: all).")
    ] = None,
    sampler: Annotated[
        list[str] | None, typer.Option(help="--battery: a sampler; repeat (default: five).")
    ] = None,
    budget: Annotated[
        list[int] | None,
        typer.Option(
            help="--battery: labels after which to score; repeat (default 50 250 1000 2000)."
        ),
    ] = None,
    runs: Annotated[int, typer.Option(help="--battery: runs per pool and sampler.")] = 200,
    size: Annotated[
        int | None, typer.Option(help="--battery: items of the synthetic pools.")
    ] = None,
    checkpoint: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="--battery: file of finished runs (JSON lines); an interrupted battery "
            "resumes from it.",
        ),
    ] = None,
) -> None:
    """Coverage of recall intervals over a scenario's populations, as in Webber (2013) §4.

    With ``--battery``: coverage of the samplers' design-based and credible intervals of
    precision, recall and F1 over repeated runs on the honesty battery's pools.
    """
    from bayeval import simulate

    if workers < 0:
        typer.echo(f"error: `--workers` must be 0 or more; got {workers}.", err=True)
        raise typer.Exit(code=2)
    if battery:
        _battery(pool, sampler, budget, runs, size, prob, workers, as_json, checkpoint)
        return
    try:
        options = dict(
            methods=method or None, realizations=realizations, resamples=resamples, prob=prob,
            rng=seed, width_resamples=width_resamples, progress=None if not as_json else False,
        )  # fmt: skip
        if workers:
            import dask
            from distributed import Client, LocalCluster

            # dask's nannies set MALLOC_TRIM_THRESHOLD_=65536 in the workers, which made them
            # ~35% slower on this workload (benchmarks/README.md); leave glibc's default instead
            unset = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
            with (
                dask.config.set(unset),
                LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=":0") as c,
                Client(c) as client,
            ):
                study = simulate.coverage_study(scenario.value, client=client, **options)
        else:
            study = simulate.coverage_study(scenario.value, **options)
    except ValueError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(code=2) from None
    table = study.table()
    if plot is not None:
        import matplotlib.pyplot as plt

        study.plot()
        plt.savefig(plot, dpi=120, bbox_inches="tight")
        plt.close("all")
    if as_json:
        rows = [
            {"method": m, **{k: float(v) for k, v in row.items()}} for m, row in table.iterrows()
        ]
        typer.echo(
            json.dumps(
                {
                    "scenario": study.scenario,
                    **table.attrs,
                    "seconds": study.seconds,
                    "methods": rows,
                    "plot": str(plot) if plot else None,
                },
                indent=2,
            )
        )
        return
    _print(study, table, plot)


def _print(study, table, plot) -> None:
    from rich.console import Console
    from rich.table import Table

    attrs = table.attrs
    out = Table(
        title=(
            f"{study.scenario}: coverage of {study.prob:.0%} recall intervals, "
            f"{attrs['realizations']} populations x {attrs['resamples']} samples"
        ),
        caption=(
            f"rmse: root mean squared distance from {study.prob:.2f} over populations (floor "
            f"{(study.prob * (1 - study.prob) / study.resamples) ** 0.5:.4f} from resampling); "
            f"gaps: share of samples whose interval lies above (lower) or below (upper) the "
            f"truth; widths of Koopman and posterior methods from {attrs['width_resamples']} "
            f"samples per population; {study.seconds:.1f} s"
        ),
    )
    columns = {
        "mean_coverage": "mean", "rmse": "rmse", "median_coverage": "median",
        "lower_gap": "lower gap", "upper_gap": "upper gap", "mean_width": "width",
        "closest_share": "closest",
    }  # fmt: skip
    out.add_column("method", no_wrap=True)
    for name in columns.values():
        out.add_column(name, justify="right")
    for method, row in table.iterrows():
        out.add_row(method, *(f"{row[k]:.3f}" for k in columns))
    console = Console()
    console.print(out)
    if plot is not None:
        console.print(f"plot saved to {plot}")


def _battery(pools, samplers, budgets, runs, size, prob, workers, as_json, checkpoint) -> None:
    """``bayeval coverage --battery``: run :func:`bayeval.simulate.battery.coverage_battery`."""
    from bayeval.simulate import battery

    options = dict(
        pools=tuple(pools or battery.BATTERY_POOLS),
        samplers=tuple(samplers or ("passive", "stratified", "static_is", "oasis", "ais")),
        budgets=tuple(budgets or (50, 250, 1000, 2000)),
        repeats=runs,
        prob=prob,
        size=size,
        checkpoint=checkpoint,
    )
    try:
        if workers:
            from distributed import Client, LocalCluster

            with (
                LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=":0") as c,
                Client(c) as client,
            ):
                cells = battery.coverage_battery(client=client, **options)
        else:
            cells = battery.coverage_battery(**options)
    except ValueError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(code=2) from None
    if as_json:
        typer.echo(json.dumps({"prob": prob, "cells": json.loads(cells.to_json(orient="records"))}))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for name, by_pool in cells.groupby("pool", sort=False):
        out = Table(title=f"pool {name}: coverage of {prob:.0%} intervals (± Monte Carlo se)")
        for column in ("sampler", "labels", "measure", "interval", "coverage", "width", "inside"):
            out.add_column(column, justify="left" if column in ("sampler", "measure") else "right")
        for _, row in by_pool.iterrows():
            out.add_row(
                row["sampler"],
                str(row["budget"]),
                row["measure"],
                row["interval"],
                f"{row['coverage']:.2f} ± {row['coverage_se']:.2f}",
                f"{row['median_width']:.3f}",
                f"{row['inside']:.2f}",
            )
        console.print(out)
