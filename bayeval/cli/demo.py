"""``bayeval demo``: the FEBRL walk-through of the interval methods."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def demo(
    output: Annotated[Path, typer.Option(help="Folder for the plot.", file_okay=False)] = Path(
        "demo_output"
    ),
    seed: Annotated[int, typer.Option(help="Random seed of the sample.")] = 2013,
) -> None:
    """Intervals from a stratified sample of the bundled FEBRL pool, next to the truth."""
    from rich.console import Console
    from rich.table import Table

    from bayeval.cli._shared import save_png
    from bayeval.demo import LESSON, plot_demo, run_demo

    console = Console()
    result = run_demo(seed)
    strata = Table(title="Stratified sample of the FEBRL record-pair pool (labels from the truth)")
    for column in ("stratum", "segment", "N", "n", "r"):
        strata.add_column(column, justify="left" if column in ("stratum", "segment") else "right")
    for name, N, n, r, ret in zip(
        result.sample.names,
        result.sample.population,
        result.sample.sampled,
        result.sample.positives,
        result.sample.retrieved,
        strict=True,
    ):
        strata.add_row(name, "retrieved" if ret else "unretrieved", str(N), str(n), str(r))
    console.print(strata)
    table = Table(title="95% intervals next to the pool's true values")
    for column in ("measure", "method", "estimate", "lower", "upper", "truth", "covers"):
        left = column in ("measure", "method")
        table.add_column(column, justify="left" if left else "right", no_wrap=left)
    for (measure, method), row in result.table.iterrows():
        covers = row["lower"] <= row["truth"] <= row["upper"]
        table.add_row(
            measure,
            method,
            f"{row['estimate']:.4f}",
            f"{row['lower']:.4f}",
            f"{row['upper']:.4f}",
            f"{row['truth']:.4f}",
            "yes" if covers else "no",
        )
    console.print(table)
    console.print(LESSON)
    output.mkdir(parents=True, exist_ok=True)
    path = output / "febrl_intervals.png"
    axes = plot_demo(result)
    save_png(axes, path)
    console.print(f"plot saved to {path}")


# ------------------------------------------------------------------------------------ curve
