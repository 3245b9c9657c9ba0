"""What several commands share: option errors, ``--pool``, ``--sampler``, ``--measure``, JSON."""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Annotated, Any

import typer

from bayeval.datasets.files import ScoredItems, febrl_items, read_scored_items
from bayeval.measures.registry import MULTICLASS_NAMES, NAMES, by_name

__all__ = [
    "MeasureName",
    "bad",
    "error",
    "classes_option",
    "load_source",
    "measure_name",
    "number",
    "run_measure",
    "sampler_class",
    "save_png",
]

# --measure: the binary measures' names, then the multiclass ones (with --classes)
MeasureName = StrEnum(
    "MeasureName", [(name, name) for name in dict.fromkeys([*NAMES, *MULTICLASS_NAMES])]
)

#: ``--unblind`` of the commands that show items to annotators or write them out for them.
UnblindOption = Annotated[
    bool,
    typer.Option(
        "--unblind",
        help="Show the annotators the system's score and prediction (and, in an export, the "
        "stage, stratum and selection probability). Default: blind, the item's own fields "
        "only, so the system cannot sway a label.",
    ),
]

CLASSES_HELP = (
    "A multiclass pool: its class names, separated by commas (e.g. cat,dog,bird). The "
    "prediction column (required) and the label column then hold class names or indices, and "
    "score is how sure the system is; measures accuracy, balanced_accuracy, macro_f1 or "
    "micro_f1, sampler passive or stratified."
)


def bad(message: str, option: str) -> typer.BadParameter:
    """Return the usage error of ``option`` (exit code 2, the option named)."""
    return typer.BadParameter(message, param_hint=f"'{option}'")


def error(message: Any, code: int = 1) -> typer.Exit:
    """Print ``error: message`` on stderr and return the ``Exit`` to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=code)


def load_source(
    spec: str, threshold: float = 0.5, judge: str | None = None, classes: Any = None
) -> ScoredItems:
    """Load ``--pool``: ``"febrl"`` (:func:`~bayeval.datasets.files.febrl_items`) or a file.

    ``judge`` is ``--judge-column`` and ``classes`` the names of ``--classes``. See
    :func:`bayeval.datasets.files.read_scored_items`; its errors become
    ``typer.BadParameter`` naming ``--pool``.
    """
    if spec == "febrl":
        if judge is not None:
            raise bad("the bundled FEBRL pool has no judge's column.", "--judge-column")
        if classes is not None:
            raise bad("the bundled FEBRL pool is binary (match or not).", "--classes")
        return febrl_items()
    try:
        return read_scored_items(spec, threshold, judge, classes)
    except ValueError as err:
        raise bad(str(err), "--pool") from None


def classes_option(text: str | None) -> tuple[str, ...] | None:
    """Parse ``--classes`` (names separated by commas), or raise naming it."""
    from bayeval._validation import check_class_names

    if text is None:
        return None
    try:
        return check_class_names([name.strip() for name in text.split(",")])
    except ValueError as err:
        raise bad(str(err).replace("`classes`", "--classes"), "--classes") from None


def run_measure(name: str | None, classes: tuple[str, ...] | None):
    """Return the measure of ``--measure`` (default f1, or macro_f1 with ``--classes``)."""
    if classes is None:
        name = name or "f1"
        if name in MULTICLASS_NAMES and name not in NAMES:
            raise bad(f"{name} needs a multiclass pool (--classes).", "--measure")
        return by_name(name)
    name = name or "macro_f1"
    if name not in MULTICLASS_NAMES:
        raise bad(
            f"a multiclass pool takes {', '.join(MULTICLASS_NAMES)}; got {name}.", "--measure"
        )
    return by_name(name, n_classes=len(classes))


def sampler_class(name: str):
    """Return the sampler class of a ``--sampler`` value (a name of ``SAMPLERS``)."""
    from bayeval.sampling.run import SAMPLERS
    from bayeval.sampling.run import sampler_class as lookup

    if name not in SAMPLERS:
        raise bad(f"must be one of {', '.join(SAMPLERS)}; got {name!r}.", "--sampler")
    return lookup(name)


def measure_name(measure: Any) -> str:
    """Return the ``--measure`` name of a measure, or its repr when it has none."""
    if getattr(measure, "label_type", None) == "multiclass":
        return measure.name
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
