"""``bayeval label``, ``status``, ``export`` and ``import``: labelling sessions kept in one file.

A session (:class:`bayeval.session.Session`) is an SQLite file with the pool, the sampler and
every question and answer; each answer is committed as it is given, so a labelling run can stop
anywhere (``q``, end of input, Ctrl-C, a crash) and ``bayeval label`` continues it later.

Examples
--------
``bayeval label labels.db --pool scored.csv --measure f1 --seed 7`` (creates the session)
``bayeval label labels.db --annotator ann --budget 300 --width 0.05`` (continues it)
``bayeval label labels.db --data records.csv`` (shows each item's fields from records.csv)
``bayeval status labels.db --json``
``bayeval export labels.db pending.csv``
``bayeval export labels.db tasks.json --format label-studio --label-studio-config config.xml``
``bayeval import labels.db answers.csv --annotator ann``
"""

from __future__ import annotations

import json
from collections import deque
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from bayeval.cli.evaluate import MeasureName, load_source, sampler_class
from bayeval.measures.registry import NAMES, by_name
from bayeval.session import LABEL_RULES
from bayeval.session.exchange import FORMATS

__all__ = ["export", "import_", "label", "status"]

LabelRule = StrEnum("LabelRule", [(name, name) for name in LABEL_RULES])
ExchangeFormat = StrEnum("ExchangeFormat", [(name.replace("-", "_"), name) for name in FORMATS])

#: What the labelling prompt accepts: a label, or one of the loop's actions.
_KEYS = {
    "y": 1, "yes": 1, "1": 1, "n": 0, "no": 0, "0": 0,
    "s": "skip", "skip": "skip", "u": "undo", "undo": "undo", "q": "quit", "quit": "quit",
    "?": "help", "h": "help", "help": "help",
}  # fmt: skip

_KEYS_HELP = (
    "keys: y = positive, n = negative, s = skip (the item stays pending and comes back after "
    "the other pending items; its stage completes only once it is answered), u = undo (go back "
    "to the previous answered item and answer it again: the new answer is recorded as a "
    "re-judgement, nothing is deleted; u again goes further back), q = quit (every answer is "
    "already saved), ? = this help."
)

_PROMPT = "label [y/n/s/u/q, ? for help]: "

#: Columns of a --pool file that ``bayeval label`` shows from the pool itself (``predicted``:
#: the bundled FEBRL pairs' predictions).
_POOL_COLUMNS = ("id", "score", "prediction", "predicted")

#: Width, in characters, of the labelling loop's progress bar.
_BAR = 24

LABEL_HELP = "\n\n".join(
    [
        "Label items at the terminal in a session file, which keeps every answer as it is "
        "given: stop anywhere (q, end of input, Ctrl-C) and run the command again to continue.",
        "If SESSION does not exist it is created from --pool ('febrl' or a .csv/.parquet file "
        "with columns score and optionally id, prediction; as for bayeval evaluate) with "
        "--measure, --sampler, --seed and --label-rule (defaults f1, ais, a random seed that is "
        "stored, latest). If it exists it is continued; those options are then optional, and "
        "any that is given must agree with the session (a session never changes its pool, "
        "measure, sampler, seed or label rule).",
        "Pending questions are answered first, then a batch of --batch-size items is asked, and "
        "so on. Each item is shown with the fields of its row of --data (a table with an id "
        "column); without --data, with its id, the other columns of the --pool file (when "
        "given), its score and its prediction. " + _KEYS_HELP,
        "After each answer the progress is shown: labels so far (of --budget), and, once a "
        "stage is complete, the estimate and the width of its --prob confidence interval. The "
        "loop stops when --budget labels are given or the interval of the measure is narrower "
        "than --width.",
    ]
)


def _error(message: Any, code: int = 1) -> typer.Exit:
    """Print ``error: message`` on stderr and return the ``Exit`` to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=code)


def _bad(message: str, option: str) -> typer.BadParameter:
    return typer.BadParameter(message, param_hint=f"'{option}'")


def _check_prob(prob: float) -> None:
    if not 0.0 < prob < 1.0:
        raise _bad(f"must be in the open interval (0, 1); got {prob}.", "--prob")


def _open(path: Path, *, read_only: bool):
    """Open a session, turning ``SessionInUseError`` and bad files into one-line errors."""
    from bayeval.session import Session, SessionInUseError

    try:
        return Session.open(path, read_only=read_only)
    except SessionInUseError as err:
        raise _error(err) from None
    except ValueError as err:
        raise _error(err) from None


def _measure_name(measure: Any) -> str:
    """Return the ``--measure`` name of a measure, or its repr when it has none."""
    for name in NAMES:
        if by_name(name) == measure:
            return name
    return repr(measure)


def _read_data(path: Path | None):
    """Read ``--data``: a CSV or Parquet table with an ``id`` column; rows keyed by ``str(id)``."""
    import pandas as pd

    if path is None:
        return None
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet", ".pq"):
        raise _bad(f"expected a .csv or .parquet file; got {str(path)!r}.", "--data")
    if not path.is_file():
        raise _bad(f"file {str(path)!r} does not exist.", "--data")
    try:
        df = pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path)
    except ImportError:
        raise _bad(
            f"reading {str(path)!r} needs pyarrow, which is not installed: pip install "
            "'bayeval[parquet]'.",
            "--data",
        ) from None
    except (OSError, ValueError, pd.errors.ParserError) as err:
        raise _bad(f"cannot read {str(path)!r}: {err}", "--data") from None
    if "id" not in df.columns:
        raise _bad(
            f"{path}: a column 'id' is needed (the pool's item ids); its columns are "
            f"{list(map(str, df.columns))}.",
            "--data",
        )
    keys = df["id"].astype(str)
    repeated = keys[keys.duplicated()]
    if not repeated.empty:
        raise _bad(f"{path}: id {repeated.iloc[0]!r} is in more than one row.", "--data")
    return df.set_axis(keys.to_numpy(), axis=0)


def _same_pool(a: Any, b: Any) -> bool:
    """Whether two pools hold the same scores, predictions and ids."""
    return (
        a.scores.shape == b.scores.shape
        and np.array_equal(a.scores, b.scores)
        and np.array_equal(a.predictions, b.predictions)
        and np.array_equal(np.asarray(a.ids).astype(str), np.asarray(b.ids).astype(str))
    )


def _check_agrees(session, pool, source, measure, sampler, seed, label_rule) -> None:
    """Raise ``BadParameter`` for a given option that differs from the session's setting."""
    meta = session.meta
    where = f"the session {session.path} was created with"
    keep = "; leave the option out to continue the session (its settings never change)."
    if measure is not None and by_name(measure.value) != session.sampler.measure:
        theirs = _measure_name(session.sampler.measure)
        raise _bad(f"{where} --measure {theirs}, not {measure.value}{keep}", "--measure")
    if sampler is not None and sampler != meta["sampler"]:
        raise _bad(f"{where} --sampler {meta['sampler']}, not {sampler}{keep}", "--sampler")
    if seed is not None and seed != int(meta["seed"]):
        raise _bad(f"{where} --seed {meta['seed']}, not {seed}{keep}", "--seed")
    rule = meta.get("label_rule", "latest")
    if label_rule is not None and label_rule.value != rule:
        raise _bad(f"{where} --label-rule {rule}, not {label_rule.value}{keep}", "--label-rule")
    if source is not None and not _same_pool(source.pool, session.sampler.pool):
        raise _bad(
            f"{pool} holds other items, scores or predictions than the pool of {session.path} "
            f"({session.sampler.pool.size:,} items){keep}",
            "--pool",
        )


def label(
    session: Annotated[
        Path,
        typer.Argument(
            dir_okay=False, help="The session file: continued if it exists, else created."
        ),
    ],
    pool: Annotated[
        str | None,
        typer.Option(
            help="For a new session: 'febrl' or a .csv/.parquet file with columns score and "
            "optionally id, prediction. For an existing one it must be the session's pool; its "
            "other columns are shown for each item (unless --data is given).",
        ),
    ] = None,
    measure: Annotated[
        MeasureName | None,
        typer.Option(help="For a new session: the measure the sampler is built for (default f1)."),
    ] = None,
    sampler: Annotated[
        str | None,
        typer.Option(help="For a new session: the sampler (ais, passive, ...; default ais)."),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            help="For a new session: the sampler's seed (default: drawn at random and stored)."
        ),
    ] = None,
    label_rule: Annotated[
        LabelRule | None,
        typer.Option(
            help="For a new session: how several answers for an item make its label: latest "
            "answer, or each annotator's latest answer as one vote (default latest)."
        ),
    ] = None,
    threshold: Annotated[
        float, typer.Option(help="Predictions are score >= threshold when --pool has none.")
    ] = 0.5,
    annotator: Annotated[
        str | None, typer.Option(help="Your name, recorded with every answer.")
    ] = None,
    batch_size: Annotated[
        int, typer.Option(min=1, help="Items asked for at a time (one stage).")
    ] = 10,
    budget: Annotated[
        int | None,
        typer.Option(min=1, help="Stop once the session has this many labels (all annotators)."),
    ] = None,
    width: Annotated[
        float | None,
        typer.Option(
            help="Stop once the --prob interval of the measure is narrower than this width."
        ),
    ] = None,
    prob: Annotated[float, typer.Option(help="Probability of the intervals, in (0, 1).")] = 0.95,
    data: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="A .csv/.parquet table with an id column and the fields to show for each item.",
        ),
    ] = None,
) -> None:
    """Label items at the terminal in a session file (created from --pool if it is new)."""
    from rich.console import Console

    from bayeval.session import Session

    _check_prob(prob)
    if width is not None and not 0 < width < float("inf"):
        raise _bad(f"must be a positive number; got {width}.", "--width")
    table = _read_data(data)
    source = None
    if session.exists():
        source = None if pool is None else load_source(pool, threshold)
        sess = _open(session, read_only=False)
        try:
            _check_agrees(sess, pool, source, measure, sampler, seed, label_rule)
        except BaseException:
            sess.close()
            raise
        created = False
    else:
        if pool is None:
            raise _bad(
                f"{session} does not exist: a new session needs a pool ('febrl' or a .csv or "
                ".parquet file).",
                "--pool",
            )
        name = "ais" if sampler is None else sampler
        sampler_class(name)  # names --sampler when it is unknown
        source = load_source(pool, threshold)
        try:
            sess = Session.create(
                session,
                source.pool,
                by_name((measure or MeasureName.f1).value),
                name,
                rng=seed,
                label_rule=(label_rule or LabelRule.latest).value,
            )
        except ValueError as err:
            raise _error(err) from None
        created = True
    extra = None
    if source is not None:  # the pool file's other columns (not those of the pool itself)
        extra = source.items.drop(columns=list(_POOL_COLUMNS), errors="ignore")
        extra = extra if len(extra.columns) else None
    try:
        loop = _Labeller(sess, Console(highlight=False), table, extra, annotator, batch_size,
                         budget, width, prob)  # fmt: skip
    except BaseException:
        sess.close()
        raise
    code = 0
    try:
        loop.intro(created)
        loop.run()
    except KeyboardInterrupt:
        loop.say(f"\ninterrupted: every answer given is saved in {sess.path}.")
        code = 130
    finally:
        try:
            loop.summary()
        finally:
            sess.close()
    if code:
        raise typer.Exit(code=code)


class _Labeller:
    """The terminal labelling loop of ``bayeval label`` over an open session."""

    def __init__(self, session, console, table, extra, annotator, batch_size, budget, width, prob):
        self.session, self.console, self.table, self.extra = session, console, table, extra
        self.annotator, self.batch_size, self.budget = annotator, batch_size, budget
        self.width, self.prob = width, prob
        self.repeated_draws = session.meta["sampler"] == "stochastic_ais"
        self.given: dict[Any, int] = {}  # this annotator's latest answer per item
        self.history: list[Any] = []  # items this annotator answered, oldest first (undo)
        answers = session.answers()
        mine = answers[
            answers["annotator"].isna() if annotator is None else answers["annotator"] == annotator
        ]
        for item, value in zip(mine["id"].tolist(), mine["label"].tolist(), strict=True):
            self.given[item] = int(value)
        if not self.repeated_draws:
            self.history = list(dict.fromkeys(reversed(mine["id"].tolist())))[::-1]
        self.answered = self.rejudged = 0
        self._estimate_key: Any = None
        self._estimate_text = ""

    def say(self, text: str, style: str | None = None) -> None:
        self.console.print(text, style=style, markup=False, soft_wrap=True)

    # -- the loop --------------------------------------------------------------------------------
    def intro(self, created: bool) -> None:
        sess = self.session
        meta = sess.meta
        what = "created" if created else "continuing"
        self.say(
            f"{what} session {sess.path}: {meta['sampler']} for "
            f"{_measure_name(sess.sampler.measure)}, seed {meta['seed']}, label rule "
            f"{meta.get('label_rule', 'latest')}; {sess.sampler.pool.size:,} items, "
            f"{sess.labels_count():,} labels, {len(sess.pending):,} pending."
        )
        self.say(_KEYS_HELP, style="dim")

    def run(self) -> None:
        """Ask for answers until a stop rule, the end of the pool, ``q`` or end of input."""
        queue: deque = deque()
        current = None  # (item, is a re-judgement)
        while True:
            if current is None:
                reason = self.session.stop_reason(width=self.width, budget=self.budget,
                                                  prob=self.prob)  # fmt: skip
                if reason:
                    self.say(f"stopping: {reason}", style="bold")
                    return
                item = self._next(queue)
                if item is None:
                    return
                current = (item, False)
            item, again = current
            self._show(item, again)
            answer = self._ask_key()
            if answer == "quit":
                self.say(f"quit: every answer given is saved in {self.session.path}.")
                return
            if answer == "skip":
                if again:
                    self.history.append(item)
                    self.say("skipped: your earlier answer stands.")
                else:
                    self.say(
                        "skipped: it stays pending and comes back after the other pending items."
                    )
                current = None
                continue
            if answer == "undo":
                current = self._undo(item, again, queue) or current
                continue
            self._record(item, answer, again)
            current = None

    def _next(self, queue: deque):
        """Return the next item: pending questions first, then a new batch; None if none left."""
        sess = self.session
        if not queue:
            queue.extend(sess.pending.tolist())
        if not queue:
            k = self.batch_size
            if self.budget is not None:
                k = max(1, min(k, self.budget - sess.labels_count()))
            for n in dict.fromkeys((k, 1)):  # near the end of the pool: one at a time
                try:
                    queue.extend(sess.ask(n).tolist())
                    break
                except ValueError as err:  # fewer items left than asked for (none is asked)
                    reason = err
            else:
                self.say(f"stopping: the sampler can draw no more items ({reason})", style="bold")
                return None
        return queue.popleft()

    def _ask_key(self):
        while True:
            try:
                text = _read_line(_PROMPT)
            except EOFError:
                self.say("")
                self.say("end of input.")
                return "quit"
            answer = _KEYS.get(text.strip().lower())
            if answer == "help":
                self.say(_KEYS_HELP)
            elif answer is None:
                self.say(f"{text.strip()!r}: answer y, n, s, u or q (? for help).")
            else:
                return answer

    def _undo(self, item, again: bool, queue: deque):
        """Go back to the previous answered item; return what to show next (None: stay)."""
        if self.repeated_draws:
            self.say(
                "undo is not available with stochastic_ais: every answer labels one draw (an "
                "answer cannot be re-judged)."
            )
            return None
        if not self.history:
            self.say("nothing to undo: you have not answered any item of this session yet.")
            return None
        if not again:
            queue.appendleft(item)  # answered after the re-judgement
        previous = self.history.pop()
        return (previous, True)

    def _record(self, item, answer: int, again: bool) -> None:
        sess = self.session
        recorded = sess.record([item], [answer], annotator=self.annotator)
        self.given[item] = answer
        if not self.repeated_draws:
            if item in self.history:
                self.history.remove(item)
            self.history.append(item)
        self.answered += recorded
        word = "positive" if answer else "negative"
        if again:
            if recorded:
                self.rejudged += 1
                self.say(f"re-judged id {item!r}: {word} (recorded; earlier answers are kept).")
            else:
                self.say(f"id {item!r}: {word}, as you answered before (nothing to record).")
        self.say(self._progress())

    # -- display ---------------------------------------------------------------------------------
    def _show(self, item, again: bool) -> None:
        from rich.table import Table
        from rich.text import Text

        if again:
            earlier = {1: "positive", 0: "negative"}.get(self.given.get(item), "none")
            title = f"re-judging id {item!r} (your earlier answer: {earlier})"
        else:
            number = self.session.labels_count() + 1
            of = "" if self.budget is None else f" of {self.budget:,}"
            title = f"label {number:,}{of} (id {item!r})"
        self.say(title, style="bold")
        grid = Table(show_header=False)
        fields, note = self._fields(item)
        for name, value in fields:
            grid.add_row(Text(str(name)), Text(str(value)))
        self.console.print(grid)
        if note:
            self.say(note, style="yellow")

    def _fields(self, item) -> tuple[list[tuple[str, Any]], str | None]:
        """Return the fields shown for ``item``, and a note when --data has no row for it."""
        pool = self.session.sampler.pool
        position = int(pool.positions(item))
        note = None
        if self.table is not None:
            key = str(item)
            if key in self.table.index:
                return list(self.table.loc[key].items()), None
            note = f"--data has no row with id {key!r}: showing the pool's fields."
        fields: list[tuple[str, Any]] = [("id", item)]
        if self.extra is not None:  # the other columns of the --pool file, in pool order
            fields += list(self.extra.iloc[position].items())
        scores, predictions = pool.scores[position], pool.predictions[position]
        if pool.n_systems == 1:
            fields += [("score", scores), ("prediction", predictions)]
        else:
            for j, system in enumerate(pool.systems):
                fields += [(f"score {system}", scores[j]), (f"prediction {system}", predictions[j])]
        return fields, note

    def _progress(self) -> str:
        sess = self.session
        count = sess.labels_count()
        if self.budget is None:
            parts = [f"{count:,} labels"]
        else:
            filled = min(_BAR, round(_BAR * count / self.budget))
            bar = "#" * filled + "-" * (_BAR - filled)
            parts = [f"[{bar}] {count:,}/{self.budget:,} labels"]
        pending = len(sess.pending)
        if pending:
            parts.append(f"{pending:,} pending")
        parts.append(self._estimate())
        return " | ".join(parts)

    def _estimate(self) -> str:
        sampler = self.session.sampler
        key = (sampler.stage, self.rejudged)
        if key != self._estimate_key:
            self._estimate_key = key
            self._estimate_text = _estimate_text(self.session, self.prob)
        return self._estimate_text

    def summary(self) -> None:
        sess = self.session
        rejudged = f" (re-judgements: {self.rejudged:,})" if self.rejudged else ""
        self.say(
            f"{self.answered:,} answers recorded in this run{rejudged}; the session has "
            f"{sess.labels_count():,} labels and {len(sess.pending):,} pending. "
            f"Continue with: bayeval label {sess.path}"
        )
        text = _estimate_text(sess, self.prob)
        self.say(f"estimate: {text}")


def _read_line(prompt: str) -> str:
    """Read one answer from standard input (EOFError at its end, KeyboardInterrupt on Ctrl-C)."""
    return input(prompt)


def _estimate_rows(session, prob: float) -> list[dict] | None:
    """Return each output's estimate and interval, or None before a complete stage."""
    if session.sampler.stage == 0 or session.labels_count() == 0:
        return None
    try:
        est = session.estimate()
    except ValueError:
        return None
    return [
        {
            "output": output,
            "estimate": _number(value),
            "lower": _number(low),
            "upper": _number(high),
            "width": _number(high - low),
        }
        for output, value, low, high in zip(est.outputs, *est.per_output(prob), strict=True)
    ]


def _estimate_text(session, prob: float) -> str:
    rows = _estimate_rows(session, prob)
    if rows is None:
        return "no complete stage yet"

    def fmt(value):
        return "n/a" if value is None else f"{value:.4f}"

    return "; ".join(
        f"{r['output']} {fmt(r['estimate'])} [{fmt(r['lower'])}, {fmt(r['upper'])}] "
        f"width {fmt(r['width'])} ({prob:.0%})"
        for r in rows
    )


def _number(value) -> float | None:
    value = float(value)
    return value if value == value else None  # NaN -> null


# ------------------------------------------------------------------------------------- status


def status(
    session: Annotated[Path, typer.Argument(dir_okay=False, help="The session file.")],
    prob: Annotated[float, typer.Option(help="Probability of the interval, in (0, 1).")] = 0.95,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show a session's settings, counts, annotators and estimate.

    The session is opened read-only: this works while another process labels it.
    """
    _check_prob(prob)
    sess = _open(session, read_only=True)
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
    annotators = [
        {"name": None if name is None or name != name else str(name), "answers": int(n)}
        for name, n in counts.items()
    ]
    meta = sess.meta
    return {
        "path": str(sess.path),
        "sampler": meta["sampler"],
        "measure": _measure_name(sess.sampler.measure),
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
        "estimate": _estimate_rows(sess, prob),
    }


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
        f"{a['name'] if a['name'] is not None else '(unnamed)'} ({a['answers']:,})"
        for a in out["annotators"]
    )
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
        say(
            f"  {r['output']}: {fmt(r['estimate'])} [{fmt(r['lower'])}, {fmt(r['upper'])}] "
            f"width {fmt(r['width'])}"
        )


# ------------------------------------------------------------------------ export and import


def export(
    session: Annotated[Path, typer.Argument(dir_okay=False, help="The session file.")],
    out: Annotated[
        Path, typer.Argument(dir_okay=False, help="The file to write the pending questions to.")
    ],
    file_format: Annotated[
        ExchangeFormat | None,
        typer.Option(
            "--format",
            help="csv, jsonl or label-studio (Label Studio JSON tasks) (default: from OUT's "
            "suffix: .csv, .jsonl, .json).",
        ),
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="A .csv/.parquet table with an id column and a row for every pending item: "
            "its other columns are written with each question.",
        ),
    ] = None,
    label_studio_config: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="Also write a Label Studio labelling config (XML) that shows the item's id "
            "and the --data columns.",
        ),
    ] = None,
    choices: Annotated[
        str | None,
        typer.Option(
            help="The choices of the Label Studio config, as NAME=LABEL pairs separated by "
            "commas (default: Positive=1,Negative=0).",
        ),
    ] = None,
) -> None:
    """Write a session's pending questions to a file, to be labelled elsewhere.

    The session is opened read-only (no lock): exporting works while another process labels.
    Questions are asked by ``bayeval label``; answers come back with ``bayeval import``.
    """
    from bayeval.session.exchange import label_studio_config as make_config

    mapping = _choices(choices)
    table = _read_data(data)
    fields = [] if table is None else [str(c) for c in table.columns if str(c) != "id"]
    sess = _open(session, read_only=True)
    try:
        frame = None if table is None else _export_frame(table, sess.sampler.pool)
        try:
            count = sess.export_pending(
                out, format=None if file_format is None else file_format.value, data=frame
            )
        except (OSError, ValueError) as err:
            raise _error(err) from None
    finally:
        sess.close()
    typer.echo(f"{count:,} pending question{'s' if count != 1 else ''} written to {out}")
    if count == 0:
        typer.echo(f"(nothing is pending: bayeval label {session} asks for questions)")
    if label_studio_config is not None:
        try:
            label_studio_config.write_text(make_config(mapping, fields=fields) + "\n")
        except (OSError, ValueError) as err:
            raise _error(f"--label-studio-config {label_studio_config}: {err}") from None
        typer.echo(f"Label Studio config written to {label_studio_config}")


def _choices(text: str | None) -> dict[str, int] | None:
    """Parse ``--choices`` (``NAME=LABEL,...``), or raise ``BadParameter`` naming it."""
    if text is None:
        return None
    out = {}
    for part in text.split(","):
        name, sep, value = part.rpartition("=")
        if not sep or not name.strip() or value.strip() not in ("0", "1"):
            raise _bad(
                f"expected NAME=LABEL pairs with labels 0 or 1, separated by commas (e.g. "
                f"Match=1,No match=0); got {part!r}.",
                "--choices",
            )
        out[name.strip()] = int(value)
    return out


def _export_frame(table, pool):
    """Return the ``--data`` table indexed by pool id (as the pool's ids), without ``id``."""
    keys = table["id"].tolist()
    if pool.has_default_ids or pool.ids.dtype.kind in "iu":
        try:
            keys = [_whole(k) for k in keys]
        except ValueError as err:
            raise _bad(f"column 'id' must hold the pool's integer ids; {err}", "--data") from None
    else:
        keys = [str(k) for k in keys]
    return table.drop(columns="id").set_axis(keys, axis=0)


def _whole(value) -> int:
    number = float(value)
    if number != round(number):
        raise ValueError(f"got {value!r}.")
    return int(number)


def import_(
    session: Annotated[Path, typer.Argument(dir_okay=False, help="The session file.")],
    file: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="The file of answers to import.")
    ],
    file_format: Annotated[
        ExchangeFormat | None,
        typer.Option(
            "--format",
            help="csv, jsonl or label-studio (a Label Studio JSON export) (default: from "
            "FILE's suffix: .csv, .jsonl, .json).",
        ),
    ] = None,
    annotator: Annotated[
        str | None,
        typer.Option(
            help="The annotator of answers that name none (an empty annotator column, a Label "
            "Studio annotation without a user)."
        ),
    ] = None,
    choices: Annotated[
        str | None,
        typer.Option(
            help="Label Studio: the label of each choice, as NAME=LABEL pairs separated by "
            "commas (default: Positive=1,Negative=0).",
        ),
    ] = None,
) -> None:
    """Record the answers in a file (an exported file, labelled) in a session.

    Every answer is checked before any is recorded. An answer equal to the same annotator's
    latest answer for the item is skipped, so importing a file twice records nothing the
    second time. The session is opened for writing (it fails while ``bayeval label`` has it).
    """
    mapping = _choices(choices)
    sess = _open(session, read_only=False)
    try:
        try:
            report = sess.import_answers(
                file,
                format=None if file_format is None else file_format.value,
                annotator=annotator,
                choices=mapping,
            )
        except (OSError, ValueError) as err:
            raise _error(err) from None
        labels, pending = sess.labels_count(), len(sess.pending)
    finally:
        sess.close()
    typer.echo(
        f"{report.recorded:,} answers recorded, {report.skipped:,} skipped (already recorded), "
        f"of {report.rows:,} answers in {file}; the session has {labels:,} labels and "
        f"{pending:,} pending."
    )
