"""The terminal labelling loop of ``bayeval label`` and ``bayeval evaluate``, over a session.

The loop asks the person at the terminal for each item's label and records every answer in a
session file (:class:`bayeval.session.Session`) as it is given, so nothing labelled is lost
when the run stops (``q``, end of input, Ctrl-C, a crash); the same command continues it.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from bayeval.cli._shared import (
    bad,
    error,
    load_source,
    measure_name,
    number,
    run_measure,
    sampler_class,
)

__all__ = [
    "Labeller",
    "check_agrees",
    "check_second_opinions",
    "estimate_rows",
    "estimate_text",
    "open_or_create",
    "open_session",
]

#: What the labelling prompt accepts: a label, or one of the loop's actions.
KEYS = {
    "y": 1, "yes": 1, "1": 1, "n": 0, "no": 0, "0": 0,
    "s": "skip", "skip": "skip", "u": "undo", "undo": "undo", "q": "quit", "quit": "quit",
    "?": "help", "h": "help", "help": "help",
}  # fmt: skip

KEYS_HELP = (
    "keys: y = positive, n = negative, s = skip (the item stays pending and comes back after "
    "the other pending items; its stage completes only once it is answered), u = undo (go back "
    "to the previous answered item and answer it again: the new answer is recorded as a "
    "re-judgement, nothing is deleted; u again goes further back), q = quit (every answer is "
    "already saved), ? = this help."
)

PROMPT = "label [y/n/s/u/q, ? for help]: "

#: The loop's actions, which a multiclass prompt takes beside the classes.
ACTIONS = {key: action for key, action in KEYS.items() if isinstance(action, str)}


def answer_keys(classes: tuple[str, ...] | None) -> tuple[dict, str, str]:
    """Return the prompt's keys, its help and the prompt itself for a pool's label space.

    A multiclass pool is answered with a class's number or name (any case); a class whose
    name is also an action key (``s``, ``q``, ...) is answered by its number.
    """
    if classes is None:
        return KEYS, KEYS_HELP, PROMPT
    keys = {str(k): k for k in range(len(classes))}
    keys.update((name.lower(), k) for k, name in enumerate(classes) if name.lower() not in ACTIONS)
    keys.update(ACTIONS)
    numbered = ", ".join(f"{k} = {name}" for k, name in enumerate(classes))
    actions = KEYS_HELP[KEYS_HELP.index(", s = skip") :]  # the help of the actions
    help_text = f"keys: a class's number or name ({numbered}){actions}"
    return keys, help_text, f"label [0-{len(classes) - 1} or a class name, s/u/q, ? for help]: "


#: Columns of a --pool file that ``bayeval label`` shows from the pool itself (``predicted``:
#: the bundled FEBRL pairs' predictions).
POOL_COLUMNS = ("id", "score", "prediction", "predicted")

#: Width, in characters, of the labelling loop's progress bar.
BAR = 24


def open_session(path: Path, *, read_only: bool):
    """Open a session, turning ``SessionInUseError`` and bad files into one-line errors."""
    from bayeval.session import Session, SessionInUseError

    try:
        return Session.open(path, read_only=read_only)
    except (SessionInUseError, ValueError) as err:
        raise error(err) from None


def open_or_create(
    path: Path, pool, threshold, measure, sampler, seed, label_rule, source=None, judge=None,
    classes=None,
):  # fmt: skip
    """Continue the session at ``path`` or create it from ``--pool``.

    A session that exists is continued; any option given (not None) must agree with it. A new
    one needs ``pool`` and takes the defaults f1 (macro_f1 for a multiclass pool), ais
    (passive), a random seed (stored) and the label rule ``latest`` for options not given.
    ``source``: ``pool`` already read, if it was; ``judge``: ``--judge-column``; ``classes``:
    ``--classes``.

    Returns
    -------
    session : bayeval.session.Session
    source : bayeval.datasets.files.ScoredItems or None
        The ``--pool`` file read (None when a session is continued without it).
    created : bool
    """
    from bayeval.session import Session

    if not path.exists() and pool is not None:
        sampler_class("ais" if sampler is None else sampler)  # an unknown --sampler first
    if source is None and pool is not None:
        source = load_source(pool, threshold, judge, classes)
    if path.exists():
        session = open_session(path, read_only=False)
        try:
            check_agrees(session, pool, source, measure, sampler, seed, label_rule)
        except BaseException:
            session.close()
            raise
        return session, source, False
    if pool is None:
        raise bad(
            f"{path} does not exist: a new session needs a pool ('febrl' or a .csv or "
            ".parquet file).",
            "--pool",
        )
    multiclass = source.pool.classes is not None
    name = sampler or ("passive" if multiclass else "ais")
    chosen = run_measure(None if measure is None else measure.value, source.pool.classes)
    try:
        session = Session.create(
            path,
            source.pool,
            chosen,
            name,
            rng=seed,
            label_rule="latest" if label_rule is None else label_rule.value,
        )
    except ValueError as err:
        raise error(err) from None
    return session, source, True


def same_pool(a: Any, b: Any) -> bool:
    """Whether two pools hold the same scores, predictions, judge, classes and ids."""
    if (a.judge is None) != (b.judge is None) or a.classes != b.classes:
        return False
    return (
        a.scores.shape == b.scores.shape
        and np.array_equal(a.scores, b.scores)
        and np.array_equal(a.predictions, b.predictions)
        and (a.judge is None or np.array_equal(a.judge, b.judge))
        and np.array_equal(np.asarray(a.ids).astype(str), np.asarray(b.ids).astype(str))
    )


def check_agrees(session, pool, source, measure, sampler, seed, label_rule) -> None:
    """Raise ``BadParameter`` for a given option that differs from the session's setting."""
    meta = session.meta
    where = f"the session {session.path} was created with"
    keep = "; leave the option out to continue the session (its settings never change)."
    classes = session.sampler.pool.classes
    if measure is not None and run_measure(measure.value, classes) != session.sampler.measure:
        theirs = measure_name(session.sampler.measure)
        raise bad(f"{where} --measure {theirs}, not {measure.value}{keep}", "--measure")
    if sampler is not None and sampler != meta["sampler"]:
        raise bad(f"{where} --sampler {meta['sampler']}, not {sampler}{keep}", "--sampler")
    if seed is not None and seed != int(meta["seed"]):
        raise bad(f"{where} --seed {meta['seed']}, not {seed}{keep}", "--seed")
    rule = meta.get("label_rule", "latest")
    if label_rule is not None and label_rule.value != rule:
        raise bad(f"{where} --label-rule {rule}, not {label_rule.value}{keep}", "--label-rule")
    if source is not None and not same_pool(source.pool, session.sampler.pool):
        raise bad(
            f"{pool} holds other items, scores, predictions, judge or classes than the pool of "
            f"{session.path} "
            f"({session.sampler.pool.size:,} items){keep}",
            "--pool",
        )


def check_second_opinions(path: Path, annotator: str | None, session: Any = None) -> None:
    """Refuse ``--second-opinions`` without ``--annotator`` or a session holding fixed labels.

    Before the session is opened (``session`` None): a name and an existing file; after: labels
    of fixed items (not ``stochastic_ais``, where every answer labels one draw), at least one.
    """
    option = "--second-opinions"
    if annotator is None:
        raise bad("needs --annotator: the items they answered are left out, and their answers "
                  "are told apart from the first ones.", option)  # fmt: skip
    if not path.exists():
        raise bad(f"needs an existing session with labels; {path} does not exist.", option)
    if session is None:
        return
    if session.meta["sampler"] == "stochastic_ais":
        raise bad("needs a session whose answers label fixed items; this one's sampler is "
                  "stochastic_ais (every answer labels one draw).", option)  # fmt: skip
    if session.labels_count() == 0:
        raise bad(f"needs labels to give second opinions on; {path} has none yet.", option)


class Labeller:
    """The terminal labelling loop over an open session.

    Parameters
    ----------
    session : bayeval.session.Session
    console : rich.console.Console
        Where items, prompts and progress go (stderr when the command prints JSON).
    table : pandas.DataFrame or None
        ``--data``: the fields shown for each item, rows keyed by ``str(id)``.
    extra : pandas.DataFrame or None
        The ``--pool`` file's other columns, in pool order (without ``--data``).
    annotator : str or None
    batch_size, budget : int (budget may be None)
    width : float or None
        Stop once the interval of the measure is narrower.
    prob : float
    on_stage : callable, optional
        Called as ``on_stage(session)`` when an answer completes a stage; it asks the
        session for what it records (an estimate may cost a model's fit: only if needed).
    second_opinions : int, optional
        Instead of new questions, ask ``annotator`` about up to this many labelled items whose
        label the annotators' model trusts least (:meth:`Session.second_opinions`), then stop.
    """

    def __init__(
        self, session, console, table, extra, annotator, batch_size, budget, width, prob,
        on_stage=None, second_opinions=None,
    ):  # fmt: skip
        self.session, self.console, self.table, self.extra = session, console, table, extra
        self.annotator, self.batch_size, self.budget = annotator, batch_size, budget
        self.width, self.prob, self.on_stage = width, prob, on_stage
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
        self.estimate_text = ""
        self.classes = session.sampler.pool.classes
        self.keys, self.keys_help, self.prompt = answer_keys(self.classes)
        self.opinions: deque | None = None  # the items still to give a second opinion on
        if second_opinions is not None:
            chosen = session.second_opinions(second_opinions, annotator=annotator)
            self.opinions, self.opinions_asked = deque(chosen.tolist()), len(chosen)

    def word(self, label: int | None) -> str:
        """Return how an answer is shown: positive/negative, or the class's name."""
        if label is None:
            return "none"
        if self.classes is not None:
            return self.classes[label]
        return "positive" if label else "negative"

    def say(self, text: str, style: str | None = None) -> None:
        self.console.print(text, style=style, markup=False, soft_wrap=True)

    # -- the loop --------------------------------------------------------------------------------
    def intro(self, created: bool) -> None:
        sess = self.session
        meta = sess.meta
        what = "created" if created else "continuing"
        self.say(
            f"{what} session {sess.path}: {meta['sampler']} for "
            f"{measure_name(sess.sampler.measure)}, seed {meta['seed']}, label rule "
            f"{meta.get('label_rule', 'latest')}; {sess.sampler.pool.size:,} items, "
            f"{sess.labels_count():,} labels, {len(sess.pending):,} pending."
        )
        if self.opinions is not None:
            self.say(
                f"second opinions: {self.opinions_asked:,} labelled items whose label the "
                f"annotators' model trusts least, none of them answered by {self.annotator} "
                "(the earlier answers are not shown)."
            )
        self.say(self.keys_help, style="dim")

    def run(self) -> None:
        """Ask for answers until a stop rule, the end of the pool, ``q`` or end of input.

        With second opinions, until each chosen item was asked.
        """
        queue: deque = deque() if self.opinions is None else self.opinions
        current = None  # (item, is a re-judgement)
        while True:
            if current is None:
                item = self._next_opinion() if self.opinions is not None else self._next(queue)
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
                elif self.opinions is not None:
                    self.say("skipped: no second opinion on it is recorded.")
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

    def _next_opinion(self):
        """Return the next item to give a second opinion on, or None when all were asked."""
        if self.opinions:
            return self.opinions.popleft()
        self.say(f"done: the {self.opinions_asked:,} second opinions were asked.", style="bold")
        return None

    def _next(self, queue: deque):
        """Return the next new question, or None at a stop rule or when none is left.

        Pending questions come first, then a new batch.
        """
        sess = self.session
        reason = sess.stop_reason(width=self.width, budget=self.budget, prob=self.prob)
        if reason:
            self.say(f"stopping: {reason}", style="bold")
            return None
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
                text = read_line(self.prompt, self.console)
            except EOFError:
                self.say("")
                self.say("end of input.")
                return "quit"
            answer = self.keys.get(text.strip().lower())
            if answer == "help":
                self.say(self.keys_help)
            elif answer is None:
                what = "y, n" if self.classes is None else "a class's number or name"
                self.say(f"{text.strip()!r}: answer {what}, s, u or q (? for help).")
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
        stage = sess.sampler.stage
        recorded = sess.record([item], [answer], annotator=self.annotator)
        if self.on_stage is not None and sess.sampler.stage > stage:
            self.on_stage(sess)
        self.given[item] = answer
        if not self.repeated_draws:
            if item in self.history:
                self.history.remove(item)
            self.history.append(item)
        self.answered += recorded
        word = self.word(answer)
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
            earlier = self.word(self.given.get(item))
            title = f"re-judging id {item!r} (your earlier answer: {earlier})"
        elif self.opinions is not None:
            number = self.opinions_asked - len(self.opinions)
            title = f"second opinion {number:,} of {self.opinions_asked:,} (id {item!r})"
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
        if pool.classes is not None:  # predicted classes by name
            predictions = np.asarray(pool.classes)[predictions]
        if pool.n_systems == 1:
            fields += [("score", scores), ("prediction", predictions)]
        else:  # a multiclass comparison's systems give classes, not scores
            for j, system in enumerate(pool.systems):
                if pool.classes is None:
                    fields.append((f"score {system}", scores[j]))
                fields.append((f"prediction {system}", predictions[j]))
        return fields, note

    def _progress(self) -> str:
        sess = self.session
        count = sess.labels_count()
        if self.budget is None:
            parts = [f"{count:,} labels"]
        else:
            filled = min(BAR, round(BAR * count / self.budget))
            bar = "#" * filled + "-" * (BAR - filled)
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
            self.estimate_text = estimate_text(self.session, self.prob)
        return self.estimate_text

    def summary(self) -> None:
        sess = self.session
        rejudged = f" (re-judgements: {self.rejudged:,})" if self.rejudged else ""
        self.say(
            f"{self.answered:,} answers recorded in this run{rejudged}; the session has "
            f"{sess.labels_count():,} labels and {len(sess.pending):,} pending. "
            f"Continue with: bayeval label {sess.path}"
        )
        text = estimate_text(sess, self.prob)
        self.say(f"estimate: {text}")


def read_line(prompt: str, console) -> str:
    """Show ``prompt`` on ``console`` and read one answer from standard input.

    Raises EOFError at the end of the input and KeyboardInterrupt on Ctrl-C.
    """
    from rich.text import Text

    return console.input(Text(prompt))


def estimate_rows(session, prob: float) -> list[dict] | None:
    """Return each output's estimate and interval, or None before a complete stage."""
    if session.sampler.stage == 0 or session.labels_count() == 0:
        return None
    try:
        est = session.estimate()
    except ValueError:
        return None
    sampler = session.sampler
    if sampler.method == "model_selection":  # each system against the leader, and P(best)
        from bayeval.plots import differences_from

        difference, lower, upper = differences_from(est, sampler.best, prob)
        return [
            {
                "output": f"{system} - {sampler.best}",
                "estimate": number(difference[k]),
                "lower": number(lower[k]),
                "upper": number(upper[k]),
                "width": number(upper[k] - lower[k]),
                "prob_best": number(sampler.prob_best[k]),
            }
            for k, system in enumerate(sampler.pool.systems)
        ]
    return [
        {
            "output": output,
            "estimate": number(value),
            "lower": number(low),
            "upper": number(high),
            "width": number(high - low),
        }
        for output, value, low, high in zip(est.outputs, *est.per_output(prob), strict=True)
    ]


def estimate_text(session, prob: float) -> str:
    sampler = session.sampler
    if sampler.method == "model_selection":  # who leads, not levels
        if sampler.labels_used == 0:
            return "no label yet"
        order = np.argsort(-sampler.prob_best)[:3]
        leaders = ", ".join(f"{sampler.pool.systems[k]} {sampler.prob_best[k]:.3f}" for k in order)
        return f"P(best) {leaders}"
    rows = estimate_rows(session, prob)
    if rows is None:
        return "no complete stage yet"

    def fmt(value):
        return "n/a" if value is None else f"{value:.4f}"

    return "; ".join(
        f"{r['output']} {fmt(r['estimate'])} [{fmt(r['lower'])}, {fmt(r['upper'])}] "
        f"width {fmt(r['width'])} ({prob:.0%})"
        for r in rows
    )
