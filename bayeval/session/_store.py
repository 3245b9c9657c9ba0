"""How a session is stored: the SQLite schema, the file lock, the pool's arrays and JSON codecs.

The schema is documented in :mod:`bayeval.session.core`.
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

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None


class SessionInUseError(RuntimeError):
    """Another process (or another open ``Session``) is writing to the session file."""


FORMAT = "bayeval-session"
SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE arrays (name TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE events (
    seq INTEGER PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('ask', 'tell')),
    at TEXT NOT NULL, rng_state TEXT
);
CREATE TABLE questions (
    event INTEGER NOT NULL REFERENCES events (seq), rank INTEGER NOT NULL,
    item INTEGER NOT NULL, stage INTEGER NOT NULL, stratum INTEGER, probability REAL,
    PRIMARY KEY (event, rank)
);
CREATE TABLE answers (
    event INTEGER NOT NULL REFERENCES events (seq), rank INTEGER NOT NULL,
    item INTEGER NOT NULL, label INTEGER NOT NULL CHECK (label IN (0, 1)), annotator TEXT,
    PRIMARY KEY (event, rank)
);
"""

#: Which ``ask`` events drew a model selection's audit, and how many of their items were drawn
#: among the agreements (schema 3): created at the first audit, so that sessions written
#: before it stay as they were.
AUDIT_TABLE = """
CREATE TABLE IF NOT EXISTS audits (
    event INTEGER PRIMARY KEY REFERENCES events (seq), agreements INTEGER NOT NULL
)"""


def audit_events(db: sqlite3.Connection) -> dict[int, int]:
    """Return the ``ask`` events that drew the audit, each with its agreements drawn."""
    exists = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audits'")
    if exists.fetchone() is None:  # before schema 3
        return {}
    return dict(db.execute("SELECT event, agreements FROM audits").fetchall())


def schema(multiclass: bool) -> str:
    """Return the tables of a session; a multiclass one's answers are any class index."""
    if not multiclass:
        return SCHEMA
    return SCHEMA.replace("CHECK (label IN (0, 1))", "CHECK (label >= 0)")


def lock(path: Path):
    """Take the session's exclusive advisory lock, or raise ``SessionInUseError``."""
    if fcntl is None:  # pragma: no cover - not POSIX
        return None
    handle = open(path, "rb")  # noqa: SIM115 - held until Session.close
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise SessionInUseError(
            f"session is in use: {path} is open for writing elsewhere (another process or "
            "Session). Close it there first, or use Session.open(path, read_only=True) to "
            "read it."
        ) from None
    return handle


def unlock(handle) -> None:
    if handle is not None:
        handle.close()  # closing the descriptor releases the flock


def connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level="DEFERRED")
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")  # a committed answer survives a power cut
    except sqlite3.DatabaseError:
        pass  # not a database: reported by the caller's first read
    return db


def rebuild(meta: dict, arrays: dict) -> Any:
    from bayeval import measures
    from bayeval.pool import Pool
    from bayeval.sampling.run import sampler_class

    ids = arrays["ids"]
    pool = Pool(
        arrays["scores"],
        predictions=arrays["predictions"],
        ids=None if ids.size == 0 else ids,
        systems=json.loads(meta.get("systems", "null")),
        judge=arrays.get("judge"),
        classes=json.loads(meta.get("classes", "null")),
    )
    measure = decode_dataclass(json.loads(meta["measure"]), measures)
    options = decode_options(json.loads(meta["options"]))
    return sampler_class(meta["sampler"])(pool, measure, rng=int(meta["seed"]), **options)


POOL_ARRAYS = ("scores", "predictions", "ids")
OPTIONAL_POOL_ARRAYS = ("judge",)  # stored only when the pool has it


def write_pool_file(path: Path, arrays: dict, checksum: str) -> Path:
    """Write the pool to ``path`` (``.npz``), or check that the file there holds it."""
    if path.suffix != ".npz":
        raise ValueError(f"`pool_file` must be an .npz file; got {path}.")
    if path.exists():
        if pool_checksum(read_pool_file(path, path)) != checksum:
            raise ValueError(
                f"`pool_file` {path} exists and holds another pool (checksum mismatch); give a "
                "new path or the file of this pool."
            )
    else:
        np.savez(path, **arrays)
    return path.resolve()


def read_pool_file(path: Path, session: Path) -> dict:
    if not path.is_file():
        raise ValueError(
            f"{session}: the session's pool file {path} is missing; if it moved, pass its new "
            "place: Session.open(path, pool_file=...)."
        )
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in POOL_ARRAYS}
            arrays.update({name: data[name] for name in OPTIONAL_POOL_ARRAYS if name in data})
            return arrays
    except (KeyError, ValueError, OSError) as err:
        raise ValueError(f"{path} is not a bayeval pool file: {err}.") from None


def storable_ids(pool: Any) -> np.ndarray:
    if pool.has_default_ids:
        return np.empty(0, dtype=np.int64)  # positions are the ids
    ids = pool.ids
    return ids.astype(str) if ids.dtype == object else ids


def to_bytes(values: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(values), allow_pickle=False)
    return buffer.getvalue()


def from_bytes(data: bytes) -> np.ndarray:
    return np.load(io.BytesIO(data), allow_pickle=False)


def checked_pool(arrays: dict, meta: dict, session: Path, pool_file: Any) -> dict:
    """Return the session's pool arrays (stored, or read from its pool file), checksum checked.

    ``pool_file``: where the pool file is now, if it moved (default the one recorded).
    """
    if "pool_file" not in meta:
        if pool_checksum(arrays) != meta["pool_sha256"]:
            raise ValueError(f"{session}: the stored pool does not match its checksum.")
        return arrays
    where = pool_file or meta["pool_file"]
    arrays = read_pool_file(Path(where), session)
    if pool_checksum(arrays) != meta["pool_sha256"]:
        raise ValueError(
            f"{session}: the pool file {where} is a file for another pool (checksum mismatch)."
        )
    return arrays


def pool_checksum(arrays: dict) -> str:
    digest = hashlib.sha256()
    for name in sorted(arrays):
        digest.update(name.encode())
        digest.update(to_bytes(arrays[name]))
    return digest.hexdigest()


def encode_dataclass(obj: Any) -> dict:
    values = {}
    for f in fields(obj):
        value = getattr(obj, f.name)
        values[f.name] = value.tolist() if isinstance(value, np.ndarray) else value
    return {"class": type(obj).__name__, "fields": values}


def decode_dataclass(spec: dict, namespace: Any) -> Any:
    return getattr(namespace, spec["class"])(**spec["fields"])


def encode_options(options: dict) -> dict:
    from bayeval.models import DirichletTree, ScoreCalibration

    out = {}
    for key, value in options.items():
        if isinstance(value, DirichletTree | ScoreCalibration):
            out[key] = {"__model__": encode_dataclass(value)}
            continue
        try:
            json.dumps(value)
        except TypeError:
            raise ValueError(
                f"sampler option `{key}` must be a JSON value (number, string, list) or a "
                f"DirichletTree or ScoreCalibration, so that the session can rebuild the sampler; "
                f"got {value!r}."
            ) from None
        out[key] = value
    return out


def decode_options(options: dict) -> dict:
    from bayeval import models

    return {
        key: decode_dataclass(value["__model__"], models)
        if isinstance(value, dict) and "__model__" in value
        else value
        for key, value in options.items()
    }


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")
