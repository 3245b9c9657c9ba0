"""Which system is best: the joint posterior of several systems' measure, on the result protocol.

:class:`Comparison` holds posterior draws of one measure of ``K`` systems on the same pool
(dims ``chain``, ``draw``, ``system``) and answers from them: each system's measure, every
pairwise difference (:class:`Differences`) with ``P(A > B)``, the probability that each system
is the best, the expected loss of choosing it, and the posterior of the ranks. Every answer is
a function of the same draws, so they agree with each other (a system with P(best) 0.95 has
``P(A > B) >= 0.95`` against every other). :class:`Levels` holds each system's measure alone,
from draws that are each system's own posterior (an audit's), and answers nothing else.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np

from bayeval.results import Result, draws_interval

__all__ = ["Comparison", "Differences", "Levels"]


class Comparison(Result):
    """Several systems' measure on one pool, from one posterior: who is best, by how much.

    Returned by :func:`bayeval.compare`. Follows the protocol of :mod:`bayeval.results`
    (``estimate``, ``interval``, ``summary``, ``posterior``, netCDF) for each system's
    measure, labelled by ``system``; one basis, ``"posterior"``.

    Draws in which the measure of some system is undefined (such as precision when a system
    predicts no positive) are left out of :attr:`prob_best`, :attr:`expected_regret`,
    :attr:`rank_probabilities` and :attr:`prob_better`: those are conditional on every
    system's measure being defined.

    Attributes
    ----------
    measure : str
        The measure compared, a variable of :attr:`posterior`.
    systems : list of str
    model : str
        The model of the labels the draws come from.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> draws = np.random.default_rng(0).normal([0.80, 0.78, 0.70], 0.01, size=(4, 500, 3))
    >>> posterior = xr.DataTree.from_dict({"posterior": xr.Dataset(
    ...     {"accuracy": (("chain", "draw", "system"), draws)},
    ...     coords={"system": ["a", "b", "c"]})})
    >>> result = Comparison(measure="accuracy", model="example", posterior=posterior)
    >>> result.best
    'a'
    >>> [round(float(p), 2) for p in result.prob_best]
    [0.92, 0.08, 0.0]
    >>> round(float(result.prob_better.sel(system="a", other="b")), 2)
    0.92
    >>> [round(float(r), 3) for r in result.expected_regret]
    [0.0, 0.02, 0.1]
    """

    bases: ClassVar[tuple[str, ...]] = ("posterior",)

    def __init__(self, *, measure: str, model: str, posterior: Any):
        self.measure = str(measure)
        self.model = str(model)
        self._tree = posterior
        self.systems = [str(s) for s in posterior["posterior"]["system"].values]

    # -- the draws -------------------------------------------------------------------------------
    def _draws(self):
        return self._tree["posterior"][self.measure].transpose("chain", "draw", "system")

    def _defined_draws(self) -> np.ndarray:
        """Return the draws, ``(n, K)``, in which every system's measure is defined."""
        flat = self._draws().values.reshape(-1, len(self.systems))
        return flat[~np.isnan(flat).any(axis=1)]

    # -- the protocol ------------------------------------------------------------------------------
    def _layout(self):
        return ("system",), {"system": self.systems}

    def _estimate_values(self, basis):
        return _median(self._draws().values.reshape(-1, len(self.systems)))

    def _bounds(self, prob, kind, basis):
        ci = draws_interval(self._draws(), prob, kind, basis=basis)
        return ci.sel(ci_bound="lower").values, ci.sel(ci_bound="upper").values

    def _summary_labels(self):
        return {"measure": self.measure}

    def _posterior_tree(self):
        return self._tree

    def _state(self):
        import xarray as xr

        return {"comparison": xr.Dataset(attrs={"measure": self.measure, "model": self.model})}

    @classmethod
    def _from_state(cls, tree, posterior):
        attrs = tree["comparison"].attrs
        return cls(measure=attrs["measure"], model=attrs["model"], posterior=posterior)

    # -- who is best -------------------------------------------------------------------------------
    @property
    def prob_best(self):
        """P(system is the best): the share of draws where its measure is the highest.

        A draw where ``t`` systems tie for the highest gives each of them ``1 / t``.
        """
        draws = self._defined_draws()
        top = draws == draws.max(axis=1, keepdims=True)
        share = top / top.sum(axis=1, keepdims=True)
        return self._per_system(share.mean(axis=0) if draws.size else np.nan, "prob_best")

    @property
    def expected_regret(self):
        """E[best measure - this system's measure]: what choosing the system is expected to cost."""
        draws = self._defined_draws()
        regret = draws.max(axis=1, keepdims=True) - draws
        return self._per_system(regret.mean(axis=0) if draws.size else np.nan, "expected_regret")

    @property
    def best(self) -> str:
        """The system most likely to be the best (ties: the lower expected regret)."""
        order = np.lexsort((self.expected_regret.values, -self.prob_best.values))
        return self.systems[int(order[0])]

    @property
    def rank_probabilities(self):
        """P(system has rank r), dims ``system`` and ``rank`` (1 = best).

        Ranks are competition ranks: ``1 +`` the number of systems strictly better in the draw,
        so systems that tie share the better rank.
        """
        import xarray as xr

        draws = self._defined_draws()
        K = len(self.systems)
        ranks = 1 + (draws[:, None, :] > draws[:, :, None]).sum(axis=2)  # (n, K)
        probs = np.stack([(ranks == r).mean(axis=0) for r in range(1, K + 1)], axis=1)
        return xr.DataArray(
            probs,
            dims=("system", "rank"),
            coords={"system": self.systems, "rank": np.arange(1, K + 1)},
            name="rank_probability",
        )

    @property
    def prob_better(self):
        """P(system > other), dims ``system`` and ``other``; a tie counts one half."""
        draws = self._defined_draws()
        a, b = draws[:, :, None], draws[:, None, :]
        probs = (a > b).mean(axis=0) + 0.5 * (a == b).mean(axis=0)
        return _prob_better_array(probs, self.systems)

    @property
    def differences(self) -> Differences:
        """Every pairwise difference ``system - other`` of the measure, with its posterior."""
        draws = self._draws()
        difference = draws - draws.rename(system="other")
        return Differences(measure=self.measure, draws=difference)

    def table(self, prob: float | None = None):
        """Return a pandas table, best first: estimate, interval, P(best), expected regret.

        Parameters
        ----------
        prob : float, optional
            Probability of the interval; default 0.95.
        """
        table = self.summary(prob).droplevel(["measure", "basis"])
        table["prob_best"] = self.prob_best.values
        table["expected_regret"] = self.expected_regret.values
        return table.sort_values(["prob_best", "expected_regret"], ascending=[False, True])

    def _per_system(self, values, name: str):
        import xarray as xr

        values = np.broadcast_to(values, (len(self.systems),))
        return xr.DataArray(values, dims=("system",), coords={"system": self.systems}, name=name)

    def __repr__(self) -> str:
        return (
            f"Comparison({self.measure} of {len(self.systems)} systems; best {self.best!r} "
            f"with P(best) {float(self.prob_best.max()):.3f})"
        )


class Differences(Result):
    """The pairwise differences ``system - other`` of one measure, from joint posterior draws.

    Returned by :attr:`Comparison.differences`; dims ``system`` and ``other``, one basis,
    ``"posterior"``. The intervals are those of the difference itself: with a shared set of
    labels the two systems' measures are correlated, and a difference's interval is narrower
    than the two intervals side by side suggest.
    """

    bases: ClassVar[tuple[str, ...]] = ("posterior",)
    value_range: ClassVar[tuple[float, float]] = (-1.0, 1.0)

    def __init__(self, *, measure: str, draws: Any):
        self.measure = str(measure)
        self._difference = draws.transpose("chain", "draw", "system", "other")
        self.systems = [str(s) for s in self._difference["system"].values]

    def _layout(self):
        return ("system", "other"), {"system": self.systems, "other": self.systems}

    def _estimate_values(self, basis):
        K = len(self.systems)
        return _median(self._difference.values.reshape(-1, K, K))

    def _bounds(self, prob, kind, basis):
        ci = draws_interval(self._difference, prob, kind, basis=basis, value_range=self.value_range)
        return ci.sel(ci_bound="lower").values, ci.sel(ci_bound="upper").values

    def _summary_labels(self):
        return {"measure": f"{self.measure} difference"}

    def _posterior_tree(self):
        import xarray as xr

        data = xr.Dataset({"difference": self._difference})
        return xr.DataTree.from_dict({"posterior": data})

    def _state(self):
        import xarray as xr

        return {"differences": xr.Dataset(attrs={"measure": self.measure})}

    @classmethod
    def _from_state(cls, tree, posterior):
        draws = posterior["posterior"]["difference"]
        return cls(measure=tree["differences"].attrs["measure"], draws=draws)

    @property
    def prob_better(self):
        """P(system > other): each pair's share of draws above 0, a tie counting one half.

        Draws in which a pair's difference is undefined are left out of that pair's share.
        """
        draws = self._difference.values.reshape(-1, len(self.systems), len(self.systems))
        defined = (~np.isnan(draws)).sum(axis=0)
        with np.errstate(invalid="ignore"):  # NaN where no draw is defined, and the diagonal
            probs = ((draws > 0).sum(axis=0) + 0.5 * (draws == 0).sum(axis=0)) / defined
        return _prob_better_array(np.where(defined > 0, probs, np.nan), self.systems)

    def __repr__(self) -> str:
        return f"Differences({self.measure} of {len(self.systems)} systems)"


class Levels(Result):
    """Each system's own measure (its level), from draws of each system's own posterior.

    Returned by :func:`~bayeval.comparison.audited_levels`; dims ``system``, one basis,
    ``"posterior"``. The draws of different systems are not one joint posterior, so there is
    no P(best) and no difference here (for those, :func:`~bayeval.comparison.audited_differences`
    and the sampler's P(best)).
    """

    bases: ClassVar[tuple[str, ...]] = ("posterior",)

    def __init__(self, *, measure: str, draws: Any):
        self.measure = str(measure)
        self._draws = draws.transpose("chain", "draw", "system")
        self.systems = [str(s) for s in self._draws["system"].values]

    def _layout(self):
        return ("system",), {"system": self.systems}

    def _estimate_values(self, basis):
        return _median(self._draws.values.reshape(-1, len(self.systems)))

    def _bounds(self, prob, kind, basis):
        ci = draws_interval(self._draws, prob, kind, basis=basis)
        return ci.sel(ci_bound="lower").values, ci.sel(ci_bound="upper").values

    def _summary_labels(self):
        return {"measure": self.measure}

    def _posterior_tree(self):
        import xarray as xr

        return xr.DataTree.from_dict({"posterior": xr.Dataset({self.measure: self._draws})})

    def _state(self):
        import xarray as xr

        return {"levels": xr.Dataset(attrs={"measure": self.measure})}

    @classmethod
    def _from_state(cls, tree, posterior):
        measure = tree["levels"].attrs["measure"]
        return cls(measure=measure, draws=posterior["posterior"][measure])

    def __repr__(self) -> str:
        return f"Levels({self.measure} of {len(self.systems)} systems)"


def _prob_better_array(probs: np.ndarray, systems: list[str]):
    """Return P(system > other) ``(K, K)`` as a labelled DataArray, NaN on the diagonal."""
    import xarray as xr

    probs = np.array(probs, dtype=float)
    np.fill_diagonal(probs, np.nan)
    coords = {"system": systems, "other": systems}
    return xr.DataArray(probs, dims=("system", "other"), coords=coords, name="prob_better")


def _median(draws: np.ndarray) -> np.ndarray:
    """Median over the first axis, NaN draws left out; NaN (no warning) where all are NaN."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "All-NaN slice encountered", RuntimeWarning)
        return np.nanmedian(draws, axis=0)
