"""Benchmark: time per interval of bayeval's recall, precision and F1 methods.

Every method is timed against a plain numpy Monte Carlo loop measured in the same process and
interleaved with it (baseline, method, method, baseline, ...), so that the noise of a shared
machine affects both alike; the ratio ``method / baseline`` is the robust number, the absolute
medians are context. The baseline is the computation of Webber (2013, §2.9): 40,000 paired
posterior draws ``p ~ Beta(a + r, b + n - r)`` and ``R = r + Binomial(N - n, p)`` per stratum
(``a = b = 1/2``), the measure from the segment yields, and ``np.quantile`` at 0.025 / 0.975.

An accuracy section compares, for ``beta-binomial-half`` on Webber's example, bayeval's bounds
with those of the 40,000-draw baseline, of a seeded 4,000,000-draw reference, and of an exact
summation over the full beta-binomial yield posteriors.

Run from the repository root::

    .venv/bin/python benchmarks/intervals.py                  # 100 repetitions per method
    .venv/bin/python benchmarks/intervals.py --quick          # smoke test, a few repetitions
    .venv/bin/python benchmarks/intervals.py --pymc           # add a one-off NUTS timing

Results go to ``benchmarks/results/intervals.json`` (``--output PATH`` to change) and a
summary is printed as Markdown tables.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy
from _common import machine_info, markdown_table
from scipy import optimize, stats

import bayeval as be
from bayeval.intervals.posterior import PYMC_ONLY

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_OUTPUT = HERE / "results" / "intervals.json"

BASELINE_DRAWS = 40_000  # Webber 2013 §2.9
REFERENCE_DRAWS = 4_000_000
REFERENCE_SEED = 2013
PROB = 0.95
TARGET_SECONDS = 1e-3  # the target: <= 1 ms per two-segment recall interval ...
TARGET_MC_ERROR = 1e-3  # ... with Monte Carlo error below 1e-3
QUADRATURE_ERROR = 1e-4  # assumed where not measured (precision, F1): recall errors reach 6e-5


def build_samples() -> dict[str, be.StratifiedSample]:
    """Return the samples measured, keyed by a short name."""
    two = be.StratifiedSample.two_segments
    return {
        "webber": two(N1=2000, n1=100, r1=50, N0=100_000, n0=100, r0=3),
        "legal": two(N1=10**6, n1=1000, r1=300, N0=5 * 10**7, n0=5000, r0=2),
        "r0-zero": two(N1=2000, n1=100, r1=50, N0=100_000, n0=100, r0=0),
        "small-finite": two(N1=120, n1=60, r1=40, N0=600, n0=150, r0=6),
        "stratified-5": be.StratifiedSample(
            population=[1500, 3500, 10_000, 30_000, 60_000],
            sampled=[60, 60, 50, 50, 50],
            positives=[48, 20, 3, 1, 0],
            retrieved=[True, True, False, False, False],
            names=["ret-high", "ret-low", "unret-high", "unret-mid", "unret-low"],
        ),
    }


SAMPLE_NOTES = {
    "webber": "Webber (2013) running example",
    "legal": "legal e-discovery scale",
    "r0-zero": "Webber's example with no positive sampled in the unretrieved segment",
    "small-finite": "small finite population (sampling fractions 1/2 and 1/4)",
    "stratified-5": "2 retrieved + 3 unretrieved strata (exact engine: 100,000 MC draws)",
}

INTERVAL_FUNCTIONS: dict[str, Callable] = {
    "recall": be.recall_interval,
    "precision": be.precision_interval,
    "f1": be.f1_interval,
}


def methods_for(measure: str) -> list[str]:
    """Methods of ``measure`` that the exact engine or a closed form computes (no NUTS)."""
    methods = {
        "recall": be.intervals.RECALL_METHODS,
        "precision": be.intervals.PRECISION_METHODS,
        "f1": be.intervals.F1_METHODS,
    }[measure]
    return [m for m in methods if m not in PYMC_ONLY]


# -- the baseline: a plain Monte Carlo loop ---------------------------------------------------
def measure_from_yields(measure: str, r1: np.ndarray, r0: np.ndarray, n1_pop: int) -> np.ndarray:
    """Recall, precision or F1 from retrieved and unretrieved segment yields."""
    if measure == "recall":
        return r1 / (r1 + r0)
    if measure == "precision":
        return r1 / n1_pop
    return 2 * r1 / (n1_pop + r1 + r0)


def baseline_bounds(
    sample: be.StratifiedSample,
    measure: str,
    seed: int | None,
    draws: int = BASELINE_DRAWS,
    prior: float = 0.5,
) -> tuple[float, float]:
    """Webber's §2.9 computation: ``draws`` posterior draws per stratum, then ``np.quantile``.

    Strata of the unretrieved segment are skipped for precision, which does not depend on them.
    """
    rng = np.random.default_rng(seed)
    yields = [np.zeros(draws), np.zeros(draws)]  # retrieved, unretrieved
    for N, n, r, ret in zip(
        sample.population, sample.sampled, sample.positives, sample.retrieved, strict=True
    ):
        if measure == "precision" and not ret:
            continue
        p = rng.beta(prior + r, prior + n - r, size=draws)
        yields[0 if ret else 1] += r + rng.binomial(N - n, p)
    n1_pop = int(sample.population[sample.retrieved].sum())
    values = measure_from_yields(measure, yields[0], yields[1], n1_pop)
    tail = (1 - PROB) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return float(low), float(high)


# -- timing -----------------------------------------------------------------------------------
def _timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _quartiles(seconds: list[float]) -> dict[str, float]:
    q1, med, q3 = np.quantile(seconds, [0.25, 0.5, 0.75])
    return {"median_s": float(med), "q1_s": float(q1), "q3_s": float(q3), "min_s": min(seconds)}


def _path(result) -> str:
    """How bayeval computed ``result``: closed form, quadrature, Monte Carlo or NUTS."""
    if result.engine is None:
        return "closed form"
    if result.engine == "pymc":
        return "nuts"
    return "quadrature" if result.mc_error is None else "monte carlo"


def _numerical_error(sample, measure, method, result, path):
    """Error of bayeval's bounds, its source, and the exact bounds when computed."""
    if path == "closed form":
        return 0.0, "closed form", None
    if path == "monte carlo":
        return max(result.mc_error), "mc_error reported by bayeval", None
    if measure == "recall" and sample.is_two_segment:
        exact = exact_recall_bounds(sample, method)
        diffs = [
            abs(b - e)
            for b, e in zip((result.lower, result.upper), exact, strict=True)
            if e is not None
        ]
        return max(diffs), "max |bayeval - exact summation|", exact
    return QUADRATURE_ERROR, "assumed bound of the quadrature (not measured)", None


def time_method(
    sample: be.StratifiedSample,
    measure: str,
    method: str,
    repeats: int,
    warmup: int,
) -> dict:
    """Time ``method`` against the baseline, alternating their order at each repetition."""
    fn = INTERVAL_FUNCTIONS[measure]
    first_s, result = _timed(lambda: fn(sample, method=method, prob=PROB, rng=0))
    for i in range(warmup):
        fn(sample, method=method, prob=PROB, rng=i + 1)
        baseline_bounds(sample, measure, seed=i + 1)
    method_s, baseline_s, method_b, baseline_b = [], [], [], []
    gc.collect()
    gc.disable()  # as timeit does; collected between blocks
    try:
        for i in range(repeats):
            seed = 1000 + i  # both sides draw afresh with the same seed
            calls = [
                (method_s, method_b, lambda s=seed: fn(sample, method=method, prob=PROB, rng=s)),
                (baseline_s, baseline_b, lambda s=seed: baseline_bounds(sample, measure, s)),
            ]
            if i % 2:
                calls.reverse()
            for seconds, bounds, call in calls:
                elapsed, out = _timed(call)
                seconds.append(elapsed)
                bounds.append((out.lower, out.upper) if hasattr(out, "lower") else out)
        # Back to back: the method alone, as when many intervals are computed in a row (the
        # interleaved baseline's large arrays evict the method's small tables from the cache).
        consecutive = []
        for i in range(repeats):
            elapsed, _ = _timed(lambda s=2000 + i: fn(sample, method=method, prob=PROB, rng=s))
            consecutive.append(elapsed)
    finally:
        gc.enable()
    method_stats, baseline_stats = _quartiles(method_s), _quartiles(baseline_s)
    mc_error = result.mc_error
    path = _path(result)
    error, error_source, exact = _numerical_error(sample, measure, method, result, path)
    ddof = 1 if repeats > 1 else 0
    return {
        "measure": measure,
        "method": method,
        "path": path,
        "low": result.lower,
        "high": result.upper,
        "first_call_s": first_s,
        **method_stats,
        "baseline": baseline_stats,
        "ratio": method_stats["median_s"] / baseline_stats["median_s"],
        "back_to_back_median_s": float(np.median(consecutive)),
        "mc_error": None if mc_error is None else list(mc_error),
        "numerical_error": error,
        "numerical_error_source": error_source,
        "exact_bounds": exact,
        "sd_bounds_over_seeds": np.std(method_b, axis=0, ddof=ddof).tolist(),
        "baseline_sd_bounds_over_seeds": np.std(baseline_b, axis=0, ddof=ddof).tolist(),
        "meets_1ms": bool(method_stats["median_s"] <= TARGET_SECONDS),
        "meets_target": bool(
            method_stats["median_s"] <= TARGET_SECONDS and error < TARGET_MC_ERROR
        ),
    }


def time_pymc(sample: be.StratifiedSample, repeats: int) -> list[dict]:
    """One-off: the NUTS engine (hierarchical model, and the conjugate model for comparison)."""
    import logging

    os.environ.setdefault("PYTENSOR_FLAGS", f"base_compiledir={REPO / '.cache' / 'pytensor'}")
    import pymc  # noqa: F401  (imported first so that its loggers exist and can be quietened)

    for name in ("pymc", "pymc.sampling", "pymc.stats"):
        logging.getLogger(name).setLevel(logging.ERROR)
    rows = []
    fn = be.recall_interval
    for method in ("beta-binomial-hierarchical", "beta-binomial-half"):
        first_s, result = _timed(lambda m=method: fn(sample, method=m, engine="pymc", rng=0))
        seconds, base = [], []
        for i in range(repeats):
            elapsed, result = _timed(
                lambda m=method, s=i: fn(sample, method=m, engine="pymc", rng=s)
            )
            seconds.append(elapsed)
            base.append(_timed(lambda s=i: baseline_bounds(sample, "recall", s))[0])
        stats_ = _quartiles(seconds)
        rows.append(
            {
                "measure": "recall",
                "method": method,
                "path": "nuts",
                "low": result.lower,
                "high": result.upper,
                "first_call_s": first_s,
                **stats_,
                "baseline": _quartiles(base),
                "ratio": stats_["median_s"] / float(np.median(base)),
                "mc_error": list(result.mc_error),
            }
        )
    return rows


# -- accuracy ---------------------------------------------------------------------------------
_WINDOW_TAIL = 1e-18  # prevalence tail left out of the summation windows
JEFFREYS_NODES = 1000  # Gauss-Legendre nodes; 500 to 4,000 agree to 2e-13 on Webber's example


def _yield_law(N: int, n: int, r: int, prior: float, finite_population: bool):
    """Unsampled-yield law of one stratum: ``("pmf", x, pmf)`` or ``("beta", m, dist)``."""
    a, b, m = prior + r, prior + n - r, N - n
    if not finite_population:
        return "beta", m, stats.beta(a, b)
    p_lo, p_hi = stats.beta.ppf(_WINDOW_TAIL, a, b), stats.beta.isf(_WINDOW_TAIL, a, b)
    lo = max(0, int(np.floor(m * p_lo - 12 * np.sqrt(m * p_lo) - 12)))
    hi = min(m, int(np.ceil(m * p_hi + 12 * np.sqrt(m * p_hi) + 12)))
    x = np.arange(lo, hi + 1)
    pmf = stats.betabinom.pmf(x, m, a, b)
    return "pmf", x, pmf / pmf.sum()


def exact_recall_bounds(sample: be.StratifiedSample, method: str) -> list[float | None]:
    """Equal-tailed recall bounds of a posterior method by direct summation (two segments).

    Beta-binomial methods: ``P(recall <= t) = sum_x0 P(X0 = x0) P(R1 <= t / (1 - t) (r0 + x0))``
    over every support point with non-negligible mass (prevalence tails beyond 1e-18 left out),
    no binning. ``beta-jeffreys``: the same expectation over ``p0`` as a 1,000-node
    Gauss-Legendre rule in ``u = F0(p0)``. Each bound is solved with Brent's method to 1e-13;
    a bound that Webber forces to 0 or 1 is ``None``.
    """
    from bayeval.intervals.posterior import POSTERIOR_METHODS, stratum_priors

    finite = POSTERIOR_METHODS[method][1]
    prior = stratum_priors(sample, method)
    i1, i0 = int(np.flatnonzero(sample.retrieved)[0]), int(np.flatnonzero(~sample.retrieved)[0])
    counts = [
        (int(sample.population[i]), int(sample.sampled[i]), int(sample.positives[i]), prior[i])
        for i in (i1, i0)
    ]
    (N1, n1, r1, _), (N0, n0, r0, _) = counts
    law1 = _yield_law(*counts[0], finite)
    law0 = _yield_law(*counts[1], finite)
    if finite:
        _, x1, pmf1 = law1
        _, x0, pmf0 = law0
        cdf1 = np.concatenate(([0.0], np.cumsum(pmf1)))
        yields0 = (r0 + x0).astype(float)

        def cdf(t: float) -> float:
            k = np.floor(t / (1 - t) * yields0 * (1 + 1e-14)) - r1  # largest x1: R1 <= ...
            k = np.clip(k - x1[0] + 1, 0, x1.size).astype(np.int64)
            return float(pmf0 @ cdf1[k])

    else:
        _, m1, beta1 = law1
        _, m0, beta0 = law0
        u, w = np.polynomial.legendre.leggauss(JEFFREYS_NODES)
        p0 = beta0.ppf((u + 1) / 2)
        w = w / 2
        yields0 = r0 + m0 * p0

        def cdf(t: float) -> float:
            return float(w @ beta1.cdf((t / (1 - t) * yields0 - r1) / m1))  # cdf clips to [0, 1]

    tail = (1 - PROB) / 2
    out: list[float | None] = []
    for q, forced in ((tail, r1 == 0), (1 - tail, r0 == 0)):
        if forced:
            out.append(None)
        else:
            root = optimize.brentq(lambda t, q=q: cdf(t) - q, 1e-12, 1 - 1e-12, xtol=1e-13)
            out.append(float(root))
    return out


def _order_statistic_se(sorted_values: np.ndarray, q: float) -> float:
    size = sorted_values.size
    half = np.sqrt(size * q * (1 - q))
    lo = int(np.clip(np.floor(q * size - half), 0, size - 1))
    hi = int(np.clip(np.ceil(q * size + half), 0, size - 1))
    return float((sorted_values[hi] - sorted_values[lo]) / 2)


def accuracy(sample: be.StratifiedSample, n_seeds: int, reference_draws: int) -> dict:
    """Bounds of beta-binomial-half: bayeval, the 40,000-draw baseline, references."""
    tail = (1 - PROB) / 2
    res = be.recall_interval(sample, method="beta-binomial-half", prob=PROB, rng=0)
    exact = exact_recall_bounds(sample, "beta-binomial-half")
    baseline = np.array([baseline_bounds(sample, "recall", seed=s) for s in range(n_seeds)])
    # the reference: same loop, many more draws, in chunks of 400,000 to bound memory
    rng = np.random.default_rng(REFERENCE_SEED)
    chunks, chunk = [], 400_000
    (N1, N0), (n1, n0), (r1, r0) = sample.population, sample.sampled, sample.positives
    for start in range(0, reference_draws, chunk):
        size = min(chunk, reference_draws - start)
        y1 = r1 + rng.binomial(N1 - n1, rng.beta(0.5 + r1, 0.5 + n1 - r1, size))
        y0 = r0 + rng.binomial(N0 - n0, rng.beta(0.5 + r0, 0.5 + n0 - r0, size))
        chunks.append(y1 / (y1 + y0))
    ref_values = np.sort(np.concatenate(chunks))
    reference = np.quantile(ref_values, [tail, 1 - tail])
    reference_se = [_order_statistic_se(ref_values, q) for q in (tail, 1 - tail)]
    bayeval_b = np.array([res.lower, res.upper])
    exact_b = np.array(exact)
    return {
        "sample": "webber",
        "method": "beta-binomial-half",
        "prob": PROB,
        "bayeval": bayeval_b.tolist(),
        "exact_sum": exact_b.tolist(),
        "baseline_seed0": baseline[0].tolist(),
        "baseline_mean": baseline.mean(0).tolist(),
        "baseline_sd": baseline.std(0, ddof=1).tolist() if n_seeds > 1 else [None, None],
        "baseline_seeds": n_seeds,
        "baseline_draws": BASELINE_DRAWS,
        "reference": reference.tolist(),
        "reference_se": reference_se,
        "reference_draws": reference_draws,
        "reference_seed": REFERENCE_SEED,
        "bayeval_minus_exact": (bayeval_b - exact_b).tolist(),
        "bayeval_minus_reference": (bayeval_b - reference).tolist(),
        "baseline_seed0_minus_exact": (baseline[0] - exact_b).tolist(),
        "reference_minus_exact": (reference - exact_b).tolist(),
    }


# -- machine and reporting --------------------------------------------------------------------
def _machine_info() -> dict:
    import statsmodels

    return machine_info(scipy=scipy.__version__, statsmodels=statsmodels.__version__)


def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:.0f}"


def format_report(report: dict) -> str:
    """Markdown tables: per measure, median ms and ratio to the baseline per sample."""
    samples = list(report["samples"])
    rows_by = {(r["sample"], r["measure"], r["method"]): r for r in report["timings"]}
    out = []
    m = report["machine"]
    out.append(
        f"{m['date']}  {m['platform']}  {m['cpu_model']} x{m['cpu_count']}  "
        f"Python {m['python']}  numpy {m['numpy']}  load {m['loadavg_start'][0]:.2f} -> "
        f"{m['loadavg_end'][0]:.2f}  repeats {report['config']['repeats']}"
    )
    for measure in INTERVAL_FUNCTIONS:
        out.append(f"\n{measure}: median ms per interval (ratio to the 40,000-draw baseline)\n")
        header = ["method", "path", *samples]
        table = []
        for method in methods_for(measure):
            cells, path = [], ""
            for s in samples:
                r = rows_by.get((s, measure, method))
                if r is None or "skipped" in r:
                    cells.append("n/a")
                    continue
                path = path if r["path"] in path else "/".join(filter(None, [path, r["path"]]))
                mark = (
                    ""
                    if not (measure == "recall" and s in report["two_segment"])
                    else (" ✓" if r["meets_target"] else " ✗")
                )
                cells.append(f"{_ms(r['median_s'])} ({r['ratio']:.2f}x){mark}")
            table.append([method, path, *cells])
        base = []
        for s in samples:
            meds = [
                r["baseline"]["median_s"]
                for r in report["timings"]
                if r["sample"] == s and r["measure"] == measure and "skipped" not in r
            ]
            base.append(f"{_ms(float(np.median(meds)))}" if meds else "n/a")
        table.append(["baseline: 40,000 draws", "monte carlo", *base])
        out.append(markdown_table(header, table))
    out.append(
        "\nrecall: median ms per interval back to back (the method alone, repeated; warm caches)\n"
    )
    table = []
    for method in methods_for("recall"):
        cells = []
        for s in samples:
            r = rows_by.get((s, "recall", method))
            if r is None or "skipped" in r or "back_to_back_median_s" not in r:
                cells.append("n/a")
                continue
            within = s in report["two_segment"] and r["numerical_error"] < TARGET_MC_ERROR
            mark = (
                ""
                if s not in report["two_segment"]
                else (" ✓" if within and r["back_to_back_median_s"] <= TARGET_SECONDS else " ✗")
            )
            cells.append(f"{_ms(r['back_to_back_median_s'])}{mark}")
        table.append([method, *cells])
    out.append(markdown_table(["method", *samples], table))
    out.append(
        "\nrecall bounds, numerical error of bayeval: quadrature = max |bayeval - exact "
        "summation|, monte carlo = bayeval's mc_error; last row: sd of the baseline's bounds "
        "over the timing seeds (low / high)\n"
    )
    table = []
    for method in methods_for("recall"):
        cells = []
        for s in samples:
            r = rows_by.get((s, "recall", method))
            if r is None or "skipped" in r or r["path"] == "closed form":
                cells = None
                break
            flag = "" if r["numerical_error"] < TARGET_MC_ERROR else " (>1e-3)"
            cells.append(f"{r['numerical_error']:.1e}{flag}")
        if cells is not None:
            table.append([method, *cells])
    base = []
    for s in samples:
        r = rows_by.get((s, "recall", "beta-binomial-half"))
        sd = None if r is None or "skipped" in r else r["baseline_sd_bounds_over_seeds"]
        base.append("n/a" if sd is None else "/".join(f"{v:.1e}" for v in sd))
    table.append(["baseline: 40,000 draws", *base])
    out.append(markdown_table(["method", *samples], table))
    out.append("\nrecall, first (cold) call in the process, ms\n")
    table = []
    for method in methods_for("recall"):
        cells = []
        for s in samples:
            r = rows_by.get((s, "recall", method))
            cells.append("n/a" if r is None or "skipped" in r else _ms(r["first_call_s"]))
        table.append([method, *cells])
    out.append(markdown_table(["method", *samples], table))
    if report.get("pymc"):
        out.append("\nrecall on 'webber' with engine='pymc' (NUTS), one-off\n")
        table = [
            [r["method"], _ms(r["first_call_s"]), _ms(r["median_s"]), f"{r['ratio']:.0f}x"]
            for r in report["pymc"]
        ]
        out.append(markdown_table(["method", "first call ms", "median ms", "ratio"], table))
    acc = report["accuracy"]
    out.append(
        f"\naccuracy: {acc['method']} on '{acc['sample']}', {acc['prob']:.0%} equal-tailed bounds\n"
    )
    sd = acc["baseline_sd"]
    table = [
        ["bayeval (exact engine, quadrature)", *(f"{v:.6f}" for v in acc["bayeval"]), "-"],
        ["exact summation (full pmfs, no binning)", *(f"{v:.6f}" for v in acc["exact_sum"]), "0"],
        [
            f"reference, {acc['reference_draws']:,} draws (seed {acc['reference_seed']})",
            *(f"{v:.6f}" for v in acc["reference"]),
            "/".join(f"{v:.1e}" for v in acc["reference_se"]),
        ],
        [
            f"baseline, {acc['baseline_draws']:,} draws (seed 0)",
            *(f"{v:.6f}" for v in acc["baseline_seed0"]),
            "-" if sd[0] is None else "/".join(f"{v:.1e}" for v in sd),
        ],
    ]
    out.append(markdown_table(["bounds from", "low", "high", "MC sd (low/high)"], table))
    out.append(
        "\nbayeval - exact: "
        + ", ".join(f"{v:+.1e}" for v in acc["bayeval_minus_exact"])
        + "; baseline(seed 0) - exact: "
        + ", ".join(f"{v:+.1e}" for v in acc["baseline_seed0_minus_exact"])
        + "; reference - exact: "
        + ", ".join(f"{v:+.1e}" for v in acc["reference_minus_exact"])
        + f"  (baseline sd over {acc['baseline_seeds']} seeds)"
    )
    return "\n".join(out)


def run(repeats: int, warmup: int, accuracy_seeds: int, with_pymc: bool, pymc_repeats: int):
    """Run every benchmark and return the report as a JSON-ready dict."""
    samples = build_samples()
    report = {
        "machine": _machine_info(),
        "config": {
            "repeats": repeats,
            "warmup": warmup,
            "prob": PROB,
            "baseline_draws": BASELINE_DRAWS,
            "baseline_prior": 0.5,
            "target_seconds": TARGET_SECONDS,
            "target_mc_error": TARGET_MC_ERROR,
            "command": " ".join([Path(sys.executable).name, *sys.argv]),
        },
        "samples": {
            name: {
                "note": SAMPLE_NOTES[name],
                "population": s.population.tolist(),
                "sampled": s.sampled.tolist(),
                "positives": s.positives.tolist(),
                "retrieved": s.retrieved.tolist(),
            }
            for name, s in samples.items()
        },
        "two_segment": [name for name, s in samples.items() if s.is_two_segment],
        "timings": [],
    }
    for name, sample in samples.items():
        for measure in INTERVAL_FUNCTIONS:
            for method in methods_for(measure):
                try:
                    row = time_method(sample, measure, method, repeats, warmup)
                except ValueError as err:  # e.g. a one-proportion interval on several strata
                    row = {"measure": measure, "method": method, "skipped": str(err)}
                row = {"sample": name, **row}
                report["timings"].append(row)
                if "skipped" in row:
                    print(f"  {name:13s} {measure:9s} {method:26s} skipped", file=sys.stderr)
                else:
                    print(
                        f"  {name:13s} {measure:9s} {method:26s} {_ms(row['median_s']):>8s} ms"
                        f"  baseline {_ms(row['baseline']['median_s']):>8s} ms"
                        f"  ratio {row['ratio']:.3f}",
                        file=sys.stderr,
                    )
    if with_pymc:
        report["pymc"] = time_pymc(samples["webber"], pymc_repeats)
    report["accuracy"] = accuracy(samples["webber"], accuracy_seeds, REFERENCE_DRAWS)
    report["machine"]["loadavg_end"] = list(os.getloadavg())
    return report


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, run, print the tables and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repeats", type=int, default=100, help="timed repetitions per method (default 100)"
    )
    parser.add_argument("--quick", action="store_true", help="smoke test: 5 repetitions")
    parser.add_argument(
        "--output", type=Path, default=DEFAULT_OUTPUT, help=f"JSON file (default {DEFAULT_OUTPUT})"
    )
    parser.add_argument(
        "--pymc", action="store_true", help="also time engine='pymc' (NUTS) once, on 'webber'"
    )
    parser.add_argument(
        "--show", type=Path, metavar="JSON", help="print the tables of a saved run and exit"
    )
    args = parser.parse_args(argv)
    if args.show is not None:
        print(format_report(json.loads(args.show.read_text())))
        return
    repeats = 5 if args.quick else args.repeats
    if repeats < 1:
        parser.error("--repeats must be at least 1")
    report = run(
        repeats=repeats,
        warmup=1 if args.quick else 3,
        accuracy_seeds=10 if args.quick else 200,
        with_pymc=args.pymc,
        pymc_repeats=1 if args.quick else 3,
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=1) + "\n")
    print(format_report(report))
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
