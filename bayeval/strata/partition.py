"""Strata from classifier scores: :func:`stratify` and its :class:`Strata` result."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from bayeval._constraints import Integer, OneOf, Optional, Real, validate
from bayeval._validation import check_scores

if TYPE_CHECKING:
    import pandas as pd

    from bayeval.strata.tree import StrataTree

from bayeval._core.score_strata import (
    assign,
    edges_csf,
    edges_equal_width,
    edges_geometric,
    edges_quantile,
    merge_empty,
)

__all__ = ["METHODS", "STRATIFY_CONSTRAINTS", "Strata", "stratify"]

Method = Literal["csf", "geometric", "equal-width", "quantile"]
METHODS: tuple[str, ...] = ("csf", "geometric", "equal-width", "quantile")

#: The constraints of :func:`stratify`'s options (also :meth:`bayeval.Pool.stratify`'s).
STRATIFY_CONSTRAINTS = {
    "n_strata": Integer(minimum=1),
    "method": OneOf(METHODS),
    "n_bins": Optional(Integer(minimum=1)),
    "offset": Optional(Real()),
}


# -- public API --------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False, repr=False)
class Strata:
    """A partition of a scored pool into strata ordered by score.

    Stratum ``k`` holds the items whose scores lie in ``[edges[k], edges[k + 1])``; the last
    stratum also holds the maximum score. Stratum 0 therefore holds the *lowest* scores and ids
    increase with the score.

    Attributes
    ----------
    ids : numpy.ndarray
        Stratum of each item, shape ``(n_items,)``, in the smallest signed integer type that
        fits the strata requested (``int8`` up to 128, ``int16`` up to 32768); read-only.
    edges : numpy.ndarray of float64
        Score boundaries, shape ``(n_strata + 1,)``, non-decreasing; ``edges[0]`` and
        ``edges[-1]`` are the minimum and maximum scores.
    sizes : numpy.ndarray of int64
        Items per stratum; all positive, summing to ``n_items``.
    mean_score : numpy.ndarray of float64
        Mean score of each stratum.
    method : str
        The rule that placed the boundaries.
    n_requested : int
        Strata asked for; ``n_strata`` is smaller when some would have been empty.

    See Also
    --------
    stratify : Build strata from scores.
    tree_over_strata : A tree whose leaves are these strata.

    Examples
    --------
    >>> from bayeval.strata import stratify
    >>> s = stratify([0.1, 0.2, 0.6, 0.9, 0.95], 2, "equal-width")
    >>> s
    Strata(method='equal-width', n_strata=2, n_items=5, scores=[0.1, 0.95])
    >>> s.summary()
             lower  upper  size  weight  mean_score
    stratum
    0        0.100  0.525     2     0.4    0.150000
    1        0.525  0.950     3     0.6    0.816667
    """

    ids: np.ndarray
    edges: np.ndarray
    sizes: np.ndarray
    mean_score: np.ndarray
    method: str
    n_requested: int

    def __post_init__(self):
        for name in ("ids", "edges", "sizes", "mean_score"):
            getattr(self, name).setflags(write=False)

    @property
    def n_strata(self) -> int:
        """Number of (non-empty) strata."""
        return int(self.sizes.size)

    @property
    def n_items(self) -> int:
        """Number of items stratified."""
        return int(self.ids.size)

    @property
    def weights(self) -> np.ndarray:
        """Share of the pool in each stratum, ``sizes / n_items``."""
        return self.sizes / self.n_items

    def members(self, stratum: int) -> np.ndarray:
        """Return the positions of the items in ``stratum`` (an ``O(n_items)`` scan)."""
        k = operator.index(stratum)
        if not -self.n_strata <= k < self.n_strata:
            raise ValueError(f"`stratum` must be in [0, {self.n_strata}); got {stratum!r}.")
        return np.flatnonzero(self.ids == k % self.n_strata)

    def tree(self, branching: int | None = None, depth: int | None = None) -> StrataTree:
        """Return :func:`tree_over_strata` for these strata."""
        from bayeval.strata.tree import tree_over_strata  # the tree module imports this one

        return tree_over_strata(self.n_strata, branching=branching, depth=depth)

    def summary(self) -> pd.DataFrame:
        """Tabulate the strata: bounds, size, weight and mean score, one row per stratum."""
        import pandas as pd

        return pd.DataFrame(
            {
                "lower": self.edges[:-1],
                "upper": self.edges[1:],
                "size": self.sizes,
                "weight": self.weights,
                "mean_score": self.mean_score,
            },
            index=pd.RangeIndex(self.n_strata, name="stratum"),
        )

    def __repr__(self) -> str:
        return (
            f"Strata(method={self.method!r}, n_strata={self.n_strata}, "
            f"n_items={self.n_items}, scores=[{self.edges[0]:.4g}, {self.edges[-1]:.4g}])"
        )


@validate(**STRATIFY_CONSTRAINTS)
def stratify(
    scores: Any,
    n_strata: int,
    method: Method = "csf",
    *,
    n_bins: int | None = None,
    offset: float | None = None,
) -> Strata:
    """Cut a pool into strata by score: CSF, geometric, equal-width or quantile boundaries.

    Parameters
    ----------
    scores : array_like of float, shape (n_items,)
        Finite classifier scores (any real range). Float32 and float64 arrays are not copied.
    n_strata : int
        Number of strata wanted, ``>= 1``. Fewer are returned when some would be empty.
    method : {"csf", "geometric", "equal-width", "quantile"}, default "csf"
        How the boundaries are placed (see Notes).
    n_bins : int, optional
        ``"csf"`` only: bins of the equal-width histogram of the scores on which the rule
        works; default ``8 * n_strata``; must be ``>= n_strata``.
    offset : float, optional
        ``"geometric"`` only: the boundaries form a geometric progression on
        ``scores + offset``. Default 0 when every score is positive, else ``1 - min(scores)``
        (the minimum is moved to 1).

    Returns
    -------
    Strata
        Stratum ids of the items (stratum 0 has the lowest scores), boundaries, sizes and mean
        scores.

    Notes
    -----
    Let ``lo`` and ``hi`` be the smallest and largest score and ``K = n_strata``.

    * ``"csf"`` (Dalenius & Hodges 1959): histogram the scores in ``n_bins`` equal-width bins
      with frequencies ``f_j``; cumulate ``sqrt(f_j)`` to a total ``T``; boundary ``k`` is the
      histogram edge whose cumulative ``sqrt(f)`` is nearest to ``k T / K`` (the lower edge when
      two are equally near). Approximately minimises the variance of the stratified mean under
      proportional allocation.
    * ``"geometric"`` (Gunning & Horgan 2004): boundaries ``a r^k - offset`` with
      ``a = lo + offset``, ``r = ((hi + offset) / a)^(1/K)``: narrow strata at low scores and
      wide ones at high scores, meant for positively skewed scores. The rule needs positive
      values, hence the shift; with the default shift, scores in ``[0, 1]`` are mapped to
      ``[1, 2]``, where the progression is close to equal-width; pass a small ``offset`` (e.g.
      ``1e-3``) for a markedly geometric progression.
    * ``"equal-width"``: ``lo + k (hi - lo) / K``.
    * ``"quantile"``: equal counts. Cut ``k`` falls before the item of sorted rank
      ``floor(k M / K)``; when that splits a run of tied scores, the cut moves to the nearer
      end of the run (to its start when equidistant), so tied items share a stratum and heavy
      ties yield fewer strata. The order statistics are found exactly by histogram refinement
      without sorting or copying the scores.

    An item's stratum depends on its score alone. Strata that would hold no items (two
    boundaries in the same place, or no score between them) are merged into the non-empty
    stratum below them, so every returned stratum is non-empty and ``n_strata`` may be less than
    requested (see ``n_requested``). Memory beyond the scores is the ``ids`` array plus a
    bounded scratch (chunks of ``2**19`` scores; at most ``2**21`` gathered scores for
    ``"quantile"``): about 20 MB, 70 MB at most. Besides the scan for the minimum and maximum,
    ``"equal-width"`` and ``"geometric"`` read the scores once, ``"csf"`` twice and
    ``"quantile"`` three times or more (two passes per refinement round, and once more to
    assign).

    References
    ----------
    T. Dalenius and J. L. Hodges, "Minimum variance stratification", JASA 54(285), 1959.
    P. Gunning and J. M. Horgan, "A new algorithm for the construction of stratum boundaries in
    skewed populations", Survey Methodology 30(2), 2004.
    N. G. Marchant and B. I. P. Rubinstein, "Needle in a haystack: label-efficient evaluation
    under extreme class imbalance", KDD 2021, §5.2 and Appendix I.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.strata import stratify
    >>> scores = np.array([0.05, 0.1, 0.2, 0.4, 0.45, 0.7, 0.9, 0.95])
    >>> s = stratify(scores, 2, "equal-width")
    >>> s.edges
    array([0.05, 0.5 , 0.95])
    >>> s.ids
    array([0, 0, 0, 0, 0, 1, 1, 1], dtype=int8)
    >>> stratify(scores, 4, "quantile").sizes
    array([2, 2, 2, 2])
    """
    x, lo, hi = check_scores(scores)
    return stratify_scores(x, float(lo), float(hi), n_strata, method, n_bins=n_bins, offset=offset)


def _check_options(n_strata, method, n_bins, offset) -> tuple[int, int, float | None]:
    """Check the options of :func:`stratify` together; return ``(n_strata, n_bins, offset)``."""
    for name, value in (("n_strata", n_strata), ("method", method), ("n_bins", n_bins)):
        STRATIFY_CONSTRAINTS[name].check(value, name)
    offset = STRATIFY_CONSTRAINTS["offset"].check(offset, "offset")
    if n_bins is not None and method != "csf":
        raise ValueError(f"`n_bins` is used only by method='csf'; got method={method!r}.")
    if offset is not None and method != "geometric":
        raise ValueError(f"`offset` is used only by method='geometric'; got method={method!r}.")
    if n_bins is None:
        n_bins = 8 * n_strata
    elif n_bins < n_strata:
        raise ValueError(
            f"`n_bins` must be at least `n_strata` ({n_strata}) for the CSF rule; got {n_bins!r}."
        )
    return int(n_strata), int(n_bins), offset


def stratify_scores(x, lo, hi, n_strata, method="csf", *, n_bins=None, offset=None) -> Strata:
    """Stratify checked 1-d scores ``x`` whose minimum ``lo`` and maximum ``hi`` are known.

    :func:`stratify` after :func:`bayeval._validation.check_scores` (a pool knows its scores'
    range and has checked them); the options are checked here.
    """
    k, n_bins, offset = _check_options(n_strata, method, n_bins, offset)
    if lo == hi:
        edges = np.array([lo, hi])
    elif method == "equal-width":
        edges = edges_equal_width(lo, hi, k)
    elif method == "geometric":
        edges = edges_geometric(lo, hi, k, offset)
    elif method == "csf":
        edges = edges_csf(x, lo, hi, k, n_bins)
    else:
        edges = edges_quantile(x, lo, hi, k)
    edges = np.asarray(edges, dtype=np.float64)
    edges[0], edges[-1] = lo, hi
    ids, sizes, sums = assign(x, edges)
    ids, edges, sizes, sums = merge_empty(ids, edges, sizes, sums)
    return Strata(
        ids=ids,
        edges=edges,
        sizes=sizes,
        mean_score=sums / sizes,
        method=method,
        n_requested=k,
    )
