"""Exchange with other tools: pending questions out, answers in (csv, jsonl, Label Studio)."""

import json
import sqlite3
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

import bayeval as be
from bayeval.models import DirichletTree
from bayeval.session import Session
from bayeval.session.exchange import ImportReport, label_studio_config

GEN = np.random.default_rng(21)
TRUTH = GEN.random(1_500) < 0.08
SCORES = np.where(TRUTH, GEN.beta(5, 2, TRUTH.size), GEN.beta(1, 8, TRUTH.size))
F1 = be.measures.FScore()
SUFFIX = {"csv": ".csv", "jsonl": ".jsonl", "label-studio": ".json"}
FORMATS = list(SUFFIX)
ANN = {"id": 7, "email": "ann@example.org"}


def _pool(ids="default", systems=1):
    scores = SCORES if systems == 1 else np.stack([SCORES, SCORES**2], axis=1)
    names = None if systems == 1 else ["a", "b"]
    if ids == "int":
        return be.Pool(scores, ids=np.arange(SCORES.size) * 3 + 11, systems=names)
    if ids == "str":
        labels = np.array([f"doc-{i}" for i in range(SCORES.size)], dtype=object)
        return be.Pool(scores, ids=labels, systems=names)
    return be.Pool(scores, systems=names)


def _truth(pool):
    """Return ``answer(id) -> 0/1`` for ids as read back from any file (text or number)."""
    text = pool.ids.dtype.kind in "OU"
    return lambda item: int(TRUTH[pool.positions([str(item) if text else int(item)])[0]])


def _fill(fmt, src, dst, answer, users=(ANN,)):
    """Answer every exported question as another tool would: ``answer(id) -> 0/1``."""
    if fmt == "csv":
        sheet = pd.read_csv(src, dtype={"id": str})
        sheet["label"] = [answer(i) for i in sheet["id"]]
        sheet.to_csv(dst, index=False)
    elif fmt == "jsonl":
        rows = [json.loads(line) for line in src.read_text().splitlines()]
        for row in rows:
            row["label"] = bool(answer(row["id"]))
        dst.write_text("".join(json.dumps(row) + "\n" for row in rows))
    else:
        tasks = json.loads(src.read_text())
        export = []
        for k, task in enumerate(tasks, start=1):
            choice = "Positive" if answer(task["data"]["bayeval_id"]) else "Negative"
            annotations = [_annotation(choice, user) for user in users]
            export.append(
                {"id": 40 + k, "data": task["data"], "meta": task["meta"], "drafts": [],
                 "annotations": annotations, "predictions": []}
            )  # fmt: skip
        dst.write_text(json.dumps(export))


def _annotation(choice, user, cancelled=False):
    result = [
        {"id": "r1", "from_name": "label", "to_name": "item", "type": "choices",
         "value": {"choices": [choice]}, "origin": "manual"}
    ]  # fmt: skip
    return {"id": 1, "completed_by": user, "result": result if choice else [],
            "was_cancelled": cancelled, "ground_truth": False, "lead_time": 2.5}  # fmt: skip


def _answer_rows(path):
    return sqlite3.connect(path).execute("SELECT * FROM answers ORDER BY event, rank").fetchall()


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_round_trip_equals_telling_the_labels_directly(tmp_path, fmt):
    pool = _pool()
    sess = Session.create(tmp_path / "s.db", pool, F1, "static_is", rng=3)
    direct = Session.create(tmp_path / "d.db", pool, F1, "static_is", rng=3)
    out, back = tmp_path / f"out{SUFFIX[fmt]}", tmp_path / f"back{SUFFIX[fmt]}"
    asked = []
    for _ in range(2):
        ids = sess.ask(30)
        asked += ids.tolist()
        direct.tell(direct.ask(30), TRUTH[ids])
        assert sess.export_pending(out) == 30
        _fill(fmt, out, back, _truth(pool))
        report = sess.import_answers(back, annotator="ann")
        assert report == ImportReport(recorded=30, skipped=0, rows=30)
    assert sess.labels_count() == 60 and len(sess.pending) == 0
    answers = sess.answers()
    assert answers["id"].tolist() == asked  # in the order asked
    assert answers["label"].tolist() == TRUTH[asked].astype(int).tolist()
    who = "ann@example.org" if fmt == "label-studio" else "ann"
    assert set(answers["annotator"]) == {who} and answers["first"].all()
    mine, theirs = sess.estimate(), direct.estimate()
    np.testing.assert_array_equal(mine.value, theirs.value)
    np.testing.assert_array_equal(mine.covariance, theirs.covariance)
    sess.close()
    direct.close()


@pytest.mark.parametrize("fmt", FORMATS)
def test_importing_the_same_file_twice_changes_nothing(tmp_path, fmt):
    pool = _pool()
    path = tmp_path / "s.db"
    with Session.create(path, pool, F1, "static_is", rng=3) as sess:
        sess.ask(12)
        sess.export_pending(tmp_path / f"q{SUFFIX[fmt]}")
        _fill(fmt, tmp_path / f"q{SUFFIX[fmt]}", tmp_path / f"a{SUFFIX[fmt]}", _truth(pool))
        first = sess.import_answers(tmp_path / f"a{SUFFIX[fmt]}", annotator="ann")
        rows, events = _answer_rows(path), sess._db.execute("SELECT * FROM events").fetchall()
        again = sess.import_answers(tmp_path / f"a{SUFFIX[fmt]}", annotator="ann")
        assert (first.recorded, again.recorded, again.skipped, again.rows) == (12, 0, 12, 12)
        assert _answer_rows(path) == rows
        assert sess._db.execute("SELECT * FROM events").fetchall() == events
        assert sess.labels_count() == 12
    with Session.open(path) as sess:  # and after a reopen
        assert sess.import_answers(tmp_path / f"a{SUFFIX[fmt]}", annotator="ann").recorded == 0


@pytest.mark.parametrize("blind", [True, False])
@pytest.mark.parametrize("kind", ["default", "int", "str"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_ids_keep_their_type_and_the_export_carries_the_questions(tmp_path, kind, fmt, blind):
    pool = _pool(kind)
    with Session.create(tmp_path / "s.db", pool, F1, "static_is", rng=5) as sess:
        asked = sess.ask(6)
        out = tmp_path / f"q{SUFFIX[fmt]}"
        sess.export_pending(out, blind=blind)
        questions = sess._db.execute(
            "SELECT stage, stratum, probability FROM questions ORDER BY event, rank"
        ).fetchall()
        if fmt == "csv":
            sheet = pd.read_csv(out, dtype={"id": str})
            records = sheet.astype(object).where(sheet.notna(), None).to_dict("records")
            exported = [str(i) for i in asked]  # csv has no types: the text of the id
        elif fmt == "jsonl":
            records = [json.loads(line) for line in out.read_text().splitlines()]
            exported = asked.tolist()
        else:
            tasks = json.loads(out.read_text())
            records = [{**t["meta"], "id": t["meta"]["bayeval_id"], **t["data"]} for t in tasks]
            assert [t["data"]["bayeval_id"] for t in tasks] == asked.tolist()
            exported = asked.tolist()
        assert [r["id"] for r in records] == exported
        if fmt != "csv":
            want = str if kind == "str" else int
            assert all(type(r["id"]) is want for r in records)
            assert all(r.get("label") is None and r.get("annotator") is None for r in records)
        if blind:  # the item's id only: nothing of the system or the design
            known = {"id", "label", "annotator", "bayeval_id", "bayeval_session"}
            assert all(set(r) <= known for r in records)
        else:
            got = [(int(r["stage"]), int(r["stratum"]), float(r["probability"])) for r in records]
            assert got == questions
            positions = pool.positions(asked)
            np.testing.assert_allclose([r["score"] for r in records], SCORES[positions])
            assert [int(r["prediction"]) for r in records] == (SCORES[positions] >= 0.5).tolist()
        _fill(fmt, out, tmp_path / f"a{SUFFIX[fmt]}", _truth(pool))
        assert sess.import_answers(tmp_path / f"a{SUFFIX[fmt]}").recorded == 6
        assert sess.answers()["id"].tolist() == asked.tolist()


def test_several_systems_have_a_column_each_and_data_columns_follow(tmp_path):
    pool = _pool("str", systems=2)
    text = pd.DataFrame(
        {"text": [f"text of {i}" for i in pool.ids], "length": np.arange(pool.size)},
        index=pool.ids,
    )
    with Session.create(tmp_path / "s.db", pool, F1, "static_is", rng=2) as sess:
        asked = sess.ask(5)
        sess.export_pending(tmp_path / "q.csv", data=text, blind=False)
        sheet = pd.read_csv(tmp_path / "q.csv")
        assert list(sheet.columns) == [
            "id", "label", "annotator", "stage", "stratum", "probability",
            "score[a]", "score[b]", "prediction[a]", "prediction[b]", "text", "length",
        ]  # fmt: skip
        positions = pool.positions(asked)
        np.testing.assert_allclose(sheet["score[b]"], SCORES[positions] ** 2)
        assert sheet["prediction[a]"].tolist() == pool.predictions[positions, 0].tolist()
        assert sheet["text"].tolist() == [f"text of {i}" for i in asked]
        assert sheet["length"].tolist() == positions.tolist()
        sess.export_pending(tmp_path / "q.json", data=text[["text"]], blind=False)
        task = json.loads((tmp_path / "q.json").read_text())[0]
        assert set(task["data"]) == {
            "bayeval_id", "score[a]", "score[b]", "prediction[a]", "prediction[b]", "text"
        }  # fmt: skip
        sess.export_pending(tmp_path / "blind.json", data=text[["text"]])  # the default
        task = json.loads((tmp_path / "blind.json").read_text())[0]
        assert set(task["data"]) == {"bayeval_id", "text"}
        assert set(task["meta"]) == {"bayeval_id", "bayeval_session"}
        assert task["data"]["text"] == f"text of {asked[0]}"
        _fill("csv", tmp_path / "q.csv", tmp_path / "a.csv", _truth(pool))
        assert sess.import_answers(tmp_path / "a.csv").recorded == 5
        assert sess.estimate().outputs == ("a/f1", "b/f1")


def test_unanswered_rows_are_skipped_and_annotator_column_wins(tmp_path):
    with Session.create(tmp_path / "s.db", _pool(), F1, "static_is", rng=3) as sess:
        asked = sess.ask(6)
        sess.export_pending(tmp_path / "q.csv")
        sheet = pd.read_csv(tmp_path / "q.csv", dtype={"label": object, "annotator": object})
        sheet.loc[:3, "label"] = ["TRUE", "false", "1", "0"]  # rows 4 and 5 not answered yet
        sheet.loc[1, "annotator"] = "bob"
        sheet.to_csv(tmp_path / "a.csv", index=False)
        report = sess.import_answers(tmp_path / "a.csv", annotator="ann")
        assert report == ImportReport(recorded=4, skipped=0, rows=4)
        answers = sess.answers()
        assert answers["id"].tolist() == [asked[0], asked[2], asked[3], asked[1]]  # by annotator
        assert answers["label"].tolist() == [1, 1, 0, 0]
        assert answers["annotator"].tolist() == ["ann", "ann", "ann", "bob"]
        np.testing.assert_array_equal(np.sort(sess.pending), np.sort(asked[4:]))
        assert sess.export_pending(tmp_path / "rest.jsonl") == 2  # what is left, as asked
        rest = [
            json.loads(line)["id"] for line in (tmp_path / "rest.jsonl").read_text().splitlines()
        ]
        assert rest == asked[4:].tolist()


def test_label_studio_several_annotators_are_re_judgements(tmp_path):
    pool = _pool()
    with Session.create(tmp_path / "s.db", pool, F1, "static_is", rng=3) as sess:
        asked = sess.ask(8)
        sess.export_pending(tmp_path / "tasks.json")
        _fill("label-studio", tmp_path / "tasks.json", tmp_path / "export.json", _truth(pool))
        export = json.loads((tmp_path / "export.json").read_text())
        item = export[0]["data"]["bayeval_id"]
        export[0]["annotations"] = [
            _annotation("Positive", {"id": 3, "email": "carol@example.org"}),
            _annotation("Positive", ANN),
            _annotation("Negative", 5),  # a user id only
            _annotation("Negative", {"id": 9}, cancelled=True),  # skipped
            _annotation(None, {"id": 9}),  # an empty result: skipped
        ]
        (tmp_path / "export.json").write_text(json.dumps(export))
        report = sess.import_answers(tmp_path / "export.json")
        assert report == ImportReport(recorded=10, skipped=0, rows=10)
        assert sess.labels_count() == 8
        answers = sess.answers()
        mine = answers[answers["id"] == item]
        assert mine["annotator"].tolist() == ["carol@example.org", ANN["email"], "label-studio:5"]
        assert mine["first"].tolist() == [True, False, False]
        assert mine["label"].tolist() == [1, 1, 0]
        ids, latest = sess.resolved_labels("latest")
        _, majority = sess.resolved_labels("majority")
        at = ids.tolist().index(item)
        assert (latest[at], majority[at]) == (0, 1)  # two votes to one
        assert sess.import_answers(tmp_path / "export.json").recorded == 0
        assert set(asked.tolist()) == set(ids.tolist())


def test_label_studio_custom_choices_and_config(tmp_path):
    pool = _pool("int")
    choices = {"Relevant": 1, "Not relevant": 0}
    config = ET.fromstring(label_studio_config(choices, fields=["text", "my field"]))
    assert config.tag == "View"
    control = config.find("Choices")
    assert control.get("name") == "label" and control.get("toName") == "item"
    assert [c.get("value") for c in control.findall("Choice")] == list(choices)
    texts = {t.get("name"): t.get("value") for t in config.findall("Text")}
    assert texts == {"item": "$bayeval_id", "field_text": "$text", "field_1": "$my field"}
    default = ET.fromstring(label_studio_config())
    assert [c.get("value") for c in default.iter("Choice")] == ["Positive", "Negative"]
    with pytest.raises(ValueError, match="label 0 or 1"):
        label_studio_config({"Maybe": 0.5})
    with Session.create(tmp_path / "s.db", pool, F1, "static_is", rng=3) as sess:
        sess.ask(4)
        sess.export_pending(tmp_path / "tasks.json")
        _fill("label-studio", tmp_path / "tasks.json", tmp_path / "export.json", _truth(pool))
        text = (tmp_path / "export.json").read_text()
        text = text.replace('"Positive"', '"Relevant"').replace('"Negative"', '"Not relevant"')
        (tmp_path / "export.json").write_text(text)
        with pytest.raises(ValueError, match=r"'Not relevant'.*\['Positive', 'Negative'\]"):
            sess.import_answers(tmp_path / "export.json")
        assert sess.import_answers(tmp_path / "export.json", choices=choices).recorded == 4


def _bad_csv(tmp_path, sess, edit):
    sess.export_pending(tmp_path / "q.csv")
    sheet = pd.read_csv(tmp_path / "q.csv", dtype=object)
    sheet["label"] = "1"
    edit(sheet)
    sheet.to_csv(tmp_path / "bad.csv", index=False)
    return tmp_path / "bad.csv"


def _set(row, column, value):
    def edit(sheet):
        sheet.loc[row, column] = value

    return edit


def _conflict(sheet):
    sheet.loc[4, ["id", "label"]] = [sheet.loc[0, "id"], "0"]


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (_set(2, "id", "999999"), r"bad\.csv, line 4: id '999999' is not in the pool"),
        (_set(3, "label", "maybe"), r"bad\.csv, line 5: label 'maybe' is not a label; allowed: "
         "0, 1, true or false"),
        (_set(1, "label", "2"), r"line 3: label '2' is not a label"),
        (_set(4, "id", "1499"), r"line 6: id '1499' was never asked"),
        (_conflict, r"line 6: id .* has label 0 here and 1 at line 2, both by annotator 'ann'"),
    ],
)  # fmt: skip
def test_bad_answers_are_refused_and_nothing_is_recorded(tmp_path, edit, match):
    path = tmp_path / "s.db"
    with Session.create(path, _pool(), F1, "static_is", rng=3) as sess:
        asked = sess.ask(6)
        assert 1499 not in asked
        bad = _bad_csv(tmp_path, sess, edit)
        with pytest.raises(ValueError, match=match):
            sess.import_answers(bad, annotator="ann")
        assert sess.labels_count() == 0 and len(sess.pending) == 6
    assert _answer_rows(path) == []


def test_bad_jsonl_and_label_studio_files_record_nothing(tmp_path):
    path = tmp_path / "s.db"
    with Session.create(path, _pool("str"), F1, "static_is", rng=3) as sess:
        asked = sess.ask(3)
        lines = [{"id": asked[0], "label": 1, "annotator": "a"}, {"id": "doc-x", "label": 0}]
        (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(r) for r in lines))
        with pytest.raises(ValueError, match=r"a\.jsonl, line 2: id 'doc-x' is not in the pool"):
            sess.import_answers(tmp_path / "a.jsonl")
        (tmp_path / "b.jsonl").write_text('{"id": "doc-1", "label": "yes"}\n')
        with pytest.raises(ValueError, match=r"b\.jsonl, line 1: label 'yes' is not a label"):
            sess.import_answers(tmp_path / "b.jsonl")
        (tmp_path / "c.jsonl").write_text('{"id": "doc-1", "label": 1\n')
        with pytest.raises(ValueError, match=r"c\.jsonl, line 1: not valid JSON"):
            sess.import_answers(tmp_path / "c.jsonl")
        (tmp_path / "t.json").write_text(json.dumps({"text": "not a list"}))
        with pytest.raises(ValueError, match="JSON list of tasks"):
            sess.import_answers(tmp_path / "t.json")
        tasks = [
            {"id": 1, "data": {"bayeval_id": asked[0]},
             "annotations": [_annotation("Positive", 1)]},
            {"id": 2, "data": {"text": "?"}, "annotations": []},
        ]  # fmt: skip
        (tmp_path / "u.json").write_text(json.dumps(tasks))
        with pytest.raises(ValueError, match=r"task 2 \(Label Studio id 2\).*no 'bayeval_id'"):
            sess.import_answers(tmp_path / "u.json")
        tasks[1] = {
            "id": 5,
            "data": {"bayeval_id": "doc-nope"},
            "annotations": tasks[0]["annotations"],
        }
        (tmp_path / "v.json").write_text(json.dumps(tasks))
        with pytest.raises(ValueError, match=r"task 2 \(Label Studio id 5\), annotation 1: id "):
            sess.import_answers(tmp_path / "v.json")
    assert _answer_rows(path) == []


def test_an_export_of_another_session_is_refused_and_records_nothing(tmp_path):
    # the same pool, asked the same items: only the tasks' session key tells them apart
    paths = tmp_path / "a.db", tmp_path / "b.db"
    for path in paths:
        with Session.create(path, _pool("str"), F1, "static_is", rng=3) as sess:
            asked = sess.ask(3)
    with Session.open(paths[0]) as sess:
        sess.export_pending(tmp_path / "tasks.json")
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    for task in tasks:
        task["annotations"] = [_annotation("Positive", 1)]
    (tmp_path / "export.json").write_text(json.dumps(tasks))
    with Session.open(paths[1]) as other:
        with pytest.raises(ValueError, match=r"export\.json, task 1: the task was written for "
                                             "another session"):  # fmt: skip
            other.import_answers(tmp_path / "export.json")
        assert other.answers().empty
    with Session.open(paths[0]) as sess:  # its own session takes it
        assert sess.import_answers(tmp_path / "export.json").recorded == len(asked)


def test_bad_formats_and_data_are_refused(tmp_path):
    pool = _pool("int")
    with Session.create(tmp_path / "s.db", pool, F1, "static_is", rng=3) as sess:
        asked = sess.ask(4)
        with pytest.raises(ValueError, match="`format` must be one of 'csv', 'jsonl', 'label-s"):
            sess.export_pending(tmp_path / "q.csv", format="xlsx")
        with pytest.raises(ValueError, match=r"`format` must be one of .*'\.txt'"):
            sess.export_pending(tmp_path / "q.txt")
        with pytest.raises(ValueError, match="`format` must be one of"):
            sess.import_answers(tmp_path / "q.csv", format="excel")
        frame = pd.DataFrame({"text": ["x"] * 3}, index=asked[:3])
        with pytest.raises(ValueError, match=rf"row for every pending id; 1 missing.*{asked[3]}"):
            sess.export_pending(tmp_path / "q.csv", data=frame)
        with pytest.raises(ValueError, match=r"columns named like the exported fields; \['score'"):
            sess.export_pending(
                tmp_path / "q.csv", data=pd.DataFrame({"score": 1}, index=asked), blind=False
            )
        with pytest.raises(ValueError, match=r"columns named like the exported fields; \['label'"):
            sess.export_pending(tmp_path / "q.csv", data=pd.DataFrame({"label": 1}, index=asked))
        with pytest.raises(ValueError, match="needs the columns 'id' and 'label'"):
            (tmp_path / "x.csv").write_text("item,answer\n1,1\n")
            sess.import_answers(tmp_path / "x.csv")
        with pytest.raises(ValueError, match="`choices` applies to Label Studio files only"):
            sess.import_answers(tmp_path / "x.csv", choices={"Yes": 1})
        with pytest.raises(ValueError, match="must be an existing file"):
            sess.import_answers(tmp_path / "missing.csv")
        assert not (tmp_path / "q.csv").exists()


def test_empty_export_and_read_only_sessions(tmp_path):
    path = tmp_path / "s.db"
    with Session.create(path, _pool(), F1, "static_is", rng=3) as sess:
        for fmt in FORMATS:
            assert sess.export_pending(tmp_path / f"e{SUFFIX[fmt]}") == 0
        assert json.loads((tmp_path / "e.json").read_text()) == []
        assert (tmp_path / "e.csv").read_text() == "id,label,annotator\n"  # blind
        sess.ask(3)
        sess.export_pending(tmp_path / "q.csv")
        _fill("csv", tmp_path / "q.csv", tmp_path / "a.csv", _truth(_pool()))
    with Session.open(path, read_only=True) as sess:
        assert sess.export_pending(tmp_path / "again.csv") == 3  # exporting needs no lock
        with pytest.raises(RuntimeError, match="read-only"):
            sess.import_answers(tmp_path / "a.csv")


def test_stochastic_ais_exports_one_row_per_draw_and_refuses_a_second_import(tmp_path):
    path = tmp_path / "s.db"
    pool = _pool()
    options = {"model": DirichletTree(depth=3)}
    with Session.create(path, pool, F1, "stochastic_ais", rng=3, **options) as sess:
        asked = sess.ask(40)
        assert np.unique(asked).size < asked.size  # some items drawn twice
        assert sess.export_pending(tmp_path / "q.jsonl") == 40
        _fill("jsonl", tmp_path / "q.jsonl", tmp_path / "a.jsonl", _truth(pool))
        assert sess.import_answers(tmp_path / "a.jsonl").recorded == 40
        assert sess.labels_count() == 40 and len(sess.pending) == 0
        with pytest.raises(ValueError, match="has no draw waiting"):
            sess.import_answers(tmp_path / "a.jsonl")
        assert sess.labels_count() == 40


def test_stop_reason(tmp_path):
    with Session.create(tmp_path / "s.db", _pool(), F1, "static_is", rng=3) as sess:
        assert sess.stop_reason(width=10.0, budget=100) is None  # no labels yet
        ids = sess.ask(40)
        sess.tell(ids[:20], TRUTH[ids[:20]])
        assert sess.stop_reason(width=10.0) is None  # no complete stage: no estimate yet
        assert sess.stop_reason(budget=20) == "budget spent: 20 labels"
        sess.tell(ids[20:], TRUTH[ids[20:]])
        est = sess.estimate().interval(0.9)
        width = float(est.sel(ci_bound="upper").max() - est.sel(ci_bound="lower").min())
        assert 0 < width < 10
        assert sess.stop_reason(width=10.0, prob=0.9) == f"interval width {width:.3g} < 10 at 90%"
        assert sess.stop_reason(width=1e-9, budget=41) is None  # never that narrow
        assert sess.stop_reason(width=1e-9, budget=40) == "budget spent: 40 labels"
        assert sess.stop_reason() is None
        for bad, match in [
            ({"width": 0}, "`width` must be a positive number"),
            ({"width": float("nan")}, "`width` must be a positive number"),
            ({"width": "0.1"}, "`width` must be a positive number"),
            ({"budget": 0}, "`budget` must be an integer >= 1"),
            ({"budget": 2.5}, "`budget` must be an integer >= 1"),
            ({"width": 0.1, "prob": 1.0}, "`prob` must be in the open interval"),
        ]:
            with pytest.raises(ValueError, match=match):
                sess.stop_reason(**bad)


def test_a_repeated_answer_in_one_file_is_read_once_and_re_judgements_are_kept(tmp_path):
    with Session.create(tmp_path / "s.db", _pool("int"), F1, "static_is", rng=3) as sess:
        asked = sess.ask(2).tolist()
        rows = [
            {"id": asked[0], "label": 1, "annotator": "ann"},
            {"id": str(asked[1]), "label": "false", "annotator": "ann"},
            {"id": float(asked[0]), "label": True, "annotator": "ann"},  # the same answer again
        ]
        (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        report = sess.import_answers(tmp_path / "a.jsonl")
        assert report == ImportReport(recorded=2, skipped=1, rows=3)
        (tmp_path / "b.jsonl").write_text(json.dumps({"id": asked[0], "label": 0}) + "\n")
        assert sess.import_answers(tmp_path / "b.jsonl", annotator="bob").recorded == 1
        answers = sess.answers()
        assert answers["annotator"].tolist() == ["ann", "ann", "bob"]
        assert answers["first"].tolist() == [True, True, False]
        assert sess.resolved_labels("latest")[1].tolist() == [0, 0]


def test_a_design_interval_of_zero_width_falls_back_to_the_posterior(tmp_path):
    """Ten right predictions: accuracy 1 with se 0, which says nothing about the 490 others."""
    pool = be.Pool(np.linspace(0, 0.4, 500))  # no item predicted positive
    with Session.create(tmp_path / "z.db", pool, be.measures.Accuracy(), "passive", rng=0) as sess:
        ids = sess.ask(10)
        sess.tell(ids, np.zeros(10, int))  # every prediction right: accuracy 1, se 0
        assert float(sess.estimate().standard_error[0]) == 0.0
        interval = sess.estimate().interval(0.95)
        assert interval.attrs["fallback"] == ["accuracy"]
        width = float(interval.sel(ci_bound="upper")[0] - interval.sel(ci_bound="lower")[0])
        assert 0.01 < width < 0.5
        assert sess.stop_reason(width=0.01) is None
        assert sess.stop_reason(width=0.5).startswith("interval width")
