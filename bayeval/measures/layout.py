"""Labelled dims for the outputs of ``G``: ``system``, ``measure`` and ``threshold``.

A sampler estimates one vector ``G`` whose entries are named ``[system/]measure[@threshold]``
(:class:`bayeval.measures.target.Target`). Results and posteriors label them by dims instead:
``system`` (pools of several systems), ``measure`` and ``threshold`` (precision-recall curves),
so that ``.sel(system="a", threshold=0.5)`` works and ArviZ can facet by them. In a posterior
each measure is its own variable (``f1``, ``precision``, ...), over ``chain``, ``draw`` and the
other dims, as ArviZ expects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import xarray as xr

__all__ = [
    "flat_draws",
    "format_threshold",
    "label_outputs",
    "measure_variables",
    "output_layout",
]


def format_threshold(t: float) -> str:
    """Write a threshold as in output names: the shortest text that round-trips (``0.5``, ``1``).

    Examples
    --------
    >>> format_threshold(0.5), format_threshold(1.0), format_threshold(0.1 + 0.2)
    ('0.5', '1', '0.30000000000000004')
    """
    text = repr(float(t))  # distinct thresholds get distinct names
    return text[:-2] if text.endswith(".0") else text


def output_layout(outputs: tuple[str, ...]) -> tuple[tuple[str, ...], dict, tuple[int, ...]]:
    """Dims, coordinates and shape of outputs named ``[system/]measure[@threshold]``.

    Outputs are system-major, then measure, then threshold (the order of
    :class:`~bayeval.measures.target.Target`), so reshaping an ``(m,)`` array to the returned
    shape labels it.

    Examples
    --------
    >>> output_layout(("f1",))
    (('measure',), {'measure': ['f1']}, (1,))
    >>> dims, coords, shape = output_layout(
    ...     ("a/precision@0.5", "a/recall@0.5", "b/precision@0.5", "b/recall@0.5"))
    >>> dims, coords["threshold"], shape
    (('system', 'measure', 'threshold'), [0.5], (2, 2, 1))
    """
    parsed = []
    for name in outputs:
        system, _, rest = name.rpartition("/")
        measure, _, threshold = rest.partition("@")
        parsed.append((system, measure, threshold))
    levels = [list(dict.fromkeys(p[i] for p in parsed)) for i in range(3)]
    grid = [(s, m, t) for s in levels[0] for m in levels[1] for t in levels[2]]
    if grid != parsed:
        raise ValueError(f"`outputs` {outputs!r} do not form a system x measure x threshold grid.")
    dims, coords, shape = [], {}, []
    for dim, values in zip(("system", "measure", "threshold"), levels, strict=True):
        if dim == "measure" or values != [""]:
            dims.append(dim)
            coords[dim] = [float(v) for v in values] if dim == "threshold" else values
            shape.append(len(values))
    return tuple(dims), coords, tuple(shape)


def measure_variables(draws: np.ndarray, outputs: tuple[str, ...]) -> tuple[dict, dict]:
    """One posterior variable per measure from draws ``(chain, draw, m)`` of ``G``.

    Returns
    -------
    variables : dict
        ``{measure: (dims, values)}`` with dims ``chain, draw`` and ``system``/``threshold``
        where the outputs have them, ready for ``xarray.Dataset``.
    coords : dict
        The coordinates of ``system`` and ``threshold``.

    Examples
    --------
    >>> draws = np.arange(8.0).reshape(1, 2, 4)
    >>> variables, coords = measure_variables(
    ...     draws, ("precision@0.2", "precision@0.6", "recall@0.2", "recall@0.6"))
    >>> variables["recall"][0], variables["recall"][1].tolist(), coords
    (('chain', 'draw', 'threshold'), [[[2.0, 3.0], [6.0, 7.0]]], {'threshold': [0.2, 0.6]})
    """
    dims, coords, shape = output_layout(outputs)
    chains, per_chain = draws.shape[:2]
    values = np.asarray(draws, dtype=float).reshape(chains, per_chain, *shape)
    axis = 2 + dims.index("measure")
    other = tuple(d for d in dims if d != "measure")
    variables = {
        name: (("chain", "draw", *other), np.take(values, i, axis=axis))
        for i, name in enumerate(coords["measure"])
    }
    return variables, {d: coords[d] for d in other}


def flat_draws(posterior: xr.Dataset, outputs: tuple[str, ...]) -> np.ndarray:
    """``(draws, m)`` draws of ``G`` in the order of ``outputs``: :func:`measure_variables` undone.

    Examples
    --------
    >>> import xarray as xr
    >>> outputs = ("a/f1", "b/f1")
    >>> variables, coords = measure_variables(np.arange(4.0).reshape(1, 2, 2), outputs)
    >>> flat_draws(xr.Dataset(variables, coords=coords), outputs).tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    """
    dims, coords, _ = output_layout(outputs)
    other = [d for d in dims if d != "measure"]
    stacked = np.stack(
        [posterior[name].transpose("chain", "draw", *other).values for name in coords["measure"]],
        axis=2 + dims.index("measure"),
    )
    return stacked.reshape(-1, len(outputs))


def label_outputs(data, dim: str = "output"):
    """Replace the dim ``dim`` of output names by the dims ``system``, ``measure``, ``threshold``.

    Unlike :func:`output_layout` the outputs may come in any order and need not fill a grid
    (entries missing from it are NaN); each new dim keeps the order of first appearance.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataArray
        Values along a dim of output names, ``[system/]measure[@threshold]``.
    dim : str, default "output"
        Name of the dim of output names in ``data``.

    Examples
    --------
    >>> import xarray as xr
    >>> history = xr.DataArray([[0.5, 0.7, 0.2]], dims=("labels", "output"),
    ...                        coords={"output": ["f1", "precision", "recall"]})
    >>> label_outputs(history).sel(measure="precision").values.tolist()
    [0.7]
    """
    import pandas as pd
    import xarray as xr

    parsed = []
    for name in data[dim].values.tolist():
        system, _, rest = str(name).rpartition("/")
        measure, _, threshold = rest.partition("@")
        parsed.append((system, measure, float(threshold) if threshold else np.nan))
    columns = pd.DataFrame(parsed, columns=["system", "measure", "threshold"])
    keep = ["measure"]
    if (columns["system"] != "").any():
        keep.insert(0, "system")
    if columns["threshold"].notna().any():
        keep.append("threshold")
    index = pd.MultiIndex.from_frame(columns[keep])
    labelled = data.assign_coords(xr.Coordinates.from_pandas_multiindex(index, dim)).unstack(dim)
    order = {name: list(dict.fromkeys(columns[name])) for name in keep}
    return labelled.reindex(order).transpose(*[d for d in data.dims if d != dim], *keep)
