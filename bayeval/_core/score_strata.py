"""Numpy kernels of score stratification (see :mod:`bayeval.strata`).

Exact order statistics in bounded memory, the four boundary rules, and the assignment of scores
to strata.
"""

from __future__ import annotations

import numpy as np

#: Items processed per step of every pass over the scores (bounds the temporary memory).
CHUNK = 1 << 19
#: Bins of the first round (equal-width scores) and of each later round (equal-width float
#: keys) of the exact order-statistic search.
_FIRST_BINS = 1 << 16
_SELECT_BINS = 1 << 12
#: Cells of the lookup table that guesses an item's stratum from its score.
_LOOKUP_CELLS = 1 << 16
#: Most candidate scores gathered at once by the order-statistic search.
_GATHER_BUDGET = 1 << 21


def _id_dtype(n: int) -> np.dtype:
    """Return the smallest signed integer dtype that holds ``0, ..., n - 1``."""
    for dtype in (np.int8, np.int16, np.int32):
        if n - 1 <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def _chunk(x: np.ndarray, start: int) -> np.ndarray:
    """Return one chunk of ``x`` as contiguous float64 (a copy only when needed)."""
    return np.ascontiguousarray(x[start : start + CHUNK], dtype=np.float64)


# -- exact order statistics in bounded memory --------------------------------------------------
_SIGN_MASK = np.int64(0x7FFFFFFFFFFFFFFF)


def _keys(c: np.ndarray) -> np.ndarray:
    """Return int64 keys that order like the float64 scores ``c`` (``-0.0`` equals ``0.0``)."""
    k = (c + 0.0).view(np.int64)
    return k ^ ((k >> 63) & _SIGN_MASK)


def _from_key(key: int) -> float:
    """Invert :func:`_keys` for one key."""
    k = np.int64(key)
    return float((k ^ ((k >> 63) & _SIGN_MASK)).view(np.float64))


class _Level:
    """Histograms over disjoint score ranges ("tasks") of one round of refinement.

    The first round bins the whole score range in equal-width bins; later rounds bin each task
    (the items of a bin of the round before) in equal-width bins of the float keys (so a task
    of scores spanning many magnitudes, or a few subnormals, is split as easily as any other).
    Both maps are monotone in the score, so a bin holds exactly the items whose scores lie
    between its smallest and its largest member.
    """

    def __init__(self, bins: int, *, lo=None, hi=None, key_lo=None, key_hi=None, below=None):
        self.bins = bins
        self.child: np.ndarray | None = None  # code -> task at the next level, or -1
        if lo is not None:
            width = 0.5 * hi - 0.5 * lo
            with np.errstate(divide="ignore", over="ignore"):
                scale = bins / width
            self.by_value = bool(width > 0 and np.isfinite(scale))
            self.lo, self.scale = lo, scale
            self.below = np.zeros(1, dtype=np.int64)
            if not self.by_value:
                key_lo = np.array([_keys(np.array([lo]))[0]])
                key_hi = np.array([_keys(np.array([hi]))[0]])
        else:
            self.by_value = False
            self.below = below
        if not self.by_value:
            spans = [int(h) - int(lo_) for lo_, h in zip(key_lo, key_hi, strict=True)]
            need = int(bins).bit_length() - 1
            self.key_lo = np.asarray(key_lo, dtype=np.int64)
            self.shift = np.array([max(0, s.bit_length() - need) for s in spans], dtype=np.uint64)
        self.n_tasks = self.below.size

    def codes(self, c: np.ndarray, t: np.ndarray | None) -> np.ndarray:
        """Return ``task * bins + bin`` for scores ``c`` in tasks ``t`` (``None``: task 0)."""
        if self.by_value:
            b = ((0.5 * c - 0.5 * self.lo) * self.scale).astype(np.intp)
        else:
            lo = self.key_lo[0] if t is None else self.key_lo[t]
            shift = self.shift[0] if t is None else self.shift[t]
            b = ((_keys(c) - lo).view(np.uint64) >> shift).astype(np.intp)
        np.clip(b, 0, self.bins - 1, out=b)
        return b if t is None else t * self.bins + b


def _descend(c: np.ndarray, levels: list[_Level], level: _Level):
    """Keep the scores of ``c`` that lie in a task of ``level``; return them and their codes."""
    t = None
    for parent in levels:
        t = parent.child[parent.codes(c, t)]
        keep = t >= 0
        if not keep.all():
            c, t = c[keep], t[keep]
    return c, level.codes(c, t)


def _order_statistics(x: np.ndarray, ranks: np.ndarray, lo: float, hi: float):
    """Return the order statistics ``x_(r)`` (0-based) and the ties around them, exactly.

    Parameters
    ----------
    x : numpy.ndarray
        1-d finite scores with minimum ``lo`` and maximum ``hi``.
    ranks : numpy.ndarray
        Sorted, unique ranks in ``[0, x.size)``.
    lo, hi : float
        ``x.min()`` and ``x.max()``.

    Returns
    -------
    values, n_less, n_less_equal : numpy.ndarray
        ``x_(r)``, the number of scores below it and the number at or below it.

    Notes
    -----
    A histogram-refinement selection: one pass counts the scores in bins, a second gathers the
    bins that hold the wanted ranks (at most ``_GATHER_BUDGET`` scores in all, the least full
    bins first) and sorts them. A bin too full to gather is either one tied value (its
    smallest and largest keys agree) or is refined in the next round by a histogram over its own
    key range, which shrinks by a factor of ``_SELECT_BINS`` per round, so at most six rounds
    follow the first. Memory stays ``O(chunk + budget)``; ``x`` is never copied or sorted.
    """
    n = x.size
    ranks = np.asarray(ranks, dtype=np.int64)
    values = np.empty(ranks.size)
    n_lt = np.empty(ranks.size, dtype=np.int64)
    n_le = np.empty(ranks.size, dtype=np.int64)
    if lo == hi:
        values[:] = lo
        n_lt[:] = 0
        n_le[:] = n
        return values, n_lt, n_le
    levels: list[_Level] = []
    level = _Level(_FIRST_BINS, lo=lo, hi=hi)
    pending = np.arange(ranks.size)
    while pending.size:
        size = level.n_tasks * level.bins
        counts = np.zeros(size, dtype=np.int64)
        for start in range(0, n, CHUNK):
            _, codes = _descend(_chunk(x, start), levels, level)
            counts += np.bincount(codes, minlength=size)
        cum = counts.reshape(-1, level.bins).cumsum(axis=1) + level.below[:, None]
        cum = cum.ravel()  # non-decreasing: tasks are disjoint and ordered by score
        code_of = np.searchsorted(cum, ranks[pending], side="right")
        below_of = cum[code_of] - counts[code_of]
        needed = np.unique(code_of)
        by_size = np.argsort(counts[needed], kind="stable")
        light = np.zeros(needed.size, dtype=bool)
        light[by_size] = np.cumsum(counts[needed][by_size]) <= _GATHER_BUDGET
        state = np.zeros(size, dtype=np.int8)
        state[needed[light]] = 1
        state[needed[~light]] = 2
        key_min = np.full(size, np.iinfo(np.int64).max)
        key_max = np.full(size, np.iinfo(np.int64).min)
        got_vals, got_codes = [], []
        for start in range(0, n, CHUNK):
            c, codes = _descend(_chunk(x, start), levels, level)
            st = state[codes]
            pick = st == 1
            if pick.any():
                got_vals.append(c[pick])
                got_codes.append(codes[pick])
            pick = st == 2
            if pick.any():
                keys = _keys(c[pick])
                np.minimum.at(key_min, codes[pick], keys)
                np.maximum.at(key_max, codes[pick], keys)
        vals = np.concatenate(got_vals) if got_vals else np.empty(0)
        gcodes = np.concatenate(got_codes) if got_codes else np.empty(0, dtype=np.intp)
        order = np.lexsort((vals, gcodes))
        vals, gcodes = vals[order], gcodes[order]
        child = np.full(size, -1, dtype=np.intp)
        new_lo, new_hi, new_below, next_pending = [], [], [], []
        for i, code, below in zip(pending, code_of, below_of, strict=True):
            if state[code] == 1:
                first = np.searchsorted(gcodes, code, side="left")
                segment = vals[first : first + counts[code]]
                v = segment[ranks[i] - below]
                values[i] = v
                n_lt[i] = below + np.searchsorted(segment, v, side="left")
                n_le[i] = below + np.searchsorted(segment, v, side="right")
            elif key_min[code] == key_max[code]:
                values[i] = _from_key(key_min[code])
                n_lt[i] = below
                n_le[i] = below + counts[code]
            else:
                if child[code] < 0:
                    child[code] = len(new_lo)
                    new_lo.append(key_min[code])
                    new_hi.append(key_max[code])
                    new_below.append(below)
                next_pending.append(i)
        level.child = child
        levels.append(level)
        level = _Level(
            _SELECT_BINS,
            key_lo=new_lo,
            key_hi=new_hi,
            below=np.array(new_below, dtype=np.int64),
        )
        pending = np.array(next_pending, dtype=np.intp)
    return values, n_lt, n_le


# -- boundaries --------------------------------------------------------------------------------
def edges_equal_width(lo: float, hi: float, k: int) -> np.ndarray:
    return _lerp(lo, hi, k)


def edges_geometric(lo: float, hi: float, k: int, offset: float | None) -> np.ndarray:
    if offset is None:
        offset = 0.0 if lo > 0 else 1.0 - lo
        if not lo + offset > 0:  # |lo| so large that the 1 is lost to rounding
            offset = -lo + 2.0 * float(np.spacing(abs(lo)))
    a, b = lo + offset, hi + offset
    if not a > 0:
        raise ValueError(
            "`offset` must make every score positive for the geometric rule (min(scores) + "
            f"offset > 0); got min(scores) = {lo!r} and offset = {offset!r}."
        )
    if not np.isfinite(b):
        raise ValueError(
            f"max(scores) + offset overflows ({hi!r} + {offset!r}); the geometric rule needs a "
            "smaller `offset` or scores of a smaller magnitude."
        )
    t = np.arange(k + 1) / k
    return a ** (1.0 - t) * b**t - offset


def edges_csf(x: np.ndarray, lo: float, hi: float, k: int, n_bins: int) -> np.ndarray:
    hist_edges = _lerp(lo, hi, n_bins)
    counts = _count(x, hist_edges)
    # cum[i]: cumulative sqrt(frequency) of the histogram bins left of hist_edges[i].
    cum = np.concatenate([[0.0], np.cumsum(np.sqrt(counts))])
    targets = cum[-1] * np.arange(1, k) / k
    right = np.searchsorted(cum, targets, side="left")
    left = right - 1
    nearest = np.where(targets - cum[left] <= cum[right] - targets, left, right)
    # A cut at hist_edges[0] or hist_edges[-1] cuts nothing off.
    nearest = np.unique(nearest[(nearest > 0) & (nearest < n_bins)])
    return np.concatenate([[lo], hist_edges[nearest], [hi]])


def edges_quantile(x: np.ndarray, lo: float, hi: float, k: int) -> np.ndarray:
    n = x.size
    targets = np.unique([j * n // k for j in range(1, k)]).astype(np.int64)
    targets = targets[targets > 0]
    if targets.size == 0 or lo == hi:
        return np.array([lo, hi])
    values, n_lt, n_le = _order_statistics(x, targets, lo, hi)
    # Move each cut to the nearer end of the run of ties it falls in (ties stay together).
    after = (targets - n_lt) > (n_le - targets)
    cuts = np.where(after, n_le, n_lt)
    keep = (cuts > 0) & (cuts < n)
    cuts, values, after = cuts[keep], values[keep], after[keep]
    edges = values.copy()
    if after.any():  # the cut after a run of ties sits at the next larger score
        successors = np.unique(cuts[after])
        succ_values, _, _ = _order_statistics(x, successors, lo, hi)
        edges[after] = succ_values[np.searchsorted(successors, cuts[after])]
    return np.concatenate([[lo], np.unique(edges), [hi]])


# -- assignment --------------------------------------------------------------------------------
def _lerp(lo: float, hi: float, n: int) -> np.ndarray:
    """Return ``n + 1`` evenly spaced, non-decreasing points from ``lo`` to ``hi`` (no overflow)."""
    t = np.arange(n + 1) / n
    points = np.maximum.accumulate(lo * (1.0 - t) + hi * t)
    points[0], points[-1] = lo, hi
    return points


class _Locator:
    """Find the stratum ``k`` with ``edges[k] <= s < edges[k + 1]`` (last one closed) of scores.

    A lookup table over ``_LOOKUP_CELLS`` equal-width cells of the score range gives each score
    a first guess, which comparisons with the neighbouring edges then correct: exact, and
    several times faster than a binary search per item.
    """

    def __init__(self, edges: np.ndarray):
        self.lo, hi = float(edges[0]), float(edges[-1])
        interior = np.asarray(edges[1:-1], dtype=np.float64)
        self.n = interior.size + 1
        self.bounds = np.concatenate([[-np.inf], interior, [np.inf]])
        self.cells = _LOOKUP_CELLS
        width = 0.5 * hi - 0.5 * self.lo
        scale = self.cells / width if width > 0 else 0.0
        self.scale = scale if np.isfinite(scale) else 0.0
        cell_starts = _lerp(self.lo, hi, self.cells)[:-1]
        self.guess = np.searchsorted(interior, cell_starts, side="right")

    def __call__(self, c: np.ndarray) -> np.ndarray:
        cell = ((0.5 * c - 0.5 * self.lo) * self.scale).astype(np.intp)
        np.clip(cell, 0, self.cells - 1, out=cell)
        s = self.guess[cell]
        bounds = self.bounds
        bad = np.flatnonzero(c >= bounds[s + 1])
        while bad.size:
            s[bad] += 1
            bad = bad[c[bad] >= bounds[s[bad] + 1]]
        bad = np.flatnonzero(c < bounds[s])
        while bad.size:
            s[bad] -= 1
            bad = bad[c[bad] < bounds[s[bad]]]
        return s


def _count(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Return the number of scores in each interval ``[edges[k], edges[k + 1])``."""
    locate = _Locator(edges)
    counts = np.zeros(locate.n, dtype=np.int64)
    for start in range(0, x.size, CHUNK):
        counts += np.bincount(locate(_chunk(x, start)), minlength=locate.n)
    return counts


def assign(x: np.ndarray, edges: np.ndarray):
    """Return ``(ids, sizes, sums)`` for ``edges[k] <= s < edges[k + 1]`` (last stratum closed)."""
    locate = _Locator(edges)
    ids = np.empty(x.size, dtype=_id_dtype(locate.n))
    sizes = np.zeros(locate.n, dtype=np.int64)
    sums = np.zeros(locate.n)
    for start in range(0, x.size, CHUNK):
        c = _chunk(x, start)
        s = locate(c)
        ids[start : start + c.size] = s
        sizes += np.bincount(s, minlength=locate.n)
        sums += np.bincount(s, weights=c, minlength=locate.n)
    return ids, sizes, sums


def merge_empty(ids, edges, sizes, sums):
    """Merge each empty stratum into its non-empty neighbour below (the first one: above)."""
    keep = sizes > 0
    if keep.all():
        return ids, edges, sizes, sums
    new_id = (np.cumsum(keep) - 1).clip(min=0).astype(ids.dtype)
    for start in range(0, ids.size, CHUNK):
        block = ids[start : start + CHUNK]
        block[...] = new_id[block]
    lower = edges[:-1][keep]
    lower[0] = edges[0]
    return ids, np.append(lower, edges[-1]), sizes[keep], sums[keep]
