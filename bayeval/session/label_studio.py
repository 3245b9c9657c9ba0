"""Label Studio: the labelling configuration, the tasks written and the export read back.

:func:`bayeval.session.exchange.export_pending` and
:func:`~bayeval.session.exchange.import_answers` speak the ``"label-studio"`` format through
this module. A task carries the item's id as ``bayeval_id`` (in ``data`` and ``meta``) and
its extra columns in ``data``; unblinded, also its scores and predictions in ``data`` and its
``stage``, ``stratum`` and ``probability`` in ``meta``. An answer is an annotation that is
neither cancelled nor empty: its single choice (of the ``Choices`` tag named ``label``) maps to
a label through ``choices``, and its annotator is the ``completed_by`` user's email (else
``"label-studio:<user id>"``).

Examples
--------
>>> task = {"data": {"bayeval_id": 7}, "annotations": [
...     {"result": [{"type": "choices", "from_name": "label",
...                  "value": {"choices": ["Positive"]}}],
...      "completed_by": {"id": 3, "email": "ann@example.org"}}]}
>>> import json, pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "export.json"
>>> _ = path.write_text(json.dumps([task]))
>>> read_export(path, None, check_choices(None))
[('task 1, annotation 1', 7, 1, 'ann@example.org')]
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

__all__ = ["DEFAULT_CHOICES", "check_choices", "label_studio_config", "read_export", "tasks"]

DEFAULT_CHOICES = {"Positive": 1, "Negative": 0}


def tasks(rows: list[dict], columns: Sequence[str], session: str) -> list[dict]:
    """Return one Label Studio task per question row of ``export_pending``.

    ``columns`` are the pool's and the user's columns, shown in the task's ``data``; the
    design's fields of a row (``stage``, ``stratum``, ``probability``), where it has them, go
    to its ``meta``, with the session's key ``session`` as ``bayeval_session``.
    """
    out = []
    for row in rows:
        data = {"bayeval_id": row["id"], **{name: row[name] for name in columns}}
        meta = {key: row[key] for key in ("stage", "stratum", "probability") if key in row}
        meta = {"bayeval_id": row["id"], "bayeval_session": session, **meta}
        out.append({"data": data, "meta": meta})
    return out


def read_export(
    path: Path, annotator: str | None, choices: dict[str, int], session: str | None = None
) -> list[tuple]:
    """Read the answers of a Label Studio JSON export of tasks written by ``export_pending``.

    Returns ``(where, id, label, annotator)`` per answer, ``where`` naming the task and
    annotation for messages; ``choices`` is checked already (:func:`check_choices`). A task
    whose ``meta`` names a session (``bayeval_session``) other than ``session`` raises
    ``ValueError``: it was written for another session, whose ids may mean other items.
    """
    try:
        tasks = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err.msg}, line {err.lineno}).") from None
    export_hint = "export the project from Label Studio as JSON (not JSON-MIN or CSV)"
    if not isinstance(tasks, list):
        raise ValueError(
            f"{path}: a Label Studio export is a JSON list of tasks; got a "
            f"{type(tasks).__name__} ({export_hint})."
        )
    answers = []
    for i, task in enumerate(tasks, start=1):
        where = f"task {i}"
        if isinstance(task, dict) and "id" in task:
            where += f" (Label Studio id {task['id']})"
        if not isinstance(task, dict) or not isinstance(task.get("annotations"), list):
            raise ValueError(
                f"{path}, {where}: a task must be an object with a list of 'annotations' "
                f"({export_hint})."
            )
        item = _bayeval_id(task)
        if item is None:
            raise ValueError(
                f"{path}, {where}: the task has no 'bayeval_id' in its 'data' (or 'meta'); "
                "only tasks written by export_pending can be imported."
            )
        meta = task.get("meta")
        written_for = meta.get("bayeval_session") if isinstance(meta, dict) else None
        if session is not None and written_for is not None and written_for != session:
            raise ValueError(
                f"{path}, {where}: the task was written for another session (key "
                f"{written_for!r}; this session's is {session!r}); import a project's export "
                "into the session its tasks were exported from."
            )
        for j, annotation in enumerate(task["annotations"], start=1):
            at = f"{where}, annotation {j}"
            if not isinstance(annotation, dict):
                raise ValueError(f"{path}, {at}: an annotation must be a JSON object.")
            if annotation.get("was_cancelled"):
                continue
            choice = _choice(annotation.get("result") or [], path, at)
            if choice is None:
                continue
            if choice not in choices:
                raise ValueError(
                    f"{path}, {at}: choice {choice!r} is not one of the choices "
                    f"{list(choices)} (pass `choices` to map other choice names to 0 or 1)."
                )
            who = _completed_by(annotation.get("completed_by"))
            answers.append((at, item, choices[choice], annotator if who is None else who))
    return answers


def _bayeval_id(task: dict) -> Any:
    for part in ("data", "meta"):
        fields = task.get(part)
        if isinstance(fields, dict) and fields.get("bayeval_id") is not None:
            return fields["bayeval_id"]
    return None


def _choice(result: Any, path: Path, at: str) -> str | None:
    """Return the one choice of an annotation's ``result`` (None when it has none)."""
    if not isinstance(result, list):
        raise ValueError(f"{path}, {at}: 'result' must be a list; got {result!r}.")
    regions = [r for r in result if isinstance(r, dict) and r.get("type") == "choices"]
    if len(regions) > 1:  # several Choices tags: ours is named "label"
        regions = [r for r in regions if r.get("from_name") == "label"]
        if len(regions) != 1:
            names = [r.get("from_name") for r in result if isinstance(r, dict)]
            raise ValueError(
                f"{path}, {at}: several choice questions ({names}) and none (or more than one) "
                "named 'label'; name the Choices tag of the label 'label'."
            )
    if not regions:
        return None
    picked = (regions[0].get("value") or {}).get("choices")
    if not isinstance(picked, list) or len(picked) != 1 or not isinstance(picked[0], str):
        raise ValueError(f"{path}, {at}: expected exactly one choice; got {picked!r}.")
    return picked[0]


def _completed_by(user: Any) -> str | None:
    if isinstance(user, dict):
        if user.get("email"):
            return str(user["email"])
        user = user.get("id")
    if user is None or isinstance(user, bool):
        return None
    return f"label-studio:{user}"


def check_choices(
    choices: Mapping[str, int] | None, classes: Sequence[str] | None = None
) -> dict[str, int]:
    """Return ``choices`` as a dict of choice name to label (the default when None).

    With ``classes`` (a multiclass pool) the labels are class indices and the default offers
    each class by its name.
    """
    if classes is None:
        default, allowed = dict(DEFAULT_CHOICES), "a label 0 or 1"
    else:
        default = {name: k for k, name in enumerate(classes)}
        allowed = f"a class index 0 .. {len(classes) - 1}"
    if choices is None:
        return default
    if not isinstance(choices, Mapping) or not choices:
        raise ValueError(
            f"`choices` must map each choice name to {allowed}, e.g. {default}; got {choices!r}."
        )
    out = {}
    for name, label in choices.items():
        if (
            not isinstance(name, str)
            or isinstance(label, bool | float)
            or label not in range(len(default))
        ):
            raise ValueError(
                f"`choices` must map each choice name (a string) to {allowed}; got "
                f"{name!r}: {label!r}."
            )
        out[name] = int(label)
    return out


# -- the project ------------------------------------------------------------------------
def label_studio_config(
    choices: Mapping[str, int] | None = None,
    *,
    fields: Sequence[str] = (),
    classes: Sequence[str] | None = None,
) -> str:
    """Return a Label Studio labelling configuration (XML) for tasks from :func:`export_pending`.

    Parameters
    ----------
    choices : mapping of str to {0, 1}, optional
        The choices offered, in order; default ``{"Positive": 1, "Negative": 0}`` (with
        ``classes``: each class by its name). Pass the same mapping to :func:`import_answers`.
    fields : sequence of str, default ()
        Columns of the exported ``data`` to show (e.g. ``["text"]``), below the item's id.
    classes : sequence of str, optional
        A multiclass pool's classes (``pool.classes``): the default choices are then the
        class names, and ``choices`` map names to class indices.

    Returns
    -------
    str
        A ``<View>`` that shows ``$bayeval_id`` and the ``fields``, with a single-choice
        ``<Choices name="label">``.

    Examples
    --------
    >>> print(label_studio_config(fields=["text"]))
    <View>
      <Text name="item" value="$bayeval_id"/>
      <Text name="field_text" value="$text"/>
      <Choices name="label" toName="item" choice="single" showInline="true" required="true">
        <Choice value="Positive"/>
        <Choice value="Negative"/>
      </Choices>
    </View>
    """
    names = check_choices(choices, classes)
    if isinstance(fields, str) or not all(isinstance(f, str) and f for f in fields):
        raise ValueError(f"`fields` must be a sequence of column names; got {fields!r}.")
    lines = ["<View>", '  <Text name="item" value="$bayeval_id"/>']
    for k, field in enumerate(fields):
        tag = field if field.isidentifier() else f"{k}"
        lines.append(f"  <Text name={quoteattr('field_' + tag)} value={quoteattr('$' + field)}/>")
    lines.append(
        '  <Choices name="label" toName="item" choice="single" showInline="true" required="true">'
    )
    lines.extend(f"    <Choice value={quoteattr(name)}/>" for name in names)
    lines += ["  </Choices>", "</View>"]
    return "\n".join(lines)
