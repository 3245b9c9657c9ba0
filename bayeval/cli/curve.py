"""``bayeval curve``: a precision curve of a ranked list (PAULA, LogStrat, AdaStrat, random)."""

from __future__ import annotations

import json
import warnings
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

#: Precision-curve methods of ``bayeval curve``: name -> (function of :mod:`bayeval.curves`,
#: the keyword arguments it takes from the command's options). A new method is one line here.
_CURVE_METHODS: dict[str, tuple[str, tuple[str, ...]]] = {
    "random": ("random_baseline", ("alpha", "p_min", "delta", "rng")),
    "logstrat": ("logstrat", ("epsilon", "r_tilde", "delta", "p_min", "beta", "rng")),
    "paula": ("paula", ("epsilon", "window", "r_tilde")),
    "adastrat": ("adastrat", ("epsilon", "m", "r_tilde", "delta", "p_min", "beta", "eta", "rng")),
}

#: Methods whose queried ranks depend on the labels: their plan gives only worst-case costs.
_ADAPTIVE_METHODS = frozenset({"adastrat"})

#: Start of the RuntimeWarning :func:`bayeval.curves.adastrat` emits when its guaranteed envelope
#: crosses; ``bayeval curve`` shows ``result.crossing`` as a note instead.
_CROSSING_WARNING = "AdaStrat's guaranteed envelope crosses"

#: The command-line options behind each keyword argument (for the help text).
_CURVE_OPTION_NAMES = {
    "alpha": "--epsilon and --beta (alpha = beta (1 + epsilon) - 1)",
    "epsilon": "--epsilon",
    "window": "--window",
    "m": "--m",
    "eta": "--eta",
    "r_tilde": "--r-tilde",
    "delta": "--delta",
    "p_min": "--p-min",
    "beta": "--beta",
    "rng": "--seed",
}

CurveMethod = StrEnum("CurveMethod", [(name, name) for name in _CURVE_METHODS])

_CURVE_METHOD_HELP = (
    "Precision-curve method. Options used: "
    + "; ".join(
        f"{name}: {', '.join(_CURVE_OPTION_NAMES[k] for k in kwargs)}"
        for name, (_, kwargs) in _CURVE_METHODS.items()
    )
    + ". Other options are ignored."
)


def _read_numbers(path: Path, option: str, *, binary: bool):
    """Read one number per line of ``path`` as float64; errors name the option, file and line."""
    import numpy as np

    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{option} file {path}: cannot be read ({err}).") from None
    lines = text.splitlines()
    while lines and not lines[-1].strip():  # trailing blank lines are ignored
        lines.pop()
    if not lines:
        raise ValueError(f"{option} file {path} is empty; expected one number per line.")
    try:
        values = np.array(lines, dtype=np.float64)
    except ValueError:
        for i, line in enumerate(lines, start=1):
            if not line.strip():
                raise ValueError(
                    f"{option} file {path}, line {i}: the line is empty; expected one number per "
                    f"line."
                ) from None
            try:
                float(line)
            except ValueError:
                raise ValueError(
                    f"{option} file {path}, line {i}: expected one number per line; got "
                    f"{line.strip()!r}."
                ) from None
        raise  # pragma: no cover - numpy and float() disagree
    if binary:
        bad = (values != 0) & (values != 1)
        what = "labels must be 0 or 1"
    else:
        bad = np.isnan(values)
        what = "scores must be numbers (NaN cannot be ranked)"
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{option} file {path}, line {i + 1}: {what}; got {lines[i].strip()!r}.")
    return values


def _curve_kwargs(method: str, n_items: int, options: dict) -> dict:
    """Pick the keyword arguments of ``method``'s function from the command's options."""
    from bayeval import curves

    _, names = _CURVE_METHODS[method]
    values = dict(options)
    if "alpha" in names:  # the random baseline's relative error, as the other methods' factor
        values["alpha"] = curves.plan_random(
            n_items,
            epsilon=options["epsilon"],
            beta=options["beta"],
            p_min=options["p_min"],
            delta=options["delta"],
        ).alpha
    return {name: values[name] for name in names}


def _json_number(value) -> float | None:
    value = float(value)
    return value if value == value else None  # NaN (no estimate) -> null


HELP = "\n\n".join(
    [
        "Approximate the precision curve of a scored list from few labels, next to the truth.",
        "Items are ranked by score, highest first (a stable sort: ties keep their order in the "
        "file). The labels are known, so this is a simulation: the method buys labels from an "
        "oracle over the ranked labels, and its estimate and lower and upper bounds are shown "
        "next to the true precision at about ten log-spaced ranks, with the number of queried "
        "ranks and annotations. --plot saves a figure of the whole curve.",
        "random, logstrat and paula fix their queried ranks and annotations in advance. adastrat "
        "(Sabharwal & Xue 2018) chooses its queried ranks adaptively, from the labels it has "
        "bought, until the envelope of weakly monotone curves through them is within "
        "(1 + epsilon)^2; its plan gives only worst-case counts, reported next to the actual ones.",
        "Options a method does not use are ignored; --method's help lists those each uses.",
    ]
)


def curve(
    scores: Annotated[
        Path,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="Text file with one score per line; items are ranked by score, highest first "
            "(stable: ties keep their order in the file).",
        ),
    ],
    labels: Annotated[
        Path,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="Text file with one 0/1 label per line, in the order of --scores.",
        ),
    ],
    method: Annotated[CurveMethod, typer.Option(help=_CURVE_METHOD_HELP)] = CurveMethod.paula,
    epsilon: Annotated[
        float,
        typer.Option(
            help="Geometric spacing of the queried ranks (logstrat, paula; random: see --beta), "
            "or adastrat's target: refine until the envelope's height is at most "
            "(1 + epsilon)^2. In (0, 1]."
        ),
    ] = 0.03,
    window: Annotated[int, typer.Option(help="PAULA's window Delta.")] = 100,
    m: Annotated[
        int | None,
        typer.Option(
            "--m",
            help="AdaStrat's monotonicity gap m (weak monotonicity: p(r1) >= p(r2) when "
            "r2 >= r1 + m), at least 1 (default: LogStrat's m for the same epsilon and r_tilde).",
        ),
    ] = None,
    r_tilde: Annotated[
        int | None,
        typer.Option(help="Rank beyond which monotonicity is assumed (default: the method's)."),
    ] = None,
    delta: Annotated[float, typer.Option(help="Error probability, in (0, 1).")] = 0.05,
    p_min: Annotated[float, typer.Option(help="Lower bound assumed on the precision.")] = 0.5,
    beta: Annotated[
        float, typer.Option(help="Per-point approximation factor, > 1 (adastrat: > 1 + eta).")
    ] = 1.05,
    eta: Annotated[
        float,
        typer.Option(
            help="AdaStrat's label-noise rate: the probability an annotation is flipped, in "
            "[0, 0.5)."
        ),
    ] = 0.0,
    seed: Annotated[int, typer.Option(help="Random seed of the samples.")] = 0,
    plot: Annotated[
        Path | None, typer.Option(dir_okay=False, help="Save a plot of the curve (PNG, PDF, SVG).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Approximate the precision curve of a scored list from few labels, next to the truth.

    Items are ranked by score, highest first (a stable sort: ties keep their order in the file).
    The labels are known, so this is a simulation: the method buys labels from an oracle over the
    ranked labels, and its estimate and lower and upper bounds are shown next to the true
    precision at about ten log-spaced ranks, with the queried ranks and annotations. AdaStrat
    chooses its queried ranks adaptively; its plan's worst-case counts are reported too. Options
    a method does not use are ignored (see ``--method``).
    """
    import numpy as np

    from bayeval import curves
    from bayeval.oracles import LabelOracle

    name = method.value
    options = {
        "epsilon": epsilon,
        "window": window,
        "m": m,
        "r_tilde": r_tilde,
        "delta": delta,
        "p_min": p_min,
        "beta": beta,
        "eta": eta,
        "rng": seed,
    }
    try:
        score_values = _read_numbers(scores, "--scores", binary=False)
        label_values = _read_numbers(labels, "--labels", binary=True)
        if score_values.size != label_values.size:
            raise ValueError(
                f"--scores file {scores} has {score_values.size} lines but --labels file {labels} "
                f"has {label_values.size}; give one label per score."
            )
        n = int(score_values.size)
        ranked = label_values[np.argsort(-score_values, kind="stable")].astype(bool)
        kwargs = _curve_kwargs(name, n, options)
        with warnings.catch_warnings():
            # AdaStrat warns when its guaranteed envelope crosses; the command reports
            # ``result.crossing`` as a note instead (see _crossing_note)
            warnings.filterwarnings("ignore", _CROSSING_WARNING, RuntimeWarning)
            result = getattr(curves, _CURVE_METHODS[name][0])(LabelOracle(ranked), n, **kwargs)
    except ValueError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(code=2) from None

    true_p = np.cumsum(ranked) / np.arange(1, n + 1)
    if plot is not None:
        _save_curve_plot(result, true_p, plot)
    ranks = np.unique(np.rint(np.geomspace(1, n, 10)).astype(np.int64))
    rows = [
        {
            "rank": int(r),
            "estimate": _json_number(e),
            "lower": _json_number(lo),
            "upper": _json_number(hi),
            "true": float(t),
        }
        for r, e, lo, hi, t in zip(
            ranks,
            result.at(ranks),
            result.lower(ranks),
            result.upper(ranks),
            true_p[ranks - 1],
            strict=True,
        )
    ]
    if as_json:
        adaptive = name in _ADAPTIVE_METHODS
        planned_queries, planned_annotations = _planned(result)
        out = {
            "method": name,
            "n_items": n,
            "adaptive": adaptive,
            "queries": result.n_queries,
            "annotations": result.annotations,
            "planned_queries": planned_queries,
            "planned_annotations": planned_annotations,
            "exact_len": result.exact_len,
            "parameters": kwargs,
            "guarantee": result.guarantee,
            "rows": rows,
            "plot": None if plot is None else str(plot),
        }
        if adaptive:  # the ranks the labels led to, and the assumption they rest on
            out["queried_ranks"] = sorted(int(r) for r in result.queried)
            out["m"], out["r_tilde"] = int(result.m), int(result.r_tilde)
            crossing = getattr(result, "crossing", None)
            out["crossing"] = None if crossing is None else [int(r) for r in crossing]
        typer.echo(json.dumps(out, indent=2))
        note = _crossing_note(result)
        if note:  # stdout stays valid JSON
            typer.echo(f"note: {note}", err=True)
        return
    _print_curve_table(result, rows, plot)


def _crossing_note(result) -> str | None:
    """Explain ``result.crossing`` (AdaStrat's guaranteed envelope crosses), or ``None``."""
    crossing = getattr(result, "crossing", None)
    if crossing is None:
        return None
    first, last = crossing
    return (
        "the guaranteed envelope crosses (lower > upper) somewhere in ranks "
        f"{first:,} to {last:,}: the list is not weakly monotone there "
        f"(m = {result.m:,}, r_tilde = {result.r_tilde:,}), "
        "or an estimate missed its bound (probability <= delta). lower and upper are not bounds "
        "there; the estimate is the envelope's geometric mean."
    )


def _planned(result) -> tuple[int, int]:
    """Return the queried ranks and annotations the plan allows (AdaStrat: its worst case)."""
    plan = result.plan
    queries = getattr(plan, "max_queries", plan.n_queries)
    return int(queries), int(plan.annotations)


def _save_curve_plot(result, true_p, path: Path) -> None:
    from matplotlib.figure import Figure

    from bayeval.plots import plot_curve

    fig = Figure(figsize=(8, 4.8), layout="constrained")
    plot_curve(result, true_precision=true_p, ax=fig.subplots())
    try:
        fig.savefig(path, dpi=150)
    except (OSError, ValueError) as err:
        typer.echo(f"error: --plot {path}: cannot save the plot ({err}).", err=True)
        raise typer.Exit(code=2) from None


#: At most this many of an adaptive method's queried ranks are listed in the table's summary.
_MAX_LISTED = 30


def _print_curve_table(result, rows, plot: Path | None) -> None:
    import numpy as np
    from rich.console import Console
    from rich.table import Table

    from bayeval.plots import METHOD_NAMES

    n = result.n_items
    table = Table(
        title=f"{METHOD_NAMES.get(result.method, result.method)} precision curve of {n:,} items",
        caption=(
            f"{result.n_queries:,} queried ranks, {result.annotations:,} annotations "
            f"({result.annotations / n:.1%} of the list); exact for ranks 1 to {result.exact_len:,}"
        ),
    )
    for column in ("rank", "estimate", "lower", "upper", "true", "within"):
        table.add_column(column, justify="right")

    def cell(value) -> str:
        return "-" if value is None else f"{value:.4f}"

    for row in rows:
        lo, hi, true = row["lower"], row["upper"], row["true"]
        within = lo is not None and hi is not None and lo <= true <= hi
        table.add_row(
            f"{row['rank']:,}",
            cell(row["estimate"]),
            cell(lo),
            cell(hi),
            cell(true),
            "yes" if within else "no",
        )
    console = Console()
    console.print(table)
    if result.method in _ADAPTIVE_METHODS:
        planned_queries, planned_annotations = _planned(result)
        console.print(
            f"queries are adaptive: {result.n_queries:,} queried ranks (worst case "
            f"{planned_queries:,}) and {result.annotations:,} annotations (worst case "
            f"{planned_annotations:,}), for m = {result.m:,} and r_tilde = {result.r_tilde:,}."
        )
        if result.n_queries:
            queried = ", ".join(f"{r:,}" for r in np.sort(result.queried)[:_MAX_LISTED])
            more = result.n_queries - _MAX_LISTED
            console.print(f"queried ranks: {queried}" + (f" and {more:,} more" if more > 0 else ""))
    p_min = getattr(result.plan, "p_min", None)
    if p_min is not None and result.n_queries:
        low = np.sort(result.queried)
        low = low[result.at(low) < p_min]
        if low.size:
            console.print(
                f"note: the estimate is below p_min = {p_min:g} at {low.size:,} queried "
                f"rank{'s' if low.size > 1 else ''} (from rank {low[0]:,}); the guarantee "
                "assumes p >= p_min there.",
                style="yellow",
            )
    note = _crossing_note(result)
    if note:
        console.print(f"note: {note}", style="yellow")
    console.print(f"guarantee: {result.guarantee}", style="dim")
    if plot is not None:
        console.print(f"plot saved to {plot}")
