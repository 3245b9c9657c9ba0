"""Closed-form posteriors of segment yields, and the measures built from them.

A stratum of size ``N`` with ``n`` sampled and ``r`` positive has, under a ``Beta(a, b)`` prior on
its prevalence, the yield posterior ``R = r + X`` with ``X ~ BetaBinomial(N - n, a + r, b + n - r)``
(Webber 2013 Eq. 17), or, in the binomial approximation of §3.5, ``R = r + (N - n) p`` with
``p ~ Beta(a + r, b + n - r)``.

For two segments (one stratum each) recall, precision and F1 have posterior CDFs that reduce to
one-dimensional sums::

    P(recall <= t) = P(R1 <= t / (1 - t) * R0)          = E_R0[ F1(t / (1 - t) * R0) ]
    P(F1 <= t)     = P(R1 <= t / (2 - t) * (N1 + R0))   = E_R0[ F1(t / (2 - t) * (N1 + R0)) ]
    P(prec <= t)   = F1(t * N1)

where ``F1`` is the CDF of the retrieved yield. :class:`DiscreteYield` holds a segment's law as
at most ``max_atoms`` bins with exact (small support) or midpoint-rule (large support) masses,
so these sums cost ``O(max_atoms)`` per evaluation and need no Monte Carlo.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = [
    "force_recall_ends",
    "ContinuousYield",
    "DiscreteYield",
    "YieldDistribution",
    "beta_binomial_yield",
    "beta_yield",
    "measure_cdf",
    "measure_from_yields",
    "measure_ppf",
    "sample_stratum_yields",
]

MAX_ATOMS = 1024
_NODE_FLOOR = 1e-10  # quadrature nodes lighter than this are dropped
_TAIL = 1e-13  # probability left out of the represented support at each end
_EXACT_EDGE_BINS = 32  # bins kept exact, integer by integer, next to a singular end of the pmf


class _CellLaw:
    """Masses on ``n`` equal cells, with a linear density inside each cell.

    The slope in cell ``i`` is that of the neighbouring masses, clipped so the density stays
    non-negative; the CDF is therefore quadratic within a cell and exact at cell edges. This
    turns the midpoint rule's error in the CDF from ``O(w^2 f')`` into ``O(w^3 f'')``.
    """

    def _set_cells(self, mass: np.ndarray) -> None:
        self.mass = mass / mass.sum()
        n = self.mass.size
        self.grid = np.concatenate(([0.0], np.cumsum(self.mass)))
        slope = np.zeros_like(self.mass)
        if n > 2:
            slope[1:-1] = 0.5 * (self.mass[2:] - self.mass[:-2])
            slope[0], slope[-1] = self.mass[1] - self.mass[0], self.mass[-1] - self.mass[-2]
        half = 0.5 * np.clip(slope, -2 * self.mass, 2 * self.mass)
        # Within cell i at fraction f the CDF is grid[i] + f (mass[i] - half[i]) + half[i] f^2.
        # The coefficient tables carry one extra zero so that u = n needs no clamping.
        self._linear = np.append(self.mass - half, 0.0)
        self._quadratic = np.append(half, 0.0)

    def _cell_cdf(self, u: np.ndarray) -> np.ndarray:
        """CDF at position ``u``, measured in cells from the first cell's left edge."""
        u = np.minimum(np.maximum(u, 0.0), self.mass.size)
        i = u.astype(np.intp)
        f = u - i
        return self.grid[i] + f * (self._linear[i] + self._quadratic[i] * f)

    def nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """Quadrature nodes (yield values) and weights for expectations over this law.

        Nodes of weight below ``_NODE_FLOOR`` (extreme tails; at most ~1e-7 of mass in all) are
        left out and the rest renormalised: they cannot move a CDF by more than that mass, and
        leaving them out makes every CDF evaluation cheaper.
        """
        if not hasattr(self, "_kept"):
            keep = self._weights >= _NODE_FLOOR
            self._kept = (self._nodes[keep], self._weights[keep] / self._weights[keep].sum())
        return self._kept


def _corrected_midpoint(density: np.ndarray, width: float) -> np.ndarray:
    """Cell masses: midpoint rule plus its curvature correction ``w^3 f'' / 24``.

    ``f''`` comes from neighbouring cells (spacing ``w``), so the rule is fourth-order accurate
    where the density is smooth; the end cells keep the plain midpoint rule.
    """
    mass = density * width
    mass[1:-1] += width / 24 * (density[:-2] - 2 * density[1:-1] + density[2:])
    return np.maximum(mass, 0.0)


class DiscreteYield(_CellLaw):
    """Law of ``R = offset + X`` for an integer ``X``, as cells of ``h`` integers.

    Cell ``i`` holds the integers ``x_lo + i h, ..., x_lo + (i + 1) h - 1`` (``h = 1``: exact
    atoms). Where the pmf is singular (next to 0 when ``a < 1``, next to ``M`` when ``b < 1``)
    the first or last cells also keep the exact CDF at every integer.

    Use :func:`beta_binomial_yield` to build one.
    """

    def __init__(self, offset, x_lo, h, mass, *, low=None, high=None):
        self.offset = float(offset)
        self.x_lo = int(x_lo)
        self.h = int(h)
        total = mass.sum()
        self._set_cells(mass)
        centres = self.x_lo + self.h * np.arange(mass.size) + 0.5 * (self.h - 1)
        nodes, weights = [centres], [self.mass]
        keep = np.ones(mass.size, dtype=bool)
        # Exact per-integer CDF tables at a singular end: (first integer, cumulative masses).
        self._tables = []
        for end, table in (("low", low), ("high", high)):
            if table is None:
                continue
            start, pmf = table
            pmf = pmf / total
            n_cells = pmf.size // self.h
            first = 0 if end == "low" else mass.size - n_cells
            self._tables.append((start, self.grid[first] + np.cumsum(pmf)))
            # Quadrature there: exact atoms first, then groups growing by 10%, each at its mean.
            keep[first : first + n_cells] = False
            starts = _geometric_starts(pmf.size)
            groups = starts if end == "low" else pmf.size - starts[::-1] - 1
            groups = np.unique(np.clip(groups, 0, pmf.size - 1))
            xs = start + np.arange(pmf.size)
            w = np.add.reduceat(pmf, groups)
            with np.errstate(invalid="ignore", divide="ignore"):
                m = np.add.reduceat(xs * pmf, groups) / w
            nodes.append(np.where(w > 0, m, xs[groups]))
            weights.append(w)
        nodes[0], weights[0] = centres[keep], self.mass[keep]
        self._nodes = self.offset + np.concatenate(nodes)
        self._weights = np.concatenate(weights)

    @property
    def support(self) -> tuple[float, float]:
        """Smallest and largest represented yield."""
        return self.offset + self.x_lo, self.offset + self.x_lo + self.h * self.mass.size - 1

    def cdf(self, y) -> np.ndarray:
        """``P(R <= y)`` for real ``y`` (vectorised; the result has the shape of ``y``)."""
        y = np.asarray(y, dtype=float)
        return self._cdf(y.reshape(-1)).reshape(y.shape)

    def _cdf(self, y: np.ndarray) -> np.ndarray:
        # A slack of 1e-12 relative (plus 1e-9) keeps y = 3 * (1 + 1e-16) and
        # 2.9999999999999996 on the same atom; yields are non-negative.
        k = np.floor(y * (1 + 1e-12) + (1e-9 - self.offset))
        if self.h == 1:  # exact atoms: the CDF is a table lookup
            u = np.minimum(np.maximum(k + (1 - self.x_lo), 0.0), self.mass.size)
            return self.grid[u.astype(np.intp)]
        out = self._cell_cdf((k + (1 - self.x_lo)) * (1 / self.h))
        for start, cum in self._tables:
            j = k - start
            inside = (j >= 0) & (j < cum.size)
            if inside.any():
                out[inside] = cum[j[inside].astype(np.intp)]
        return out


class ContinuousYield(_CellLaw):
    """Law of ``R = offset + M p`` with ``p ~ Beta(a, b)`` (the binomial model of Webber §3.5).

    ``p`` is held on ``n_cells`` equal cells over all but ``2 * 1e-13`` of its mass (all of
    ``[0, 1]`` next to a singular end), with corrected-midpoint masses from the beta density;
    in the outermost cells the masses and the CDF are exact incomplete beta functions.
    """

    def __init__(self, offset, M, a, b, *, n_cells=MAX_ATOMS):
        self.offset, self.M, self.a, self.b = float(offset), int(M), float(a), float(b)
        if self.M == 0:
            self._nodes, self._weights = np.array([self.offset]), np.ones(1)
            return
        p_lo = 0.0 if a < 1 else float(special.betaincinv(a, b, _TAIL))
        p_hi = 1.0 if b < 1 else float(special.betainccinv(a, b, _TAIL))
        self.p_lo, self.width = p_lo, (p_hi - p_lo) / n_cells
        edges = p_lo + self.width * np.arange(n_cells + 1)
        centres = edges[:-1] + 0.5 * self.width
        density = np.exp(
            (a - 1) * np.log(centres) + (b - 1) * np.log1p(-centres) - special.betaln(a, b)
        )
        mass = _corrected_midpoint(density, self.width)
        node_p = centres.copy()
        # The outermost cells take exact incomplete-beta masses and CDF values: there the
        # density may be singular (a < 1 or b < 1) or change by orders of magnitude per cell.
        span = min(n_cells // 2, _EXACT_EDGE_BINS)
        for cells in (slice(0, span), slice(n_cells - span, None)):
            cell_edges = edges[cells.start : (cells.stop or n_cells) + 1]
            mass[cells] = np.diff(special.betainc(a, b, cell_edges))
            first_moment = np.diff(special.betainc(a + 1, b, cell_edges)) * a / (a + b)
            with np.errstate(invalid="ignore", divide="ignore"):
                node_p[cells] = np.where(mass[cells] > 0, first_moment / mass[cells], node_p[cells])
        self._exact_cells = span  # cells at either end whose CDF is computed exactly
        self._set_cells(mass)
        self._nodes = self.offset + self.M * node_p
        self._weights = self.mass

    @property
    def support(self) -> tuple[float, float]:
        """Smallest and largest possible yield."""
        return self.offset, self.offset + self.M

    def cdf(self, y) -> np.ndarray:
        """``P(R <= y)`` for real ``y`` (vectorised; the result has the shape of ``y``)."""
        y = np.asarray(y, dtype=float)
        return self._cdf(y.reshape(-1)).reshape(y.shape)

    def _cdf(self, y: np.ndarray) -> np.ndarray:
        if self.M == 0:
            return (y >= self.offset).astype(float)
        u = (y - self.offset) * (1 / (self.M * self.width)) - self.p_lo / self.width
        out = self._cell_cdf(u)
        n, span = self.mass.size, self._exact_cells
        # Exact values inside the outermost cells; beyond the support the cells give 0 or 1.
        exact = ((u > 0) & (u < span)) | ((u > n - span) & (u < n))
        if exact.any():
            p = (y[exact] - self.offset) / self.M
            out[exact] = special.betainc(self.a, self.b, np.clip(p, 0.0, 1.0))
        return out


YieldDistribution = DiscreteYield | ContinuousYield


def _log_beta_binomial_pmf(x, M, a, b):
    """Log pmf of BetaBinomial(M, a, b) at (possibly non-integer) ``x``, by log-gamma."""
    return (
        special.gammaln(M + 1)
        - special.gammaln(x + 1)
        - special.gammaln(M - x + 1)
        + special.betaln(x + a, M - x + b)
        - special.betaln(a, b)
    )


def _support(M: int, a: float, b: float) -> tuple[int, int]:
    """Integer range of ``X`` holding all but about ``2 * _TAIL`` of the mass."""
    p_lo = special.betaincinv(a, b, _TAIL)
    p_hi = special.betainccinv(a, b, _TAIL)
    # Binomial noise around M p: 8 standard deviations leave a negligible tail.
    lo = M * p_lo - 8 * np.sqrt(M * p_lo * (1 - p_lo)) - 1
    hi = M * p_hi + 8 * np.sqrt(M * p_hi * (1 - p_hi)) + 1
    return int(max(0, np.floor(lo))), int(min(M, np.ceil(hi)))


def beta_binomial_yield(
    offset: int, M: int, a: float, b: float, *, max_atoms: int = MAX_ATOMS
) -> DiscreteYield:
    """Law of ``offset + BetaBinomial(M, a, b)`` in at most ``max_atoms`` bins.

    Parameters
    ----------
    offset : int
        Sampled positives ``r`` (seen, so added back exactly).
    M : int
        Unsampled items ``N - n``.
    a, b : float
        Posterior beta parameters ``a0 + r`` and ``b0 + n - r``.
    max_atoms : int
        Supports up to this size are represented exactly; wider ones in equal-width bins whose
        masses use the midpoint rule, except next to a singular end of the pmf, where masses
        and CDF are exact sums.

    Returns
    -------
    DiscreteYield

    Examples
    --------
    >>> d = beta_binomial_yield(3, 10, 1.0, 1.0)    # uniform over 3..13
    >>> print(f"{float(d.cdf(8)[()]):.4f}")
    0.5455
    """
    if M == 0:
        return DiscreteYield(offset, 0, 1, np.ones(1))
    x_lo, x_hi = _support(M, a, b)
    width = x_hi - x_lo + 1
    h = -(-width // max_atoms)
    n_bins = -(-width // h)
    x_lo = max(0, min(x_lo, x_hi + 1 - n_bins * h))  # grid ends at x_hi where possible
    centres = x_lo + h * np.arange(n_bins) + 0.5 * (h - 1)
    overshoot = x_lo + n_bins * h - 1 > M  # the last bin reaches past M: sum it exactly
    centres = np.minimum(centres, M)
    if h == 1:
        return DiscreteYield(offset, x_lo, 1, np.exp(_log_beta_binomial_pmf(centres, M, a, b)))
    mass = _corrected_midpoint(np.exp(_log_beta_binomial_pmf(centres, M, a, b)), h)
    tables = {}
    span = min(n_bins, _EXACT_EDGE_BINS)
    for end, singular in (("low", a < 1 and x_lo == 0), ("high", b < 1 or overshoot)):
        if not singular:
            continue
        bins = np.arange(span) if end == "low" else np.arange(n_bins - span, n_bins)
        pmf = _pmf_run(x_lo + bins[0] * h, span * h, M, a, b)
        mass[bins] = pmf.reshape(span, h).sum(axis=1)
        tables[end] = (x_lo + bins[0] * h, pmf)
    return DiscreteYield(offset, x_lo, h, mass, **tables)


def _pmf_run(start: int, count: int, M: int, a: float, b: float) -> np.ndarray:
    """Beta-binomial pmf at ``start, ..., start + count - 1`` (0 beyond ``M``).

    One log-gamma evaluation, then the ratio recurrence
    ``f(x + 1) / f(x) = (M - x)(x + a) / ((x + 1)(M - x - 1 + b))`` summed in logs: a long run
    costs about as much as ``np.log`` on it.
    """
    stop = min(start + count, M + 1)
    x = np.arange(start, stop - 1, dtype=float)
    log_ratio = np.log((M - x) * (x + a)) - np.log((x + 1) * (M - x - 1 + b))
    logp = _log_beta_binomial_pmf(start, M, a, b) + np.concatenate(([0.0], np.cumsum(log_ratio)))
    return np.concatenate((np.exp(logp), np.zeros(start + count - stop)))


def _geometric_starts(size: int, *, exact: int = 64, growth: float = 0.1) -> np.ndarray:
    """Group starts over ``range(size)``: single integers first, then widths growing by 10%."""
    starts = list(range(min(size, exact)))
    e = exact
    while e < size:
        starts.append(e)
        e += max(1, int(growth * e))
    return np.asarray(starts, dtype=np.intp)


def beta_yield(offset: float, M: int, a: float, b: float, *, max_atoms: int = MAX_ATOMS):
    """Law of ``offset + M p`` with ``p ~ Beta(a, b)``; see :class:`ContinuousYield`.

    Examples
    --------
    >>> d = beta_yield(50, 1900, 50.5, 50.5)
    >>> print(f"{float(d.cdf(50 + 950)):.4f}")
    0.5000
    """
    return ContinuousYield(offset, M, a, b, n_cells=max_atoms)


def measure_from_yields(measure: str, r1, r0, n1_population):
    """Recall, precision or F1 from retrieved and unretrieved yields (arrays broadcast).

    Recall is 0 where both yields are 0, matching the CDFs below (``0 <= t * 0`` for all ``t``).
    """
    r1 = np.asarray(r1, dtype=float)
    r0 = np.asarray(r0, dtype=float)
    if measure == "precision":
        return r1 / n1_population
    if measure == "recall":
        total = r1 + r0
        return np.divide(r1, total, out=np.zeros(np.broadcast(r1, total).shape), where=total > 0)
    if measure == "f1":
        return 2 * r1 / (n1_population + r1 + r0)
    raise ValueError(f"unknown measure {measure!r}")


def measure_cdf(measure: str, t, retrieved, unretrieved, n1_population):
    """Posterior ``P(measure <= t)`` for two independent segment yields (vectorised in ``t``).

    Parameters
    ----------
    measure : {"recall", "precision", "f1"}
        Measure whose posterior CDF is evaluated.
    t : array_like
        Measure values.
    retrieved, unretrieved : DiscreteYield or ContinuousYield
        Laws of ``R1`` and ``R0`` (``unretrieved`` is unused for precision).
    n1_population : int
        Size ``N1`` of the retrieved segment.
    """
    t = np.asarray(t, dtype=float).reshape(-1)
    tc = np.minimum(np.maximum(t, 0.0), 1.0)
    if measure == "precision":
        out = retrieved.cdf(tc * n1_population)
    else:
        x0, w0 = unretrieved.nodes()
        with np.errstate(divide="ignore"):
            if measure == "recall":
                scale, shift = tc / (1 - tc), 0.0
            elif measure == "f1":
                scale, shift = tc / (2 - tc), float(n1_population)
            else:
                raise ValueError(f"unknown measure {measure!r}")
        scale = np.minimum(scale, 1e300)  # t = 1 is handled below; avoid inf * 0
        out = retrieved.cdf(scale[:, None] * (x0 + shift if shift else x0)) @ w0
    out[t >= 1] = 1.0
    out[t < 0] = 0.0
    return out


def _bracket_grid(measure, retrieved, unretrieved, n1_population) -> np.ndarray:
    """Increasing trial values spread over the measure's posterior, ends included.

    A delta-method normal approximation places most of them near the bulk; the extreme
    represented yields give the ends, so every quantile lies between two grid points.
    """
    x1, w1 = retrieved.nodes()
    m1, v1 = w1 @ x1, w1 @ (x1 - w1 @ x1) ** 2
    if unretrieved is None:  # precision needs only the retrieved segment
        unretrieved = DiscreteYield(0, 0, 1, np.ones(1))
    x0, w0 = unretrieved.nodes()
    m0, v0 = w0 @ x0, w0 @ (x0 - w0 @ x0) ** 2
    if measure == "precision":
        mu, grad = m1 / n1_population, (1 / n1_population, 0.0)
    elif measure == "recall":
        total = m1 + m0
        if total > 0:
            mu, grad = m1 / total, (m0 / total**2, -m1 / total**2)
        else:  # both yields are certainly 0: recall is 0 by convention
            mu, grad = 0.0, (0.0, 0.0)
    else:
        denom = n1_population + m1 + m0
        mu, grad = 2 * m1 / denom, (2 * (n1_population + m0) / denom**2, -2 * m1 / denom**2)
    sd = np.sqrt(grad[0] ** 2 * v1 + grad[1] ** 2 * v0)
    lows = measure_from_yields(measure, retrieved.support[0], unretrieved.support[1], n1_population)
    highs = measure_from_yields(
        measure, retrieved.support[1], unretrieved.support[0], n1_population
    )
    guesses = mu + sd * np.array([-8.0, -5, -3, -2, -1, 0, 1, 2, 3, 5, 8])
    grid = np.concatenate(([0.0, float(lows)], guesses, [float(highs), 1.0]))
    return np.unique(np.clip(grid, 0.0, 1.0))


def measure_ppf(measure, q, retrieved, unretrieved, n1_population, *, tol=1e-5):
    """Quantiles ``inf{t : P(measure <= t) >= q}`` on ``[0, 1]`` (vectorised in ``q``).

    One vectorised CDF evaluation on :func:`_bracket_grid` brackets every quantile; Illinois
    regula falsi then shrinks the brackets (halving the function value at an end that survives
    twice makes both ends move) until they are narrower than ``tol``, and the upper end is
    returned. (A stopping rule on ``|F(t) - q|`` would be wrong here: on a plateau of a
    discrete law every point satisfies it, but only the plateau's left end is the quantile.)
    """
    q = np.atleast_1d(np.asarray(q, dtype=float))
    grid = _bracket_grid(measure, retrieved, unretrieved, n1_population)
    f_grid = measure_cdf(measure, grid, retrieved, unretrieved, n1_population)
    f_grid[-1] = 1.0  # P(measure <= 1) = 1 exactly
    j = np.clip(np.searchsorted(f_grid, q, side="left"), 1, grid.size - 1)
    lo, hi = grid[j - 1], grid[j]
    f_lo, f_hi = f_grid[j - 1] - q, f_grid[j] - q
    # Bookkeeping in Python floats: there are only a few quantiles, and numpy's per-call
    # overhead on arrays of that size would cost more than the CDF evaluations.
    lo, hi, f_lo, f_hi = lo.tolist(), hi.tolist(), f_lo.tolist(), f_hi.tolist()
    last = [0] * q.size  # which end the previous step moved: -1 lo, +1 hi
    for _ in range(200):
        active = [i for i in range(q.size) if hi[i] - lo[i] > tol]
        if not active:
            break
        trials = []
        for i in active:
            denom = f_hi[i] - f_lo[i]
            t = (lo[i] * f_hi[i] - hi[i] * f_lo[i]) / denom if denom > 0 else lo[i]
            trials.append(t if lo[i] < t < hi[i] else 0.5 * (lo[i] + hi[i]))
        f_t = measure_cdf(measure, trials, retrieved, unretrieved, n1_population)
        for i, t, value in zip(active, trials, f_t.tolist(), strict=True):
            value -= q[i]
            if value >= 0:
                if last[i] == 1:  # Illinois: the same end survived twice, halve its value
                    f_lo[i] *= 0.5
                hi[i], f_hi[i], last[i] = t, value, 1
            else:
                if last[i] == -1:
                    f_hi[i] *= 0.5
                lo[i], f_lo[i], last[i] = t, value, -1
    return np.array(hi)


def sample_stratum_yields(rng, N, n, r, a, b, size: int, *, finite_population: bool = True):
    """Posterior draws of every stratum's yield, shape ``(size, n_strata)``.

    ``finite_population=True`` draws the beta-binomial posterior exactly (a beta draw, then a
    binomial draw for the unsampled items); ``False`` uses ``r + (N - n) p`` (Webber §3.5).
    """
    N, n, r = (np.asarray(v) for v in (N, n, r))
    p = rng.beta(a + r, b + n - r, size=(size, r.size))
    if finite_population:
        return r + rng.binomial(N - n, p)
    return r + (N - n) * p


def force_recall_ends(low, high, r_retrieved, r_unretrieved):
    """Webber's forced recall bounds (§3.3-3.6), for every method and elementwise.

    The lower bound is 0 when no retrieved positive was sampled, the upper bound 1 when no
    unretrieved one was: the sample cannot rule out that recall is that extreme.

    Examples
    --------
    >>> force_recall_ends(0.2, 0.6, 0, 3)
    (0.0, 0.6)
    """
    low = np.where(np.asarray(r_retrieved) == 0, 0.0, low)
    high = np.where(np.asarray(r_unretrieved) == 0, 1.0, high)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high
