"""Pooled evaluation and pooling bias (Section 3, Figure 2)."""

import numpy as np
import pytest

import bayeval as be


def test_figure_2_pooled_scores():
    # Figure 2: the pool (A, B and annotators) judged three true relations; C predicts two of
    # them and i6, correct but never judged. True scores 3/3 and 3/4; pooled 2/3 and 2/3.
    judged = {"i1": 1, "i2": 1, "i3": 1, "i4": 0, "i5": 0}
    scores = be.ondemand.pooled_scores({"C": ["i1", "i3", "i6"]}, judged)
    assert scores.loc["C", "precision"] == pytest.approx(2 / 3)
    assert scores.loc["C", "recall"] == pytest.approx(2 / 3)
    truth = {**judged, "i6": 1}
    fair = be.ondemand.pooled_scores({"C": ["i1", "i3", "i6"]}, truth)
    assert fair.loc["C", "precision"] == 1.0 and fair.loc["C", "recall"] == 0.75


def test_pooling_bias_against_brute_force():
    systems = {"A1": [1, 2, 3], "A2": [2, 4], "B": [3, 5, 6], "C": [6, 7]}
    teams = {"A1": "A", "A2": "A", "B": "B", "C": "C"}
    judged = {1: 1, 2: 0, 3: 1, 4: 1, 5: 1, 6: 0, 7: 1, 8: 1}
    bias = be.ondemand.pooling_bias(systems, judged, teams=teams, manual=[4])
    # team A's unique predictions are 1, 2 and 4; 4 was found by hand and stays
    reduced = {k: v for k, v in judged.items() if k not in (1, 2)}
    a1 = be.ondemand.pooled_scores({"A1": systems["A1"]}, reduced).loc["A1"]
    assert bias.loc["A1", "unpooled_precision"] == pytest.approx(a1["precision"])  # 1/3
    assert bias.loc["A1", "unpooled_recall"] == pytest.approx(1 / 5)
    assert bias.loc["A1", "bias_recall"] == pytest.approx(2 / 6 - 1 / 5)
    assert bias.loc["C", "team"] == "C"
    # B's unique prediction 5 is true; left unjudged it counts as wrong: 2/3 -> 1/3 precision,
    # and recall 2/6 -> 1/5 (3 is shared and stays)
    assert bias.loc["B", "bias_precision"] == pytest.approx(1 / 3)
    assert bias.loc["B", "bias_recall"] == pytest.approx(2 / 6 - 1 / 5)
    with pytest.raises(ValueError, match="not judged"):
        be.ondemand.pooling_bias({"A": [1, 99]}, judged)
    with pytest.raises(ValueError, match="`judged` must map ids to 0 or 1; 1 maps to 2"):
        be.ondemand.pooled_scores({"A": [1]}, {1: 2})
    with pytest.raises(ValueError, match="missing: \\['C'\\]"):
        be.ondemand.pooling_bias(systems, judged, teams={"A1": "A", "A2": "A", "B": "B"})


def test_pooled_evaluation_is_biased_against_a_system_with_unique_predictions():
    # Five agreeing systems and one (s05) that predicts independently of them. Pooling the first
    # five and annotators' finds, then scoring s05: pooled precision and recall fall far below
    # the truth, while an agreeing system left out of the pool loses little.
    uni = be.ondemand.synthetic_universe(
        6, n_true=2000, n_false=6000, agreement=[0.9] * 5 + [0.0], rng=0
    )
    truth = uni.scores()
    manual = uni.exhaustive(200, rng=1)

    def pooled_without(left_out):
        pooled = [s for s in uni.systems if s != left_out]
        ids = np.unique(np.concatenate([uni.systems[s] for s in pooled] + [manual]))
        judged = dict(zip(ids.tolist(), uni.label(ids).tolist(), strict=True))
        return be.ondemand.pooled_scores({left_out: uni.systems[left_out]}, judged).loc[left_out]

    novel, typical = pooled_without("s05"), pooled_without("s04")
    novel_gap = truth.loc["s05", "precision"] - novel["precision"]
    typical_gap = truth.loc["s04", "precision"] - typical["precision"]
    assert novel_gap > 0.2 and novel_gap > 4 * typical_gap, (novel_gap, typical_gap)
    # and pooling_bias (leave one team out of the full pool) finds the same ordering
    ids = np.unique(np.concatenate([*uni.systems.values(), manual]))
    judged = dict(zip(ids.tolist(), uni.label(ids).tolist(), strict=True))
    bias = be.ondemand.pooling_bias(uni.systems, judged, manual=manual)
    assert bias["bias_f1"].idxmax() == "s05"
    assert (bias["bias_f1"] >= 0).all()
