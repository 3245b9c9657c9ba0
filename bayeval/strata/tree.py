"""Trees whose leaves, read left to right, are the strata in score order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bayeval._constraints import Integer, Optional, validate

__all__ = ["StrataTree", "tree_over_strata"]


# -- trees over ordered strata -----------------------------------------------------------------
@dataclass(frozen=True, eq=False, repr=False)
class StrataTree:
    """A rooted tree whose leaves, read left to right, are the strata in score order.

    Nodes are numbered breadth-first (root 0, then each level left to right), so the children
    of a node are consecutive integers. Built by :func:`tree_over_strata`.

    Attributes
    ----------
    n_leaves, branching, depth : int
        Number of leaves (strata), most children of a node, and the largest leaf depth.
    parent : numpy.ndarray of int64, shape (n_nodes,)
        Parent of each node; ``-1`` for the root.
    children : numpy.ndarray of int64, shape (n_internal, branching)
        Children of each internal node, left to right, padded with ``-1``. The internal nodes
        are the first ``n_internal`` nodes, so row ``v`` belongs to node ``v``.
    n_children : numpy.ndarray of int64, shape (n_nodes,)
        Number of children (0 for leaves).
    first_child : numpy.ndarray of int64, shape (n_nodes,)
        The children of ``v`` are ``first_child[v], ..., first_child[v] + n_children[v] - 1``
        (``-1`` for leaves).
    node_depth : numpy.ndarray of int64, shape (n_nodes,)
        Distance from the root.
    leaf : numpy.ndarray of int64, shape (n_nodes,)
        The stratum a leaf node stands for; ``-1`` for internal nodes.
    leaf_nodes : numpy.ndarray of int64, shape (n_leaves,)
        The node that stands for each stratum.
    paths : numpy.ndarray of int64, shape (n_leaves, depth)
        For stratum ``k``, the nodes traversed from the root down to its leaf (the root
        excluded, the leaf included): ``delta_nu(k) = 1`` exactly for these nodes in the
        Dirichlet-tree updates. Padded with ``-1`` for leaves shallower than ``depth``.
    branches : numpy.ndarray of int64, shape (n_leaves, depth)
        The position of ``paths[k, l]`` among its parent's children (which branch is taken at
        level ``l``), padded with ``-1``.
    leaf_start, leaf_stop : numpy.ndarray of int64, shape (n_nodes,)
        The strata below node ``v`` are ``leaf_start[v], ..., leaf_stop[v] - 1``: a contiguous
        run of neighbouring scores.
    """

    n_leaves: int
    branching: int
    depth: int
    parent: np.ndarray
    children: np.ndarray
    n_children: np.ndarray
    first_child: np.ndarray
    node_depth: np.ndarray
    leaf: np.ndarray
    leaf_nodes: np.ndarray
    paths: np.ndarray
    branches: np.ndarray
    leaf_start: np.ndarray
    leaf_stop: np.ndarray

    def __post_init__(self):
        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)

    @property
    def n_nodes(self) -> int:
        """Number of nodes, root and leaves included."""
        return int(self.parent.size)

    @property
    def internal(self) -> np.ndarray:
        """Internal nodes (those with children): ``0, ..., n_internal - 1``."""
        return np.flatnonzero(self.n_children > 0)

    def aggregate(self, values: Any) -> np.ndarray:
        """Sum per-stratum values up the tree: the total below every node.

        Parameters
        ----------
        values : array_like, shape (..., n_leaves)
            One value per stratum (e.g. label counts), with any leading dimensions (draws).

        Returns
        -------
        numpy.ndarray, shape (..., n_nodes)
            ``out[..., v]`` is the sum of ``values`` over the strata below node ``v``; for a leaf
            it is the stratum's own value and for the root the grand total.
        """
        values = np.asarray(values)
        if values.ndim == 0 or values.shape[-1] != self.n_leaves:
            raise ValueError(
                f"`values` must have a last dimension of length n_leaves={self.n_leaves}; "
                f"got shape {values.shape}."
            )
        zero = np.zeros((*values.shape[:-1], 1), dtype=values.dtype)
        cum = np.concatenate([zero, np.cumsum(values, axis=-1)], axis=-1)
        return cum[..., self.leaf_stop] - cum[..., self.leaf_start]

    def __repr__(self) -> str:
        return (
            f"StrataTree(n_leaves={self.n_leaves}, branching={self.branching}, "
            f"depth={self.depth}, n_nodes={self.n_nodes})"
        )


def _fit_depth(n: int, branching: int) -> int:
    """Return the smallest ``d`` with ``branching**d >= n``."""
    d, capacity = 0, 1
    while capacity < n:
        d, capacity = d + 1, capacity * branching
    return d


@validate(
    n_strata=Integer(minimum=1),
    branching=Optional(Integer(minimum=2)),
    depth=Optional(Integer(minimum=0)),
)
def tree_over_strata(
    n_strata: int, branching: int | None = None, depth: int | None = None
) -> StrataTree:
    r"""Build a tree whose leaves are ordered strata, filling it breadth-first (Appendix I).

    Parameters
    ----------
    n_strata : int
        Number of leaves, ``>= 1``.
    branching : int, optional
        Children per internal node, ``>= 2``. Default 2, or, when only ``depth`` is given, the
        smallest branching that reaches ``n_strata`` leaves within ``depth`` levels.
    depth : int, optional
        Number of levels below the root. Default: the fewest levels that hold ``n_strata``
        leaves, ``ceil(log_branching(n_strata))``. When given together with ``branching`` it
        must equal that value.

    Returns
    -------
    StrataTree
        Parent, children, paths and branches of the tree; stratum ``k`` is its ``k``-th leaf from
        the left.

    Notes
    -----
    Levels ``0, ..., depth - 1`` are full (``branching**l`` nodes). The last level is filled
    from the left: the leftmost nodes of level ``depth - 1`` receive ``branching`` children each
    until the tree has ``n_strata`` leaves (the last node to be expanded may receive fewer, at
    least 2). When ``n_strata == branching**depth``, as in the paper (``2**8`` strata, depth 8,
    branching 2; or depth 1, branching ``2**8`` for the flat model), every leaf is at depth
    ``depth`` and the left-to-right order of the leaves is their breadth-first order, so
    stratum ``k`` is the ``k``-th leaf in breadth-first order. Otherwise leaves are still
    numbered left to right, so that neighbouring strata always share the deepest possible
    subtree.

    Example with 5 strata and branching 2 (depth 3): node numbers, and the stratum ``s_k`` at
    each leaf::

                  0
              /       \
             1         2
           /   \     /   \
          3     4   5     6
         / \   s2  s3    s4
        7   8
        s0  s1

    Stratum 0 is reached through nodes 1, 3, 7 taking branches 0, 0, 0; stratum 3 through nodes
    2, 5 taking branches 1, 0.

    References
    ----------
    N. G. Marchant and B. I. P. Rubinstein, "Needle in a haystack: label-efficient evaluation
    under extreme class imbalance", KDD 2021, Section 4, Appendix F and Appendix I.

    Examples
    --------
    >>> from bayeval.strata import tree_over_strata
    >>> t = tree_over_strata(5)
    >>> t
    StrataTree(n_leaves=5, branching=2, depth=3, n_nodes=9)
    >>> t.leaf_nodes
    array([7, 8, 4, 5, 6])
    >>> t.paths[0], t.branches[0]
    (array([1, 3, 7]), array([0, 0, 0]))
    >>> t.paths[3], t.branches[3]
    (array([ 2,  5, -1]), array([ 1,  0, -1]))
    >>> tree_over_strata(256).depth, tree_over_strata(256, depth=1).branching
    (8, 256)
    """
    n = n_strata
    if branching is None:
        if depth is None or depth == 0:
            branching = 2
        else:
            branching = max(2, int(round(n ** (1.0 / depth))))
            while branching**depth < n:
                branching += 1
            while branching > 2 and (branching - 1) ** depth >= n:
                branching -= 1
    fitted = _fit_depth(n, branching)
    if depth is not None and depth != fitted:
        raise ValueError(
            f"`depth` must be {fitted} for {n} strata with branching {branching} (a tree filled "
            f"breadth-first has depth ceil(log_{branching}({n}))); got depth={depth}."
        )
    depth = fitted

    # Children per node, level by level; levels 0..depth-2 are full.
    per_level = [np.full(branching**level, branching, dtype=np.int64) for level in range(depth)]
    if depth > 0:
        width = branching ** (depth - 1)
        extra = n - width
        full, rest = divmod(extra, branching - 1)
        last = np.zeros(width, dtype=np.int64)
        last[:full] = branching
        if rest:
            last[full] = rest + 1
        per_level[-1] = last
    # Assemble arrays: node counts per level follow from the children of the level above.
    level_sizes = [1] + [int(c.sum()) for c in per_level]
    n_nodes = sum(level_sizes)
    n_children = np.zeros(n_nodes, dtype=np.int64)
    node_depth = np.zeros(n_nodes, dtype=np.int64)
    parent = np.full(n_nodes, -1, dtype=np.int64)
    first_child = np.full(n_nodes, -1, dtype=np.int64)
    start = 0
    for level, size in enumerate(level_sizes):
        nodes = np.arange(start, start + size)
        node_depth[nodes] = level
        if level < depth:
            counts = per_level[level]
            # per_level[level] covers all nodes of this level (full levels or the last one).
            n_children[nodes] = counts
            child_start = start + size
            offsets = child_start + np.concatenate([[0], np.cumsum(counts)[:-1]])
            first_child[nodes] = np.where(counts > 0, offsets, -1)
            parent[child_start : child_start + counts.sum()] = np.repeat(nodes, counts)
        start += size
    n_internal = int(np.count_nonzero(n_children))  # breadth-first: they come first
    pos = np.arange(branching)
    filled = pos[None, :] < n_children[:n_internal, None]
    children = np.where(filled, first_child[:n_internal, None] + pos[None, :], -1)

    # Leaves below each node, counted bottom-up, then numbered left to right top-down.
    bounds = np.cumsum([0, *level_sizes])
    n_below = (n_children == 0).astype(np.int64)
    for level in range(depth, 0, -1):
        nodes = np.arange(bounds[level], bounds[level + 1])
        np.add.at(n_below, parent[nodes], n_below[nodes])
    leaf_start = np.zeros(n_nodes, dtype=np.int64)
    for level in range(1, depth + 1):
        nodes = np.arange(bounds[level], bounds[level + 1])
        before = np.cumsum(n_below[nodes]) - n_below[nodes]  # leaves left of it on its level
        first = first_child[parent[nodes]] - bounds[level]  # its eldest sibling
        leaf_start[nodes] = leaf_start[parent[nodes]] + before - before[first]
    leaf_stop = leaf_start + n_below
    is_leaf = n_children == 0
    leaf = np.where(is_leaf, leaf_start, -1)
    leaf_nodes = np.empty(n, dtype=np.int64)
    leaf_nodes[leaf_start[is_leaf]] = np.flatnonzero(is_leaf)

    paths = np.full((n, depth), -1, dtype=np.int64)
    branches = np.full((n, depth), -1, dtype=np.int64)
    node = leaf_nodes.copy()
    rows = np.arange(n)
    while True:
        active = node > 0
        if not active.any():
            break
        r, v = rows[active], node[active]
        paths[r, node_depth[v] - 1] = v
        branches[r, node_depth[v] - 1] = v - first_child[parent[v]]
        node[active] = parent[v]
    return StrataTree(
        n_leaves=n,
        branching=branching,
        depth=depth,
        parent=parent,
        children=children,
        n_children=n_children,
        first_child=first_child,
        node_depth=node_depth,
        leaf=leaf,
        leaf_nodes=leaf_nodes,
        paths=paths,
        branches=branches,
        leaf_start=leaf_start,
        leaf_stop=leaf_stop,
    )
