"""Durable labelling sessions: a labelling job in one SQLite file, replayed on open.

:mod:`~bayeval.session.core` holds :class:`Session` (its module notes describe the schema, several
annotators and concurrent use), :mod:`~bayeval.session.exchange` the CSV, JSON Lines and Label
Studio files that carry questions out and answers back, and ``_store`` how a session is stored.
"""

from bayeval.session.core import LABEL_RULES, SCHEMA_VERSION, Session, SessionInUseError

__all__ = ["LABEL_RULES", "SCHEMA_VERSION", "Session", "SessionInUseError"]
