"""A labelling widget for notebooks: people label a session's items where they analyse them.

:func:`label` shows the items a :class:`bayeval.Session` asks about, one at a time, with
their fields (text, images by path or URL, any columns named), a button and a key per label,
skip and undo, the progress and the live estimate with its interval. Every answer goes through
the session (:meth:`bayeval.Session.record`), which commits it before the next item is shown,
so a restarted kernel opens the session again and goes on where it stopped. Blind by default:
the system's score and prediction are not shown.

The widget is an `anywidget <https://anywidget.dev>`_ (``pip install bayeval[widget]``); its
front end is ``widget.js`` beside this module.
"""

from bayeval.widget.label import LabelWidget, label

__all__ = ["LabelWidget", "label"]
