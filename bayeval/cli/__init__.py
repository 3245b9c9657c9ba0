"""The ``bayeval`` command line.

Examples
--------
``bayeval interval recall --retrieved 2000,100,50 --unretrieved 100000,100,3``
``bayeval interval f1 --strata strata.csv --method beta-binomial-half --method beta-jeffreys``
``bayeval interval recall --retrieved 2000,100,50 --unretrieved 100000,100,3 --json``
``bayeval curve --scores scores.txt --labels labels.txt --method paula --plot curve.png``
``bayeval curve --scores scores.txt --labels labels.txt --method adastrat --epsilon 0.03 --json``
``bayeval coverage --scenario legal --realizations 1000 --resamples 1000 --workers 2``
``bayeval evaluate --pool febrl --measure f1 --budget 1000 --sampler ais``
``bayeval evaluate --pool scored.csv --budget 200`` (asks for labels: no label column)
``bayeval label labels.db --pool scored.csv --measure f1 --seed 7`` (a new session file)
``bayeval label labels.db --annotator ann --budget 300 --width 0.05`` (continues the session)
``bayeval status labels.db --json``
``bayeval export labels.db pending.csv``
``bayeval import labels.db answers.csv --annotator ann``
``bayeval ondemand runs/ --exhaustive y0.txt --labels labels.csv --ask ask.txt``
``bayeval compare --pool runs.csv --systems a,b,c --measure f1 --budget 200``
"""

from __future__ import annotations

from typing import Annotated

import typer

from bayeval.cli import (
    compare,
    coverage,
    curve,
    demo,
    evaluate,
    interval,
    label,
    ondemand,
    status,
)

app = typer.Typer(
    help="Label-efficient, Bayesian evaluation: intervals from few labels.",
    no_args_is_help=True,
    add_completion=False,
)


def _print_version(value: bool) -> None:
    if value:
        from bayeval._version import __version__

        typer.echo(f"bayeval {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Label-efficient, Bayesian evaluation: intervals from few labels."""


app.command(name="interval")(interval.interval)
app.command(name="demo")(demo.demo)
app.command(name="curve", help=curve.HELP)(curve.curve)
app.command(name="coverage")(coverage.coverage)
app.command(name="evaluate", help=evaluate.HELP)(evaluate.evaluate)
app.command(name="label", help=label.LABEL_HELP)(label.label)
app.command(name="status")(status.status)
app.command(name="export")(label.export)
app.command(name="import")(label.import_)
app.command(name="ondemand", help=ondemand.HELP)(ondemand.ondemand)
app.command(name="compare", help=compare.HELP)(compare.compare)
