"""``bayeval status``: a labelling session's settings, counts, annotators and estimate.

Examples
--------
``bayeval status labels.db``
``bayeval status labels.db --json`` (works while another process labels the session)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from bayeval.cli._labelling import estimate_rows
from bayeval.cli._sessions import open_session
from bayeval.cli._shared import measure_name
from bayeval.cli.label import check_prob

__all__ = ["status"]


def status(
    session: Annotated[Path, typer.Argument(dir_okay=False, help="The session file.")],
    prob: Annotated[float, typer.Option(help="Probability of the interval, in (0, 1).")] = 0.95,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show a session's settings, counts, annotators and estimate.

    The session is opened read-only: this works while another process labels it.
    """
    check_prob(prob)
    sess = open_session(session, read_only=True)
    try:
        out = _status(sess, prob)
    finally:
        sess.close()
    if as_json:
        typer.echo(json.dumps(out, indent=2))
        return
    _print_status(out)


def _status(sess, prob: float) -> dict:
    answers = sess.answers()
    counts = answers.groupby("annotator", dropna=False, sort=False).size()
    quality = _annotator_accuracy(sess, answers, prob)
    annotators = []
    for name, n in counts.items():
        name = None if name is None or name != name else str(name)
        row = {"name": name, "answers": int(n)}
        if quality is not None:
            summary = quality.loc["unnamed" if name is None else name]
            for key in ("accuracy", "accuracy_lower", "accuracy_upper"):
                row[key] = float(summary[key])
        annotators.append(row)
    meta = sess.meta
    return {
        "path": str(sess.path),
        "sampler": meta["sampler"],
        "measure": measure_name(sess.sampler.measure),
        "label_rule": meta.get("label_rule", "latest"),
        "seed": int(meta["seed"]),
        "created": meta["created"],
        "items": int(sess.sampler.pool.size),
        "labels": int(sess.labels_count()),
        "pending": len(sess.pending),
        "answers": len(answers),
        "rejudgements": int((~answers["first"]).sum()),
        "annotators": annotators,
        "stages": int(sess.sampler.stage),
        "prob": prob,
        "estimate": estimate_rows(sess, prob),
    }


def _annotator_accuracy(sess, answers, prob: float):
    """Each annotator's accuracy with its ``prob`` interval (Dawid–Skene), or None.

    Only where the annotators can be told apart from the truth: labels of fixed items
    (not ``stochastic_ais``) and at least one item answered by two annotators.
    """
    if sess.meta["sampler"] == "stochastic_ais" or answers.empty:
        return None
    who = answers["annotator"].fillna("unnamed")
    if not (who.groupby(answers["id"]).nunique() > 1).any():
        return None
    return sess.annotator_posterior().annotator_summary(prob)


def _print_status(out: dict) -> None:
    from rich.console import Console

    console = Console(highlight=False)

    def say(text: str) -> None:
        console.print(text, markup=False, soft_wrap=True)

    say(f"session: {out['path']} (created {out['created']})")
    say(f"sampler: {out['sampler']} (seed {out['seed']})")
    say(f"measure: {out['measure']}")
    say(f"label rule: {out['label_rule']}")
    say(f"items: {out['items']:,}")
    say(f"labels: {out['labels']:,}")
    say(f"pending: {out['pending']:,}")
    again = "for items drawn again" if out["sampler"] == "stochastic_ais" else "re-judgements"
    say(f"answers: {out['answers']:,} ({out['rejudgements']:,} {again})")
    names = ", ".join(
        f"{a['name'] if a['name'] is not None else '(unnamed)'} ({a['answers']:,}"
        + (f"; accuracy {a['accuracy']:.3f} [{a['accuracy_lower']:.3f}, "
           f"{a['accuracy_upper']:.3f}])" if "accuracy" in a else ")")
        for a in out["annotators"]
    )  # fmt: skip
    say(f"annotators: {names or 'none yet'}")
    rows = out["estimate"]
    if rows is None:
        say("estimate: no complete stage yet")
        return

    def fmt(value):
        return "n/a" if value is None else f"{value:.4f}"

    stages = f"{out['stages']:,} complete stage{'s' if out['stages'] != 1 else ''}"
    say(f"estimate ({out['prob']:.0%} confidence interval, {stages}):")
    for r in rows:
        best = f" P(best) {fmt(r['prob_best'])}" if "prob_best" in r else ""
        say(
            f"  {r['output']}: {fmt(r['estimate'])} [{fmt(r['lower'])}, {fmt(r['upper'])}] "
            f"width {fmt(r['width'])}{best}"
        )
