"""Loss patterns against item-by-item losses, several systems at once, and evaluate()."""

import numpy as np
import pytest

import bayeval as be
from bayeval.measures.target import Target
from bayeval.oracles import LabelOracle


@pytest.mark.parametrize("seed", range(3))
def test_pattern_table_equals_each_items_loss(seed):
    gen = np.random.default_rng(seed)
    scores = gen.normal(size=(200, 2))
    pool = be.Pool(scores, threshold=[0.0, 0.3])
    labels = gen.integers(0, 2, 200)
    for measure in (be.measures.FScore(beta=2), be.measures.PrecisionRecallCurve([-0.5, 0, 1])):
        target = Target(pool, measure)
        brute = np.concatenate(
            [
                measure.loss(labels, predictions=pool.predictions[:, s], scores=scores[:, s])
                for s in range(2)
            ],
            axis=1,
        )
        np.testing.assert_array_equal(target.loss(np.arange(200), labels), brute)


def test_several_systems_stack_losses_and_block_jacobian():
    gen = np.random.default_rng(4)
    pool = be.Pool(gen.random((50, 3)), systems=["a", "b", "c"])
    target = Target(pool, be.measures.Precision())
    assert target.outputs == ("a/precision", "b/precision", "c/precision")
    R = gen.uniform(0.1, 0.5, size=6)
    jac = target.jacobian(R)
    # finite differences of g
    h = 1e-7
    numeric = np.stack(
        [(target.g(R + h * e) - target.g(R - h * e)) / (2 * h) for e in np.eye(6)], axis=1
    )
    np.testing.assert_allclose(jac, numeric, rtol=1e-6, atol=1e-8)
    assert np.all(jac[0, 2:] == 0) and np.all(jac[2, :4] == 0)


def test_one_set_of_labels_estimates_every_system():
    gen = np.random.default_rng(5)
    truth = gen.random(3000) < 0.1
    noise = gen.normal(scale=[0.2, 0.4], size=(3000, 2))
    pool = be.Pool(np.clip(truth[:, None] * 0.6 + 0.2 + noise, 0, 1), systems=["good", "poor"])
    run = be.evaluate(pool, be.measures.FScore(), truth, budget=400, sampler="ais", rng=0)
    assert run.estimate.outputs == ("good/f1", "poor/f1")
    true = [
        be.measures.FScore().value(truth, predictions=pool.predictions[:, s])[0] for s in (0, 1)
    ]
    ci = run.estimate.interval(0.99)
    assert ci.dims == ("system", "measure", "ci_bound")
    lower, upper = ci.sel(measure="f1", ci_bound="lower"), ci.sel(measure="f1", ci_bound="upper")
    assert lower["system"].values.tolist() == ["good", "poor"]
    assert np.all(lower.values <= true) and np.all(true <= upper.values)


def test_evaluate_history_and_oracles():
    gen = np.random.default_rng(6)
    truth = gen.random(2000) < 0.05
    scores = np.where(truth, gen.beta(5, 2, 2000), gen.beta(1, 8, 2000))
    pool = be.Pool(scores, ids=np.arange(2000) + 10_000)
    seen = []
    run = be.evaluate(pool, be.measures.Recall(), lambda ids: truth[ids - 10_000], budget=130,
                      batch_size=50, rng=0, progress=lambda n, est: seen.append(n))  # fmt: skip
    assert seen == [50, 100, 130] == list(run.history["labels"].values)
    assert run.estimate.labels_used == 130 == run.sampler.labels_used
    assert set(run.history.data_vars) == {"estimate", "lower", "upper", "value", "se"}
    np.testing.assert_allclose(run.history["value"][-1], run.estimate.value)
    np.testing.assert_allclose(run.history["estimate"][-1], run.estimate.estimate)
    # the same run from an Oracle over positions and from the label array
    by_oracle = be.evaluate(pool, be.measures.Recall(), LabelOracle(truth), budget=130, rng=0)
    by_array = be.evaluate(pool, be.measures.Recall(), truth, budget=130, rng=0)
    np.testing.assert_array_equal(by_oracle.estimate.value, by_array.estimate.value)
    np.testing.assert_array_equal(by_array.estimate.value, run.estimate.value)


def test_evaluate_refuses_bad_input():
    pool = be.Pool(np.linspace(0, 1, 100))
    truth = np.zeros(100, bool)
    with pytest.raises(ValueError, match="`budget` must be at most the pool size \\(100\\)"):
        be.evaluate(pool, be.measures.Accuracy(), truth, budget=101)
    with pytest.raises(ValueError, match="`budget` must be an integer >= 1"):
        be.evaluate(pool, be.measures.Accuracy(), truth, budget=0)
    with pytest.raises(ValueError, match="`sampler` must be a bayeval.sampling.Sampler or one of"):
        be.evaluate(pool, be.measures.Accuracy(), truth, budget=10, sampler="oasis?")
    with pytest.raises(ValueError, match="one label per pool item"):
        be.evaluate(pool, be.measures.Accuracy(), truth[:50], budget=10)
    with pytest.raises(ValueError, match="scores"):
        be.Pool([0.1, np.nan])
