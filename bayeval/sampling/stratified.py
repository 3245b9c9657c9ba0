"""Stratified sampling without replacement, with proportional or Neyman allocation."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from bayeval._constraints import Integer, OneOf, Seed, validate
from bayeval._core.normal import clip_covariance
from bayeval.sampling._cells import STRATA, score_cells
from bayeval.sampling._proposal import model_R
from bayeval.sampling.base import NEEDS_STAGE, Sampler
from bayeval.sampling.estimate import Estimate

__all__ = ["StrataDesign", "Stratified", "sum_by_stratum"]


class StrataDesign(Sampler):
    """Draws without replacement from strata, tracking target shares, and their estimate.

    What :class:`Stratified` and :class:`~bayeval.sampling.ActiveStratified` share. A
    subclass sets, in its ``__init__``, :meth:`_use_strata`: the partition (``ids``,
    ``sizes``, ``n_strata``), the cells (strata x loss patterns) and each stratum's target
    share of the labels. Each ``ask(n)`` allocates ``n`` items so that the labels taken so far
    track the shares (every stratum first receiving ``min_per_stratum``); items are drawn
    uniformly within a stratum, never twice. The estimate is the stratified mean loss of the
    labels of complete stages.
    """

    def _use_strata(self, strata, cells, shares: np.ndarray, min_per_stratum: int) -> None:
        """Set the design: the partition, its cells and the target share of each stratum."""
        self.strata, self.cells, self.shares = strata, cells, shares
        self.min_per_stratum = min_per_stratum
        self._cell_taken = np.zeros(self.cells.n_cells, dtype=np.int64)
        self._settled = np.empty(0, dtype=np.int64)  # items of complete stages

    # -- the protocol ------------------------------------------------------------------------
    def _available(self) -> int:
        return self.pool.size - self.labels_used - len(self._pending)

    def _allocate(self, n: int) -> np.ndarray:
        """Items per stratum for the next ``n``: the largest shortfall from the target first."""
        sizes = self.strata.sizes
        taken = np.bincount(self.cells.stratum, weights=self._cell_taken, minlength=sizes.size)
        total = taken.sum() + n
        wanted = np.minimum(
            np.maximum(self.shares * total, np.minimum(self.min_per_stratum, sizes)), sizes
        )
        out = np.zeros(sizes.size, dtype=np.int64)
        for _ in range(n):
            gap = np.where(taken + out < sizes, wanted - taken - out, -np.inf)
            out[int(np.argmax(gap))] += 1
        return out

    def _ask(self, n: int) -> np.ndarray:
        cells, rng = self.cells, self._rng
        per_stratum = self._allocate(n)
        chosen = []
        for h in np.flatnonzero(per_stratum):
            in_h = np.flatnonzero(cells.stratum == h)
            exclude = self._taken()
            for _ in range(per_stratum[h]):
                left = cells.sizes[in_h] - self._cell_taken[in_h]
                c = in_h[rng.choice(in_h.size, p=left / left.sum())]
                pos = int(cells.draw(np.array([c]), rng, exclude=exclude)[0])
                self._cell_taken[c] += 1
                exclude = np.insert(exclude, np.searchsorted(exclude, pos), pos)
                chosen.append(pos)
        taken = np.bincount(cells.stratum, weights=self._cell_taken, minlength=cells.n_strata)
        fraction = taken / np.maximum(self.strata.sizes, 1)
        for pos in chosen:
            self._selected_with[pos] = float(fraction[self.strata.ids[pos]])
        return np.array(chosen, dtype=np.int64)

    def _update(self) -> None:
        self._settled = self._labelled_positions()

    # -- the estimate ------------------------------------------------------------------------
    def _groups(self, labelled_per_stratum: np.ndarray) -> np.ndarray:
        """Group of each stratum: consecutive strata collapsed until each group is estimable."""
        sizes = self.strata.sizes
        group = np.zeros(sizes.size, dtype=np.int64)
        g, count, size = 0, 0, 0
        for h in range(sizes.size):
            group[h] = g
            count, size = count + labelled_per_stratum[h], size + sizes[h]
            if count >= 2 or count == size:
                g, count, size = g + 1, 0, 0
        if size > 0 and g > 0:  # an open tail joins the group before it
            group[group == g] = g - 1
        return group

    def _estimate(self, variance: str, target, posterior) -> Estimate:
        pos = self._settled
        if pos.size == 0:
            raise ValueError(NEEDS_STAGE)
        losses = target.loss(pos, self._label_array(pos))  # (n, D)
        stratum = self.strata.ids[pos].astype(np.int64)
        H = self.strata.n_strata
        group = self._groups(np.bincount(stratum, minlength=H))
        g_of = group[stratum]
        n_groups = int(group.max()) + 1
        N = np.bincount(group, weights=self.strata.sizes, minlength=n_groups)
        n = np.bincount(g_of, minlength=n_groups).astype(float)
        mean = sum_by_stratum(g_of, losses, n_groups) / np.maximum(n, 1)[:, None]
        W = N / self.pool.size
        R = W @ mean
        dev = losses - mean[g_of]
        scale = W**2 * (1 - n / N) / np.maximum(n * (n - 1), 1)  # S_g^2 / n_g, with the fpc
        cov_R = np.einsum("i,ij,ik->jk", scale[g_of], dev, dev)
        if ((n < 2) & (n < N)).any():  # one label in a group that is not exhausted
            cov_R[:] = np.nan
        J = target.jacobian(R)
        return Estimate(
            outputs=target.outputs,
            value=target.g(R),
            R=R,
            covariance=clip_covariance(J @ cov_R @ J.T),
            labels_used=pos.size,
            n_samples=pos.size,
            df=max(pos.size - n_groups, 1),
            method=self.method,
            value_range=target.measure.value_range,
            posterior=posterior,
        )


class Stratified(StrataDesign):
    """Stratify the pool by score and sample each stratum without replacement.

    Each ``ask(n)`` allocates ``n`` items so that the labels taken so far track the target
    allocation: proportional (``n_h ∝ N_h``) or Neyman (``n_h ∝ N_h S_h``, Cochran 1977,
    §5.5). Every stratum first receives ``min_per_stratum`` items (its variance needs two).
    Items are drawn uniformly within a stratum, never twice; the estimate uses the labels of
    complete stages.

    The estimate is the stratified mean loss ``R = sum_h (N_h / M) mean_h(loss)`` and
    ``g(R)``, with covariance ``J [sum_h (N_h / M)^2 (1 - n_h / N_h) S_h^2 / n_h] J^T`` (the
    finite-population correction included) and ``n - H`` degrees of freedom.

    Parameters
    ----------
    pool, measure, batch_size, rng
        See :class:`bayeval.sampling.Sampler`.
    allocation : {"proportional", "neyman"}, default "proportional"
        Neyman allocation needs each stratum's standard deviation ``S_h`` of the linearised
        loss ``J loss``; it is computed once from the scores read as ``P(y = 1 | x)`` (the
        design stays fixed, so the estimator keeps its textbook properties). It needs a
        measure of predictions or a precision-recall curve.
    strata : str or bayeval.strata.Strata, default "csf"
        Stratification method applied to the scores, or ready-made strata.
    n_strata : int, default 16
        Strata wanted when ``strata`` is a method. Gains from finer strata flatten quickly
        (Cochran 1977, §5A.7), and each stratum costs ``min_per_stratum`` labels up front.
    min_per_stratum : int, default 2

    Notes
    -----
    Until every stratum has two labels (or is exhausted), neighbouring strata in score order
    are collapsed for the estimate (Cochran 1977, §5A.12): each group of strata is treated as
    one stratum, whose pooled sample mean is close to unbiased while allocation follows the
    stratum sizes.

    Examples
    --------
    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(20_000) < 0.2
    >>> scores = np.where(truth, rng.beta(4, 2, truth.size), rng.beta(1, 4, truth.size))
    >>> sampler = be.sampling.Stratified(be.Pool(scores), be.measures.Accuracy(), rng=0)
    >>> for _ in range(6):
    ...     ids = sampler.ask(50)
    ...     sampler.tell(ids, truth[ids])
    >>> est = sampler.estimate()
    >>> round(float(est.estimate.sel(measure="accuracy")), 3)        # design-based
    0.913
    >>> est.interval(0.95).values.round(3)
    array([[0.88 , 0.937]])
    >>> post = est.estimate_of("posterior")      # posterior median and interval, to 0.01
    >>> ci = est.interval(0.95, basis="posterior")
    >>> [float(post[0]), *ci.values[0].tolist()]
    [0.91, 0.89, 0.93]
    >>> be.measures.Accuracy().value(truth, predictions=scores >= 0.5).round(3)     # the truth
    array([0.914])
    """

    method = "stratified"
    multiclass = True

    @validate(
        allocation=OneOf(("proportional", "neyman")),
        strata=STRATA,
        n_strata=Integer(minimum=1),
        min_per_stratum=Integer(minimum=1),
        batch_size=Integer(minimum=1),
        rng=Seed(),
    )
    def __init__(
        self,
        pool: Any,
        measure: Any,
        *,
        allocation: Literal["proportional", "neyman"] = "proportional",
        strata: Any = "csf",
        n_strata: int = 16,
        min_per_stratum: int = 2,
        batch_size: int = 50,
        rng: Any = None,
    ):
        super().__init__(pool, measure, batch_size=batch_size, rng=rng)
        self.allocation = allocation
        if self.allocation == "neyman" and pool.classes is not None:
            raise ValueError(
                "allocation='neyman' needs yes/no labels; a multiclass pool takes "
                "allocation='proportional', or ActiveStratified for a Neyman allocation learnt "
                "from the labels."
            )
        if self.allocation == "neyman" and self.target.table is None:
            raise ValueError(
                "allocation='neyman' needs a measure whose loss takes finitely many values per "
                f"item (classification measures of predictions, PrecisionRecallCurve); got "
                f"{measure!r}. Use allocation='proportional'."
            )
        found, cells, prior = score_cells(self.target, strata, n_strata)
        sizes = found.sizes.astype(float)
        self.strata, self.cells = found, cells  # what _neyman_sd reads
        weight = sizes if self.allocation == "proportional" else sizes * self._neyman_sd(prior)
        if weight.sum() <= 0:  # every stratum certain under the scores: nothing to favour
            weight = sizes
        self._use_strata(found, cells, weight / weight.sum(), min_per_stratum)

    def _neyman_sd(self, prior: np.ndarray) -> np.ndarray:
        """``S_h`` of the linearised loss under the scores' response, per stratum."""
        cells, table = self.cells, self.target.table
        no_labels = np.zeros((cells.n_cells, 2))
        R0 = model_R(table, cells.pattern, cells.sizes, prior, no_labels, self.pool.size)
        J = np.nan_to_num(self.target.jacobian(R0))
        u = table[cells.pattern] @ J.T  # (cells, 2, outputs): influence of each label
        p = np.stack([1 - prior, prior], axis=1)[..., None]
        first = (p * u).sum(axis=1)  # E[u | cell], (cells, outputs)
        second = (p * u**2).sum(axis=1)
        H = self.strata.n_strata
        n = np.maximum(self.strata.sizes, 1)[:, None]
        mean = sum_by_stratum(cells.stratum, cells.sizes[:, None] * first, H) / n
        mean_sq = sum_by_stratum(cells.stratum, cells.sizes[:, None] * second, H) / n
        return np.sqrt(np.maximum(mean_sq - mean**2, 0.0).sum(axis=1))


def sum_by_stratum(stratum: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Sum the rows of ``values`` ``(items, k)`` by ``stratum``: ``(n, k)``."""
    out = np.zeros((n, values.shape[1]))
    np.add.at(out, stratum, values)
    return out
