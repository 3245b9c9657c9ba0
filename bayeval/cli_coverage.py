"""``bayeval coverage``: a coverage study of recall intervals (Webber 2013, §4) from the shell.

Examples
--------
``bayeval coverage --scenario legal --realizations 1000 --resamples 1000 --workers 2``
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
) -> None:
    """Coverage of recall intervals over a scenario's populations, as in Webber (2013) §4."""
    from bayeval import simulate

    if workers < 0:
        typer.echo(f"error: `--workers` must be 0 or more; got {workers}.", err=True)
        raise typer.Exit(code=2)
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
