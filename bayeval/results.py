"""One protocol for every result: estimate, interval, summary, posterior, DataTree, netCDF.

Every result bayeval returns answers the same questions in the same words:

- ``.estimate``: the point estimate of the default basis;
- ``.interval(prob=0.95, kind="eti", basis=None)``: labelled bounds in ArviZ's layout, a
  ``ci_bound`` dim with coordinates ``lower`` and ``upper`` and the attributes ``ci_prob``,
  ``ci_kind`` and ``basis``;
- ``.summary()``: a pandas table whose columns are :data:`SUMMARY_COLUMNS`, one row per
  labelled entry and basis;
- ``.posterior``: an ``xarray.DataTree`` of posterior draws, or :class:`NoPosteriorError`
  (an ``AttributeError``) saying what to use instead;
- ``.to_datatree()``, ``.to_netcdf(path)`` and :func:`load`, which round-trip the result with
  its posterior; results also pickle;
- ``.plot()``: the estimate and interval of every basis.

``kind`` is the interval's shape only: ``"eti"`` (equal-tailed), ``"hdi"`` (highest density,
for results with draws or a posterior distribution), ``"lower"`` or ``"upper"`` (one-sided: the
other end is the measure's bound). Which inference the interval comes from is ``basis``:
``"posterior"`` (a model of the labels) or ``"design"`` (the sampling design alone).

Examples
--------
>>> import numpy as np, xarray as xr
>>> draws = xr.DataArray(np.random.default_rng(0).beta(8, 2, size=(4, 1000)),
...                      dims=("chain", "draw"))
>>> ci = draws_interval(draws, 0.9, "eti")
>>> ci.dims, ci.attrs["ci_prob"], ci.attrs["ci_kind"]
(('ci_bound',), 0.9, 'eti')
>>> [round(float(v), 2) for v in ci]
[0.57, 0.96]
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from bayeval._validation import check_choice, check_prob, plain
from bayeval._version import __version__

if TYPE_CHECKING:
    import pandas as pd
    import xarray as xr

__all__ = [
    "BASES",
    "CI_PROB",
    "KINDS",
    "SUMMARY_COLUMNS",
    "NoPosteriorError",
    "Result",
    "bounds_array",
    "dataclass_to_dataset",
    "dataset_to_dataclass",
    "draws_interval",
    "load",
    "resolve_kind",
]

#: The default probability of every interval.
CI_PROB = 0.95
#: Interval shapes.
KINDS = ("eti", "hdi", "lower", "upper")
#: Where an interval comes from: a model of the labels, or the sampling design alone.
BASES = ("posterior", "design")
#: The columns of every ``summary()``, in this order.
SUMMARY_COLUMNS = ("estimate", "lower", "upper", "ci_prob", "ci_kind")

# Spellings of wave 1, kept for one release: old kind -> (new kind, basis it implied).
_DEPRECATED_KINDS = {
    "equal-tailed": ("eti", None),
    "credible": ("eti", "posterior"),
    "confidence": ("eti", "design"),
}
# Root attribute naming the result type in a DataTree; `load` rebuilds from it.
RESULT_TYPE_ATTR = "bayeval_result"
_RESULT_TYPES: dict[str, type[Result]] = {}


class NoPosteriorError(AttributeError):
    """A result without posterior draws was asked for its ``posterior``.

    An ``AttributeError``, so ``hasattr(result, "posterior")`` is ``False`` for such results.
    """


def resolve_kind(kind: Any, basis: Any, bases: Sequence[str]) -> tuple[str, str]:
    """Validate ``kind`` and ``basis``; read wave 1's spellings with a ``DeprecationWarning``.

    Parameters
    ----------
    kind : {"eti", "hdi", "lower", "upper"}
        ``"equal-tailed"`` (now ``"eti"``), ``"credible"`` (now ``kind="eti",
        basis="posterior"``) and ``"confidence"`` (now ``kind="eti", basis="design"``) still
        work for one release.
    basis : str or None
        One of ``bases``; ``None`` is the first (the result's default).
    bases : sequence of str
        The bases the result has.

    Returns
    -------
    kind, basis : str

    Examples
    --------
    >>> resolve_kind("hdi", None, ("posterior", "design"))
    ('hdi', 'posterior')
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     resolve_kind("confidence", None, ("posterior", "design"))
    ('eti', 'design')
    >>> print(caught[0].message)
    kind='confidence' is deprecated: write kind='eti', basis='design'.
    """
    if isinstance(kind, str) and kind in _DEPRECATED_KINDS:
        new_kind, implied = _DEPRECATED_KINDS[kind]
        if implied is not None and basis is not None and basis != implied:
            raise ValueError(
                f"`kind`={kind!r} means basis={implied!r}, which contradicts `basis`={basis!r}; "
                f"write kind={new_kind!r}, basis={basis!r}."
            )
        spelled = f"kind={new_kind!r}" + (f", basis={implied!r}" if implied else "")
        warnings.warn(
            f"kind={kind!r} is deprecated: write {spelled}.", DeprecationWarning, stacklevel=3
        )
        kind, basis = new_kind, basis if implied is None else implied
    kind = check_choice(kind, KINDS, "kind")
    basis = bases[0] if basis is None else basis
    if basis not in bases:
        allowed = ", ".join(repr(b) for b in bases)
        if basis in BASES:
            raise ValueError(f"`basis` must be {allowed} for this result; got {basis!r}.")
        check_choice(basis, BASES, "basis")
    return kind, basis


def bounds_array(
    lower: Any,
    upper: Any,
    *,
    prob: float,
    kind: str,
    basis: str,
    dims: Sequence[str] = (),
    coords: dict | None = None,
) -> xr.DataArray:
    """Stack ``lower`` and ``upper`` along a last ``ci_bound`` dim, with ArviZ's attributes.

    Examples
    --------
    >>> bounds_array(0.1, 0.4, prob=0.95, kind="eti", basis="design").values.tolist()
    [0.1, 0.4]
    """
    import xarray as xr

    values = np.stack([np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)], axis=-1)
    return xr.DataArray(
        values,
        dims=(*dims, "ci_bound"),
        coords={**(coords or {}), "ci_bound": ["lower", "upper"]},
        attrs={"ci_prob": float(prob), "ci_kind": kind, "basis": basis},
    )


def draws_interval(
    draws: xr.DataArray,
    prob: float,
    kind: str,
    *,
    basis: str = "posterior",
    value_range: tuple[float, float] = (0.0, 1.0),
) -> xr.DataArray:
    """Interval of posterior draws over ``chain`` and ``draw``, by arviz-stats.

    Draws that are NaN (a measure undefined in that draw, such as recall with no positive)
    are left out, so the interval is conditional on the measure being defined; an entry
    undefined in every draw gets NaN bounds.

    Parameters
    ----------
    draws : xarray.DataArray
        Dims ``chain``, ``draw`` and any others, which the interval keeps.
    prob : float
        Probability of the interval, in (0, 1).
    kind : {"eti", "hdi", "lower", "upper"}
        A one-sided interval's open end is the end of ``value_range``.
    basis : str
        Recorded in the attributes.
    value_range : tuple of float
        The values the measure can take.

    Returns
    -------
    xarray.DataArray
        The other dims of ``draws`` and ``ci_bound``.
    """
    import arviz_stats as azs

    dims = ("chain", "draw")
    with warnings.catch_warnings():  # an entry undefined in every draw: NaN bounds, no warning
        warnings.filterwarnings("ignore", "All-NaN slice encountered", RuntimeWarning)
        if kind == "eti":
            ci = azs.eti(draws, prob=prob, dim=dims, skipna=True)
        elif kind == "hdi":
            ci = azs.hdi(draws, prob=prob, dim=dims, skipna=True)
        else:
            level = 1 - prob if kind == "lower" else prob
            bound = draws.quantile(level, dim=dims, skipna=True).drop_vars("quantile")
    if kind in ("lower", "upper"):  # the open end is the measure's bound
        other = np.full(bound.shape, value_range[1] if kind == "lower" else value_range[0])
        ends = (bound.values, other) if kind == "lower" else (other, bound.values)
        return bounds_array(
            *ends,
            prob=prob,
            kind=kind,
            basis=basis,
            dims=bound.dims,
            coords={k: v for k, v in bound.coords.items()},
        )
    ci = ci.transpose(..., "ci_bound")
    ci.attrs = {"ci_prob": float(prob), "ci_kind": kind, "basis": basis}
    return ci


class Result:
    """Base of every result: the protocol above, from a few methods a subclass writes.

    A subclass sets :attr:`bases` (its default basis first) and implements

    - ``_estimate_values(basis)``: the point estimate as an array of the layout's shape;
    - ``_bounds(prob, kind, basis)``: ``(lower, upper)`` arrays of that shape;
    - ``_layout()``: ``(dims, coords)`` of those arrays (``((), {})`` for one number);
    - ``_state()`` and the class method ``_from_state(tree)``: the groups of
      :meth:`to_datatree` that rebuild the result (the ``posterior`` group is written and
      read by this class).
    """

    #: The bases this result has, its default first.
    bases: ClassVar[tuple[str, ...]] = ("posterior",)
    #: Whether every interval stays in the measure's range (one rule: clipped, or mapped
    #: through the logit); a result that reports unbounded estimates says False and why.
    bounded: ClassVar[bool] = True
    #: The values the result's entries can take (differences of measures: ``(-1, 1)``).
    value_range: ClassVar[tuple[float, float]] = (0.0, 1.0)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _RESULT_TYPES[f"{cls.__module__}.{cls.__qualname__}"] = cls

    # -- what a subclass writes ---------------------------------------------------------------
    def _estimate_values(self, basis: str) -> np.ndarray:
        raise NotImplementedError

    def _bounds(self, prob: float, kind: str, basis: str) -> tuple[Any, Any]:
        raise NotImplementedError

    def _layout(self) -> tuple[tuple[str, ...], dict]:
        return (), {}

    def _state(self) -> dict[str, xr.Dataset]:
        raise NotImplementedError

    @classmethod
    def _from_state(cls, tree: xr.DataTree, posterior: xr.DataTree | None) -> Result:
        raise NotImplementedError

    def kinds(self, basis: str) -> tuple[str, ...]:
        """Return the interval kinds ``basis`` offers: highest density needs a posterior."""
        return KINDS if basis == "posterior" else ("eti", "lower", "upper")

    def _fixed_prob(self, basis: str) -> float | None:
        """Return the only probability ``basis`` offers (fixed at planning), else None."""
        return None

    def _summary_labels(self) -> dict[str, str]:
        """Constant index levels of :meth:`summary` (such as the measure and the method)."""
        return {}

    def _posterior_tree(self) -> xr.DataTree | None:
        """Return the posterior DataTree, or ``None`` when the result has none."""
        return None

    def _no_posterior_message(self) -> str:
        return f"this {type(self).__name__} has no posterior draws."

    # -- the protocol -------------------------------------------------------------------------
    @property
    def default_basis(self) -> str:
        """The basis of :attr:`estimate` and of :meth:`interval` without ``basis``."""
        return self.bases[0]

    @property
    def estimate(self):
        """The point estimate of :attr:`default_basis` (see :meth:`estimate_of`)."""
        return self.estimate_of()

    def estimate_of(self, basis: str | None = None):
        """Return the point estimate of ``basis`` (default: :attr:`default_basis`).

        A float for a single number, else an ``xarray.DataArray`` with the result's dims.
        """
        basis = self.default_basis if basis is None else check_choice(basis, self.bases, "basis")
        return self._labelled(self._estimate_values(basis))

    def interval(
        self, prob: float | None = None, kind: str = "eti", basis: str | None = None
    ) -> xr.DataArray:
        """Return the interval at probability ``prob``, recomputed from what the result holds.

        Parameters
        ----------
        prob : float, optional
            Probability in (0, 1); default: the result's own probability, else 0.95.
        kind : {"eti", "hdi", "lower", "upper"}, default "eti"
            Equal-tailed, highest-density, or one-sided (the other end is the measure's bound).
        basis : {"posterior", "design"}, optional
            Which inference; default :attr:`default_basis`. See :attr:`bases`.

        Returns
        -------
        xarray.DataArray
            The result's dims and ``ci_bound`` (``lower``, ``upper``); attributes ``ci_prob``,
            ``ci_kind`` and ``basis``.
        """
        kind, basis = resolve_kind(kind, basis, self.bases)
        allowed = self.kinds(basis)
        if kind not in allowed:
            hint = " (kind='hdi' needs a posterior)" if kind == "hdi" else ""
            options = ", ".join(repr(k) for k in allowed)
            raise ValueError(
                f"`kind` must be one of {options} for basis={basis!r}; got {kind!r}{hint}."
            )
        prob = self._check_prob(prob, basis)
        lower, upper = self._bounds(prob, kind, basis)
        dims, coords = self._layout()
        return bounds_array(
            lower, upper, prob=prob, kind=kind, basis=basis, dims=dims, coords=coords
        )

    def _check_prob(self, prob, basis: str) -> float:
        fixed = self._fixed_prob(basis)
        if fixed is None:
            return check_prob(getattr(self, "prob", CI_PROB) if prob is None else prob)
        if prob is not None and not np.isclose(float(prob), fixed, rtol=0, atol=1e-12):
            raise ValueError(
                f"`prob` must be {fixed} for basis={basis!r}: its bounds hold at the probability "
                f"fixed when the run was planned; got {plain(prob)!r}."
            )
        return fixed

    def summary(self, prob: float | None = None, kind: str = "eti") -> pd.DataFrame:
        """Tabulate estimate and interval, one row per entry and basis.

        Parameters
        ----------
        prob : float, optional
            Default: the result's own probability, else 0.95.
        kind : {"eti", "hdi", "lower", "upper"}, default "eti"
            Equal-tailed, highest-density, or one-sided (the other end is the measure's bound).

        Returns
        -------
        pandas.DataFrame
            Columns :data:`SUMMARY_COLUMNS`; index the result's labels (such as ``measure``
            and ``method``), its dims and ``basis``.
        """
        import pandas as pd

        labels = self._summary_labels()
        frames = []
        for basis in self.bases:
            fixed = self._fixed_prob(basis)  # a basis with one probability shows that one
            ci = self.interval(prob if fixed is None else fixed, kind, basis)
            lower = ci.sel(ci_bound="lower", drop=True)
            columns = {
                "estimate": np.broadcast_to(self._estimate_values(basis), lower.shape),
                "lower": lower.values,
                "upper": ci.sel(ci_bound="upper", drop=True).values,
            }
            frame = pd.DataFrame({k: np.ravel(v) for k, v in columns.items()})
            if lower.dims:
                index = lower.to_series().index.to_frame(index=False)
                frame = pd.concat([index, frame], axis=1)
            frame = frame.assign(
                **labels, basis=basis, ci_prob=ci.attrs["ci_prob"], ci_kind=ci.attrs["ci_kind"]
            )
            frames.append(frame)
        table = pd.concat(frames, ignore_index=True)
        dims = [d for d in self._layout()[0]]
        return table.set_index([*labels, *dims, "basis"])[list(SUMMARY_COLUMNS)]

    @property
    def posterior(self) -> xr.DataTree:
        """The posterior draws as an ArviZ-ready ``xarray.DataTree``.

        Raises
        ------
        NoPosteriorError
            When the result has none; the message says what to use instead.
        """
        tree = self._posterior_tree()
        if tree is None:
            raise NoPosteriorError(self._no_posterior_message())
        return tree

    def to_datatree(self) -> xr.DataTree:
        """Return the result as a DataTree: its state, posterior groups and type (in the attrs).

        :func:`load` (after :meth:`to_netcdf`) rebuilds the result from it.
        """
        import xarray as xr

        groups = {f"result/{name}": data for name, data in self._state().items()}
        posterior = self._posterior_tree()
        if posterior is not None:
            for node in posterior.subtree:
                if node.path != "/":
                    groups[node.path.lstrip("/")] = node.to_dataset(inherit=False)
        tree = xr.DataTree.from_dict(groups)
        tree.attrs = {
            RESULT_TYPE_ATTR: f"{type(self).__module__}.{type(self).__qualname__}",
            "bayeval_version": __version__,
            "has_posterior": int(posterior is not None),
        }
        return tree

    def to_netcdf(self, path) -> None:
        """Write :meth:`to_datatree` to a netCDF file that :func:`load` reads back."""
        self.to_datatree().to_netcdf(path, engine="h5netcdf")

    def plot(self, prob: float | None = None, kind: str = "eti", ax=None):
        """Plot the estimate and interval of every basis, one row per entry.

        See :func:`bayeval.plots.intervals.plot_intervals`.

        Returns
        -------
        matplotlib.axes.Axes
        """
        from bayeval.plots.intervals import plot_intervals

        return plot_intervals(self, prob, kind, ax=ax)

    # -- helpers ------------------------------------------------------------------------------
    def _labelled(self, values):
        dims, coords = self._layout()
        if not dims:
            return float(np.asarray(values))
        import xarray as xr

        return xr.DataArray(np.asarray(values, dtype=float), dims=dims, coords=coords)


def dataclass_to_dataset(obj) -> xr.Dataset:
    """Write a dataclass of numbers, strings, arrays and dicts of arrays as a netCDF-ready Dataset.

    Arrays become variables (each on its own dim ``<name>_dim``), dicts of arrays variables named
    ``<name>.<key>``, tuples of arrays ``<name>.0``, ``<name>.1``; numbers and strings become
    attributes and ``None`` is left out. :func:`dataset_to_dataclass` reads it back.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Box:
    ...     n: int
    ...     edges: np.ndarray
    ...     note: str | None = None
    >>> data = dataclass_to_dataset(Box(3, np.array([0.0, 0.5, 1.0])))
    >>> data["edges"].values.tolist(), data.attrs
    ([0.0, 0.5, 1.0], {'n': 3})
    >>> dataset_to_dataclass(Box, data)
    Box(n=3, edges=array([0. , 0.5, 1. ]), note=None)
    """
    import dataclasses

    import xarray as xr

    data = xr.Dataset()
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if value is None or dataclasses.is_dataclass(value):
            continue  # nested dataclasses are written by the caller, in their own group
        if isinstance(value, np.ndarray):
            data[f.name] = (f"{f.name}_dim", value)
        elif isinstance(value, dict):
            for key, array in value.items():
                data[f"{f.name}.{key}"] = (f"{f.name}.{key}_dim", np.asarray(array))
        elif isinstance(value, tuple) and all(isinstance(v, np.ndarray) for v in value):
            for i, array in enumerate(value):
                data[f"{f.name}.{i}"] = (f"{f.name}.{i}_dim", array)
        elif isinstance(value, tuple):
            data.attrs[f.name] = list(value)
        else:
            data.attrs[f.name] = value.item() if isinstance(value, np.generic) else value
    return data


def dataset_to_dataclass(cls, data: xr.Dataset, **given):
    """Rebuild a ``cls`` written by :func:`dataclass_to_dataset` (``given`` fills the rest)."""
    import dataclasses

    values = dict(given)
    for f in dataclasses.fields(cls):
        if f.name in values or not f.init:
            continue
        if f.name in data:
            values[f.name] = data[f.name].values
        elif f.name in data.attrs:
            value = data.attrs[f.name]
            if isinstance(value, np.ndarray):  # a tuple of numbers
                value = tuple(value.tolist())
            values[f.name] = value.item() if isinstance(value, np.generic) else value
        else:
            prefix = f"{f.name}."
            parts = {
                k[len(prefix) :]: data[k].values for k in data.data_vars if k.startswith(prefix)
            }
            if parts and all(k.isdigit() for k in parts):
                values[f.name] = tuple(parts[str(i)] for i in range(len(parts)))
            elif parts:
                values[f.name] = parts
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                values[f.name] = None  # written as None, which netCDF cannot hold
    return cls(**values)


def load(path) -> Result:
    """Read a result written by ``to_netcdf``, with its posterior.

    Parameters
    ----------
    path : str or os.PathLike
        The netCDF file written by ``to_netcdf``.

    Returns
    -------
    Result
        The same type as the result written.

    Examples
    --------
    >>> import bayeval as be, tempfile, os
    >>> s = be.StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
    >>> r = be.recall_interval(s)
    >>> path = os.path.join(tempfile.mkdtemp(), "recall.nc")
    >>> r.to_netcdf(path)
    >>> same = be.load(path)
    >>> round(same.estimate, 3) == round(r.estimate, 3)
    True
    """
    import importlib

    import xarray as xr

    tree = xr.open_datatree(path, engine="h5netcdf").load()
    name = tree.attrs.get(RESULT_TYPE_ATTR)
    if not isinstance(name, str) or not name.startswith("bayeval."):
        raise ValueError(
            f"`path` {str(path)!r} holds no bayeval result (no {RESULT_TYPE_ATTR!r} attribute "
            "naming a bayeval type); write one with result.to_netcdf(path)."
        )
    if name not in _RESULT_TYPES:  # its module is not imported yet
        importlib.import_module(name.rsplit(".", 1)[0])
    cls = _RESULT_TYPES[name]
    posterior = None
    if tree.attrs.get("has_posterior"):
        posterior = tree.copy()
        del posterior["result"]
        posterior.attrs = {}
    return cls._from_state(tree["result"], posterior)
