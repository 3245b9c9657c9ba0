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
_TAIL = 1e-13  # probability left out of the represented support at each end
_EXACT_EDGE_BINS = 32  # bins kept exact, integer by integer, next to a singular end of the pmf


class DiscreteYield:
    """Law of ``R = offset + X`` for an integer ``X``, as bins of ``h`` integers on a grid.

    Bin ``i`` holds the integers ``x_lo + i h, ..., x_lo + (i + 1) h - 1``; within a bin the
    density is linear, with the slope of the neighbouring bins' masses, so the CDF is quadratic
    between bin edges (``h = 1``: exact atoms). Where the
    pmf is singular (next to 0 when ``a < 1``, next to ``M`` when ``b < 1``) the first or last
    few bins also keep the exact CDF at every integer.

    Use :func:`beta_binomial_yield` to build one.
    """

    def __init__(self, offset, x_lo, h, mass, *, low=None, high=None):
        self.offset = float(offset)
        self.x_lo = int(x_lo)
        self.h = int(h)
        total = mass.sum()
        self.mass = mass / total
        self.grid = np.concatenate(([0.0], np.cumsum(self.mass)))
        # Within a bin the density is taken linear, its slope from the neighbouring bins and
        # clipped to keep it non-negative (so the CDF stays monotone).
        slope = np.zeros_like(self.mass)
        slope[1:-1] = 0.5 * (self.mass[2:] - self.mass[:-2])
        self.slope = np.clip(slope, -2 * self.mass, 2 * self.mass) if self.h > 1 else slope
        centres = self.x_lo + self.h * np.arange(mass.size) + 0.5 * (self.h - 1)
        nodes, weights = [centres], [self.mass]
        keep = np.ones(mass.size, dtype=bool)
        # Exact per-integer CDF tables at a singular end: (first integer, cumulative masses).
        self.low = self.high = None
        for end, table in (("low", low), ("high", high)):
            if table is None:
                continue
            start, pmf = table
            pmf = pmf / total
            n_bins = pmf.size // self.h
            first = 0 if end == "low" else mass.size - n_bins
            before = self.grid[first]
            setattr(self, end, (start, before + np.cumsum(pmf)))
            # Quadrature there: exact atoms first, then groups growing by 10%, each at its mean.
            keep[first : first + n_bins] = False
            groups = (
                _geometric_starts(pmf.size)
                if end == "low"
                else (pmf.size - _geometric_starts(pmf.size)[::-1] - 1)
            )
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

    def nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """Quadrature nodes (yield values) and weights for expectations over this law."""
        return self._nodes, self._weights

    def cdf(self, y) -> np.ndarray:
        """``P(R <= y)`` for real ``y`` (vectorised)."""
        y = np.asarray(y, dtype=float)
        # A relative slack keeps y = 3 * (1 + 1e-16) and 2.9999999999999996 on the same atom.
        k = np.floor(y - self.offset + 1e-9 * np.maximum(1.0, np.abs(y)))
        u = np.clip((k - self.x_lo + 1) / self.h, 0, self.mass.size)
        i = np.minimum(u.astype(np.intp), self.mass.size - 1)
        frac = u - i
        out = self.grid[i] + frac * self.mass[i] + 0.5 * self.slope[i] * frac * (frac - 1)
        for table in (self.low, self.high):
            if table is not None:
                start, cum = table
                j = k - start
                inside = (j >= 0) & (j < cum.size)
                out = np.where(inside, cum[np.clip(j, 0, cum.size - 1).astype(np.intp)], out)
        return out


class ContinuousYield:
    """Law of ``R = offset + M p`` with ``p ~ Beta(a, b)`` (the binomial model of Webber §3.5).

    The CDF is the exact regularised incomplete beta function. Quadrature uses ``n_nodes``
    equal-probability cells, each at its exact conditional mean, so expectations of linear
    functions are exact.
    """

    def __init__(self, offset, M, a, b, *, n_nodes=MAX_ATOMS):
        self.offset, self.M, self.a, self.b = float(offset), int(M), float(a), float(b)
        if self.M == 0:
            self._nodes, self._weights = np.array([self.offset]), np.ones(1)
            return
        # Equal-probability cells of p, each represented by its exact conditional mean
        # E[p | cell] = a / (a + b) * P_{Beta(a+1, b)}(cell) / P_{Beta(a, b)}(cell).
        edges = special.betaincinv(self.a, self.b, np.linspace(0, 1, n_nodes + 1))
        upper = special.betainc(self.a + 1, self.b, edges)
        means = self.a / (self.a + self.b) * np.diff(upper) * n_nodes
        self._nodes = self.offset + self.M * means
        self._weights = np.full(n_nodes, 1.0 / n_nodes)

    @property
    def support(self) -> tuple[float, float]:
        """Smallest and largest possible yield."""
        return self.offset, self.offset + self.M

    def nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """Quadrature nodes (yield values) and weights for expectations over this law."""
        return self._nodes, self._weights

    def cdf(self, y) -> np.ndarray:
        """``P(R <= y)`` for real ``y`` (vectorised)."""
        y = np.asarray(y, dtype=float)
        if self.M == 0:
            return (y >= self.offset).astype(float)
        return special.betainc(self.a, self.b, np.clip((y - self.offset) / self.M, 0.0, 1.0))


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
    pmf_mid = np.exp(_log_beta_binomial_pmf(centres, M, a, b))
    mass = pmf_mid * h
    # Midpoint rule plus its curvature correction h^3 f''/24, with f'' from neighbouring bins
    # (spacing h): fourth-order accurate where the pmf is smooth.
    mass[1:-1] += h / 24 * (pmf_mid[:-2] - 2 * pmf_mid[1:-1] + pmf_mid[2:])
    mass = np.maximum(mass, 0.0)
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
    return ContinuousYield(offset, M, a, b, n_nodes=max_atoms)


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


def measure_cdf(measure: str, t, retrieved: YieldDistribution, unretrieved, n1_population):
    """Posterior ``P(measure <= t)`` for two independent segment yields (vectorised in ``t``).

    Parameters
    ----------
    measure : {"recall", "precision", "f1"}
    t : array_like
        Measure values in ``[0, 1]``.
    retrieved, unretrieved : YieldDistribution
        Laws of ``R1`` and ``R0`` (``unretrieved`` is unused for precision).
    n1_population : int
        Size ``N1`` of the retrieved segment.
    """
    t = np.atleast_1d(np.asarray(t, dtype=float))
    out = np.where(t >= 1.0, 1.0, 0.0)
    inner = (t >= 0) & (t < 1)
    ts = t[inner]
    if measure == "precision":
        out[inner] = retrieved.cdf(ts * n1_population)
        return out
    x0, w0 = unretrieved.nodes()
    if measure == "recall":
        scale, shift = ts / (1 - ts), 0.0
    elif measure == "f1":
        scale, shift = ts / (2 - ts), float(n1_population)
    else:
        raise ValueError(f"unknown measure {measure!r}")
    y = scale[:, None] * (x0[None, :] + shift)
    out[inner] = retrieved.cdf(y) @ w0
    return out


def _bracket_grid(measure, retrieved, unretrieved, n1_population) -> np.ndarray:
    """Increasing trial values spread over the measure's posterior, ends included.

    A delta-method normal approximation places most of them near the bulk; the extreme
    represented yields give the ends, so every quantile lies between two grid points.
    """
    (x1, w1), (x0, w0) = retrieved.nodes(), unretrieved.nodes()
    m1, m0 = w1 @ x1, w0 @ x0
    v1, v0 = w1 @ (x1 - m1) ** 2, w0 @ (x0 - m0) ** 2
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


def measure_ppf(measure, q, retrieved, unretrieved, n1_population, *, tol=1e-6, ftol=2e-6):
    """Quantiles ``inf{t : P(measure <= t) >= q}`` on ``[0, 1]`` (vectorised in ``q``).

    One vectorised CDF evaluation on :func:`_bracket_grid` brackets every quantile; Illinois
    regula falsi then shrinks the brackets (halving the function value at an end that survives
    twice makes both ends move). It stops when the bracket is narrower than ``tol`` or the
    CDF at its upper end is within ``ftol`` of ``q``.
    """
    q = np.atleast_1d(np.asarray(q, dtype=float))
    grid = _bracket_grid(measure, retrieved, unretrieved, n1_population)
    f_grid = measure_cdf(measure, grid, retrieved, unretrieved, n1_population)
    f_grid[-1] = 1.0  # P(measure <= 1) = 1 exactly
    j = np.clip(np.searchsorted(f_grid, q, side="left"), 1, grid.size - 1)
    lo, hi = grid[j - 1], grid[j]
    f_lo, f_hi = f_grid[j - 1] - q, f_grid[j] - q
    last = np.zeros(q.size, dtype=np.int8)  # which end the previous step moved: -1 lo, +1 hi
    for _ in range(200):
        done = (hi - lo <= tol) | (f_hi <= ftol)
        if done.all():
            break
        with np.errstate(invalid="ignore", divide="ignore"):
            trial = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        ok = np.isfinite(trial) & (trial > lo) & (trial < hi)
        trial = np.clip(np.where(ok, trial, 0.5 * (lo + hi)), lo + 0.1 * tol, hi - 0.1 * tol)
        trial = np.where(done, hi, trial)
        f_t = measure_cdf(measure, trial, retrieved, unretrieved, n1_population) - q
        above = (f_t >= 0) | done
        # Illinois: when the same end survives twice, halve its function value.
        f_lo = np.where(above & (last == 1), 0.5 * f_lo, f_lo)
        f_hi = np.where(~above & (last == -1), 0.5 * f_hi, f_hi)
        hi, f_hi = np.where(above, trial, hi), np.where(above, np.where(done, f_hi, f_t), f_hi)
        lo, f_lo = np.where(above, lo, trial), np.where(above, f_lo, f_t)
        last = np.where(above, 1, -1).astype(np.int8)
    return hi


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
