"""The ask/tell protocol: what is asked, what may be told, and the errors for everything else."""

import numpy as np
import pytest

import bayeval as be
from bayeval.models import DirichletTree
from bayeval.sampling import AIS, OASIS, Passive, StaticIS, Stratified


def _pool(n=300, seed=0, **kwargs):
    gen = np.random.default_rng(seed)
    truth = gen.random(n) < 0.1
    scores = np.where(truth, gen.beta(5, 2, n), gen.beta(1, 6, n))
    return be.Pool(scores, **kwargs), truth


SAMPLERS = [
    lambda pool: Passive(pool, be.measures.FScore(), rng=0),
    lambda pool: StaticIS(pool, be.measures.FScore(), n_strata=8, rng=0),
    lambda pool: AIS(pool, be.measures.FScore(), model=DirichletTree(depth=3), rng=0),
    lambda pool: OASIS(pool, be.measures.FScore(), n_strata=8, rng=0),
    lambda pool: Stratified(pool, be.measures.FScore(), n_strata=4, rng=0),
]


@pytest.mark.parametrize("make", SAMPLERS)
def test_ask_returns_distinct_new_items_and_budget_counts_distinct(make):
    pool, truth = _pool()
    sampler = make(pool)
    seen = set()
    for _ in range(5):
        ids = sampler.ask(20)
        assert len(set(ids.tolist())) == 20 and not seen & set(ids.tolist())
        assert set(sampler.pending.tolist()) == set(ids.tolist())
        seen |= set(ids.tolist())
        sampler.tell(ids, truth[ids])
    assert sampler.labels_used == 100 == sampler.estimate().labels_used
    # importance samplers re-draw labelled items for free: more samples than labels
    est = sampler.estimate()
    assert est.n_samples >= 100


@pytest.mark.parametrize("make", SAMPLERS)
def test_tell_refuses_what_was_not_asked(make):
    pool, truth = _pool()
    sampler = make(pool)
    ids = sampler.ask(5)
    with pytest.raises(ValueError, match="not in the pool|unknown|ids"):
        sampler.tell([10_000], [1])
    never = next(i for i in range(pool.size) if i not in set(ids.tolist()))
    with pytest.raises(ValueError, match="was never asked"):
        sampler.tell([never], [0])
    with pytest.raises(ValueError, match="must not repeat"):
        sampler.tell([ids[0], ids[0]], [1, 1])
    with pytest.raises(ValueError, match="only 0 and 1"):
        sampler.tell(ids[:1], [2])
    with pytest.raises(ValueError, match="one label per id"):
        sampler.tell(ids[:2], [1])
    assert sampler.labels_used == 0  # nothing recorded by a refused call
    sampler.tell(ids[:2], truth[ids[:2]])
    with pytest.raises(ValueError, match="already labelled"):
        sampler.tell(ids[:1], truth[ids[:1]])
    with pytest.raises(ValueError, match="complete stage"):
        sampler.estimate()  # three items are still pending
    sampler.tell(ids[2:], truth[ids[2:]])
    assert sampler.estimate().labels_used == 5


def test_ask_checks_n_and_what_remains():
    pool, truth = _pool(n=40)
    sampler = Passive(pool, be.measures.Accuracy(), rng=0)
    with pytest.raises(ValueError, match="`n` must be an integer >= 1; got 0"):
        sampler.ask(0)
    with pytest.raises(ValueError, match="`n` must be an integer"):
        sampler.ask(2.5)
    ids = sampler.ask(30)
    with pytest.raises(ValueError, match="at most 10, the items passive can still draw"):
        sampler.ask(11)
    sampler.tell(ids, truth[ids])
    rest = sampler.ask(10)
    sampler.tell(rest, truth[rest])
    with pytest.raises(ValueError, match="at most 0"):
        sampler.ask(1)


def test_importance_samplers_cannot_draw_items_whose_loss_is_always_zero():
    # precision ignores predicted negatives: only the predicted positives can ever be drawn
    pool, truth = _pool(n=200)
    n_pred = int(pool.predictions.sum())
    sampler = StaticIS(pool, be.measures.Precision(), n_strata=4, rng=0)
    with pytest.raises(ValueError, match=f"at most {n_pred}"):
        sampler.ask(n_pred + 1)


def test_estimate_before_labels_and_unsupported_measures():
    pool, _ = _pool()
    with pytest.raises(ValueError, match="needs labels"):
        Passive(pool, be.measures.FScore()).estimate()
    with pytest.raises(ValueError, match="finitely many values"):
        AIS(pool, be.measures.BrierScore())
    with pytest.raises(ValueError, match="regression measure"):
        Passive(pool, be.measures.MeanSquaredError())
    with pytest.raises(ValueError, match="`measure` must be a bayeval.measures measure"):
        Passive(pool, "f1")
    with pytest.raises(ValueError, match="`epsilon0` must be a positive number; got 0"):
        AIS(pool, be.measures.FScore(), epsilon0=0)
    with pytest.raises(ValueError, match="`defensive` must be a number in \\[0, 1\\); got 1"):
        AIS(pool, be.measures.FScore(), defensive=1)
    with pytest.raises(ValueError, match="`response` must be one of"):
        AIS(pool, be.measures.FScore(), response="mean")


def test_explicit_ids_round_trip():
    gen = np.random.default_rng(1)
    scores = gen.random(100)
    ids = np.array([f"doc{i:03d}" for i in range(100)])
    truth = dict(zip(ids, gen.random(100) < scores, strict=True))
    sampler = AIS(be.Pool(scores, ids=ids), be.measures.Accuracy(),
                  model=DirichletTree(depth=2), rng=0)  # fmt: skip
    asked = sampler.ask(10)
    assert asked.dtype.kind == "U" and set(asked) <= set(ids)
    sampler.tell(asked, [truth[i] for i in asked])
    assert sampler.labels_used == 10


def test_dirichlet_tree_options_are_checked():
    with pytest.raises(ValueError, match="`engine` must be one of 'exact', 'pymc'; got 'stan'"):
        DirichletTree(engine="stan")
    with pytest.raises(ValueError, match="`smoothing` must be a positive number; got 0"):
        DirichletTree(smoothing=0)
    with pytest.raises(ValueError, match="`prior_strength` must be a number >= 0"):
        DirichletTree(prior_strength=-1)
    with pytest.raises(ValueError, match="`depth` must be an integer >= 1"):
        DirichletTree(depth=0)


def test_labelled_returns_every_told_id_with_its_label():
    pool, truth = _pool(ids=np.arange(300) + 1000)
    sampler = Passive(pool, be.measures.FScore(), rng=0)
    told = []
    for _ in range(3):
        ids = sampler.ask(10)
        sampler.tell(ids, truth[ids - 1000])
        told.extend(ids.tolist())
    ids, labels = sampler.labelled()
    assert ids.tolist() == told
    np.testing.assert_array_equal(labels, truth[ids - 1000])


def test_the_public_protocol_a_session_uses():
    # told() checks answers without recording them; is_labelled() and pool.ids_at() map back
    pool, truth = _pool(ids=[f"item{i}" for i in range(300)])
    sampler = StaticIS(pool, be.measures.FScore(), n_strata=8, rng=0)
    ids = sampler.ask(5)
    positions, labels = sampler.told(ids, truth[pool.positions(ids)])
    assert sampler.labels_used == 0 and list(pool.ids_at(positions)) == list(ids)
    assert not sampler.is_labelled(positions).any()
    state = dict(sampler.random_state)
    sampler.tell(ids, labels)
    assert sampler.is_labelled(positions).all() and sampler.random_state == state
    with pytest.raises(ValueError, match="one label per id: 5 ids, 4 labels"):
        sampler.told(ids, labels[:4])
