"""``bayeval interval``: recall, precision and F1 intervals from a stratified sample."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer


class Measure(StrEnum):
    """Measures the ``interval`` command estimates."""

    recall = "recall"
    precision = "precision"
    f1 = "f1"


def _segment(text: str, option: str) -> tuple[int, int, int]:
    parts = text.split(",")
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 3:
        raise typer.BadParameter(
            f"expected three whole numbers N,n,r (population, sampled, positives); got {text!r}",
            param_hint=option,
        )
    return values


def _load_sample(retrieved, unretrieved, strata):
    import pandas as pd

    from bayeval.stratified_sample import StratifiedSample

    if strata is not None:
        if retrieved or unretrieved:
            raise typer.BadParameter(
                "give either --strata or --retrieved/--unretrieved, not both", param_hint="--strata"
            )
        df = pd.read_csv(strata)
        names = "stratum" if "stratum" in df.columns else None
        return StratifiedSample.from_frame(df, names=names)
    if not retrieved:
        raise typer.BadParameter("a retrieved segment is needed", param_hint="--retrieved")
    N1, n1, r1 = _segment(retrieved, "--retrieved")
    if not unretrieved:
        return StratifiedSample([N1], [n1], [r1], [True], names=["retrieved"])
    N0, n0, r0 = _segment(unretrieved, "--unretrieved")
    return StratifiedSample.two_segments(N1=N1, n1=n1, r1=r1, N0=N0, n0=n0, r0=r0)


def interval(
    measure: Annotated[Measure, typer.Argument(help="recall, precision or f1.")],
    retrieved: Annotated[
        str | None, typer.Option(help="Retrieved segment as N,n,r: size, sampled, positives.")
    ] = None,
    unretrieved: Annotated[str | None, typer.Option(help="Unretrieved segment as N,n,r.")] = None,
    strata: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="CSV with one row per stratum: columns N, n, r, retrieved (and stratum).",
        ),
    ] = None,
    method: Annotated[
        list[str] | None,
        typer.Option(help="Interval method; repeat for a side-by-side table."),
    ] = None,
    prob: Annotated[float, typer.Option(help="Probability of the interval.")] = 0.95,
    kind: Annotated[str, typer.Option(help="eti (equal-tailed), hdi, lower or upper.")] = "eti",
    engine: Annotated[str | None, typer.Option(help="exact or pymc (posterior methods).")] = None,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Intervals on recall, precision or F1 from a stratified sample, one row per method."""
    import bayeval as be

    functions = {
        Measure.recall: be.recall_interval,
        Measure.precision: be.precision_interval,
        Measure.f1: be.f1_interval,
    }
    try:
        sample = _load_sample(retrieved, unretrieved, strata)
        results = [
            functions[measure](sample, method=m, prob=prob, kind=kind, engine=engine, rng=seed)
            for m in (method or ["beta-binomial-half"])
        ]
    except ValueError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(code=2) from None
    if as_json:
        rows = [
            {
                "measure": r.measure,
                "method": r.method,
                "engine": r.engine,
                "estimate": r.estimate,
                "lower": r.lower,
                "upper": r.upper,
                "prob": r.prob,
                "kind": r.kind,
                "mc_error": r.mc_error,
            }
            for r in results
        ]
        typer.echo(json.dumps(rows, indent=2))
        return
    _print_table(results, sample)


def _print_table(results, sample) -> None:
    from rich.console import Console
    from rich.table import Table

    first = results[0]
    table = Table(
        title=f"{first.measure} — {first.kind} {first.prob:.0%} intervals",
        caption=repr(sample),
    )
    for column in ("method", "engine", "estimate", "lower", "upper"):
        left = column in ("method", "engine")
        table.add_column(column, justify="left" if left else "right", no_wrap=left)
    for r in results:
        table.add_row(
            r.method, r.engine or "-", f"{r.estimate:.4f}", f"{r.lower:.4f}", f"{r.upper:.4f}"
        )
    Console().print(table)
