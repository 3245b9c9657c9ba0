"""The OnDemandEvaluator protocol: submit, ask, tell, the tables, and its errors."""

import numpy as np
import pytest

import bayeval as be


@pytest.fixture
def small():
    """Two overlapping systems over string ids; a, b, c, d true; e, f false."""
    return {
        "A": ["a", "b", "c", "e"],
        "B": ["b", "c", "d", "f"],
        "truth": {"a": 1, "b": 1, "c": 1, "d": 1, "e": 0, "f": 0},
    }


def answer(ev, truth):
    ids = ev.ask()
    ev.tell(ids, [truth[x] for x in ids])


def test_submit_returns_the_labels_ask_will_ask_for(small):
    ev = be.ondemand.OnDemandEvaluator(["a", "d"], rng=0)
    k = ev.submit("A", small["A"], n_samples=20)
    assert k == len(ev.ask()) == len(ev.pending)
    assert set(ev.ask()) <= {"b", "c", "e"}  # "a" is in the exhaustive sample: known true
    assert ev.ask(1) == ev.ask()[:1]
    answer(ev, small["truth"])
    assert ev.ask() == [] and ev.pending == []
    ids, labels = ev.labelled()
    assert sorted(ids) == sorted(set(ids)) and set(ids) <= {"b", "c", "e"}
    assert [small["truth"][x] for x in ids] == labels.tolist()


def test_labels_are_reused_across_systems(small):
    ev = be.ondemand.OnDemandEvaluator(["a"], rng=0)
    ev.submit("A", small["A"], n_samples=30)
    answer(ev, small["truth"])
    k = ev.submit("B", small["B"], n_samples=30)
    assert set(ev.ask()) <= {"d", "f"}  # b and c were labelled for A
    assert k <= 2


def test_a_systems_draws_do_not_depend_on_the_order_of_submission(universe):
    def drawn(order, n):
        ev = be.ondemand.OnDemandEvaluator([0], rng=7)
        for name in order:
            ev.submit(name, universe.systems[name], n_samples=n[name])
        return {s.name: np.array(ev._reg.ids(s.draws)) for s in ev._reg.systems}

    first = drawn(["s00", "s01"], {"s00": 50, "s01": 50})
    second = drawn(["s01", "s00"], {"s00": 80, "s01": 20})
    np.testing.assert_array_equal(second["s00"][:50], first["s00"])
    np.testing.assert_array_equal(second["s01"], first["s01"][:20])


def test_a_sample_counts_once_all_of_it_is_labelled(universe):
    ev = be.ondemand.OnDemandEvaluator(universe.exhaustive(50, rng=0), rng=0)
    ev.submit("s00", universe.systems["s00"], n_samples=100)
    assert np.isnan(ev.table().loc["s00", "precision"])  # nothing labelled yet
    pending = ev.ask()
    ev.tell(pending[:-1], universe.label(pending[:-1]))
    tab = ev.table("simple")
    assert tab.loc["s00", "samples"] == 0 and np.isnan(tab.loc["s00", "precision"])
    ev.tell(pending[-1:], universe.label(pending[-1:]))
    tab = ev.table("simple")
    system = ev._reg.systems[0]
    assert tab.loc["s00", "samples"] == 100
    expected = universe.label(ev._reg.ids(system.draws)).mean()
    assert tab.loc["s00", "precision"] == pytest.approx(expected, rel=1e-12)


def test_recall_waits_until_the_pool_is_covered(universe):
    ev = be.ondemand.OnDemandEvaluator(universe.exhaustive(50, rng=0), rng=0)
    ev.submit("s00", universe.systems["s00"], n_samples=40)
    answer(ev, dict(zip(ev.ask(), universe.label(ev.ask()), strict=True)))
    ev.submit("s01", universe.systems["s01"], n_samples=40)  # not answered yet
    tab = ev.table()
    assert tab["recall"].isna().all()  # s01's unique predictions are not yet reachable
    assert np.isfinite(tab.loc["s00", "precision"])
    assert tab["f1"].isna().all()
    simple = ev.table("simple")
    assert simple["recall"].notna().all()  # Y_0 alone


def test_a_system_covered_by_earlier_samples_may_need_no_labels(small):
    ev = be.ondemand.OnDemandEvaluator(["a"], target_se=0.5, rng=0)
    ev.submit("A", small["A"] + small["B"][2:], n_samples=200)  # a superset of B
    answer(ev, small["truth"])
    assert ev.submit("B", small["B"]) == 0
    assert ev.submissions.loc["B", "samples"] == 0
    tab = ev.table()
    assert tab.loc["B", "precision"] == pytest.approx(0.75, abs=0.2)
    assert np.isnan(ev.table("simple").loc["B", "precision"])  # no own draws


def test_weights_give_a_weighted_precision(small):
    # p_B puts 0.7 on "f" (false): precision E_p[f] = 0.3
    ev = be.ondemand.OnDemandEvaluator(["a"], rng=0)
    ev.submit("B", small["B"], weights=[1, 1, 1, 7], n_samples=4000)
    answer(ev, small["truth"])
    # simple estimator: a binomial proportion from 4000 draws, sd 0.0072; 4 sd
    assert ev.table("simple").loc["B", "precision"] == pytest.approx(0.3, abs=0.03)


def test_errors_name_the_parameter_and_change_nothing(small):
    ev = be.ondemand.OnDemandEvaluator(["a"], rng=0)
    with pytest.raises(ValueError, match="`exhaustive` must be a non-empty sequence, each entry a"):
        be.ondemand.OnDemandEvaluator([])
    with pytest.raises(ValueError, match="`target_se` must be a positive number"):
        be.ondemand.OnDemandEvaluator(["a"], target_se=0)
    with pytest.raises(ValueError, match="no system is submitted yet"):
        ev.table()
    ev.submit("A", small["A"], n_samples=10)
    with pytest.raises(ValueError, match="`name` 'A' is already submitted"):
        ev.submit("A", small["B"])
    with pytest.raises(ValueError, match="must not repeat an instance; repeated: \\['b'\\]"):
        ev.submit("C", ["b", "b"])
    with pytest.raises(ValueError, match=r"`predicted_ids` must be a non-empty .*; got \[\]\."):
        ev.submit("C", [])
    with pytest.raises(ValueError, match="`predicted_ids` must be .*; got 'abc'"):
        ev.submit("C", "abc")
    with pytest.raises(ValueError, match=r"hashable id .*\(entry 1 is \['b'\]\)"):
        ev.submit("C", ["a", ["b"]])
    with pytest.raises(ValueError, match=r"`weights` must be .* positive numbers; .*is -1\)"):
        ev.submit("C", ["a", "b"], weights=[1, -1])
    with pytest.raises(ValueError, match="one entry per predicted id \\(2\\)"):
        ev.submit("C", ["a", "b"], weights=[1])
    pending = ev.ask()
    with pytest.raises(ValueError, match="'zz' was never asked"):
        ev.tell([pending[0], "zz"], [1, 1])
    with pytest.raises(ValueError, match="only 0 and 1"):
        ev.tell(pending, [2] * len(pending))
    with pytest.raises(ValueError, match="one label per id"):
        ev.tell(pending, [1])
    with pytest.raises(ValueError, match="`n` must be at most"):
        ev.ask(len(pending) + 1)
    assert ev.pending == pending  # nothing was recorded
    ev.tell(pending, [small["truth"][x] for x in pending])
    with pytest.raises(ValueError, match="is already labelled"):
        ev.tell(pending[:1], [1])
    with pytest.raises(ValueError, match="`estimator` must be one of 'joint', 'simple'"):
        ev.table("pooled")
    with pytest.raises(ValueError, match="`interval` must be one of"):
        ev.table(interval="wald")


def test_intervals_before_any_label_are_nan_without_warnings(universe):
    ev = be.ondemand.OnDemandEvaluator(universe.exhaustive(50, rng=0), rng=0)
    ev.submit("s00", universe.systems["s00"])
    for interval in ("normal", "bootstrap", "bayes"):
        tab = ev.table(interval=interval, n_boot=50, prob=0.975)
        assert tab[["precision", "precision_lower", "recall_upper"]].isna().all().all()
        assert tab.columns.name == f"joint, 97.5% {interval}"


def test_an_estimate_above_one_stays_inside_its_interval():
    # s02 has 3 draws of its own; its joint precision, an unbiased importance-sampling
    # estimate, exceeds 1 here, and its bounds are not clipped away from it.
    uni = be.ondemand.synthetic_universe(
        3, n_true=200, n_false=300, precision=0.8, agreement=0.3, rng=0
    )
    ev = be.ondemand.OnDemandEvaluator(uni.exhaustive(50, rng=0), rng=0)
    for name, n in zip(uni.systems, (30, 5, 3), strict=True):
        ev.submit(name, uni.systems[name], n_samples=n)
        ids = ev.ask()
        ev.tell(ids, uni.label(ids))
    row = ev.table().loc["s02"]
    assert row["precision"] > 1
    assert row["precision_lower"] <= row["precision"] <= row["precision_upper"]
