"""Opening the session of ``bayeval label``, ``evaluate`` and ``compare`` from their options.

A session that exists is continued, and every option given must agree with it (its settings
never change); a new one is created from ``--pool``. Bad files and sessions in use become
one-line errors naming the option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from bayeval.cli._shared import (
    bad,
    error,
    load_source,
    measure_name,
    run_measure,
    sampler_class,
)

__all__ = ["check_agrees", "check_second_opinions", "open_or_create", "open_session", "same_pool"]


def open_session(path: Path, *, read_only: bool):
    """Open a session, turning ``SessionInUseError`` and bad files into one-line errors."""
    from bayeval.session import Session, SessionInUseError

    try:
        return Session.open(path, read_only=read_only)
    except (SessionInUseError, ValueError) as err:
        raise error(err) from None


def open_or_create(
    path: Path, pool, threshold, measure, sampler, seed, label_rule, source=None, judge=None,
    classes=None, curve=None,
):  # fmt: skip
    """Continue the session at ``path`` or create it from ``--pool``.

    A session that exists is continued; any option given (not None) must agree with it. A new
    one needs ``pool`` and takes the defaults f1 (macro_f1 for a multiclass pool), ais
    (passive), a random seed (stored) and the label rule ``latest`` for options not given.
    ``source``: ``pool`` already read, if it was; ``judge``: ``--judge-column``; ``classes``:
    ``--classes``; ``curve``: ``(method, epsilon)`` of ``--curve``, a new session of the
    precision curve's sampler (:class:`bayeval.sampling.CurveSampler`).

    Returns
    -------
    session : bayeval.session.Session
    source : bayeval.datasets.files.ScoredItems or None
        The ``--pool`` file read (None when a session is continued without it).
    created : bool
    """
    from bayeval.session import Session

    if not path.exists() and pool is not None and curve is None:
        sampler_class("ais" if sampler is None else sampler)  # an unknown --sampler first
    if source is None and pool is not None:
        source = load_source(pool, threshold, judge, classes)
    if path.exists():
        session = open_session(path, read_only=False)
        try:
            check_agrees(session, pool, source, measure, sampler, seed, label_rule)
            if curve is not None and getattr(session.sampler, "curve", None) != curve[0]:
                raise bad(
                    f"the session {session.path} was not created with --curve {curve[0]}; "
                    "leave the option out to continue the session.",
                    "--curve",
                )
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
    options = {}
    if curve is not None:  # the ranks a precision-curve method asks for
        name, chosen = "curve", run_measure("precision", None)
        options = {"curve": curve[0]} | ({} if curve[1] is None else {"epsilon": curve[1]})
    try:
        session = Session.create(
            path,
            source.pool,
            chosen,
            name,
            rng=seed,
            label_rule="latest" if label_rule is None else label_rule.value,
            **options,
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
