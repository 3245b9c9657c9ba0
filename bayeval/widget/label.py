"""The labelling widget: a session's questions, one at a time, in a notebook cell."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

try:
    import anywidget
    import traitlets
except ImportError as err:  # pragma: no cover - the widget extra is part of the test extra
    raise ImportError(
        "bayeval.label needs anywidget: pip install 'bayeval[widget]' (or anywidget)."
    ) from err

__all__ = ["LabelWidget", "label"]

#: Columns of the system, never shown unless ``unblind`` (the pool's own and a pool file's).
SYSTEM_COLUMNS = ("score", "prediction", "predicted")


class LabelWidget(anywidget.AnyWidget):
    """Label a session's items in a notebook; every answer is committed to the session.

    Made by :func:`label`, which documents the parameters. The front end sends one message
    per action (``{"type": "answer", "item": id, "choice": k}``, ``"skip"``, ``"undo"``),
    which the comm delivers to ``_handle_custom_msg`` and so to the widget's message handler;
    the widget records it through the session and shows the next item. An action on an item
    that is no longer shown, or an unknown choice, changes nothing and says why in
    ``message``.

    Attributes
    ----------
    item : str
        The id of the item shown, as text ("" when done).
    fields : list of [name, value, kind]
        What the annotator sees of it; ``kind`` is ``"image"`` for a path or URL of an image,
        else ``"text"``.
    choices : list of dict
        One button per label: ``{"name": ..., "key": ...}`` (its keyboard shortcut).
    progress : dict
        ``labels`` (the session's), ``budget`` (or None) and ``pending``.
    estimate, message : str
        The live estimate with its interval; what the last action did.
    done : bool
        Whether the budget is spent (or the sampler can draw no more items).
    """

    _esm = Path(__file__).with_name("widget.js")
    _css = Path(__file__).with_name("widget.css")
    item = traitlets.Unicode("").tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    fields = traitlets.List().tag(sync=True)
    choices = traitlets.List().tag(sync=True)
    progress = traitlets.Dict().tag(sync=True)
    estimate = traitlets.Unicode("").tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)
    done = traitlets.Bool(False).tag(sync=True)

    def __init__(self, session, data=None, *, annotator=None, batch_size=10, budget=None,
                 unblind=False, prob=0.95):  # fmt: skip
        super().__init__()
        self.session, self.annotator, self.prob = session, annotator, prob
        self.batch_size, self.budget, self.unblind = batch_size, budget, unblind
        self.data = _shown_columns(data, unblind)
        classes = session.sampler.pool.classes
        names = ["Positive", "Negative"] if classes is None else list(classes)
        self._values = [1, 0] if classes is None else list(range(len(classes)))
        keys = ["y", "n"] if classes is None else [str(k + 1) for k in range(len(classes))]
        self.choices = [{"name": n, "key": k} for n, k in zip(names, keys, strict=True)]
        self._queue: deque = deque()
        self._history: list = []  # items answered in this widget, oldest first (undo)
        self._current: tuple | None = None  # (id, is a re-judgement)
        self._estimate_stage = -1
        self.on_msg(self._on_action)  # what the front end sends, through the comm
        self._advance()

    # -- actions -------------------------------------------------------------------------------
    def _on_action(self, _widget: Any, content: Any, _buffers: Any = None) -> None:
        """Record an answer, skip or undo sent by the front end (then show the next item)."""
        kind = content.get("type") if isinstance(content, dict) else None
        if kind not in ("answer", "skip", "undo"):
            self.message = f"unknown action {content!r}: nothing was recorded."
            return
        if kind == "undo":
            self._undo()
            return
        shown = None if self._current is None else str(self._current[0])
        if content.get("item") != shown:
            self.message = (
                f"item {content.get('item')!r} is not the one shown ({shown!r}): nothing was "
                "recorded."
            )
            return
        if kind == "skip":
            self._skip()
            return
        choice = content.get("choice")
        if (
            not isinstance(choice, int)
            or isinstance(choice, bool)
            or not (0 <= choice < len(self._values))
        ):
            self.message = (
                f"choice {choice!r} is not one of 0 .. {len(self._values) - 1}: nothing was "
                "recorded."
            )
            return
        self._answer(self._values[choice])

    def _answer(self, value: int) -> None:
        item, again = self._current
        recorded = self.session.record([item], [value], annotator=self.annotator)
        if item in self._history:
            self._history.remove(item)
        self._history.append(item)
        name = self.choices[self._values.index(value)]["name"]
        if again:
            what = "re-judged (earlier answers are kept)" if recorded else "as before"
            self.message = f"id {item!r}: {name}, {what}."
        else:
            self.message = f"id {item!r}: {name}."
        self._current = None
        self._advance()

    def _skip(self) -> None:
        item, again = self._current
        if not again:  # it stays pending and comes back after the others
            self._queue.append(item)
        self.message = f"skipped id {item!r}."
        self._current = None
        self._advance()

    def _undo(self) -> None:
        if self.session.meta["sampler"] == "stochastic_ais":
            self.message = "undo is not available with stochastic_ais (each answer labels a draw)."
            return
        if not self._history:
            self.message = "nothing to undo: no item was answered here yet."
            return
        if self._current is not None and not self._current[1]:
            self._queue.appendleft(self._current[0])
        previous = self._history.pop()
        self._current = (previous, True)
        self.message = f"answer id {previous!r} again (the new answer is a re-judgement)."
        self._show()

    # -- what is shown -------------------------------------------------------------------------
    def _advance(self) -> None:
        """Show the next pending or new item, or finish."""
        sess = self.session
        if self._current is None:
            self._current = self._next(sess)
        self._show()

    def _next(self, sess):
        if not self._queue:
            self._queue.extend(sess.pending.tolist())
        if self._queue:
            return (self._queue.popleft(), False)
        if sess.stop_reason(budget=self.budget, prob=self.prob):
            return None
        n = self.batch_size
        if self.budget is not None:
            n = max(1, min(n, self.budget - sess.labels_count()))
        try:
            self._queue.extend(sess.ask(n).tolist())
        except ValueError:  # the sampler can draw no more items
            return None
        return (self._queue.popleft(), False)

    def _show(self) -> None:
        sess = self.session
        self.progress = {
            "labels": int(sess.labels_count()),
            "budget": self.budget,
            "pending": int(len(sess.pending)),
        }
        if sess.sampler.stage != self._estimate_stage:
            self._estimate_stage = sess.sampler.stage
            self.estimate = estimate_text(sess, self.prob)
        if self._current is None:
            self.item, self.title, self.fields, self.done = "", "done", [], True
            return
        item, again = self._current
        self.done = False
        self.title = f"re-judging id {item!r}" if again else f"id {item!r}"
        self.fields = self._fields(item)
        self.item = str(item)

    def _fields(self, item) -> list[list[str]]:
        pool = self.session.sampler.pool
        shown: list[tuple[str, Any]] = [("id", item)]
        if self.data is not None and item in self.data.index:
            shown += list(self.data.loc[item].items())
        if self.unblind:
            position = int(pool.positions(item))
            shown += [("score", np.asarray(pool.scores)[position]),
                      ("prediction", np.asarray(pool.predictions)[position])]  # fmt: skip
        return [[str(name), _text(value), _kind(value)] for name, value in shown]


def label(session, data=None, *, annotator=None, batch_size=10, budget=None, unblind=False,
          prob=0.95) -> LabelWidget:  # fmt: skip
    """Return a widget that asks a person to label ``session``'s items in a notebook.

    Parameters
    ----------
    session : bayeval.Session
        Open for writing. Its pending questions come first, then ``batch_size`` new ones at a
        time. A session opened again after a restart goes on where it stopped.
    data : pandas.DataFrame, optional
        The fields to show for each item, indexed by pool id (or with an ``id`` column): a
        text, an image's path or URL (shown as the image), any column. A pool file read with
        pandas will do: its ``score`` and ``prediction`` columns are left out unless
        ``unblind``.
    annotator : str, optional
        Kept with every answer.
    batch_size : int, default 10
        Items asked at a time (one stage of the sampler).
    budget : int, optional
        Stop once the session has this many labels.
    unblind : bool, default False
        Also show the system's score and prediction.
    prob : float, default 0.95
        Probability of the live estimate's interval.

    Returns
    -------
    LabelWidget
        Display it in a cell. Keys: ``y`` / ``n`` (a multiclass pool: ``1`` .. ``C``), ``s``
        to skip (the item comes back after the other pending ones), ``u`` to undo (answer
        the previous item again; the new answer is a re-judgement, nothing is deleted).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np, pandas as pd
    >>> import bayeval as be
    >>> scores = np.random.default_rng(0).random(200)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "labels.db"
    >>> sess = be.Session.create(path, be.Pool(scores), be.measures.FScore(), "passive", rng=1)
    >>> texts = pd.DataFrame({"text": [f"item {i}" for i in range(200)]})
    >>> widget = be.label(sess, texts, annotator="ann", batch_size=5)
    >>> widget.fields[1][:2] == ["text", f"item {widget.item}"]
    True
    >>> widget._handle_custom_msg({"type": "answer", "item": widget.item, "choice": 0}, [])
    >>> sess.answers()[["label", "annotator"]].values.tolist()
    [[1, 'ann']]
    >>> widget.progress
    {'labels': 1, 'budget': None, 'pending': 4}
    >>> sess.close()
    """
    return LabelWidget(session, data, annotator=annotator, batch_size=batch_size, budget=budget,
                       unblind=unblind, prob=prob)  # fmt: skip


def estimate_text(session, prob: float) -> str:
    """Return the session's estimate with its ``prob`` interval, one output after another."""
    if session.sampler.stage == 0 or session.labels_count() == 0:
        return "no complete stage yet"
    try:
        est = session.estimate()
    except ValueError as err:  # a model that cannot be fitted yet, a curve not complete
        return f"no estimate yet: {err}"
    if session.sampler.method == "curve":  # the method's guaranteed envelope
        from bayeval.sampling.curve import curve_rows

        rows, what = curve_rows(est), "the method's bounds"
    else:
        interval = est.interval(prob)
        lower = interval.sel(ci_bound="lower").values
        upper = interval.sel(ci_bound="upper").values
        rows, what = zip(est.outputs, est.value, lower, upper, strict=True), f"{prob:.0%} interval"
    parts = [f"{name} {value:.3f} [{lo:.3f}, {hi:.3f}]" for name, value, lo, hi in rows]
    return f"{'; '.join(parts)} ({what})"


def _shown_columns(data, unblind: bool):
    """Return ``data`` indexed by id, without the system's columns unless ``unblind``."""
    if data is None:
        return None
    import pandas as pd

    if not isinstance(data, pd.DataFrame):
        raise ValueError(
            f"`data` must be a pandas DataFrame indexed by pool id; got {type(data).__name__}."
        )
    if "id" in data.columns:
        data = data.set_index("id")
    if not unblind:
        data = data.drop(columns=[c for c in data.columns if str(c) in SYSTEM_COLUMNS])
    return data


def _text(value: Any) -> str:
    return str(value.item() if isinstance(value, np.generic) else value)


def _kind(value: Any) -> str:
    """Return ``"image"`` for a path or URL of an image (shown as the image), else ``"text"``."""
    text = str(value).lower()
    images = (".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp")
    return "image" if text.startswith("data:image/") or text.endswith(images) else "text"
