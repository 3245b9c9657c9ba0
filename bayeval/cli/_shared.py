"""What several commands share: option errors, ``--pool``, ``--sampler``, ``--measure``, JSON."""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Any

import typer

from bayeval.datasets.files import ScoredItems, febrl_items, read_scored_items
from bayeval.measures.registry import NAMES, by_name

__all__ = [
    "MeasureName",
    "bad",
    "error",
    "load_source",
    "measure_name",
    "number",
    "sampler_class",
    "save_png",
]

MeasureName = StrEnum("MeasureName", [(name, name) for name in NAMES])  # --measure


def bad(message: str, option: str) -> typer.BadParameter:
    """Return the usage error of ``option`` (exit code 2, the option named)."""
    return typer.BadParameter(message, param_hint=f"'{option}'")


def error(message: Any, code: int = 1) -> typer.Exit:
    """Print ``error: message`` on stderr and return the ``Exit`` to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=code)


def load_source(spec: str, threshold: float = 0.5, judge: str | None = None) -> ScoredItems:
    """Load ``--pool``: ``"febrl"`` (:func:`~bayeval.datasets.files.febrl_items`) or a file.

    ``judge`` is ``--judge-column``. See :func:`bayeval.datasets.files.read_scored_items`; its
    errors become ``typer.BadParameter`` naming ``--pool``.
    """
    if spec == "febrl":
        if judge is not None:
            raise bad("the bundled FEBRL pool has no judge's column.", "--judge-column")
        return febrl_items()
    try:
        return read_scored_items(spec, threshold, judge)
    except ValueError as err:
        raise bad(str(err), "--pool") from None


def sampler_class(name: str):
    """Return the sampler class of a ``--sampler`` value (a name of ``SAMPLERS``)."""
    from bayeval.sampling.run import SAMPLERS
    from bayeval.sampling.run import sampler_class as lookup

    if name not in SAMPLERS:
        raise bad(f"must be one of {', '.join(SAMPLERS)}; got {name!r}.", "--sampler")
    return lookup(name)


def measure_name(measure: Any) -> str:
    """Return the ``--measure`` name of a measure, or its repr when it has none."""
    for name in NAMES:
        if by_name(name) == measure:
            return name
    return repr(measure)


def number(value: Any) -> float | None:
    """Return ``value`` as a float for JSON; NaN (no estimate) and infinities as None."""
    value = float(value)
    return value if math.isfinite(value) else None


def save_png(axes: Any, path: Any) -> None:
    """Write the figure that holds ``axes`` (a sequence of Axes) as a PNG and close it."""
    import matplotlib.pyplot as plt

    figure = axes[0].figure
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)
