"""Stratified samples of a retrieval or classification: the data every interval starts from.

A pool of ``N`` items is split by a system into a *retrieved* segment (predicted positive) and an
*unretrieved* segment (predicted negative). Each segment may be divided further into strata; from
each stratum a simple random sample is drawn without replacement and judged by an oracle. A
:class:`StratifiedSample` records, per stratum, its population size, sample size, the number of
sampled items judged positive, and which segment it belongs to (Webber 2013, §2.1-2.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bayeval._constraints import Array, Flags, validate

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["StratifiedSample"]


#: Per-stratum counts: whole numbers >= 0, one per stratum (a single stratum's as a number).
COUNTS = Array(whole=True, at_least=0, atleast_1d=True)


@dataclass(frozen=True, eq=False)
class StratifiedSample:
    """Counts from a stratified simple random sample of a retrieved and an unretrieved segment.

    Parameters
    ----------
    population : sequence of int
        Stratum sizes ``N_s``.
    sampled : sequence of int
        Sample sizes ``n_s`` (``0 <= n_s <= N_s``).
    positives : sequence of int
        Sampled items judged positive (relevant), ``r_s`` (``0 <= r_s <= n_s``).
    retrieved : sequence of bool
        Whether stratum ``s`` lies in the retrieved segment.
    names : sequence of str, optional
        Stratum labels; default ``"s0", "s1", ...``.

    Attributes
    ----------
    population, sampled, positives : numpy.ndarray of int64
    retrieved : numpy.ndarray of bool
    names : tuple of str

    Notes
    -----
    Recall and F1 need strata in both segments; precision needs only the retrieved one. A
    stratum with ``n_s = 0``
    contributes its prior to the Bayesian methods; the frequentist methods need ``n_s > 0``
    in every stratum with ``N_s > 0`` and say so when it is not the case.

    References
    ----------
    W. Webber, "Approximate recall confidence intervals", ACM TOIS 31(1), 2013, §2.1-2.2.

    Examples
    --------
    >>> import bayeval as be
    >>> s = be.StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    >>> s
    StratifiedSample(retrieved N=2000 n=100 r=50; unretrieved N=100000 n=100 r=3)
    >>> round(s.recall_estimate(), 4)
    0.25
    """

    population: np.ndarray
    sampled: np.ndarray
    positives: np.ndarray
    retrieved: np.ndarray
    names: tuple[str, ...] = ()

    @validate(population=COUNTS, sampled=COUNTS, positives=COUNTS, retrieved=Flags())
    def __init__(self, population, sampled, positives, retrieved, names=None):
        # checked here: the arrays against each other (lengths, order), `names` against them
        lengths = {
            "population": population.size,
            "sampled": sampled.size,
            "positives": positives.size,
            "retrieved": retrieved.size,
        }
        if len(set(lengths.values())) != 1:
            raise ValueError(
                "`population`, `sampled`, `positives` and `retrieved` must have the same "
                f"length (one entry per stratum); got lengths {lengths}."
            )
        _check_order(sampled, population, "sampled", "population")
        _check_order(positives, sampled, "positives", "sampled")
        if names is None:
            names = tuple(f"s{i}" for i in range(population.size))
        else:
            names = tuple(str(n) for n in names)
            if len(names) != population.size:
                raise ValueError(
                    f"`names` must have one entry per stratum ({population.size}); "
                    f"got {len(names)}."
                )
            if len(set(names)) != len(names):
                raise ValueError(f"`names` must be unique; got {names!r}.")
        for field, value in (
            ("population", population),
            ("sampled", sampled),
            ("positives", positives),
            ("retrieved", retrieved),
            ("names", names),
        ):
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
            object.__setattr__(self, field, value)

    # -- constructors -----------------------------------------------------------------------
    @classmethod
    def two_segments(
        cls, *, N1: int, n1: int, r1: int, N0: int, n0: int, r0: int
    ) -> StratifiedSample:
        """Build the unstratified design: one simple random sample per segment.

        Parameters
        ----------
        N1, n1, r1 : int
            Retrieved segment: population, sample size, sampled positives.
        N0, n0, r0 : int
            Unretrieved segment: population, sample size, sampled positives.

        Returns
        -------
        StratifiedSample
        """
        return cls(
            population=[N1, N0],
            sampled=[n1, n0],
            positives=[r1, r0],
            retrieved=[True, False],
            names=("retrieved", "unretrieved"),
        )

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        population: str = "N",
        sampled: str = "n",
        positives: str = "r",
        retrieved: str = "retrieved",
        names: str | None = None,
    ) -> StratifiedSample:
        """Build a sample from a table with one row per stratum.

        Parameters
        ----------
        df : pandas.DataFrame
            One row per stratum.
        population, sampled, positives, retrieved : str
            Column names of the counts and of the boolean segment flag.
        names : str, optional
            Column with stratum labels; default: the frame's index.

        Returns
        -------
        StratifiedSample
        """
        columns = {
            "population": population,
            "sampled": sampled,
            "positives": positives,
            "retrieved": retrieved,
        }
        missing = {k: v for k, v in columns.items() if v not in df.columns}
        if missing:
            raise ValueError(
                f"column(s) {missing} not found in the frame; its columns are {list(df.columns)}."
            )
        labels = df[names] if names is not None else df.index
        return cls(
            population=df[population].to_numpy(),
            sampled=df[sampled].to_numpy(),
            positives=df[positives].to_numpy(),
            retrieved=df[retrieved].to_numpy(),
            names=[str(x) for x in labels],
        )

    # -- derived quantities -----------------------------------------------------------------
    @property
    def n_strata(self) -> int:
        """Number of strata."""
        return int(self.population.size)

    @property
    def is_two_segment(self) -> bool:
        """True when each segment is a single stratum (the unstratified design)."""
        return self.n_strata == 2

    def segment_totals(self) -> dict[str, np.ndarray]:
        """Sum counts within segments: ``{"N", "n", "r"}``, each ``[retrieved, unretrieved]``."""
        out = {}
        for key, arr in (("N", self.population), ("n", self.sampled), ("r", self.positives)):
            out[key] = np.array([arr[self.retrieved].sum(), arr[~self.retrieved].sum()])
        return out

    def yield_estimates(self) -> np.ndarray:
        """Horvitz-Thompson yield estimates ``[R1_hat, R0_hat]`` (Webber Eq. 4-5)."""
        self._require_sampled("yield estimates")
        with np.errstate(invalid="ignore", divide="ignore"):
            per_stratum = np.where(
                self.sampled > 0, self.population * self.positives / self.sampled, 0.0
            )
        return np.array([per_stratum[self.retrieved].sum(), per_stratum[~self.retrieved].sum()])

    def recall_estimate(self) -> float:
        """Plug-in recall estimate ``R1_hat / (R1_hat + R0_hat)`` (Webber Eq. 2); NaN if 0/0."""
        r1, r0 = self.yield_estimates()
        total = r1 + r0
        return float(r1 / total) if total > 0 else float("nan")

    def precision_estimate(self) -> float:
        """Plug-in precision estimate ``R1_hat / N1``."""
        r1, _ = self.yield_estimates()
        n1 = self.population[self.retrieved].sum()
        return float(r1 / n1) if n1 > 0 else float("nan")

    def f1_estimate(self) -> float:
        """Plug-in F1 estimate ``2 R1_hat / (N1 + R1_hat + R0_hat)``."""
        r1, r0 = self.yield_estimates()
        n1 = self.population[self.retrieved].sum()
        denom = n1 + r1 + r0
        return float(2 * r1 / denom) if denom > 0 else float("nan")

    def proportional_within_segments(self) -> bool:
        """Tell whether each segment's strata were sampled at the same rate (up to rounding).

        Then a segment's summed counts are those of a simple random sample of the segment
        (proportional allocation), which methods built for one sample per segment require.
        """
        for mask in (self.retrieved, ~self.retrieved):
            N, n = self.population[mask], self.sampled[mask]
            if N.sum() == 0:
                continue
            expected = N * n.sum() / N.sum()
            if np.any(np.abs(n - expected) > 1):
                return False
        return True

    def _require_sampled(self, what: str) -> None:
        unsampled = (self.sampled == 0) & (self.population > 0)
        if unsampled.any():
            which = [self.names[i] for i in np.flatnonzero(unsampled)]
            raise ValueError(
                f"{what} need a sample from every non-empty stratum; strata {which} have "
                "`sampled` = 0. Use a Bayesian method (its prior covers unsampled strata) "
                "or merge those strata."
            )

    def to_frame(self) -> pd.DataFrame:
        """One row per stratum with columns ``N, n, r, retrieved``."""
        import pandas as pd

        return pd.DataFrame(
            {
                "N": self.population,
                "n": self.sampled,
                "r": self.positives,
                "retrieved": self.retrieved,
            },
            index=pd.Index(self.names, name="stratum"),
        )

    def __repr__(self) -> str:
        if self.n_strata <= 6:
            parts = []
            for i, name in enumerate(self.names):
                segment = "retrieved" if self.retrieved[i] else "unretrieved"
                label = name if name == segment else f"{name} ({segment})"
                parts.append(
                    f"{label} N={self.population[i]} n={self.sampled[i]} r={self.positives[i]}"
                )
            return f"StratifiedSample({'; '.join(parts)})"
        tot = self.segment_totals()
        return (
            f"StratifiedSample({self.n_strata} strata; retrieved N={tot['N'][0]} "
            f"n={tot['n'][0]} r={tot['r'][0]}; unretrieved N={tot['N'][1]} n={tot['n'][1]} "
            f"r={tot['r'][1]}; .to_frame() lists them)"
        )

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, StratifiedSample):
            return NotImplemented
        return (
            self.names == other.names
            and np.array_equal(self.population, other.population)
            and np.array_equal(self.sampled, other.sampled)
            and np.array_equal(self.positives, other.positives)
            and np.array_equal(self.retrieved, other.retrieved)
        )

    __hash__ = None  # mutable-looking value object: compare by value, do not hash


def _check_order(small: np.ndarray, large: np.ndarray, small_name: str, large_name: str):
    bad = small > large
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"`{small_name}` cannot exceed `{large_name}`; stratum {i} has "
            f"{small_name}={small[i]} > {large_name}={large[i]}."
        )
