"""Deprecated import path: the module is :mod:`bayeval.session.exchange` (removed in 0.2)."""

import warnings

from bayeval.session.exchange import (
    FORMATS,
    ImportReport,
    export_pending,
    import_answers,
    label_studio_config,
)

__all__ = ["FORMATS", "ImportReport", "export_pending", "import_answers", "label_studio_config"]

warnings.warn(
    "bayeval.session_exchange moved to bayeval.session.exchange; import it from there "
    "(the old path is removed in 0.2).",
    DeprecationWarning,
    stacklevel=2,
)
