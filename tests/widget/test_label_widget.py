"""The labelling widget's Python side: every action goes through the session, bad ones change
nothing, and a widget on a reopened session goes on where the last one stopped.

The front end's messages are sent as the browser sends them (``_handle_custom_msg``); the
browser itself is ``test_label_widget_browser.py``.
"""

import numpy as np
import pandas as pd
import pytest

import bayeval as be
from bayeval.session import Session

SCORES = np.random.default_rng(0).random(300)
TRUTH = (np.random.default_rng(1).random(300) < SCORES).astype(int)


def _session(path, sampler="passive"):
    ids = [f"doc-{i}" for i in range(300)]
    pool = be.Pool(SCORES, ids=ids)
    return Session.create(path, pool, be.measures.FScore(), sampler, rng=2)


def _texts():
    return pd.DataFrame({"id": [f"doc-{i}" for i in range(300)], "score": SCORES,
                         "text": [f"text {i}" for i in range(300)],
                         "image": [f"img/{i}.png" for i in range(300)]})  # fmt: skip


def _answer(widget, choice):
    widget._handle_custom_msg({"type": "answer", "item": widget.item, "choice": int(choice)}, [])


def test_answers_skip_and_undo_are_recorded_in_the_session(tmp_path):
    sess = _session(tmp_path / "s.db")
    widget = be.label(sess, _texts(), annotator="ann", batch_size=4, budget=8)
    # blind: the item's text and image, not the score the pool file holds
    names = [name for name, _, _ in widget.fields]
    assert names == ["id", "text", "image"]
    assert widget.fields[2][2] == "image" and widget.fields[1][2] == "text"
    first = widget.item
    widget._handle_custom_msg({"type": "skip", "item": first}, [])
    assert widget.item != first and sess.answers().empty  # skipped: nothing recorded
    answered = []
    for _ in range(3):
        answered.append(widget.item)
        _answer(widget, 1 - TRUTH[int(widget.item[4:])])  # choice 0 is Positive
    assert widget.item == first  # the skipped item comes back after the other pending ones
    widget._handle_custom_msg({"type": "undo"}, [])  # answer the previous one again
    assert widget.item == answered[-1] and widget.title.startswith("re-judging")
    truth = TRUTH[int(answered[-1][4:])]
    _answer(widget, truth)  # the other label this time
    assert widget.item == first
    kept = sess.answers()
    assert kept["id"].tolist() == [*answered, answered[-1]]
    assert kept["annotator"].eq("ann").all()
    # the re-judgement is kept beside the first answer
    assert kept["label"].tolist()[-2:] == [truth, 1 - truth]
    while not widget.done:
        _answer(widget, 1 - TRUTH[int(widget.item[4:])])
    assert sess.labels_count() == 8 and widget.progress == {"labels": 8, "budget": 8, "pending": 0}
    assert "f1" in widget.estimate and "95% interval" in widget.estimate
    assert widget.item == "" and widget.fields == []
    sess.close()


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ({"type": "answer", "item": "doc-999", "choice": 0}, "is not the one shown"),
        ({"type": "answer", "choice": 2}, "choice 2 is not one of 0 .. 1"),
        ({"type": "answer", "choice": "yes"}, "choice 'yes' is not one of 0 .. 1"),
        ({"type": "answer", "choice": True}, "choice True is not one of 0 .. 1"),
        ({"type": "erase", "item": None}, "unknown action"),
        ("y", "unknown action"),
        ({"type": "undo"}, "nothing to undo"),
    ],
)
def test_bad_actions_change_nothing_and_say_why(tmp_path, content, says):
    with _session(tmp_path / "s.db") as sess:
        widget = be.label(sess)
        shown = widget.item
        if isinstance(content, dict) and "item" not in content:
            content = {**content, "item": shown}
        widget._handle_custom_msg(content, [])
        assert says in widget.message
        assert widget.item == shown and sess.answers().empty


def test_a_widget_on_the_reopened_session_goes_on_where_it_stopped(tmp_path):
    path = tmp_path / "s.db"
    sess = _session(path, "ais")
    widget = be.label(sess, batch_size=5)
    for _ in range(3):
        _answer(widget, 1 - TRUTH[int(widget.item[4:])])
    following = widget.item
    sess.close()  # the kernel restarts
    again = be.label(Session.open(path), batch_size=5)
    assert again.item == following  # the pending questions first, in the order asked
    assert again.progress["labels"] == 3 and again.progress["pending"] == 2
    again.session.close()


def test_unblinded_the_system_is_shown_and_a_multiclass_pool_has_a_button_per_class(tmp_path):
    with _session(tmp_path / "s.db") as sess:
        widget = be.label(sess, _texts(), unblind=True)
        assert [name for name, _, _ in widget.fields] == [
            "id", "score", "text", "image", "score", "prediction"
        ]  # fmt: skip
    classes = ["cat", "dog", "bird"]
    pool = be.Pool(SCORES, np.arange(300) % 3, classes=classes)
    measure = be.measures.ClassMeasure("accuracy", n_classes=3)
    with Session.create(tmp_path / "m.db", pool, measure, "passive", rng=1) as sess:
        widget = be.label(sess)
        assert widget.choices == [{"name": "cat", "key": "1"}, {"name": "dog", "key": "2"},
                                  {"name": "bird", "key": "3"}]  # fmt: skip
        _answer(widget, 2)
        assert sess.answers()["label"].tolist() == [2]


def test_data_that_is_not_a_frame_is_refused_naming_it(tmp_path):
    with _session(tmp_path / "s.db") as sess:
        with pytest.raises(ValueError, match="`data` must be a pandas DataFrame indexed by pool"):
            be.label(sess, {"text": ["a"]})
