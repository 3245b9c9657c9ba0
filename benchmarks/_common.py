"""What every benchmark records beside its numbers: the machine, and markdown tables."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
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
