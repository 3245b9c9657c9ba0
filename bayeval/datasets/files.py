"""Scored items from a file (or the bundled FEBRL pool): the pool, what annotators see, labels.

``bayeval evaluate --pool`` and ``bayeval label --pool`` read their pools with these functions;
errors are ``ValueError`` naming the file and the column and row at fault.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bayeval._constraints import Real, validate
from bayeval._validation import check_class_names, class_index, plain

__all__ = ["ScoredItems", "febrl_items", "read_scored_items", "read_system_items"]


@dataclass(frozen=True)
class ScoredItems:
    """A pool to evaluate, what an annotator sees of its items, and the labels if known.

    Attributes
    ----------
    name : str
        The file's name (or the data set's).
    pool : bayeval.Pool
    items : pandas.DataFrame
        One row per item, every column but ``label``: what a person labelling an item sees.
    truth : numpy.ndarray or None
        The ``label`` column as 0/1 (int8; a multiclass pool: class indices) when the file has
        one (a simulation), else None.
    """

    name: str
    pool: Any
    items: Any
    truth: np.ndarray | None


def febrl_items() -> ScoredItems:
    """Return the bundled FEBRL pool (:func:`bayeval.datasets.load_febrl_pairs`) with its labels."""
    from bayeval.datasets._febrl import load_febrl_pairs
    from bayeval.pool import Pool

    pairs = load_febrl_pairs()
    pool = Pool(pairs["score"].to_numpy(), pairs["predicted"].to_numpy())
    truth = pairs["label"].to_numpy().astype(np.int8)
    return ScoredItems("FEBRL record pairs", pool, pairs.drop(columns="label"), truth)


@validate(threshold=Real())
def read_scored_items(
    path: Any, threshold: float = 0.5, judge: str | None = None, classes: Any = None
) -> ScoredItems:
    """Read a CSV or Parquet file of scored items, one row per item.

    Parameters
    ----------
    path : str or pathlib.Path
        A ``.csv`` or ``.parquet`` (``.pq``) file with a column ``score`` and optionally ``id``
        (default: the row number from 0), ``prediction`` (0/1) and ``label`` (0/1).
    threshold : float, default 0.5
        Predictions are ``score >= threshold`` when the file has no ``prediction`` column.
    judge : str, optional
        The column of an automatic judge's 0/1 labels or probabilities (the pool's ``judge``),
        or with ``classes`` its class for every item (names or indices); it is left out of
        ``items``, so an annotator shown the items never sees it.
    classes : sequence of str, optional
        A multiclass pool's class names: ``prediction`` is then required and holds each
        item's predicted class, ``label`` its true class (names or indices), and ``score``
        how sure the system is.

    Returns
    -------
    ScoredItems

    Raises
    ------
    ValueError
        Naming the file, and the column and row at fault.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import pandas as pd
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "items.csv"
    >>> table = {"id": ["a", "b", "c"], "score": [0.9, 0.2, 0.6], "label": [1, 0, 0]}
    >>> pd.DataFrame(table).to_csv(path, index=False)
    >>> items = read_scored_items(path)
    >>> items.pool.predictions.tolist(), items.truth.tolist(), list(items.items.columns)
    ([1, 0, 1], [1, 0, 0], ['id', 'score'])
    """
    from bayeval.pool import Pool

    path, df = _read_frame(path)
    spec = str(path)
    if "score" not in df.columns:
        raise ValueError(
            f"{spec}: a column 'score' is needed (and optionally id, prediction, label); its "
            f"columns are {list(map(str, df.columns))}."
        )
    scores = _numbers(df, "score", spec)
    if classes is not None:
        classes = check_class_names(classes)
        if "prediction" not in df.columns:
            raise ValueError(f"{spec}: a multiclass pool needs a column 'prediction'.")
        predictions = _classes(df, "prediction", spec, classes)
    else:
        predictions = _binary(df, "prediction", spec) if "prediction" in df.columns else None
    truth, ids = _labels_and_ids(df, spec, classes)
    judged = None if judge is None else _judge_column(df, judge, spec, classes)
    try:
        pool = Pool(scores, predictions, threshold, ids, judge=judged, classes=classes)
    except ValueError as err:  # ids repeated or of mixed types (positions count from 0)
        raise ValueError(f"{spec}: column 'id': {err}") from None
    hidden = ["label"] if judge is None else ["label", judge]
    return ScoredItems(path.name, pool, df.drop(columns=hidden, errors="ignore"), truth)


def _judge_column(df, column: str, where: str, classes: tuple | None) -> np.ndarray:
    """Return the judge's column (0/1, probabilities or classes), or raise naming its fault."""
    if column not in df.columns:
        raise ValueError(
            f"{where}: the judge's column {column!r} is not a column; its columns are "
            f"{list(map(str, df.columns))}."
        )
    if classes is not None:
        return _classes(df, column, where, classes)
    values = _numbers(df, column, where)
    bad = (values < 0) | (values > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{where}: column {column!r} must hold the judge's 0/1 labels or probabilities in "
            f"[0, 1]; data row {i + 1} holds {float(values[i])!r}."
        )
    return values


def read_system_items(
    path: Any, systems: Any = None, threshold: float = 0.5, classes: Any = None
) -> ScoredItems:
    """Read a CSV or Parquet file of several systems' outputs, one row per item.

    Parameters
    ----------
    path : str or pathlib.Path
        A ``.csv`` or ``.parquet`` (``.pq``) file with one column per system (its 0/1
        predictions, or scores that ``threshold`` turns into predictions) and optionally ``id``
        and ``label`` (0/1).
    systems : sequence of str, optional
        The systems' columns; default every column but ``id`` and ``label``.
    threshold : float, default 0.5
        A system predicts 1 where its column is at least this.
    classes : sequence of str, optional
        A multiclass pool's class names: each system's column, and ``label``, then hold
        classes (names or indices), and the pool is multiclass with a column per system.

    Returns
    -------
    ScoredItems
        The pool holds the systems' columns as scores, named after them.

    Raises
    ------
    ValueError
        Naming the file, and the column and row at fault, or a system that is not a column.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import pandas as pd
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "runs.csv"
    >>> table = {"a": [1, 0, 1], "b": [0.9, 0.7, 0.2], "label": [1, 0, 0]}
    >>> pd.DataFrame(table).to_csv(path, index=False)
    >>> items = read_system_items(path)
    >>> items.pool.systems, items.pool.predictions.tolist(), items.truth.tolist()
    (('a', 'b'), [[1, 1], [0, 1], [1, 0]], [1, 0, 0])
    """
    from bayeval.pool import Pool

    path, df = _read_frame(path)
    spec = str(path)
    columns = [str(c) for c in df.columns]
    names = [c for c in columns if c not in ("id", "label")] if systems is None else list(systems)
    unknown = [name for name in names if name not in columns]
    if unknown:
        raise ValueError(f"{spec}: systems {unknown} are not columns; its columns are {columns}.")
    if len(names) < 2:
        raise ValueError(f"{spec}: two or more system columns are needed; got {names}.")
    if classes is None:
        scores = np.column_stack([_numbers(df, name, spec) for name in names])
        predicted = None
        if 0.0 < threshold < 1.0:
            _refuse_whole_numbers(scores, names, spec, threshold)
    else:  # the systems are compared by their classes; scores are not used
        predicted = np.column_stack([_classes(df, name, spec, classes) for name in names])
        scores = np.ones(predicted.shape)
    truth, ids = _labels_and_ids(df, spec, classes)
    try:
        pool = Pool(scores, predicted, threshold, ids, systems=names, classes=classes)
    except ValueError as err:
        raise ValueError(f"{spec}: {err}") from None
    return ScoredItems(path.name, pool, df.drop(columns="label", errors="ignore"), truth)


def _read_frame(path: Any):
    """Return the path and the table of a non-empty ``.csv`` or ``.parquet`` file."""
    import pandas as pd

    path = Path(path)
    spec = str(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet", ".pq"):
        raise ValueError(f"expected 'febrl' or a .csv or .parquet file; got {spec!r}.")
    if not path.is_file():
        raise ValueError(f"file {spec!r} does not exist.")
    try:
        df = pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path)
    except ImportError:
        raise ValueError(
            f"reading {spec!r} needs pyarrow, which is not installed: pip install "
            "'bayeval[parquet]'."
        ) from None
    except (OSError, ValueError, pd.errors.ParserError) as err:
        raise ValueError(f"cannot read {spec!r}: {err}") from None
    if df.empty:
        raise ValueError(f"{spec}: the file has no rows.")
    return path, df


def _labels_and_ids(df, spec: str, classes=None):
    """Return the ``label`` column (0/1 or class indices, or None) and the ``id`` column."""
    truth = None
    if "label" in df.columns:
        hint = " Leave the column out to label the items interactively."
        if classes is None:
            truth = _binary(df, "label", spec, hint)
        else:
            truth = _classes(df, "label", spec, classes, hint)
    ids = None
    if "id" in df.columns:
        missing = df["id"].isna().to_numpy()
        if missing.any():
            raise ValueError(
                f"{spec}: column 'id' is empty in data row {int(np.argmax(missing)) + 1}."
            )
        ids = df["id"].to_numpy()
    return truth, ids


def _numbers(df, column: str, where: str) -> np.ndarray:
    """Return a column as finite float64 numbers, or raise naming the first bad row."""
    import pandas as pd

    values = pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{where}: column {column!r} must hold finite numbers; data row {i + 1} holds "
            f"{plain(df[column].iloc[i])!r}."
        )
    return values


def _refuse_whole_numbers(scores, names, where: str, threshold: float) -> None:
    """Raise if a system's column holds whole numbers beyond 0 and 1 (classes, not scores).

    A threshold between 0 and 1 would read every such number as a prediction of 1: such a
    column is classes given without their names, or scores on another scale.
    """
    whole = np.all(scores == np.round(scores), axis=0)
    beyond = whole & np.any((scores != 0) & (scores != 1), axis=0)
    if beyond.any():
        k = int(np.flatnonzero(beyond)[0])
        i = int(np.flatnonzero((scores[:, k] != 0) & (scores[:, k] != 1))[0])
        raise ValueError(
            f"{where}: column {names[k]!r} holds whole numbers other than 0 and 1 (data row "
            f"{i + 1} holds {int(scores[i, k])}), which a threshold of {plain(threshold)} "
            "would read as 1: give the class names (--classes) if they are classes, or a "
            "threshold on their scale (--threshold) if they are scores."
        )


def _classes(df, column: str, where: str, classes: tuple, hint: str = "") -> np.ndarray:
    """Return a column of class names or indices as int8 indices, or raise naming the row."""
    out = np.empty(len(df), dtype=np.int8)
    for row, value in enumerate(df[column].tolist()):
        index = class_index(value, classes)
        if index is not None:
            out[row] = index
            continue
        raise ValueError(
            f"{where}: column {column!r} must hold a class of {list(classes)} (or its index "
            f"0 .. {len(classes) - 1}) in every row; data row {row + 1} holds "
            f"{plain(value)!r}.{hint}"
        )
    return out


def _binary(df, column: str, where: str, hint: str = "") -> np.ndarray:
    """Return a 0/1 (or boolean) column as int8, or raise naming the first bad row."""
    import pandas as pd

    values = df[column]
    if pd.api.types.is_bool_dtype(values) and not values.isna().any():
        return values.to_numpy(dtype=np.int8)
    numbers = pd.to_numeric(values, errors="coerce")
    bad = ~numbers.isin([0, 1]).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{where}: column {column!r} must hold 0 or 1 (or true/false) in every row; data "
            f"row {i + 1} holds {plain(values.iloc[i])!r}.{hint}"
        )
    return numbers.to_numpy(dtype=np.int8)
