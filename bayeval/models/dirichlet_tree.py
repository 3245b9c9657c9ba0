"""The Dirichlet-tree oracle model of Marchant & Rubinstein (2021, §4, Appendices F and H).

Model card: ``models/dirichlet_tree/spec.md``. :class:`DirichletTree` is the specification
(tree shape, prior, engine); :meth:`DirichletTree.bind` attaches it to a tree over score strata
and a prior response per leaf, giving a :class:`BoundTree` that fits per-leaf counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from bayeval._constraints import (
    Array,
    Integer,
    Nonnegative,
    OneOf,
    Positive,
    Seed,
    Whole,
    validate,
    validate_fields,
)
from bayeval._core.dirichlet_tree import (
    TreeFit,
    dirichlet_tree_em,
    dirichlet_tree_gibbs,
    tree_prior,
)
from bayeval._validation import check_rng

__all__ = ["BoundTree", "DirichletTree"]


@dataclass(frozen=True)
@validate_fields(
    depth=Integer(minimum=1),
    branching=Integer(minimum=2),
    prior_strength=Nonnegative(),
    smoothing=Positive(),
    engine=OneOf(("exact", "pymc")),
)
class DirichletTree:
    """Dirichlet-tree model of the oracle response over a tree of score strata.

    ``theta ~ Dirichlet(alpha)`` is the global label distribution, ``psi[y] ~
    DirichletTree(beta[y])`` each label's distribution over the leaves; an item of leaf ``k``
    has label ``y`` with probability ``theta[y] psi[y, k] / sum_y' theta[y'] psi[y', k]``.

    Parameters
    ----------
    depth : int, default 8
        Levels below the root (the paper's "Ours-8"; ``depth=1`` with
        ``branching=256`` is the flat "Ours-1").
    branching : int, default 2
    prior_strength : float, default 0.5
        Pseudo-labels per leaf that the prior response (mean classifier score of the leaf)
        is worth; 0 for a prior that ignores the scores.
    smoothing : float, default 0.1
        Concentration added at every branch: pulls siblings towards equal shares, i.e. shares
        strength between neighbouring strata. Must be positive.
    engine : {"exact", "pymc"}, default "exact"
        How :meth:`BoundTree.posterior` draws. ``"exact"``: data augmentation aggregated by
        leaf (numpy, milliseconds per thousand sweeps; it mixes slowly when unlabelled items
        far outnumber labels). ``"pymc"``: NUTS through :func:`pymc.sample` on the same
        posterior with each leaf's unlabelled labels summed out (tens of seconds to compile
        the first time on a tree shape, cached on disk; seconds to a minute to sample; it mixes
        well on large trees). The engine affects ``posterior`` only:
        :meth:`BoundTree.mode` and :meth:`BoundTree.draws`, which the AIS proposal uses at
        every stage, always run the numpy kernels.

    Notes
    -----
    Prior concentrations (see :func:`bayeval._core.dirichlet_tree.tree_prior`):
    ``alpha[y] = 1 + a[y]`` and ``beta[y, c] = a[y, below c] + smoothing`` with
    ``a[y, k] = prior_strength * s(y | k)``. The paper's ``depth(c)^2 + a`` would make the modes
    of its Eq. 11 negative for nodes with many leaves below them; EM here takes each branch's
    mean instead (see the model card for why the defaults are small).

    References
    ----------
    .. [1] N. G. Marchant and B. I. P. Rubinstein. Needle in a haystack: label-efficient
       evaluation under extreme class imbalance. KDD 2021. Section 4, Appendices F, H, I.

    Examples
    --------
    >>> from bayeval.models import DirichletTree
    >>> DirichletTree().n_leaves, DirichletTree(depth=1, branching=256).n_leaves
    (256, 256)
    """

    depth: int = 8
    branching: int = 2
    prior_strength: float = 0.5
    smoothing: float = 0.1
    engine: Literal["exact", "pymc"] = "exact"

    @property
    def n_leaves(self) -> int:
        """``branching ** depth``: the score strata the model asks for."""
        return self.branching**self.depth

    def bind(self, tree: Any, leaf_prior: np.ndarray) -> BoundTree:
        """Attach the model to a tree and a prior probability of a positive label per leaf.

        ``tree`` is a :class:`~bayeval.strata.StrataTree`; ``leaf_prior`` has one entry per
        leaf, such as the leaf's mean classifier score.
        """
        positive = np.clip(np.asarray(leaf_prior, dtype=float), 0.0, 1.0)
        prior = np.stack([1 - positive, positive], axis=1)
        alpha, beta = tree_prior(
            tree.parent,
            tree.leaf_nodes,
            prior,
            strength=float(self.prior_strength),
            smoothing=float(self.smoothing),
        )
        return BoundTree(self, tree, prior, alpha, beta)


@dataclass(frozen=True, eq=False)
class BoundTree:
    """A :class:`DirichletTree` over a given tree, fitted from per-leaf counts.

    Attributes
    ----------
    spec : DirichletTree
    tree : bayeval.strata.StrataTree
    prior : numpy.ndarray
        ``(K, 2)`` prior response of each leaf.
    alpha, beta : numpy.ndarray
        Prior concentrations, ``(2,)`` and ``(2, n_nodes)``.
    """

    spec: DirichletTree
    tree: Any
    prior: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray

    @validate(tol=Nonnegative(), max_iter=Whole(minimum=0))
    def mode(self, labelled, unlabelled, start=None, *, tol=1e-8, max_iter=1000) -> TreeFit:
        """Posterior mode by EM (Appendix F), warm-started at ``start`` (default the prior)."""
        start = self.prior if start is None else start
        return dirichlet_tree_em(
            self.tree.parent,
            self.tree.leaf_nodes,
            labelled,
            unlabelled,
            self.alpha,
            self.beta,
            tol=tol,
            max_iter=max_iter,
            start=start,
        )

    def draws(self, labelled, unlabelled, start, n_sweeps: int, rng) -> tuple[np.ndarray, ...]:
        """``n_sweeps`` data-augmentation draws of the leaf responses and ``theta``."""
        return dirichlet_tree_gibbs(
            self.tree.parent,
            self.tree.leaf_nodes,
            labelled,
            unlabelled,
            self.alpha,
            self.beta,
            start,
            n_sweeps,
            check_rng(rng),
        )

    @validate(
        labelled=Array(ndim=2, at_least=0),
        unlabelled=Array(whole=True, at_least=0, atleast_1d=True),
        chains=Integer(minimum=1),
        draws=Integer(minimum=1),
        tune=Integer(minimum=0),
        rng=Seed(),
    )
    def posterior(
        self, labelled, unlabelled, *, chains: int = 4, draws: int = 500, tune: int = 200, rng=None
    ):
        """Draw ``theta`` and each leaf's response from the posterior, as an ``xarray.DataTree``.

        Parameters
        ----------
        labelled : array_like
            ``(K, 2)`` labelled items of each class per leaf.
        unlabelled : array_like
            ``(K,)`` unlabelled items per leaf.
        chains, draws, tune : int
            Chains, kept draws per chain, and draws discarded at the start of each chain
            (data-augmentation sweeps or NUTS tuning steps, by engine).
        rng : int or numpy.random.Generator, optional
            Seed of the sweeps' draws, or of NUTS with ``engine="pymc"``.

        Returns
        -------
        xarray.DataTree
            ``posterior``: ``theta (chain, draw, y)`` and ``response (chain, draw, leaf)``,
            the probability that an unlabelled item of the leaf is positive; ``observed_data``:
            ``labelled (leaf, y)`` and ``unlabelled (leaf)``. With ``engine="pymc"`` also
            ``sample_stats`` from :func:`pymc.sample` (``diverging``, step sizes, energy).

        Notes
        -----
        ``engine="exact"`` runs data augmentation by leaf
        (:func:`~bayeval._core.dirichlet_tree.dirichlet_tree_gibbs`), each chain started at
        the EM mode. ``engine="pymc"`` runs NUTS on the posterior of ``theta`` and the branch
        probabilities with the unlabelled items' labels summed out leaf by leaf; the compiled
        model is cached on disk by pytensor and reused for any counts on a tree of the same
        shape. Both target the same posterior (the model card,
        ``models/dirichlet_tree/spec.md``, gives the agreement evidence); check ``az.rhat``
        and ``az.ess`` on either.

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval.models import DirichletTree
        >>> from bayeval.strata import tree_over_strata
        >>> labelled = [[4, 0], [4, 1], [3, 1], [3, 2], [2, 2], [1, 3], [1, 4], [0, 4]]
        >>> unlabelled = [40, 30, 30, 20, 20, 20, 10, 10]
        >>> scores = np.linspace(0.05, 0.9, 8)  # the prior response of each leaf
        >>> exact = DirichletTree(depth=3).bind(tree_over_strata(8), scores)
        >>> dt = exact.posterior(labelled, unlabelled, rng=0)
        >>> exact_mean = dt["posterior"]["response"].mean(("chain", "draw")).values
        >>> exact_mean.round(2)
        array([0.02, 0.21, 0.24, 0.4 , 0.53, 0.74, 0.79, 0.97])

        NUTS on the same posterior (the means agree within Monte Carlo error, a few hundredths
        here), with its diagnostics; small counts make the Dirichlets' geometry awkward, so NUTS
        gets PyMC's usual 1,000 tuning steps and 1,000 draws per chain (with 200 and 500 some
        floating-point paths diverge or leave r_hat above 1.01 by chance):

        >>> nuts = DirichletTree(depth=3, engine="pymc").bind(tree_over_strata(8), scores)
        >>> dt = nuts.posterior(labelled, unlabelled, tune=1000, draws=1000, rng=0)
        >>> nuts_mean = dt["posterior"]["response"].mean(("chain", "draw")).values
        >>> bool(np.abs(nuts_mean - exact_mean).max() < 0.05)
        True
        >>> int(dt["sample_stats"]["diverging"].sum()), bool(az.rhat(dt)["response"].max() < 1.01)
        (0, True)
        """
        _check_leaves(labelled, unlabelled, self.tree.n_leaves)
        rng = check_rng(rng)
        if self.spec.engine == "pymc":
            from bayeval.models._dirichlet_tree_pymc import sample_dirichlet_tree

            return sample_dirichlet_tree(
                self.tree,
                self.alpha,
                self.beta,
                labelled,
                unlabelled,
                chains=chains,
                draws=draws,
                tune=tune,
                rng=rng,
            )
        start = self.mode(labelled, unlabelled).response
        resp = np.empty((chains, draws, self.tree.n_leaves))
        theta = np.empty((chains, draws, 2))
        for c in range(chains):
            r, t = self.draws(labelled, unlabelled, start, tune + draws, rng)
            resp[c], theta[c] = r[tune:, :, 1], t[tune:]
        return _tree_datatree(resp, theta, labelled, unlabelled)


def _check_leaves(labelled: np.ndarray, unlabelled: np.ndarray, n_leaves: int) -> None:
    """Check the checked counts (:meth:`BoundTree.posterior`) against the tree: one per leaf."""
    if labelled.shape != (n_leaves, 2):
        raise ValueError(
            f"`labelled` must have shape ({n_leaves}, 2): the negatives and positives labelled "
            f"in each leaf; got shape {labelled.shape}."
        )
    if unlabelled.size != n_leaves:
        raise ValueError(
            f"`unlabelled` must have one count per leaf ({n_leaves}); got {unlabelled.size}."
        )


def _tree_datatree(resp, theta, labelled, unlabelled):
    import xarray as xr

    chains, draws, n_leaves = resp.shape
    coords = {"chain": np.arange(chains), "draw": np.arange(draws), "leaf": np.arange(n_leaves)}
    posterior = xr.Dataset(
        {
            "theta": (("chain", "draw", "y"), theta),
            "response": (("chain", "draw", "leaf"), resp),
        },
        coords={**coords, "y": [0, 1]},
    )
    observed = xr.Dataset(
        {
            "labelled": (("leaf", "y"), labelled),
            "unlabelled": ("leaf", unlabelled),
        },
        coords={"leaf": np.arange(n_leaves), "y": [0, 1]},
    )
    return xr.DataTree.from_dict({"posterior": posterior, "observed_data": observed})
