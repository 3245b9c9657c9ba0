"""``bayeval label``, ``status``, ``export`` and ``import`` on session files."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import bayeval as be
from bayeval.cli import _labelling as labelling
from bayeval.cli import app
from bayeval.session import Session

runner = CliRunner()
BATCH = 3
SAMPLER = "static_is"  # fast to build and replay; one test uses the default, ais


def _flat(text: str) -> str:
    """Join an error box's wrapped lines, so messages can be searched for whole."""
    return " ".join(text.replace("│", " ").split())


@pytest.fixture
def pool_csv(tmp_path):
    """200 scored items with string ids (about 20% positives among high scores)."""
    gen = np.random.default_rng(4)
    truth = gen.random(200) < 0.2
    score = np.where(truth, gen.beta(5, 2, truth.size), gen.beta(1, 5, truth.size)).round(6)
    path = tmp_path / "pool.csv"
    pd.DataFrame({"id": [f"r{i:03d}" for i in range(truth.size)], "score": score}).to_csv(
        path, index=False
    )
    return path


def _first_questions(pool_csv, tmp_path, sampler=SAMPLER):
    """The ids a session of the same pool, sampler and seed asks first."""
    df = pd.read_csv(pool_csv)
    pool = be.Pool(df["score"].to_numpy(), ids=df["id"].to_numpy())
    path = tmp_path / f"expected-{sampler}.db"
    with Session.create(path, pool, be.measures.FScore(), sampler, rng=3) as sess:
        return sess.ask(BATCH).tolist()


def _label(path, *args, input="", pool=None, sampler=SAMPLER):
    options = ["label", str(path), "--batch-size", str(BATCH), *args]
    if pool is not None:  # a new session
        options += ["--pool", str(pool), "--seed", "3", "--sampler", sampler]
    return runner.invoke(app, options, input=input)


def _answers(path):
    with Session.open(path, read_only=True) as sess:
        return sess.answers(), sess.pending.tolist(), sess.labels_count()


def test_label_creates_a_session_and_saves_every_answer(tmp_path, pool_csv):
    path = tmp_path / "labels.db"
    options = ["label", str(path), "--pool", str(pool_csv), "--seed", "3", "--annotator", "ann",
               "--batch-size", "3"]  # fmt: skip
    result = runner.invoke(app, options, input="y\nn\ny\nq\n")  # the default sampler, ais
    assert result.exit_code == 0, result.output
    out = result.stdout
    shown = re.findall(r"^label \d+ \(id '(\w+)'\)$", out, re.MULTILINE)
    with Session.open(path, read_only=True) as sess:
        answers, pending = sess.answers(), sess.pending.tolist()
        est = sess.estimate()
        assert sess.meta["sampler"] == "ais" and sess.labels_count() == 3
        assert sess.sampler.batch_size == 50  # --batch-size is the size of each ask
    assert answers["id"].tolist() == shown[:3]  # the items shown, in order
    assert answers["label"].tolist() == [1, 0, 1]
    assert set(answers["annotator"]) == {"ann"} and answers["first"].all()
    # q was typed at the first item of the next batch: asked, so pending
    assert len(pending) == BATCH and shown[3] in pending and not set(pending) & set(shown[:3])
    assert f"created session {path}: ais for f1, seed 3, label rule latest" in out
    assert "[#" not in out  # no --budget: no bar
    assert "1 labels | 2 pending | no complete stage yet" in out
    ci = est.interval(0.95)
    low, high = ci.sel(ci_bound="lower").values[0], ci.sel(ci_bound="upper").values[0]
    assert f"3 labels | f1 {est.value[0]:.4f} [{low:.4f}, {high:.4f}] width" in out
    assert f"quit: every answer given is saved in {path}" in out


def test_the_item_fields_come_from_data_or_the_pool(tmp_path, pool_csv):
    path = tmp_path / "labels.db"
    first = _first_questions(pool_csv, tmp_path)
    data = tmp_path / "records.csv"
    # a --data table that also holds a system's score (as a pool file does): blind, it is not
    # shown
    records = pd.DataFrame({"id": first[:1], "name": ["Ada Lovelace"], "score": [0.123456]})
    records.to_csv(data, index=False)
    result = _label(path, "--data", str(data), input="y\ny\nq\n", pool=pool_csv)
    assert result.exit_code == 0, result.output
    assert "Ada Lovelace" in result.stdout and "0.123456" not in result.stdout
    assert f"--data has no row with id '{first[1]}'" in _flat(result.stdout)
    score = pd.read_csv(pool_csv).set_index("id").loc[first[2], "score"]
    result = _label(path, input="q\n")  # continued: the session's pool fields, blind
    assert result.exit_code == 0, result.output
    assert f"continuing session {path}" in _flat(result.stdout)
    assert f"id {first[2]!r}" in result.stdout and str(score)[:6] not in result.stdout
    result = _label(path, "--unblind", input="q\n")  # asked for: the system's score too
    assert result.exit_code == 0, result.output
    assert f"id {first[2]!r}" in result.stdout and str(score)[:6] in result.stdout


def test_a_judge_column_joins_the_session_and_is_never_shown(tmp_path, pool_csv):
    df = pd.read_csv(pool_csv)
    judged = tmp_path / "judged.csv"
    df.assign(gpt=(df["score"] > 0.4).astype(int)).to_csv(judged, index=False)
    path = tmp_path / "labels.db"
    options = ["label", str(path), "--pool", str(judged), "--judge-column", "gpt", "--seed", "3"]
    result = runner.invoke(app, options, input="y\nq\n")
    assert result.exit_code == 0, result.output
    assert "gpt" not in result.stdout  # the annotator is not told what the judge said
    with Session.open(path, read_only=True) as sess:
        np.testing.assert_array_equal(sess.sampler.pool.judge, df["score"] > 0.4)
    # the same file without its judge is another pool: the session refuses it
    result = runner.invoke(app, ["label", str(path), "--pool", str(judged)], input="q\n")
    assert result.exit_code == 2
    assert "holds other items, scores, predictions, judge or classes" in _flat(result.output)


def test_skip_leaves_the_item_pending_until_it_comes_back(tmp_path, pool_csv):
    path = tmp_path / "labels.db"
    first = _first_questions(pool_csv, tmp_path)
    result = _label(path, input="s\ny\nn\nq\n", pool=pool_csv)
    assert result.exit_code == 0, result.output
    assert "skipped: it stays pending" in result.stdout
    answers, pending, labels = _answers(path)
    assert answers["id"].tolist() == first[1:] and answers["label"].tolist() == [1, 0]
    assert pending == first[:1] and labels == 2
    # the skipped item came back after the others: q was typed at it
    shown = re.findall(r"^label (\d+) \(id '(\w+)'\)$", result.stdout, re.MULTILINE)
    assert shown == [("1", first[0]), ("1", first[1]), ("2", first[2]), ("3", first[0])]
    # a new run answers the pending question first
    result = _label(path, input="y\nq\n")
    assert result.exit_code == 0, result.output
    answers, pending, labels = _answers(path)
    assert answers["id"].tolist() == [*first[1:], first[0]] and labels == 3
    assert len(pending) == BATCH and not set(pending) & set(first)  # q at the next batch


def test_undo_records_a_rejudgement_and_deletes_nothing(tmp_path, pool_csv):
    path = tmp_path / "labels.db"
    first = _first_questions(pool_csv, tmp_path)
    # u with nothing answered; y; u (back to item 1) n; item 2 y; u u (back to 2, then 1) y;
    # then item 3 n; q
    keys = ["u", "y", "u", "n", "y", "u", "u", "y", "n", "q"]
    result = _label(path, "--annotator", "ann", input="\n".join(keys) + "\n", pool=pool_csv)
    assert result.exit_code == 0, result.output
    assert "nothing to undo" in result.stdout
    assert f"re-judging id {first[0]!r} (your earlier answer: positive)" in result.stdout
    assert "recorded as a re-judgement, nothing is deleted" in _flat(result.stdout)  # help
    answers, pending, labels = _answers(path)
    assert list(zip(answers["id"], answers["label"], answers["first"], strict=True)) == [
        (first[0], 1, True),
        (first[0], 0, False),
        (first[1], 1, True),
        (first[0], 1, False),
        (first[2], 0, True),
    ]
    assert labels == 3 and len(pending) == BATCH  # q at the next batch
    with Session.open(path, read_only=True) as sess:
        ids, resolved = sess.resolved_labels()
    assert dict(zip(ids.tolist(), resolved.tolist(), strict=True)) == {
        first[0]: 1, first[1]: 1, first[2]: 0,
    }  # fmt: skip
    # undo in a later run goes back to this annotator's last answer
    result = _label(path, "--annotator", "ann", input="u\ny\nq\n")
    assert result.exit_code == 0, result.output
    assert f"re-judging id {first[2]!r} (your earlier answer: negative)" in result.stdout
    answers, _, _ = _answers(path)
    assert answers.iloc[-1][["id", "label", "first"]].tolist() == [first[2], 1, False]


def test_quit_and_end_of_input_keep_everything(tmp_path, pool_csv):
    path = tmp_path / "labels.db"
    result = _label(path, input="y\nmaybe\nn\n", pool=pool_csv)  # input ends at item 3
    assert result.exit_code == 0, result.output
    assert "'maybe': answer y, n, s, u or q" in result.stdout
    assert "end of input" in result.stdout
    answers, pending, labels = _answers(path)
    assert answers["label"].tolist() == [1, 0] and labels == 2 and len(pending) == 1


def test_ctrl_c_quits_with_every_answer_saved(tmp_path, pool_csv, monkeypatch):
    keys = iter(["y", "n"])

    def read(prompt, console):
        try:
            return next(keys)
        except StopIteration:
            raise KeyboardInterrupt from None

    monkeypatch.setattr(labelling, "read_line", read)
    path = tmp_path / "labels.db"
    result = _label(path, pool=pool_csv)
    assert result.exit_code == 130, result.output
    assert f"interrupted: every answer given is saved in {path}" in _flat(result.stdout)
    assert "Traceback" not in result.output
    answers, pending, labels = _answers(path)
    assert answers["label"].tolist() == [1, 0] and labels == 2 and len(pending) == 1


def test_budget_stops_the_loop(tmp_path, pool_csv):
    path = tmp_path / "labels.db"
    result = _label(path, "--budget", "4", input="y\n" * 10, pool=pool_csv)
    assert result.exit_code == 0, result.output
    assert "stopping: budget spent: 4 labels" in result.stdout
    assert "label 4 of 4 (id " in result.stdout and "label 5" not in result.stdout
    answers, pending, labels = _answers(path)
    assert labels == 4 and len(answers) == 4 and pending == []  # the second batch had 1 item
    assert "[" + "#" * 24 + "] 4/4 labels" in result.stdout
    assert "[######------------------] 1/4 labels" in result.stdout
    result = _label(path, "--budget", "4", input="y\n")  # already spent: stops at once
    assert result.exit_code == 0, result.output
    assert "stopping:" in result.stdout and _answers(path)[2] == 4


def test_width_stops_after_the_first_complete_stage(tmp_path, pool_csv):
    path = tmp_path / "labels.db"
    result = _label(path, "--width", "10", input="y\n" * 10, pool=pool_csv)
    assert result.exit_code == 0, result.output
    assert re.search(r"stopping: interval width \S+ < 10 at 95%", result.stdout)
    answers, pending, labels = _answers(path)
    assert labels == BATCH and pending == []  # stopped before asking the next batch
    with Session.open(path, read_only=True) as sess:
        ci = sess.estimate().interval(0.95)
    assert float(ci.sel(ci_bound="upper").values[0] - ci.sel(ci_bound="lower").values[0]) < 10
    result = _label(path, "--width", "0", input="q\n")
    assert result.exit_code == 2 and "'--width'" in _flat(result.output)


def test_status_text_and_json_also_while_another_writer_has_the_session(tmp_path, pool_csv):
    path = tmp_path / "labels.db"
    result = _label(path, "--annotator", "ann", input="y\nn\n", pool=pool_csv)
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["status", str(path)])
    assert result.exit_code == 0, result.output
    for line in ("sampler: static_is (seed 3)", "measure: f1", "label rule: latest", "labels: 2",
                 "pending: 1", "answers: 2 (0 re-judgements)", "annotators: ann (2)",
                 "estimate: no complete stage yet"):  # fmt: skip
        assert line in result.stdout, line
    with Session.open(path) as writer:  # holds the lock
        writer.tell(writer.pending, [1])
        writer.tell(writer.answers()["id"].iloc[:1], [0], annotator="bob")  # a re-judgement
        est = writer.estimate()
        value = float(est.estimate[0])  # the design's, or the posterior's where it gives none
        low, high = (
            est.interval(0.9).sel(ci_bound="lower").values[0],
            est.interval(0.9).sel(ci_bound="upper").values[0],
        )
        result = runner.invoke(app, ["status", str(path), "--prob", "0.9", "--json"])
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        text = runner.invoke(app, ["status", str(path), "--prob", "0.9"]).stdout
    assert out["path"] == str(path)
    assert (out["sampler"], out["measure"], out["label_rule"], out["seed"]) == (
        "static_is", "f1", "latest", 3,
    )  # fmt: skip
    assert (out["items"], out["labels"], out["pending"]) == (200, 3, 0)
    assert (out["answers"], out["rejudgements"], out["stages"]) == (4, 1, 1)
    assert [(a["name"], a["answers"]) for a in out["annotators"]] == [("ann", 2), (None, 1),
                                                                       ("bob", 1)]  # fmt: skip
    # ann and bob answered the same item: each annotator's accuracy (Dawid-Skene), at 90%
    with Session.open(path, read_only=True) as reader:
        expected = reader.annotator_posterior().annotator_summary(0.9)
    for a in out["annotators"]:
        row = expected.loc["unnamed" if a["name"] is None else a["name"]]
        assert (a["accuracy_lower"], a["accuracy"], a["accuracy_upper"]) == pytest.approx(
            (row["accuracy_lower"], row["accuracy"], row["accuracy_upper"])
        )
        assert 0 <= a["accuracy_lower"] <= a["accuracy"] <= a["accuracy_upper"] <= 1
    (row,) = out["estimate"]
    assert row["output"] == "f1" and out["prob"] == 0.9
    assert (row["estimate"], row["lower"], row["upper"]) == pytest.approx((value, low, high))
    assert row["width"] == pytest.approx(high - low)
    ann = out["annotators"][0]
    assert (f"annotators: ann (2; accuracy {ann['accuracy']:.3f} [{ann['accuracy_lower']:.3f}, "
            f"{ann['accuracy_upper']:.3f}]), (unnamed) (1; accuracy") in _flat(text)  # fmt: skip
    assert "estimate (90% confidence interval, 1 complete stage):" in text
    assert f"f1: {value:.4f} [{low:.4f}, {high:.4f}]" in text


def test_export_and_import_round_trip(tmp_path, pool_csv):
    path = tmp_path / "labels.db"
    assert _label(path, input="q\n", pool=pool_csv).exit_code == 0  # asks a batch
    first = _first_questions(pool_csv, tmp_path)
    out, config = tmp_path / "pending.csv", tmp_path / "config.xml"
    with Session.open(path):  # export needs no lock
        result = runner.invoke(
            app, ["export", str(path), str(out), "--label-studio-config", str(config)]
        )
    assert result.exit_code == 0, result.output
    assert f"3 pending questions written to {out}" in result.stdout
    assert "<View>" in config.read_text()
    table = pd.read_csv(out)
    assert table["id"].tolist() == first  # in the order asked
    table["label"] = [1, 0, 1]
    table.to_csv(out, index=False)
    result = runner.invoke(app, ["import", str(path), str(out), "--annotator", "ann"])
    assert result.exit_code == 0, result.output
    assert "3 answers recorded, 0 skipped (already recorded), of 3 answers" in result.stdout
    answers, pending, labels = _answers(path)
    assert dict(zip(answers["id"], answers["label"], strict=True)) == dict(
        zip(table["id"], table["label"], strict=True)
    )
    assert set(answers["annotator"]) == {"ann"} and (labels, pending) == (3, [])
    result = runner.invoke(app, ["import", str(path), str(out), "--annotator", "ann"])
    assert result.exit_code == 0, result.output
    assert "0 answers recorded, 3 skipped" in result.stdout and len(_answers(path)[0]) == 3
    result = runner.invoke(app, ["export", str(path), str(out)])
    assert result.exit_code == 0 and "0 pending questions" in result.stdout


def test_label_studio_round_trip_with_data_and_choices(tmp_path):
    pool_csv = tmp_path / "scores.csv"  # no id column: the ids are the row numbers
    pd.DataFrame({"score": np.linspace(0.01, 0.99, 60).round(4)}).to_csv(pool_csv, index=False)
    path = tmp_path / "labels.db"
    assert _label(path, input="q\n", pool=pool_csv).exit_code == 0
    asked = _answers(path)[1]
    data = tmp_path / "records.csv"
    pd.DataFrame({"id": range(60), "name": [f"name {i}" for i in range(60)]}).to_csv(
        data, index=False
    )
    tasks, config = tmp_path / "tasks.json", tmp_path / "config.xml"
    result = runner.invoke(
        app, ["export", str(path), str(tasks), "--data", str(data), "--label-studio-config",
              str(config), "--choices", "Match=1,No match=0"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"Label Studio config written to {config}" in result.stdout
    xml = config.read_text()
    assert '<Choice value="Match"/>' in xml and '<Choice value="No match"/>' in xml
    assert 'value="$name"' in xml
    exported = json.loads(tasks.read_text())
    assert [t["data"]["bayeval_id"] for t in exported] == asked
    assert [t["data"]["name"] for t in exported] == [f"name {i}" for i in asked]
    for task, choice in zip(exported, ["Match", "No match", "Match"], strict=True):
        task["annotations"] = [
            {"completed_by": {"email": "ann@example.org"},
             "result": [{"type": "choices", "from_name": "label", "value": {"choices": [choice]}}]}
        ]  # fmt: skip
    tasks.write_text(json.dumps(exported))
    result = runner.invoke(
        app, ["import", str(path), str(tasks), "--choices", "Match=1,No match=0"]
    )
    assert result.exit_code == 0, result.output
    assert "3 answers recorded" in result.stdout
    answers = _answers(path)[0]
    assert answers["id"].tolist() == asked and answers["label"].tolist() == [1, 0, 1]
    assert set(answers["annotator"]) == {"ann@example.org"}
    result = runner.invoke(app, ["import", str(path), str(tasks)])  # Positive/Negative expected
    assert result.exit_code == 1 and "choice 'Match' is not one of the choices" in result.stderr
    result = runner.invoke(app, ["export", str(path), str(tasks), "--choices", "Match"])
    assert result.exit_code == 2 and "'--choices'" in _flat(result.output)


def test_import_errors_are_one_line(tmp_path, pool_csv):
    path = tmp_path / "labels.db"
    assert _label(path, input="q\n", pool=pool_csv).exit_code == 0
    bad = tmp_path / "answers.csv"
    pd.DataFrame({"id": ["nope"], "label": [1]}).to_csv(bad, index=False)
    result = runner.invoke(app, ["import", str(path), str(bad)])
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: ") and "Traceback" not in result.output
    assert len(_answers(path)[0]) == 0


def test_errors(tmp_path, pool_csv):
    path = tmp_path / "labels.db"
    result = _label(path, input="q\n")
    assert result.exit_code == 2
    assert "'--pool'" in _flat(result.output) and "new session needs a pool" in _flat(result.output)
    assert not path.exists()
    assert _label(path, input="q\n", pool=pool_csv).exit_code == 0
    with Session.open(path):  # another writer
        result = _label(path, input="y\n")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: session is in use:") and result.stderr.count("\n") == 1
    result = _label(path, "--measure", "recall", input="q\n")
    assert result.exit_code == 2
    assert "created with --measure f1, not recall" in _flat(result.output)
    result = _label(path, "--seed", "3", "--pool", str(pool_csv), "--sampler", SAMPLER, input="q\n")
    assert result.exit_code == 0, result.output  # options that agree with the session
    result = _label(path, "--sampler", "ais", input="q\n")
    assert result.exit_code == 2
    assert f"created with --sampler {SAMPLER}, not ais" in _flat(result.output)
    other = pool_csv.with_name("other.csv")
    pd.read_csv(pool_csv).iloc[:50].to_csv(other, index=False)
    result = _label(path, "--pool", str(other), input="q\n")
    assert result.exit_code == 2 and "holds other items" in _flat(result.output)
    no_ids = tmp_path / "no_ids.csv"
    pd.DataFrame({"name": ["a"]}).to_csv(no_ids, index=False)
    result = _label(path, "--data", str(no_ids), input="q\n")
    assert result.exit_code == 2 and "'--data'" in _flat(result.output)
    assert "a column 'id' is needed" in _flat(result.output)
    foreign = tmp_path / "notes.db"
    foreign.write_text("not a session\n")
    for command in (["label", str(foreign)], ["status", str(foreign)],
                    ["export", str(foreign), str(tmp_path / "x.csv")],
                    ["import", str(foreign), str(pool_csv)]):  # fmt: skip
        result = runner.invoke(app, command, input="q\n")
        assert result.exit_code == 1, (command, result.output)
        assert result.stderr.startswith("error: ") and "not a bayeval session" in result.stderr
        assert result.stderr.count("\n") == 1


def _noisy_session(path, pool_csv, sampler=SAMPLER):
    """A session of 60 items labelled by bob, who is right on 75% of them."""
    df = pd.read_csv(pool_csv)
    pool = be.Pool(df["score"].to_numpy(), ids=df["id"].to_numpy())
    gen = np.random.default_rng(5)
    with Session.create(path, pool, be.measures.FScore(), sampler, rng=3) as sess:
        for _ in range(3):
            ids = sess.ask(20)
            sess.tell(ids, (gen.random(ids.size) < 0.75).astype(int), annotator="bob")


def test_second_opinions_ask_where_the_label_is_least_trusted(tmp_path, pool_csv):
    path = tmp_path / "labels.db"
    _noisy_session(path, pool_csv)
    with Session.open(path, read_only=True) as sess:
        expected = sess.second_opinions(4, annotator="ann").tolist()
        before = sess.labels_count()
    # y, n, skip the third, undo at the fourth (back to the second: y), then the fourth: n
    keys = ["y", "n", "s", "u", "y", "n"]
    result = _label(path, "--annotator", "ann", "--second-opinions", "4",
                    input="\n".join(keys) + "\n")  # fmt: skip
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "second opinions: 4 labelled items whose label the annotators' model" in _flat(out)
    shown = re.findall(r"^second opinion (\d) of 4 \(id '(\w+)'\)$", out, re.MULTILINE)
    # least trusted first; the fourth shown again after the undo's re-judgement
    assert shown == [(str(k + 1), item) for k, item in enumerate(expected)] + [("4", expected[3])]
    assert "skipped: no second opinion on it is recorded." in out
    assert f"re-judging id {expected[1]!r} (your earlier answer: negative)" in out
    assert "done: the 4 second opinions were asked." in out
    answers, pending, labels = _answers(path)
    mine = answers[answers["annotator"] == "ann"]
    assert list(zip(mine["id"], mine["label"], mine["first"], strict=True)) == [
        (expected[0], 1, False), (expected[1], 0, False), (expected[1], 1, False),
        (expected[3], 0, False),
    ]  # fmt: skip
    assert labels == before and pending == []  # no new question was asked
    # the same annotator again: the items they answered are left out
    with Session.open(path, read_only=True) as sess:
        again = sess.second_opinions(2, annotator="ann").tolist()
    assert not set(again) & {expected[0], expected[1], expected[3]}


def test_second_opinions_errors(tmp_path, pool_csv):
    path = tmp_path / "labels.db"
    result = _label(path, "--second-opinions", "3", input="q\n")
    assert result.exit_code == 2 and "needs --annotator" in _flat(result.output)
    result = _label(path, "--annotator", "ann", "--second-opinions", "3", input="q\n")
    assert result.exit_code == 2 and "does not exist" in _flat(result.output)
    assert not path.exists()
    assert _label(path, input="q\n", pool=pool_csv).exit_code == 0  # asked, nothing labelled
    result = _label(path, "--annotator", "ann", "--second-opinions", "3", input="q\n")
    assert result.exit_code == 2 and "has none yet" in _flat(result.output)
    assert _answers(path)[0].empty
    repeated = tmp_path / "draws.db"
    _noisy_session(repeated, pool_csv, sampler="stochastic_ais")
    result = _label(repeated, "--annotator", "ann", "--second-opinions", "3", input="q\n")
    assert result.exit_code == 2 and "stochastic_ais" in _flat(result.output)
    result = _label(repeated, "--annotator", "ann", "--second-opinions", "0", input="q\n")
    assert result.exit_code == 2 and "'--second-opinions'" in _flat(result.output)
