"""``bayeval evaluate``: label items of a scored pool and estimate precision, recall and F1.

Examples
--------
``bayeval evaluate --pool febrl --measure f1 --budget 1000 --sampler ais``
``bayeval evaluate --pool scored.csv --budget 200`` (no ``label`` column: asks for each label)
``bayeval evaluate --pool scored.parquet --measure recall --budget 500 --json``
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from bayeval.cli._labelling import EXIT_STOPPED, KEYS_HELP, POOL_COLUMNS, Labeller
from bayeval.cli._report import write_html, write_plots
from bayeval.cli._sessions import open_or_create
from bayeval.cli._shared import (
    CLASSES_HELP,
    MeasureName,
    UnblindOption,
    bad,
    classes_option,
    load_source,
    number,
    run_measure,
    sampler_class,
)

#: Measures reported next to the one sampled for, estimated from the same labels.
COMPANIONS = ("precision", "recall", "f1")
MULTICLASS_COMPANIONS = ("accuracy", "macro_f1", "balanced_accuracy")

HELP = "\n\n".join(
    [
        "Label items of a scored pool chosen by a sampler, and estimate a measure of the "
        "pool's predictions with an interval, next to precision, recall and F1 from the same "
        "labels.",
        "--pool febrl is the bundled FEBRL record-pair pool (499,500 pairs, every label known): "
        "the labels come from the truth (a simulated oracle) and the true values are shown. "
        "Otherwise --pool is a CSV or Parquet file with one row per item and columns score, and "
        "optionally id (default: the row number from 0), prediction (0/1; default score >= "
        "--threshold) and label (0/1). With a label column the labels come from it (a "
        "simulation); without one, each chosen item is shown and you answer it at the "
        "terminal, as with bayeval label: every answer is kept in the --session file as it is "
        "given, so you can stop anywhere (q, end of input, Ctrl-C) and continue later with this "
        "command or bayeval label; a run stopped before the budget exits with status "
        f"{EXIT_STOPPED} (130 at Ctrl-C). The person labelling sees the item's own fields (the "
        "pool file's other columns), not the system's score or prediction, unless --unblind. "
        + KEYS_HELP,
        "With --classes the pool is multiclass: accuracy, macro-F1 and balanced accuracy are "
        "estimated from uniform (passive) or stratified labels, or with --sampler "
        "active_stratified from labels sent where the model of the labels is least sure (the "
        "items where a --judge-column disagrees with the system, or the system is unsure).",
        "Intervals are the credible intervals of the model of the labels (ScoreCalibration; "
        "ClassCalibration for a multiclass pool), "
        "with the design-based interval of the sampler's estimator beside them. The "
        "report folder gets estimates.png (estimates and intervals against labels used) and "
        "pr_curve.png (the precision-recall curve from the same labels; after an AIS run also "
        "the credible band of its oracle model).",
    ]
)


class Tracker:
    """The run's measure and its companions after every complete stage.

    Parameters
    ----------
    sampler : bayeval.sampling.Sampler
    measure_name : str
        The ``--measure`` the sampler was built for.
    prob : float
        Probability of the recorded intervals (credible and design-based).
    """

    def __init__(self, sampler: Any, measure_name: str, prob: float):
        self.sampler, self.prob = sampler, prob
        self.names = [measure_name]
        self.companions, self.unavailable = {}, {}
        classes = sampler.pool.classes
        for name in COMPANIONS if classes is None else MULTICLASS_COMPANIONS:
            if name == measure_name:
                continue
            measure = run_measure(name, classes)
            if sampler.covers(measure):
                self.companions[name] = measure
                self.names.append(name)
            else:
                self.unavailable[name] = (
                    f"the {sampler.method} proposal for {measure_name} never draws some items "
                    f"that {name} needs"
                )
        self.estimates: dict[str, Any] = {}
        self._stages: list[int] = []
        self._rows: list[np.ndarray] = []

    def record(self, labels_used: int, estimate: Any) -> None:
        """Record the run's estimate after a stage, and estimate the companions alike."""
        self.estimates = {self.names[0]: estimate}
        for name, measure in self.companions.items():
            self.estimates[name] = self.sampler.estimate(measure=measure)
        rows = []
        for est in self.estimates.values():  # NaN posterior where no model applies
            posterior = est.per_output(self.prob, "posterior")
            rows.append(np.stack([*posterior, *est.per_output(self.prob, "design")]))
        self._stages.append(labels_used)
        self._rows.append(np.concatenate(rows, axis=1))

    def record_session(self, session) -> None:
        """Record the session's estimate after a stage."""
        self.record(session.labels_count(), session.estimate())

    def history(self):
        """Return the recorded estimates as an ``xarray.Dataset`` over ``labels``, ``measure``.

        Also ``system`` for pools of several systems.

        ``estimate``, ``lower``, ``upper``: the posterior median and credible interval;
        ``design_estimate``, ``design_lower``, ``design_upper``: the design-based ones.
        """
        import xarray as xr

        from bayeval.measures.layout import label_outputs

        outputs = [o for est in self.estimates.values() for o in est.outputs]
        values = np.stack(self._rows)  # (labels, 6, output)
        names = [*_KEYS, *(f"design_{k}" for k in _KEYS)]
        dims = ("labels", "output")
        history = xr.Dataset(
            {k: (dims, values[:, i]) for i, k in enumerate(names)},
            coords={"labels": self._stages, "output": outputs},
            attrs={"ci_prob": self.prob, "ci_kind": "eti", "basis": "posterior"},
        )
        return label_outputs(history)


_KEYS = ("estimate", "lower", "upper")


def _label_interactively(session, created, source, tracker, console, args) -> tuple[bool, int]:
    """Label at the terminal in ``session``; return whether the budget was reached, and a status.

    The status: 0, ``EXIT_STOPPED`` at ``q`` or the end of input before the budget, 130 at
    Ctrl-C. The loop of ``bayeval label`` (:class:`~bayeval.cli._labelling.Labeller`): every
    answer is committed to the session file as it is given, so a run stopped anywhere loses
    nothing and ``bayeval label`` (or this command again) continues it. The session is closed
    on return.
    """
    budget, batch_size, prob, annotator, unblind = args
    shown = source.items.drop(columns=[*POOL_COLUMNS, "label"], errors="ignore")
    loop = Labeller(session, console, None, shown if len(shown.columns) else None, annotator,
                    batch_size, budget, None, prob, on_stage=tracker.record_session,
                    unblind=unblind)  # fmt: skip
    loop.resume = f"this command again (same --session), or bayeval label {session.path}"
    code = 0
    try:
        loop.intro(created)
        loop.run()
    except KeyboardInterrupt:
        loop.say(f"\ninterrupted: every answer given is saved in {session.path}.")
        code = 130
    finally:
        try:
            loop.summary()
        finally:
            session.close()
    if not tracker.estimates and session.sampler.stage > 0:  # a continued session's stages
        tracker.record(session.sampler.labels_used, session.sampler.estimate())
    completed = session.labels_count() >= budget and not len(session.pending)
    return completed, code or (EXIT_STOPPED if loop.stopped and not completed else 0)


def _simulate(sampler, source, measure, budget, batch_size, tracker, quiet) -> None:
    """Label from the known labels with :func:`bayeval.evaluate`, showing a progress bar."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    import bayeval as be

    columns = (
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
    )  # fmt: skip
    with Progress(*columns, console=Console(stderr=True), disable=quiet) as bar:
        task = bar.add_task(f"{sampler.method}: labelling", total=budget)

        def progress(labels_used, est):
            tracker.record(labels_used, est)
            value, low, high = (v[0] for v in est.per_output(tracker.prob))
            text = f"{est.outputs[0]} {value:.4f} [{low:.4f}, {high:.4f}]"
            bar.update(task, completed=labels_used, description=text)

        be.evaluate(
            source.pool, measure, source.truth, budget, sampler, batch_size=batch_size,
            prob=tracker.prob, progress=progress,
        )  # fmt: skip


def evaluate(
    pool: Annotated[
        str,
        typer.Option(
            help="'febrl' (the bundled FEBRL record pairs) or a .csv/.parquet file with columns "
            "score and optionally id, prediction, label.",
        ),
    ],
    measure: Annotated[
        MeasureName | None,
        typer.Option(
            help="The measure the sampler is built for (default f1; macro_f1 with --classes)."
        ),
    ] = None,
    budget: Annotated[int, typer.Option(min=1, help="Distinct items to label.")] = 1000,
    sampler: Annotated[
        str | None,
        typer.Option(
            help="Sampler, as in bayeval.evaluate: ais, passive, ... (a wrong name lists them "
            "all; default ais, passive with --classes)."
        ),
    ] = None,
    batch_size: Annotated[
        int | None,
        typer.Option(min=1, help="Items per stage (default: 50; 10 when labelling by hand)."),
    ] = None,
    prob: Annotated[float, typer.Option(help="Probability of the intervals, in (0, 1).")] = 0.95,
    seed: Annotated[int, typer.Option(help="Random seed of the sampler.")] = 0,
    threshold: Annotated[
        float, typer.Option(help="Predictions are score >= threshold when a file has none.")
    ] = 0.5,
    judge_column: Annotated[
        str | None,
        typer.Option(
            help="A column of the --pool file holding an automatic judge's 0/1 label or "
            "probability for every item; the model learns from your labels how far to trust "
            "it (never shown when labelling).",
        ),
    ] = None,
    classes: Annotated[str | None, typer.Option(help=CLASSES_HELP)] = None,
    interactive: Annotated[
        bool | None,
        typer.Option(
            "--interactive/--no-interactive",
            help="Ask for labels at the terminal (default: when the pool has no labels).",
        ),
    ] = None,
    session: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="When labelling by hand: the session file that keeps every answer as it is "
            "given (continued if it exists; bayeval label continues it too). Default: "
            "evaluate_session.db beside the --report folder.",
        ),
    ] = None,
    annotator: Annotated[
        str | None, typer.Option(help="When labelling by hand: your name, kept with each answer.")
    ] = None,
    report: Annotated[
        Path, typer.Option(file_okay=False, help="Folder for the report's plots.")
    ] = Path("evaluate_report"),
    no_report: Annotated[bool, typer.Option("--no-report", help="Write no plots.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    unblind: UnblindOption = False,
) -> None:
    """Label items chosen by a sampler and estimate precision, recall and F1 with intervals."""
    from rich.console import Console

    if not 0.0 < prob < 1.0:
        raise bad(f"must be in the open interval (0, 1); got {prob}.", "--prob")
    names = classes_option(classes)
    sampler = sampler or ("ais" if names is None else "passive")
    cls = sampler_class(sampler)
    chosen = run_measure(None if measure is None else measure.value, names)
    source = load_source(pool, threshold, judge_column, names)
    if interactive is None:
        interactive = source.truth is None
    elif not interactive and source.truth is None:
        raise bad(f"{pool} has no 'label' column: its labels must be given interactively.",
                   "--no-interactive")  # fmt: skip
    if budget > source.pool.size:
        raise bad(f"must be at most the pool's {source.pool.size:,} items; got {budget:,}.",
                   "--budget")  # fmt: skip
    batch_size = batch_size or (10 if interactive else 50)
    console = Console(stderr=as_json, highlight=False)
    start = time.perf_counter()
    if interactive:
        session = session or report.parent / "evaluate_session.db"  # beside the report
        sess, _, created = open_or_create(
            session, pool, threshold, measure, sampler, seed, None, source=source
        )
        instance = sess.sampler
        tracker = Tracker(instance, chosen.name, prob)
        completed, code = _label_interactively(
            sess, created, source, tracker, console, (budget, batch_size, prob, annotator, unblind)
        )
    else:
        try:
            instance = cls(source.pool, chosen, batch_size=batch_size, rng=seed)
        except ValueError as err:  # a sampler of yes/no labels on a multiclass pool
            raise bad(str(err), "--sampler") from None
        tracker = Tracker(instance, chosen.name, prob)
        try:
            _simulate(instance, source, chosen, budget, batch_size, tracker, as_json)
        except ValueError as err:  # the sampler ran out of items it can draw
            typer.echo(f"error after {instance.labels_used:,} labels: {err}", err=True)
            raise typer.Exit(code=2) from None
        completed, code = True, 0
    seconds = time.perf_counter() - start
    truth = _true_values(source, tracker)
    files = [] if no_report or not tracker.estimates else write_plots(
        report, source, instance, tracker, truth
    )  # fmt: skip
    result = _result(
        pool, source, instance, tracker, truth, (budget, batch_size, seed), completed, seconds
    )
    if files:  # and the page that holds them, with the estimates, warnings and diagnostics
        files.append(write_html(report, result, files, tracker.estimates, _warnings(result)))
    result["report"] = [str(f) for f in files]
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        _print(result, source, console, _model_text(instance.default_model(), source.pool))
    if code:  # stopped by hand before the budget: every answer is in the session
        raise typer.Exit(code=code)


def _model_text(model, pool) -> str:
    """Return what the credible intervals come from, for the table's footnote."""
    name = type(model).__name__
    judge = "" if pool.judge is None else ", the judge's answer among the cells"
    what = {
        "ScoreCalibration": "a calibration curve learned from the labels",
        "CellRates": "each cell's own rate of positives: the system gives predictions only",
        "ClassCalibration": "each predicted class's accuracy, pooled over the classes",
    }[name]
    return f"{name} ({what}{judge})"


def _true_values(source, tracker) -> dict[str, float]:
    """Return the true value of every output when the pool's labels are known."""
    if source.truth is None:
        return {}
    out = {}
    for name in tracker.names:
        measure = run_measure(name, source.pool.classes)
        values = measure.value(source.truth, predictions=source.pool.predictions)
        out.update(zip(measure.outputs, values.tolist(), strict=True))
    return out


#: The JSON keys of release 0.1 (kept for one release), each with its new name: the basis of an
#: interval names it, as everywhere in bayeval (``posterior`` or ``design``), not its kind.
DEPRECATED_KEYS = {
    "basis": "role",
    "estimate": "design_estimate",
    "lower": "design_lower",
    "upper": "design_upper",
    "credible_estimate": "posterior_estimate",
    "credible_lower": "posterior_lower",
    "credible_upper": "posterior_upper",
}

# An end of the robust credible interval this far from the default's is reported beside it
ROBUST_DIFFERS = 0.005


def _robust_interval(sampler, tracker, name: str):
    """Return the credible interval of ``ScoreCalibration.robust()`` for ``name``, or None.

    None where the default model is not ``ScoreCalibration`` (a multiclass pool; a pool of
    0/1 predictions, where there is no curve whose floor the variant doubts).
    """
    from bayeval.models import ScoreCalibration

    if not isinstance(sampler.default_model(), ScoreCalibration):
        return None
    measure = tracker.companions.get(name)  # None: the run's own measure
    est = sampler.estimate(measure=measure, model=ScoreCalibration.robust())
    if "posterior" not in est.bases:  # no model of the labels for this measure
        return None
    return est.per_output(tracker.prob, "posterior")


def _result(pool, source, sampler, tracker, truth, run, completed, seconds) -> dict:
    """Everything the command reports, as JSON-ready values (``run``: budget, batch size, seed)."""
    budget, batch_size, seed = run
    rows, in_estimate = [], 0
    for name, est in tracker.estimates.items():
        in_estimate = max(in_estimate, est.labels_used)
        design = est.per_output(tracker.prob, "design")
        cred = est.per_output(tracker.prob, "posterior") if "posterior" in est.bases else None
        robust = None if cred is None else _robust_interval(sampler, tracker, name)
        for i, output in enumerate(est.outputs):
            row = {
                "measure": name,
                "output": output,
                "role": "sampled for" if name == tracker.names[0] else "same labels",
                "se": number(est.standard_error[i]),
                "truth": number(truth[output]) if output in truth else None,
            }
            for basis, interval in (("posterior", cred), ("design", design), ("robust", robust)):
                for key, values in zip(_KEYS, interval or (None,) * 3, strict=True):
                    row[f"{basis}_{key}"] = None if values is None else number(values[i])
            row.update({old: row[new] for old, new in DEPRECATED_KEYS.items()})
            rows.append(row)
    return {
        "pool": pool,
        "items": source.pool.size,
        "measure": tracker.names[0],
        "sampler": sampler.method,
        "budget": budget,
        "labels_used": sampler.labels_used,
        "labels_in_estimate": in_estimate,
        "batch_size": batch_size,
        "seed": seed,
        "prob": tracker.prob,
        "ci_kind": "eti",
        "oracle": "labels" if source.truth is not None else "interactive",
        "completed": completed,
        "seconds": seconds,
        "estimates": rows,
        "unavailable": dict(tracker.unavailable),
        "deprecated_keys": dict(DEPRECATED_KEYS),
    }


def _warnings(result: dict, robust=True, unavailable=True, stopped=True) -> list[str]:
    """Return a run's warnings, each kind unless turned off.

    A robust interval that differs from the default's, what was not estimated, a run stopped
    before its budget.
    """
    lines = []
    for row in result["estimates"] if robust else ():
        if _robust_differs(row):
            r = {k: "n/a" if row[k] is None else f"{row[k]:.4f}"
                 for k in ("robust_estimate", "robust_lower", "robust_upper")}  # fmt: skip
            lines.append(
                f"{row['output']}: the robust model (ScoreCalibration.robust(), which allows "
                f"positives that no score predicts) gives {r['robust_estimate']} "
                f"[{r['robust_lower']}, {r['robust_upper']}]; the default assumes positives "
                "thin out among low scores as the fitted curve says. Report both."
            )
    for name, reason in result["unavailable"].items() if unavailable else ():
        lines.append(f"{name}: not estimated ({reason})")
    if stopped and not result["completed"]:
        lines.append(
            f"stopped after {result['labels_used']:,} of {result['budget']:,} labels; the "
            f"estimate uses the {result['labels_in_estimate']:,} of complete stages."
        )
    return lines


def _robust_differs(row: dict) -> bool:
    """Whether an end of the robust credible interval moves by more than ROBUST_DIFFERS."""
    ends = [row[k] for k in ("posterior_lower", "posterior_upper", "robust_lower", "robust_upper")]
    if None in ends:
        return False
    return max(abs(ends[0] - ends[2]), abs(ends[1] - ends[3])) > ROBUST_DIFFERS


def _print(result: dict, source, console, model: str) -> None:
    from rich.table import Table

    if not result["estimates"]:
        console.print(
            f"no estimate: {result['labels_used']} label(s) given, but no stage is complete "
            "(a stage counts once every item of it is labelled)."
        )
        return
    known = any(row["truth"] is not None for row in result["estimates"])
    table = Table(
        title=(
            f"{source.name} ({result['items']:,} items): {result['labels_in_estimate']:,} "
            f"labels chosen by {result['sampler']} for {result['measure']}, "
            f"{result['prob']:.0%} intervals"
        )
    )
    columns = ["output", "posterior median", "credible interval", "design estimate",
               "design interval"]  # fmt: skip
    columns += ["truth", "covers"] if known else []
    for column in columns:
        table.add_column(column, justify="left" if column == "output" else "right")

    def fmt(value):
        return "n/a" if value is None else f"{value:.4f}"

    def covers(row, prefix):
        lower, upper = row[f"{prefix}lower"], row[f"{prefix}upper"]
        if None in (lower, row["truth"], upper):
            return "n/a"
        return "yes" if lower <= row["truth"] <= upper else "no"

    for row in result["estimates"]:
        cells = [
            row["output"],
            fmt(row["posterior_estimate"]),
            f"[{fmt(row['posterior_lower'])}, {fmt(row['posterior_upper'])}]",
            fmt(row["design_estimate"]),
            f"[{fmt(row['design_lower'])}, {fmt(row['design_upper'])}]",
        ]
        if known:
            cells += [fmt(row["truth"]), f"{covers(row, 'posterior_')} / {covers(row, 'design_')}"]
        table.add_row(*cells)
    console.print(table)
    console.print(
        f"credible: posterior of bayeval.models.{model}; design: the sampler's importance "
        "weights, logit scale; covers: credible / design.",
        style="dim",
    )
    for line in _warnings(result, unavailable=False, stopped=False):
        console.print(line, style="yellow")
    others = [r["output"] for r in result["estimates"] if r["basis"] == "same labels"]
    if others:
        console.print(
            f"{', '.join(others)}: estimated from the same labels (the run's draws weighted "
            f"for each measure).",
            style="dim",
        )
    for line in _warnings(result, robust=False):
        console.print(line, style="yellow")
    console.print(f"{result['labels_used']:,} labels in {result['seconds']:.1f} s", style="dim")
    if result["report"]:
        console.print(f"report: {', '.join(result['report'])}")
