"""Measures by name: what ``bayeval evaluate --measure`` and sessions accept.

Examples
--------
>>> from bayeval.measures import by_name
>>> by_name("f2")
FScore(beta=2.0)
>>> by_name("macro_f1", n_classes=3)
ClassMeasure(kind='macro_f1', n_classes=3)
"""

from __future__ import annotations

from bayeval._core.multiclass import SCALAR_MEASURES
from bayeval._validation import check_choice

__all__ = ["MULTICLASS_NAMES", "NAMES", "by_name"]

#: A measure's name -> (its class in :mod:`bayeval.measures`, the class's arguments).
NAMES: dict[str, tuple[str, dict]] = {
    "f1": ("FScore", {"beta": 1.0}),
    "f2": ("FScore", {"beta": 2.0}),
    "f0.5": ("FScore", {"beta": 0.5}),
    "precision": ("Precision", {}),
    "recall": ("Recall", {}),
    "accuracy": ("Accuracy", {}),
    "balanced_accuracy": ("BalancedAccuracy", {}),
    "matthews_correlation": ("MatthewsCorrelation", {}),
    "fowlkes_mallows": ("FowlkesMallows", {}),
}


#: The measures of a multiclass system (:class:`~bayeval.measures.ClassMeasure`'s kinds).
MULTICLASS_NAMES = SCALAR_MEASURES


def by_name(name: str, n_classes: int | None = None):
    """Return the measure called ``name``.

    ``name`` is a key of :data:`NAMES`; with ``n_classes`` (a multiclass system) one of
    :data:`MULTICLASS_NAMES`, a :class:`~bayeval.measures.ClassMeasure` of that many classes.
    """
    from bayeval import measures

    if n_classes is not None:
        kind = check_choice(name, MULTICLASS_NAMES, "name")
        return measures.ClassMeasure(kind, n_classes=n_classes)
    cls, kwargs = NAMES[check_choice(name, tuple(NAMES), "name")]
    return getattr(measures, cls)(**kwargs)
