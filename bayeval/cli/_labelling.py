"""The terminal labelling loop of ``bayeval label`` and ``bayeval evaluate``, over a session.

The loop asks the person at the terminal for each item's label and records every answer in a
session file (:class:`bayeval.session.Session`) as it is given, so nothing labelled is lost
when the run stops (``q``, end of input, Ctrl-C, a crash); the same command continues it.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from bayeval.cli._shared import (
    measure_name,
    number,
)

__all__ = ["Labeller", "estimate_rows", "estimate_text"]

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

#: Exit status of a labelling run stopped (``q``, end of input) before the budget or stop rule
#: it was given: every answer is saved and the same command continues it. Ctrl-C exits with 130.
EXIT_STOPPED = 3

UNBLIND_HELP = (
    "Show the annotator the system's score and prediction (default: blind, the item's own "
    "fields only, so the system cannot sway the label)."
)


def blinded(frame, unblind: bool):
    """Return ``frame`` without the system's columns (score, prediction) unless ``unblind``.

    What an annotator is shown of an item: a pool file given as ``--data`` holds the system's
    score and prediction beside the item's own fields.
    """
    if frame is None or unblind:
        return frame
    system = [
        c for c in frame.columns
        if str(c) in POOL_COLUMNS[1:] or str(c).startswith(("score[", "prediction["))
    ]  # fmt: skip
    return frame.drop(columns=system)


#: Width, in characters, of the labelling loop's progress bar.
BAR = 24


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
    audit : (int, int), optional
        A model selection session: once its stopping rule holds (or the budget is spent), an
        audit of this many disagreements and agreements (:meth:`Session.ask_audit`), then
        stop. Pending questions are answered first.
    unblind : bool, default False
        Show the system's score and prediction with each item (by default the annotator sees
        the item's fields only: ``table`` and ``extra`` without the system's columns).

    Attributes
    ----------
    stopped : bool
        Whether the last :meth:`run` stopped at ``q`` or the end of input.
    """

    def __init__(
        self, session, console, table, extra, annotator, batch_size, budget, width, prob,
        on_stage=None, second_opinions=None, audit=None, unblind=False,
    ):  # fmt: skip
        table, extra = blinded(table, unblind), blinded(extra, unblind)
        self.session, self.console, self.table, self.extra = session, console, table, extra
        self.unblind, self.stopped = unblind, False
        self.resume = f"bayeval label {session.path}"  # how the summary says to continue
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
        self.audit = audit
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
                self.stopped = True
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
        if self.audit is not None:
            return self._next_with_audit(queue)
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

    def _next_with_audit(self, queue: deque):
        """Return the next question of a model selection followed by its audit, or None.

        Pending questions first (the audit's in the order drawn, so that the part answered
        before a stop is a random sample too); then chosen items until the stopping rule holds;
        then the audit, drawn at once (what it lacks of :attr:`audit`).
        """
        sess = self.session
        if not queue:
            pending, drawn = sess.pending.tolist(), sess.sampler.audit.tolist()
            audit, waiting = set(drawn), set(pending)
            queue.extend(
                [i for i in pending if i not in audit] + [i for i in drawn if i in waiting]
            )
        if queue:
            return queue.popleft()
        drawn = len(sess.sampler.audit)
        if not drawn:
            reason = sess.stop_reason(budget=self.budget, prob=self.prob)
            if reason is None:
                queue.extend(sess.ask(1).tolist())
                return queue.popleft()
            self.say(
                f"selection stopped: {reason}. Now the audit: {sum(self.audit):,} items drawn "
                "at random among the disagreements left (and the agreements), whose labels "
                "check every difference.",
                style="bold",
            )
        sampler = sess.sampler
        agreements = sampler.audit_agreements
        wanted = (
            max(0, min(self.audit[0] - (drawn - agreements), sampler.audit_left)),
            max(0, min(self.audit[1] - agreements, sampler.agreements_left)),
        )
        if not any(wanted):
            self.say(f"done: the audit's {drawn:,} items are labelled.", style="bold")
            return None
        queue.extend(sess.ask_audit(wanted[0], agreements=wanted[1]).tolist())
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
        elif (rank := self._audit_rank(item)) is not None:
            title = f"audit item {rank:,} of {len(self.session.sampler.audit):,} (id {item!r})"
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

    def _audit_rank(self, item) -> int | None:
        """Return the rank (from 1) of ``item`` in the audit, or None if it is not in it."""
        drawn = [] if self.audit is None else self.session.sampler.audit.tolist()
        return drawn.index(item) + 1 if item in drawn else None

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
        if not self.unblind:
            return fields, note
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
        sampler = sess.sampler
        audit = sampler.pool.positions(sampler.audit) if self.audit is not None else ()
        if len(audit):
            done = int(np.count_nonzero(sampler.is_labelled(audit)))
            parts = [f"{count:,} labels, the audit's {done:,} of {len(audit):,}"]
        elif self.budget is None:
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
            f"Continue with: {self.resume}"
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
    if sampler.method == "curve":  # precision at a few ranks, within the method's envelope
        from bayeval.sampling.curve import curve_rows

        return [
            {"output": name, "estimate": number(value), "lower": number(low),
             "upper": number(high), "width": number(high - low)}
            for name, value, low, high in curve_rows(est)
        ]  # fmt: skip
    if sampler.method == "model_selection":  # each system against the leader, and P(best)
        from bayeval.plots import differences_from

        if sampler.is_labelled(sampler.pool.positions(sampler.audit)).any():
            try:  # the audit's, where it can be read (F1 needs an answered agreement)
                est = session.audited_differences()
            except ValueError:
                pass
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
