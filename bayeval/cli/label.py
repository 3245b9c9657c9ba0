"""``bayeval label``, ``export`` and ``import``: labelling sessions kept in one file.

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

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from bayeval.cli._labelling import (
    EXIT_STOPPED,
    KEYS_HELP,
    POOL_COLUMNS,
    Labeller,
    blinded,
)
from bayeval.cli._sessions import check_second_opinions, open_or_create, open_session
from bayeval.cli._shared import (
    CLASSES_HELP,
    MeasureName,
    UnblindOption,
    bad,
    classes_option,
    error,
)
from bayeval.session import LABEL_RULES
from bayeval.session.exchange import FORMATS

__all__ = ["check_prob", "export", "import_", "label"]

LabelRule = StrEnum("LabelRule", [(name, name) for name in LABEL_RULES])
ExchangeFormat = StrEnum("ExchangeFormat", [(name.replace("-", "_"), name) for name in FORMATS])

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
        "column); without --data, with its id and the other columns of the --pool file (when "
        "given). Blind by default: the system's score and prediction (columns score, "
        "prediction) are not shown unless --unblind. " + KEYS_HELP,
        "After each answer the progress is shown: labels so far (of --budget), and, once a "
        "stage is complete, the estimate and the width of its --prob confidence interval. The "
        "loop stops when --budget labels are given or the interval of the measure is narrower "
        f"than --width; stopped by hand (q, end of input) before either, it exits with status "
        f"{EXIT_STOPPED} (130 at Ctrl-C).",
    ]
)


def _check_curve(curve, epsilon, sampler, measure) -> None:
    """Raise ``BadParameter`` for ``--curve`` or ``--epsilon`` that cannot be used."""
    from bayeval.curves.asktell import METHODS

    if curve is None:
        if epsilon is not None:
            raise bad(f"is the spacing of --curve's ranks; got {epsilon} without --curve.",
                      "--epsilon")  # fmt: skip
        return
    if curve not in METHODS:
        raise bad(f"must be one of {', '.join(METHODS)}; got {curve!r}.", "--curve")
    if sampler is not None or measure is not None:
        raise bad("asks for the ranks of a curve: leave --sampler and --measure out.", "--curve")
    if epsilon is not None and not 0 < epsilon <= 1:
        raise bad(f"must be in (0, 1]; got {epsilon}.", "--epsilon")


def check_prob(prob: float) -> None:
    """Raise ``BadParameter`` naming ``--prob`` unless it is in (0, 1)."""
    if not 0.0 < prob < 1.0:
        raise bad(f"must be in the open interval (0, 1); got {prob}.", "--prob")


def _read_data(path: Path | None):
    """Read ``--data``: a CSV or Parquet table with an ``id`` column; rows keyed by ``str(id)``."""
    import pandas as pd

    if path is None:
        return None
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet", ".pq"):
        raise bad(f"expected a .csv or .parquet file; got {str(path)!r}.", "--data")
    if not path.is_file():
        raise bad(f"file {str(path)!r} does not exist.", "--data")
    try:
        df = pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path)
    except ImportError:
        raise bad(
            f"reading {str(path)!r} needs pyarrow, which is not installed: pip install "
            "'bayeval[parquet]'.",
            "--data",
        ) from None
    except (OSError, ValueError, pd.errors.ParserError) as err:
        raise bad(f"cannot read {str(path)!r}: {err}", "--data") from None
    if "id" not in df.columns:
        raise bad(
            f"{path}: a column 'id' is needed (the pool's item ids); its columns are "
            f"{list(map(str, df.columns))}.",
            "--data",
        )
    keys = df["id"].astype(str)
    repeated = keys[keys.duplicated()]
    if not repeated.empty:
        raise bad(f"{path}: id {repeated.iloc[0]!r} is in more than one row.", "--data")
    return df.set_axis(keys.to_numpy(), axis=0)


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
        typer.Option(
            help="For a new session: the measure the sampler is built for (default f1; "
            "macro_f1 with --classes)."
        ),
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
    judge_column: Annotated[
        str | None,
        typer.Option(
            help="A new session: a column of --pool with an automatic judge's 0/1 label or "
            "probability per item (never shown).",
        ),
    ] = None,
    classes: Annotated[str | None, typer.Option(help="With --pool: " + CLASSES_HELP)] = None,
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
    second_opinions: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Instead of new questions: ask --annotator about this many labelled items "
            "whose label the annotators' model (Dawid-Skene) trusts least, leaving out those "
            "they answered; --budget and --width do not apply. The label rule dawid-skene "
            "weighs every answer by how far its annotator is trusted.",
        ),
    ] = None,
    unblind: UnblindOption = False,
    curve: Annotated[
        str | None,
        typer.Option(
            help="A new session: label the items a precision-curve method asks for instead "
            "(logstrat, paula, adastrat or random; the pool ranked by score, highest first); "
            "the session's estimate is the curve once complete.",
        ),
    ] = None,
    epsilon: Annotated[
        float | None,
        typer.Option(help="With --curve: the method's spacing of queried ranks, in (0, 1]."),
    ] = None,
) -> None:
    """Label items at the terminal in a session file (created from --pool if it is new)."""
    from rich.console import Console

    check_prob(prob)
    _check_curve(curve, epsilon, sampler, measure)
    if width is not None and not 0 < width < float("inf"):
        raise bad(f"must be a positive number; got {width}.", "--width")
    if second_opinions is not None:
        check_second_opinions(session, annotator)
    table = _read_data(data)
    sess, source, created = open_or_create(
        session, pool, threshold, measure, sampler, seed, label_rule, judge=judge_column,
        classes=classes_option(classes), curve=None if curve is None else (curve, epsilon),
    )  # fmt: skip
    extra = None
    if source is not None:  # the pool file's other columns (not those of the pool itself)
        extra = source.items.drop(columns=list(POOL_COLUMNS), errors="ignore")
        extra = extra if len(extra.columns) else None
    try:
        if second_opinions is not None:
            check_second_opinions(session, annotator, sess)
        loop = Labeller(sess, Console(highlight=False), table, extra, annotator, batch_size,
                         budget, width, prob, second_opinions=second_opinions,
                         unblind=unblind)  # fmt: skip
    except BaseException:
        sess.close()
        raise
    code = 0
    try:
        loop.intro(created)
        loop.run()
        # q or the end of input before a stop rule the command was given
        stop_rule = budget is not None or width is not None or second_opinions is not None
        code = EXIT_STOPPED if loop.stopped and stop_rule else 0
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
            "its other columns are written with each question, except the system's score and "
            "prediction (columns score, prediction) unless --unblind.",
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
    unblind: UnblindOption = False,
) -> None:
    """Write a session's pending questions to a file, to be labelled elsewhere.

    The session is opened read-only (no lock): exporting works while another process labels.
    Questions are asked by ``bayeval label``; answers come back with ``bayeval import``.
    """
    from bayeval.session.exchange import label_studio_config as make_config

    mapping = _choices(choices)
    table = blinded(_read_data(data), unblind)  # a pool file as --data: its own fields only
    fields = [] if table is None else [str(c) for c in table.columns if str(c) != "id"]
    sess = open_session(session, read_only=True)
    try:
        frame = None if table is None else _export_frame(table, sess.sampler.pool)
        try:
            count = sess.export_pending(
                out, format=None if file_format is None else file_format.value, data=frame,
                blind=not unblind,
            )  # fmt: skip
        except (OSError, ValueError) as err:
            raise error(err) from None
    finally:
        sess.close()
    typer.echo(f"{count:,} pending question{'s' if count != 1 else ''} written to {out}")
    if count == 0:
        typer.echo(f"(nothing is pending: bayeval label {session} asks for questions)")
    if label_studio_config is not None:
        try:
            classes = sess.sampler.pool.classes
            config = make_config(mapping, fields=fields, classes=classes)
            label_studio_config.write_text(config + "\n")
        except (OSError, ValueError) as err:
            raise error(f"--label-studio-config {label_studio_config}: {err}") from None
        typer.echo(f"Label Studio config written to {label_studio_config}")


def _choices(text: str | None) -> dict[str, int] | None:
    """Parse ``--choices`` (``NAME=LABEL,...``), or raise ``BadParameter`` naming it."""
    if text is None:
        return None
    out = {}
    for part in text.split(","):
        name, sep, value = part.rpartition("=")
        if not sep or not name.strip() or not value.strip().isdigit():
            raise bad(
                f"expected NAME=LABEL pairs with labels 0 or 1 (a multiclass session: class "
                f"indices), separated by commas (e.g. Match=1,No match=0); got {part!r}.",
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
            raise bad(f"column 'id' must hold the pool's integer ids; {err}", "--data") from None
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
    sess = open_session(session, read_only=False)
    try:
        try:
            report = sess.import_answers(
                file,
                format=None if file_format is None else file_format.value,
                annotator=annotator,
                choices=mapping,
            )
        except (OSError, ValueError) as err:
            raise error(err) from None
        labels, pending = sess.labels_count(), len(sess.pending)
    finally:
        sess.close()
    typer.echo(
        f"{report.recorded:,} answers recorded, {report.skipped:,} skipped (already recorded), "
        f"of {report.rows:,} answers in {file}; the session has {labels:,} labels and "
        f"{pending:,} pending."
    )
