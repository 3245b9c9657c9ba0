"""Normal-approximation recall intervals from stratified counts (Webber 2013 §2.10, §3.1-3.3).

Inputs are per-stratum arrays ``N, n, r`` and a boolean ``retrieved`` mask. Yield estimates and
their variances are summed over the strata of each segment (Webber Eq. 4-5, 24), and the recall
variance follows from propagation of error on ``1 / (1 + R0 / R1)`` (Eq. 23), whose two terms are
independent because the segments are sampled separately.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "clip_covariance",
    "naive_binomial_moments",
    "normal_bounds",
    "normal_recall_moments",
]


def _segment_sums(values: np.ndarray, retrieved: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sum over the last (stratum) axis within each segment."""
    return values[..., retrieved].sum(axis=-1), values[..., ~retrieved].sum(axis=-1)


def _scalar_or_array(value: np.ndarray, scalar: bool):
    return float(value) if scalar else value


def normal_recall_moments(N, n, r, retrieved, adjustment: float = 0.0):
    """Centre and standard error of the (adjusted) normal recall interval.

    Parameters
    ----------
    N, n : numpy.ndarray
        Per-stratum population size and sample size (``n > 0``).
    r : numpy.ndarray
        Sampled positives per stratum, ``(S,)``, or ``(..., S)`` for many sample outcomes at
        once (the coverage study's).
    retrieved : numpy.ndarray of bool
        Segment of each stratum.
    adjustment : float
        Pseudo-counts ``c`` added to the positives and the negatives of every stratum:
        0 for Normal MLE (§3.2), 1 for the Laplace and 2 for the Agresti-Coull adjustment (§3.3).

    Returns
    -------
    centre, se : float or numpy.ndarray
        ``R1 / (R1 + R0)`` from the adjusted yields (Eq. 28-29) and the square root of Eq. 23 with
        the finite-population variances of Eq. 24 and 27; floats for a 1-d ``r``. ``centre`` is
        NaN (and ``se`` 0) when both estimated yields are zero.

    Examples
    --------
    >>> import numpy as np
    >>> centre, se = normal_recall_moments(
    ...     np.array([2000, 100000]), np.array([100, 100]), np.array([50, 3]),
    ...     np.array([True, False]))
    >>> print(f"{centre:.4f} {se:.4f}")
    0.2500 0.1081
    """
    N = np.asarray(N, dtype=float)
    n = np.asarray(n, dtype=float)
    r = np.asarray(r, dtype=float)
    retrieved = np.asarray(retrieved, dtype=bool)
    c = float(adjustment)
    n_adj = n + 2 * c
    p = (r + c) / n_adj
    yields = N * p
    # Eq. 24 / 27: N^2 * p(1-p)/n_adj * (1 - n/N), the finite-population correction last.
    variances = N**2 * p * (1 - p) / n_adj * (1 - n / N)
    y1, y0 = _segment_sums(yields, retrieved)
    v1, v0 = _segment_sums(variances, retrieved)
    total = y1 + y0
    positive = total > 0
    safe = np.where(positive, total, 1.0)
    centre = np.where(positive, y1 / safe, np.nan)
    var = np.where(positive, (v1 * y0**2 + v0 * y1**2) / safe**4, 0.0)  # Eq. 23
    scalar = r.ndim == 1
    return _scalar_or_array(centre, scalar), _scalar_or_array(np.sqrt(var), scalar)


def naive_binomial_moments(N, n, r, retrieved):
    """Centre and standard error of the naive binomial interval (Webber Eq. 25).

    Recall is treated as a binomial proportion over the sampled positives, so the ``n`` of
    Eq. 25 is ``r1 + r0``, the number of positive items in the sample: the sensitivity setting
    of the source the paper cites, where the trials are the truly positive subjects. ``r`` may
    hold many outcomes, as in :func:`normal_recall_moments`.

    Examples
    --------
    >>> import numpy as np
    >>> centre, se = naive_binomial_moments(
    ...     np.array([2000, 100000]), np.array([100, 100]), np.array([50, 3]),
    ...     np.array([True, False]))
    >>> print(f"{centre:.4f} {se:.4f}")
    0.2500 0.0595
    """
    r = np.asarray(r, dtype=float)
    centre, _ = normal_recall_moments(N, n, r, retrieved, adjustment=0.0)
    centre = np.asarray(centre)
    positives = r.sum(axis=-1)
    defined = (positives > 0) & np.isfinite(centre)
    variance = np.where(defined, centre * (1 - centre) / np.where(defined, positives, 1.0), 0.0)
    scalar = r.ndim == 1
    return _scalar_or_array(centre, scalar), _scalar_or_array(np.sqrt(variance), scalar)


def normal_bounds(centre, se, lower_tail, upper_tail):
    """``centre -/+ z se`` clipped to ``[0, 1]``; a tail of ``None`` leaves that side at 0 or 1.

    ``lower_tail`` and ``upper_tail`` are the probabilities left below and above the interval
    (``(1 - prob) / 2`` each for a two-sided one). Works elementwise on arrays.

    Examples
    --------
    >>> [round(float(v), 4) for v in normal_bounds(0.25, 0.1081, 0.025, 0.025)]
    [0.0381, 0.4619]
    """
    from scipy import special

    centre = np.asarray(centre, dtype=float)
    low = 0.0 if lower_tail is None else centre + special.ndtri(lower_tail) * se
    high = 1.0 if upper_tail is None else centre - special.ndtri(upper_tail) * se
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def clip_covariance(matrix: np.ndarray) -> np.ndarray:
    """Symmetrise a covariance and clip its negative eigenvalues.

    A plug-in estimate (the samplers' ``q_N``) and round-off can make eigenvalues slightly
    negative. Rows and columns of undefined outputs (NaN) are kept as they are; the rest is
    clipped on its own.
    """
    matrix = (matrix + matrix.T) / 2
    ok = np.isfinite(np.diag(matrix))
    if not np.isfinite(matrix[np.ix_(ok, ok)]).all():
        return matrix
    vals, vecs = np.linalg.eigh(matrix[np.ix_(ok, ok)])
    out = matrix.copy()
    clipped = (vecs * np.maximum(vals, 0.0)) @ vecs.T
    np.fill_diagonal(clipped, np.maximum(np.diag(clipped), 0.0))  # round-off: -1e-34
    out[np.ix_(ok, ok)] = clipped
    return out
