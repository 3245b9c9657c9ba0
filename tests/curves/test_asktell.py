"""The curve methods by ask and tell: the same curve as with an oracle, asked in its batches."""

import numpy as np
import pytest

from bayeval import curves
from bayeval.oracles import LabelOracle

N = 20_000
# precision falling with rank, as a ranked list's does: 0.95 at the top, 0.45 at the end
TRUTH = (np.random.default_rng(3).random(N) < np.linspace(0.95, 0.45, N)).astype(np.int8)
CASES = [
    ("logstrat", curves.logstrat, {"epsilon": 0.2, "rng": 4}),
    ("paula", curves.paula, {"epsilon": 0.2, "window": 20}),
    ("adastrat", curves.adastrat, {"epsilon": 0.2, "rng": 4}),
    ("random", curves.random_baseline, {"n_samples": 300, "rng": 4}),
]


@pytest.mark.parametrize(("name", "method", "options"), CASES)
def test_ask_and_tell_give_the_curve_an_oracle_gives(name, method, options):
    questions = curves.CurveQuestions(name, N, **options)
    batches, told = 0, []
    while len(ranks := questions.ask()):
        assert not set(ranks.tolist()) & set(told)  # no rank asked twice
        half = len(ranks) // 2  # a person answers a batch in two sittings
        questions.tell(ranks[:half], TRUTH[ranks[:half]])
        assert not questions.done and set(questions.pending.tolist()) == set(ranks[half:].tolist())
        questions.tell(ranks[half:], TRUTH[ranks[half:]])
        told += ranks.tolist()
        batches += 1
    direct = method(LabelOracle(TRUTH), N, **options)
    result = questions.result
    # the random baseline asks for its one sample at once; the others in several batches
    assert batches == 1 if name == "random" else batches > 1
    assert result.annotations == direct.annotations == len(told)
    np.testing.assert_array_equal(result.queried, direct.queried)
    np.testing.assert_array_equal(result.corners, direct.corners)
    for key in ("corner_estimate", "corner_lower", "corner_upper"):
        np.testing.assert_allclose(getattr(result, key), getattr(direct, key), rtol=1e-12)


def test_bad_questions_and_answers_are_refused_and_change_nothing():
    with pytest.raises(ValueError, match="`method` must be one of 'logstrat', 'paula'"):
        curves.CurveQuestions("prauc", N)
    with pytest.raises(ValueError, match="`rng` must be an int seed"):
        curves.CurveQuestions("logstrat", N, rng=np.random.default_rng(0))
    questions = curves.CurveQuestions("logstrat", N, epsilon=0.2)
    ranks = questions.ask()
    with pytest.raises(ValueError, match=r"`ranks` must be ranks asked for; \[19999\]"):
        questions.tell([N - 1], [1])
    with pytest.raises(ValueError, match=r"`labels` must be 0 or 1; got \[2\]"):
        questions.tell(ranks[:1], [2])
    with pytest.raises(ValueError, match="one label per rank"):
        questions.tell(ranks[:2], [1])
    with pytest.raises(ValueError, match="the curve is not finished"):
        _ = questions.result
    assert questions.labels == {} and np.array_equal(questions.ask(), ranks)
