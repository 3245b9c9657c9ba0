"""Coverage studies of recall intervals over a scenario's populations (Webber 2013, §4.2).

For each realization (a population drawn from a :class:`~bayeval.simulate.Scenario`), sample
outcomes ``(r1, r0)`` are drawn from the hypergeometric distribution of each segment, and every
method's interval is checked against the population's true recall. The same realizations and
outcomes serve every method, as in the paper.

Speed comes from never computing an interval just to check coverage
(:mod:`bayeval.simulate._decisions`): normal bounds are vectorised, Koopman's is decided by the
score statistic at the truth, and posterior intervals by the posterior CDF at the truth. Only
widths need interval ends; for Koopman and the posterior methods they are computed on the first
``width_resamples`` outcomes of each realization (reported).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy import special

from bayeval._constraints import (
    AnyOf,
    Instance,
    Integer,
    OneOf,
    Optional,
    Prob,
    Seed,
    SequenceOf,
    validate,
)
from bayeval.intervals.api import RECALL_METHODS
from bayeval.results import Result
from bayeval.simulate._decisions import NORMAL_TYPE, misses, normal_bounds
from bayeval.simulate.scenarios import PRESETS, Scenario, preset

__all__ = ["METHODS", "CoverageStudy", "coverage_study"]

#: Webber's nine methods, in the order of his tables (every recall method but the PyMC-only one).
METHODS = tuple(m for m in RECALL_METHODS if m != "beta-binomial-hierarchical")

_STATS = ("coverage", "lower_gap", "upper_gap", "width")


def _root_seed(rng: Any) -> np.random.SeedSequence:
    """Return the root seed: a Generator gives one draw of its stream, a seed is used as is."""
    if isinstance(rng, np.random.Generator):
        return np.random.SeedSequence(int(rng.integers(2**63)))
    return np.random.SeedSequence(rng)


def _realization_stats(pop, methods, resamples, prob, width_resamples, seed) -> np.ndarray:
    """``(len(methods), 4)``: coverage, lower gap, upper gap and mean width of one population."""
    from bayeval.intervals import recall_interval
    from bayeval.stratified_sample import StratifiedSample

    gen = np.random.default_rng(seed)
    r1 = gen.hypergeometric(pop["R1"], pop["N1"] - pop["R1"], pop["n1"], size=resamples)
    r0 = gen.hypergeometric(pop["R0"], pop["N0"] - pop["R0"], pop["n0"], size=resamples)
    pairs, inverse = np.unique(np.stack([r1, r0]), axis=1, return_inverse=True)
    inverse = inverse.reshape(-1)
    out = np.empty((len(methods), 4))
    for k, method in enumerate(methods):
        below, above = misses(method, pop, pairs[0], pairs[1], prob)
        out[k, 1], out[k, 2] = below[inverse].mean(), above[inverse].mean()
        out[k, 0] = 1.0 - out[k, 1] - out[k, 2]
        if method in NORMAL_TYPE:
            low, high = normal_bounds(method, pop, pairs[0], pairs[1], prob)
            out[k, 3] = float(np.mean((high - low)[inverse]))
            continue
        widths = []
        for i in range(min(width_resamples, resamples)):
            sample = StratifiedSample.two_segments(
                N1=int(pop["N1"]), n1=int(pop["n1"]), r1=int(r1[i]),
                N0=int(pop["N0"]), n0=int(pop["n0"]), r0=int(r0[i]),
            )  # fmt: skip
            result = recall_interval(sample, method=method, prob=prob)
            widths.append(result.upper - result.lower)
        out[k, 3] = float(np.mean(widths))
    return out


def _run_chunk(records, seeds, methods, resamples, prob, width_resamples) -> np.ndarray:
    """Stats of a chunk of realizations (also the unit of work on a dask cluster)."""
    return np.stack([
        _realization_stats(pop, methods, resamples, prob, width_resamples, seed)
        for pop, seed in zip(records, seeds, strict=True)
    ])  # fmt: skip


def _progress(total: int, enabled: bool | None):
    """Start a rich progress bar on terminals (or when forced); None otherwise."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None
    from rich.progress import Progress

    bar = Progress(transient=True)
    bar.start()
    task = bar.add_task("realizations", total=total)
    return bar, task


@validate(
    scenario=AnyOf(Instance(Scenario, "a bayeval.simulate.Scenario"), OneOf(PRESETS)),
    methods=Optional(SequenceOf(OneOf(METHODS))),
    realizations=Integer(minimum=1),
    resamples=Integer(minimum=1),
    prob=Prob(),
    rng=Seed(),
    width_resamples=Integer(minimum=1),
    chunk_size=Integer(minimum=1),
)
def coverage_study(
    scenario: Scenario | str,
    methods: tuple[str, ...] | list[str] | None = None,
    *,
    realizations: int = 1000,
    resamples: int = 1000,
    prob: float = 0.95,
    rng: int | np.random.Generator | None = 0,
    client: Any = None,
    width_resamples: int = 20,
    chunk_size: int = 25,
    progress: bool | None = None,
) -> CoverageStudy:
    """Estimate the coverage of recall intervals over a scenario (Webber 2013, §4.2).

    Parameters
    ----------
    scenario : Scenario or {"neutral", "legal", "small"}
        Where the populations come from (a name selects :func:`~bayeval.simulate.preset`).
    methods : sequence of str, optional
        Methods of :func:`bayeval.recall_interval`; default :data:`METHODS` (Webber's nine).
    realizations : int, default 1000
        Populations drawn from the scenario.
    resamples : int, default 1000
        Sample outcomes per population (hypergeometric in each segment).
    prob : float, default 0.95
        Interval probability (equal-tailed, two-sided).
    rng : int, numpy.random.Generator or None, default 0
        Seed. Populations and each population's outcomes come from their own
        ``numpy.random.SeedSequence`` children, so results do not depend on ``client`` or
        ``chunk_size``.
    client : dask.distributed.Client, optional
        Spread chunks of realizations over the cluster's workers. For a ``LocalCluster``, creating
        it inside ``dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_":
        None})`` made the workers about 35% faster here (dask's default trims memory eagerly; see
        ``benchmarks/README.md``).
    width_resamples : int, default 20
        Outcomes per population whose Koopman and posterior intervals are computed for the
        mean width (normal widths use all outcomes).
    chunk_size : int, default 25
        Realizations per unit of work.
    progress : bool, optional
        Show a progress bar; default: only when standard error is a terminal.

    Returns
    -------
    CoverageStudy

    Notes
    -----
    A realization's *coverage* is the share of its outcomes whose interval contains the true
    recall ``R1 / (R1 + R0)`` (closed interval); ``lower_gap`` is the share with the truth below
    the interval (it overstates recall) and ``upper_gap`` above it. :meth:`CoverageStudy.table`
    summarises them as in Webber's Tables 4.2.5-4.2.6 and Figures 9-13. With ``resamples`` draws
    a perfectly calibrated method still shows an RMSE of about
    ``sqrt(prob (1 - prob) / resamples)`` (0.0069 at 1000): the floor under the paper's best
    values.

    Examples
    --------
    >>> from bayeval import simulate
    >>> study = simulate.coverage_study("small", ["normal-mle", "beta-binomial-half"],
    ...                                 realizations=20, resamples=100, width_resamples=5)
    >>> table = study.table()
    >>> list(table.index), bool(table.loc["beta-binomial-half", "mean_coverage"] > 0.9)
    (['normal-mle', 'beta-binomial-half'], True)
    """
    scenario = preset(scenario) if isinstance(scenario, str) else scenario
    methods = METHODS if methods is None else methods
    root = _root_seed(rng)
    population_seed, outcome_seed = root.spawn(2)
    pops = scenario.realizations(realizations, rng=np.random.default_rng(population_seed))
    seeds = outcome_seed.spawn(realizations)
    records = pops.to_dict("records")
    starts = range(0, realizations, chunk_size)
    args = (methods, resamples, prob, width_resamples)
    began = time.perf_counter()
    if client is not None:
        futures = client.map(
            _run_chunk,
            [records[s : s + chunk_size] for s in starts],
            [seeds[s : s + chunk_size] for s in starts],
            *[[a] * len(starts) for a in args],
            pure=False,
        )
        parts = client.gather(futures)
    else:
        bar = _progress(realizations, progress)
        parts = []
        for s in starts:
            parts.append(_run_chunk(records[s : s + chunk_size], seeds[s : s + chunk_size], *args))
            if bar is not None:
                bar[0].advance(bar[1], len(parts[-1]))
        if bar is not None:
            bar[0].stop()
    stats = np.concatenate(parts)  # (realization, method, stat)
    return CoverageStudy(
        scenario=scenario.name,
        methods=methods,
        populations=pops,
        stats=stats,
        prob=prob,
        resamples=resamples,
        width_resamples=min(width_resamples, resamples),
        seconds=time.perf_counter() - began,
    )


@dataclass(frozen=True, eq=False)
class CoverageStudy(Result):
    """Result of :func:`coverage_study`.

    On the protocol of :mod:`bayeval.results` it estimates each method's mean coverage over the
    realizations (dim ``method``; select with ``.sel({"method": "koopman"})``, since ``.sel``
    takes ``method=`` itself), with a normal interval from the spread over realizations (basis
    ``"design"``: the Monte Carlo design of the study), clipped to [0, 1]. :meth:`table` has
    the fuller summary of Webber's tables.

    Attributes
    ----------
    scenario : str
    methods : tuple of str
    populations : pandas.DataFrame
        The realizations (see :meth:`Scenario.realizations`).
    stats : numpy.ndarray
        ``(realization, method, 4)``: coverage, lower gap, upper gap, mean width.
    prob : float
        Nominal coverage.
    resamples, width_resamples : int
        Outcomes per realization, and those behind the Koopman and posterior widths.
    seconds : float
        Wall time of the resampling.
    """

    scenario: str
    methods: tuple[str, ...]
    populations: Any
    stats: np.ndarray
    prob: float
    resamples: int
    width_resamples: int
    seconds: float = field(default=math.nan)

    @property
    def per_realization(self):
        """``xarray.Dataset`` of coverage, gaps and width by ``interval`` and ``realization``.

        Select a method with ``ds.sel(interval="koopman")``.
        """
        import xarray as xr

        pops = self.populations
        # the dimension is "interval", not "method": xarray's .sel() takes `method=` itself
        coords = {"interval": list(self.methods), "realization": np.arange(len(pops))}
        coords |= {c: ("realization", pops[c].to_numpy()) for c in pops.columns}
        data = {
            name: (("interval", "realization"), self.stats[:, :, k].T)
            for k, name in enumerate(_STATS)
        }
        attrs = {
            "scenario": self.scenario, "prob": self.prob, "resamples": self.resamples,
            "width_resamples": self.width_resamples,
        }  # fmt: skip
        return xr.Dataset(data, coords=coords, attrs=attrs)

    # -- the result protocol -------------------------------------------------------------------
    bases: ClassVar[tuple[str, ...]] = ("design",)

    def _layout(self):
        return ("method",), {"method": list(self.methods)}

    def _estimate_values(self, basis):
        return self.stats[:, :, 0].mean(axis=0)

    def _bounds(self, prob, kind, basis):
        coverage = self.stats[:, :, 0]
        mean = coverage.mean(axis=0)
        se = coverage.std(axis=0, ddof=1) / np.sqrt(len(coverage)) if len(coverage) > 1 else 0.0
        tail = (1 - prob) / 2 if kind == "eti" else 1 - prob
        half = -special.ndtri(tail) * se * np.ones_like(mean)
        lower = np.clip(mean - half, 0, 1) if kind != "upper" else np.zeros_like(mean)
        upper = np.clip(mean + half, 0, 1) if kind != "lower" else np.ones_like(mean)
        return lower, upper

    def _no_posterior_message(self):
        return (
            "a coverage study has no posterior draws: its estimate is each method's mean "
            "coverage over the realizations. Use .interval() (basis='design') or .table()."
        )

    def _state(self):
        import xarray as xr

        stats = xr.Dataset(
            {"stats": (("realization", "method", "stat"), self.stats)},
            coords={"method": list(self.methods), "stat": list(_STATS)},
            attrs={
                "scenario": self.scenario,
                "prob": self.prob,
                "resamples": self.resamples,
                "width_resamples": self.width_resamples,
                "seconds": self.seconds,
            },
        )
        populations = xr.Dataset.from_dataframe(self.populations.reset_index(drop=True))
        return {"stats": stats, "populations": populations}

    @classmethod
    def _from_state(cls, tree, posterior):
        stats = tree["stats"].to_dataset()
        a = stats.attrs
        populations = tree["populations"].to_dataset().to_dataframe().reset_index(drop=True)
        return cls(
            scenario=str(a["scenario"]),
            methods=tuple(str(m) for m in stats["method"].values),
            populations=populations,
            stats=stats["stats"].values,
            prob=float(a["prob"]),
            resamples=int(a["resamples"]),
            width_resamples=int(a["width_resamples"]),
            seconds=float(a["seconds"]),
        )

    def closest_share(self) -> np.ndarray:
        """Share of realizations where each method's coverage is closest to nominal (Fig. 13).

        Ties (equal coverage to the resolution ``1 / resamples``) split the count equally.
        """
        distance = np.abs(self.stats[:, :, 0] - self.prob)
        resolution = 0.5 / self.resamples
        best = distance <= distance.min(axis=1, keepdims=True) + resolution * 1e-6
        return (best / best.sum(axis=1, keepdims=True)).mean(axis=0)

    def table(self):
        """Summary by method, as in Webber's Tables 4.2.5-4.2.6 and Figures 9-13.

        Returns
        -------
        pandas.DataFrame
            Indexed by method: ``mean_coverage`` and its standard error over realizations
            ``mean_coverage_se``, ``rmse`` (root mean squared difference from
            ``prob`` over realizations), ``median_coverage``, ``q25_coverage``,
            ``q75_coverage``, ``lower_gap`` and ``upper_gap`` (mean shares of outcomes with the
            truth below / above the interval), ``mean_width`` and ``closest_share``.
        """
        import pandas as pd

        cov = self.stats[:, :, 0]
        q25, median, q75 = np.quantile(cov, [0.25, 0.5, 0.75], axis=0)
        frame = pd.DataFrame(
            {
                "mean_coverage": cov.mean(axis=0),
                "mean_coverage_se": (
                    cov.std(axis=0, ddof=1) / np.sqrt(len(cov)) if len(cov) > 1 else np.nan
                ),
                "rmse": np.sqrt(np.mean((cov - self.prob) ** 2, axis=0)),
                "median_coverage": median,
                "q25_coverage": q25,
                "q75_coverage": q75,
                "lower_gap": self.stats[:, :, 1].mean(axis=0),
                "upper_gap": self.stats[:, :, 2].mean(axis=0),
                "mean_width": self.stats[:, :, 3].mean(axis=0),
                "closest_share": self.closest_share(),
            },
            index=pd.Index(self.methods, name="method"),
        )
        frame.attrs = {
            "scenario": self.scenario, "realizations": len(self.populations),
            "resamples": self.resamples, "width_resamples": self.width_resamples,
        }  # fmt: skip
        return frame

    def plot(self, axes=None):
        """Box plots of coverage (Figures 9-11) and of the two gaps (Figure 12).

        See :func:`bayeval.plots.coverage.plot_coverage_study`.
        """
        from bayeval.plots.coverage import plot_coverage_study

        return plot_coverage_study(self, axes)
