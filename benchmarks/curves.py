"""Benchmark: precision-curve methods (random baseline, LogStrat, PAULA, AdaStrat) as N grows.

The shape of Sabharwal & Xue (2018), §5, Figures 2-3: a fully labelled base list of 35,615
items is scaled up 1, 10, 100 and 1000 times with :func:`bayeval.datasets.scale_up` (window
100), giving lists of 3.6e4 to 3.6e7 items, and every method runs on each with the papers'
settings (epsilon 0.03, window 100, delta 0.05, beta 1.05, p_min 0.5; AdaStrat with the
default ``m`` and ``r_tilde``, those of LogStrat). For each list and method the script records
the queried ranks, the planned (for AdaStrat: worst-case) and actual annotations, the wall time
(median of a few runs, split into the time spent inside the oracle and the rest), the peak
memory traced by ``tracemalloc``, and the accuracy of the curve: at every rank ``1..N``, and at
about 1,000 log-spaced ranks plus the two ends of every step of LogStrat's and PAULA's step
functions (for AdaStrat, whose estimate and bounds are smooth envelopes: plus its queried ranks
and their neighbours ``r - 1, r, r + 1``). It reports the largest relative error of
``estimate`` and the number of ranks where ``lower <= p <= upper`` fails, against the realised
precision of the generated list (counted exactly, label by label) and against its expected
precision (``ScaledList.true_precision``). The same pass measures how far each list is from
AdaStrat's (and LogStrat's) assumption, Definition 1's ``(r_tilde, m)``-weak monotonicity.
When AdaStrat's guaranteed envelope crosses (``lower > upper``, evidence against that
assumption), ``adastrat`` issues a ``RuntimeWarning``; the script catches it and records
``result.crossing`` (first and last rank of the crossing ranges) and the message.

At ``N = 2 * 10**9`` the four planners are timed, and PAULA, LogStrat and AdaStrat run against
a synthetic oracle whose labels are a cheap deterministic function of the position, so that
the exact precision at any rank is known in closed form.

The base list (no public copy of PPDB-36K's labels exists in this repository): item ``i`` of
``N0 = 35,615`` is positive with probability ``q(x) = 0.38 + 0.55 exp(-x / 0.3)``,
``x = (i + 1/2) / N0``, drawn once with ``numpy.random.default_rng(2018)`` (19,238
positives). Its precision is about 0.9 over the top thousand ranks and falls smoothly to 0.85 at
rank 3,492, 0.73 at 10,000, 0.64 at the middle and 0.54 at the bottom, roughly the range of
PPDB-36K's curve, staying above ``p_min = 0.5``.

Run from the repository root::

    .venv/bin/python benchmarks/curves.py              # the recorded run, about 1-2 min
    .venv/bin/python benchmarks/curves.py --quick      # smoke test, factors 1 and 10, ~6 s
    .venv/bin/python benchmarks/curves.py --show benchmarks/results/curves.json

Results go to ``benchmarks/results/curves.json`` (``--output PATH`` to change) and a summary is
printed as Markdown tables.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import subprocess
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _common import machine_info, markdown_table

from bayeval import curves
from bayeval.datasets import scale_up
from bayeval.oracles import CallableOracle

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_OUTPUT = HERE / "results" / "curves.json"

# -- settings (Sabharwal & Xue 2018, §5.1) ----------------------------------------------------
EPSILON = 0.03
WINDOW = 100
DELTA = 0.05
BETA = 1.05
P_MIN = 0.5
ALPHA = BETA * (1.0 + EPSILON) - 1.0  # the random baseline's target, the default of plan_random
RNG = 0  # seed of the sampling methods

BASE_N = 35_615
BASE_SEED = 2018
SCALE_SEED = 0
FACTORS = (1, 10, 100, 1000)
QUICK_FACTORS = (1, 10)
EVAL_RANKS = 1000
EXPECTED_FROM = 10_000  # expected-precision comparison only where the list's own noise is small
CHUNK = 1 << 20
TOL = 1e-12

HUGE_N = 2 * 10**9
HUGE_BLOCKS = 1000
HUGE_PERIOD = 100
HUGE_DEPARTURE_BLOCKS = 10  # Definition 1 is checked label by label on the first 10 blocks

METHODS = ("random", "logstrat", "paula", "adastrat")
HUGE_METHODS = ("paula", "logstrat", "adastrat")
EVAL_CELLS = 1 << 21  # ranks x corners per call when evaluating AdaStrat's envelopes

# The papers' figures for PPDB-36K and its scaled-up versions (eps 0.03, window 100,
# delta 0.05, beta 1.05): AdaStrat §5 (Figures 2-3 and text) and PAULA §5.2. AdaStrat's
# query count at 35.6M is stated twice, differently: "only 18 queries, even for the largest
# dataset with over 35M items" (§5.1) and "only 21 queries even for PPDB-36K-1000x with 35M
# items" (Figure 2's caption).
PAPER = {
    "logstrat_queries": {35_615: 78, 3_561_500: 234, 35_615_000: 312},
    "paula_queries": {35_615: 78, 3_561_500: 234, 35_615_000: 312},
    "adastrat_queries": {
        35_615: "18",
        3_561_500: "18",
        35_615_000: "18 (§5.1 text), 21 (Fig. 2 caption)",
    },
    "logstrat_annotations": {35_615: "18K", 3_561_500: "54K", 35_615_000: "73K"},
    "paula_annotations": {35_615: "11,292"},
    "adastrat_annotations": {3_561_500: "24K", 35_615_000: "28K"},
    "random_annotations": {3_561_500: "284K", 35_615_000: "close to 1M"},
}
# "20%-61% higher annotation efficiency than LogStrat" (§5.1), over the four lists; read here
# as the saving 1 - AdaStrat / LogStrat annotations (24K vs 54K: 56%, 28K vs 73K: 62%).
PAPER_SAVING = "20%-61%"


def q_curve(x: np.ndarray) -> np.ndarray:
    """Positive probability at relative position ``x`` in [0, 1] (top first)."""
    return 0.38 + 0.55 * np.exp(-x / 0.3)


def base_labels(n: int = BASE_N, seed: int = BASE_SEED) -> np.ndarray:
    """The deterministic base list: one Bernoulli(q((i + 1/2) / n)) draw per item."""
    x = (np.arange(n) + 0.5) / n
    return np.random.default_rng(seed).random(n) < q_curve(x)


# -- the methods ------------------------------------------------------------------------------
def run_method(method: str, oracle, n: int):
    if method == "random":
        return curves.random_baseline(oracle, n, alpha=ALPHA, p_min=P_MIN, delta=DELTA, rng=RNG)
    if method == "logstrat":
        return curves.logstrat(
            oracle, n, epsilon=EPSILON, delta=DELTA, p_min=P_MIN, beta=BETA, rng=RNG
        )
    if method == "adastrat":
        return curves.adastrat(
            oracle, n, epsilon=EPSILON, delta=DELTA, beta=BETA, p_min=P_MIN, rng=RNG
        )
    return curves.paula(oracle, n, epsilon=EPSILON, window=WINDOW)


def plan_method(method: str, n: int):
    if method == "random":
        return curves.plan_random(n, alpha=ALPHA, p_min=P_MIN, delta=DELTA)
    if method == "logstrat":
        return curves.plan_logstrat(n, epsilon=EPSILON, delta=DELTA, p_min=P_MIN, beta=BETA)
    if method == "adastrat":
        return curves.plan_adastrat(n, epsilon=EPSILON, delta=DELTA, beta=BETA, p_min=P_MIN)
    return curves.plan_paula(n, epsilon=EPSILON, window=WINDOW)


def run_quiet(method: str, oracle, n: int) -> tuple[object, list[str]]:
    """Run ``method``, collecting AdaStrat's warning that its guaranteed envelope crosses.

    ``adastrat`` warns (``RuntimeWarning``, "... crosses ...") when ``lower > upper`` somewhere,
    and records the ranks in ``result.crossing``; the benchmark records both instead of
    printing the warning at every timed run. Any other warning is re-issued.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run_method(method, oracle, n)
    messages = []
    for w in caught:
        if issubclass(w.category, RuntimeWarning) and "crosses" in str(w.message):
            messages.append(str(w.message))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return result, messages


# -- timed oracles ----------------------------------------------------------------------------
class Clock:
    """Accumulates the wall time spent inside the wrapped callables."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def wrap(self, fn: Callable) -> Callable:
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1

        return timed


def timed_oracle(label_fn: Callable, n: int) -> tuple[CallableOracle, Clock, Clock]:
    """A vectorised CallableOracle over ``label_fn``, with clocks on ``label`` and on the lookup.

    ``oracle_clock`` times every ``Oracle.label`` call (validation, de-duplication, the record
    of distinct annotations, and the lookup); ``lookup_clock`` only ``label_fn`` itself.
    """
    oracle_clock, lookup_clock = Clock(), Clock()
    oracle = CallableOracle(lookup_clock.wrap(label_fn), n_items=n, vectorized=True)
    oracle.label = oracle_clock.wrap(oracle.label)  # instance attribute shadows the method
    return oracle, oracle_clock, lookup_clock


def measure(method: str, label_fn: Callable, n: int, repeats: int) -> tuple[dict, object]:
    """Time ``repeats`` fresh runs, then trace one more run's peak memory."""
    totals, oracles, lookups, caught = [], [], [], []
    result = None
    for _ in range(repeats):
        result = None
        gc.collect()
        oracle, oracle_clock, lookup_clock = timed_oracle(label_fn, n)
        start = time.perf_counter()
        result, messages = run_quiet(method, oracle, n)
        totals.append(time.perf_counter() - start)
        oracles.append(oracle_clock.seconds)
        lookups.append(lookup_clock.seconds)
        calls = oracle_clock.calls
        caught += [m for m in messages if m not in caught]
        del oracle
    algorithm = [t - o for t, o in zip(totals, oracles, strict=True)]
    gc.collect()
    tracemalloc.start()
    try:
        oracle, _, _ = timed_oracle(label_fn, n)
        traced, _ = run_quiet(method, oracle, n)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del oracle, traced
    plan = result.plan
    row = {
        "method": method,
        "n_items": n,
        "queries": result.n_queries,
        "max_queries": planned_queries(plan),
        "planned_annotations": int(plan.annotations),
        "annotations_formula": float(plan.annotations_formula),
        "annotations": int(result.annotations),
        "exact_len": int(result.exact_len),
        "corners": int(result.corners.size),
        "approximation": float(plan.approximation),
        "oracle_calls": calls,
        "seconds_runs": totals,
        "seconds": float(np.median(totals)),
        "oracle_seconds": float(np.median(oracles)),
        "lookup_seconds": float(np.median(lookups)),
        "algorithm_seconds": float(np.median(algorithm)),
        "peak_bytes": int(peak),
    }
    if method == "adastrat":  # the adaptive queries, in query order
        row["queried"] = result.queried.tolist()
        # first and last rank of the ranges where the guaranteed envelope crosses, or None;
        # the RuntimeWarning that adastrat issued then (the same in every run)
        row["crossing"] = list(result.crossing) if result.crossing is not None else None
        row["crossing_warnings"] = caught
    return row, result


def planned_queries(plan) -> int:
    """The planned queries; AdaStrat's plan gives only Theorem 4's worst case."""
    return int(plan.max_queries) if plan.method == "adastrat" else int(plan.n_queries)


# -- ground truth and accuracy ----------------------------------------------------------------
def eval_ranks(n: int, result=None) -> np.ndarray:
    """About 1,000 log-spaced ranks, plus both ends of every LogStrat/PAULA step; for an
    AdaStrat ``result`` (smooth envelopes, no steps) plus its queried ranks ``r`` and ``r +- 1``.
    """
    logs = np.unique(np.rint(np.logspace(0, math.log10(n), EVAL_RANKS)).astype(np.int64))
    if isinstance(result, curves.AdaStratResult):
        q = np.asarray(result.queried, dtype=np.int64)
        extra = np.concatenate([q - 1, q, q + 1, [n]])
    else:
        points = curves.plan_paula(n, epsilon=EPSILON, window=WINDOW).points
        extra = np.concatenate([points, points - 1, [n]])
    ranks = np.unique(np.concatenate([logs, extra]))
    return ranks[(ranks >= 1) & (ranks <= n)]


def evaluate(result, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``lower``, ``upper`` and ``estimate`` at ``ranks``; AdaStrat's envelopes (arrays of
    ranks x corners) in blocks of about ``EVAL_CELLS`` cells.
    """
    if not isinstance(result, curves.AdaStratResult):
        return result.lower(ranks), result.upper(ranks), result.estimate(ranks)
    size = max(1024, EVAL_CELLS // max(1, result.corners.size))
    parts = [
        (result.lower(r), result.upper(r), result.estimate(r))
        for r in (ranks[i : i + size] for i in range(0, ranks.size, size))
    ]
    return tuple(np.concatenate(c) for c in zip(*parts, strict=True))


class Departure:
    """How far a list is from Definition 1 (Sabharwal & Xue 2018): ``p`` is
    ``(r_tilde, m)``-weakly monotone iff ``p(r1) >= p(r2)`` whenever ``r_tilde <= r1`` and
    ``r2 >= r1 + m``. Fed the precision at consecutive ranks, it keeps the largest
    ``p(r2) / min p(r_tilde .. r2 - m)`` (at most 1 iff the definition holds) and counts the
    ranks ``r2`` where it exceeds 1.
    """

    def __init__(self, m: int, r_tilde: int):
        self.m, self.r_tilde = m, r_tilde
        self.tail = np.full(m, np.inf)  # running minimum at the m ranks before the next chunk
        self.ratio, self.rank, self.p, self.p_min_before, self.ranks_failing = 0.0, None, 0, 0, 0

    def update(self, ranks: np.ndarray, p: np.ndarray) -> None:
        run = np.minimum.accumulate(np.where(ranks >= self.r_tilde, p, np.inf))
        run = np.minimum(run, self.tail[-1])
        ext = np.concatenate([self.tail, run])
        lagged = ext[: ranks.size]  # min p(r_tilde .. r - m)
        self.tail = ext[-self.m :]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(np.isfinite(lagged) & (lagged > 0), p / lagged, 0.0)
        self.ranks_failing += int((ratio > 1.0 + TOL).sum())
        i = int(np.argmax(ratio))
        if ratio[i] > self.ratio:
            self.ratio, self.rank = float(ratio[i]), int(ranks[i])
            self.p, self.p_min_before = float(p[i]), float(lagged[i])

    def record(self) -> dict:
        return {
            "m": self.m,
            "r_tilde": self.r_tilde,
            "max_ratio": self.ratio,
            "at_rank": self.rank,
            "p_at_rank": self.p,
            "min_p_up_to_rank_minus_m": self.p_min_before,
            "ranks_failing": self.ranks_failing,
        }


def adastrat_gaps(n: int) -> tuple[int, int]:
    """AdaStrat's default ``(m, r_tilde)`` for a list of ``n`` items."""
    plan = plan_method("adastrat", n)
    return int(plan.m), int(plan.r_tilde)


def scan(
    label_fn: Callable, n: int, ranks: np.ndarray, results: dict
) -> tuple[np.ndarray, dict, dict]:
    """One pass over the whole list: the realised counts at ``ranks``; at every rank ``1..n``,
    each result's largest relative error and violations of its bounds; and the list's
    departure from AdaStrat's weak monotonicity.
    """
    out = np.empty(ranks.size, dtype=np.int64)
    departure = Departure(*adastrat_gaps(n))
    stats = {
        m: {"ranks": n, "max_rel_error": 0.0, "max_rel_error_rank": None, "violations": 0,
            "violations_below": 0, "violations_above": 0, "worst_violation": 0.0,
            "violating_ranks": [], "crossings": 0, "crossing_first": None, "crossing_last": None,
            "worst_crossing": 1.0}
        for m in results
    }  # fmt: skip
    total = 0
    for start in range(0, n, CHUNK):
        stop = min(start + CHUNK, n)
        labels = np.asarray(label_fn(np.arange(start, stop, dtype=np.int64)), dtype=bool)
        cum = total + np.cumsum(labels, dtype=np.int64)
        inside = (ranks > start) & (ranks <= stop)
        out[inside] = cum[ranks[inside] - start - 1]
        total = int(cum[-1])
        r = np.arange(start + 1, stop + 1, dtype=np.int64)
        p = cum / r
        departure.update(r, p)
        for method, res in results.items():
            st = stats[method]
            low, high, est = evaluate(res, r)
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.where(p > 0, np.abs(est - p) / p, 0.0)
            i = int(np.argmax(rel))
            if rel[i] > st["max_rel_error"]:
                st["max_rel_error"], st["max_rel_error_rank"] = float(rel[i]), int(r[i])
            cross = low > high + TOL  # the bounds contradict each other
            if cross.any():
                st["crossings"] += int(cross.sum())
                if st["crossing_first"] is None:
                    st["crossing_first"] = int(r[cross][0])
                st["crossing_last"] = int(r[cross][-1])
                with np.errstate(divide="ignore"):
                    worst = float((low[cross] / high[cross]).max())
                st["worst_crossing"] = max(st["worst_crossing"], worst)
            below, above = low > p + TOL, high < p - TOL
            bad = below | above
            if bad.any():
                miss = np.where(below, low - p, 0.0) + np.where(above, p - high, 0.0)
                st["violations"] += int(bad.sum())
                st["violations_below"] += int(below.sum())
                st["violations_above"] += int(above.sum())
                worst = float((miss[bad] / np.maximum(p[bad], 1e-300)).max())
                st["worst_violation"] = max(st["worst_violation"], worst)
                room = 20 - len(st["violating_ranks"])
                st["violating_ranks"] += r[bad][:room].tolist()
    return out, stats, departure.record()


def accuracy(result, ranks: np.ndarray, truth: np.ndarray) -> dict:
    """Largest relative error of ``estimate`` and violations of ``lower <= p <= upper``."""
    low, high, est = evaluate(result, ranks)
    positive = truth > 0
    rel = np.abs(est[positive] - truth[positive]) / truth[positive]
    below = low > truth + TOL
    above = high < truth - TOL
    bad = below | above
    # how far outside: relative to p, the larger of the two overshoots
    miss = np.zeros(ranks.size)
    miss[below] = (low[below] - truth[below]) / np.maximum(truth[below], 1e-300)
    miss[above] = (truth[above] - high[above]) / np.maximum(truth[above], 1e-300)
    worst = int(np.argmax(rel)) if rel.size else None
    return {
        "ranks": int(ranks.size),
        "max_rel_error": float(rel.max()) if rel.size else 0.0,
        "max_rel_error_rank": int(ranks[positive][worst]) if worst is not None else None,
        "median_rel_error": float(np.median(rel)) if rel.size else 0.0,
        "violations": int(bad.sum()),
        "violations_below": int(below.sum()),
        "violations_above": int(above.sum()),
        "worst_violation": float(miss.max()) if bad.any() else 0.0,
        "violating_ranks": ranks[bad][:20].tolist(),
        "crossings": int((low > high + TOL).sum()),
    }


# -- scaling: 3.6e4 .. 3.6e7 ------------------------------------------------------------------
def scaling(factors: tuple[int, ...], repeats: int) -> tuple[dict, list[dict]]:
    labels = base_labels()
    rows = []
    ranks_at = (100, 1000, 3492, 10_000, 17_807, BASE_N)
    cum = np.cumsum(labels)
    base = {
        "n_items": BASE_N,
        "seed": BASE_SEED,
        "curve": "q(x) = 0.38 + 0.55 exp(-x / 0.3), x = (i + 1/2) / N0",
        "positives": int(labels.sum()),
        "precision_at": {str(r): float(cum[r - 1] / r) for r in ranks_at},
        "scale_window": WINDOW,
        "scale_seed": SCALE_SEED,
    }
    for factor in factors:
        lst = scale_up(labels, factor, window=WINDOW, rng=SCALE_SEED)
        n = lst.n_items
        results, measured = {}, []
        for method in METHODS:
            row, results[method] = measure(method, lst.label, n, repeats)
            row["factor"] = factor
            measured.append(row)
        start = time.perf_counter()
        rank_sets = {method: eval_ranks(n, results[method]) for method in METHODS}
        union = np.unique(np.concatenate(list(rank_sets.values())))
        realised_counts, everywhere, departure = scan(lst.label, n, union, results)
        realised_all = realised_counts / union
        expected_all = lst.true_precision(union)
        truth_s = time.perf_counter() - start
        far_all = union >= EXPECTED_FROM
        noise = np.abs(realised_all[far_all] - expected_all[far_all]) / expected_all[far_all]
        for row in measured:
            method, result = row["method"], results[row["method"]]
            ranks = rank_sets[method]
            at = np.searchsorted(union, ranks)
            realised, expected = realised_all[at], expected_all[at]
            row["vs_realised"] = accuracy(result, ranks, realised)
            row["all_ranks"] = everywhere[method]
            # exact prefixes equal the realised list
            beyond = (ranks >= EXPECTED_FROM) & (ranks > result.exact_len)
            row["vs_expected"] = accuracy(result, ranks[beyond], expected[beyond])
            row["list_noise_vs_expected"] = float(noise.max())
            row["list_departure"] = departure
            row["check_seconds"] = truth_s
            rows.append(row)
            print(
                f"  N={n:>11,} {method:9s} q={row['queries']:4d} ann={row['annotations']:>8,} "
                f"{row['seconds']:7.3f} s (oracle {row['oracle_seconds']:.3f}) "
                f"{row['peak_bytes'] / 2**20:7.1f} MiB  "
                f"err {row['all_ranks']['max_rel_error']:.4f} "
                f"viol {row['all_ranks']['violations']}{_flag_note(row)}",
                file=sys.stderr,
            )
        del results
    return base, rows


# -- N = 2e9 ----------------------------------------------------------------------------------
class PeriodicList:
    """A deterministic list of ``n`` items with an exactly known precision at every rank.

    The list is cut into ``blocks`` equal blocks; in block ``k`` the item at position ``i`` is
    positive when ``i mod period < c_k``, with ``c_k = round(period * q((k + 1/2) / blocks))``
    non-increasing. Every window of ``period`` items inside a block has precision
    ``c_k / period`` exactly, so the window precision never increases down the list.
    """

    def __init__(self, n: int, blocks: int, period: int):
        if n % blocks or (n // blocks) % period:
            raise ValueError("n must be a multiple of blocks * period")
        self.n, self.blocks, self.period = n, blocks, period
        self.block = n // blocks
        self.c = np.rint(period * q_curve((np.arange(blocks) + 0.5) / blocks)).astype(np.int64)
        per_block = self.c * (self.block // period)
        self.cum = np.concatenate([[0], np.cumsum(per_block)])

    def label(self, positions: np.ndarray) -> np.ndarray:
        pos = np.asarray(positions, dtype=np.int64)
        return (pos % self.period) < self.c[pos // self.block]

    def counts(self, ranks: np.ndarray) -> np.ndarray:
        r = np.asarray(ranks, dtype=np.int64)
        k = np.minimum(r // self.block, self.blocks - 1)
        t = r - k * self.block
        c = self.c[k]
        return self.cum[k] + (t // self.period) * c + np.minimum(t % self.period, c)


def huge(repeats: int, planner_repeats: int) -> dict:
    lst = PeriodicList(HUGE_N, HUGE_BLOCKS, HUGE_PERIOD)
    # self-check of the closed form against the labels themselves (first 2.5 blocks)
    check = np.arange(1, 5 * lst.block // 2 + 1, dtype=np.int64)
    brute = np.cumsum(lst.label(check - 1))
    if not np.array_equal(brute, lst.counts(check)):
        raise AssertionError("closed-form counts disagree with the labels")
    planners = []
    for n in sorted({BASE_N * f for f in FACTORS} | {HUGE_N}):
        for method in METHODS:
            seconds = []
            for _ in range(planner_repeats):
                start = time.perf_counter()
                plan = plan_method(method, n)
                seconds.append(time.perf_counter() - start)
            planners.append(
                {
                    "method": method,
                    "n_items": n,
                    "queries": planned_queries(plan),
                    "annotations": int(plan.annotations),
                    "worst_case": method == "adastrat",
                    "annotations_formula": float(plan.annotations_formula),
                    "approximation": float(plan.approximation),
                    "seconds": float(np.median(seconds)),
                }
            )
    runs = []
    for method in HUGE_METHODS:
        row, result = measure(method, lst.label, HUGE_N, repeats)
        ranks = eval_ranks(HUGE_N, result)
        row["vs_exact"] = accuracy(result, ranks, lst.counts(ranks) / ranks)
        runs.append(row)
        print(
            f"  N={HUGE_N:,} {method:9s} q={row['queries']} ann={row['annotations']:,} "
            f"{row['seconds']:.3f} s "
            f"(algorithm {row['algorithm_seconds']:.3f}) {row['peak_bytes'] / 2**20:.1f} MiB"
            f"{_flag_note(row)}",
            file=sys.stderr,
        )
        del result
    # Definition 1 on the first HUGE_DEPARTURE_BLOCKS blocks, label by label
    departure = Departure(*adastrat_gaps(HUGE_N))
    total = 0
    for start in range(0, HUGE_DEPARTURE_BLOCKS * lst.block, CHUNK):
        r = np.arange(start + 1, min(start + CHUNK, HUGE_DEPARTURE_BLOCKS * lst.block) + 1)
        cum = total + np.cumsum(lst.label(r - 1), dtype=np.int64)
        total = int(cum[-1])
        departure.update(r, cum / r)
    return {
        "n_items": HUGE_N,
        "oracle": (
            f"CallableOracle(vectorized=True): {HUGE_BLOCKS} blocks of {lst.block:,} items; "
            f"position i in block k is positive iff i mod {HUGE_PERIOD} < c_k, "
            f"c_k = round({HUGE_PERIOD} q((k + 1/2) / {HUGE_BLOCKS})) ({int(lst.c[0])} down to "
            f"{int(lst.c[-1])})"
        ),
        "precision_at_n": float(lst.counts(np.array([HUGE_N]))[0] / HUGE_N),
        "departure": {"up_to_rank": HUGE_DEPARTURE_BLOCKS * lst.block, **departure.record()},
        "planners": planners,
        "runs": runs,
        "random_not_run": (
            f"plan_random needs {planners_annotations(planners, 'random', HUGE_N):,} annotations "
            "at N = 2e9: the run would hold that many labels in the oracle's record"
        ),
    }


def planners_annotations(planners: list[dict], method: str, n: int) -> int:
    return next(p["annotations"] for p in planners if p["method"] == method and p["n_items"] == n)


# -- machine and reporting --------------------------------------------------------------------


def _n(n: int) -> str:
    return f"{n:.1e}".replace("e+0", "e") if n >= 10**5 else f"{n:,}"


def _s(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    if seconds < 1:
        return f"{seconds * 1e3:.0f} ms"
    return f"{seconds:.2f} s"


def _mib(nbytes: int) -> str:
    return f"{nbytes / 2**20:.1f}"


def _growth(rows: list[dict], method: str) -> str:
    pts = sorted((r["n_items"], r["annotations"]) for r in rows if r["method"] == method)
    if len(pts) < 2:
        return "n/a"
    (n0, a0), (n1, a1) = pts[0], pts[-1]
    return f"x{a1 / a0:.2f} (slope {math.log(a1 / a0) / math.log(n1 / n0):.2f})"


def format_report(report: dict) -> str:
    m = report["machine"]
    out = [
        f"{m['date']}  {m['platform']}  {m['cpu_model']} x{m['cpu_count']}  "
        f"Python {m['python']}  numpy {m['numpy']}  load {m['loadavg_start'][0]:.2f} -> "
        f"{m['loadavg_end'][0]:.2f}  repeats {report['config']['repeats']}  "
        f"total {report['config']['total_seconds']:.0f} s  commit {m.get('git_commit')}"
    ]
    if report.get("worktree"):
        out.append(f"uncommitted changes in bayeval/: {', '.join(report['worktree'])}")
    rows = report["scaling"]
    names = {
        "random": "random baseline",
        "logstrat": "LogStrat",
        "paula": "PAULA",
        "adastrat": "AdaStrat",
    }
    ns = sorted({r["n_items"] for r in rows})
    by = {(r["n_items"], r["method"]): r for r in rows}

    out.append(
        "\nqueries and annotations (actual / planned; AdaStrat: actual / worst case, queries "
        "(<= Theorem 4's bound)) as N grows (Figures 2-3); last column: 1 - AdaStrat / LogStrat "
        "annotations\n"
    )
    table = []
    for n in ns:
        cells = [_n(n)]
        for method in METHODS:
            r = by[(n, method)]
            if method == "random":
                q = "-"
            elif method == "adastrat":
                q = f"{r['queries']} (<= {r['max_queries']})"
            else:
                q = str(r["queries"])
            bound = "<= " if method == "adastrat" else ""
            cells += [q, f"{r['annotations']:,} / {bound}{r['planned_annotations']:,}"]
        cells.append(f"{_saving(by, n):.0%}")
        table.append(cells)
    growth = ["growth"]
    for method in METHODS:
        growth += ["", _growth(rows, method)]
    table.append([*growth, ""])
    header = ["N"]
    for method in METHODS:
        header += [f"{names[method]} queries", f"{names[method]} annotations"]
    out.append(markdown_table([*header, "AdaStrat saving"], table))

    out.append("\nagainst the papers' figures for PPDB-36K and its scaled-up versions\n")
    table = []
    labels = {
        "logstrat_queries": ("LogStrat", "queries", "queries"),
        "paula_queries": ("PAULA", "queries", "queries"),
        "adastrat_queries": ("AdaStrat", "queries", "queries"),
        "logstrat_annotations": ("LogStrat", "annotations", "annotations"),
        "paula_annotations": ("PAULA", "annotations", "annotations"),
        "adastrat_annotations": ("AdaStrat", "annotations", "annotations"),
        "random_annotations": ("random baseline", "annotations", "planned_annotations"),
    }
    key_method = {v: k for k, v in names.items()}
    for key, values in report["paper"].items():
        name, quantity, field = labels[key]
        for n_text, paper_value in values.items():
            r = by.get((int(n_text), key_method[name]))
            if r is None:
                continue
            ours = f"{r[field]:,}"
            if key == "random_annotations":
                ours += f" planned ({r['annotations']:,} distinct)"
            if key == "logstrat_annotations":
                ours += f" (Theorem 2: {r['annotations_formula']:,.0f})"
            if key == "adastrat_annotations":
                ours += f" (LogStrat here: {by[(int(n_text), 'logstrat')]['annotations']:,})"
            table.append([_n(int(n_text)), name, quantity, str(paper_value), ours])
    if all((n, m) in by for n in ns for m in ("adastrat", "logstrat")):
        savings = ", ".join(f"{_saving(by, n):.0%}" for n in ns)
        table.append(
            [
                f"{_n(ns[0])} .. {_n(ns[-1])}",
                "AdaStrat",
                "saving vs LogStrat",
                report.get("paper_adastrat_saving_vs_logstrat", PAPER_SAVING),
                savings,
            ]
        )
    out.append(markdown_table(["N", "method", "quantity", "paper", "bayeval"], table))

    out.append(
        "\nwall time (median of runs, oracle included) = time inside the oracle + the "
        "algorithm's own time; peak memory traced by tracemalloc (oracle record included)\n"
    )
    table = []
    for n in ns:
        for method in METHODS:
            r = by[(n, method)]
            table.append(
                [
                    _n(n),
                    names[method],
                    _s(r["seconds"]),
                    _s(r["oracle_seconds"]),
                    _s(r["lookup_seconds"]),
                    _s(r["algorithm_seconds"]),
                    _mib(r["peak_bytes"]),
                ]
            )
    out.append(
        markdown_table(
            ["N", "method", "total", "in oracle", "of which lookup", "algorithm", "peak MiB"],
            table,
        )
    )

    out.append(
        "\nhow far each list is from Definition 1 ((r_tilde, m)-weak monotonicity, the "
        "assumption of AdaStrat's and LogStrat's bounds): max over r2 of p(r2) / min "
        "p(r_tilde .. r2 - m), and the number of ranks r2 where it exceeds 1\n"
    )
    table = []
    for n in ns:
        d = by[(n, METHODS[0])]["list_departure"]
        table.append(
            [
                _n(n),
                f"{d['m']}, {d['r_tilde']:,}",
                f"{d['max_ratio']:.4f} @ {d['at_rank'] or 0:,}",
                f"{d['p_at_rank']:.4f} vs {d['min_p_up_to_rank_minus_m']:.4f}",
                f"{d['ranks_failing']:,}",
            ]
        )
    out.append(
        markdown_table(
            ["N", "m, r_tilde", "max ratio @ r2", "p(r2) vs min", "ranks failing"], table
        )
    )

    out.append(
        "\naccuracy against the realised precision p of the generated list at every rank "
        "1..N: max |estimate - p| / p and ranks where lower <= p <= upper fails; last two "
        f"columns: max |estimate - E p| / E p against the expected precision (true_precision) "
        f"at the checked ranks >= {EXPECTED_FROM:,} beyond the exact prefix, and how far the "
        "list itself is from E p there; 'flagged': AdaStrat's result.crossing, the first and "
        "last rank of the ranges where its guaranteed envelope crosses (adastrat's "
        "RuntimeWarning, caught)\n"
    )
    table = []
    for n in ns:
        for method in METHODS:
            r = by[(n, method)]
            every, exp = r["all_ranks"], r["vs_expected"]
            viol = f"{every['violations']:,}"
            if every["violations"]:
                viol += f" (worst {every['worst_violation']:.1e})"
            table.append(
                [
                    _n(n),
                    names[method],
                    f"{r['approximation']:.4f}",
                    f"{every['max_rel_error']:.4f} @ {every['max_rel_error_rank']:,}",
                    viol,
                    _crossings(every),
                    _flagged(r),
                    f"{exp['max_rel_error']:.4f}",
                    f"{r['list_noise_vs_expected']:.4f}",
                ]
            )
    out.append(
        markdown_table(
            [
                "N",
                "method",
                "guaranteed factor",
                "max rel. error @ rank",
                "violations",
                "lower > upper",
                "flagged",
                "max rel. error vs E p",
                "list vs E p",
            ],
            table,
        )
    )

    big = report["huge"]
    out.append("\nplanners: queries, annotations and median time\n")
    table = []
    pn = {(p["n_items"], p["method"]): p for p in big["planners"]}
    for n in sorted({p["n_items"] for p in big["planners"]}):
        cells = [_n(n)]
        for method in METHODS:
            p = pn[(n, method)]
            bound = "<= " if p.get("worst_case") else ""
            q = "" if method == "random" else f"{bound}{p['queries']} q, "
            cells.append(f"{q}{bound}{p['annotations']:,} ann, {_s(p['seconds'])}")
        table.append(cells)
    out.append(markdown_table(["N", *(f"plan_{m}" for m in METHODS)], table))

    out.append(f"\nN = {_n(big['n_items'])} with a synthetic oracle: {big['oracle']}\n")
    table = []
    for r in big["runs"]:
        acc = r["vs_exact"]
        table.append(
            [
                names[r["method"]],
                str(r["queries"]),
                f"{r['annotations']:,}",
                _s(r["seconds"]),
                _s(r["oracle_seconds"]),
                _s(r["algorithm_seconds"]),
                _mib(r["peak_bytes"]),
                f"{acc['max_rel_error']:.4f}",
                f"{acc['violations']}/{acc['ranks']}"
                + (f" (worst {acc['worst_violation']:.1e})" if acc["violations"] else "")
                + (f"; lower > upper at {acc['crossings']}" if acc.get("crossings") else ""),
                _flagged(r),
            ]
        )
    out.append(
        markdown_table(
            [
                "method",
                "queries",
                "annotations",
                "total",
                "in oracle",
                "algorithm",
                "peak MiB",
                "max rel. error",
                "violations",
                "flagged",
            ],
            table,
        )
    )
    d = big["departure"]
    out.append(
        f"\nDefinition 1 (m = {d['m']}, r_tilde = {d['r_tilde']:,}) on this list, checked at "
        f"every rank up to {d['up_to_rank']:,}: max p(r2) / min p(r_tilde .. r2 - m) = "
        f"{d['max_ratio']:.6f} at r2 = {d['at_rank'] or 0:,} ({d['p_at_rank']:.6f} vs "
        f"{d['min_p_up_to_rank_minus_m']:.6f}); {d['ranks_failing']:,} ranks fail."
    )
    out.append(f"random baseline at N = 2e9 not run: {big['random_not_run']}.")
    return "\n".join(out)


def _crossings(stats: dict) -> str:
    """Ranks where ``lower > upper``: count, first and last rank, largest ``lower / upper``."""
    count = stats.get("crossings", 0)
    if not count:
        return "0"
    first, last, worst = stats["crossing_first"], stats["crossing_last"], stats["worst_crossing"]
    return f"{count:,} ({first:,}..{last:,}, x{worst:.3f})"


def _flagged(row: dict) -> str:
    """AdaStrat's ``result.crossing`` as ``first..last``; ``-`` for the other methods."""
    if row["method"] != "adastrat" or "crossing" not in row:
        return "-"
    span = row["crossing"]
    return "none" if span is None else f"{span[0]:,}..{span[1]:,}"


def _flag_note(row: dict) -> str:
    span = row.get("crossing")
    return "" if span is None else f"  crossing {span[0]:,}..{span[1]:,} (RuntimeWarning caught)"


def _saving(by: dict, n: int) -> float:
    """``1 - AdaStrat / LogStrat`` annotations at ``n``."""
    return 1.0 - by[(n, "adastrat")]["annotations"] / by[(n, "logstrat")]["annotations"]


def run(factors: tuple[int, ...], repeats: int, planner_repeats: int) -> dict:
    start = time.perf_counter()
    report = {
        "machine": machine_info(),
        "config": {
            "epsilon": EPSILON,
            "window": WINDOW,
            "delta": DELTA,
            "beta": BETA,
            "p_min": P_MIN,
            "alpha": ALPHA,
            "rng": RNG,
            "factors": list(factors),
            "repeats": repeats,
            "planner_repeats": planner_repeats,
            "eval_ranks": EVAL_RANKS,
            "expected_from": EXPECTED_FROM,
            "command": " ".join([Path(sys.executable).name, *sys.argv]),
        },
        "paper": {k: {str(n): v for n, v in d.items()} for k, d in PAPER.items()},
        "paper_adastrat_saving_vs_logstrat": PAPER_SAVING,
        "worktree": worktree_changes(),
    }
    report["base"], report["scaling"] = scaling(factors, repeats)
    report["huge"] = huge(repeats, planner_repeats)
    report["config"]["total_seconds"] = time.perf_counter() - start
    report["machine"]["loadavg_end"] = list(os.getloadavg())
    return report


def worktree_changes() -> list[str] | None:
    """Files of bayeval/ that differ from the recorded commit (``git status --porcelain``)."""
    try:
        out = subprocess.run(
            ["git", "status", "--porcelain", "--", "bayeval"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [line.strip() for line in out.splitlines()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke test: factors 1, 10; 1 run")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per method (default 5)")
    parser.add_argument(
        "--output", type=Path, default=DEFAULT_OUTPUT, help=f"JSON file (default {DEFAULT_OUTPUT})"
    )
    parser.add_argument(
        "--show", type=Path, metavar="JSON", help="print the tables of a saved run and exit"
    )
    args = parser.parse_args(argv)
    if args.show is not None:
        print(format_report(json.loads(args.show.read_text())))
        return
    repeats = 1 if args.quick else args.repeats
    if repeats < 1:
        parser.error("--repeats must be at least 1")
    report = run(
        factors=QUICK_FACTORS if args.quick else FACTORS,
        repeats=repeats,
        planner_repeats=3 if args.quick else 20,
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=1) + "\n")
    print(format_report(report))
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
