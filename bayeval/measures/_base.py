"""The generalized-measure base class and input validation (see :mod:`bayeval.measures`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["Measure"]


# --------------------------------------------------------------------------- validation


def first_index(bad: np.ndarray) -> Any:
    """Return the index of the first True entry of ``bad``: an int for 1-d, else a tuple."""
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    return idx[0] if len(idx) == 1 else idx


def _numeric(values: Any, name: str) -> np.ndarray:
    """Return ``values`` as a float64 array, refusing strings, objects and complex numbers."""
    try:
        arr = np.asarray(values)
    except ValueError as err:  # ragged nested sequences
        raise ValueError(f"`{name}` must be an array of numbers; {err}") from None
    if arr.dtype == bool:
        return arr.astype(np.float64)
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"`{name}` must contain real numbers; got an array of dtype {arr.dtype}.")
    return arr.astype(np.float64)


def _check_values(values: Any, name: str, kind: str) -> np.ndarray:
    """Validate ``values`` of one ``kind``: binary, real, probability or score."""
    arr = _numeric(values, name)
    nan = np.isnan(arr)
    if nan.any():
        raise ValueError(f"`{name}` must not contain NaN; entry {first_index(nan)} is NaN.")
    if kind == "score":
        return arr
    bad = ~np.isfinite(arr)
    if bad.any():
        i = first_index(bad)
        raise ValueError(f"`{name}` must be finite; entry {i} is {arr[i].item()!r}.")
    if kind == "binary":
        bad = (arr != 0) & (arr != 1)
        allowed = "only 0 and 1 (binary classes)"
    elif kind == "probability":
        bad = (arr < 0) | (arr > 1)
        allowed = "probabilities in [0, 1]"
    else:
        return arr
    if bad.any():
        i = first_index(bad)
        raise ValueError(f"`{name}` must contain {allowed}; entry {i} is {arr[i].item()!r}.")
    return arr


_OUTPUT_DESCRIPTIONS = {
    "binary": "the predicted classes (0/1)",
    "real": "the predicted responses",
    "probability": "the predicted probabilities of class 1",
    "score": "the real-valued scores",
}


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Return ``num / den``, NaN where ``den`` is zero (the caller holds an ``np.errstate``)."""
    return np.where(den == 0, np.nan, num / den)


# --------------------------------------------------------------------------- base class


@dataclass(frozen=True)
class Measure(ABC):
    """A generalized measure ``G = g(R)`` with ``R = E[loss(x, y)]`` (Definition 1 of [1]_).

    Subclasses fix the loss vector (``dim`` entries) and the mapping ``g`` (``len(outputs)``
    entries); instances are immutable and hashable, so they can key caches and be compared.

    Attributes
    ----------
    label_type : {"binary", "real", "multiclass"}
        Binary measures take labels in ``{0, 1}`` and support :meth:`loss_table`; regression
        measures take real labels; multiclass ones (:class:`~bayeval.measures.ClassMeasure`)
        class indices, and :meth:`loss_table` tabulates every class.
    system_output : {"predictions", "scores"}
        Which system output the loss uses: predicted classes (or predicted responses for
        regression), or scores (probabilities for the Brier score, any real scores for the
        precision-recall curve).
    value_range : tuple of float
        The values every output of ``G`` can take (``(0, 1)`` unless a measure says
        otherwise).

    References
    ----------
    .. [1] N. G. Marchant and B. I. P. Rubinstein. Needle in a haystack: label-efficient
       evaluation under extreme class imbalance. KDD 2021. Section 2.2.
    """

    label_type: ClassVar[Literal["binary", "real", "multiclass"]] = "binary"
    system_output: ClassVar[Literal["predictions", "scores"]] = "predictions"
    #: The values ``G`` can take, the same for every output: design-based intervals stay
    #: inside it.
    value_range: ClassVar[tuple[float, float]] = (0.0, 1.0)
    _name: ClassVar[str] = "measure"
    _dim: ClassVar[int] = 1
    # how the system output is validated: "binary", "real", "probability" or "score"
    _output_kind: ClassVar[str] = "binary"

    # ---- what subclasses define

    @abstractmethod
    def _loss(self, y: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Loss of labels ``y`` and system output ``x`` (broadcast together), shape (..., d)."""

    @abstractmethod
    def _g(self, R: np.ndarray) -> np.ndarray:
        """Map ``R`` of shape (..., d) to (..., m); zero denominators give NaN."""

    @abstractmethod
    def _jacobian(self, R: np.ndarray) -> np.ndarray:
        """Jacobian of ``_g`` at ``R``, shape (..., m, d)."""

    # ---- description

    @property
    def name(self) -> str:
        """Short name of the measure, such as ``"precision"`` or ``"f2"``."""
        return self._name

    @property
    def dim(self) -> int:
        """Length ``d`` of the loss vector (and of ``R``)."""
        return self._dim

    @property
    def outputs(self) -> tuple[str, ...]:
        """Names of the ``m`` entries of ``G = g(R)``."""
        return (self.name,)

    # ---- losses

    def _system_output(self, predictions: ArrayLike | None, scores: ArrayLike | None):
        given, other = (
            (predictions, scores) if self.system_output == "predictions" else (scores, predictions)
        )
        if given is None:
            unused = "predictions" if self.system_output == "scores" else "scores"
            hint = f" (`{unused}` is not used by this measure)" if other is not None else ""
            raise ValueError(
                f"{type(self).__name__} needs `{self.system_output}`, "
                f"{_OUTPUT_DESCRIPTIONS[self._output_kind]}; got {self.system_output}=None{hint}."
            )
        return _check_values(given, self.system_output, self._output_kind)

    def loss(
        self,
        labels: ArrayLike,
        predictions: ArrayLike | None = None,
        scores: ArrayLike | None = None,
    ) -> np.ndarray:
        """Compute the loss vector of each item.

        Parameters
        ----------
        labels : array_like
            True labels, any shape: 0/1 for classification measures, real for regression ones.
        predictions : array_like, optional
            Predicted classes (0/1) or predicted responses, the same shape as ``labels``.
            Required by measures whose ``system_output`` is ``"predictions"``.
        scores : array_like, optional
            Scores, the same shape as ``labels``: probabilities of class 1 for
            :class:`BrierScore`, any real scores for :class:`PrecisionRecallCurve`.
            The output a measure does not use is ignored (not validated), so generic code
            can pass both.

        Returns
        -------
        numpy.ndarray
            Shape ``labels.shape + (dim,)``.

        Raises
        ------
        ValueError
            If the needed output is missing, shapes differ, or an input has NaN, non-finite or
            out-of-range entries.
        """
        x = self._system_output(predictions, scores)
        y = self._check_labels(labels)
        if y.shape != x.shape:
            raise ValueError(
                f"`labels` and `{self.system_output}` must have the same shape; got {y.shape} "
                f"and {x.shape}."
            )
        return self._loss(y, x)

    def loss_table(
        self, predictions: ArrayLike | None = None, scores: ArrayLike | None = None
    ) -> np.ndarray:
        """Compute each item's loss vector for label 0 and for label 1.

        Row ``[..., k, :]`` equals ``loss(labels=k, ...)`` for the item, so a sampler can form
        ``sum_y p(y | x) ||loss(x, y)||``-type proposals before the label is known.

        Parameters
        ----------
        predictions, scores : array_like, optional
            As in :meth:`loss`.

        Returns
        -------
        numpy.ndarray
            Shape ``output.shape + (2, dim)`` (``n_classes`` rows for a multiclass measure).

        Raises
        ------
        ValueError
            For regression measures, whose labels are real numbers and cannot be tabulated.
        """
        if self.label_type == "real":
            raise ValueError(
                f"loss_table needs binary labels; {type(self).__name__} is a regression measure "
                "with real-valued labels, so its loss cannot be tabulated over labels."
            )
        x = self._system_output(predictions, scores)
        return self._loss(self._label_space(), x[..., None])

    def _check_labels(self, labels: ArrayLike) -> np.ndarray:
        """Return the labels as floats, checked against the measure's label type."""
        return _check_values(labels, "labels", "binary" if self.label_type == "binary" else "real")

    def _label_space(self) -> np.ndarray:
        """Return the labels :meth:`loss_table` tabulates: 0 and 1."""
        return np.array([0.0, 1.0])

    # ---- the mapping g

    def _check_R(self, R: ArrayLike) -> np.ndarray:
        try:
            arr = np.asarray(R, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"`R` must be an array of real numbers; got {R!r}.") from None
        if arr.ndim == 0 or arr.shape[-1] != self.dim:
            raise ValueError(
                f"`R` must have shape (..., {self.dim}) (the loss dimension of "
                f"{type(self).__name__}); got shape {arr.shape}."
            )
        return arr

    def g(self, R: ArrayLike) -> np.ndarray:
        """Map mean losses ``R`` to the measure ``G = g(R)``.

        Parameters
        ----------
        R : array_like
            Shape ``(..., dim)``; leading axes (posterior draws, chains, replications) are kept.

        Returns
        -------
        numpy.ndarray
            Shape ``(..., m)`` with ``m = len(outputs)``. Entries with a zero denominator are
            NaN (no warning is emitted); NaN entries of ``R`` propagate.
        """
        R = self._check_R(R)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._g(R)

    def jacobian(self, R: ArrayLike) -> np.ndarray:
        """Compute the Jacobian ``dg / dR`` at ``R``, for the delta method.

        Parameters
        ----------
        R : array_like
            Shape ``(..., dim)``.

        Returns
        -------
        numpy.ndarray
            Shape ``(..., m, dim)``; entry ``[..., i, j]`` is ``d g_i / d R_j``. A row is NaN
            wherever ``g_i`` is NaN. The array is dense: for a precision-recall curve with ``L``
            thresholds it has ``2L (2L + 1)`` entries per leading index.
        """
        R = self._check_R(R)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            jac = np.array(self._jacobian(R), dtype=np.float64)
            jac[np.isnan(self._g(R))] = np.nan
        return jac

    def value(
        self,
        labels: ArrayLike,
        predictions: ArrayLike | None = None,
        scores: ArrayLike | None = None,
    ) -> np.ndarray:
        """Compute the sample-based measure: ``g`` of the mean loss over all items given.

        This is Remark 2 of Marchant & Rubinstein (2021): the measure of the empirical
        distribution of the items, such as ``TP / (TP + FP)`` for precision.

        Parameters
        ----------
        labels, predictions, scores : array_like
            As in :meth:`loss`; the mean is over every entry of ``labels``.

        Returns
        -------
        numpy.ndarray
            Shape ``(m,)``.
        """
        losses = self.loss(labels, predictions, scores).reshape(-1, self.dim)
        if losses.shape[0] == 0:
            raise ValueError("`labels` must contain at least one item; got an empty array.")
        return self.g(losses.mean(axis=0))
