"""Before sampling: the estimator's sampling distribution and expected interval widths.

Webber (2013) §2.4 shows the plug-in recall estimator is skewed and biased for small samples of
low-prevalence segments; §4.3 asks how wide an interval a design can expect and how to split a
sample between the segments. Both questions have answers computed from the hypergeometric
distribution of the sampled counts ``(r1, r0)`` for a hypothetical population.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayeval._constraints import (
    Integer,
    OneOf,
    Optional,
    Prob,
    Real,
    Seed,
    SequenceOf,
    Whole,
    validate,
)
from bayeval._validation import check_rng
from bayeval.intervals.api import F1_METHODS, PRECISION_METHODS, RECALL_METHODS
from bayeval.stratified_sample import StratifiedSample

__all__ = [
    "Allocation",
    "EstimatorDistribution",
    "WidthEstimate",
    "expected_interval_width",
    "expected_width_grid",
    "recall_estimator_distribution",
    "recommend_allocation",
]


@dataclass(frozen=True)
class EstimatorDistribution:
    """Exact sampling distribution of the plug-in recall estimator (Webber Eq. 2).

    Attributes
    ----------
    values, probabilities : numpy.ndarray
        Distinct estimates (increasing) and their probabilities, over the outcomes where the
        estimate is defined (some positive was sampled).
    true_recall : float
        ``R1 / (R1 + R0)``.
    undefined_probability : float
        Probability that no positive is sampled, so the estimate is 0/0.
    """

    values: np.ndarray
    probabilities: np.ndarray
    true_recall: float
    undefined_probability: float

    @property
    def mean(self) -> float:
        """Expected estimate, conditional on it being defined."""
        return float(self.values @ self.probabilities / self.probabilities.sum())

    @property
    def bias(self) -> float:
        """``mean - true_recall``."""
        return self.mean - self.true_recall

    @property
    def std(self) -> float:
        """Standard deviation of the estimate, conditional on it being defined."""
        w = self.probabilities / self.probabilities.sum()
        return float(np.sqrt(w @ (self.values - self.mean) ** 2))

    @validate(q=Prob())
    def quantile(self, q: float) -> float:
        """Smallest estimate whose conditional CDF reaches ``q``."""
        cdf = np.cumsum(self.probabilities) / self.probabilities.sum()
        return float(self.values[np.searchsorted(cdf, q - 1e-12)])


_COUNT = Whole(minimum=0)


@validate(N1=_COUNT, R1=_COUNT, N0=_COUNT, R0=_COUNT, n1=Whole(minimum=1), n0=Whole(minimum=1))
def recall_estimator_distribution(
    *, N1: int, R1: int, N0: int, R0: int, n1: int, n0: int
) -> EstimatorDistribution:
    """Compute the sampling distribution of the plug-in recall estimate for a known population.

    Sums over every outcome ``(r1, r0)`` of the two independent hypergeometric samples
    (Webber §2.3-2.4), so it is exact, with no simulation.

    Parameters
    ----------
    N1, R1 : int
        Retrieved segment size and its number of positives.
    N0, R0 : int
        Unretrieved segment size and its number of positives.
    n1, n0 : int
        Simple random sample sizes from each segment, at least 1 each.

    Returns
    -------
    EstimatorDistribution

    Examples
    --------
    Webber's example (Table 2.4, Fig. 2): true recall 0.25, estimator mean 0.31.

    >>> from bayeval.intervals.design import recall_estimator_distribution
    >>> d = recall_estimator_distribution(N1=2000, R1=1000, N0=100000, R0=3000, n1=100, n0=100)
    >>> print(f"{d.true_recall:.3f} {d.mean:.3f} {d.bias:+.3f}")
    0.250 0.314 +0.064
    """
    for small, big, s_name, b_name in (
        (R1, N1, "R1", "N1"),
        (R0, N0, "R0", "N0"),
        (n1, N1, "n1", "N1"),
        (n0, N0, "n0", "N0"),
    ):
        if small > big:
            raise ValueError(f"`{s_name}` cannot exceed `{b_name}`; got {small} > {big}.")
    if R1 + R0 == 0:
        raise ValueError("recall is undefined when `R1` + `R0` = 0; give a positive yield.")
    from scipy import stats  # imported here: scipy.stats is slow to import

    r1 = np.arange(n1 + 1)
    r0 = np.arange(n0 + 1)
    p1 = stats.hypergeom.pmf(r1, N1, R1, n1)
    p0 = stats.hypergeom.pmf(r0, N0, R0, n0)
    y1 = (N1 * r1 / n1)[:, None]
    y0 = (N0 * r0 / n0)[None, :]
    total = y1 + y0
    prob = p1[:, None] * p0[None, :]
    defined = (total > 0) & (prob > 0)
    estimate = np.divide(y1, total, out=np.zeros_like(total), where=defined)
    values, inverse = np.unique(estimate[defined], return_inverse=True)
    probabilities = np.bincount(inverse, weights=prob[defined], minlength=values.size)
    return EstimatorDistribution(
        values=values,
        probabilities=probabilities,
        true_recall=R1 / (R1 + R0),
        undefined_probability=float(prob[total == 0].sum()),
    )


@dataclass(frozen=True)
class WidthEstimate:
    """Expected interval width with its Monte Carlo standard error."""

    mean: float
    se: float
    outcomes: int


#: Interval methods of any measure (the interval function checks the method against ``measure``).
METHODS = tuple(dict.fromkeys((*RECALL_METHODS, *PRECISION_METHODS, *F1_METHODS)))
MEASURES = ("recall", "precision", "f1")
_RATE = Real(above=0, at_most=1)
#: The constraints of the anticipated population and the interval, shared by the design tools.
DESIGN_CONSTRAINTS = {
    "population": Whole(minimum=0),
    "retrieved": Whole(minimum=0),
    "recall": _RATE,
    "precision": Optional(_RATE),
    "prevalence": Optional(_RATE),
    "method": OneOf(METHODS),
    "prob": Prob(),
    "outcomes": Integer(minimum=2),
}


def _population_yields(population, retrieved, recall, precision, prevalence):
    """Return sizes and positives ``(N1, N0, R1, R0)`` of a hypothetical population.

    Recall and one of precision or prevalence fix the positives.
    """
    if retrieved >= population:
        raise ValueError(
            f"`retrieved` must be smaller than `population`; got {retrieved} >= {population}."
        )
    if (precision is None) == (prevalence is None):
        raise ValueError(
            "give exactly one of `precision` and `prevalence` (with `recall` either fixes the "
            f"population's positives); got precision={precision!r}, prevalence={prevalence!r}."
        )
    N1, N0 = retrieved, population - retrieved
    if precision is not None:
        R1 = round(precision * N1)
        R0 = round(R1 / recall) - R1
    else:
        total = round(prevalence * population)
        R1 = round(recall * total)
        R0 = total - R1
    if R1 > N1 or R0 > N0:
        raise ValueError(
            f"these rates put {R1} positives in the retrieved segment of {N1} and {R0} in the "
            f"unretrieved segment of {N0}: they do not fit; check recall and precision or "
            "prevalence."
        )
    return N1, N0, R1, R0


@validate(
    **DESIGN_CONSTRAINTS,
    sample_size=Whole(minimum=0),
    retrieved_share=Prob(),
    measure=OneOf(MEASURES),
    rng=Seed(),
)
def expected_interval_width(
    *,
    population: int,
    retrieved: int,
    recall: float,
    sample_size: int,
    retrieved_share: float,
    precision: float | None = None,
    prevalence: float | None = None,
    method: str = "beta-binomial-half",
    measure: str = "recall",
    prob: float = 0.95,
    outcomes: int = 200,
    rng: int | np.random.Generator | None = None,
) -> WidthEstimate:
    """Estimate the expected width of an interval for a planned design (Webber §4.3).

    The hypothetical population has ``R = round(prevalence * population)`` positives, of which
    ``R1 = round(recall * R)`` are retrieved; or, given precision instead of prevalence,
    ``R1 = round(precision * retrieved)`` and ``R = round(R1 / recall)``. ``outcomes`` sample
    outcomes are drawn from the two segments' hypergeometric distributions and the interval is
    computed for each; the mean width is reported with its Monte Carlo standard error.

    Parameters
    ----------
    population, retrieved : int
        Pool size and retrieved-segment size (both known at design time).
    recall : float
        Anticipated recall of the retrieval, in (0, 1].
    sample_size : int
        Total labels to buy.
    retrieved_share : float
        Fraction of them drawn from the retrieved segment, in (0, 1).
    precision, prevalence : float, optional
        Exactly one: anticipated precision of the retrieval, or prevalence in the pool.
    method, measure, prob : str, str, float
        The interval to plan for (see :func:`bayeval.recall_interval`).
    outcomes : int
        Simulated sample outcomes.
    rng : int or numpy.random.Generator, optional
        Seed of the simulated outcomes and of any draws the intervals make.

    Returns
    -------
    WidthEstimate

    Examples
    --------
    Webber's Figure 15 setting: 5 million documents, half a million retrieved, recall and
    precision 0.5, 5,000 labels with a fifth of them from the retrieved segment.

    >>> from bayeval.intervals import expected_interval_width
    >>> w = expected_interval_width(population=5_000_000, retrieved=500_000, recall=0.5,
    ...                             precision=0.5, sample_size=5000, retrieved_share=0.2,
    ...                             outcomes=40, rng=0)
    >>> 0.02 < w.mean < 0.1 and w.se < 0.01
    True
    """
    from bayeval.intervals.api import f1_interval, precision_interval, recall_interval

    N1, N0, R1, R0 = _population_yields(population, retrieved, recall, precision, prevalence)
    n1 = max(1, round(retrieved_share * sample_size))
    n0 = sample_size - n1
    if n0 < 1 or n1 > N1 or n0 > N0:
        raise ValueError(
            f"`sample_size` {sample_size} split {n1}/{n0} does not fit segments of {N1} and {N0}."
        )
    gen = check_rng(rng)
    r1 = gen.hypergeometric(R1, N1 - R1, n1, size=outcomes)
    r0 = gen.hypergeometric(R0, N0 - R0, n0, size=outcomes)
    fn = {"recall": recall_interval, "precision": precision_interval, "f1": f1_interval}[measure]
    widths = np.empty(outcomes)
    for i in range(outcomes):
        s = StratifiedSample.two_segments(N1=N1, n1=n1, r1=r1[i], N0=N0, n0=n0, r0=r0[i])
        res = fn(s, method=method, prob=prob, rng=gen)
        widths[i] = res.upper - res.lower
    return WidthEstimate(
        float(widths.mean()), float(widths.std(ddof=1) / np.sqrt(outcomes)), outcomes
    )


@validate(
    **DESIGN_CONSTRAINTS,
    sample_sizes=SequenceOf(Whole(minimum=0)),
    retrieved_shares=SequenceOf(Prob()),
    measure=OneOf(MEASURES),
    rng=Seed(),
)
def expected_width_grid(
    *,
    population: int,
    retrieved: int,
    recall: float,
    sample_sizes,
    retrieved_shares,
    precision: float | None = None,
    prevalence: float | None = None,
    method: str = "beta-binomial-half",
    measure: str = "recall",
    prob: float = 0.95,
    outcomes: int = 100,
    rng: int | np.random.Generator | None = None,
):
    """Tabulate expected interval widths by sample size and allocation (Webber Figs. 14-15).

    Parameters
    ----------
    population, retrieved, recall, precision, prevalence, method, measure, prob, outcomes, rng
        As in :func:`expected_interval_width`.
    sample_sizes : sequence of int
        Total labels to compare.
    retrieved_shares : sequence of float
        Fractions of the labels drawn from the retrieved segment.

    Returns
    -------
    xarray.Dataset
        ``mean_width`` and its Monte Carlo standard error ``se`` with dims ``sample_size`` and
        ``retrieved_share``; NaN where a design does not fit the segments.

    Examples
    --------
    >>> from bayeval.intervals import expected_width_grid
    >>> grid = expected_width_grid(population=5_000_000, retrieved=500_000, recall=0.9,
    ...                            precision=0.1, sample_sizes=[1000, 4000],
    ...                            retrieved_shares=[0.2, 0.8], outcomes=20, rng=1)
    >>> best = grid["mean_width"].idxmin("retrieved_share")  # allocation with narrowest width
    >>> [float(x) for x in best]  # high recall, low precision: favour the unretrieved segment
    [0.2, 0.2]
    """
    import xarray as xr

    gen = check_rng(rng)
    sizes, shares = list(sample_sizes), list(retrieved_shares)
    mean = np.full((len(sizes), len(shares)), np.nan)
    se = np.full_like(mean, np.nan)
    for i, size in enumerate(sizes):
        for j, share in enumerate(shares):
            try:
                w = expected_interval_width(
                    population=population,
                    retrieved=retrieved,
                    recall=recall,
                    precision=precision,
                    prevalence=prevalence,
                    sample_size=size,
                    retrieved_share=share,
                    method=method,
                    measure=measure,
                    prob=prob,
                    outcomes=outcomes,
                    rng=gen,
                )
            except ValueError as err:
                if "does not fit segments" not in str(err):
                    raise
                continue
            mean[i, j], se[i, j] = w.mean, w.se
    coords = {"sample_size": sizes, "retrieved_share": shares}
    dims = ("sample_size", "retrieved_share")
    return xr.Dataset(
        {"mean_width": (dims, mean), "se": (dims, se)},
        coords=coords,
        attrs={"method": method, "measure": measure, "prob": prob, "outcomes": outcomes},
    )


@dataclass(frozen=True)
class Allocation:
    """A recommended sample design: the smallest total meeting a target width, and its split.

    Attributes
    ----------
    sample_size : int
        Total labels.
    retrieved_share : float
        Share of them from the retrieved segment (``n1 / sample_size``).
    n1, n0 : int
        Labels from the retrieved and unretrieved segments.
    width : WidthEstimate
        Expected width of the interval at this design.
    target_width : float
    evaluated : pandas.DataFrame
        Every design tried: ``sample_size``, ``retrieved_share``, ``mean_width``, ``se``.
    """

    sample_size: int
    retrieved_share: float
    n1: int
    n0: int
    width: WidthEstimate
    target_width: float
    evaluated: object


@validate(
    **DESIGN_CONSTRAINTS,
    target_width=Prob(),
    min_sample_size=Whole(minimum=2),
    max_sample_size=Optional(Whole(minimum=0)),
    rng=Integer(minimum=0),
)
def recommend_allocation(
    *,
    population: int,
    retrieved: int,
    recall: float,
    target_width: float,
    precision: float | None = None,
    prevalence: float | None = None,
    method: str = "beta-binomial-half",
    prob: float = 0.95,
    min_sample_size: int = 100,
    max_sample_size: int | None = None,
    outcomes: int = 60,
    rng: int = 0,
) -> Allocation:
    """Recommend the smallest sample, and its split between segments, for a target width.

    Webber (2013) §4.3 (Figs. 14-15): the expected width of a recall interval depends on the
    total sample and on how it is split between the retrieved and unretrieved segments. For each
    candidate total, the best split is found by golden-section search over the retrieved share
    (the expected width is close to unimodal in it); the total is found by doubling, then
    bisection, until the best split's expected width is at most ``target_width``.

    Parameters
    ----------
    population, retrieved, recall, precision, prevalence, method, prob
        The anticipated population and the interval, as in :func:`expected_interval_width`.
    target_width : float
        Largest acceptable expected width, in (0, 1).
    min_sample_size : int, default 100
        Smallest total to consider. Tiny samples often see no positive in a segment, and then
        some intervals (the normal ones) collapse to zero width: an expected width below the
        target there is an artefact, not a design.
    max_sample_size : int, optional
        Largest total to consider; default the population size.
    outcomes : int, default 60
        Simulated sample outcomes per design. Every design uses the same seed (common random
        numbers), so comparisons between designs are smoother than their Monte Carlo error.
    rng : int, default 0
        Seed of the simulated outcomes.

    Returns
    -------
    Allocation

    Examples
    --------
    Webber's Figure 15 setting with a normal interval (fast), aiming at +-0.05:

    >>> from bayeval.intervals import recommend_allocation
    >>> plan = recommend_allocation(population=5_000_000, retrieved=500_000, recall=0.5,
    ...                             precision=0.5, target_width=0.1, method="normal-mle")
    >>> plan.sample_size < 3000, 0.1 < plan.retrieved_share < 0.5, plan.width.mean <= 0.1
    (True, True, True)
    """
    N1, N0, _, _ = _population_yields(population, retrieved, recall, precision, prevalence)
    target = target_width
    largest = N1 + N0 if max_sample_size is None else max_sample_size
    smallest = min_sample_size
    if smallest > largest:
        raise ValueError(
            "`min_sample_size` and `max_sample_size` must satisfy 2 <= min <= max (a label from "
            f"each segment); got min_sample_size={min_sample_size!r}, "
            f"max_sample_size={max_sample_size!r}."
        )
    tried: dict[tuple[int, float], WidthEstimate] = {}

    def width(size: int, share: float) -> float:
        n1 = min(max(1, round(share * size)), N1, size - 1)
        key = (size, n1 / size)
        if key not in tried:
            tried[key] = expected_interval_width(
                population=population, retrieved=retrieved, recall=recall, precision=precision,
                prevalence=prevalence, sample_size=size, retrieved_share=n1 / size,
                method=method, prob=prob, outcomes=outcomes, rng=int(rng),
            )  # fmt: skip
        return tried[key].mean

    def best_share(size: int) -> tuple[float, float]:
        low, high = max(1 / size, 1 - N0 / size), min(1 - 1 / size, N1 / size)
        ratio = (5**0.5 - 1) / 2
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        wa, wb = width(size, a), width(size, b)
        for _ in range(8):
            if wa <= wb:
                high, b, wb = b, a, wa
                a = high - ratio * (high - low)
                wa = width(size, a)
            else:
                low, a, wa = a, b, wb
                b = low + ratio * (high - low)
                wb = width(size, b)
        return (a, wa) if wa <= wb else (b, wb)

    size = smallest
    while best_share(size)[1] > target:
        if size >= largest:
            raise ValueError(
                f"`target_width` {target} is not reached with up to {largest} labels "
                f"(best expected width {best_share(size)[1]:.4f}); raise `max_sample_size` or "
                "accept a wider interval."
            )
        size = min(2 * size, largest)
    low = max(smallest, size // 2)
    while size - low > max(1, size // 100):  # to within 1% of the smallest total
        mid = (low + size) // 2
        if best_share(mid)[1] <= target:
            size = mid
        else:
            low = mid
    share, _ = best_share(size)
    n1 = min(max(1, round(share * size)), N1, size - 1)
    import pandas as pd

    evaluated = pd.DataFrame(
        [(s, f, w.mean, w.se) for (s, f), w in sorted(tried.items())],
        columns=["sample_size", "retrieved_share", "mean_width", "se"],
    )
    return Allocation(
        sample_size=size, retrieved_share=n1 / size, n1=n1, n0=size - n1,
        width=tried[(size, n1 / size)], target_width=target, evaluated=evaluated,
    )  # fmt: skip
