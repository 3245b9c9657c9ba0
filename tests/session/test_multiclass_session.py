"""Sessions of a multiclass pool: class labels stored, replayed, resolved and exchanged."""

import json
import sqlite3
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

import bayeval as be
from bayeval.measures import ClassMeasure
from bayeval.session import Session
from bayeval.session.exchange import label_studio_config
from bayeval.simulate.multiclass_pools import multiclass_pool

CLASSES = ("cat", "dog", "bird", "fish", "frog")
PREDICTED, CONFIDENCE, TRUTH = multiclass_pool("overconfident", np.random.default_rng(4), 1_500)
MACRO = ClassMeasure("macro_f1", n_classes=5)


def _pool():
    return be.Pool(CONFIDENCE, PREDICTED, classes=CLASSES)


def _names(positions):
    return np.array(CLASSES)[TRUTH[positions]]


@pytest.mark.parametrize("sampler", ["passive", "stratified", "active_stratified"])
def test_class_labels_are_stored_and_a_reopened_session_gives_the_same_estimate(tmp_path, sampler):
    path = tmp_path / "s.db"
    with Session.create(path, _pool(), MACRO, sampler, rng=5) as sess:
        for _ in range(3):
            ids = sess.ask(40)
            sess.tell(ids, _names(ids), annotator="ann")
        before = sess.estimate()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 2
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    assert json.loads(meta["classes"]) == list(CLASSES)
    stored = [r[0] for r in db.execute("SELECT label FROM answers ORDER BY event, rank")]
    assert max(stored) > 1  # class indices, not 0/1
    db.close()
    with Session.open(path) as sess:
        assert sess.sampler.pool.classes == CLASSES
        after = sess.estimate()
        ids, labels = sess.resolved_labels()
        np.testing.assert_array_equal(labels, TRUTH[ids])
        np.testing.assert_array_equal(after.value, before.value)
        np.testing.assert_array_equal(
            after.interval(basis="posterior").values, before.interval(basis="posterior").values
        )


def test_a_label_outside_the_classes_records_nothing(tmp_path):
    with Session.create(tmp_path / "s.db", _pool(), MACRO, "passive", rng=1) as sess:
        ids = sess.ask(2)
        with pytest.raises(ValueError, match=r"`labels` must contain .*; entry 0 is 'cow'"):
            sess.tell(ids, ["cow", "cat"])
        assert sess.labels_count() == 0
        sess.tell(ids, ["frog", 0])
        assert sess.answers()["label"].tolist() == [4, 0]


def test_a_majority_is_a_plurality_and_a_tie_goes_to_the_latest_answer(tmp_path):
    with Session.create(
        tmp_path / "s.db", _pool(), MACRO, "passive", rng=2, label_rule="majority"
    ) as sess:
        a, b = sess.ask(2)
        sess.tell([a, b], ["bird", "bird"], annotator="x")
        sess.tell([a, b], ["bird", "cat"], annotator="y")
        sess.tell([a, b], ["dog", "dog"], annotator="z")
        # a: bird twice, dog once -> bird; b: bird, cat, dog once each -> the latest (dog)
        ids, labels = sess.resolved_labels()
        assert dict(zip(ids.tolist(), labels.tolist(), strict=True)) == {int(a): 2, int(b): 1}


def test_the_annotators_model_has_every_class_even_before_it_is_answered(tmp_path):
    with Session.create(tmp_path / "s.db", _pool(), MACRO, "passive", rng=3) as sess:
        ids = sess.ask(30)
        sess.tell(ids, np.where(TRUTH[ids] > 1, 1, TRUTH[ids]), annotator="x")  # 0 and 1 only
        probability = sess.annotator_posterior().label_probability()
        assert list(probability.columns) == [0, 1, 2, 3, 4]
        sess.tell(ids, TRUTH[ids], annotator="y")  # a second, better annotator
        est = sess.estimate(label_rule="dawid-skene")
        assert est.posterior["posterior"]["macro_f1"].sizes["draw"] == 1000


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "label-studio"])
def test_answers_by_class_name_or_index_round_trip_through_a_file(tmp_path, fmt):
    pool = _pool()
    suffix = {"csv": ".csv", "jsonl": ".jsonl", "label-studio": ".json"}[fmt]
    out, back = tmp_path / f"out{suffix}", tmp_path / f"back{suffix}"
    with Session.create(tmp_path / "s.db", pool, MACRO, "passive", rng=4) as sess:
        asked = sess.ask(12)
        assert sess.export_pending(out, blind=False) == 12
        if fmt == "csv":
            sheet = pd.read_csv(out)
            assert set(sheet["prediction"]) <= set(CLASSES)  # the predicted class by name
            sheet["label"] = [
                CLASSES[TRUTH[i]] if k % 2 else int(TRUTH[i]) for k, i in enumerate(sheet["id"])
            ]
            sheet.to_csv(back, index=False)
        elif fmt == "jsonl":
            rows = [json.loads(line) for line in out.read_text().splitlines()]
            for row in rows:
                row["label"] = CLASSES[TRUTH[row["id"]]]
            back.write_text("".join(json.dumps(row) + "\n" for row in rows))
        else:
            config = ET.fromstring(label_studio_config(classes=CLASSES))
            assert [c.get("value") for c in config.iter("Choice")] == list(CLASSES)
            export = [
                {"id": k, "data": task["data"], "meta": task["meta"], "annotations": [
                    {"completed_by": {"id": 3}, "was_cancelled": False, "result": [
                        {"from_name": "label", "to_name": "item", "type": "choices",
                         "value": {"choices": [CLASSES[TRUTH[task["data"]["bayeval_id"]]]]}}
                    ]}
                ]}
                for k, task in enumerate(json.loads(out.read_text()))
            ]  # fmt: skip
            back.write_text(json.dumps(export))
        assert sess.import_answers(back, annotator="ann").recorded == 12
        ids, labels = sess.resolved_labels()
        assert sorted(ids.tolist()) == sorted(asked.tolist())
        np.testing.assert_array_equal(labels, TRUTH[ids])


@pytest.mark.parametrize(
    ("label", "match"),
    [
        ("cow", r"label 'cow' is not a class; allowed: the names \['cat', .*indices 0 \.\. 4"),
        ("true", r"label 'true' is not a class"),
        ("7", r"label '7' is not a class"),
    ],
)
def test_a_file_with_a_label_outside_the_classes_records_nothing(tmp_path, label, match):
    with Session.create(tmp_path / "s.db", _pool(), MACRO, "passive", rng=6) as sess:
        sess.ask(3)
        sess.export_pending(tmp_path / "out.csv")
        sheet = pd.read_csv(tmp_path / "out.csv")
        sheet["label"] = ["cat", label, "dog"]
        sheet.to_csv(tmp_path / "back.csv", index=False)
        with pytest.raises(ValueError, match=match):
            sess.import_answers(tmp_path / "back.csv")
        assert sess.labels_count() == 0


def test_label_studio_choices_of_a_multiclass_pool_map_to_class_indices():
    from bayeval.session.label_studio import check_choices

    assert check_choices(None, CLASSES) == {c: k for k, c in enumerate(CLASSES)}
    assert check_choices({"Kitty": 0, "Toad": 4}, CLASSES) == {"Kitty": 0, "Toad": 4}
    with pytest.raises(ValueError, match=r"to a class index 0 \.\. 4; got 'Newt': 5"):
        check_choices({"Newt": 5}, CLASSES)
    with pytest.raises(ValueError, match=r"to a label 0 or 1; got 'Cat': 2"):
        check_choices({"Cat": 2})


def test_a_pool_with_a_judges_classes_is_stored_and_reopened_with_them(tmp_path):
    judge = (TRUTH + (np.arange(TRUTH.size) % 7 == 0)) % 5  # the truth, but one item in seven
    pool = be.Pool(CONFIDENCE, PREDICTED, judge=np.array(CLASSES)[judge], classes=CLASSES)
    path = tmp_path / "s.db"
    with Session.create(path, pool, MACRO, "passive", rng=2) as sess:
        ids = sess.ask(80)
        sess.tell(ids, _names(ids), annotator="ann")
        before = sess.estimate()
    with Session.open(path) as sess:
        np.testing.assert_array_equal(sess.sampler.pool.judge, judge)
        after = sess.estimate()
    np.testing.assert_array_equal(
        after.interval(basis="posterior").values, before.interval(basis="posterior").values
    )
    # the judge reached the model: the posterior's cells are cut by its classes
    assert before.posterior["constant_data"]["cell_judge"].size == 25
