"""Pooled evaluation and its bias against systems with unique predictions (Section 3)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["pooled_scores", "pooling_bias"]


def pooled_scores(systems: Mapping[str, Iterable[Any]], judged: Mapping[Any, Any]) -> pd.DataFrame:
    """Score systems against a pool of judged instances, as pooled evaluation does.

    A prediction that was never judged counts as incorrect, and recall is measured against the
    judged correct instances.

    Parameters
    ----------
    systems : mapping of str to iterable of ids
        Each system's predicted instances.
    judged : mapping of id to {0, 1}
        The evaluation dataset: every judged instance and whether it is correct.

    Returns
    -------
    pandas.DataFrame
        ``precision``, ``recall``, ``f1`` indexed by system.

    Examples
    --------
    The example of Figure 2: systems A and B were pooled; C's correct prediction ``i6`` was
    never judged.

    >>> from bayeval.ondemand import pooled_scores
    >>> judged = {"i1": 1, "i2": 1, "i3": 1, "i4": 0, "i5": 0}
    >>> systems = {"C": ["i1", "i3", "i6"]}
    >>> pooled_scores(systems, judged).round(3)
            precision  recall     f1
    system
    C           0.667   0.667  0.667
    """
    judged = _judged(judged)
    positives = {x for x, y in judged.items() if y}
    rows = {}
    for name, predicted in systems.items():
        predicted = set(_ids(predicted, f"systems[{name!r}]"))
        hits = len(predicted & positives)
        p = hits / len(predicted)
        r = hits / len(positives) if positives else np.nan
        rows[name] = {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if hits else 0.0}
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "system"
    return frame


def pooling_bias(
    systems: Mapping[str, Iterable[Any]],
    judged: Mapping[Any, Any],
    *,
    teams: Mapping[str, str] | None = None,
    manual: Iterable[Any] = (),
) -> pd.DataFrame:
    """Measure pooling bias by leaving each team out of the pool (Section 3, after Zobel 1998).

    For each team, the instances that only its systems predicted (and annotators did not find
    by hand, ``manual``) are removed from the evaluation dataset, and the team's systems are
    scored on what is left, as a team that had not taken part in pooling would be. The bias is
    the score on the full dataset minus that unpooled score.

    Parameters
    ----------
    systems : mapping of str to iterable of ids
        Every pooled system's predictions.
    judged : mapping of id to {0, 1}
        The full evaluation dataset (all pooled predictions and the manual finds, judged).
    teams : mapping of str to str, optional
        The team of each system (default: each system is its own team).
    manual : iterable of ids
        Instances found by annotators searching the corpus; they stay in the dataset.

    Returns
    -------
    pandas.DataFrame
        Indexed by system: ``team``, then ``precision``, ``recall``, ``f1`` on the full dataset,
        the ``unpooled_`` scores and the ``bias_`` (full minus unpooled) of each.

    Examples
    --------
    >>> from bayeval.ondemand import pooling_bias
    >>> systems = {"A": ["i1", "i2"], "B": ["i2", "i3"]}
    >>> judged = {"i1": 1, "i2": 1, "i3": 1}
    >>> pooling_bias(systems, judged)[["recall", "unpooled_recall", "bias_recall"]].round(3)
            recall  unpooled_recall  bias_recall
    system
    A        0.667              0.5        0.167
    B        0.667              0.5        0.167
    """
    judged = _judged(judged)
    predicted = {name: set(_ids(ids, f"systems[{name!r}]")) for name, ids in systems.items()}
    teams = {name: name for name in predicted} if teams is None else dict(teams)
    missing = [name for name in predicted if name not in teams]
    if missing:
        raise ValueError(f"`teams` must give the team of every system; missing: {missing}.")
    unjudged = {
        name: sorted(ids - judged.keys(), key=repr)[:3]
        for name, ids in predicted.items()
        if ids - judged.keys()
    }
    if unjudged:
        raise ValueError(
            "`judged` must hold every pooled prediction (the full evaluation dataset); not "
            f"judged: {unjudged}."
        )
    manual = set(_ids(manual, "manual"))
    full = pooled_scores(predicted, judged)
    parts = []
    for team in dict.fromkeys(teams[name] for name in predicted):
        members = [name for name in predicted if teams[name] == team]
        others = set().union(*(ids for name, ids in predicted.items() if teams[name] != team))
        unique = set().union(*(predicted[name] for name in members)) - others - manual
        reduced = {x: y for x, y in judged.items() if x not in unique}
        parts.append(pooled_scores({name: predicted[name] for name in members}, reduced))
    unpooled = pd.concat(parts).loc[full.index]
    out = full.copy()
    out.insert(0, "team", [teams[name] for name in full.index])
    for measure in ("precision", "recall", "f1"):
        out[f"unpooled_{measure}"] = unpooled[measure]
    for measure in ("precision", "recall", "f1"):
        out[f"bias_{measure}"] = full[measure] - unpooled[measure]
    return out


def _judged(judged: Any) -> dict:
    if isinstance(judged, pd.Series):
        judged = judged.to_dict()
    if not isinstance(judged, Mapping):
        raise ValueError(f"`judged` must be a mapping of id to 0/1; got {type(judged).__name__}.")
    out = {}
    for x, y in judged.items():
        if y not in (0, 1):  # True/False compare equal to 1/0
            raise ValueError(f"`judged` must map ids to 0 or 1; {x!r} maps to {y!r}.")
        out[x] = int(y)
    return out


def _ids(ids: Any, name: str) -> list:
    if isinstance(ids, str | bytes):
        raise ValueError(f"`{name}` must be a sequence of ids, not a single string; got {ids!r}.")
    out = ids.tolist() if isinstance(ids, np.ndarray) else list(ids)
    if name.startswith("systems") and not out:
        raise ValueError(f"`{name}` is empty; a system must predict at least one instance.")
    return out
