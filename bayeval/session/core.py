"""Durable labelling sessions: every question and answer in one SQLite file, replayed on open.

A session holds the pool, the measure, the sampler's name, options and seed, and a log of
events: each ``ask`` (the items it returned) and each ``tell`` (the labels, the annotator, the
time). A ``tell`` is committed before the call returns; :meth:`Session.open` rebuilds the
sampler from its seed and replays the log, so a session interrupted anywhere continues with the
same questions and the same estimates as one that never stopped.

Schema (version 1, 2 for a multiclass pool, 3 once an audit is drawn; ``PRAGMA user_version``)
----------------------------------------------------------------------------------------------
``meta(key, value)``
    ``format`` (``"bayeval-session"``), ``bayeval_version``, ``created``, ``sampler``,
    ``options`` (JSON), ``measure`` (JSON: class and fields), ``seed``, ``pool_sha256``; a
    multiclass pool's ``classes`` (JSON list of names; version 2, whose answers are class
    indices instead of 0/1).
``arrays(name, data)``
    The pool: ``scores``, ``predictions``, ``ids`` as ``numpy.save`` bytes (never pickled);
    empty when the session was created with ``pool_file`` (very large pools), whose path
    ``meta`` keeps as ``pool_file`` next to the checksum ``pool_sha256``.
``events(seq, kind, at, rng_state)``
    ``kind`` is ``"ask"`` or ``"tell"``, in the order they happened; ``at`` is UTC ISO time;
    ``rng_state`` (asks only) is the sampler's ``numpy.random.Generator`` bit-generator state
    after the ask, as JSON: replay checks that it reaches the same state.
``questions(event, rank, item, stage, stratum, probability)``
    The pool positions each ``ask`` returned, in order, with the sampler's stage, the item's
    stratum (NULL for samplers without strata) and the probability it was selected with
    (:meth:`bayeval.sampling.Sampler.question_probability`; NULL where not defined).
``answers(event, rank, item, label, annotator)``
    Every answer of each ``tell``, in call order: first answers and re-judgements alike.
``audits(event, agreements)``
    Schema 3 (model selection): the ``ask`` events that drew the audit
    (:meth:`Session.ask_audit`), with how many of their items are agreements (drawn after the
    disagreements); the table is made by the first audit.

Several annotators
------------------
An answer for an item that is already labelled is a *re-judgement*: it is kept, never merged
away. The sampler's proposals use each item's first answer (what was known when it adapted;
replay stays exact); estimates use each item's label under the session's ``label_rule``:
``"latest"`` (the most recent answer), ``"majority"`` (each annotator's latest answer is one
vote; a tie goes to the most recent answer) or ``"dawid-skene"`` (every answer feeds a
Dawid–Skene model of the annotators, :meth:`Session.annotator_posterior`: the labels are its
most probable classes and the credible interval integrates over the true labels, so the
annotators' disagreement widens it). An answer equal to the same annotator's latest
answer for the item adds nothing and is not recorded, so importing a file twice changes
nothing.

Exchange
--------
:meth:`Session.export_pending` writes the pending questions, in the order asked, for labelling
in another tool, and :meth:`Session.import_answers` records the answers read back (see
:mod:`bayeval.session.exchange`). Formats: ``"csv"`` and ``"jsonl"`` (fields ``id``, ``label``
and ``annotator`` to fill in, ``stage``, ``stratum``, ``probability``, ``score``,
``prediction`` and any ``data`` columns) and ``"label-studio"`` (export: Label Studio tasks
with the id, stratum and selection probability in their ``data``/``meta``; import: the
project's JSON export, one answer per annotation). A whole file is checked before anything is
recorded, and importing it twice changes nothing.

Concurrent use
--------------
A session open for writing holds an exclusive advisory lock (``flock``) on its file until
:meth:`Session.close`; a second writer gets ``SessionInUseError`` ("session is in use")
at once, never waits. The operating system drops the lock when the process dies, so a crash
never leaves a session locked. ``Session.open(path, read_only=True)`` takes no lock (status,
export, a notebook watching the progress). Locks need POSIX ``fcntl``; elsewhere none is taken.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

import bayeval.session._store as store
from bayeval._constraints import Integer, OneOf, Optional, Positive, Prob, Text, validate
from bayeval._validation import check_choice
from bayeval.session._store import SessionInUseError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from bayeval.session.exchange import ImportReport

__all__ = ["LABEL_RULES", "SCHEMA_VERSION", "Session", "SessionInUseError"]

# 2: multiclass sessions (answers are class indices); binary sessions are still written as 1.
# 3: a model selection session with an audit (the audits table), set when the first is drawn.
SCHEMA_VERSION = 3
MULTICLASS_SCHEMA = 2
LABEL_RULES = ("latest", "majority", "dawid-skene")


class Session:
    """A labelling session kept in one SQLite file (see the module notes for the schema).

    Create one with :meth:`create`, reopen it with :meth:`open`; then :meth:`ask`,
    :meth:`tell`, :meth:`estimate` as with a sampler.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(2_000) < 0.05
    >>> scores = np.where(truth, rng.beta(5, 2, truth.size), rng.beta(1, 8, truth.size))
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "labels.db"
    >>> with be.Session.create(path, be.Pool(scores), be.measures.FScore(), "static_is",
    ...                        rng=7) as sess:
    ...     ids = sess.ask(20)
    ...     sess.tell(ids, truth[ids], annotator="ann")
    >>> with be.Session.open(path) as sess:      # later, in another process
    ...     sess.labels_count(), len(sess.ask(20))
    (20, 20)
    """

    def __init__(self, path: Path, connection: sqlite3.Connection, sampler: Any, meta: dict):
        self.path, self._db, self.sampler, self.meta = path, connection, sampler, meta
        self._broken = False
        self._lock: Any = None
        self.read_only = False
        # every answer per item, in order: (annotator, label); see "Several annotators"
        self._answers: dict[int, list[tuple[str | None, int]]] = {}

    # -- creating and opening ----------------------------------------------------------------------
    @classmethod
    @validate(label_rule=OneOf(LABEL_RULES))
    def create(
        cls,
        path: Any,
        pool: Any,
        measure: Any,
        sampler: str = "ais",
        *,
        rng: int | None = None,
        label_rule: str = "latest",
        pool_file: Any = None,
        **sampler_options: Any,
    ) -> Session:
        """Start a session in a new file.

        Parameters
        ----------
        path : str or pathlib.Path
            A file that does not exist yet.
        pool : bayeval.Pool
            The items to label, with their scores and predictions; stored in the session
            (or in ``pool_file``).
        measure : bayeval.measures.Measure
            The measure the sampler estimates; stored in the session.
        sampler : str, default "ais"
            A name of ``bayeval.sampling.run.ALL_SAMPLERS``.
        rng : int, optional
            The sampler's seed (drawn and stored when not given): replay needs it.
        label_rule : {"latest", "majority", "dawid-skene"}, default "latest"
            How estimates resolve an item's label when it has several answers (module notes).
        pool_file : str or pathlib.Path, optional
            Keep the pool outside the session, for very large pools: an ``.npz`` file
            (``numpy.savez``, no pickle) holding ``scores``, ``predictions`` and ``ids``. It is
            written if it does not exist, and must hold this pool if it does. The session
            stores its absolute path and the pool's checksum, and :meth:`open` checks it.
        **sampler_options
            Passed to the sampler; they must be JSON values (or a ``DirichletTree``).
        """
        from bayeval._version import __version__
        from bayeval.sampling.run import sampler_class

        path = Path(path)
        if path.exists():
            raise ValueError(f"`path` must not exist yet (a session is never overwritten): {path}")
        if not path.parent.is_dir():
            raise ValueError(f"`path` must be in an existing folder; {path.parent} is not one.")
        if rng is None:
            rng = int(np.random.SeedSequence().generate_state(1)[0])
        elif isinstance(rng, bool) or not isinstance(rng, int | np.integer):
            raise ValueError(
                f"`rng` must be an integer seed (a session replays from it); got {rng!r}."
            )
        if not dataclasses.is_dataclass(measure) or isinstance(measure, type):
            raise ValueError(
                "`measure` must be a bayeval.measures measure such as Accuracy() (a session "
                f"stores it); got {measure!r}."
            )
        instance = sampler_class(sampler)(pool, measure, rng=int(rng), **sampler_options)
        arrays = {
            "scores": pool.scores,
            "predictions": pool.predictions,
            "ids": store.storable_ids(pool),
        }
        if pool.judge is not None:  # absent otherwise: older sessions' checksums still hold
            arrays["judge"] = pool.judge
        multiclass = pool.classes is not None
        meta = {
            "format": store.FORMAT,
            "bayeval_version": __version__,
            "created": store.now(),
            "sampler": sampler,
            "options": json.dumps(store.encode_options(sampler_options), sort_keys=True),
            "measure": json.dumps(store.encode_dataclass(measure), sort_keys=True),
            "seed": str(int(rng)),
            "pool_sha256": store.pool_checksum(arrays),
            "systems": json.dumps(list(pool.systems) if pool.n_systems > 1 else None),
            "label_rule": label_rule,
        }
        if multiclass:  # absent otherwise: binary sessions stay readable by older bayeval
            meta["classes"] = json.dumps(list(pool.classes))
        stored = arrays
        if pool_file is not None:
            meta["pool_file"] = str(
                store.write_pool_file(Path(pool_file), arrays, meta["pool_sha256"])
            )
            stored = {}
        db = store.connect(path)
        lock = store.lock(path)
        with db:
            db.executescript(store.schema(multiclass))
            db.execute(f"PRAGMA user_version = {MULTICLASS_SCHEMA if multiclass else 1}")
            db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
            db.executemany(
                "INSERT INTO arrays VALUES (?, ?)",
                [(name, store.to_bytes(values)) for name, values in stored.items()],
            )
        session = cls(path, db, instance, meta)
        session._lock = lock
        return session

    @classmethod
    def open(cls, path: Any, *, read_only: bool = False, pool_file: Any = None) -> Session:
        """Reopen a session: rebuild its sampler and replay every question and answer.

        Parameters
        ----------
        path : str or pathlib.Path
            The session file, written by :meth:`create`.
        read_only : bool, default False
            Take no lock and refuse :meth:`ask` and :meth:`tell` (to watch a session another
            process is labelling).
        pool_file : str or pathlib.Path, optional
            For a session created with ``pool_file``: where that file is now, if it moved
            (the session's record is not changed).

        Raises
        ------
        ValueError
            If the file is missing, not a bayeval session (foreign or truncated), written by a
            newer schema, or its pool (stored, or the pool file) does not match its checksum.
        SessionInUseError
            If another process has the session open for writing.
        """
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"`path` must be an existing session file; {path} does not exist.")
        lock = None if read_only else store.lock(path)
        try:
            session = cls._load(path, pool_file)
        except BaseException:
            store.unlock(lock)
            raise
        session._lock, session.read_only = lock, read_only
        return session

    @classmethod
    def _load(cls, path: Path, pool_file: Any) -> Session:
        db = store.connect(path)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            arrays = {
                name: store.from_bytes(data) for name, data in db.execute("SELECT * FROM arrays")
            }
        except sqlite3.DatabaseError as err:
            db.close()
            raise ValueError(
                f"{path} is not a bayeval session (or it is damaged): sqlite says {err}."
            ) from None
        if meta.get("format") != store.FORMAT:
            db.close()
            raise ValueError(f"{path} is not a bayeval session (no session metadata).")
        if version > SCHEMA_VERSION:
            db.close()
            raise ValueError(
                f"{path} was written by a newer bayeval (session schema {version}); this "
                f"bayeval reads schema {SCHEMA_VERSION}. Upgrade bayeval to open it."
            )
        try:
            arrays = store.checked_pool(arrays, meta, path, pool_file)
        except ValueError:
            db.close()
            raise
        sampler = store.rebuild(meta, arrays)
        session = cls(path, db, sampler, meta)
        try:
            session._replay()
        except BaseException:
            db.close()
            raise
        return session

    # -- the protocol --------------------------------------------------------------------------
    def ask(self, k: int | None = None) -> np.ndarray:
        """Ask the sampler for ``k`` items; they are recorded before the ids are returned."""
        self.check_writable()
        ids = self.sampler.ask(k)
        self._record_questions(ids)
        return ids

    @validate(n=Integer(minimum=0), agreements=Integer(minimum=0))
    def ask_audit(self, n: int, *, agreements: int = 0) -> np.ndarray:
        """Draw audit items of a model selection; recorded before the ids are returned.

        :meth:`bayeval.sampling.ModelSelection.ask_audit`: uniformly among the disagreements
        neither labelled nor pending, after every chosen label (the session then asks no more
        chosen items). Answer them with :meth:`tell` (or export and import them) like any
        question; :meth:`audited_differences` reads the differences from them, and
        ``session.sampler.audit`` lists them. Reopened, the session has the same audit.

        Parameters
        ----------
        n : int
            Disagreements wanted.
        agreements : int, default 0
            Agreements wanted (for :meth:`audited_levels`).

        Returns
        -------
        numpy.ndarray
            Their pool ids, in the order drawn.
        """
        self.check_writable()
        self._check_model_selection("ask_audit()")
        ids = self.sampler.ask_audit(n, agreements=agreements)
        self._record_questions(ids, audit=agreements)
        return ids

    def audited_differences(self, *, label_rule: str | None = None, **options: Any):
        """Return every pairwise difference of accuracy from the chosen labels and the audit.

        :meth:`bayeval.sampling.ModelSelection.audited_differences` on the audit items
        answered so far, with every label resolved by ``label_rule`` (default the session's,
        as in :meth:`estimate`).

        Parameters
        ----------
        label_rule : {"latest", "majority"}, optional
            How an item with several answers gets its label.
        **options
            ``prior``, ``draws`` of :func:`bayeval.comparison.audited_differences`.

        Returns
        -------
        bayeval.comparison.Differences
        """
        return self._audited("audited_differences", label_rule, options)

    def audited_levels(self, *, label_rule: str | None = None, **options: Any):
        """Return each system's own measure from the chosen labels and the audit.

        :meth:`bayeval.sampling.ModelSelection.audited_levels` (an audit with agreements),
        with labels resolved as in :meth:`audited_differences`.

        Parameters
        ----------
        label_rule : {"latest", "majority"}, optional
            How an item with several answers gets its label.
        **options
            ``measure`` (default the session's), ``prior``, ``draws`` of
            :func:`bayeval.comparison.audited_levels`.

        Returns
        -------
        bayeval.comparison.Levels
        """
        return self._audited("audited_levels", label_rule, options)

    def _audited(self, method: str, label_rule: str | None, options: dict):
        """Call the sampler's ``method`` with labels resolved by ``label_rule``."""
        rule = self._rule(label_rule)
        self._check_model_selection(f"{method}()")
        if rule == "dawid-skene":
            raise ValueError(
                f"`label_rule` must be 'latest' or 'majority' for {method}(); got "
                "'dawid-skene' (the audit reads one label per item)."
            )
        return getattr(self._relabelled(rule), method)(**options)

    def _check_model_selection(self, what: str) -> None:
        if self.meta["sampler"] != "model_selection":
            raise ValueError(
                f"{what} needs a session of the model_selection sampler; this one's is "
                f"{self.meta['sampler']!r}."
            )

    def _record_questions(self, ids: np.ndarray, *, audit: int | None = None) -> None:
        """Record the items an ask returned as one event; ``audit``: the audit's agreements."""
        sampler = self.sampler
        positions = np.atleast_1d(sampler.pool.positions(ids))
        strata = getattr(sampler, "strata", None)
        stratum = [None] * positions.size if strata is None else strata.ids[positions].tolist()
        probability = [None if np.isnan(q) else q for q in sampler.question_probability(ids)]
        rows = zip(positions.tolist(), stratum, probability, strict=True)
        try:
            with self._db:
                seq = self._event("ask", _rng_state(sampler))
                self._db.executemany(
                    "INSERT INTO questions VALUES (?, ?, ?, ?, ?, ?)",
                    [(seq, rank, p, sampler.stage, h, q) for rank, (p, h, q) in enumerate(rows)],
                )
                if audit is not None:  # a bayeval that cannot replay audits refuses the file
                    self._db.execute(store.AUDIT_TABLE)
                    self._db.execute("INSERT INTO audits VALUES (?, ?)", (seq, audit))
                    self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.Error:
            self._broken = True  # the sampler moved on without the record: reopen
            raise

    @validate(annotator=Optional(Text()))
    def tell(self, ids: Any, labels: Any, annotator: str | None = None) -> None:
        """Record answers (committed to the file before this returns).

        Answers for pending items label them; answers for labelled items are re-judgements
        (see the module notes). An answer equal to the same annotator's latest one for the item
        is skipped.

        Parameters
        ----------
        ids : array_like
            Pool ids, pending or already labelled.
        labels : array_like of {0, 1}
            The label of each id, in the same order (a multiclass pool: class indices or
            names).
        annotator : str, optional
            Who gave the answers, recorded with them (majority votes count each annotator's
            latest answer).

        Raises
        ------
        ValueError
            For ids never asked, repeated ids, labels outside ``{0, 1}`` (the pool's classes),
            or lengths that differ; nothing is recorded then.
        """
        self.record(ids, labels, annotator)

    @validate(annotator=Optional(Text()))
    def record(self, ids: Any, labels: Any, annotator: str | None = None) -> int:
        """Do what :meth:`tell` does, and return how many answers were recorded."""
        self.check_writable()
        sampler = self.sampler
        positions, values = sampler.told(ids, labels)
        if self.meta["sampler"] == "stochastic_ais":  # every answer is a draw's label
            first = np.ones(positions.size, bool)
        else:
            if np.unique(positions).size != positions.size:
                raise ValueError("`ids` must not repeat an item in one tell().")
            first = ~sampler.is_labelled(positions)
        keep = first | np.array(
            [self._changes(p, annotator, y) for p, y in zip(positions, values, strict=True)], bool
        )
        positions, values, first = positions[keep], values[keep], first[keep]
        if positions.size == 0:
            return 0
        told = False
        try:
            with self._db:  # one transaction: the rows go in only if the sampler accepts them
                seq = self._event("tell")
                if first.any():
                    sampler.tell(sampler.pool.ids_at(positions[first]), values[first])
                told = True
                self._db.executemany(
                    "INSERT INTO answers VALUES (?, ?, ?, ?, ?)",
                    [
                        (seq, rank, p, y, annotator)
                        for rank, (p, y) in enumerate(
                            zip(positions.tolist(), values.tolist(), strict=True)
                        )
                    ],
                )
        except sqlite3.Error:
            self._broken = told  # the sampler has the labels, the file does not: reopen
            raise
        self._remember(positions, values, annotator)
        return int(positions.size)

    def question_log(self) -> list[tuple[int, int, int | None, float | None, int, int]]:
        """Return every question asked, oldest first: the record exports are built from.

        One tuple per question: ``(position, stage, stratum, probability, event, rank)``, the
        item's pool position, the sampler's stage and stratum (None where it has none), the
        probability with which it was selected, and the ``ask`` event and the rank within it.
        """
        return self._db.execute(
            "SELECT item, stage, stratum, probability, event, rank FROM questions "
            "ORDER BY event, rank"
        ).fetchall()

    def answers(self):
        """Return every answer, in order, as a pandas DataFrame.

        Columns ``id``, ``label``, ``annotator``, ``at`` (UTC time of the ``tell``) and
        ``first`` (whether it was the item's first answer, the one the sampler used).
        """
        import pandas as pd

        rows = self._db.execute(
            "SELECT a.item, a.label, a.annotator, e.at FROM answers a "
            "JOIN events e ON e.seq = a.event ORDER BY a.event, a.rank"
        ).fetchall()
        frame = pd.DataFrame(rows, columns=["position", "label", "annotator", "at"])
        frame["first"] = ~frame["position"].duplicated()
        frame.insert(0, "id", self.sampler.pool.ids_at(frame.pop("position").to_numpy(np.int64)))
        return frame

    def resolved_labels(self, label_rule: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Return the ids of the labelled items and their labels under ``label_rule``.

        ``label_rule`` defaults to the session's (``"latest"``, ``"majority"`` or
        ``"dawid-skene"``: the most probable labels of :meth:`annotator_posterior`, the
        annotators' model alone; :meth:`estimate` takes those of the joint model of the
        answers and the scores).
        """
        rule = self._rule(label_rule)
        positions = np.fromiter(self._answers, np.int64, len(self._answers))
        ids = self.sampler.pool.ids_at(positions)
        if rule == "dawid-skene":
            return ids, self.annotator_posterior().labels().loc[ids].to_numpy(dtype=int)
        labels = np.array([_resolve(self._answers[p], rule) for p in positions.tolist()], int)
        return ids, labels

    def annotator_posterior(self, model: Any = None, *, rng: Any = 0):
        """Fit a Dawid–Skene model to every answer of the session.

        Each annotator's confusion matrix and each labelled item's true label, from all the
        answers (re-judgements included; answers without an annotator count as
        ``"unnamed"``), the items' prevalences by score stratum of the pool.

        Parameters
        ----------
        model : bayeval.models.DawidSkene, optional
            Default ``DawidSkene()``.
        rng : int or numpy.random.Generator, default 0
            Seed of the draws (fixed, so that the same answers give the same estimate).

        Returns
        -------
        bayeval.models.AnnotatorPosterior
            ``.annotator_summary()`` gives each annotator's accuracy with its interval.
        """
        from bayeval.models.dawid_skene import DawidSkene

        if not self._answers:
            raise ValueError("annotator_posterior() needs answers: tell() some labels first.")
        rows = [(p, "unnamed" if who is None else who, y)
                for p, answers in self._answers.items() for who, y in answers]  # fmt: skip
        positions, names, labels = zip(*rows, strict=True)
        pool = self.sampler.pool
        model = DawidSkene() if model is None else model
        ids = pool.ids_at(np.array(positions, dtype=np.int64))
        classes = tuple(range(pool.n_classes))  # every class, answered yet or not
        return model.fit(ids, list(names), list(labels), classes=classes, pool=pool, rng=rng)

    @validate(n=Integer(minimum=1), annotator=Optional(Text()))
    def second_opinions(self, n: int, annotator: str | None = None) -> np.ndarray:
        """Return up to ``n`` labelled items whose label the annotators' model is least sure of.

        The items whose probability of their most probable label under
        :meth:`annotator_posterior` is lowest (an answer from an annotator the model trusts
        little, answers that disagree), leaving out those ``annotator`` has answered already:
        the items to ask a second (or third) annotator about. Their answers, told with
        :meth:`tell`, are re-judgements, and every estimate with ``label_rule="dawid-skene"``
        uses them.

        Parameters
        ----------
        n : int
            Items wanted (fewer when fewer are left).
        annotator : str, optional
            The annotator who will answer: the items they answered are left out.

        Returns
        -------
        numpy.ndarray
            Their ids, least sure first.
        """
        probability = self.annotator_posterior().label_probability()
        sureness = probability.max(axis=1).to_numpy()
        positions = self.sampler.pool.positions(probability.index.to_numpy())
        answered = np.array([any(who == annotator for who, _ in self._answers.get(p, ()))
                             for p in positions.tolist()])  # fmt: skip
        order = [i for i in np.argsort(sureness, kind="stable") if not answered[i]]
        return probability.index.to_numpy()[order[:n]]

    def estimate(self, *, label_rule: str | None = None, **options: Any):
        """Return the sampler's estimate, with labels resolved by ``label_rule``.

        ``label_rule`` defaults to the session's; ``options`` go to
        :meth:`bayeval.sampling.Sampler.estimate`. Where a resolved label differs from an
        item's first answer, the estimate comes from :meth:`bayeval.sampling.Sampler.with_labels`.
        """
        rule = self._rule(label_rule)
        sampler = self.sampler
        if rule == "dawid-skene":
            if self.meta["sampler"] == "stochastic_ais":
                raise ValueError(
                    "`label_rule` 'dawid-skene' needs a sampler of fixed labels; stochastic_ais "
                    "takes every answer as a fresh draw of a random label."
                )
            return sampler.estimate(labels=self.annotator_posterior(), **options)
        if self.meta["sampler"] != "stochastic_ais":
            sampler = self._relabelled(rule)
        return sampler.estimate(**options)

    def _relabelled(self, rule: str):
        """Return the sampler, or its copy whose items carry their labels under ``rule``."""
        changed = [
            (p, _resolve(answers, rule))
            for p, answers in self._answers.items()
            if len(answers) > 1 and _resolve(answers, rule) != answers[0][1]
        ]
        if not changed:
            return self.sampler
        positions, labels = (np.array(v) for v in zip(*changed, strict=True))
        return self.sampler.with_labels(self.sampler.pool.ids_at(positions), labels)

    def labels_count(self) -> int:
        """Labels recorded (distinct items; one per draw for ``stochastic_ais``)."""
        return self.sampler.labels_used

    @property
    def pending(self) -> np.ndarray:
        """Ids asked for and not yet answered, also after a reopen."""
        return self.sampler.pending

    # -- exchange with other labelling tools --------------------------------------------------
    def export_pending(self, path: Any, format: str | None = None, data=None, blind=True) -> int:
        """Write the pending questions to a file for labelling elsewhere; return how many.

        See :func:`bayeval.session.exchange.export_pending` (and its module notes for an
        example).

        Parameters
        ----------
        path : str or pathlib.Path
            The file to write (replaced if it exists).
        format : {"csv", "jsonl", "label-studio"}, optional
            Default from the suffix of ``path``: ``.csv``, ``.jsonl``, ``.json``.
        data : pandas.DataFrame, optional
            More columns per question (e.g. the text to judge), indexed by pool id.
        blind : bool, default True
            Leave out the system's scores and predictions and the design's stage, stratum
            and selection probability, which could sway the people labelling.

        Returns
        -------
        int
            The number of questions written, in the order they were asked.
        """
        from bayeval.session.exchange import export_pending

        return export_pending(self, path, format=format, data=data, blind=blind)

    def import_answers(
        self,
        path: Any,
        format: str | None = None,
        annotator: str | None = None,
        choices: Mapping[str, int] | None = None,
    ) -> ImportReport:
        """Record the answers in a csv, jsonl or Label Studio JSON export file.

        The whole file is checked first (unknown ids, items never asked, labels outside
        ``{0, 1}`` raise ``ValueError`` naming the file, row and value; nothing is recorded
        then). Answers equal to the annotator's latest answer for the item are skipped, so
        importing a file twice changes nothing. See
        :func:`bayeval.session.exchange.import_answers`.

        Parameters
        ----------
        path : str or pathlib.Path
            The file of answers to read.
        format : {"csv", "jsonl", "label-studio"}, optional
            Default from the suffix of ``path``: ``.csv``, ``.jsonl``, ``.json``.
        annotator : str, optional
            The annotator of answers whose row (or Label Studio annotation) names none.
        choices : mapping of str to {0, 1}, optional
            Label Studio only: the label of each choice; default
            ``{"Positive": 1, "Negative": 0}`` (a multiclass pool: each class by its name).

        Returns
        -------
        bayeval.session.exchange.ImportReport
            ``recorded`` answers added, ``skipped`` identical repeats, ``rows`` answers read.
        """
        from bayeval.session.exchange import import_answers

        return import_answers(self, path, format=format, annotator=annotator, choices=choices)

    @validate(width=Optional(Positive()), budget=Optional(Integer(minimum=1)), prob=Prob())
    def stop_reason(
        self, width: float | None = None, budget: int | None = None, prob: float = 0.95
    ) -> str | None:
        """Return why labelling can stop now, or None to go on (optional stopping).

        Parameters
        ----------
        width : float, optional
            Stop when the ``prob`` confidence interval (:meth:`estimate`, then
            ``interval(prob)``) of every output is narrower than ``width``. Before the first
            complete stage there is no estimate: not yet.
        budget : int, optional
            Stop when :meth:`labels_count` has reached ``budget``.
        prob : float, default 0.95
            Probability of the confidence interval whose width is compared with ``width``.

        Returns
        -------
        str or None
            ``"budget spent: 200 labels"`` or ``"interval width 0.041 < 0.05 at 95%"``, or the
            sampler's own rule where it has one (model selection: ``"P(best) 0.953 >= 0.95:
            'a'"``); None when none holds.

        Notes
        -----
        An interval of width 0 is not a reason to stop. Design-based intervals would
        degenerate to a point when the sample shows no variation (a first stage whose labels
        all agree, say); :meth:`bayeval.sampling.Estimate.interval` then falls back to the
        posterior, and where no model applies the zero width is ignored here.
        """
        spent = self.labels_count()
        if budget is not None and spent >= budget:
            return f"budget spent: {spent} labels"
        own_rule = getattr(self.sampler, "stop_reason", None)  # model selection's rule
        if own_rule is not None and own_rule() is not None:
            return own_rule()
        if width is None:
            return None
        try:
            _, lower, upper = self.estimate().per_output(prob)
        except ValueError:  # no complete stage yet
            return None
        widths = upper - lower
        if widths.size == 0 or not np.isfinite(widths).all() or (widths <= 0).any():
            return None  # an undefined or degenerate interval is not narrow
        widest = float(widths.max())
        if widest < width:
            return f"interval width {widest:.3g} < {width:g} at {prob * 100:g}%"
        return None

    def close(self) -> None:
        """Close the file and release its lock (everything told is already committed)."""
        self._db.close()
        store.unlock(self._lock)
        self._lock = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"Session({str(self.path)!r}, sampler={self.meta['sampler']!r}, "
            f"labels={self.labels_count()}, pending={len(self.pending)})"
        )

    # -- internals ------------------------------------------------------------------------------
    def _event(self, kind: str, rng_state: str | None = None) -> int:
        cursor = self._db.execute(
            "INSERT INTO events (kind, at, rng_state) VALUES (?, ?, ?)",
            (kind, store.now(), rng_state),
        )
        return int(cursor.lastrowid)

    def _rule(self, label_rule: str | None) -> str:
        if label_rule is None:
            return self.meta.get("label_rule", "latest")
        return check_choice(label_rule, LABEL_RULES, "label_rule")

    def _changes(self, position: int, annotator: str | None, label: int) -> bool:
        """Whether an answer differs from the annotator's latest answer for the item."""
        for who, value in reversed(self._answers.get(position, ())):
            if who == annotator:
                return value != label
        return True

    def _remember(self, positions: np.ndarray, values: np.ndarray, annotator) -> None:
        for p, y in zip(positions.tolist(), values.tolist(), strict=True):
            self._answers.setdefault(p, []).append((annotator, y))

    def check_writable(self) -> None:
        """Raise ``RuntimeError`` unless the session can record answers (open, not broken)."""
        if self.read_only:
            raise RuntimeError(
                f"{self.path} is open read-only; open it with Session.open(path) to label."
            )
        if self._broken:
            raise RuntimeError(
                "a write to the session file failed; reopen the session (Session.open) to "
                "continue from what was recorded."
            )

    def _replay(self) -> None:
        pool = self.sampler.pool
        events = self._db.execute("SELECT seq, kind, rng_state FROM events ORDER BY seq")
        audits = store.audit_events(self._db)
        for seq, kind, state in events.fetchall():
            if kind == "ask":
                rows = self._db.execute(
                    "SELECT item FROM questions WHERE event = ? ORDER BY rank", (seq,)
                ).fetchall()
                recorded = np.array([r[0] for r in rows], dtype=np.int64)
                if seq in audits:
                    agreements = audits[seq]
                    ids = self.sampler.ask_audit(recorded.size - agreements, agreements=agreements)
                else:
                    ids = self.sampler.ask(recorded.size)
                again = np.atleast_1d(pool.positions(ids))
                if not np.array_equal(again, recorded) or state != _rng_state(self.sampler):
                    raise ValueError(
                        f"{self.path}: replaying ask #{seq} gave other items or another random "
                        "state than recorded; the session was written by a bayeval whose "
                        "sampler draws differently."
                    )
            else:
                rows = self._db.execute(
                    "SELECT item, label, annotator FROM answers WHERE event = ? ORDER BY rank",
                    (seq,),
                ).fetchall()
                items = np.array([r[0] for r in rows], dtype=np.int64)
                labels = np.array([r[1] for r in rows], dtype=np.int64)
                first = (
                    np.ones(items.size, bool)
                    if self.meta["sampler"] == "stochastic_ais"
                    else ~self.sampler.is_labelled(items)
                )
                if first.any():
                    self.sampler.tell(self.sampler.pool.ids_at(items[first]), labels[first])
                for p, y, who in rows:
                    self._answers.setdefault(p, []).append((who, y))


def _rng_state(sampler: Any) -> str:
    return json.dumps(sampler.random_state, sort_keys=True)


def _resolve(answers: list[tuple[str | None, int]], rule: str) -> int:
    """Resolve an item's label from its answers ``[(annotator, label), ...]`` (oldest first).

    ``"majority"``: the label most annotators gave as their latest answer (a plurality among
    several classes); among labels tied for the most votes, that of the most recent answer.
    """
    if rule == "latest" or len(answers) == 1:
        return answers[-1][1]
    votes = {who: label for who, label in answers}  # each annotator's latest answer
    counts: dict[int, int] = {}
    for label in votes.values():
        counts[label] = counts.get(label, 0) + 1
    most = max(counts.values())
    return next(y for _, y in reversed(answers) if counts.get(y, 0) == most)
