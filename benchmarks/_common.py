"""What every benchmark records beside its numbers: the machine, and markdown tables."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
import threading
from pathlib import Path

import numpy as np

import bayeval as be

REPO = Path(__file__).resolve().parent.parent


def machine_info(**versions: str) -> dict:
    """Platform, CPUs, versions (numpy, bayeval, and any given), git commit, load and date."""
    cpu_model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_model": cpu_model,
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "python": platform.python_version(),
        "numpy": np.__version__,
        **versions,
        "bayeval": be.__version__,
        "git_commit": commit,
        "loadavg_start": list(os.getloadavg()),
    }


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """Format ``rows`` under ``header`` as a markdown table with aligned columns."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = [
        "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) + " |"
        for r in rows
    ]
    return "\n".join([line, rule, *body])


def git_status() -> list[str] | None:
    """Uncommitted changes under ``bayeval/`` (the commit alone does not say what ran)."""
    try:
        out = subprocess.run(
            ["git", "status", "--porcelain", "--", "bayeval"],
            cwd=REPO, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None
    return [line.strip() for line in out.splitlines()]


def sample_load(loads: list, stop: threading.Event, every: float = 10.0) -> None:
    """Append the 1-minute load average every ``every`` seconds until ``stop`` is set."""
    while True:
        loads.append(os.getloadavg()[0])
        if stop.wait(every):
            return
