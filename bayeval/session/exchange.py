"""Exchange a session's questions and answers with other labelling tools.

:func:`export_pending` writes the pending questions of a :class:`bayeval.Session` to a file,
and :func:`import_answers` records the answers read back from one. Three formats:

``"csv"`` and ``"jsonl"`` (suffixes ``.csv``, ``.jsonl``)
    One row (one JSON object a line) per question, in the order asked: ``id``, ``label``
    (empty: to fill in), ``annotator`` (empty), then the columns of ``data``. Import reads
    ``id``, ``label`` (0, 1, true or false; empty: not answered yet) and, if present,
    ``annotator``; every other column is ignored.
``"label-studio"`` (suffix ``.json``)
    Export writes Label Studio tasks: ``{"data": {"bayeval_id", <data columns>}, "meta":
    {"bayeval_id", "bayeval_session"}}`` (the session's key); import reads the
    project's JSON export (the tasks with their ``annotations``). Each annotation that is
    neither cancelled nor empty is an answer: its choice is mapped to a label by ``choices``
    and its annotator is the ``completed_by`` user's email (else ``"label-studio:<user id>"``).
    :func:`label_studio_config` gives a labelling configuration for such a project.

The export is blind by default: the people labelling see the item's id and ``data``, never
the system's score or prediction, nor where the design drew the item (its stage, stratum and
selection probability), which could sway their answer. ``blind=False`` adds them: ``stage``,
``stratum``, ``probability`` (empty where not defined), ``score`` and ``prediction``
(``score[<system>]`` and ``prediction[<system>]`` for several systems) after ``annotator``;
for Label Studio the scores and predictions in ``data`` and the rest in ``meta``.

Answers are checked, for the whole file, before any is recorded: an unknown id, an item never
asked or a label outside the label space raises ``ValueError`` naming the file, the row (or
task) and the value, and nothing is recorded. Recording goes through
:meth:`bayeval.Session.record`, so an answer equal to the same annotator's latest answer for
the item is skipped: importing a file twice changes nothing.

Examples
--------
>>> import pathlib, tempfile
>>> import numpy as np
>>> import pandas as pd
>>> import bayeval as be
>>> rng = np.random.default_rng(0)
>>> truth = rng.random(500) < 0.1
>>> scores = np.where(truth, rng.beta(5, 2, truth.size), rng.beta(1, 8, truth.size))
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> sess = be.Session.create(folder / "labels.db", be.Pool(scores), be.measures.FScore(),
...                          "static_is", rng=1)
>>> asked = sess.ask(5)
>>> sess.export_pending(folder / "questions.csv")
5
>>> sheet = pd.read_csv(folder / "questions.csv")        # labelled elsewhere, e.g. by hand
>>> list(sheet.columns)                                  # blind: nothing of the system
['id', 'label', 'annotator']
>>> sheet["label"] = truth[sheet["id"]].astype(int)
>>> sheet.to_csv(folder / "answers.csv", index=False)
>>> sess.import_answers(folder / "answers.csv", annotator="ann")
ImportReport(recorded=5, skipped=0, rows=5)
>>> sess.import_answers(folder / "answers.csv", annotator="ann")   # again: nothing changes
ImportReport(recorded=0, skipped=5, rows=5)
>>> sess.labels_count(), len(sess.pending)
(5, 0)
>>> sess.close()
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bayeval._constraints import OneOf, Optional, Text, validate
from bayeval._validation import class_index
from bayeval.session.label_studio import (
    check_choices,
    label_studio_config,
    read_export,
    tasks,
)

__all__ = [
    "FORMATS",
    "ImportReport",
    "export_pending",
    "import_answers",
    "label_studio_config",
]

FORMATS = ("csv", "jsonl", "label-studio")
_SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".json": "label-studio"}
_FIELDS = ("id", "label", "annotator", "stage", "stratum", "probability")
_TRUE = ("1", "true", "1.0")
_FALSE = ("0", "false", "0.0")
_LABELS_ALLOWED = "0, 1, true or false (empty: not answered yet)"


@dataclass(frozen=True)
class ImportReport:
    """What :func:`import_answers` did.

    Attributes
    ----------
    recorded : int
        Answers added to the session.
    skipped : int
        Answers read but not added: the same as the annotator's latest answer for the item
        (already imported, or repeated in the file).
    rows : int
        Answers read (rows, or Label Studio annotations, that carry a label).
    """

    recorded: int
    skipped: int
    rows: int


@dataclass(frozen=True)
class _Answer:
    where: str  # "line 3", "task 2 (Label Studio id 17), annotation 1": for messages
    id: Any  # as given in the file
    label: int
    annotator: str | None


# -- export --------------------------------------------------------------------------------------
@validate(format=Optional(OneOf(FORMATS)))
def export_pending(
    session: Any, path: Any, format: str | None = None, data: Any = None, blind: bool = True
) -> int:
    """Write the pending questions of ``session`` to a file, in the order they were asked.

    Parameters
    ----------
    session : bayeval.Session
        The session whose pending questions are written.
    path : str or pathlib.Path
        The file to write (replaced if it exists).
    format : {"csv", "jsonl", "label-studio"}, optional
        Default from the suffix of ``path``: ``.csv``, ``.jsonl``, ``.json`` (Label Studio
        tasks).
    data : pandas.DataFrame, optional
        More columns for each question (e.g. the text to judge), indexed by pool id; every
        pending id must be in its index.
    blind : bool, default True
        Leave out the system's scores and predictions and the design's stage, stratum and
        selection probability (see the module's notes).

    Returns
    -------
    int
        The number of questions written.

    Raises
    ------
    ValueError
        For an unknown ``format``, or a ``data`` that is not a frame indexed by pool id with a
        row for every pending id and no column named like the exported ones.

    Notes
    -----
    The fields of each format, blind and not, are in the module's notes. Integer ids are
    written as numbers, string ids as strings.
    """
    path = Path(path)
    fmt = _format(path, format)
    questions = _pending_questions(session)
    pool = session.sampler.pool
    positions = np.array([q[0] for q in questions], dtype=np.int64)
    ids = _to_python(session.sampler.pool.ids_at(positions))
    fields = _FIELDS[:3] if blind else _FIELDS
    pool_columns = {} if blind else _pool_columns(pool, positions)
    extra = _data_columns(data, ids, (*fields, "bayeval_id", *pool_columns))
    rows = []
    for k, (_, stage, stratum, probability) in enumerate(questions):
        design = {"stage": stage, "stratum": stratum, "probability": probability}
        row = {"id": ids[k], "label": None, "annotator": None}
        row.update({} if blind else design)
        row.update((name, values[k]) for name, values in pool_columns.items())
        row.update((name, values[k]) for name, values in extra.items())
        rows.append(row)
    if fmt == "csv":
        _write_csv(path, rows, [*fields, *pool_columns, *extra])
    elif fmt == "jsonl":
        with path.open("w", encoding="utf-8", newline="\n") as handle:
            for row in rows:
                handle.write(_json(row) + "\n")
    else:
        written = tasks(rows, [*pool_columns, *extra], session_key(session))
        path.write_text(_json(written, indent=2) + "\n", encoding="utf-8")
    return len(rows)


def session_key(session: Any) -> str:
    """Return the key of ``session`` that its Label Studio tasks carry (``bayeval_session``).

    A digest of the session's pool checksum, creation time and seed: the same for every
    export of one session, different for another session, even of the same pool.
    """
    meta = session.meta
    text = f"{meta['pool_sha256']}|{meta['created']}|{meta['seed']}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _pending_questions(session: Any) -> list[tuple[int, int, int | None, float | None]]:
    """Return ``(position, stage, stratum, probability)`` of each pending question, as asked.

    A pending item's question is its latest question row (for ``stochastic_ais``, where an item
    drawn ``k`` times and not yet told has ``k`` pending draws, its latest ``k`` rows: draws are
    told oldest first).
    """
    sampler = session.sampler
    pending = np.atleast_1d(sampler.pool.positions(session.pending)).tolist()
    waiting: dict[int, int] = {}
    for p in pending:
        waiting[p] = waiting.get(p, 0) + 1
    rows = session.question_log()[::-1]
    chosen = []
    for item, stage, stratum, probability, event, rank in rows:  # latest first
        if waiting.get(item, 0) > 0:
            waiting[item] -= 1
            chosen.append((event, rank, item, stage, stratum, probability))
    chosen.reverse()
    return [
        (item, stage, stratum, probability) for _, _, item, stage, stratum, probability in chosen
    ]


def _pool_columns(pool: Any, positions: np.ndarray) -> dict[str, list]:
    scores = np.asarray(pool.scores)[positions]
    predictions = np.asarray(pool.predictions)[positions]
    if pool.classes is not None:  # the predicted class by name
        predictions = np.asarray(pool.classes, dtype=object)[predictions]
    if pool.n_systems == 1:
        return {
            "score": scores.reshape(-1).tolist(),
            "prediction": predictions.reshape(-1).tolist(),
        }
    columns = {f"score[{name}]": scores[:, j].tolist() for j, name in enumerate(pool.systems)}
    columns.update(
        (f"prediction[{name}]", predictions[:, j].tolist()) for j, name in enumerate(pool.systems)
    )
    return columns


def _data_columns(data: Any, ids: list, taken: Sequence[str]) -> dict[str, list]:
    """Return the columns of ``data`` for ``ids`` (lists of plain Python values)."""
    if data is None:
        return {}
    import pandas as pd

    if not isinstance(data, pd.DataFrame):
        raise ValueError(
            f"`data` must be a pandas DataFrame indexed by pool id; got {type(data).__name__}."
        )
    clash = [str(c) for c in data.columns if str(c) in taken]
    if clash:
        raise ValueError(
            f"`data` must not have columns named like the exported fields; {clash} are "
            f"exported already (fields: {list(taken)})."
        )
    if not data.index.is_unique:
        raise ValueError("`data` must be indexed by pool id without repeats; its index repeats.")
    missing = [i for i in dict.fromkeys(ids) if i not in data.index]
    if missing:
        raise ValueError(
            f"`data` must have a row for every pending id; {len(missing)} missing, e.g. "
            f"{missing[:5]} (its index starts {data.index[:5].tolist()})."
        )
    rows = data.loc[ids] if ids else data.iloc[:0]
    return {str(c): [_plain(v) for v in rows[c].tolist()] for c in data.columns}


def _write_csv(path: Path, rows: list[dict], columns: list[str]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if row[c] is None else row[c] for c in columns])


# -- import --------------------------------------------------------------------------------------
@validate(format=Optional(OneOf(FORMATS)), annotator=Optional(Text()))
def import_answers(
    session: Any,
    path: Any,
    format: str | None = None,
    annotator: str | None = None,
    choices: Mapping[str, int] | None = None,
) -> ImportReport:
    """Record the answers in a file (csv, jsonl or a Label Studio JSON export).

    Every answer is checked before any is recorded; then the answers are recorded with
    :meth:`bayeval.Session.record`, one call per annotator (in the order they first appear in
    the file), each with that annotator's answers in file order.

    Parameters
    ----------
    session : bayeval.Session
        The session that records the answers; it must be open for writing.
    path : str or pathlib.Path
        The file of answers to read.
    format : {"csv", "jsonl", "label-studio"}, optional
        Default from the suffix of ``path``: ``.csv``, ``.jsonl``, ``.json`` (Label Studio).
    annotator : str, optional
        The annotator of answers whose row has no ``annotator`` (csv, jsonl) or whose Label
        Studio annotation has no ``completed_by``.
    choices : mapping of str to {0, 1}, optional
        Label Studio only: the label of each choice; default ``{"Positive": 1, "Negative": 0}``
        (a multiclass pool: each class by its name, mapped to its index).

    Returns
    -------
    ImportReport
        ``rows`` answers read, ``recorded`` added, ``skipped`` equal to the annotator's latest
        answer for the item (importing a file twice records nothing the second time).

    Raises
    ------
    ValueError
        For an unknown ``format``, a file that cannot be read as that format, an id not in the
        pool or never asked, a label outside {0, 1} (csv, jsonl: 0, 1, true, false; Label
        Studio: a choice not in ``choices``), or two different answers of one annotator for one
        item. The message names the file, the row (or task and annotation) and the value;
        nothing is recorded then.

    Notes
    -----
    csv and jsonl: rows whose ``label`` is empty or missing are not answered yet and skipped
    (not counted in ``rows``); other columns (``stage``, ``score``, ...) are ignored. Ids are
    read as the pool's ids (integers for integer pools, strings otherwise). Label Studio:
    cancelled annotations and annotations without a choice are skipped; several annotations
    of a task are several answers (re-judgements when the item is labelled already); the
    annotator is the ``completed_by`` user's email, or ``"label-studio:<user id>"``.

    For ``stochastic_ais`` every answer is the label of one pending draw, so an item can get
    at most as many answers as it has draws pending; a file imported already is refused then
    (it would label draws it was not written for) rather than skipped.
    """
    path = Path(path)
    fmt = _format(path, format)
    if choices is not None and fmt != "label-studio":
        raise ValueError(f"`choices` applies to Label Studio files only; {path} is {fmt}.")
    session.check_writable()
    if not path.is_file():
        raise ValueError(f"`path` must be an existing file; {path} does not exist.")
    classes = session.sampler.pool.classes
    if fmt == "csv":
        answers = _read_csv(path, annotator, classes)
    elif fmt == "jsonl":
        answers = _read_jsonl(path, annotator, classes)
    else:
        choices = check_choices(choices, classes)
        answers = [_Answer(*a) for a in read_export(path, annotator, choices, session_key(session))]
    groups, rows = _checked(session, path, answers)
    recorded = sum(session.record(ids, labels, who) for who, (ids, labels) in groups.items())
    return ImportReport(recorded=recorded, skipped=rows - recorded, rows=rows)


def _read_csv(path: Path, annotator: str | None, classes) -> list[_Answer]:
    answers = []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        columns = reader.fieldnames or []
        missing = [c for c in ("id", "label") if c not in columns]
        if missing:
            raise ValueError(
                f"{path}: a csv of answers needs the columns 'id' and 'label'; missing "
                f"{missing} (its columns: {columns})."
            )
        start = 2
        for row in reader:
            where = f"line {start}"
            start = reader.line_num + 1
            label = _label(row["label"], path, where, classes)
            if label is None:
                continue
            who = (row.get("annotator") or "").strip()
            answers.append(_Answer(where, row["id"], label, who or annotator))
    return answers


def _read_jsonl(path: Path, annotator: str | None, classes) -> list[_Answer]:
    answers = []
    with path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"line {number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}, {where}: not valid JSON ({err.msg}).") from None
            if not isinstance(row, dict):
                raise ValueError(
                    f"{path}, {where}: each line must be a JSON object with 'id' and 'label'; "
                    f"got {line.strip()[:60]!r}."
                )
            label = _label(row.get("label"), path, where, classes)
            if label is None:
                continue
            if "id" not in row:
                raise ValueError(f"{path}, {where}: an answer needs an 'id'; got {row!r}.")
            who = row.get("annotator")
            who = annotator if who is None or who == "" else str(who)
            answers.append(_Answer(where, row["id"], label, who))
    return answers


def _checked(session: Any, path: Path, answers: list[_Answer]):
    """Check every answer, in file order; return ``{annotator: (ids, labels)}``, answers read."""
    sampler = session.sampler
    pool = sampler.pool
    int_ids = pool.has_default_ids or pool.ids.dtype.kind in "iu"
    stochastic = session.meta["sampler"] == "stochastic_ais"
    waiting: dict[int, int] = {}  # pending questions (draws, for stochastic_ais) per position
    for p in np.atleast_1d(pool.positions(session.pending)).tolist():
        waiting[p] = waiting.get(p, 0) + 1
    seen: dict[tuple[int, str | None], _Answer] = {}
    groups: dict[str | None, tuple[list, list]] = {}
    for answer in answers:
        p = _position(pool, answer, int_ids, path)
        if stochastic:
            if waiting.get(p, 0) == 0:
                raise ValueError(
                    f"{path}, {answer.where}: id {answer.id!r} has no draw waiting for an "
                    "answer (stochastic_ais records every answer as the label of one pending "
                    "draw; was this file imported already?)."
                )
            waiting[p] -= 1
        else:
            if p not in waiting and not sampler.is_labelled(p)[0]:
                raise ValueError(
                    f"{path}, {answer.where}: id {answer.id!r} was never asked (it is neither "
                    "pending nor labelled); only asked items can be answered."
                )
            earlier = seen.setdefault((p, answer.annotator), answer)
            if earlier is not answer:
                if earlier.label != answer.label:
                    raise ValueError(
                        f"{path}, {answer.where}: id {answer.id!r} has label {answer.label} "
                        f"here and {earlier.label} at {earlier.where}, both by annotator "
                        f"{answer.annotator!r}; give one answer per item and annotator."
                    )
                continue  # the same answer repeated in the file: skipped
        ids, labels = groups.setdefault(answer.annotator, ([], []))
        ids.append(p)
        labels.append(answer.label)
    return {
        who: (pool.ids_at(np.array(ids, dtype=np.int64)), np.array(labels, dtype=np.int8))
        for who, (ids, labels) in groups.items()
    }, len(answers)


def _position(pool: Any, answer: _Answer, int_ids: bool, path: Path) -> int:
    """Return the pool position of an answer's id, or raise naming the row."""
    value = answer.id
    if value is None or value == "" or isinstance(value, bool | list | dict):
        key = None
    else:
        key = _as_int(value) if int_ids else str(value)
    if key is not None:
        try:
            return int(pool.positions([key])[0])
        except ValueError:
            pass
    kind = "integers" if int_ids else "strings"
    raise ValueError(
        f"{path}, {answer.where}: id {value!r} is not in the pool (its ids are {kind}); only "
        "the ids of asked items can be answered."
    )


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value == round(value) else None
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                return None
            return int(number) if math.isfinite(number) and number == round(number) else None
    return None


def _label(value: Any, path: Path, where: str, classes=None) -> int | None:
    """Return a 0/1 label, None for 'not answered yet', or raise naming the row and value.

    With ``classes`` (a multiclass pool) a label is a class name or its index; ``true`` and
    ``false`` name no class.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if classes is not None:
        return _class_label(value, path, where, classes)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "":
            return None
        if text in _TRUE:
            return 1
        if text in _FALSE:
            return 0
    raise ValueError(
        f"{path}, {where}: label {value!r} is not a label; allowed: {_LABELS_ALLOWED}."
    )


def _class_label(value: Any, path: Path, where: str, classes: tuple[str, ...]) -> int | None:
    if isinstance(value, str) and not value.strip():
        return None
    index = class_index(value, classes)
    if index is not None:
        return index
    raise ValueError(
        f"{path}, {where}: label {value!r} is not a class; allowed: the names {list(classes)} "
        f"or their indices 0 .. {len(classes) - 1} (empty: not answered yet)."
    )


# -- helpers -------------------------------------------------------------------------------------
def _format(path: Path, format: str | None) -> str:
    if format is not None:  # checked (export_pending, import_answers)
        return format
    fmt = _SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(
            f"`format` must be one of {', '.join(repr(f) for f in FORMATS)}; it is not given and "
            f"the suffix of {path} ({path.suffix!r}) does not tell (.csv, .jsonl, .json)."
        )
    return fmt


def _to_python(values: np.ndarray) -> list:
    """Return ids as plain Python ints or strings (JSON numbers and strings)."""
    return [_plain(v) for v in np.asarray(values).tolist()]


def _plain(value: Any) -> Any:
    """Return a cell as a plain Python value; missing values (NaN, NA, NaT) as None."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    import pandas as pd

    try:
        missing = pd.isna(value)
    except (TypeError, ValueError):  # pragma: no cover - exotic cells
        return value
    return None if missing is True else value


def _json(value: Any, indent: int | None = None) -> str:
    return json.dumps(
        value, ensure_ascii=False, allow_nan=False, default=_json_default, indent=indent
    )


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return str(value)  # timestamps and the like in `data`
