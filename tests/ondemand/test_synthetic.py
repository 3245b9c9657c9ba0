"""The synthetic universe: the requested precision, recall and overlap in expectation."""

import numpy as np
import pytest

import bayeval as be


def test_expected_precision_and_recall_are_met():
    # 8 systems over 20,000 true and 60,000 false instances: a system's recall is a binomial
    # proportion with sd sqrt(0.3 * 0.7 / 20000) = 0.0032; precision's sd is of the same order.
    uni = be.ondemand.synthetic_universe(
        8, n_true=20_000, n_false=60_000, precision=0.5, recall=np.linspace(0.1, 0.45, 8), rng=0
    )
    scores = uni.scores()
    np.testing.assert_allclose(scores["recall"], np.linspace(0.1, 0.45, 8), atol=0.015)
    np.testing.assert_allclose(scores["precision"], 0.5, atol=0.03)


def test_agreement_controls_overlap():
    def unique_share(agreement):
        uni = be.ondemand.synthetic_universe(5, agreement=agreement, rng=1)
        counts = np.bincount(np.concatenate(list(uni.systems.values())), minlength=uni.size)
        ids = uni.systems["s00"]
        return np.mean(counts[ids] == 1)

    shares = [unique_share(a) for a in (0.0, 0.5, 0.95)]
    assert shares[0] > shares[1] > shares[2]
    assert shares[2] < 0.1 and shares[0] > 0.4


def test_teams_and_exhaustive_sample():
    uni = be.ondemand.synthetic_universe(7, n_teams=3, team_agreement=0.3, agreement=0.2, rng=0)
    assert sorted(set(uni.teams.values())) == ["t00", "t01", "t02"]
    y0 = uni.exhaustive(50, rng=0)
    assert y0.size == 50 and uni.truth[y0].all()
    assert uni.label([0, uni.size - 1]).tolist() == [1, 0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"precision": 1.5},
            r"`precision` must be a number in the half-open interval \(0, 1\] or .*; got 1\.5\.",
        ),
        ({"precision": [0.5, 1.5, 0.5]}, r"got \[0\.5, 1\.5, 0\.5\] \(entry 1 is 1\.5\)"),
        ({"recall": [0.2, 0.3]}, "one entry per system \\(3\\)"),
        ({"agreement": 0.8, "team_agreement": 0.5}, "must be at most 1"),
        ({"n_false": 10}, "`n_false` is too small"),
        ({"n_teams": 4}, "`n_teams` must be at most n_systems \\(3\\)"),
    ],
)
def test_bad_parameters_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        be.ondemand.synthetic_universe(3, **kwargs)
