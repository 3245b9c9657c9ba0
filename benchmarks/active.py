"""Benchmark: bayeval's samplers on the MSE of the F1 estimate, and the time of AIS (issue 4).

**Accuracy.** For every sampler of ``bayeval.sampling.run.SAMPLERS`` (or those given with
``--samplers``) and ``R`` repeats (seed ``--seed + r``, the same seeds for every sampler), the
script runs ``be.evaluate(pool, FScore(), truth, budget=2000, sampler=name, batch_size=50,
rng=seed)`` and reads ``estimate``, ``lower`` and ``upper`` (95% confidence interval) from
``run.history`` at 250, 500, 1000 and 2000 labels. Per checkpoint it reports the MSE of the F1
estimate against the pool's true F1 with its Monte Carlo standard error, the bias, the number
of runs whose estimate is undefined (NaN: no item counted in F1's denominator was drawn), and
the coverage of the interval. MSE, bias and coverage are taken over the runs with a defined
estimate (and, for coverage, finite bounds). A sampler that raises is recorded with its error.
The two pools:

- ``synthetic``: M = 100,000 items, exactly 100 positives at positions drawn once with
  ``numpy.random.default_rng(2021)``; positive scores Beta(6, 2), negative scores
  Beta(1, 9.7); prediction ``score >= 0.5``. The expected F1 is about 0.593; the table
  prints this pool's own.
- ``febrl``: ``bayeval.datasets.load_febrl_pairs()``, 499,500 record pairs, 500 true links,
  the bundled ``predicted`` column (threshold 0.5) as the prediction.

The MSEs are printed next to the figures quoted in the issue for the peer packages
(activeeval's static IS and AIS, the ``oasis`` package, passive sampling).

**Timing.** (a) On the synthetic pool, full 2000-label runs (batches of 50) of AIS and of
StaticIS, interleaved, median wall time and their ratio; a breakdown of an AIS run by part of
the ask/tell loop and a cProfile of one run. (b) A synthetic pool of ``--big-size`` (default
1e8) items, drawn in chunks of 1e7 (positives Bernoulli(0.001), same score laws): the time and
memory to build the pool and to construct AIS (strata, loss patterns, cells, first proposal,
each from a cProfile of the constructor), then the cost of each ask / tell (of which the
proposal update) / estimate stage for the 40 stages of a 2000-label run, against the same
loop on the 1e5 pool.

Run from the repository root::

    .venv/bin/python benchmarks/active.py                 # the recorded run, ~5 minutes
    .venv/bin/python benchmarks/active.py --quick         # smoke test, ~15 s, writes nothing
    .venv/bin/python benchmarks/active.py --dask          # accuracy on 2 dask workers
    .venv/bin/python benchmarks/active.py --ais-option prior_strength=4 --accuracy-only \\
        --output /tmp/ais-ps4.json                        # tune AIS
    .venv/bin/python benchmarks/active.py --show benchmarks/results/active.json

Results go to ``benchmarks/results/active.json`` (``--output PATH`` to change) and are printed
as Markdown tables.
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import dataclasses
import gc
import io
import json
import os
import pstats
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy
import xarray as xr
from _common import git_status, machine_info, markdown_table, sample_load

import bayeval as be
from bayeval.datasets import load_febrl_pairs
from bayeval.sampling.run import SAMPLERS

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_OUTPUT = HERE / "results" / "active.json"

BUDGET = 2000
BATCH = 50
PROB = 0.95
CHECKPOINTS = (250, 500, 1000, 2000)
BASE_SEED = 0
CHUNK_REPEATS = 10  # repeats per task (per dask future)

SYNTHETIC = {
    "items": 100_000,
    "positives": 100,
    "positive_scores": (6.0, 2.0),  # Beta(a, b)
    "negative_scores": (1.0, 9.7),
    "threshold": 0.5,
    "seed": 2021,
}
BIG_SEED = 2022
BIG_PREVALENCE = SYNTHETIC["positives"] / SYNTHETIC["items"]
BIG_CHUNK = 10**7
POOLS = ("synthetic", "febrl")

#: MSE of the F1 estimate quoted in the issue, measured with the peer packages on this machine
#: (100 repeats; activeeval's AIS 20): the bayeval sampler it compares with, label, MSE at
#: CHECKPOINTS, repeats.
PEERS = {
    "synthetic": [
        ("static_is", "static IS (activeeval)", (6.9e-3, 2.9e-3, 1.4e-3, 5.1e-4), 100),
        ("ais", "AIS (activeeval)", (7.9e-3, 4.9e-3, 2.8e-3, 1.1e-3), 20),
        ("oasis", "OASIS (oasis package)", (3.0e-2, 9.6e-3, 3.3e-3, 1.1e-3), 100),
        ("passive", "passive (peer)", (0.27, 0.21, 0.14, 0.083), 100),
    ],
    "febrl": [
        ("static_is", "static IS (activeeval)", (2.3e-3, 1.1e-3, 4.6e-4, 2.1e-4), 100),
        ("ais", "AIS (activeeval)", (3.2e-3, 2.1e-3, 6.7e-4, 2.3e-4), 20),
    ],
}
#: The issue's description of the pools, printed beside the pools' own F1.
ISSUE_F1 = {"synthetic": 0.593, "febrl": 0.496}
#: activeeval's static IS, 2000 labels at M = 1e5, as quoted in the issue (seconds).
PEER_STATIC_SECONDS = (0.4, 0.6)
AIS_TARGET_SECONDS = 1.0


# -- pools --------------------------------------------------------------------------------------
def synthetic_pool() -> tuple[be.Pool, np.ndarray]:
    """The fixed 1e5-item pool: exactly 100 positives, Beta scores, threshold 0.5."""
    cfg = SYNTHETIC
    rng = np.random.default_rng(cfg["seed"])
    truth = np.zeros(cfg["items"], dtype=bool)
    truth[rng.choice(cfg["items"], size=cfg["positives"], replace=False)] = True
    scores = np.empty(cfg["items"])
    scores[truth] = rng.beta(*cfg["positive_scores"], size=cfg["positives"])
    scores[~truth] = rng.beta(*cfg["negative_scores"], size=cfg["items"] - cfg["positives"])
    return be.Pool(scores, threshold=cfg["threshold"]), truth


def febrl_pool() -> tuple[be.Pool, np.ndarray]:
    """The bundled FEBRL1 pair pool with its ``predicted`` column."""
    pairs = load_febrl_pairs()
    pool = be.Pool(pairs["score"].to_numpy(), predictions=pairs["predicted"].to_numpy())
    return pool, pairs["label"].to_numpy()


def make_pool(name: str) -> tuple[be.Pool, np.ndarray]:
    return synthetic_pool() if name == "synthetic" else febrl_pool()


def big_arrays(size: int, seed: int = BIG_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Scores and labels of ``size`` synthetic items, drawn in chunks of ``BIG_CHUNK``.

    Positives are Bernoulli(``BIG_PREVALENCE``) (not a fixed count), with the synthetic pool's
    score laws; scores are float64, as at 1e5.
    """
    rng = np.random.default_rng(seed)
    scores = np.empty(size)
    truth = np.empty(size, dtype=bool)
    for start in range(0, size, BIG_CHUNK):
        stop = min(start + BIG_CHUNK, size)
        y = rng.random(stop - start) < BIG_PREVALENCE
        x = np.empty(stop - start)
        x[y] = rng.beta(*SYNTHETIC["positive_scores"], size=int(y.sum()))
        x[~y] = rng.beta(*SYNTHETIC["negative_scores"], size=int((~y).sum()))
        scores[start:stop], truth[start:stop] = x, y
    return scores, truth


def true_f1(pool: be.Pool, truth: np.ndarray) -> float:
    return float(be.measures.FScore().value(truth, predictions=pool.predictions)[0])


# -- sampler options ----------------------------------------------------------------------------
def parse_options(pairs: list[str] | None) -> dict:
    """``["key=value", ...]`` to a dict; values read as Python literals, else as strings."""
    options = {}
    for pair in pairs or []:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"sampler options are KEY=VALUE; got {pair!r}.")
        try:
            options[key.strip()] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            options[key.strip()] = text
    return options


def sampler_kwargs(name: str, options: dict) -> dict:
    """Constructor options of sampler ``name``; for AIS, DirichletTree fields build ``model``."""
    if name != "ais":
        return dict(options)
    tree_fields = {f.name for f in dataclasses.fields(be.models.DirichletTree)}
    tree = {k: v for k, v in options.items() if k in tree_fields}
    kwargs = {k: v for k, v in options.items() if k not in tree_fields}
    if tree:
        kwargs["model"] = be.models.DirichletTree(**tree)
    return kwargs


# -- accuracy -----------------------------------------------------------------------------------
def run_repeats(pool: be.Pool, truth: np.ndarray, sampler: str, options: dict, seeds: list[int]):
    """Run ``sampler`` once per seed; ``estimate``/``lower``/``upper`` at the checkpoints.

    Returns a dict of lists, one entry per seed: the three ``(len(CHECKPOINTS),)`` rows (NaN
    when the run raised), the wall time and the error (``None``, or ``"Type: message"``).
    """
    f1 = be.measures.FScore()
    kwargs = sampler_kwargs(sampler, options)
    out = {"seed": [], "estimate": [], "lower": [], "upper": [], "seconds": [], "error": []}
    for seed in seeds:
        start = time.perf_counter()
        try:
            run = be.evaluate(
                pool, f1, truth, budget=BUDGET, sampler=sampler, batch_size=BATCH, prob=PROB,
                rng=seed, **kwargs,
            )  # fmt: skip
            at = run.history.sel(labels=list(CHECKPOINTS), output="f1")
            rows = [at[v].values.tolist() for v in ("estimate", "lower", "upper")]
            error = None
        except Exception as exc:  # a sampler that fails is reported, not fatal
            rows = [[float("nan")] * len(CHECKPOINTS)] * 3
            error = f"{type(exc).__name__}: {exc}"
        out["seconds"].append(time.perf_counter() - start)
        out["seed"].append(seed)
        for key, row in zip(("estimate", "lower", "upper"), rows, strict=True):
            out[key].append(row)
        out["error"].append(error)
    return out


def accuracy(pools, samplers, options, repeats, seed, client=None) -> dict:
    """Every (pool, sampler) over ``repeats[pool]`` seeds, on ``client`` or in this process."""
    results = {}
    for pool_name in pools:
        pool, truth = make_pool(pool_name)
        f1 = true_f1(pool, truth)
        data = client.scatter((pool, truth), broadcast=True) if client is not None else None
        seeds = list(range(seed, seed + repeats[pool_name]))
        chunks = [seeds[i : i + CHUNK_REPEATS] for i in range(0, len(seeds), CHUNK_REPEATS)]
        runs = {}
        for name in samplers:
            print(f"{pool_name} / {name}: {len(seeds)} runs ...", file=sys.stderr, flush=True)
            began = time.perf_counter()
            opts = options.get(name, {})
            if client is not None:
                futures = [
                    client.submit(_run_scattered, data, name, opts, c, pure=False) for c in chunks
                ]
                parts = client.gather(futures)
            else:
                parts = [run_repeats(pool, truth, name, opts, c) for c in chunks]
            raw = {k: [v for p in parts for v in p[k]] for k in parts[0]}
            wall = time.perf_counter() - began
            print(f"  {wall:.1f} s", file=sys.stderr, flush=True)
            runs[name] = {
                "options": {k: repr(v) for k, v in opts.items()},
                "wall_seconds": wall,
                "raw": raw,
                "summary": summarise(raw, f1),
            }
        results[pool_name] = {
            "items": pool.size,
            "positives": int(truth.sum()),
            "predicted_positives": int(pool.predictions.sum()),
            "true_positives": int((truth & (pool.predictions == 1)).sum()),
            "true_f1": f1,
            "issue_f1": ISSUE_F1[pool_name],
            "repeats": len(seeds),
            "seeds": [seeds[0], seeds[-1]],
            "samplers": runs,
        }
    return results


def _run_scattered(data, sampler, options, seeds):
    pool, truth = data
    return run_repeats(pool, truth, sampler, options, seeds)


def summarise(raw: dict, truth: float) -> list[dict]:
    """Per checkpoint: MSE, bias, undefined estimates and interval coverage."""
    failed = np.array([e is not None for e in raw["error"]])
    est, lower, upper = (
        np.asarray(raw[k], dtype=float)[~failed] for k in ("estimate", "lower", "upper")
    )
    out = []
    for j, labels in enumerate(CHECKPOINTS):
        defined = np.isfinite(est[:, j])
        err = est[defined, j] - truth
        n = int(defined.sum())
        bounded = defined & np.isfinite(lower[:, j]) & np.isfinite(upper[:, j])
        covered = (lower[bounded, j] <= truth) & (truth <= upper[bounded, j])
        width = upper[bounded, j] - lower[bounded, j]
        out.append(
            {
                "labels": labels,
                "runs": int(failed.size),
                "errors": int(failed.sum()),
                "defined": n,
                "undefined": int((~defined).sum()),
                "mse": _mean(err**2),
                "mse_se": _se(err**2),
                "bias": _mean(err),
                "bias_se": _se(err),
                "mse_undefined_as_zero": _mean((np.where(defined, est[:, j], 0.0) - truth) ** 2),
                "bounded": int(bounded.sum()),
                "coverage": _mean(covered.astype(float)),
                "coverage_se": _se(covered.astype(float)),
                "median_width": float(np.median(width)) if width.size else None,
            }
        )
    return out


def _mean(x: np.ndarray) -> float | None:
    return float(np.mean(x)) if x.size else None


def _se(x: np.ndarray) -> float | None:
    return float(np.std(x, ddof=1) / np.sqrt(x.size)) if x.size > 1 else None


# -- timing -------------------------------------------------------------------------------------
def full_runs(pool: be.Pool, truth: np.ndarray, repeats: int, seed: int) -> dict:
    """Median wall time of 2000-label runs of AIS and StaticIS, interleaved, after a warm-up."""
    f1 = be.measures.FScore()

    def one(name: str, rng: int) -> float:
        gc.collect()
        start = time.perf_counter()
        be.evaluate(pool, f1, truth, budget=BUDGET, sampler=name, batch_size=BATCH, rng=rng)
        return time.perf_counter() - start

    names = ("ais", "static_is")
    first = {name: one(name, seed) for name in names}
    times = {name: [] for name in names}
    for r in range(repeats):
        for name in names if r % 2 else names[::-1]:
            times[name].append(one(name, seed + r))
    out = {name: _spread(times[name]) | {"first_call": first[name]} for name in names}
    out["ratio"] = out["ais"]["median"] / out["static_is"]["median"]
    return out


def _spread(seconds: list[float]) -> dict:
    q1, median, q3 = np.quantile(seconds, [0.25, 0.5, 0.75])
    return {"runs": seconds, "median": float(median), "q1": float(q1), "q3": float(q3)}


class _Clock:
    """Accumulates the wall time spent inside a wrapped callable."""

    def __init__(self, fn):
        self.fn, self.seconds = fn, 0.0

    def __call__(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self.fn(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start


def stage_loop(sampler, truth: np.ndarray, stages: int) -> dict:
    """Drive ``stages`` stages of ``BATCH`` labels by hand, timing each part of each stage.

    ``tell`` includes the proposal update that completes the stage (``_adapt``, timed also on
    its own by shadowing the bound method); ``estimate`` is ``estimate()`` plus the 95%
    interval, what :func:`bayeval.evaluate` computes after every stage.
    """
    adapt = _Clock(sampler._adapt)
    sampler._adapt = adapt  # the instance attribute shadows the method called by _update
    parts = {"ask": [], "tell": [], "adapt": [], "estimate": []}
    for _ in range(stages):
        start = time.perf_counter()
        ids = sampler.ask(BATCH)
        asked = time.perf_counter()
        before = adapt.seconds
        sampler.tell(ids, truth[sampler.pool.positions(ids)])
        told = time.perf_counter()
        sampler.estimate().interval(PROB)
        done = time.perf_counter()
        parts["ask"].append(asked - start)
        parts["tell"].append(told - asked)
        parts["adapt"].append(adapt.seconds - before)
        parts["estimate"].append(done - told)
    parts["stage"] = [
        sum(p) for p in zip(parts["ask"], parts["tell"], parts["estimate"], strict=True)
    ]
    return parts


#: Parts of the AIS constructor, found in a cProfile by (file name, function name):
#: ``score_cells`` includes ``stratify`` and ``Cells.__init__``.
SETUP_PARTS = {
    "stratify": ("pool.py", "stratify"),
    "patterns": ("_target.py", "_build_patterns"),
    "cells": ("_cells.py", "__init__"),
    "score_cells": ("_cells.py", "score_cells"),
    "adapt": ("ais.py", "_adapt"),
}


def profile_call(fn, top: int = 15) -> dict:
    """Run ``fn()`` under cProfile: the cumulative time of each of ``SETUP_PARTS``, and the
    ``top`` functions by own time."""
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.runcall(fn)
    total = time.perf_counter() - start
    stats = pstats.Stats(profiler, stream=io.StringIO()).stats
    cumulative = {}
    for label, (file, func) in SETUP_PARTS.items():
        cumulative[label] = sum(
            v[3] for (f, _, name), v in stats.items() if f.endswith(file) and name == func
        )
    rows = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    own = [
        {
            "function": f"{_short(f)}:{line}({name})",
            "calls": int(v[1]),
            "own_seconds": float(v[2]),
            "cumulative_seconds": float(v[3]),
        }
        for (f, line, name), v in rows
    ]
    return {"profiled_seconds": total, "parts": cumulative, "top_own_time": own}


def _short(path: str) -> str:
    for marker in ("/bayeval/", "/site-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def _status() -> dict:
    """``VmRSS`` and ``VmHWM`` (peak) of this process, bytes."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return {k: int(fields[k].split()[0]) * 1024 for k in ("VmRSS", "VmHWM")}


def _reset_peak() -> bool:
    """Reset ``VmHWM`` to the current RSS (Linux ``clear_refs`` 5); whether it worked."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def setup_and_stages(pool: be.Pool, truth: np.ndarray, seed: int, stages: int) -> dict:
    """Construct AIS (timed, with memory), run ``stages`` timed stages, then profile a second
    construction to split the setup into its parts."""
    f1 = be.measures.FScore()
    gc.collect()
    before = _status()
    peak_reset = _reset_peak()
    start = time.perf_counter()
    sampler = be.sampling.AIS(pool, f1, rng=seed)
    setup = time.perf_counter() - start
    after = _status()
    held = {
        "pool scores": pool.scores.nbytes,
        "pool predictions": pool.predictions.nbytes,
        "loss patterns": sampler.target.patterns.nbytes,
        "strata ids": sampler.strata.ids.nbytes,
        "cell ids": sampler.cells.cell_of.nbytes,
        "cell order": sampler.cells.order.nbytes,
    }
    loop = stage_loop(sampler, truth, stages)
    del sampler
    gc.collect()
    profile = profile_call(lambda: be.sampling.AIS(pool, f1, rng=seed))
    return {
        "items": pool.size,
        "setup_seconds": setup,
        "rss_before": before["VmRSS"],
        "rss_after_setup": after["VmRSS"],
        "peak_rss_during_setup": after["VmHWM"] if peak_reset else None,
        "array_bytes": held,
        "stages": loop,
        "setup_profile": profile,
    }


def timing(repeats: int, big_size: int, stages: int, seed: int) -> dict:
    pool, truth = synthetic_pool()
    print("timing: full runs at 1e5 ...", file=sys.stderr, flush=True)
    runs = full_runs(pool, truth, repeats, seed)
    profile = profile_call(
        lambda: be.evaluate(
            pool,
            be.measures.FScore(),
            truth,
            budget=BUDGET,
            sampler="ais",
            batch_size=BATCH,
            rng=seed,
        ),  # fmt: skip
        top=20,
    )
    small = [setup_and_stages(pool, truth, seed + r, BUDGET // BATCH) for r in range(repeats)]
    del pool, truth
    gc.collect()
    print(f"timing: pool of {big_size:.0e} items ...", file=sys.stderr, flush=True)
    rss0 = _status()["VmRSS"]
    start = time.perf_counter()
    scores, truth = big_arrays(big_size)
    drawn = time.perf_counter()
    pool = be.Pool(scores, threshold=SYNTHETIC["threshold"])
    built = time.perf_counter()
    rss1 = _status()["VmRSS"]
    print(f"  drawn in {drawn - start:.1f} s; AIS ...", file=sys.stderr, flush=True)
    big = setup_and_stages(pool, truth, seed, stages)
    big |= {
        "draw_seconds": drawn - start,
        "pool_seconds": built - drawn,
        "rss_before_draw": rss0,
        "rss_after_pool": rss1,
        "positives": int(truth.sum()),
        "true_f1": true_f1(pool, truth),
    }
    return {
        "repeats": repeats,
        "full_runs": runs,
        "ais_run_profile": profile,
        "small": small,
        "big": big,
    }


# -- the run ------------------------------------------------------------------------------------


def _dask_client():
    """Two one-thread dask workers, with glibc's adaptive mmap threshold left on.

    dask's nannies set ``MALLOC_TRIM_THRESHOLD_=65536`` in their workers, which made them about
    35% slower on this machine (see ``coverage.py``); it is unset here.
    """
    import dask
    from distributed import Client

    unset = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
    with dask.config.set(unset):
        return Client(n_workers=2, threads_per_worker=1, dashboard_address=":0")


def run(args, options: dict) -> dict:
    versions = {"scipy": scipy.__version__, "pandas": pd.__version__, "xarray": xr.__version__}
    if args.dask:
        import distributed

        versions["distributed"] = distributed.__version__
    machine = machine_info(**versions)
    machine["git_status_bayeval"] = git_status()
    loads, stop = [], threading.Event()
    watcher = threading.Thread(target=sample_load, args=(loads, stop), daemon=True)
    watcher.start()
    began = time.perf_counter()
    report = {
        "benchmark": "active",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "settings": {
            "budget": BUDGET,
            "batch_size": BATCH,
            "prob": PROB,
            "checkpoints": list(CHECKPOINTS),
            "samplers_available": list(SAMPLERS),
            "samplers": args.samplers,
            "options": {k: {o: repr(v) for o, v in d.items()} for k, d in options.items()},
            "pools": args.pools,
            "repeats": args.repeats,
            "febrl_repeats": args.febrl_repeats,
            "seed": args.seed,
            "dask": args.dask,
            "synthetic": SYNTHETIC,
            "timing_repeats": args.timing_repeats,
            "big_size": args.big_size,
            "big_seed": BIG_SEED,
            "big_prevalence": BIG_PREVALENCE,
            "stages": args.stages,
        },
        "machine": machine,
        "peers": {k: [list(row) for row in v] for k, v in PEERS.items()},
    }
    if not args.timing_only:
        repeats = {"synthetic": args.repeats, "febrl": args.febrl_repeats}
        client = _dask_client() if args.dask else None
        try:
            report["accuracy"] = accuracy(
                args.pools, args.samplers, options, repeats, args.seed, client
            )
        finally:
            if client is not None:
                client.close()
    if not args.accuracy_only:
        report["timing"] = timing(args.timing_repeats, args.big_size, args.stages, args.seed)
    stop.set()
    watcher.join()
    machine["loadavg_end"] = list(os.getloadavg())
    machine["loadavg_1min_during"] = {"mean": float(np.mean(loads)), "max": float(np.max(loads))}
    report["total_seconds"] = time.perf_counter() - began
    return report


def _jsonable(value):
    """Non-finite floats as ``None`` (strict JSON), recursively."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


# -- the report ---------------------------------------------------------------------------------


def _sci(x: float | None, digits: int = 2) -> str:
    """``0.0069`` as ``6.9e-3``, the issue's style."""
    if x is None or not np.isfinite(x):
        return "n/a"
    if abs(x) < 1e-15:  # exact zero, or the rounding noise of a spread of identical values
        return "0"
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _n(n: int) -> str:
    """``100000000`` as ``1e8``."""
    return f"{n:.0e}".replace("e+0", "e").replace("e+", "e")


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f}" if seconds < 10 else f"{seconds * 1e3:.0f}"


def _mib(nbytes: float) -> str:
    return f"{nbytes / 2**20:,.0f}"


def format_accuracy(acc: dict) -> list[str]:
    out = []
    labels = [f"{c} labels" for c in CHECKPOINTS]
    for pool_name, res in acc.items():
        peers = {key: (label, mse, n) for key, label, mse, n in PEERS.get(pool_name, [])}
        out.append(
            f"\n### {pool_name}: M = {res['items']:,}, {res['positives']} positives, "
            f"{res['predicted_positives']} predicted ({res['true_positives']} true): true F1 "
            f"{res['true_f1']:.4f} (the issue: {res['issue_f1']}); {res['repeats']} repeats "
            f"(seeds {res['seeds'][0]}..{res['seeds'][1]})\n"
        )
        out.append(
            "MSE of the F1 estimate ± Monte Carlo standard error, over the runs with a defined "
            "estimate (see the next table for how many); peers as quoted in the issue.\n"
        )
        rows = []
        for name, r in res["samplers"].items():
            summary = r["summary"]
            opts = ", ".join(f"{k}={v}" for k, v in r["options"].items())
            rows.append(
                [name, "bayeval" + (f" ({opts})" if opts else "")]
                + [f"{_sci(c['mse'])} ± {_sci(c['mse_se'], 1)}" for c in summary]
            )
            if name in peers:
                label, mse, n = peers[name]
                rows.append(["", f"{label}, {n} runs"] + [_sci(m) for m in mse])
                rows.append(
                    ["", "ratio bayeval / peer"]
                    + [
                        f"{c['mse'] / m:.2f}x" if c["mse"] is not None else "n/a"
                        for c, m in zip(summary, mse, strict=True)
                    ]
                )
        for name, (label, mse, n) in peers.items():
            if name not in res["samplers"]:
                rows.append([f"{name} (not run)", f"{label}, {n} runs"] + [_sci(m) for m in mse])
        out.append(markdown_table(["sampler", "MSE from", *labels], rows))
        out.append(
            "\nBias (mean estimate - true F1) ± se and MSE over the defined runs; runs with an "
            "undefined (NaN) estimate, and failed runs; coverage of the 95% confidence interval "
            "± se over the runs with finite bounds; median interval width.\n"
        )
        rows = []
        for name, r in res["samplers"].items():
            s = r["summary"]
            rows.append(
                [name, "bias"] + [f"{_signed(c['bias'])} ± {_sci(c['bias_se'], 1)}" for c in s]
            )
            rows.append(
                ["", "undefined / runs"]
                + [
                    f"{c['undefined']}/{c['runs']}"
                    + (f" ({c['errors']} failed)" if c["errors"] else "")
                    for c in s
                ]
            )
            rows.append(["", "MSE, NaN read as 0"] + [_sci(c["mse_undefined_as_zero"]) for c in s])
            rows.append(
                ["", "coverage (runs)"]
                + [
                    f"{c['coverage']:.2f} ± {c['coverage_se']:.2f} ({c['bounded']})"
                    if c["coverage"] is not None and c["coverage_se"] is not None
                    else "n/a"
                    for c in s
                ]
            )
            rows.append(["", "median width"] + [_width(c["median_width"]) for c in s])
            errors = sorted({e for e in r["raw"]["error"] if e})
            for e in errors[:3]:
                rows.append(["", "error", e[:120], "", "", ""])
        out.append(markdown_table(["sampler", "quantity", *labels], rows))
    out.append("\nSeconds per run (median; wall time of the whole accuracy block in brackets)\n")
    names = list(dict.fromkeys(n for res in acc.values() for n in res["samplers"]))
    rows = []
    for name in names:
        cells = []
        for res in acc.values():
            r = res["samplers"].get(name)
            cells.append(
                f"{np.median(r['raw']['seconds']):.3f} ({r['wall_seconds']:.0f} s)" if r else "-"
            )
        rows.append([name, *cells])
    out.append(markdown_table(["sampler", *acc], rows))
    return out


def _signed(x: float | None) -> str:
    if x is None:
        return "n/a"
    return ("+" if x >= 0 else "") + _sci(x)


def _width(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def format_timing(t: dict) -> list[str]:
    out = []
    runs = t["full_runs"]
    out.append(
        f"\n### (a) Full 2000-label runs (batches of 50) at M = 100,000: median of {t['repeats']} "
        "interleaved runs after one warm-up\n"
    )
    rows = []
    for name in ("ais", "static_is"):
        r = runs[name]
        rows.append(
            [
                name,
                f"{r['median']:.3f}",
                f"{r['q1']:.3f}-{r['q3']:.3f}",
                f"{r['first_call']:.3f}",
                f"{r['median'] / runs['static_is']['median']:.1f}x",
            ]
        )
    out.append(
        markdown_table(["sampler", "median s", "quartiles s", "first run s", "vs static_is"], rows)
    )
    met = "met" if runs["ais"]["median"] <= AIS_TARGET_SECONDS else "NOT met"
    low, high = PEER_STATIC_SECONDS
    out.append(
        f"\nTarget AIS <= {AIS_TARGET_SECONDS:g} s: {met}. activeeval's static IS took "
        f"{low}-{high} s (issue): AIS here is {runs['ais']['median'] / high:.2f}-"
        f"{runs['ais']['median'] / low:.2f}x that."
    )

    small = t["small"]
    parts = ("ask", "tell", "adapt", "estimate")
    totals = {p: float(np.median([sum(s["stages"][p]) for s in small])) for p in parts}
    setup = float(np.median([s["setup_seconds"] for s in small]))
    whole = setup + totals["ask"] + totals["tell"] + totals["estimate"]
    out.append(
        f"\nWhere an AIS run's time goes at M = 1e5 (the loop driven by hand, median over "
        f"{len(small)} runs of 40 stages):\n"
    )
    rows = [
        ["construction (strata, cells, stage-0 proposal)", f"{setup:.3f}", f"{setup / whole:.0%}"]
    ]
    for p, label in (
        ("ask", "ask (draws)"),
        ("tell", "tell"),
        ("adapt", "  of which proposal update (EM + Gibbs)"),
        ("estimate", "estimate + interval"),
    ):
        rows.append([label, f"{totals[p]:.3f}", f"{totals[p] / whole:.0%}"])
    rows.append(["total", f"{whole:.3f}", "100%"])
    out.append(markdown_table(["part", "seconds", "share"], rows))
    prof = t["ais_run_profile"]
    out.append(
        "\ncProfile of one `evaluate(..., sampler='ais')` run at 1e5 "
        f"({prof['profiled_seconds']:.2f} s under the profiler), functions by own time:\n"
    )
    rows = [
        [
            f["function"],
            str(f["calls"]),
            f"{f['own_seconds']:.3f}",
            f"{f['cumulative_seconds']:.3f}",
        ]
        for f in prof["top_own_time"][:12]
    ]
    out.append(markdown_table(["function", "calls", "own s", "cumulative s"], rows))

    big = t["big"]
    n = big["items"]
    out.append(
        f"\n### (b) AIS at M = {_n(n)} ({big['positives']:,} positives, true F1 "
        f"{big['true_f1']:.4f}) against M = 1e5\n"
    )
    prof_small = {
        k: float(np.median([s["setup_profile"]["parts"][k] for s in small])) for k in SETUP_PARTS
    }
    profiled = big["setup_profile"]["profiled_seconds"]
    profiled_small = float(np.median([s["setup_profile"]["profiled_seconds"] for s in small]))
    rows = [
        ["draw scores and labels (chunks of 1e7)", "-", f"{big['draw_seconds']:.2f}", "-"],
        ["be.Pool(scores)", "-", f"{big['pool_seconds']:.2f}", "-"],
    ]
    timed = [
        ("AIS constructor, timed", setup, big["setup_seconds"]),
        ("AIS constructor, profiled (a second one)", profiled_small, profiled),
        *_setup_parts(prof_small, profiled_small, big["setup_profile"]["parts"], profiled),
    ]
    for i, (label, a, b) in enumerate(timed):
        if min(a, b) < 0:  # a part computed by subtraction came out negative: the profile's
            # cumulative times were inconsistent (seen once at 1e8), so the split is not shown
            rows.append([("  " if i > 1 else "") + label, "n/a", "n/a", "-"])
            continue
        ratio = _ratio(b / a) if a > 1e-4 else "-"
        rows.append([("  " if i > 1 else "") + label, f"{a:.3f}", f"{b:.2f}", ratio])
    out.append(markdown_table(["setup phase (s)", "1e5", _n(n), "ratio"], rows))
    out.append(
        "\n(Parts from cProfile; the first construction in a process also pays the page faults "
        "of fresh memory.)\n"
    )
    held = big["array_bytes"]
    rows = [[k, _mib(v)] for k, v in held.items()]
    rows.append(["total of these arrays", _mib(sum(held.values()))])
    rows.append(
        [
            "RSS after drawing + Pool (incl. labels)",
            _mib(big["rss_after_pool"] - big["rss_before_draw"]),
        ]
    )
    rows.append(
        ["RSS added by the AIS constructor", _mib(big["rss_after_setup"] - big["rss_before"])]
    )
    if big["peak_rss_during_setup"] is not None:
        rows.append(
            [
                "peak RSS during construction, above the start",
                _mib(big["peak_rss_during_setup"] - big["rss_before"]),
            ]
        )
    out.append(markdown_table([f"memory at {_n(n)}", "MiB"], rows))
    stages_small = {p: np.concatenate([s["stages"][p] for s in small]) for p in (*parts, "stage")}
    stages_big = {p: np.asarray(big["stages"][p]) for p in (*parts, "stage")}
    out.append(
        f"\nPer stage of 50 labels, ms: median over the {stages_big['stage'].size} stages at "
        f"{_n(n)} and over {len(small)} x 40 stages at 1e5 (max in brackets)\n"
    )
    rows = []
    for p, label in (
        ("ask", "ask"),
        ("tell", "tell"),
        ("adapt", "  of which proposal update"),
        ("estimate", "estimate + interval"),
        ("stage", "stage"),
    ):
        a, b = np.median(stages_small[p]), np.median(stages_big[p])
        rows.append(
            [
                label,
                f"{_ms(a)} ({_ms(stages_small[p].max())})",
                f"{_ms(b)} ({_ms(stages_big[p].max())})",
                _ratio(b / a),
            ]
        )
    out.append(markdown_table(["part", "1e5", _n(n), "ratio"], rows))
    return out


def _setup_parts(small: dict, small_total: float, big: dict, big_total: float):
    """``(label, 1e5 s, large s)`` for the constructor's disjoint parts and the rest."""
    labels = (
        "strata (Pool.stratify, csf)",
        "loss patterns (Target)",
        "cells (Cells: cell ids, stable sort)",
        "prior response per cell (score_cells)",
        "stage-0 proposal (_adapt)",
        "the rest",
    )
    columns = []
    for parts, total in ((small, small_total), (big, big_total)):
        prior = parts["score_cells"] - parts["stratify"] - parts["cells"]
        split = [parts["stratify"], parts["patterns"], parts["cells"], prior, parts["adapt"]]
        columns.append([*split, total - sum(split)])
    return list(zip(labels, *columns, strict=True))


def _ratio(x: float) -> str:
    return f"{x:,.0f}x" if x >= 10 else f"{x:.1f}x"


def format_report(report: dict) -> str:
    m = report["machine"]
    out = [
        f"`{report['command']}` at {m['date']}, commit {m['git_commit']}"
        + (
            f" (uncommitted under bayeval/: {len(m['git_status_bayeval'])})"
            if m.get("git_status_bayeval")
            else ""
        ),
        f"Machine: {m['platform']}, {m['cpu_model']}, {m['cpu_count']} CPUs; Python {m['python']}, "
        f"numpy {m['numpy']}, scipy {m['scipy']}, pandas {m['pandas']}, xarray {m['xarray']}, "
        f"bayeval {m['bayeval']}"
        + (f", distributed {m['distributed']}" if "distributed" in m else ""),
        f"Load (1 min): {m['loadavg_start'][0]:.2f} at the start, {m['loadavg_end'][0]:.2f} at the "
        f"end, mean {m['loadavg_1min_during']['mean']:.2f} (max "
        f"{m['loadavg_1min_during']['max']:.2f}); total {report['total_seconds']:.0f} s",
    ]
    if "accuracy" in report:
        out.append("\n## Accuracy")
        out += format_accuracy(report["accuracy"])
    if "timing" in report:
        out.append("\n## Timing")
        out += format_timing(report["timing"])
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samplers", nargs="+", choices=SAMPLERS, default=list(SAMPLERS))
    parser.add_argument("--pools", nargs="+", choices=POOLS, default=list(POOLS))
    parser.add_argument("--repeats", type=int, default=100, help="runs per sampler (default 100)")
    parser.add_argument(
        "--febrl-repeats", type=int, help="runs per sampler on febrl (default: --repeats)"
    )
    parser.add_argument(
        "--seed", type=int, default=BASE_SEED, help="run r uses seed + r (default 0)"
    )
    parser.add_argument("--dask", action="store_true", help="accuracy runs on 2 dask workers")
    for name in SAMPLERS:
        parser.add_argument(
            f"--{name.replace('_', '-')}-option",
            dest=f"{name}_option",
            action="append",
            metavar="KEY=VALUE",
            help=f"option of the {name} sampler (repeatable)"
            + (
                "; depth, branching, prior_strength, smoothing go to its DirichletTree"
                if name == "ais"
                else ""
            ),
        )
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--accuracy-only", action="store_true")
    only.add_argument("--timing-only", action="store_true")
    parser.add_argument("--timing-repeats", type=int, default=7, help="timed runs (default 7)")
    parser.add_argument("--big-size", type=int, default=10**8, help="items of the large pool")
    parser.add_argument(
        "--stages", type=int, default=BUDGET // BATCH, help="stages timed at --big-size"
    )
    parser.add_argument(
        "--quick", action="store_true",
        help="smoke test: 5 repeats, 2 timed runs, a pool of 1e6; writes only with --output",
    )  # fmt: skip
    parser.add_argument("--output", type=Path, help=f"JSON file (default {DEFAULT_OUTPUT})")
    parser.add_argument("--show", type=Path, metavar="JSON", help="print a saved run and exit")
    args = parser.parse_args(argv)
    if args.show is not None:
        print(format_report(json.loads(args.show.read_text())))
        return
    if args.quick:
        args.repeats, args.timing_repeats, args.big_size = 5, 2, 10**6
    if args.febrl_repeats is None or args.quick:
        args.febrl_repeats = args.repeats
    if min(args.repeats, args.febrl_repeats, args.timing_repeats, args.stages) < 1:
        parser.error("--repeats, --febrl-repeats, --timing-repeats and --stages must be >= 1")
    try:
        options = {n: parse_options(getattr(args, f"{n}_option")) for n in SAMPLERS}
    except ValueError as exc:
        parser.error(str(exc))
    options = {n: o for n, o in options.items() if o}
    report = run(args, options)
    print(format_report(report))
    output = args.output if args.output is not None or args.quick else DEFAULT_OUTPUT
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(_jsonable(report), indent=1) + "\n")
        print(f"\nwrote {output}")


if __name__ == "__main__":
    main()
