"""``bayeval ondemand``: evaluate systems one by one, buying labels only where they are needed.

The command is stateless: every run rebuilds an :class:`bayeval.ondemand.OnDemandEvaluator`
from the same files and seed and replays it. Systems are submitted in file-name order; the
instances drawn for a system are answered from the labels file, and the first system with an
unlabelled draw stops the replay (a later system's sample size depends on those labels). Its
ids go to ``--ask``; once they are labelled, the next run goes one system further. Each system
draws from its own seeded stream, so a run with more labels reproduces the earlier draws.

Examples
--------
``bayeval ondemand runs/ --exhaustive y0.txt --ask ask.txt`` (the first system's ids to label)
``bayeval ondemand runs/ --exhaustive y0.txt --labels labels.csv --ask ask.txt`` (one further)
``bayeval ondemand runs/ --exhaustive y0.txt --labels labels.csv --interval bayes --json``
"""

from __future__ import annotations

import csv
import json
import math
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from bayeval.cli._shared import bad, number

__all__ = ["HELP", "ondemand"]

#: Accepted spellings of a label in ``--labels`` (after stripping and lower-casing).
_LABELS = {"1": 1, "true": 1, "yes": 1, "0": 0, "false": 0, "no": 0}

_MEASURES = ("precision", "recall", "f1")

HELP = "\n\n".join(
    [
        "Evaluate systems as they arrive with joint importance sampling (Chaganty et al. 2017): "
        "each system's precision, recall and F1, labelling only the instances that earlier "
        "labels do not cover.",
        "SYSTEMS_DIR holds one text file per system (the system is the file name without its "
        "extension; hidden files are ignored) with one predicted instance id per line; blank "
        "lines are ignored and ids are strings. --exhaustive is a file of true instance ids, "
        "one per line: an i.i.d. sample of all true instances (repeats allowed) that recall is "
        "measured against. --labels is a CSV file with a header and columns id and label (1/0, "
        "true/false or yes/no); labels of ids that are never asked are ignored, so one file can "
        "serve several runs.",
        "The command keeps no state: each run submits the systems in file-name order to a new "
        "evaluator seeded with --seed, and answers the instances drawn for each system from "
        "--labels. At the first system with an unlabelled draw it stops (later sample sizes "
        "depend on those labels) and writes the ids still needed, in the order asked, to --ask "
        "(or prints them). Label them, add them to --labels and run again: the same draws come "
        "back, and the run goes on to the next system. The tables show every submitted system; "
        "a system's draws enter the estimates once all of them are labelled, so while one "
        "waits its precision, and the joint recall of every system, may be n/a.",
    ]
)


class EstimatorName(StrEnum):
    """Estimators of :meth:`bayeval.ondemand.OnDemandEvaluator.table`."""

    joint = "joint"
    simple = "simple"


class IntervalName(StrEnum):
    """Interval kinds of :meth:`bayeval.ondemand.OnDemandEvaluator.table`."""

    normal = "normal"
    bootstrap = "bootstrap"
    bayes = "bayes"


def _read_text(path: Path, option: str) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise bad(f"file {str(path)!r} cannot be read ({err}).", option) from None


def _read_ids(path: Path, option: str, what: str) -> list[tuple[int, str]]:
    """Return the ids of a one-id-per-line file with their line numbers (blank lines skipped)."""
    if not path.is_file():
        kind = "is a directory" if path.is_dir() else "does not exist"
        raise bad(f"file {str(path)!r} {kind}; expected a text file with {what}.", option)
    ids = [
        (number, line.strip())
        for number, line in enumerate(_read_text(path, option).splitlines(), start=1)
        if line.strip()
    ]
    if not ids:
        raise bad(f"file {str(path)!r} is empty; expected {what}.", option)
    return ids


def read_systems(folder: Path) -> dict[str, list[str]]:
    """Read SYSTEMS_DIR: each system's predicted ids, in file-name order.

    Parameters
    ----------
    folder : pathlib.Path
        A directory with one file per system (hidden files are ignored); a system's name is its
        file's name without the extension.

    Returns
    -------
    dict of str to list of str

    Raises
    ------
    typer.BadParameter
        Naming SYSTEMS_DIR, the file and the line at fault.
    """
    option = "SYSTEMS_DIR"
    what = "one file per system, one predicted instance id per line"
    if not folder.is_dir():
        kind = "is a file, not a directory" if folder.exists() else "does not exist"
        raise bad(f"{str(folder)!r} {kind}; expected a directory with {what}.", option)
    files = sorted(
        (p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")),
        key=lambda p: p.name,
    )
    if not files:
        raise bad(f"directory {str(folder)!r} holds no files; expected {what}.", option)
    systems: dict[str, list[str]] = {}
    origin: dict[str, Path] = {}
    for path in files:
        name = path.stem
        if name in origin:
            raise bad(
                f"files {origin[name].name!r} and {path.name!r} are both system {name!r}; give "
                "each system one file (its name without the extension is the system's name).",
                option,
            )
        origin[name] = path
        lines = _read_ids(path, option, "one predicted instance id per line")
        seen: dict[str, int] = {}
        for line, x in lines:
            if x in seen:
                raise bad(
                    f"file {str(path)!r} repeats id {x!r} (lines {seen[x]} and {line}); a "
                    "system predicts each instance once.",
                    option,
                )
            seen[x] = line
        systems[name] = [x for _, x in lines]
    return systems


def read_labels(path: Path | None) -> dict[str, int]:
    """Read ``--labels``: a CSV file with a header and columns ``id`` and ``label``.

    Labels are 1/0, true/false or yes/no (any case). An id may be repeated with the same label;
    conflicting labels are an error. Blank lines are skipped.

    Parameters
    ----------
    path : pathlib.Path or None
        The file, or None for no labels yet.

    Returns
    -------
    dict of str to int
        Each id's label, 0 or 1.

    Raises
    ------
    typer.BadParameter
        Naming ``--labels``, the file and the lines at fault.
    """
    option = "--labels"
    if path is None:
        return {}
    if not path.is_file():
        kind = "is a directory" if path.is_dir() else "does not exist"
        raise bad(f"file {str(path)!r} {kind}; expected a CSV file with columns id, label.", option)
    rows = csv.reader(_read_text(path, option).splitlines())
    try:
        header = [cell.strip() for cell in next(rows, [])]
    except csv.Error as err:
        raise bad(f"file {str(path)!r} is not a readable CSV file ({err}).", option) from None
    if "id" not in header or "label" not in header:
        raise bad(
            f"file {str(path)!r} must start with a header naming columns 'id' and 'label' (in "
            f"any order, other columns are ignored); its first line holds {header}.",
            option,
        )
    at_id, at_label = header.index("id"), header.index("label")
    labels: dict[str, int] = {}
    where: dict[str, int] = {}
    try:
        for row in rows:
            line = rows.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) <= max(at_id, at_label):
                raise bad(
                    f"file {str(path)!r}, line {line}: expected {len(header)} columns as in the "
                    f"header; got {len(row)}.",
                    option,
                )
            x, text = row[at_id].strip(), row[at_label].strip()
            if not x:
                raise bad(f"file {str(path)!r}, line {line}: the id is empty.", option)
            value = _LABELS.get(text.lower())
            if value is None:
                raise bad(
                    f"file {str(path)!r}, line {line}: the label of id {x!r} must be 1/0, "
                    f"true/false or yes/no; got {text!r}.",
                    option,
                )
            if x in labels and labels[x] != value:
                raise bad(
                    f"file {str(path)!r}: id {x!r} has conflicting labels, {labels[x]} on line "
                    f"{where[x]} and {value} on line {line}; keep one.",
                    option,
                )
            labels.setdefault(x, value)
            where.setdefault(x, line)
    except csv.Error as err:
        raise bad(f"file {str(path)!r}, line {rows.line_num}: {err}.", option) from None
    return labels


def _percent(prob: float) -> str:
    """Return ``prob`` as an exact percentage (0.975 -> ``97.5%``)."""
    return f"{prob * 100:g}%"


def replay(
    systems: dict[str, list[str]],
    exhaustive: list[str],
    labels: dict[str, int],
    *,
    target_se: float,
    max_samples: int,
    seed: int,
):
    """Submit ``systems`` in order, answering each one's draws from ``labels``.

    Stops after the first system whose drawn instances are not all in ``labels``; its labelled
    ones are told (its draws enter the estimates once all of them are labelled).

    Returns
    -------
    OnDemandEvaluator
        The evaluator; its ``pending`` ids are those still to label.
    """
    from bayeval.ondemand import OnDemandEvaluator

    ev = OnDemandEvaluator(exhaustive, target_se=target_se, max_samples=max_samples, rng=seed)
    for name, predicted in systems.items():
        ev.submit(name, predicted)
        known = [x for x in ev.ask() if x in labels]
        if known:
            ev.tell(known, [labels[x] for x in known])
        if ev.pending:
            break
    return ev


def _result(ev, systems, exhaustive, labels, options: dict) -> dict:
    """Everything the command reports, as JSON-ready values."""
    from bayeval.ondemand.evaluator import INTERVAL_NAMES

    estimator, interval, prob = options["estimator"], options["interval"], options["prob"]
    submissions = ev.submissions
    pending = ev.pending
    labelled = int(submissions["labelled_samples"].sum())
    # with no labelled draw there is nothing to estimate (and the bootstrap intervals of the
    # evaluator warn of all-NaN replicates), so the table waits for the first labelled sample
    table = ev.table(estimator, interval=interval, prob=prob) if labelled else None
    status = {}
    for name in systems:
        if name not in submissions.index:
            status[name] = "not submitted"
        else:
            row = submissions.loc[name]
            complete = row["labelled_samples"] == row["samples"]
            status[name] = "complete" if complete else "waiting"
    rows = []
    for name, sub in submissions.iterrows():
        row: dict[str, Any] = {"system": name, "status": status[name]}
        for measure in _MEASURES:
            for suffix in ("", "_lower", "_upper"):
                key = measure + suffix
                row[key] = None if table is None else number(table.loc[name, key])
        row["samples"] = int(sub["labelled_samples"])
        row["planned_samples"] = int(sub["samples"])
        row["new_labels"] = int(sub["new_labels"])
        row["planned_se"] = number(sub["planned_se"])
        rows.append(row)
    told, _ = ev.labelled()
    y0 = set(exhaustive)
    contradicted = sorted(x for x, y in labels.items() if y == 0 and x in y0)
    description = INTERVAL_NAMES[interval]
    return {
        "systems_dir": options["systems_dir"],
        "systems": len(systems),
        "exhaustive": len(exhaustive),
        "seed": options["seed"],
        "target_se": options["target_se"],
        "max_samples": options["max_samples"],
        "estimator": estimator,
        "interval": interval,
        "interval_description": description,
        "prob": prob,
        "header": f"{estimator}, {_percent(prob)} {interval}",
        "done": not pending and all(s == "complete" for s in status.values()),
        "complete": [n for n, s in status.items() if s == "complete"],
        "waiting": [n for n, s in status.items() if s == "waiting"],
        "not_submitted": [n for n, s in status.items() if s == "not submitted"],
        "labels_used": len(told),
        "pending": pending,
        "ask_file": options["ask_file"],
        "rows": rows,
        "contradicted": contradicted,
    }


def ondemand(
    systems_dir: Annotated[
        Path,
        typer.Argument(
            help="A directory with one file per system (named by the file name without its "
            "extension), one predicted instance id per line.",
            show_default=False,
        ),
    ],
    exhaustive: Annotated[
        Path,
        typer.Option(
            help="A file of true instance ids, one per line: the i.i.d. sample Y0 of all true "
            "instances that recall is measured against (repeats allowed).",
            show_default=False,
        ),
    ],
    labels: Annotated[
        Path | None,
        typer.Option(
            help="A CSV file with a header and columns id, label (1/0, true/false, yes/no); "
            "ids never asked are ignored."
        ),
    ] = None,
    ask: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="Write the ids still to label here, one per line in the order asked (an empty "
            "file when none is needed); default: print them.",
        ),
    ] = None,
    target_se: Annotated[
        float,
        typer.Option(help="Standard error of each new system's joint precision to plan for, > 0."),
    ] = 0.02,
    max_samples: Annotated[
        int, typer.Option(min=1, help="Most draws planned for one system.")
    ] = 2000,
    estimator: Annotated[
        EstimatorName,
        typer.Option(help="joint (all systems' labels) or simple (each system's own draws)."),
    ] = EstimatorName.joint,
    interval: Annotated[
        IntervalName,
        typer.Option(
            help="normal (standard errors), bootstrap (percentile) or bayes (Bayesian bootstrap)."
        ),
    ] = IntervalName.normal,
    prob: Annotated[float, typer.Option(help="Probability of the intervals, in (0, 1).")] = 0.95,
    seed: Annotated[
        int, typer.Option(min=0, help="Seed of every system's draws and of the bootstrap.")
    ] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Evaluate systems one by one with joint importance sampling, labelling only what is needed."""
    if not 0.0 < prob < 1.0:
        raise bad(f"must be in the open interval (0, 1); got {prob}.", "--prob")
    if not 0.0 < target_se < math.inf:
        raise bad(f"must be a positive number; got {target_se}.", "--target-se")
    systems = read_systems(systems_dir)
    y0 = [x for _, x in _read_ids(exhaustive, "--exhaustive", "one true instance id per line")]
    given = read_labels(labels)
    try:
        ev = replay(systems, y0, given, target_se=target_se, max_samples=max_samples, seed=seed)
    except ValueError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(code=2) from None
    pending = ev.pending
    if ask is not None:
        try:
            ask.write_text("".join(f"{x}\n" for x in pending))
        except OSError as err:
            typer.echo(f"error: --ask {ask}: cannot write the ids ({err}).", err=True)
            raise typer.Exit(code=2) from None
    options = {
        "systems_dir": str(systems_dir),
        "seed": seed,
        "target_se": target_se,
        "max_samples": max_samples,
        "estimator": estimator.value,
        "interval": interval.value,
        "prob": prob,
        "ask_file": None if ask is None else str(ask),
    }
    result = _result(ev, systems, y0, given, options)
    if result["contradicted"]:
        examples = ", ".join(repr(x) for x in result["contradicted"][:3])
        typer.echo(
            f"note: --labels gives label 0 to {len(result['contradicted'])} id(s) of the "
            f"--exhaustive sample ({examples}); instances of Y0 are true by definition, so "
            "those labels are not used.",
            err=True,
        )
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    _print(result)


def _print(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)

    def say(text: str, style: str | None = None) -> None:
        console.print(text, style=style, markup=False, soft_wrap=True)

    rows = result["rows"]
    submitted = Table(
        title=(
            f"{len(rows)} of {result['systems']} systems submitted (seed {result['seed']}, "
            f"target se {result['target_se']:g})"
        ),
        caption=(
            f"{result['labels_used']:,} labels bought; Y0 holds {result['exhaustive']:,} true "
            "instances"
        ),
    )
    for column in ("system", "status", "draws", "labelled", "new labels", "planned se"):
        left = column in ("system", "status")
        submitted.add_column(column, justify="left" if left else "right", no_wrap=left)
    for row in rows:
        se = "-" if row["planned_se"] is None else f"{row['planned_se']:.4f}"
        submitted.add_row(
            row["system"],
            row["status"],
            f"{row['planned_samples']:,}",
            f"{row['samples']:,}",
            f"{row['new_labels']:,}",
            se,
        )
    for name in result["not_submitted"]:
        submitted.add_row(name, "not submitted", "-", "-", "-", "-", style="dim")
    console.print(submitted)

    estimates = Table(
        title=(
            f"{result['estimator']} estimates, {_percent(result['prob'])} {result['interval']} "
            "intervals"
        ),
        caption=result["interval_description"],
    )
    estimates.add_column("system", no_wrap=True)
    for column in ("precision", "recall", "F1"):
        estimates.add_column(column, justify="right", no_wrap=True)

    def cell(row: dict, measure: str) -> str:
        value, low, high = (row[measure + s] for s in ("", "_lower", "_upper"))
        if value is None:
            return "n/a"
        return f"{value:.3f} [{low:.3f}, {high:.3f}]"

    for row in rows:
        estimates.add_row(row["system"], *(cell(row, m) for m in _MEASURES))
    console.print(estimates)

    if all(row["precision"] is None for row in rows):
        say("no estimates yet: none of the drawn instances is labelled.", style="yellow")
    elif any(row[m] is None for row in rows for m in _MEASURES):
        say(
            "n/a: the labelled samples cannot estimate it without bias yet (a system's sample "
            "counts once all its draws are labelled; joint recall needs every submitted "
            "system's predictions covered by labelled samples).",
            style="yellow",
        )
    if result["done"]:
        say(f"all {result['systems']} systems are evaluated.")
    for name in result["waiting"]:
        row = next(r for r in rows if r["system"] == name)
        say(
            f"waiting for labels: {name} ({len(result['pending']):,} of the instances drawn for "
            f"it still need a label); its {row['planned_samples']:,} draws enter the estimates "
            "once all of them are labelled."
        )
    if result["not_submitted"]:
        say(
            f"not submitted yet: {', '.join(result['not_submitted'])} (their sample sizes "
            "depend on the labels still needed)."
        )
    pending = result["pending"]
    if pending:
        then = "add their labels to the --labels file and run the command again."
        if result["ask_file"] is not None:
            say(
                f"{len(pending):,} ids need a label: written to {result['ask_file']}, one per "
                f"line in the order asked; {then}"
            )
        else:
            say(f"{len(pending):,} ids need a label ({then}), in the order asked:")
            for x in pending:
                typer.echo(x)
