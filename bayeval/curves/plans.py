"""What a plan says before a label is bought: the planners' result types.

:mod:`bayeval.curves.planning` returns them; each lists the ranks a precision-curve method
queries (except AdaStrat's, which chooses them as it goes) and the items it annotates.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

__all__ = ["AdaStratPlan", "CurvePlan", "LogStratPlan", "PaulaPlan", "RandomPlan", "frozen"]


def frozen(array: np.ndarray) -> np.ndarray:
    """Return ``array`` as a read-only contiguous ``int64`` array (a plan's ranks)."""
    array = np.ascontiguousarray(array, dtype=np.int64)
    array.setflags(write=False)
    return array


# --------------------------------------------------------------------------- results


def _format(value: Any) -> str:
    if isinstance(value, np.ndarray):
        n = value.size
        if n == 0:
            return "[] (0 ranks)"
        if n <= 4:
            shown = ", ".join(str(v) for v in value.tolist())
        else:
            shown = f"{value[0]}, {value[1]}, ..., {value[-1]}"
        return f"[{shown}] ({n} ranks)"
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value)


@dataclass(frozen=True, repr=False, eq=False, kw_only=True)
class CurvePlan:
    """What a precision-curve method will query and annotate, computed before labelling.

    Attributes
    ----------
    method : str
        Class attribute: ``"random"``, ``"logstrat"`` or ``"paula"``.
    n_items : int
        Length ``N`` of the ranked list.
    queried : numpy.ndarray
        Read-only ``int64`` array, increasing: the ranks at which the method queries (estimates)
        the precision function. Prefix ranks whose precision is computed exactly from annotations
        are not queries.
    annotations : int
        Distinct items the method annotates (see each planner for the exact accounting).
    annotations_formula : float
        The closed-form count the paper states for the method, before any integer rounding.
    approximation : float
        The pointwise approximation factor the method guarantees (with probability
        ``1 - delta`` for the sampling methods).
    """

    method: ClassVar[str] = ""

    n_items: int
    queried: np.ndarray
    annotations: int
    annotations_formula: float
    approximation: float

    @property
    def n_queries(self) -> int:
        """Number of queried ranks, ``len(queried)``."""
        return int(self.queried.size)

    def __repr__(self) -> str:
        parts = [f"{f.name}={_format(getattr(self, f.name))}" for f in fields(self)]
        parts.insert(2, f"n_queries={self.n_queries}")
        return f"{type(self).__name__}({', '.join(parts)})"


@dataclass(frozen=True, repr=False, eq=False, kw_only=True)
class RandomPlan(CurvePlan):
    """Plan of the random-sampling baseline (Section 3 of [1]).

    Attributes
    ----------
    alpha : float
        Target relative error: ``p'(r s / N)`` is a ``(1 + alpha)``-approximation of ``p(r)``.
    p_min : float
        The precision value ``p(r)`` assumed in Eq. 4 (a lower bound on ``p``).
    delta : float
        Overall error probability (union bound over the ``N`` ranks).
    n_samples : int
        ``s``, the uniform random samples drawn from the whole list (0 for a census).
    n_prefix : int
        ``n_{alpha,s}`` of Eq. 4: the top ranks annotated exhaustively (``N`` for a census).

    References
    ----------
    .. [1] A. Sabharwal and H. Sedghi. How good are my predictions? UAI 2017.
    """

    method: ClassVar[str] = "random"

    alpha: float
    p_min: float
    delta: float
    n_samples: int
    n_prefix: int


@dataclass(frozen=True, repr=False, eq=False, kw_only=True)
class _GeometricPlan(CurvePlan):
    """Fields shared by the plans built on the geometric points of Section 4.2 of [1]."""

    epsilon: float
    r_tilde: int
    ell: int
    L: int
    m: int
    gamma: float
    g_ell: int
    points: np.ndarray


@dataclass(frozen=True, repr=False, eq=False, kw_only=True)
class LogStratPlan(_GeometricPlan):
    """Plan of LogStrat, logarithmic stratified sampling (Algorithm 1 of [1]).

    Attributes
    ----------
    epsilon, r_tilde, ell, L, m, gamma : float or int
        The quantities of Section 4.2 of [1]: ``ell = ceil(log_{1+eps} r_tilde)``,
        ``L = floor(log_{1+eps} N)``, ``m = floor(eps (1 + eps)^ell - 1)`` (the largest
        monotonicity gap of Assumption A.1 that Theorem 1 covers) and
        ``gamma = 1 + eps + (2 + eps) / m`` (PAULA's factor, reported for comparison).
    g_ell : int
        ``ceil((1 + eps)^ell)``: ranks ``1..g_ell`` are annotated exhaustively.
    points : numpy.ndarray
        ``g_ell, ..., g_L``: the corners of the step function of Definition 5.
    delta, p_min, beta : float
        Error probability, assumed minimum precision and per-point factor of Lemma 1.
    s : int
        Samples behind each point estimate (Algorithm 1):
        ``ceil(ln((L - ell) / (delta / 2)) / (2 (beta - 1)^2 p_min^2))``.
    samples_per_query : float
        ``eps / (1 + eps) * s`` before rounding ``s``: the expected fresh samples per queried
        point, the factor multiplying ``L - ell`` in Theorem 2 (compared in Section 4.4.4).
    stratum_samples : numpy.ndarray
        Fresh annotations drawn (without replacement) in stratum ``(points[k-1], points[k]]``
        for each queried point ``points[k]``.

    References
    ----------
    .. [1] A. Sabharwal and H. Sedghi. How good are my predictions? UAI 2017.
    """

    method: ClassVar[str] = "logstrat"

    delta: float
    p_min: float
    beta: float
    s: int
    samples_per_query: float
    stratum_samples: np.ndarray


@dataclass(frozen=True, repr=False, eq=False, kw_only=True)
class PaulaPlan(_GeometricPlan):
    """Plan of PAULA (Algorithm 2 of [1]).

    Attributes
    ----------
    epsilon, window, r_tilde, ell, L, m, gamma : float or int
        The quantities of Section 4.2 of [1] with ``Delta = window``.
    g_ell : int
        ``ceil((1 + eps)^ell)``: ranks ``1..g_ell`` are annotated exhaustively.
    points : numpy.ndarray
        ``g_ell, ..., g_L``: the corners of the two step functions.

    References
    ----------
    .. [1] A. Sabharwal and H. Sedghi. How good are my predictions? UAI 2017.
    """

    method: ClassVar[str] = "paula"

    window: int

    def annotated_ranks(self) -> np.ndarray:
        """Return every annotated rank, increasing: ``1..g_ell`` and the windows below the queries.

        Returns
        -------
        numpy.ndarray
            ``int64`` array of length ``annotations`` (memory O(annotations), never O(N)).
        """
        prefix = np.arange(1, min(self.g_ell, self.n_items) + 1, dtype=np.int64)
        if self.queried.size == 0:
            return prefix
        # window k covers low[k]..queried[k]; it never reaches below the previous point
        low = np.maximum(self.queried - self.window + 1, self.points[:-1] + 1)
        lengths = self.queried - low + 1
        starts = np.cumsum(lengths) - lengths  # where each window begins in the output
        windows = np.repeat(low - starts, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)
        return np.concatenate([prefix, windows])


@dataclass(frozen=True, repr=False, eq=False, kw_only=True)
class AdaStratPlan(CurvePlan):
    """Settings and worst-case costs of AdaStrat (Algorithm 1 of [1]), before labelling.

    AdaStrat chooses its queries from the labels it sees, so unlike the other plans this one
    cannot list them: ``queried`` is empty and ``annotations`` is an upper bound. The run's
    :class:`~bayeval.curves.CurveResult` holds the ranks actually queried.

    Attributes
    ----------
    epsilon, m, r_tilde : float or int
        Target factor, monotonicity gap and the rank after which Definition 1 is assumed.
    l_tilde : int
        ``max(ceil((1 + eps)^2 m / (2 eps + eps^2)), r_tilde)``: ranks ``1..l_tilde`` are
        annotated exhaustively.
    delta, beta, p_min, eta : float
        Error probability, per-query factor, assumed minimum precision and label-noise rate of
        Eq. 5.
    max_queries : int
        Theorem 4's bound ``floor(log_{1+eps}(N / l_tilde))`` on the calls to QUERY (at least 1).
    s_max : int
        Eq. 5's sample size with ``K = max_queries`` (``max_queries + 1`` if ``eta > 0``: the
        noisy prefix is estimated too), the largest any run uses.

    References
    ----------
    .. [1] A. Sabharwal and Y. Xue. Adaptive stratified sampling for precision-recall
       estimation. UAI 2018.
    """

    method: ClassVar[str] = "adastrat"

    epsilon: float
    m: int
    r_tilde: int
    l_tilde: int
    delta: float
    beta: float
    p_min: float
    eta: float
    max_queries: int
    s_max: int
