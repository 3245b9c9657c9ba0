"""Scenarios of Webber (2013) §4: distributions over populations, retrievals and sample sizes.

A *realization* is one population split into a retrieved segment (``N1`` items, ``R1``
positives) and an unretrieved one (``N0``, ``R0``), with the sizes ``n1`` and ``n0`` of the
samples drawn from each. A :class:`Scenario` holds one distribution per variable, as data:

1. population size ``N``; 2. prevalence ``pi``; 3. recall ``Rec``, giving ``R = round(N pi)``,
``R1 = round(R Rec)``, ``R0 = R - R1``; 4. precision ``Prec``, giving ``N1 = round(R1 / Prec)``,
``N0 = N - N1``; 5. the sample sizes ``n1`` (from ``N1``) and ``n0`` (from ``N0``).

Realizations that are impossible (``R0 > N0``, a segment too small for its sample, ...) are
redrawn whole; :meth:`Scenario.realizations` reports how many. The three presets reproduce
Webber's Tables 4.1.1-4.1.3 with the corrections listed in :data:`PRESET_NOTES`.

References
----------
.. [1] W. Webber. Approximate recall confidence intervals. ACM Transactions on Information
   Systems 31(1), 2013, §4.1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from bayeval._constraints import Instance, Integer, Seed, Share, Text, validate, validate_fields
from bayeval._validation import check_real, check_rng

__all__ = [
    "PRESET_NOTES",
    "Doubling",
    "Fraction",
    "LogUniform",
    "PowerUniform",
    "PrecisionBound",
    "Scenario",
    "Uniform",
    "UniformCapped",
    "preset",
]


def _ordered(low: float, high: float, name: str, minimum: float = -math.inf) -> None:
    if not minimum <= low < high:
        bound = "" if minimum == -math.inf else f"{minimum!r} <= "
        raise ValueError(f"`{name}` needs {bound}low < high; got low={low!r}, high={high!r}.")


# --------------------------------------------------------------------------- distributions


@dataclass(frozen=True)
class Uniform:
    """``Unif(low, high)``."""

    low: float
    high: float

    def __post_init__(self):
        _ordered(check_real(self.low, "low"), check_real(self.high, "high"), "Uniform")

    def draw(self, gen: np.random.Generator, size: int) -> np.ndarray:
        """Draw ``size`` values."""
        return gen.uniform(self.low, self.high, size)

    @property
    def support(self) -> tuple[float, float]:
        """Smallest and largest value."""
        return self.low, self.high


@dataclass(frozen=True)
class LogUniform:
    """``scale * base^Unif(low, high)``: log-uniform, ``scale base^low`` to ``scale base^high``."""

    scale: float
    base: float
    low: float
    high: float

    def __post_init__(self):
        if not check_real(self.scale, "scale") > 0 or not check_real(self.base, "base") > 1:
            raise ValueError(f"`LogUniform` needs scale > 0 and base > 1; got {self!r}.")
        _ordered(check_real(self.low, "low"), check_real(self.high, "high"), "LogUniform")

    def draw(self, gen: np.random.Generator, size: int) -> np.ndarray:
        """Draw ``size`` values."""
        return self.scale * self.base ** gen.uniform(self.low, self.high, size)

    @property
    def support(self) -> tuple[float, float]:
        """Smallest and largest value."""
        return self.scale * self.base**self.low, self.scale * self.base**self.high


@dataclass(frozen=True)
class PowerUniform:
    """``scale * Unif(low, high)^power`` (Webber's fit to TREC recalls, Fig. 8)."""

    scale: float
    low: float
    high: float
    power: float

    def __post_init__(self):
        if not check_real(self.scale, "scale") > 0 or not check_real(self.power, "power") > 0:
            raise ValueError(f"`PowerUniform` needs scale > 0 and power > 0; got {self!r}.")
        _ordered(check_real(self.low, "low"), check_real(self.high, "high"), "PowerUniform", 0.0)

    def draw(self, gen: np.random.Generator, size: int) -> np.ndarray:
        """Draw ``size`` values."""
        return self.scale * gen.uniform(self.low, self.high, size) ** self.power

    @property
    def support(self) -> tuple[float, float]:
        """Smallest and largest value."""
        return self.scale * self.low**self.power, self.scale * self.high**self.power


@dataclass(frozen=True)
class PrecisionBound:
    """``Unif(max(floor, prevalence_factor pi, yield_factor R1 / N), high)``.

    The lower bounds keep the retrieval at least about as good as random (``prevalence_factor``)
    and keep the retrieved segment at most ``1 / yield_factor`` of the population.
    """

    floor: float
    high: float
    prevalence_factor: float = 0.0
    yield_factor: float = 0.0

    def __post_init__(self):
        _ordered(
            check_real(self.floor, "floor"), check_real(self.high, "high"), "PrecisionBound", 0.0
        )
        if self.high > 1:
            raise ValueError(f"`PrecisionBound` needs high <= 1; got high={self.high!r}.")
        for name in ("prevalence_factor", "yield_factor"):
            if check_real(getattr(self, name), name) < 0:
                raise ValueError(f"`{name}` must be >= 0; got {getattr(self, name)!r}.")

    def draw(self, gen, size, prevalence, retrieved_positives, population) -> np.ndarray:
        """Draw ``size`` precisions given the realization drawn so far."""
        low = np.maximum.reduce([
            np.full(size, self.floor),
            self.prevalence_factor * prevalence,
            self.yield_factor * retrieved_positives / population,
        ])  # fmt: skip
        # a lower bound above `high` leaves no valid precision: mark it NaN (rejected)
        out = low + gen.uniform(0.0, 1.0, size) * (self.high - low)
        return np.where(low < self.high, out, np.nan)


@dataclass(frozen=True)
class UniformCapped:
    """Sample size ``Unif(low, min(cap, floor(segment fraction)))``, rounded (neutral, §4.1.1)."""

    low: float
    cap: float
    fraction: float

    def __post_init__(self):
        _ordered(check_real(self.low, "low"), check_real(self.cap, "cap"), "UniformCapped", 1.0)
        if not 0 < check_real(self.fraction, "fraction") <= 1:
            raise ValueError(f"`fraction` must be in (0, 1]; got {self.fraction!r}.")

    def draw(self, gen, segment: np.ndarray) -> np.ndarray:
        """Draw one sample size per segment size (NaN where the range is empty)."""
        high = np.minimum(self.cap, np.floor(segment * self.fraction))
        out = np.rint(self.low + gen.uniform(0.0, 1.0, segment.size) * (high - self.low))
        return np.where(high >= self.low, out, np.nan)


@dataclass(frozen=True)
class Doubling:
    """Sample size ``base 2^Unif(0, min(most, floor(log2(segment / base))))`` (legal, §4.1.2)."""

    base: float
    most: float

    def __post_init__(self):
        if not check_real(self.base, "base") >= 1 or not check_real(self.most, "most") > 0:
            raise ValueError(f"`Doubling` needs base >= 1 and most > 0; got {self!r}.")

    def draw(self, gen, segment: np.ndarray) -> np.ndarray:
        """Draw one sample size per segment size (NaN where the segment is below ``base``)."""
        with np.errstate(divide="ignore"):
            top = np.minimum(self.most, np.floor(np.log2(segment / self.base)))
        out = np.rint(self.base * 2.0 ** (gen.uniform(0.0, 1.0, segment.size) * top))
        return np.where(top >= 0, out, np.nan)


@dataclass(frozen=True)
class Fraction:
    """Sample size ``max(1, round(segment Unif(low, high)))`` (small, §4.1.3)."""

    low: float
    high: float

    def __post_init__(self):
        _ordered(check_real(self.low, "low"), check_real(self.high, "high"), "Fraction", 0.0)
        if self.high > 1:
            raise ValueError(f"`Fraction` needs high <= 1; got high={self.high!r}.")

    def draw(self, gen, segment: np.ndarray) -> np.ndarray:
        """Draw one sample size per segment size."""
        share = gen.uniform(self.low, self.high, segment.size)
        return np.maximum(1.0, np.rint(segment * share))


# --------------------------------------------------------------------------- scenario


#: The columns of :meth:`Scenario.realizations`, in order.
COLUMNS = ("N", "N1", "N0", "R1", "R0", "n1", "n0", "prevalence", "recall", "precision")


_RATE = Instance(
    (Uniform, LogUniform, PowerUniform),
    "a Uniform, LogUniform or PowerUniform",
    example=lambda: Uniform(0.1, 0.5),
)
_SAMPLE = Instance(
    (UniformCapped, Doubling, Fraction),
    "a UniformCapped, Doubling or Fraction",
    example=lambda: Fraction(0.01, 0.05),
)


@dataclass(frozen=True)
@validate_fields(
    population=_RATE,
    prevalence=_RATE,
    recall=_RATE,
    precision=Instance(PrecisionBound, "a PrecisionBound", example=lambda: PrecisionBound(0, 1)),
    retrieved_sample=_SAMPLE,
    unretrieved_sample=_SAMPLE,
    name=Text(),
)
class Scenario:
    """Distributions over populations, retrievals and sample sizes (Webber 2013, §4.1).

    Parameters
    ----------
    population : Uniform or LogUniform or PowerUniform
        Population size ``N`` (rounded).
    prevalence : Uniform or LogUniform or PowerUniform
        ``pi``, the share of positives; within ``(0, 1)``.
    recall : Uniform or LogUniform or PowerUniform
        ``Rec``, the share of positives retrieved; within ``(0, 1]``.
    precision : PrecisionBound
        ``Prec``, the share of retrieved items that are positive.
    retrieved_sample, unretrieved_sample : UniformCapped or Doubling or Fraction
        Sample sizes ``n1`` and ``n0`` given the segment sizes.
    name : str, default "custom"

    Examples
    --------
    >>> from bayeval import simulate
    >>> legal = simulate.preset("legal")
    >>> pops = legal.realizations(1000, rng=0)
    >>> sorted(pops.columns)[:4], pops.attrs["rejected"]
    (['N', 'N0', 'N1', 'R0'], 0)
    >>> bool((pops["n1"] <= pops["N1"]).all() and (pops["R0"] <= pops["N0"]).all())
    True
    >>> ediscovery = simulate.Scenario(
    ...     population=simulate.Uniform(9e6, 1.1e7), prevalence=simulate.Uniform(0.0005, 0.002),
    ...     recall=simulate.Uniform(0.6, 0.9), precision=simulate.PrecisionBound(0.2, 0.8),
    ...     retrieved_sample=simulate.Fraction(0.01, 0.05),
    ...     unretrieved_sample=simulate.Doubling(500, 4), name="e-discovery")
    >>> ediscovery.realizations(5, rng=1)["recall"].between(0.6, 0.9).all()
    np.True_
    """

    population: Any
    prevalence: Any
    recall: Any
    precision: PrecisionBound
    retrieved_sample: Any
    unretrieved_sample: Any
    name: str = "custom"

    def __post_init__(self):  # after validate_fields: what the distributions can produce
        for name, lo, hi in (
            ("population", 1.0, math.inf),
            ("prevalence", 0.0, 1.0),
            ("recall", 0.0, 1.0),
        ):
            value = getattr(self, name)
            low, high = value.support
            if not (lo <= low and high <= hi and (name != "prevalence" or high < 1)):
                raise ValueError(
                    f"`{name}` can produce values in [{low:.6g}, {high:.6g}], outside what a "
                    f"{name} can be ({'N >= 1' if name == 'population' else 'a share in [0, 1]'});"
                    f" got {value!r}."
                )

    def _draw(self, gen: np.random.Generator, size: int) -> dict[str, np.ndarray]:
        population = np.rint(self.population.draw(gen, size))
        prevalence = self.prevalence.draw(gen, size)
        recall = self.recall.draw(gen, size)
        positives = np.rint(population * prevalence)
        r1 = np.rint(positives * recall)
        precision = self.precision.draw(gen, size, prevalence, r1, population)
        with np.errstate(invalid="ignore", divide="ignore"):
            n1_size = np.rint(r1 / precision)
        n0_size = population - n1_size
        ok = (r1 >= 1) & np.isfinite(n1_size) & (n1_size >= 1) & (n0_size >= 1)
        ok &= positives - r1 <= n0_size
        safe1, safe0 = np.where(ok, n1_size, 1.0), np.where(ok, n0_size, 1.0)
        n1 = self.retrieved_sample.draw(gen, safe1)
        n0 = self.unretrieved_sample.draw(gen, safe0)
        ok &= np.isfinite(n1) & np.isfinite(n0) & (n1 >= 1) & (n0 >= 1)
        ok &= (n1 <= safe1) & (n0 <= safe0)
        return {
            "N": population, "N1": n1_size, "N0": n0_size, "R1": r1, "R0": positives - r1,
            "n1": n1, "n0": n0, "prevalence": prevalence, "precision": precision, "ok": ok,
        }  # fmt: skip

    @validate(size=Integer(minimum=1), rng=Seed(), max_rejected=Share())
    def realizations(
        self, size: int, rng: int | np.random.Generator | None = 0, *, max_rejected: float = 0.5
    ):
        """Draw ``size`` valid realizations, redrawing impossible ones whole.

        Parameters
        ----------
        size : int
            Number of realizations.
        rng : int, numpy.random.Generator or None, default 0
            Seed.
        max_rejected : float, default 0.5
            Largest share of draws that may be rejected before the scenario is deemed to
            describe impossible populations (an error).

        Returns
        -------
        pandas.DataFrame
            Integer counts ``N, N1, N0, R1, R0, n1, n0``, the drawn ``prevalence`` and
            ``precision``, and the true ``recall = R1 / (R1 + R0)``; ``attrs`` hold the scenario
            name and ``rejected`` (draws redrawn).
        """
        import pandas as pd

        gen = check_rng(rng)
        parts, have, drawn = [], 0, 0
        while have < size:
            batch = max(16, int((size - have) * 1.1) + 8)
            parts.append(self._draw(gen, batch))
            drawn += batch
            have += int(parts[-1]["ok"].sum())
            if drawn >= 64 and have < (1 - max_rejected) * drawn:
                raise ValueError(
                    f"scenario {self.name!r} describes impossible populations: "
                    f"{drawn - have} of {drawn} draws were rejected (R0 > N0, a segment smaller "
                    "than its sample, precision bound above its maximum, ...); check its "
                    "distributions."
                )
        table = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        ok = table.pop("ok")
        # the first `size` valid draws, in order; earlier invalid ones were redrawn
        last = int(np.flatnonzero(ok)[size - 1])
        keep = np.flatnonzero(ok[: last + 1])
        frame = pd.DataFrame({k: table[k][keep].astype(np.int64) for k in COLUMNS[:7]})
        frame["prevalence"] = table["prevalence"][keep]
        frame["recall"] = frame["R1"] / (frame["R1"] + frame["R0"])
        frame["precision"] = table["precision"][keep]
        frame.attrs = {"scenario": self.name, "rejected": int(last + 1 - size)}
        return frame

    def describe(self) -> dict[str, Any]:
        """Return the distributions by variable name (for reports)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


# --------------------------------------------------------------------------- presets

#: How the presets read Webber's Tables 4.1.1-4.1.3 where the printed tables cannot be right.
PRESET_NOTES = (
    "§4.1 (L404) gives N1 = round(N Rec / Prec) and R1 = round(N Prec), which drop the prevalence "
    "and swap recall and precision; read as R = round(N pi), R1 = round(R Rec), "
    "N1 = round(R1 / Prec).",
    "The precision rows print Unif(min(...), high); the prose calls them lower bounds and min "
    "gives impossible populations (22% in neutral), so max is used.",
    "Legal sample sizes print 2^Unif(0, max(8, ...)); the ranges 20-5,120 and 100-12,800 need "
    "min, so min is used (realizations with N1 < 20 are redrawn).",
    "Legal's mean N is printed 1,075,000; the formula 5e5 10^Unif(0, 2) has mean 10.75 million "
    "and range 5e5-5e7, as the table's range says. The formula is used.",
    "Not reproduced by any reading: neutral mean precision 0.64 (0.698 here), legal mean n0 3,170 "
    "(2,617 here, with n1 820 matching), the legal medians of 2% and 0.5% sampled.",
    "Impossible realizations (R0 > N0, a segment smaller than its sample) are redrawn whole; the "
    "paper does not say. About 0.07% of neutral and 0.03% of legal draws.",
)

#: Names of the presets of :func:`preset`.
PRESETS = ("neutral", "legal", "small")

_PRESETS = {
    "neutral": dict(
        population=Uniform(1e3, 4e6),
        prevalence=Uniform(0.02, 0.8),
        recall=Uniform(0.1, 1.0),
        precision=PrecisionBound(0.1, 1.0, prevalence_factor=0.95, yield_factor=1.05),
        retrieved_sample=UniformCapped(10, 4000, 0.1),
        unretrieved_sample=UniformCapped(10, 4000, 0.1),
    ),
    "legal": dict(
        population=LogUniform(5e5, 10, 0, 2),
        prevalence=LogUniform(2e-3, 1.5, 1, 10),
        recall=PowerUniform(2.5e-3, 1, 34, 1.65),
        precision=PrecisionBound(0.025, 0.92, yield_factor=2.0),
        retrieved_sample=Doubling(20, 8),
        unretrieved_sample=Doubling(100, 7),
    ),
    "small": dict(
        population=Uniform(1e3, 1e4),
        prevalence=Uniform(0.02, 0.22),
        recall=Uniform(0.1, 1.0),
        precision=PrecisionBound(0.025, 0.92, yield_factor=2.0),
        retrieved_sample=Fraction(0.2, 0.5),
        unretrieved_sample=Fraction(0.05, 0.3),
    ),
}


def preset(name: str) -> Scenario:
    """Return one of Webber's three scenarios: ``"neutral"``, ``"legal"`` or ``"small"``.

    Parameters
    ----------
    name : str
        Table 4.1.1 (neutral: broad uniform ranges), 4.1.2 (legal: fitted to the TREC 2008-2009
        Legal Interactive task, low prevalence, sparse samples of the unretrieved segment) or
        4.1.3 (small: populations of 1,000-10,000 with heavy samples).

    Returns
    -------
    Scenario
        With the corrections of :data:`PRESET_NOTES`.

    Examples
    --------
    >>> from bayeval import simulate
    >>> pops = simulate.preset("small").realizations(20_000, rng=0)
    >>> round(pops["n1"].mean()), round(pops["n0"].mean())   # Table 4.1.3: 290 and 815
    (290, 822)
    """
    if name not in _PRESETS:
        raise ValueError(f"`name` must be one of {', '.join(map(repr, _PRESETS))}; got {name!r}.")
    return Scenario(name=name, **_PRESETS[name])
