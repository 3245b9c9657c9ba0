"""Strata from scores (CSF, geometric, equal-width, quantile) and trees over ordered strata."""

import contextlib
import tracemalloc
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayeval._core.score_strata as strata_mod  # the kernels (constants patched in tests)
from bayeval.strata import METHODS, Strata, stratify, tree_over_strata

SETTINGS = settings(
    max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


TINY = {
    "CHUNK": 7,
    "_FIRST_BINS": 8,
    "_SELECT_BINS": 4,
    "_LOOKUP_CELLS": 4,
    "_GATHER_BUDGET": 5,
}


def shrunk_internals(on=True):
    """Shrink chunks, bins, lookup table and gather budget so a few hundred scores exercise
    the streaming, refinement and correction paths that 10**8 scores take."""
    return mock.patch.multiple(strata_mod, **TINY) if on else contextlib.nullcontext()


@pytest.fixture
def tiny_internals():
    with shrunk_internals():
        yield


def reference_quantile_ids(x, k):
    """The quantile rule of `stratify` written directly on the sorted scores."""
    xs = np.sort(x)
    n = xs.size
    cuts = set()
    for j in range(1, k):
        r = j * n // k
        if r == 0:
            continue
        start = np.searchsorted(xs, xs[r], side="left")  # first item of the run of ties
        stop = np.searchsorted(xs, xs[r], side="right")  # one past its last item
        cut = stop if (r - start) > (stop - r) else start
        if 0 < cut < n:
            cuts.add(cut)
    edges = np.array([xs[c] for c in sorted(cuts)])
    return np.searchsorted(edges, x, side="right")


# -- hand-worked examples ----------------------------------------------------------------------
def test_equal_width_by_hand():
    # range [0, 10], K = 4: width 10 / 4 = 2.5, edges 0, 2.5, 5, 7.5, 10; 10 joins the last.
    x = np.array([0.0, 2.4, 2.5, 4.9, 5.0, 7.4, 7.5, 10.0, 1.0, 9.0])
    s = stratify(x, 4, "equal-width")
    np.testing.assert_array_equal(s.edges, [0.0, 2.5, 5.0, 7.5, 10.0])
    np.testing.assert_array_equal(s.ids, [0, 0, 1, 1, 2, 2, 3, 3, 0, 3])
    np.testing.assert_array_equal(s.sizes, [3, 2, 2, 3])
    # mean scores: (0 + 2.4 + 1) / 3, (2.5 + 4.9) / 2, (5 + 7.4) / 2, (7.5 + 10 + 9) / 3
    np.testing.assert_allclose(s.mean_score, [3.4 / 3, 3.7, 6.2, 26.5 / 3])
    assert s.method == "equal-width" and s.n_requested == 4


def test_equal_width_gap_merges_empty_strata():
    # range [0, 10], K = 5: edges 0, 2, 4, 6, 8, 10. No score in [2, 4) or [4, 6): those two
    # strata merge into [0, 2), which becomes [0, 6).
    x = np.array([0.0, 1.0, 6.5, 9.0, 10.0])
    s = stratify(x, 5, "equal-width")
    np.testing.assert_array_equal(s.edges, [0.0, 6.0, 8.0, 10.0])
    np.testing.assert_array_equal(s.ids, [0, 0, 1, 2, 2])
    np.testing.assert_array_equal(s.sizes, [2, 1, 2])
    assert (s.n_strata, s.n_requested) == (3, 5)


def test_geometric_by_hand_positive_scores():
    # lo = 1, hi = 16, K = 4: ratio r = (16 / 1)^(1/4) = 2, edges 1, 2, 4, 8, 16.
    x = np.array([1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 8.0, 16.0])
    s = stratify(x, 4, "geometric")
    np.testing.assert_allclose(s.edges, [1.0, 2.0, 4.0, 8.0, 16.0])
    # 2, 4 and 8 sit on edges computed as powers: an ulp either way is the platform's, so the
    # ids are checked against the computed edges (an item on an edge goes up) and, off the
    # edges, by hand
    np.testing.assert_array_equal(s.ids, np.searchsorted(s.edges[1:-1], x, side="right"))
    off_edge = [0, 1, 3, 5]  # 1.0, 1.5, 3.0, 5.0
    np.testing.assert_array_equal(s.ids[off_edge], [0, 0, 1, 2])


def test_geometric_default_shift_for_zero_scores():
    # min = 0, so the default offset is 1 - 0 = 1: shifted range [1, 16], shifted edges 1, 2,
    # 4, 8, 16, i.e. edges 0, 1, 3, 7, 15 in score units.
    x = np.array([0.0, 1.0, 3.0, 7.0, 15.0, 0.5, 2.0, 6.0, 10.0])
    s = stratify(x, 4, "geometric")
    np.testing.assert_allclose(s.edges, [0.0, 1.0, 3.0, 7.0, 15.0])
    np.testing.assert_array_equal(s.ids, np.searchsorted(s.edges[1:-1], x, side="right"))
    off_edge = [5, 6, 7, 8]  # 0.5, 2.0, 6.0, 10.0 (the others sit on computed edges)
    np.testing.assert_array_equal(s.ids[off_edge], [0, 1, 2, 3])


def test_geometric_explicit_offset():
    # offset 0.5 on [0, 7.5]: shifted range [0.5, 8], ratio (8 / 0.5)^(1/4) = 2, shifted edges
    # 0.5, 1, 2, 4, 8, i.e. edges 0, 0.5, 1.5, 3.5, 7.5.
    x = np.array([0.0, 0.4, 0.6, 1.4, 1.6, 3.4, 3.6, 7.5])
    s = stratify(x, 4, "geometric", offset=0.5)
    np.testing.assert_allclose(s.edges, [0.0, 0.5, 1.5, 3.5, 7.5])
    np.testing.assert_array_equal(s.ids, [0, 0, 1, 1, 2, 2, 3, 3])
    # Negative scores: offset 1 - (-3) = 4 maps [-3, 12] to [1, 16]: edges -3, -2, 0, 4, 12.
    s = stratify(np.array([-3.0, -2.5, -1.0, 1.0, 5.0, 12.0]), 4, "geometric")
    np.testing.assert_allclose(s.edges, [-3.0, -2.0, 0.0, 4.0, 12.0])
    np.testing.assert_array_equal(s.ids, [0, 0, 1, 2, 3, 3])


def csf_example():
    """Histogram on [0, 4] with 4 unit bins holding 1, 4, 9 and 16 scores."""
    return np.concatenate(
        [[0.0], np.linspace(1.1, 1.9, 4), np.linspace(2.05, 2.95, 9), np.linspace(3.05, 4.0, 16)]
    )


def test_csf_by_hand():
    x = csf_example()
    # sqrt(f) = 1, 2, 3, 4; cumulative at the bin edges 1, 2, 3, 4: 1, 3, 6, 10; T = 10.
    # K = 2: target 5; nearest cumulative is 6 (|6 - 5| = 1 < |3 - 5| = 2), at edge 3.
    s = stratify(x, 2, "csf", n_bins=4)
    np.testing.assert_array_equal(s.edges, [0.0, 3.0, 4.0])
    np.testing.assert_array_equal(s.sizes, [1 + 4 + 9, 16])
    # K = 3: targets 10/3 = 3.33 and 20/3 = 6.67 -> nearest 3 (edge 2) and 6 (edge 3).
    s = stratify(x, 3, "csf", n_bins=4)
    np.testing.assert_array_equal(s.edges, [0.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(s.sizes, [5, 9, 16])
    # K = 4: targets 2.5, 5, 7.5 -> 3 (edge 2; |3 - 2.5| < |1 - 2.5|), 6 (edge 3), and 6 again
    # (|6 - 7.5| = 1.5 < |10 - 7.5| = 2.5): two cuts coincide, so 3 strata remain.
    s = stratify(x, 4, "csf", n_bins=4)
    np.testing.assert_array_equal(s.edges, [0.0, 2.0, 3.0, 4.0])
    assert (s.n_strata, s.n_requested) == (3, 4)


def test_csf_differs_from_quantile_on_the_same_scores():
    # Quantile, K = 2: M = 30, cut before rank 15 = the 2nd score of the top bin (ranks
    # 0 | 1-4 | 5-13 | 14-29), so 15 and 15; CSF put 14 and 16 (test above).
    s = stratify(csf_example(), 2, "quantile")
    np.testing.assert_array_equal(s.sizes, [15, 15])
    assert s.edges[1] == csf_example()[15]


def test_csf_default_bins_is_eight_per_stratum():
    rng = np.random.default_rng(3)
    x = rng.random(5000)
    assert np.array_equal(stratify(x, 4).edges, stratify(x, 4, "csf", n_bins=32).edges)


def test_quantile_by_hand():
    # M = 10, K = 3: cuts before ranks floor(10/3) = 3 and floor(20/3) = 6.
    s = stratify(np.arange(10.0)[::-1], 3, "quantile")
    np.testing.assert_array_equal(s.edges, [0.0, 3.0, 6.0, 9.0])
    np.testing.assert_array_equal(s.ids, [2, 2, 2, 2, 1, 1, 1, 0, 0, 0])
    np.testing.assert_array_equal(s.sizes, [3, 3, 4])


@pytest.mark.parametrize(
    ("x", "ids", "edges"),
    [
        # cut before rank 4 splits the run of five 0s (ranks 0-4): its start is 4 away, its end
        # (rank 5) 1 away, so the cut moves after the run: the next score, 1, is the edge.
        ([0, 0, 0, 0, 0, 1, 2, 3], [0, 0, 0, 0, 0, 1, 1, 1], [0, 1, 3]),
        # the run of five 3s covers ranks 3-7: its start is 1 away, so the 3s go up together.
        ([0, 1, 2, 3, 3, 3, 3, 3], [0, 0, 0, 1, 1, 1, 1, 1], [0, 3, 3]),
        # run of 1s at ranks 1-4, cut at rank 3: start and end both 2 away -> the start.
        ([0, 1, 1, 1, 1, 2], [0, 1, 1, 1, 1, 1], [0, 1, 2]),
        # every score tied: one stratum whatever K.
        ([5, 5, 5, 5], [0, 0, 0, 0], [5, 5]),
    ],
)
def test_quantile_keeps_ties_together(x, ids, edges):
    s = stratify(np.array(x, dtype=float), 2, "quantile")
    np.testing.assert_array_equal(s.ids, ids)
    np.testing.assert_array_equal(s.edges, edges)


@pytest.mark.parametrize("method", METHODS)
def test_constant_scores_give_one_stratum(method):
    s = stratify(np.full(7, 0.3), 16, method)
    assert s.n_strata == 1 and s.sizes.tolist() == [7]
    np.testing.assert_array_equal(s.edges, [0.3, 0.3])


# -- properties ----------------------------------------------------------------------------
@st.composite
def scored_pools(draw):
    """Scores with ties, gaps, negative values, extreme magnitudes or subnormals."""
    n = draw(st.integers(1, 300))
    kind = draw(st.sampled_from(["continuous", "ties", "skewed", "mixed", "tiny"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "continuous":
        x = rng.normal(size=n) * draw(st.sampled_from([1e-3, 1.0, 1e6]))
    elif kind == "ties":
        x = rng.integers(0, draw(st.integers(1, 6)), n).astype(float)
    elif kind == "skewed":
        x = rng.beta(0.2, 8, n)
        x[: n // 3] = 0.0
    elif kind == "mixed":
        x = np.concatenate([rng.random(n) * 1e-200, [-1e200, 1e200]])
    else:
        x = rng.integers(1, 30, n) * 5e-324
    x = rng.permutation(x)
    return x.astype(np.float32) if draw(st.booleans()) and kind in ("ties", "skewed") else x


@SETTINGS
@given(x=scored_pools(), k=st.integers(1, 40), method=st.sampled_from(METHODS), tiny=st.booleans())
def test_strata_properties(x, k, method, tiny):
    with shrunk_internals(tiny):
        s = stratify(x, k, method)
    check_partition(s, x)
    assert s.n_strata <= k


def check_partition(s, x):
    """Every item in exactly one stratum, strata non-empty and ordered, edges consistent."""
    assert isinstance(s, Strata)
    assert s.ids.shape == x.shape and s.ids.dtype == strata_mod._id_dtype(s.n_requested)
    assert s.ids.min() == 0 and s.ids.max() == s.n_strata - 1
    np.testing.assert_array_equal(np.bincount(s.ids, minlength=s.n_strata), s.sizes)
    assert s.sizes.sum() == x.size and (s.sizes > 0).all()
    assert s.edges[0] == x.min() and s.edges[-1] == x.max() and (np.diff(s.edges) >= 0).all()
    x64 = x.astype(np.float64)
    lows = np.array([x64[s.ids == j].min() for j in range(s.n_strata)])
    highs = np.array([x64[s.ids == j].max() for j in range(s.n_strata)])
    assert (highs[:-1] < lows[1:]).all()  # ordered by score: stratum 0 has the lowest scores
    assert (s.edges[:-1] <= lows).all() and (highs[:-1] < s.edges[1:-1]).all()
    # sums of M scores in any order agree to about M * eps * max|score|
    np.testing.assert_allclose(
        s.mean_score,
        [x64[s.ids == j].mean() for j in range(s.n_strata)],
        rtol=1e-12,
        atol=x.size * 1e-15 * np.abs(x64).max(),
    )
    assert not s.ids.flags.writeable and not s.edges.flags.writeable


@SETTINGS
@given(x=scored_pools(), k=st.integers(1, 40), tiny=st.booleans())
def test_quantile_matches_sorted_reference(x, k, tiny):
    with shrunk_internals(tiny):
        s = stratify(x, k, "quantile")
    np.testing.assert_array_equal(s.ids, reference_quantile_ids(x, k))


@pytest.mark.parametrize("method", METHODS)
def test_streaming_paths_give_the_same_strata(method, tiny_internals):
    # Chunks of 7 scores, 8 and 4 bins per refinement, 4 lookup cells and a gather budget of 5
    # force every refinement and correction loop; the result must equal the plain definition.
    rng = np.random.default_rng(11)
    for x in (
        rng.normal(size=400),
        np.concatenate([np.zeros(150), rng.beta(0.1, 9, 250) * 1e-3, [1.0]]),
        rng.integers(0, 9, 500) * 0.25,
    ):
        x = rng.permutation(x)
        s = stratify(x, 13, method)
        check_partition(s, x)
        if method == "quantile":
            np.testing.assert_array_equal(s.ids, reference_quantile_ids(x, 13))
        else:
            np.testing.assert_array_equal(s.ids, np.searchsorted(s.edges[1:-1], x, "right"))


def test_order_statistics_exact(tiny_internals):
    rng = np.random.default_rng(5)
    for x in (
        rng.normal(size=300),
        np.concatenate([np.zeros(100), -np.zeros(50), rng.random(100) * 1e-300, [1e300]]),
        rng.integers(1, 9, 300) * 5e-324,
        rng.random(300).astype(np.float32),
    ):
        x = rng.permutation(x)
        ranks = np.unique(rng.integers(0, x.size, 25))
        values, n_lt, n_le = strata_mod._order_statistics(x, ranks, x.min(), x.max())
        xs = np.sort(x.astype(np.float64))
        np.testing.assert_array_equal(values, xs[ranks])
        np.testing.assert_array_equal(n_lt, np.searchsorted(xs, values, "left"))
        np.testing.assert_array_equal(n_le, np.searchsorted(xs, values, "right"))


def test_id_dtype_is_the_smallest_that_fits():
    x = np.linspace(0, 1, 1000)
    assert stratify(x, 128, "equal-width").ids.dtype == np.int8
    assert stratify(x, 129, "equal-width").ids.dtype == np.int16
    assert stratify(x, 256).ids.dtype == np.int16


def test_ten_million_scores_use_only_the_ids_array():
    # 10**7 skewed scores with a tenth tied at 0 (as when a classifier saturates): every method
    # runs, and what is allocated beyond the 20 MB ids array stays well under the 80 MB of the
    # scores themselves, so nothing of pool size besides the ids is ever built.
    rng = np.random.default_rng(7)
    x = rng.beta(0.5, 4, 10**7)
    x[: 10**6] = 0.0
    for method in METHODS:
        tracemalloc.start()
        try:
            s = stratify(x, 256, method)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert s.sizes.sum() == x.size and (s.sizes > 0).all()
        assert s.ids.dtype == np.int16 and s.ids.nbytes == 2 * 10**7
        assert peak - s.ids.nbytes < x.nbytes, (method, peak)
        # 10% of the scores are 0: they share the bottom stratum.
        assert s.ids[0] == 0 and s.sizes[0] >= 10**6
    assert 230 <= stratify(x, 256, "quantile").n_strata <= 256


def test_summary_members_and_repr():
    s = stratify(np.array([0.0, 1.0, 2.0, 3.0]), 2, "equal-width")
    df = s.summary()
    assert list(df.columns) == ["lower", "upper", "size", "weight", "mean_score"]
    assert df.index.name == "stratum"
    np.testing.assert_array_equal(df["weight"], [0.5, 0.5])
    np.testing.assert_array_equal(s.members(1), [2, 3])
    np.testing.assert_array_equal(s.members(-1), [2, 3])
    assert repr(s) == "Strata(method='equal-width', n_strata=2, n_items=4, scores=[0, 3])"
    assert s.tree().n_leaves == 2
    with pytest.raises(ValueError, match=r"`stratum` must be in \[0, 2\); got 2"):
        s.members(2)


# -- validation ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("scores", "kwargs", "message"),
    [
        ([0.1, np.nan, 0.3], {}, r"`scores` must be finite.*entry 1 is nan"),
        ([0.1, 0.2, -np.inf], {}, r"`scores` must be finite.*entry 2 is -inf"),
        ([], {}, r"`scores` must contain at least one item"),
        ([[0.1, 0.2]], {}, r"`scores` must have shape \(n_items,\); got shape \(1, 2\)"),
        ([True, False], {}, r"`scores` must be real-valued scores; got booleans"),
        (["a", "b"], {}, r"`scores` must be real-valued scores; got dtype <U1"),
        ([0.1, 0.2], {"n_strata": 0}, r"`n_strata` must be an integer >= 1; got 0"),
        ([0.1, 0.2], {"n_strata": 2.0}, r"`n_strata` must be an integer >= 1; got 2.0"),
        ([0.1, 0.2], {"method": "kmeans"}, r"`method` must be one of 'csf', 'geometric'"),
        ([0.1, 0.2], {"method": "quantile", "n_bins": 9}, r"`n_bins` is used only by"),
        ([0.1, 0.2], {"method": "csf", "offset": 1.0}, r"`offset` is used only by"),
        ([0.1, 0.2], {"n_strata": 4, "n_bins": 3}, r"`n_bins` must be at least `n_strata` \(4\)"),
        ([0.1, 0.2], {"method": "geometric", "offset": -0.1}, r"min\(scores\) \+ offset > 0"),
        (
            [0.1, 0.2],
            {"method": "geometric", "offset": "x"},
            r"`offset` must be a real number; got 'x'",
        ),
    ],
)
def test_stratify_validation(scores, kwargs, message):
    kwargs = {"n_strata": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        stratify(scores, **kwargs)


def test_integer_scores_are_accepted():
    s = stratify(np.array([3, 1, 2, 0]), 2, "equal-width")
    np.testing.assert_array_equal(s.ids, [1, 0, 1, 0])


# -- trees over ordered strata ---------------------------------------------------------------
def test_tree_five_leaves_layout():
    # The docstring's picture: levels 0-2 full, node 3 (leftmost of level 2) expanded.
    t = tree_over_strata(5)
    assert (t.n_leaves, t.branching, t.depth, t.n_nodes) == (5, 2, 3, 9)
    np.testing.assert_array_equal(t.parent, [-1, 0, 0, 1, 1, 2, 2, 3, 3])
    np.testing.assert_array_equal(t.node_depth, [0, 1, 1, 2, 2, 2, 2, 3, 3])
    np.testing.assert_array_equal(t.n_children, [2, 2, 2, 2, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(t.children, [[1, 2], [3, 4], [5, 6], [7, 8]])
    np.testing.assert_array_equal(t.first_child, [1, 3, 5, 7, -1, -1, -1, -1, -1])
    np.testing.assert_array_equal(t.leaf_nodes, [7, 8, 4, 5, 6])
    np.testing.assert_array_equal(t.leaf, [-1, -1, -1, -1, 2, 3, 4, 0, 1])
    np.testing.assert_array_equal(
        t.paths, [[1, 3, 7], [1, 3, 8], [1, 4, -1], [2, 5, -1], [2, 6, -1]]
    )
    np.testing.assert_array_equal(
        t.branches, [[0, 0, 0], [0, 0, 1], [0, 1, -1], [1, 0, -1], [1, 1, -1]]
    )
    np.testing.assert_array_equal(t.leaf_start, [0, 0, 3, 0, 2, 3, 4, 0, 1])
    np.testing.assert_array_equal(t.leaf_stop, [5, 3, 5, 2, 3, 4, 5, 1, 2])
    np.testing.assert_array_equal(t.internal, [0, 1, 2, 3])


def test_tree_of_the_paper_256_leaves_depth_8():
    # Section 5.2: K = 2**8 CSF bins on the leaves of a depth-8 binary tree, breadth-first.
    t = tree_over_strata(256)
    assert (t.depth, t.branching, t.n_nodes) == (8, 2, 511)
    # complete tree: all leaves at depth 8, and breadth-first order = stratum order
    np.testing.assert_array_equal(t.leaf_nodes, np.arange(255, 511))
    assert (t.node_depth[t.leaf_nodes] == 8).all() and (t.paths >= 0).all()
    # heap layout: the children of node v are 2v + 1 and 2v + 2
    v = np.arange(255)
    np.testing.assert_array_equal(t.children[v], np.stack([2 * v + 1, 2 * v + 2], axis=1))
    # stratum k's branches are the 8 bits of k, most significant first
    bits = (np.arange(256)[:, None] >> np.arange(7, -1, -1)) & 1
    np.testing.assert_array_equal(t.branches, bits)
    assert tree_over_strata(256, depth=8).n_nodes == 511
    assert tree_over_strata(256, branching=2, depth=8).n_nodes == 511


def test_flat_tree_depth_one():
    # "Ours-1": depth 1 and branching K, a non-hierarchical partition.
    t = tree_over_strata(256, depth=1)
    assert (t.branching, t.depth, t.n_nodes) == (256, 1, 257)
    assert t.children.shape == (1, 256)  # one row per internal node, not per node
    np.testing.assert_array_equal(t.children[0], np.arange(1, 257))
    np.testing.assert_array_equal(t.paths[:, 0], np.arange(1, 257))
    assert tree_over_strata(256, branching=256).depth == 1


def test_tree_branching_three_with_a_partial_node():
    # 8 leaves, branching 3: depth 2 (3 < 8 <= 9); nodes 1 and 2 get 3 children each, node 3
    # the remaining 2 (8 - 6 leaves, not 1 then a chain).
    t = tree_over_strata(8, branching=3)
    np.testing.assert_array_equal(t.n_children[:4], [3, 3, 3, 2])
    np.testing.assert_array_equal(t.leaf_nodes, np.arange(4, 12))
    np.testing.assert_array_equal(t.children, [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, -1]])
    t = tree_over_strata(7, branching=3)  # nodes 1, 2 expanded; node 3 stays a leaf
    np.testing.assert_array_equal(t.leaf_nodes, [4, 5, 6, 7, 8, 9, 3])
    assert tree_over_strata(10, depth=2).branching == 4  # 3**2 = 9 < 10 <= 16
    assert tree_over_strata(9, depth=2).branching == 3


def test_single_stratum_tree():
    t = tree_over_strata(1)
    assert (t.depth, t.n_nodes) == (0, 1)
    assert t.paths.shape == (1, 0) and t.leaf_nodes.tolist() == [0]
    np.testing.assert_array_equal(t.aggregate([4.0]), [4.0])


@pytest.mark.parametrize(
    ("n", "b"), [(n, b) for n in (2, 3, 6, 17, 100, 255, 256, 257) for b in (2, 3, 5)]
)
def test_tree_structure_is_consistent(n, b):
    t = tree_over_strata(n, branching=b)
    assert t.depth == int(np.ceil(np.log(n) / np.log(b) - 1e-12))
    assert (t.n_children[t.internal] >= 2).all()
    # breadth-first numbering: depth never decreases with the node number; internal nodes first
    assert (np.diff(t.node_depth) >= 0).all()
    np.testing.assert_array_equal(t.internal, np.arange(t.children.shape[0]))
    # children are consecutive, in order, and point back to their parent
    for v in t.internal:
        kids = t.children[v, : t.n_children[v]]
        np.testing.assert_array_equal(np.diff(kids), 1)
        assert (t.parent[kids] == v).all()
    # the leaves, left to right, are the strata; each node covers a run of strata
    assert sorted(t.leaf[t.leaf >= 0]) == list(range(n))
    np.testing.assert_array_equal(t.leaf[t.leaf_nodes], np.arange(n))
    np.testing.assert_array_equal(t.leaf_stop - t.leaf_start, t.aggregate(np.ones(n)))
    assert (t.leaf_start[0], t.leaf_stop[0]) == (0, n)
    # paths follow parent links from the root, and branches are child positions
    for k in range(n):
        path = t.paths[k][t.paths[k] >= 0]
        assert path[-1] == t.leaf_nodes[k] and t.parent[path[0]] == 0
        np.testing.assert_array_equal(t.parent[path[1:]], path[:-1])
        parents = np.concatenate([[0], path[:-1]])
        np.testing.assert_array_equal(t.children[parents, t.branches[k][: path.size]], path)
        assert (t.leaf_start[path] <= k).all() and (k < t.leaf_stop[path]).all()
    # leaves sit at depth `depth` or one above; leaves at a level are filled from the left
    assert set(t.node_depth[t.leaf_nodes]) <= {t.depth - 1, t.depth}


def test_aggregate_sums_counts_up_the_tree():
    t = tree_over_strata(5)
    counts = np.array([[1, 2, 3, 4, 5], [0, 0, 1, 0, 0]])
    out = t.aggregate(counts)
    # nodes 0-8 cover strata [0-4], [0-2], [3-4], [0-1], 2, 3, 4, 0, 1
    np.testing.assert_array_equal(out[0], [15, 6, 9, 3, 3, 4, 5, 1, 2])
    np.testing.assert_array_equal(out[1], [1, 1, 0, 0, 1, 0, 0, 0, 0])
    with pytest.raises(ValueError, match=r"last dimension of length n_leaves=5; got shape \(4,\)"):
        t.aggregate(np.ones(4))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_strata": 0}, r"`n_strata` must be an integer >= 1; got 0"),
        ({"n_strata": 4, "branching": 1}, r"`branching` must be an integer >= 2; got 1"),
        ({"n_strata": 4, "depth": -1}, r"`depth` must be an integer >= 0; got -1"),
        ({"n_strata": 256, "branching": 2, "depth": 1}, r"`depth` must be 8 for 256 strata"),
        ({"n_strata": 5, "branching": 2, "depth": 8}, r"`depth` must be 3 for 5 strata"),
        ({"n_strata": 5, "depth": 0}, r"`depth` must be 3 for 5 strata"),
    ],
)
def test_tree_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tree_over_strata(**kwargs)


def test_tree_arrays_are_read_only():
    t = tree_over_strata(4)
    with pytest.raises(ValueError, match="read-only"):
        t.parent[0] = 3
