"""Durable labelling sessions: every question and answer in one SQLite file, replayed on open.

A session holds the pool, the measure, the sampler's name, options and seed, and a log of
events: each ``ask`` (the items it returned) and each ``tell`` (the labels, the annotator, the
time). A ``tell`` is committed before the call returns; :meth:`Session.open` rebuilds the
sampler from its seed and replays the log, so a session interrupted anywhere continues with the
same questions and the same estimates as one that never stopped.

Schema (version 1; ``PRAGMA user_version`` holds it)
-----------------------------------------------------
``meta(key, value)``
    ``format`` (``"bayeval-session"``), ``bayeval_version``, ``created``, ``sampler``,
    ``options`` (JSON), ``measure`` (JSON: class and fields), ``seed``, ``pool_sha256``.
``arrays(name, data)``
    The pool: ``scores``, ``predictions``, ``ids`` as ``numpy.save`` bytes (never pickled).
``events(seq, kind, at)``
    ``kind`` is ``"ask"`` or ``"tell"``, in the order they happened; ``at`` is UTC ISO time.
``questions(event, rank, item)`` and ``answers(event, rank, item, label, annotator)``
    The pool positions each ``ask`` returned and each ``tell`` labelled, in call order.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import sqlite3
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["SCHEMA_VERSION", "Session"]

SCHEMA_VERSION = 1
_FORMAT = "bayeval-session"
_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE arrays (name TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE events (
    seq INTEGER PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('ask', 'tell')),
    at TEXT NOT NULL
);
CREATE TABLE questions (
    event INTEGER NOT NULL REFERENCES events (seq), rank INTEGER NOT NULL,
    item INTEGER NOT NULL, PRIMARY KEY (event, rank)
);
CREATE TABLE answers (
    event INTEGER NOT NULL REFERENCES events (seq), rank INTEGER NOT NULL,
    item INTEGER NOT NULL, label INTEGER NOT NULL CHECK (label IN (0, 1)), annotator TEXT,
    PRIMARY KEY (event, rank)
);
"""


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

    # -- creating and opening ----------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: Any,
        pool: Any,
        measure: Any,
        sampler: str = "ais",
        *,
        rng: int | None = None,
        **sampler_options: Any,
    ) -> Session:
        """Start a session in a new file.

        Parameters
        ----------
        path : str or pathlib.Path
            A file that does not exist yet.
        pool : bayeval.Pool
        measure : bayeval.measures.Measure
        sampler : str, default "ais"
            A name of ``bayeval.sampling.run.SAMPLERS``.
        rng : int, optional
            The sampler's seed (drawn and stored when not given): replay needs it.
        **sampler_options
            Passed to the sampler; they must be JSON values (or a ``DirichletTree``).
        """
        from bayeval import __version__
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
        instance = sampler_class(sampler)(pool, measure, rng=int(rng), **sampler_options)
        arrays = {
            "scores": pool.scores,
            "predictions": pool.predictions,
            "ids": _storable_ids(pool),
        }
        meta = {
            "format": _FORMAT,
            "bayeval_version": __version__,
            "created": _now(),
            "sampler": sampler,
            "options": json.dumps(_encode_options(sampler_options), sort_keys=True),
            "measure": json.dumps(_encode_dataclass(measure), sort_keys=True),
            "seed": str(int(rng)),
            "pool_sha256": _checksum(arrays),
            "systems": json.dumps(list(pool.systems) if pool.n_systems > 1 else None),
        }
        db = _connect(path)
        with db:
            db.executescript(_SCHEMA)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
            db.executemany(
                "INSERT INTO arrays VALUES (?, ?)",
                [(name, _to_bytes(values)) for name, values in arrays.items()],
            )
        return cls(path, db, instance, meta)

    @classmethod
    def open(cls, path: Any) -> Session:
        """Reopen a session: rebuild its sampler and replay every question and answer.

        Raises
        ------
        ValueError
            If the file is missing, not a bayeval session (foreign or truncated), written by a
            newer schema, or its pool does not match its checksum.
        """
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"`path` must be an existing session file; {path} does not exist.")
        db = _connect(path)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            arrays = {name: _from_bytes(data) for name, data in db.execute("SELECT * FROM arrays")}
        except sqlite3.DatabaseError as err:
            db.close()
            raise ValueError(
                f"{path} is not a bayeval session (or it is damaged): sqlite says {err}."
            ) from None
        if meta.get("format") != _FORMAT:
            db.close()
            raise ValueError(f"{path} is not a bayeval session (no session metadata).")
        if version > SCHEMA_VERSION:
            db.close()
            raise ValueError(
                f"{path} was written by a newer bayeval (session schema {version}); this "
                f"bayeval reads schema {SCHEMA_VERSION}. Upgrade bayeval to open it."
            )
        if _checksum(arrays) != meta["pool_sha256"]:
            db.close()
            raise ValueError(f"{path}: the stored pool does not match its checksum.")
        sampler = _rebuild(meta, arrays)
        session = cls(path, db, sampler, meta)
        session._replay()
        return session

    # -- the protocol --------------------------------------------------------------------------
    def ask(self, k: int | None = None) -> np.ndarray:
        """Ask the sampler for ``k`` items; they are recorded before the ids are returned."""
        self._check_usable()
        ids = self.sampler.ask(k)
        positions = np.atleast_1d(self.sampler.pool.positions(ids))
        try:
            with self._db:
                seq = self._event("ask")
                self._db.executemany(
                    "INSERT INTO questions VALUES (?, ?, ?)",
                    [(seq, rank, int(p)) for rank, p in enumerate(positions)],
                )
        except sqlite3.Error:
            self._broken = True  # the sampler moved on without the record: reopen
            raise
        return ids

    def tell(self, ids: Any, labels: Any, annotator: str | None = None) -> None:
        """Record labels (committed to the file before this returns).

        Invalid input raises the sampler's ``ValueError`` and records nothing.
        """
        self._check_usable()
        positions = np.atleast_1d(self.sampler.pool.positions(ids)).astype(np.int64)
        told = False
        try:
            with self._db:  # one transaction: the rows go in only if the sampler accepts them
                seq = self._event("tell")
                self.sampler.tell(ids, labels)
                told = True
                values = np.atleast_1d(np.asarray(labels)).astype(int)
                self._db.executemany(
                    "INSERT INTO answers VALUES (?, ?, ?, ?, ?)",
                    [
                        (seq, rank, int(p), int(y), annotator)
                        for rank, (p, y) in enumerate(zip(positions, values, strict=True))
                    ],
                )
        except sqlite3.Error:
            self._broken = told  # the sampler has the labels, the file does not: reopen
            raise

    def estimate(self, **options: Any):
        """Return the sampler's estimate (see :meth:`bayeval.sampling.Sampler.estimate`)."""
        return self.sampler.estimate(**options)

    def labels_count(self) -> int:
        """Labels recorded (distinct items; one per draw for ``stochastic_ais``)."""
        return self.sampler.labels_used

    @property
    def pending(self) -> np.ndarray:
        """Ids asked for and not yet answered, also after a reopen."""
        return self.sampler.pending

    def close(self) -> None:
        """Close the file (everything told is already committed)."""
        self._db.close()

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
    def _event(self, kind: str) -> int:
        cursor = self._db.execute("INSERT INTO events (kind, at) VALUES (?, ?)", (kind, _now()))
        return int(cursor.lastrowid)

    def _check_usable(self) -> None:
        if self._broken:
            raise RuntimeError(
                "a write to the session file failed; reopen the session (Session.open) to "
                "continue from what was recorded."
            )

    def _replay(self) -> None:
        pool = self.sampler.pool
        for seq, kind in self._db.execute("SELECT seq, kind FROM events ORDER BY seq").fetchall():
            if kind == "ask":
                rows = self._db.execute(
                    "SELECT item FROM questions WHERE event = ? ORDER BY rank", (seq,)
                ).fetchall()
                recorded = np.array([r[0] for r in rows], dtype=np.int64)
                again = np.atleast_1d(pool.positions(self.sampler.ask(len(recorded))))
                if not np.array_equal(again, recorded):
                    raise ValueError(
                        f"{self.path}: replaying ask #{seq} gave other items than recorded; the "
                        "session was written by a bayeval whose sampler draws differently."
                    )
            else:
                rows = self._db.execute(
                    "SELECT item, label FROM answers WHERE event = ? ORDER BY rank", (seq,)
                ).fetchall()
                if rows:
                    items = np.array([r[0] for r in rows], dtype=np.int64)
                    self.sampler.tell(self.sampler._ids(items), [r[1] for r in rows])


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level="DEFERRED")
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")  # a committed answer survives a power cut
    except sqlite3.DatabaseError:
        pass  # not a database: reported by the caller's first read
    return db


def _rebuild(meta: dict, arrays: dict) -> Any:
    import bayeval as be
    from bayeval.sampling.run import sampler_class

    ids = arrays["ids"]
    pool = be.Pool(
        arrays["scores"],
        predictions=arrays["predictions"],
        ids=None if ids.size == 0 else ids,
        systems=json.loads(meta.get("systems", "null")),
    )
    measure = _decode_dataclass(json.loads(meta["measure"]), be.measures)
    options = _decode_options(json.loads(meta["options"]))
    return sampler_class(meta["sampler"])(pool, measure, rng=int(meta["seed"]), **options)


def _storable_ids(pool: Any) -> np.ndarray:
    if pool.has_default_ids:
        return np.empty(0, dtype=np.int64)  # positions are the ids
    ids = pool.ids
    return ids.astype(str) if ids.dtype == object else ids


def _to_bytes(values: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(values), allow_pickle=False)
    return buffer.getvalue()


def _from_bytes(data: bytes) -> np.ndarray:
    return np.load(io.BytesIO(data), allow_pickle=False)


def _checksum(arrays: dict) -> str:
    digest = hashlib.sha256()
    for name in sorted(arrays):
        digest.update(name.encode())
        digest.update(_to_bytes(arrays[name]))
    return digest.hexdigest()


def _encode_dataclass(obj: Any) -> dict:
    values = {}
    for f in fields(obj):
        value = getattr(obj, f.name)
        values[f.name] = value.tolist() if isinstance(value, np.ndarray) else value
    return {"class": type(obj).__name__, "fields": values}


def _decode_dataclass(spec: dict, namespace: Any) -> Any:
    return getattr(namespace, spec["class"])(**spec["fields"])


def _encode_options(options: dict) -> dict:
    from bayeval.models import DirichletTree

    out = {}
    for key, value in options.items():
        if isinstance(value, DirichletTree):
            out[key] = {"__model__": _encode_dataclass(value)}
            continue
        try:
            json.dumps(value)
        except TypeError:
            raise ValueError(
                f"sampler option `{key}` must be a JSON value (number, string, list) or a "
                f"DirichletTree, so that the session can rebuild the sampler; got {value!r}."
            ) from None
        out[key] = value
    return out


def _decode_options(options: dict) -> dict:
    from bayeval import models

    return {
        key: _decode_dataclass(value["__model__"], models)
        if isinstance(value, dict) and "__model__" in value
        else value
        for key, value in options.items()
    }


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")
