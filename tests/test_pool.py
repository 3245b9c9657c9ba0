"""Pools of scored items: validation, ids, frames, several systems, strata."""

import numpy as np
import pandas as pd
import pytest

from bayeval.pool import Pool
from bayeval.strata import stratify


def test_defaults():
    scores = np.array([0.2, 0.5, 0.9, 0.49])
    pool = Pool(scores)
    assert (pool.size, len(pool), pool.n_systems, pool.systems) == (4, 4, 1, ("system0",))
    # default decisions: score >= threshold (0.5 is predicted positive)
    np.testing.assert_array_equal(pool.predictions, [0, 1, 1, 0])
    assert pool.predictions.dtype == np.int8
    np.testing.assert_array_equal(pool.threshold, [0.5])
    np.testing.assert_array_equal(pool.ids, np.arange(4))
    assert pool.has_default_ids
    np.testing.assert_array_equal(pool.positions([3, 0]), [3, 0])
    assert pool.positions(2) == 2 and isinstance(pool.positions(2), int)
    assert pool.positions(np.float64(1.0)) == 1
    assert repr(pool) == "Pool(size=4, n_systems=1, ids='default')"


def test_scores_are_kept_without_copy_and_read_only():
    scores = np.linspace(0, 1, 11, dtype=np.float32)
    pool = Pool(scores, threshold=0.3)
    assert np.shares_memory(pool.scores, scores) and pool.scores.dtype == np.float32
    assert not pool.scores.flags.writeable and scores.flags.writeable
    assert not pool.predictions.flags.writeable
    assert pool.predictions.sum() == 8  # 0.3 (as float32, 0.3000000119) ... 1.0
    ints = Pool([3, 1, 2], threshold=2)
    assert ints.scores.dtype == np.float64
    np.testing.assert_array_equal(ints.predictions, [1, 0, 1])


def test_given_predictions():
    pool = Pool([0.1, 0.2, 0.3], predictions=[True, False, True])
    np.testing.assert_array_equal(pool.predictions, [1, 0, 1])
    assert pool.threshold is None
    pool = Pool([0.1, 0.2], predictions=np.array([1.0, 0.0]))
    np.testing.assert_array_equal(pool.predictions, [1, 0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scores": [0.1, np.nan, 0.3]}, r"`scores` must be finite.*entry 1 is nan"),
        ({"scores": [0.1, 0.2, np.inf]}, r"`scores` must be finite.*entry 2 is inf"),
        ({"scores": [[0.1, 0.2], [0.3, -np.inf]]}, r"entry \(1, 1\) is -inf"),
        ({"scores": []}, r"`scores` must contain at least one item; got shape \(0,\)"),
        ({"scores": np.zeros((0, 3))}, r"`scores` must contain at least one item"),
        ({"scores": np.zeros((2, 2, 2))}, r"`scores` must have shape \(n_items,\) or"),
        ({"scores": 0.5}, r"`scores` must have shape.*got shape \(\)"),
        ({"scores": ["a"]}, r"`scores` must be real-valued scores; got dtype <U1"),
        ({"scores": [True, False]}, r"got booleans \(pass 0/1 decisions as `predictions`\)"),
        (
            {"scores": [0.1, 0.2, 0.3], "predictions": [0, 1, 2]},
            r"`predictions` must contain only 0 and 1; entry 2 is 2",
        ),
        (
            {"scores": [0.1, 0.2], "predictions": [0.5, 1.0]},
            r"`predictions` must contain only 0 and 1; entry 0 is 0.5",
        ),
        (
            {"scores": [[0.1, 0.2], [0.3, 0.4]], "predictions": [[0, 1], [-1, 0]]},
            r"entry \(1, 0\) is -1",
        ),
        ({"scores": [0.1, 0.2], "predictions": [0, 1, 1]}, r"shape of `scores`, \(2,\)"),
        ({"scores": [0.1, 0.2], "predictions": ["0", "1"]}, r"got dtype <U1"),
        ({"scores": [0.1, 0.2], "threshold": "high"}, r"`threshold` must be a finite number or"),
        ({"scores": [0.1, 0.2], "threshold": np.nan}, r"`threshold` must be .*; got nan\."),
        ({"scores": [0.1, 0.2], "threshold": True}, r"`threshold` must be .*; got True\."),
        ({"scores": [[0.1, 0.2]], "threshold": [0.5, 0.5, 0.5]}, r"one number per system \(2\)"),
        ({"scores": [0.1, 0.2], "ids": [5, 5]}, r"`ids` must be unique; id 5 appears at 0 and 1"),
        (
            {"scores": [0.1, 0.2, 0.3, 0.4], "ids": ["x", "y", "z", "y"]},
            r"`ids` must be unique; id 'y' appears at positions 1 and 3",
        ),
        (  # strings in an object array (as pandas gives them) are Python objects
            {"scores": [0.1, 0.2, 0.3], "ids": np.array(["x", "y", "x"], dtype=object)},
            r"`ids` must be unique; id 'x' appears at positions 0 and 2",
        ),
        ({"scores": [0.1, 0.2], "ids": [1, 2, 3]}, r"one id per item \(2\); got shape \(3,\)"),
        ({"scores": [0.1, 0.2], "ids": [0.5, 1.5]}, r"`ids` must be integers or strings"),
        ({"scores": [0.1, 0.2], "ids": np.array([1, "a"], dtype=object)}, r"mutually comparable"),
        ({"scores": [[0.1, 0.2]], "systems": ["a"]}, r"name each of the 2 system\(s\)"),
        ({"scores": [[0.1, 0.2]], "systems": ["a", "a"]}, r"`systems` must be unique"),
        ({"scores": [0.1, 0.2], "judge": [0, 1, 1]}, r"`judge` must hold one .*shape \(2,\)"),
        ({"scores": [0.1, 0.2], "judge": [0.5, 1.5]}, r"in \[0, 1\]; entry 1 is 1.5\."),
        ({"scores": [0.1, 0.2], "judge": [-1, 0]}, r"in \[0, 1\]; entry 0 is -1\."),
        ({"scores": [0.1, 0.2], "judge": [np.nan, 0]}, r"in \[0, 1\]; entry 0 is nan\."),
        ({"scores": [0.1, 0.2], "judge": ["yes", "no"]}, r"`judge` must hold .*got dtype <U3"),
        ({"scores": [0.1, 0.2], "predictions": [0, 1], "classes": ["a"]}, r"2 to 127 classes"),
        ({"scores": [0.1], "predictions": [0], "classes": ["a", "a"]}, r"must be distinct"),
        ({"scores": [0.1], "predictions": [0], "classes": ["a", 3]}, r"got \['a', 3\]"),
        ({"scores": [0.1, 0.2], "classes": ["a", "b"]}, r"`predictions` must be given in a mul"),
        (
            {"scores": [0.1, 0.2], "predictions": [0, 2], "classes": ["a", "b"]},
            r"`predictions` must contain class indices 0 \.\. 1 or the names \['a', 'b'\]; "
            r"entry 1 is 2\.",
        ),
        (
            {"scores": [0.1, 0.2], "predictions": ["a", "c"], "classes": ["a", "b"]},
            r"`predictions` must contain .*; entry 1 is 'c'\.",
        ),
        (
            {"scores": [0.1, 0.2], "predictions": [True, False], "classes": ["a", "b"]},
            r"`predictions` must contain .*; got dtype bool",
        ),
        (
            {"scores": [[0.1, 0.2]], "predictions": [[0, 1, 1]], "classes": ["a", "b"]},
            r"`predictions` must have the shape of `scores`, \(1, 2\); got shape \(1, 3\)",
        ),
        (
            {"scores": [0.1, 0.2], "predictions": [0, 1], "classes": ["a", "b"], "judge": [0, 2]},
            r"`judge` must contain class indices 0 \.\. 1 or the names \['a', 'b'\]; "
            r"entry 1 is 2\.",
        ),
        (
            {
                "scores": [0.1, 0.2],
                "predictions": [0, 1],
                "classes": ["a", "b"],
                "judge": ["c", "a"],
            },
            r"`judge` must contain .*; entry 0 is 'c'\.",
        ),
        (
            {"scores": [0.1, 0.2], "predictions": [0, 1], "classes": ["a", "b"], "judge": [0]},
            r"`judge` must hold one class per item, shape \(2,\); got shape \(1,\)",
        ),
    ],
)
def test_validation(kwargs, message):
    message = message.replace("appears at 0", "appears at positions 0")
    with pytest.raises(ValueError, match=message):
        Pool(**kwargs)


def test_explicit_ids_and_positions():
    pool = Pool([0.1, 0.2, 0.3, 0.4], ids=[40, 10, 30, 20])
    assert not pool.has_default_ids and repr(pool).endswith("ids='explicit')")
    np.testing.assert_array_equal(pool.ids, [40, 10, 30, 20])
    np.testing.assert_array_equal(pool.positions([10, 20, 30, 40]), [1, 3, 2, 0])
    np.testing.assert_array_equal(pool.positions([[10], [40]]), [[1], [0]])
    assert pool.positions(30) == 2
    sorted_ids = Pool([0.1, 0.2, 0.3], ids=[2, 5, 9])  # already sorted: no permutation kept
    np.testing.assert_array_equal(sorted_ids.positions([9, 2]), [2, 0])
    words = Pool([0.1, 0.2, 0.3], ids=["b", "c", "a"])
    np.testing.assert_array_equal(words.positions(["a", "b", "c"]), [2, 0, 1])


@pytest.mark.parametrize(
    ("ids", "query", "message"),
    [
        (None, [0, 3, 7], r"\(2 of the 3 given\): 3, 7\."),
        (None, [-1], r"\(1 of the 1 given\): -1\."),
        (None, [0.5], r"0\.5"),
        (None, ["a"], r"'a'"),
        ([40, 10, 30], [10, 11], r"\(1 of the 2 given\): 11\."),
        ([40, 10, 30], ["x"], r"\(1 of the 1 given\): 'x'\."),
        (["b", "c", "a"], ["a", "zz"], r"\(1 of the 2 given\): 'zz'\."),
        (["b", "c", "a"], [1], r"\(1 of the 1 given\): 1\."),
        (
            None,
            np.arange(5, 20),
            r"\(15 of the 15 given\): 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, \.\.\.",
        ),
    ],
)
def test_unknown_ids_are_listed(ids, query, message):
    pool = Pool([0.1, 0.2, 0.3], ids=ids)
    with pytest.raises(ValueError, match=r"`ids` not in the pool.*" + message):
        pool.positions(query)


def test_many_unsorted_ids_are_indexed_without_a_dict():
    rng = np.random.default_rng(0)
    ids = rng.permutation(10**6) * 7 + 3
    pool = Pool(rng.random(10**6), ids=ids)
    assert pool._order.dtype == np.int32  # the only per-item index: the sorting permutation
    pick = rng.integers(0, 10**6, 1000)
    np.testing.assert_array_equal(pool.positions(ids[pick]), pick)
    dup = ids.copy()
    dup[123_456] = dup[654_321]
    with pytest.raises(ValueError, match=r"positions 123456 and 654321"):
        Pool(np.zeros(10**6), ids=dup)


def test_several_systems():
    scores = np.array([[0.1, 0.9], [0.6, 0.2], [0.4, 0.7]])
    pool = Pool(scores, threshold=[0.5, 0.8], systems=["lr", "gbm"])
    assert (pool.n_systems, pool.systems, pool.scores.shape) == (2, ("lr", "gbm"), (3, 2))
    np.testing.assert_array_equal(pool.predictions, [[0, 1], [1, 0], [0, 0]])
    np.testing.assert_array_equal(pool.threshold, [0.5, 0.8])
    assert Pool(scores).systems == ("system0", "system1")
    # strata need one system's scores
    np.testing.assert_array_equal(pool.stratify(2, "equal-width", system="gbm").ids, [1, 0, 1])
    np.testing.assert_array_equal(pool.stratify(2, "equal-width", system=0).ids, [0, 1, 1])
    np.testing.assert_array_equal(pool.stratify(2, "equal-width", system=-1).ids, [1, 0, 1])
    with pytest.raises(ValueError, match=r"`system` must be given for a pool of 2 systems"):
        pool.stratify(2)
    with pytest.raises(ValueError, match=r"`system` must be one of \('lr', 'gbm'\); got 'x'"):
        pool.stratify(2, system="x")
    with pytest.raises(ValueError, match=r"`system` index must be in \[0, 2\); got 2"):
        pool.stratify(2, system=2)


@pytest.mark.parametrize("method", ["csf", "geometric", "equal-width", "quantile"])
def test_stratify_matches_the_function(method):
    rng = np.random.default_rng(4)
    scores = rng.beta(0.5, 3, 5000)
    got = Pool(scores).stratify(16, method)
    want = stratify(scores, 16, method)
    np.testing.assert_array_equal(got.ids, want.ids)
    np.testing.assert_array_equal(got.edges, want.edges)
    with pytest.raises(ValueError, match=r"`n_strata` must be an integer >= 1"):
        Pool(scores).stratify(0, method)


def test_stratify_options_are_validated():
    pool = Pool([0.1, 0.5, 0.9])
    with pytest.raises(ValueError, match=r"`method` must be one of"):
        pool.stratify(2, "kmeans")
    with pytest.raises(ValueError, match=r"`n_bins` must be at least `n_strata` \(4\)"):
        pool.stratify(4, n_bins=2)
    np.testing.assert_array_equal(pool.stratify(2, "geometric", offset=0.1).ids, [0, 1, 1])


def test_from_frame_round_trip_default_ids():
    df = pd.DataFrame({"score": [0.3, 0.8, 0.55], "label_guess": [0, 1, 0]})
    pool = Pool.from_frame(df, prediction="label_guess")
    assert pool.has_default_ids
    np.testing.assert_array_equal(pool.predictions, [0, 1, 0])
    back = pool.to_frame()
    assert list(back.columns) == ["score", "prediction"] and back.index.name == "id"
    again = Pool.from_frame(back.reset_index(drop=True), prediction="prediction")
    np.testing.assert_array_equal(again.scores, pool.scores)
    np.testing.assert_array_equal(again.predictions, pool.predictions)
    assert again.has_default_ids


def test_from_frame_round_trip_string_ids():
    df = pd.DataFrame(
        {"doc": ["q7", "q2", "q9"], "s": [0.9, 0.1, 0.6]},
    )
    pool = Pool.from_frame(df, score="s", id="doc", threshold=0.6)
    np.testing.assert_array_equal(pool.predictions, [1, 0, 1])
    assert pool.positions("q9") == 2
    frame = pool.to_frame()
    assert list(frame.index) == ["q7", "q2", "q9"]
    again = Pool.from_frame(frame, prediction="prediction")  # ids from the index
    assert list(again.ids) == ["q7", "q2", "q9"]
    np.testing.assert_array_equal(again.scores, pool.scores)
    np.testing.assert_array_equal(again.predictions, pool.predictions)
    # a RangeIndex not starting at 0 is a set of ids too
    shifted = Pool.from_frame(pd.DataFrame({"score": [0.1, 0.2]}, index=pd.RangeIndex(5, 7)))
    assert shifted.positions(6) == 1 and not shifted.has_default_ids


def test_from_frame_round_trip_several_systems():
    df = pd.DataFrame({"a": [0.1, 0.7, 0.3], "b": [0.9, 0.1, 0.5]}, index=[11, 12, 13])
    pool = Pool.from_frame(df, score=["a", "b"])
    assert pool.systems == ("a", "b") and pool.n_systems == 2
    frame = pool.to_frame()
    assert list(frame.columns) == ["score_a", "score_b", "prediction_a", "prediction_b"]
    again = Pool.from_frame(
        frame,
        score=["score_a", "score_b"],
        prediction=["prediction_a", "prediction_b"],
        systems=pool.systems,
    )
    assert again.systems == pool.systems
    np.testing.assert_array_equal(again.scores, pool.scores)
    np.testing.assert_array_equal(again.predictions, pool.predictions)
    np.testing.assert_array_equal(again.ids, [11, 12, 13])


def test_from_frame_errors():
    df = pd.DataFrame({"score": [0.1, 0.2], "p": [0, 1]})
    with pytest.raises(ValueError, match=r"column\(s\) \{'score': \['s'\]\} not found"):
        Pool.from_frame(df, score="s")
    with pytest.raises(ValueError, match=r"\{'id': \['doc'\]\} not found"):
        Pool.from_frame(df, id="doc")
    with pytest.raises(ValueError, match=r"one column per score column \(1\)"):
        Pool.from_frame(df, prediction=["p", "p"])
    missing = pd.DataFrame({"score": pd.array([0.1, None], dtype="Float64")})
    with pytest.raises(ValueError, match=r"`scores` must be finite.*entry 1 is nan"):
        Pool.from_frame(missing)


def test_single_system_as_a_column_stratifies():
    scores = np.random.default_rng(0).random((50, 1))
    one_d = Pool(scores[:, 0]).stratify(4)
    np.testing.assert_array_equal(Pool(scores).stratify(4).ids, one_d.ids)


def test_a_judge_is_kept_as_labels_or_probabilities():
    labels = Pool([0.1, 0.6, 0.9], judge=[True, False, True]).judge
    assert labels.dtype == np.int8 and labels.tolist() == [1, 0, 1]
    assert not labels.flags.writeable
    assert Pool([0.1, 0.6], judge=[0.0, 1.0]).judge.dtype == np.int8  # 0/1 floats are labels
    probabilities = Pool([0.1, 0.6, 0.9], judge=[0.2, 1.0, 0.7]).judge
    assert probabilities.dtype == np.float64 and probabilities.tolist() == [0.2, 1.0, 0.7]
    assert Pool([0.1, 0.6]).judge is None
    assert repr(Pool([0.1, 0.6], judge=[0.3, 0.9])).endswith("judge='probabilities')")


def test_from_frame_round_trip_with_a_judge():
    df = pd.DataFrame({"score": [0.3, 0.8, 0.55], "llm": [0.1, 0.9, 0.4]})
    pool = Pool.from_frame(df, judge="llm")
    np.testing.assert_array_equal(pool.judge, [0.1, 0.9, 0.4])
    back = pool.to_frame()
    assert list(back.columns) == ["score", "prediction", "judge"]
    again = Pool.from_frame(back.reset_index(drop=True), prediction="prediction", judge="judge")
    np.testing.assert_array_equal(again.judge, pool.judge)
    with pytest.raises(ValueError, match=r"column\(s\) \{'judge': \['gpt'\]\} not found"):
        Pool.from_frame(df, judge="gpt")


def test_a_multiclass_pool_takes_class_indices_or_names():
    classes = ["cat", "dog", "bird"]
    by_name = Pool([0.9, 0.6, 0.8], ["cat", "bird", "dog"], classes=classes)
    mixed = Pool([0.9, 0.6, 0.8], ["cat", 2, 1], classes=classes)
    as_text = Pool([0.9, 0.6, 0.8], [" cat", "2", "1.0"], classes=classes)  # as a file gives them
    for pool in (by_name, mixed, as_text):
        assert pool.predictions.tolist() == [0, 2, 1] and pool.predictions.dtype == np.int8
        assert pool.classes == ("cat", "dog", "bird") and pool.n_classes == 3
    assert Pool([0.1, 0.6]).n_classes == 2 and Pool([0.1, 0.6]).classes is None
    assert repr(by_name).endswith("classes=('cat', 'dog', 'bird'))")


def test_from_frame_round_trip_multiclass():
    df = pd.DataFrame({"confidence": [0.9, 0.6, 0.8], "label": ["dog", "cat", "dog"]})
    pool = Pool.from_frame(df, score="confidence", prediction="label", classes=["cat", "dog"])
    assert pool.predictions.tolist() == [1, 0, 1]
    back = pool.to_frame()  # the predictions as class indices
    again = Pool.from_frame(back, prediction="prediction", classes=pool.classes)
    np.testing.assert_array_equal(again.predictions, pool.predictions)
    np.testing.assert_array_equal(again.scores, pool.scores)
