"""A pool of unlabeled items: the scores and decisions of the systems under evaluation.

A :class:`Pool` holds, for ``M`` items, the score each of ``S`` systems gave it and the decision
(0/1 prediction) it made, plus the item ids by which labels come back from the oracle. It is
built for pools of ``10**8`` items: it keeps the arrays it is given (no copies of float32 or
float64 scores), stores decisions as ``int8``, makes no per-item Python objects, and looks ids
up with a sorted index instead of a dictionary.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from bayeval._constraints import Array, validate
from bayeval._core.score_strata import CHUNK
from bayeval._validation import check_class_names, check_classes, check_scores
from bayeval.strata.partition import STRATIFY_CONSTRAINTS, Method, Strata, stratify_scores

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Pool"]


def _read_only(arr: np.ndarray) -> np.ndarray:
    """Return a read-only view of ``arr`` (the caller's array keeps its own flags)."""
    view = arr.view()
    view.setflags(write=False)
    return view


def _check_predictions(predictions: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Return 0/1 decisions of the given shape as int8, or raise naming the first bad entry."""
    arr = np.asarray(predictions)
    if arr.shape != shape:
        raise ValueError(
            f"`predictions` must have the shape of `scores`, {shape}; got shape {arr.shape}."
        )
    if arr.dtype == bool:
        return arr.astype(np.int8)
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(
            f"`predictions` must contain 0/1 (or boolean) decisions; got dtype {arr.dtype}."
        )
    out = np.empty(shape, dtype=np.int8)
    for start in range(0, shape[0], CHUNK):
        block = arr[start : start + CHUNK]
        bad = (block != 0) & (block != 1)
        if bad.any():
            index = (int(np.argwhere(bad)[0, 0]) + start, *np.argwhere(bad)[0, 1:].tolist())
            where = index[0] if arr.ndim == 1 else index
            raise ValueError(
                f"`predictions` must contain only 0 and 1; entry {where} is {arr[index].item()!r}."
            )
        out[start : start + CHUNK] = block
    return out


def _multiclass_predictions(
    predictions: Any, scores: np.ndarray, classes: tuple[str, ...]
) -> np.ndarray:
    """Return a multiclass pool's predicted classes as int8, checked against the scores."""
    if predictions is None:
        raise ValueError(
            "`predictions` must be given in a multiclass pool (each item's predicted class; "
            "`scores` are how sure the system is); got None."
        )
    shape = np.shape(predictions)
    if shape != scores.shape:
        raise ValueError(
            f"`predictions` must have the shape of `scores`, {scores.shape}; got shape {shape}."
        )
    return check_classes(predictions, "predictions", classes)


def _check_judge(judge: Any, size: int, classes: tuple[str, ...] | None) -> np.ndarray:
    """Return an automatic judge's labels: ``int8`` for 0/1 labels, else probabilities.

    In a multiclass pool, the judge's classes (``int8`` indices). Raises naming ``judge``, the
    first entry outside what is allowed.
    """
    arr = np.asarray(judge)
    if classes is not None:
        if np.shape(judge) != (size,):
            raise ValueError(
                f"`judge` must hold one class per item, shape ({size},); got shape "
                f"{np.shape(judge)}."
            )
        return check_classes(judge, "judge", classes)
    if arr.shape != (size,):
        raise ValueError(
            f"`judge` must hold one label or probability per item, shape ({size},); got shape "
            f"{arr.shape}."
        )
    if arr.dtype == bool:
        return arr.astype(np.int8)
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(
            f"`judge` must hold 0/1 labels or probabilities in [0, 1]; got dtype {arr.dtype}."
        )
    bad = ~((arr >= 0) & (arr <= 1))  # NaN is bad too
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"`judge` must hold 0/1 labels or probabilities in [0, 1]; entry {at} is "
            f"{arr[at].item()!r}."
        )
    if np.all((arr == 0) | (arr == 1)):
        return arr.astype(np.int8)
    return arr.astype(np.float64)


def _strictly_increasing(arr: np.ndarray) -> bool:
    """Tell whether ``arr`` is strictly increasing (hence unique), chunk by chunk."""
    for start in range(0, arr.size - 1, CHUNK):
        run = arr[start : start + CHUNK + 1]
        if not np.all(run[1:] > run[:-1]):
            return False
    return True


def _check_ids(ids: Any, size: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Return ``(ids, order)``: validated unique ids and the permutation that sorts them.

    ``order`` is ``None`` when the ids are already strictly increasing.
    """
    arr = np.asarray(ids)
    if arr.ndim != 1 or arr.size != size:
        raise ValueError(
            f"`ids` must be a 1-d array with one id per item ({size}); got shape {arr.shape}."
        )
    kind = arr.dtype.kind
    if kind not in "iuUSOT":
        raise ValueError(
            f"`ids` must be integers or strings; got dtype {arr.dtype} (use integer codes, or "
            "convert the ids to strings)."
        )
    try:
        order = None if _strictly_increasing(arr) else np.argsort(arr, kind="stable")
    except TypeError as err:
        raise ValueError(f"`ids` must be mutually comparable (one type); {err}.") from None
    if order is not None:
        if size <= np.iinfo(np.int32).max:
            order = order.astype(np.int32)
        for s in range(0, size - 1, CHUNK):
            idx = order[s : s + CHUNK + 1]
            run = arr[idx]
            same = np.flatnonzero(run[1:] == run[:-1])
            if same.size:
                j = same[0]
                first, second = sorted((int(idx[j]), int(idx[j + 1])))
                raise ValueError(
                    f"`ids` must be unique; id {_scalar(run[j])!r} appears at positions {first} "
                    f"and {second}."
                )
    return arr, order


class Pool:
    """Unlabeled items with the scores and 0/1 decisions of one or more systems.

    Parameters
    ----------
    scores : array_like of float, shape (n_items,) or (n_items, n_systems)
        Finite scores; a 2-d array holds one column per system. Float32 and float64 arrays are
        kept without copying (the pool holds a read-only view).
    predictions : array_like of {0, 1} or bool, optional
        Decisions, same shape as ``scores``. Default: ``scores >= threshold``.
    threshold : float or array_like of float, default 0.5
        Score at or above which an item is predicted positive (one per system allowed); used
        only when ``predictions`` is not given.
    ids : array_like of int or str, optional
        Unique item ids, one per item; default ``0, ..., n_items - 1`` (never materialised).
    systems : sequence of str, optional
        Names of the systems; default ``"system0", "system1", ...``.
    judge : array_like of {0, 1} or of float in [0, 1], shape (n_items,), optional
        An automatic judge's answer for every item (a language model, a stronger classifier,
        a heuristic): its 0/1 label, or its probability that the item is positive. The model
        of the labels (:class:`bayeval.models.ScoreCalibration`) learns from the labelled
        items how far the judge is to be trusted, so a biased judge is corrected rather than
        believed; the judge is never taken as a label. In a multiclass pool, the judge's
        class for every item (an index into ``classes`` or a name), read by
        :class:`bayeval.models.ClassCalibration` the same way.
    classes : sequence of str, optional
        A multiclass pool: the names of the label space's classes (2 to 127). Then
        ``predictions`` is required and holds each item's predicted class (an index into
        ``classes`` or a name), ``scores`` how sure the system is of it (its top score), and
        labels are classes too, and so are the ``judge``'s answers. Several systems (2-d
        ``scores`` and ``predictions``) are for comparing them
        (:class:`~bayeval.sampling.ModelSelection`, :func:`bayeval.compare`). Default: binary
        labels.

    Attributes
    ----------
    size : int
        Number of items.
    n_systems : int
        Number of systems.
    systems : tuple of str
        System names.
    threshold : numpy.ndarray or None
        Per-system threshold that produced ``predictions``; ``None`` when they were given.
    judge : numpy.ndarray or None
        The judge's answers: ``int8`` when they are all 0 or 1, else float64 probabilities; in
        a multiclass pool, ``int8`` class indices.
    classes : tuple of str or None
        The class names of a multiclass pool; ``None`` for binary labels.

    Notes
    -----
    Memory is the arrays themselves: the scores (a view), the ``int8`` decisions and, for
    explicit ids that are not already sorted, one ``int32`` permutation (``int64`` beyond
    ``2**31`` items) that sorts them, so that :meth:`positions` costs ``O(log M)`` per id.
    Uniqueness is checked with the same sort.

    See Also
    --------
    bayeval.strata.stratify : Cut the pool into strata by score.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.pool import Pool
    >>> pool = Pool([0.1, 0.7, 0.4, 0.9], ids=["d", "a", "c", "b"])
    >>> pool
    Pool(size=4, n_systems=1, ids='explicit')
    >>> pool.predictions
    array([0, 1, 0, 1], dtype=int8)
    >>> pool.positions(["a", "b"])
    array([1, 3])
    >>> pool.stratify(2, "equal-width").ids
    array([0, 1, 0, 1], dtype=int8)

    A multiclass pool: each item's predicted class and how sure the system is of it.

    >>> Pool([0.9, 0.6, 0.8], ["cat", "bird", "cat"], classes=["cat", "dog", "bird"]).predictions
    array([0, 2, 0], dtype=int8)
    """

    __slots__ = (
        "_ids",
        "_order",
        "_predictions",
        "_scores",
        "_lo",
        "_hi",
        "_judge",
        "systems",
        "threshold",
        "classes",
    )

    @validate(threshold=Array(ndim=(0, 1)))
    def __init__(
        self,
        scores: Any,
        predictions: Any = None,
        threshold: Any = 0.5,
        ids: Any = None,
        *,
        systems: Sequence[str] | None = None,
        judge: Any = None,
        classes: Sequence[str] | None = None,
    ):
        # checked here, against each other and the scores: scores (in chunks, without a copy),
        # predictions, one threshold per system, ids and systems
        arr, lo, hi = check_scores(scores, "scores", ndim=(1, 2))
        n_systems = 1 if arr.ndim == 1 else arr.shape[1]
        self.classes = None if classes is None else check_class_names(classes)
        if self.classes is not None:
            pred = _multiclass_predictions(predictions, arr, self.classes)
            self.threshold = None
        elif predictions is None:
            thr = np.asarray(threshold, dtype=np.float64)  # a default is not normalised
            if thr.ndim == 1 and thr.size != n_systems:
                raise ValueError(
                    f"`threshold` must be a number, or one number per system ({n_systems}); "
                    f"got {thr.size} numbers."
                )
            if arr.ndim == 1 and thr.ndim == 1:
                thr = thr[0]
            pred = np.empty(arr.shape, dtype=np.int8)
            for start in range(0, arr.shape[0], CHUNK):
                pred[start : start + CHUNK] = arr[start : start + CHUNK] >= thr
            self.threshold = np.broadcast_to(thr, (n_systems,)).copy()
            self.threshold.setflags(write=False)
        else:
            pred = _check_predictions(predictions, arr.shape)
            self.threshold = None
        if systems is None:
            names = tuple(f"system{j}" for j in range(n_systems))
        else:
            names = (systems,) if isinstance(systems, str) else tuple(str(s) for s in systems)
            if len(names) != n_systems:
                raise ValueError(
                    f"`systems` must name each of the {n_systems} system(s); got {systems!r}."
                )
            if len(set(names)) != len(names):
                raise ValueError(f"`systems` must be unique; got {names!r}.")
        self.systems = names
        self._judge = (
            None if judge is None else _read_only(_check_judge(judge, arr.shape[0], self.classes))
        )
        self._scores = _read_only(arr)
        self._predictions = _read_only(pred)
        self._lo = np.atleast_1d(lo).astype(np.float64)
        self._hi = np.atleast_1d(hi).astype(np.float64)
        if ids is None:
            self._ids, self._order = None, None
        else:
            id_arr, self._order = _check_ids(ids, arr.shape[0])
            self._ids = _read_only(id_arr)
            if self._order is not None:
                self._order.setflags(write=False)

    # -- constructors -----------------------------------------------------------------------
    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        score: str | Sequence[str] = "score",
        prediction: str | Sequence[str] | None = None,
        id: str | None = None,
        threshold: Any = 0.5,
        *,
        systems: Sequence[str] | None = None,
        judge: str | None = None,
        classes: Sequence[str] | None = None,
    ) -> Pool:
        """Build a pool from a table with one row per item.

        Parameters
        ----------
        df : pandas.DataFrame
            One row per item.
        score : str or sequence of str, default "score"
            Column of scores, or one column per system.
        prediction : str or sequence of str, optional
            Column(s) of 0/1 decisions matching ``score``; default ``scores >= threshold``.
        id : str, optional
            Column of item ids. Default: the frame's index, unless it is the default
            ``RangeIndex`` ``0, ..., n - 1`` (then the default ids, which are the same numbers).
        threshold : float or array_like of float, default 0.5
            As in :class:`Pool`.
        systems : sequence of str, optional
            System names; default the score column name(s) when there are several columns,
            else ``"system0"``.
        judge : str, optional
            Column of an automatic judge's 0/1 labels or probabilities (see :class:`Pool`).
        classes : sequence of str, optional
            A multiclass pool's class names (see :class:`Pool`); ``prediction`` then names
            the column of predicted classes (indices or names).

        Returns
        -------
        Pool
        """
        score_cols = [score] if isinstance(score, str) else list(score)
        pred_cols = (
            None
            if prediction is None
            else ([prediction] if isinstance(prediction, str) else list(prediction))
        )
        if pred_cols is not None and len(pred_cols) != len(score_cols):
            raise ValueError(
                f"`prediction` must name one column per score column ({len(score_cols)}); "
                f"got {prediction!r}."
            )
        wanted = {
            "score": score_cols,
            "prediction": pred_cols or [],
            "id": [] if id is None else [id],
            "judge": [] if judge is None else [judge],
        }
        missing = {k: [c for c in v if c not in df.columns] for k, v in wanted.items()}
        missing = {k: v for k, v in missing.items() if v}
        if missing:
            raise ValueError(
                f"column(s) {missing} not found in the frame; its columns are {list(df.columns)}."
            )
        multi = not isinstance(score, str)
        scores = _frame_values(df, score_cols, multi)
        preds = None if pred_cols is None else _frame_values(df, pred_cols, multi)
        if id is not None:
            ids = df[id].to_numpy()
        elif _is_default_index(df.index):
            ids = None
        else:
            ids = df.index.to_numpy()
        if systems is None and multi:
            systems = [str(c) for c in score_cols]
        judged = None if judge is None else _frame_values(df, [judge], False)
        return cls(scores, preds, threshold, ids, systems=systems, judge=judged, classes=classes)

    def to_frame(self) -> pd.DataFrame:
        """Return the pool as a table: one row per item, indexed by id.

        Columns are ``score`` and ``prediction`` for one system, and ``score_<system>`` and
        ``prediction_<system>`` for several, then ``judge`` if the pool has one.
        ``Pool.from_frame`` reads it back.
        """
        import pandas as pd

        if self.n_systems == 1:
            columns = {
                "score": self._scores.reshape(self.size),
                "prediction": self._predictions.reshape(self.size),
            }
        else:
            columns = {}
            for j, name in enumerate(self.systems):
                columns[f"score_{name}"] = self._scores[:, j]
            for j, name in enumerate(self.systems):
                columns[f"prediction_{name}"] = self._predictions[:, j]
        if self._judge is not None:
            columns["judge"] = self._judge
        if self._ids is None:
            index = pd.RangeIndex(self.size, name="id")
        else:
            index = pd.Index(self._ids, name="id")
        return pd.DataFrame(columns, index=index)

    # -- contents ---------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """Number of items ``M``."""
        return int(self._scores.shape[0])

    def __len__(self) -> int:
        return self.size

    @property
    def n_systems(self) -> int:
        """Number of systems ``S`` (columns of a 2-d ``scores``)."""
        return len(self.systems)

    @property
    def scores(self) -> np.ndarray:
        """Scores, shape ``(M,)`` or ``(M, S)`` as given; read-only."""
        return self._scores

    @property
    def predictions(self) -> np.ndarray:
        """0/1 decisions (a multiclass pool: class indices) as ``int8``, the shape of ``scores``."""
        return self._predictions

    @property
    def n_classes(self) -> int:
        """Number of classes of the labels: 2 for a binary pool."""
        return 2 if self.classes is None else len(self.classes)

    @property
    def judge(self) -> np.ndarray | None:
        """The automatic judge's answers (``int8`` 0/1 labels or classes, or probabilities)."""
        return self._judge

    @property
    def ids(self) -> np.ndarray:
        """Item ids; the default ids ``0, ..., M - 1`` are built on each access."""
        return np.arange(self.size) if self._ids is None else self._ids

    @property
    def has_default_ids(self) -> bool:
        """True when the ids are the positions ``0, ..., M - 1``."""
        return self._ids is None

    def positions(self, ids: Any) -> np.ndarray | int:
        """Return the positions of items given by id (vectorised).

        Parameters
        ----------
        ids : scalar or array_like
            Ids of items in the pool.

        Returns
        -------
        int or numpy.ndarray of intp
            Position of each id, with the shape of ``ids`` (an int for a scalar).

        Raises
        ------
        ValueError
            If any id is not in the pool; the message lists (the first ten of) them.
        """
        query = np.asarray(ids)
        flat = query.ravel()
        if self._ids is None:
            if np.issubdtype(flat.dtype, np.integer) and flat.dtype != bool:
                found = (flat >= 0) & (flat < self.size)
            elif np.issubdtype(flat.dtype, np.floating):  # 3.0 is id 3, as for explicit ids
                found = (flat >= 0) & (flat < self.size) & (flat == np.round(flat))
            else:
                _raise_unknown(flat, flat.size)
            pos = np.where(found, flat, 0).astype(np.intp)
        else:
            try:
                if self._order is None:
                    pos = np.minimum(np.searchsorted(self._ids, flat), self.size - 1)
                else:
                    at = np.searchsorted(self._ids, flat, sorter=self._order)
                    pos = self._order[np.minimum(at, self.size - 1)].astype(np.intp)
                found = np.asarray(self._ids[pos] == flat, dtype=bool)
            except (TypeError, np.exceptions.DTypePromotionError):
                _raise_unknown(flat, flat.size)
        if not found.all():
            _raise_unknown(flat[~found], flat.size)
        out = pos.reshape(query.shape)
        return int(out) if query.ndim == 0 else out

    def ids_at(self, positions: Any) -> np.ndarray:
        """Return the ids of the items at ``positions`` (the inverse of :meth:`positions`).

        Examples
        --------
        >>> pool = Pool([0.2, 0.9, 0.4], ids=["a", "b", "c"])
        >>> pool.ids_at([1, 2]).tolist()
        ['b', 'c']
        """
        positions = np.asarray(positions, dtype=np.int64)
        return positions if self._ids is None else self._ids[positions]

    # -- strata -----------------------------------------------------------------------------
    @validate(**STRATIFY_CONSTRAINTS)
    def stratify(
        self,
        n_strata: int,
        method: Method = "csf",
        *,
        system: int | str | None = None,
        n_bins: int | None = None,
        offset: float | None = None,
    ) -> Strata:
        """Cut the pool into strata by one system's scores (see :func:`bayeval.strata.stratify`).

        Parameters
        ----------
        n_strata : int
            Number of strata wanted.
        method : {"csf", "geometric", "equal-width", "quantile"}, default "csf"
            Boundary rule.
        system : int or str, optional
            Whose scores to use (index or name); required when the pool has several systems.
        n_bins, offset : optional
            As in :func:`bayeval.strata.stratify`.

        Returns
        -------
        Strata
        """
        j = self._system_index(system)
        x = self._scores if self._scores.ndim == 1 else self._scores[:, j]
        lo, hi = float(self._lo[j]), float(self._hi[j])
        return stratify_scores(x, lo, hi, n_strata, method, n_bins=n_bins, offset=offset)

    def _system_index(self, system: int | str | None) -> int:
        if system is None:
            if self.n_systems > 1:
                raise ValueError(
                    f"`system` must be given for a pool of {self.n_systems} systems: one of "
                    f"{self.systems!r} or an index; got None."
                )
            return 0
        if isinstance(system, str):
            if system not in self.systems:
                raise ValueError(f"`system` must be one of {self.systems!r}; got {system!r}.")
            return self.systems.index(system)
        try:
            j = operator.index(system)
        except TypeError:
            raise ValueError(f"`system` must be a system name or index; got {system!r}.") from None
        if not -self.n_systems <= j < self.n_systems:
            raise ValueError(f"`system` index must be in [0, {self.n_systems}); got {system!r}.")
        return j % self.n_systems

    def __repr__(self) -> str:
        ids = "default" if self._ids is None else "explicit"
        judge = ""
        if self._judge is not None:
            kind = "labels" if self._judge.dtype == np.int8 else "probabilities"
            judge = f", judge={kind!r}"
        classes = "" if self.classes is None else f", classes={self.classes!r}"
        return f"Pool(size={self.size}, n_systems={self.n_systems}, ids={ids!r}{judge}{classes})"


def _frame_values(df: pd.DataFrame, columns: list, multi: bool) -> np.ndarray:
    """Return the columns as a numpy array; nullable numeric columns give NaN for missing."""
    import pandas as pd

    if all(pd.api.types.is_extension_array_dtype(df[c]) for c in columns) and all(
        pd.api.types.is_numeric_dtype(df[c]) for c in columns
    ):
        values = df[columns].to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        values = df[columns].to_numpy() if multi else df[columns[0]].to_numpy()
    return values if multi else values.reshape(-1)


def _is_default_index(index: Any) -> bool:
    import pandas as pd

    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def _scalar(value: Any) -> Any:
    """Return a numpy scalar as a Python one (object arrays hold Python objects already)."""
    return value.item() if hasattr(value, "item") else value


def _raise_unknown(unknown: np.ndarray, n_asked: int) -> None:
    shown = ", ".join(repr(_scalar(u)) for u in unknown[:10])
    more = ", ..." if unknown.size > 10 else ""
    raise ValueError(
        f"`ids` not in the pool ({unknown.size} of the {n_asked} given): {shown}{more}."
    )
