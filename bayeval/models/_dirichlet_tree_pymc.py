"""The Dirichlet-tree oracle model as a PyMC model, sampled with NUTS (``engine="pymc"``).

:meth:`bayeval.models.BoundTree.posterior` calls :func:`sample_dirichlet_tree` when the
specification's engine is ``"pymc"``. The labels of unlabelled items are summed out leaf by
leaf, so the model has only continuous parameters (``theta`` and the branch probabilities) and
its size does not grow with the pool. Model card: ``models/dirichlet_tree/spec.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bayeval.models._common import SEED_HIGH

if TYPE_CHECKING:
    import pymc as pm
    import xarray as xr

__all__ = ["dirichlet_tree_model", "sample_dirichlet_tree"]


def _branch_groups(tree: Any) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Group the internal nodes by their number of children, one Dirichlet variable per group.

    Returns ``(name, nodes, children)`` triples, ``children`` of shape ``(len(nodes), m)``, by
    decreasing ``m``. The first group (every internal node when all have the same number of
    children, as in a full tree) is named ``branch``, the others ``branch_{m}``.
    """
    internal = tree.internal
    sizes = np.unique(tree.n_children[internal])[::-1]
    groups = []
    for m in sizes:
        nodes = internal[tree.n_children[internal] == m]
        name = "branch" if m == sizes[0] else f"branch_{m}"
        groups.append((name, nodes, tree.children[nodes, :m]))
    return groups


def dirichlet_tree_model(tree: Any, alpha, beta, labelled, unlabelled) -> pm.Model:
    """Build the Dirichlet-tree posterior with the unlabelled labels summed out.

    Parameters
    ----------
    tree : bayeval.strata.StrataTree
        The tree whose leaves are the strata.
    alpha : array_like
        ``(2,)`` Dirichlet concentrations of ``theta``.
    beta : array_like
        ``(2, n_nodes)`` branch concentrations (``beta[:, 0]``, the root's, is unused).
    labelled : array_like
        ``(K, 2)`` labelled items of each class per leaf.
    unlabelled : array_like
        ``(K,)`` unlabelled items per leaf.

    Returns
    -------
    pymc.Model
        Coordinates ``label`` (0, 1), ``leaf``, and per group of internal nodes ``node`` (the
        node numbers) and ``child``; data ``labelled`` and ``unlabelled``. Free variables
        ``theta`` (dims ``label``) and ``branch`` (dims ``label, node, child``; a tree whose
        internal nodes have different numbers of children gets, for each number ``m`` below
        the largest, one more variable ``branch_{m}`` with dims ``label, node_{m},
        child_{m}``); potentials ``labelled_loglik`` and ``unlabelled_loglik``; deterministic
        ``response`` (dims ``leaf``).

    Notes
    -----
    ``psi[y, k]`` multiplies the branch probabilities of label ``y`` along the path to leaf
    ``k``. A labelled item of leaf ``k`` and label ``y`` contributes ``log(theta[y] psi[y,
    k])`` and an unlabelled item of leaf ``k`` ``log(sum_y theta[y] psi[y, k])``: its label
    summed out. The deterministic ``response[k] = theta[1] psi[1, k] / sum_y theta[y] psi[y,
    k]`` is the probability that an unlabelled item of leaf ``k`` is positive.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.strata import tree_over_strata
    >>> tree = tree_over_strata(4)
    >>> beta = np.full((2, tree.n_nodes), 3.0)
    >>> model = dirichlet_tree_model(tree, [2.0, 2.0], beta, np.ones((4, 2)), [5, 5, 5, 5])
    >>> [v.name for v in model.free_RVs], model.named_vars_to_dims["branch"]
    (['theta', 'branch'], ('y', 'node', 'child'))
    """
    import pymc as pm
    import pytensor.tensor as pt

    alpha = np.asarray(alpha, dtype=float)
    beta = np.asarray(beta, dtype=float)
    groups = _branch_groups(tree)
    coords: dict[str, Any] = {"y": [0, 1], "leaf": np.arange(tree.n_leaves)}
    for name, nodes, children in groups:
        suffix = name.removeprefix("branch")
        coords["node" + suffix] = nodes
        coords["child" + suffix] = np.arange(children.shape[1])

    with pm.Model(coords=coords) as model:
        # data containers rather than constants: the compiled logp and its gradient (cached on
        # disk by pytensor) are then reused for any counts on a tree of the same shape
        labelled = pm.Data("labelled", np.asarray(labelled, dtype=float), dims=("leaf", "y"))
        unlabelled = pm.Data("unlabelled", np.asarray(unlabelled, dtype=float), dims="leaf")
        theta = pm.Dirichlet("theta", a=alpha, dims="y")
        # log branch probabilities of every node, the root first (log 1 = 0), then each group
        pieces, order = [pt.zeros((2, 1))], [np.zeros(1, dtype=np.int64)]
        for name, _, children in groups:
            suffix = name.removeprefix("branch")
            branch = pm.Dirichlet(
                name, a=beta[:, children], dims=("y", "node" + suffix, "child" + suffix)
            )
            pieces.append(pt.log(branch).reshape((2, -1)))
            order.append(children.ravel())
        log_branch = pt.concatenate(pieces, axis=1)
        position = np.empty(tree.n_nodes, dtype=np.int64)
        position[np.concatenate(order)] = np.arange(tree.n_nodes)
        # path of each leaf below the root; the padding of shallow leaves points at the root
        path = position[np.where(tree.paths >= 0, tree.paths, 0)]  # (K, depth)
        log_joint = pt.log(theta)[:, None] + log_branch[:, path].sum(axis=-1)  # (2, K)
        pm.Potential("labelled_loglik", pt.sum(labelled.T * log_joint))
        pm.Potential("unlabelled_loglik", pt.sum(unlabelled * pt.logsumexp(log_joint, axis=0)))
        pm.Deterministic("response", pt.sigmoid(log_joint[1] - log_joint[0]), dims="leaf")
    return model


def sample_dirichlet_tree(
    tree: Any,
    alpha,
    beta,
    labelled,
    unlabelled,
    *,
    chains: int,
    draws: int,
    tune: int,
    rng: np.random.Generator,
) -> xr.DataTree:
    """Draw ``theta`` and the leaf responses with NUTS; see :func:`dirichlet_tree_model`.

    Returns
    -------
    xarray.DataTree
        ``posterior``: ``theta (chain, draw, y)`` and ``response (chain, draw, leaf)``;
        ``sample_stats`` from :func:`pymc.sample`; ``observed_data``: ``labelled (leaf,
        y)`` and ``unlabelled (leaf)``.
    """
    import pymc as pm
    import xarray as xr

    model = dirichlet_tree_model(tree, alpha, beta, labelled, unlabelled)
    dt = pm.sample(
        draws=draws,
        tune=tune,
        chains=chains,
        random_seed=int(rng.integers(SEED_HIGH)),
        progressbar=False,
        nuts_sampler="pymc",  # pymc 6 silently prefers nutpie when it is installed
        # branch concentrations below 1 (the default prior) put mass near the simplex's edges,
        # where the default step size diverges now and then
        target_accept=0.95,
        var_names=["theta", "response"],
        model=model,
    )
    # the counts as given (the model's data containers hold them as floats), under the name and
    # group the exact engine uses
    del dt["constant_data"]
    dt["observed_data"] = xr.Dataset(
        {"labelled": (("leaf", "y"), labelled), "unlabelled": ("leaf", unlabelled)},
        coords={"leaf": np.arange(tree.n_leaves), "y": [0, 1]},
    )
    return dt
