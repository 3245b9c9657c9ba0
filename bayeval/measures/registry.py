"""Measures by name: what ``bayeval evaluate --measure`` and sessions accept.

Examples
--------
>>> from bayeval.measures import by_name
>>> by_name("f2")
FScore(beta=2.0)
"""

from __future__ import annotations

from bayeval._validation import check_choice

__all__ = ["NAMES", "by_name"]

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


def by_name(name: str):
    """Return the measure called ``name`` (a key of :data:`NAMES`)."""
    from bayeval import measures

    cls, kwargs = NAMES[check_choice(name, tuple(NAMES), "name")]
    return getattr(measures, cls)(**kwargs)
