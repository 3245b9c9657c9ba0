"""``bayeval compare``: label where several systems disagree until the best one is clear.

Examples
--------
``bayeval compare --pool runs.csv --systems a,b,c --measure f1 --budget 200``
``bayeval compare --pool runs.parquet --budget 300 --json`` (every column but id and label)
``bayeval compare --pool photos.csv --classes cat,dog,bird --measure macro_f1`` (class columns)
``bayeval compare --pool runs.csv --budget 100 --audit 40`` (every difference checked by an audit)
``bayeval compare --pool runs.csv --audit 40 --audit-agreements 40`` (and each system's level)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from bayeval.cli._labelling import KEYS_HELP, Labeller
from bayeval.cli._sessions import open_session, same_pool
from bayeval.cli._shared import (
    MeasureName,
    UnblindOption,
    bad,
    classes_option,
    error,
    number,
    run_measure,
    save_png,
)

#: The most labels the selection uses unless told (fewer where fewer items disagree).
DEFAULT_BUDGET = 200

HELP = "\n\n".join(
    [
        "Compare several systems on one pool: label the items whose labels tell most about "
        "which system is best (bayeval.sampling.ModelSelection), until one system's P(best) "
        "reaches --target, the expected regret falls under --regret, or --budget is spent.",
        "--pool is a CSV or Parquet file with one row per item: a column per system (its 0/1 "
        "predictions, or scores that --threshold turns into predictions) and optionally id "
        "and label (0/1). With a label column the labels come from it (a simulation); without "
        "one, each chosen item is shown and you answer it at the terminal: every answer is "
        "kept in the --session file as it is given, so you can stop anywhere (q, end of input, "
        "Ctrl-C) and continue later with the same command. " + KEYS_HELP,
        "Reported: each system's P(best), its expected regret, and its difference from the "
        "leading system with a credible interval (with --classes and at most six systems, "
        "from be.compare's model refitted to the labels: the sampler's own are too narrow "
        "with classes; benchmarks/README.md). Those intervals hold for the leader's closest "
        "rivals, where the labels went, and are too narrow for the systems far behind it; "
        "--audit N then labels N more items, drawn at random among the disagreements left "
        "once the selection stops, and the differences come from them and the chosen labels "
        "with nothing assumed about how the systems err (be.comparison.audited_differences; "
        "20 audit items covered the leader's differences in 0.97-0.99 of the runs on Model "
        "Selector's tasks). A measure other than accuracy needs --audit-agreements too; with "
        "--classes the audit reads accuracy only. In a session the audit is kept "
        "as such: the same command continues it. Each system's own measure needs the items "
        "on which all of them agree, which move every system alike and which the selection "
        "never labels: --audit-agreements M audits M of them too, and each system's measure "
        "is reported with its interval (be.comparison.audited_levels). The report folder "
        "gets leader.png (the differences from the leader), differences.png (P(row > column) "
        "and the mean difference), prob_best.png (P(best) against labels used) and, with "
        "--audit-agreements, levels.png (each system's measure).",
    ]
)


def compare(
    pool: Annotated[
        Path,
        typer.Option(
            dir_okay=False, help="A .csv/.parquet file: a column per system, optionally id, label."
        ),
    ],
    systems: Annotated[
        str | None,
        typer.Option(help="The systems' columns, comma-separated (default: all but id, label)."),
    ] = None,
    measure: Annotated[
        MeasureName, typer.Option(help="The measure the systems are compared on.")
    ] = MeasureName.accuracy,
    budget: Annotated[
        int | None,
        typer.Option(
            min=1,
            help=f"The most labels the selection uses (an audit adds its own); default "
            f"{DEFAULT_BUDGET}, or every disagreement if they are fewer.",
        ),
    ] = None,
    target: Annotated[float, typer.Option(help="Stop once a system's P(best) reaches it.")] = 0.95,
    regret: Annotated[
        float | None, typer.Option(help="Stop also once the expected regret is at most this.")
    ] = None,
    choose: Annotated[
        str,
        typer.Option(
            help="information (default); leaders (Model Selector's choice: where the systems "
            "right most often so far disagree); or the baselines disagreement, uniform."
        ),
    ] = "information",
    audit: Annotated[
        int,
        typer.Option(
            min=0,
            help="Then label this many items drawn at random among the disagreements left, and "
            "read every difference from them (0: no audit).",
        ),
    ] = 0,
    audit_agreements: Annotated[
        int,
        typer.Option(
            min=0,
            help="With --audit: also this many among the items on which every system agrees, "
            "and report each system's own accuracy (the agreements move every system alike).",
        ),
    ] = 0,
    prob: Annotated[float, typer.Option(help="Probability of the intervals, in (0, 1).")] = 0.95,
    seed: Annotated[int, typer.Option(help="Random seed of the sampler.")] = 0,
    threshold: Annotated[
        float, typer.Option(help="A system predicts 1 where its column is at least this.")
    ] = 0.5,
    classes: Annotated[
        str | None,
        typer.Option(
            help="A multiclass pool: its class names, separated by commas (e.g. cat,dog,bird). "
            "The systems' columns and the label column then hold class names or indices; "
            "measures accuracy, balanced_accuracy, macro_f1 or micro_f1."
        ),
    ] = None,
    session: Annotated[
        Path,
        typer.Option(
            dir_okay=False,
            help="When labelling by hand: the session file that keeps every answer (continued "
            "if it exists).",
        ),
    ] = Path("compare_session.db"),
    annotator: Annotated[
        str | None, typer.Option(help="When labelling by hand: your name, kept with each answer.")
    ] = None,
    report: Annotated[
        Path, typer.Option(file_okay=False, help="Folder for the report's plots.")
    ] = Path("compare_report"),
    no_report: Annotated[bool, typer.Option("--no-report", help="Write no plots.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    unblind: UnblindOption = False,
) -> None:
    """Label where systems disagree until the best is clear; report P(best) and differences."""
    from rich.console import Console

    from bayeval.datasets.files import read_system_items
    from bayeval.sampling.model_selection import CHOICES

    if not 0.0 < prob < 1.0:
        raise bad(f"must be in the open interval (0, 1); got {prob}.", "--prob")
    if choose not in CHOICES:
        raise bad(f"must be one of {', '.join(CHOICES)}; got {choose!r}.", "--choose")
    if audit and measure.value != "accuracy" and classes:
        raise bad(
            f"reads accuracy with --classes; use it with --measure accuracy, not {measure.value}.",
            "--audit",
        )
    if audit and measure.value != "accuracy" and not audit_agreements:
        raise bad(
            f"with --measure {measure.value} every item moves the differences, those on which "
            "all the systems agree too: give --audit-agreements M as well.",
            "--audit",
        )
    if audit_agreements and not audit:
        raise bad("needs --audit N: the audit's disagreements come first.", "--audit-agreements")
    names = None if systems is None else [s.strip() for s in systems.split(",") if s.strip()]
    class_names = classes_option(classes)
    chosen = run_measure(measure.value, class_names)
    try:
        source = read_system_items(pool, names, threshold, class_names)
    except ValueError as err:
        raise bad(str(err), "--pool" if names is None else "--systems") from None
    options = {"target": target, "regret": regret, "choose": choose}
    console = Console(stderr=as_json, highlight=False)
    if source.truth is None:
        where = (session, annotator, budget, prob, (audit, audit_agreements), unblind)
        sampler, history, audited, levels = _label_by_hand(
            source, chosen, options, seed, where, console
        )
    else:
        sampler = _sampler(source.pool, chosen, options, seed)
        try:
            history = sampler.run(source.truth, _budget(sampler, budget))
        except ValueError as err:
            raise bad(str(err), "--budget") from None
        audited, levels = _simulated_audit(sampler, source.truth, audit, audit_agreements)
    comparison = sampler.estimate() if audited is None else audited
    truth = None  # each system's measure, from a label column
    if source.truth is not None:
        m, preds = chosen, source.pool.predictions
        values = [np.ravel(m.value(source.truth, predictions=p))[0] for p in preds.T]
        truth = {name: float(v) for name, v in zip(source.pool.systems, values, strict=True)}
    files = [] if no_report else _write_report(
        report, (comparison, levels), sampler.best, history, target, prob
    )  # fmt: skip
    result = _result(sampler, (comparison, levels), truth, prob, files)
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        _print(result, console)


def _sampler(pool, measure, options, seed):
    from bayeval.sampling import ModelSelection

    try:
        return ModelSelection(pool, measure, rng=seed, **options)
    except ValueError as err:
        raise error(err) from None


def _budget(sampler, budget: int | None) -> int:
    """Return the budget given (checked against what the choice can reach), or the default."""
    if budget is None:
        return min(DEFAULT_BUDGET, sampler.labels_reachable)
    sampler.check_budget(budget)
    return budget


def _simulated_audit(sampler, truth, audit: int, agreements: int):
    """Label an audit of the disagreements (and agreements) left; return what it reads.

    The differences (None without an audit, or with no disagreement left) and each system's
    accuracy (None without agreements). Fewer items are drawn where fewer are left.
    """
    if audit == 0 or sampler.audit_left == 0:
        return None, None
    wanted = min(audit, sampler.audit_left), min(agreements, sampler.agreements_left)
    ids = sampler.ask_audit(wanted[0], agreements=wanted[1])
    sampler.tell(ids, truth[sampler.pool.positions(ids)])
    return _audited(sampler.audited_differences), _audited(sampler.audited_levels, agreements)


def _audited(read, agreements: int = 1):
    """Return ``read()`` (an audited reading), or None.

    None without agreements asked for, or while the audit cannot give it: levels, and
    differences of a measure other than accuracy, need an answered agreement wherever
    agreements are left (the reading's ValueError says so).
    """
    if not agreements:
        return None
    try:
        return read()
    except ValueError:
        return None


def _label_by_hand(source, measure, options, seed, where, console):
    """Label at the terminal in a session.

    Return the sampler, P(best) after each answer, the audited differences (None without an
    audit answered) and the audited accuracies (None without them).
    """
    import xarray as xr

    from bayeval.session import Session

    path, annotator, budget, prob, audit, unblind = where
    created = not path.exists()
    if not created:
        sess = open_session(path, read_only=False)
        if sess.meta["sampler"] != "model_selection" or not same_pool(
            source.pool, sess.sampler.pool
        ):
            sess.close()
            raise bad(f"{path} is a session of another pool or sampler.", "--session")
    else:
        try:
            sess = Session.create(
                path, source.pool, measure, "model_selection", rng=seed, **options
            )
        except ValueError as err:
            raise error(err) from None
    try:
        budget = _budget(sess.sampler, budget)
    except ValueError as err:
        sess.close()
        if created:  # nothing answered yet: leave no session behind
            for leftover in (path, path.with_name(path.name + "-wal"),
                             path.with_name(path.name + "-shm")):  # fmt: skip
                leftover.unlink(missing_ok=True)
        raise bad(str(err), "--budget") from None
    used, prob_best = [], []

    def record(session):  # P(best) of the stopping rule's draws: no estimate needed
        used.append(session.labels_count())
        prob_best.append(session.sampler.prob_best.copy())

    # a session that holds an audit continues it: its chosen labels are over
    drawn = len(sess.sampler.audit), sess.sampler.audit_agreements
    audit = max(audit[0], drawn[0] - drawn[1]), max(audit[1], drawn[1])
    shown = source.items.drop(columns=["id", *source.pool.systems], errors="ignore")
    extra = shown if len(shown.columns) else None
    loop = Labeller(sess, console, None, extra, annotator, 1, budget, None, prob,
                    on_stage=record, audit=audit if audit[0] else None,
                    unblind=unblind)  # fmt: skip
    audited = levels = None
    try:
        loop.intro(created)
        loop.run()
    except KeyboardInterrupt:
        loop.say(f"\ninterrupted: every answer given is saved in {sess.path}.")
    finally:
        try:
            drawn = sess.sampler.audit
            if sess.sampler.is_labelled(sess.sampler.pool.positions(drawn)).any():
                audited = _audited(sess.audited_differences)
                levels = _audited(sess.audited_levels, audit[1])
        finally:
            sess.close()
    sampler = sess.sampler
    history = xr.Dataset(
        {"prob_best": (("labels", "system"), np.reshape(prob_best, (-1, sampler.pool.n_systems)))},
        coords={"labels": used, "system": list(sampler.pool.systems)},
    )
    return sampler, history, audited, levels


def _write_report(folder: Path, results, best, history, target, prob) -> list[Path]:
    """Write the report's plots.

    ``results``: the comparison (or the audited differences), and the audited accuracies (or
    None).
    """
    from bayeval.plots import plot_differences, plot_differences_from, plot_prob_best

    comparison, levels = results
    folder.mkdir(parents=True, exist_ok=True)
    files = [folder / "leader.png", folder / "differences.png"]
    save_png([plot_differences_from(comparison, best, prob)], files[0])
    save_png([plot_differences(comparison)], files[1])
    if history.sizes.get("labels", 0):
        files.append(folder / "prob_best.png")
        save_png([plot_prob_best(history, target=target)], files[-1])
    if levels is not None:  # each system's measure: a forest
        files.append(folder / "levels.png")
        save_png([levels.plot(prob)], files[-1])
    return files


def _result(sampler, results, truth, prob, files) -> dict[str, Any]:
    from bayeval.plots import differences_from

    comparison, levels = results
    estimate, lower, upper = differences_from(comparison, sampler.best, prob)
    if levels is not None:
        level, (level_lower, level_upper) = levels.estimate.values, levels.interval(prob).values.T
    rows = []
    for k, name in enumerate(comparison.systems):
        row = {
            "system": name,
            "difference": number(estimate[k]),
            "lower": number(lower[k]),
            "upper": number(upper[k]),
            "prob_best": number(sampler.prob_best[k]),
            "expected_regret": number(sampler.expected_regret[k]),
        }
        if levels is not None:
            row.update(level=number(level[k]), level_lower=number(level_lower[k]),
                       level_upper=number(level_upper[k]))  # fmt: skip
        if truth is not None:
            row["true_difference"] = truth[name] - truth[sampler.best]
            if levels is not None:
                row["true_level"] = truth[name]
        rows.append(row)
    audited = sampler.audit[sampler.is_labelled(sampler.pool.positions(sampler.audit))]
    return {
        "measure": comparison.measure,
        # of the differences' intervals
        "model": getattr(comparison, "model", "audit: bayeval.comparison.audited_differences"),
        "best": sampler.best,
        "labels_used": sampler.labels_used,
        "audit_labels": len(audited),  # of labels_used
        "disagreements": sampler.disagreements,
        "stop_reason": sampler.stop_reason(),
        "ci_prob": prob,
        "systems": sorted(rows, key=lambda r: -(r["prob_best"] or 0.0)),
        "report": [str(f) for f in files],
    }


def _print(result: dict, console) -> None:
    from rich.table import Table

    rows, prob = result["systems"], f"{result['ci_prob']:.0%} interval"
    leader, used = result["best"], result["labels_used"]
    table = Table(title=f"{result['measure']} minus the leader's ({leader}): {used:,} labels")
    columns = ["system", "difference", prob, "P(best)", "regret"]
    truth = "true_difference" in rows[0]
    for column in columns + ["true"] * truth:
        table.add_column(column)
    for r in rows:
        cells = [r["system"], _fmt(r["difference"]), f"[{_fmt(r['lower'])}, {_fmt(r['upper'])}]",
                 _fmt(r["prob_best"]), _fmt(r["expected_regret"])]  # fmt: skip
        table.add_row(*cells, *([_fmt(r["true_difference"])] if truth else []))
    console.print(table)
    if "level" in rows[0]:  # each system's own, from an audit of the agreements too
        audited = result["audit_labels"]
        table = Table(title=f"each system's {result['measure']} ({audited:,} audit labels)")
        truth = "true_level" in rows[0]
        for column in ["system", result["measure"], prob] + ["true"] * truth:
            table.add_column(column)
        for r in rows:
            interval = f"[{_fmt(r['level_lower'])}, {_fmt(r['level_upper'])}]"
            table.add_row(r["system"], _fmt(r["level"]), interval,
                          *([_fmt(r["true_level"])] if truth else []))  # fmt: skip
        console.print(table)
    else:
        console.print(
            "each system's own measure, with a forest plot (levels.png), needs --audit N "
            "--audit-agreements M: the labels chosen to find the best do not tell how good each is."
        )
    reason = result["stop_reason"] or "the stopping rule does not hold yet"
    console.print(f"best: {result['best']} ({reason})")
    for path in result["report"]:
        console.print(f"wrote {path}")


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.4f}"
