"""``bayeval evaluate --classes`` and a multiclass session through label, export and import."""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import bayeval as be
from bayeval._core.multiclass import confusion_measures
from bayeval.cli import app
from bayeval.simulate.multiclass_pools import multiclass_judge, multiclass_pool

runner = CliRunner()
CLASSES = ("cat", "dog", "bird", "fish", "frog")
PREDICTED, CONFIDENCE, TRUTH = multiclass_pool("hidden", np.random.default_rng(8), 3_000)


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _flat(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


def _file(tmp_path, labelled=True, name="pets.csv"):
    names = np.array(CLASSES)
    table = {
        "id": [f"p{i}" for i in range(TRUTH.size)],
        "score": CONFIDENCE.round(6),
        "prediction": names[PREDICTED],
    }
    if labelled:  # names and indices mixed, as a spreadsheet may hold them
        table["label"] = np.where(np.arange(TRUTH.size) % 2 == 0, names[TRUTH], TRUTH)
    pd.DataFrame(table).to_csv(tmp_path / name, index=False)
    return str(tmp_path / name)


def _judged_file(tmp_path):
    """The labelled file with an accurate judge's class names in column ``llm``, and the judge."""
    judge = multiclass_judge("accurate", PREDICTED, CONFIDENCE, TRUTH, np.random.default_rng(9))
    path = _file(tmp_path)
    table = pd.read_csv(path)
    table["llm"] = np.array(CLASSES)[judge]
    table.to_csv(path, index=False)
    return path, judge


def _json(result):
    return json.loads(result.stdout[result.stdout.index("{\n") :])


def test_a_labelled_multiclass_file_equals_the_python_api(tmp_path):
    result = runner.invoke(
        app, ["evaluate", "--pool", _file(tmp_path), "--classes", ",".join(CLASSES),
              "--budget", "300", "--seed", "2", "--json", "--report", str(tmp_path / "r")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = _json(result)
    assert (out["measure"], out["sampler"], out["labels_used"]) == ("macro_f1", "passive", 300)
    rows = {row["measure"]: row for row in out["estimates"]}
    assert list(rows) == ["macro_f1", "accuracy", "balanced_accuracy"]
    pool = be.Pool(CONFIDENCE.round(6), PREDICTED, classes=CLASSES)
    run = be.evaluate(pool, "macro_f1", TRUTH, 300, "passive", rng=2)
    counts = np.zeros((5, 5))
    np.add.at(counts, (TRUTH, PREDICTED), 1)
    true = confusion_measures(counts)
    for name, row in rows.items():
        est = run.sampler.estimate(measure=be.measures.ClassMeasure(name, n_classes=5))
        assert row["design_estimate"] == pytest.approx(est.value[0], rel=1e-12)
        lower, upper = est.interval(basis="posterior").values[0]
        assert (row["posterior_lower"], row["posterior_upper"]) == pytest.approx(
            (lower, upper), rel=1e-12
        )
        assert row["truth"] == pytest.approx(float(true[name]), rel=1e-12)
        assert row["robust_lower"] is None  # ScoreCalibration's variant: yes/no labels only
    assert out["unavailable"] == {"pr_curve": "a multiclass pool has no precision-recall curve"}
    assert out["report"] == [
        str(tmp_path / "r" / name) for name in ("estimates.png", "report.html")
    ]
    page = (tmp_path / "r" / "report.html").read_text()  # the curve: not for a multiclass pool
    assert page.count("data:image/png") == 1 and "pr_curve: not estimated" in page


def test_a_multiclass_pool_is_labelled_by_class_name_or_number(tmp_path):
    answers = ["cow", "cat", "1", "u", "fish", "BIRD", "s", "4"]
    result = runner.invoke(
        app, ["evaluate", "--pool", _file(tmp_path, labelled=False), "--classes",
              ",".join(CLASSES), "--budget", "4", "--batch-size", "2", "--json", "--no-report",
              "--session", "pets.db", "--annotator", "ann"],
        input="\n".join(answers) + "\n",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "'cow': answer a class's number or name, s, u or q" in result.stderr
    assert "0 = cat, 1 = dog, 2 = bird, 3 = fish, 4 = frog" in result.stderr
    assert "re-judged id" in result.stderr and ": fish (recorded" in result.stderr
    session = be.Session.open(tmp_path / "pets.db", read_only=True)
    answers = session.answers()
    session.close()
    # cat, dog, then dog re-judged as fish; bird, and the skipped item comes back: frog
    assert answers["label"].tolist() == [0, 1, 3, 2, 4]
    assert answers["first"].tolist() == [True, True, False, True, True]


def test_label_export_and_import_keep_class_names(tmp_path):
    pool_file = _file(tmp_path, labelled=False)
    result = runner.invoke(
        app, ["label", "s.db", "--pool", pool_file, "--classes", ",".join(CLASSES),
              "--batch-size", "3"],
        input="q\n",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    result = runner.invoke(
        app, ["export", "s.db", "out.csv", "--label-studio-config", "config.xml", "--unblind"]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert '<Choice value="frog"/>' in (tmp_path / "config.xml").read_text()
    sheet = pd.read_csv(tmp_path / "out.csv")
    assert set(sheet["prediction"]) <= set(CLASSES)
    positions = [int(i[1:]) for i in sheet["id"]]
    sheet["label"] = np.array(CLASSES)[TRUTH[positions]]
    sheet.to_csv(tmp_path / "back.csv", index=False)
    result = runner.invoke(app, ["import", "s.db", "back.csv", "--annotator", "bo"])
    assert result.exit_code == 0, result.output
    session = be.Session.open(tmp_path / "s.db", read_only=True)
    ids, labels = session.resolved_labels()
    session.close()
    np.testing.assert_array_equal(labels, TRUTH[[int(i[1:]) for i in ids]])
    # a second annotator, wrong on one item of three: the status gives each one's accuracy
    sheet["label"] = [CLASSES[(TRUTH[p] + (k == 0)) % 5] for k, p in enumerate(positions)]
    sheet.to_csv(tmp_path / "second.csv", index=False)
    assert runner.invoke(app, ["import", "s.db", "second.csv", "--annotator", "cy"]).exit_code == 0
    result = runner.invoke(app, ["status", "s.db", "--json"])
    assert result.exit_code == 0, result.output
    annotators = {row["name"]: row for row in json.loads(result.stdout)["annotators"]}
    assert set(annotators) == {"bo", "cy"}
    for row in annotators.values():
        assert 0 <= row["accuracy_lower"] <= row["accuracy"] <= row["accuracy_upper"] <= 1


@pytest.mark.parametrize(
    ("args", "option", "message"),
    [
        (["--classes", "cat"], "--classes", "2 to 127 classes"),
        (["--classes", "cat,cat"], "--classes", "must be distinct"),
        (["--measure", "f1"], "--measure", "a multiclass pool takes accuracy, balanced_accuracy"),
        (["--sampler", "ais"], "--sampler", "`pool` is multiclass and AIS is built for yes/no"),
        (["--classes", "cat,dog"], "--pool", "column 'prediction' must hold a class of"),
    ],
)
def test_errors_name_the_option(tmp_path, args, option, message):
    base = ["evaluate", "--pool", _file(tmp_path), "--classes", ",".join(CLASSES)]
    if args[0] == "--classes":
        base = base[:3]
    result = runner.invoke(app, [*base, *args, "--budget", "10", "--no-report"])
    assert result.exit_code == 2, result.output
    text = _flat(result.output)
    assert option in text and message in text, text


def test_a_multiclass_measure_needs_classes(tmp_path):
    result = runner.invoke(
        app, ["evaluate", "--pool", "febrl", "--measure", "macro_f1", "--budget", "10"]
    )  # fmt: skip
    assert result.exit_code == 2
    assert "macro_f1 needs a multiclass pool (--classes)" in _flat(result.output)


def test_a_judges_column_of_class_names_is_read_and_narrows_the_interval(tmp_path):
    path, judge = _judged_file(tmp_path)
    rows = {}
    for extra in ([], ["--judge-column", "llm"]):
        result = runner.invoke(
            app, ["evaluate", "--pool", path, "--classes", ",".join(CLASSES), "--budget", "200",
                  "--seed", "2", "--json", "--no-report", *extra],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        rows[bool(extra)] = {row["measure"]: row for row in _json(result)["estimates"]}
    pool = be.Pool(CONFIDENCE.round(6), PREDICTED, judge=judge, classes=CLASSES)
    run = be.evaluate(pool, "macro_f1", TRUTH, 200, "passive", rng=2)
    est = run.sampler.estimate(measure=be.measures.ClassMeasure("accuracy", n_classes=5))
    lower, upper = est.interval(basis="posterior").values[0]
    judged = rows[True]["accuracy"]
    assert (judged["posterior_lower"], judged["posterior_upper"]) == pytest.approx(
        (lower, upper), rel=1e-12
    )
    width = {k: v["accuracy"]["posterior_upper"] - v["accuracy"]["posterior_lower"]
             for k, v in rows.items()}  # fmt: skip
    assert width[True] < 0.7 * width[False], width  # an accurate judge: 0.051 against 0.121
    table = runner.invoke(
        app, ["evaluate", "--pool", path, "--classes", ",".join(CLASSES), "--budget", "200",
              "--seed", "2", "--no-report", "--judge-column", "llm"],
    )  # fmt: skip
    assert table.exit_code == 0, table.output
    assert (
        "ClassCalibration (each predicted class's accuracy, pooled over the classes, the "
        "judge's answer among the cells)" in _flat(table.output)
    )


def test_active_stratified_from_the_command_line_equals_the_python_api(tmp_path):
    path, judge = _judged_file(tmp_path)
    result = runner.invoke(
        app, ["evaluate", "--pool", path, "--classes", ",".join(CLASSES), "--budget", "150",
              "--sampler", "active_stratified", "--seed", "3", "--json", "--no-report",
              "--judge-column", "llm"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    row = {r["measure"]: r for r in _json(result)["estimates"]}["macro_f1"]
    pool = be.Pool(CONFIDENCE.round(6), PREDICTED, judge=judge, classes=CLASSES)
    run = be.evaluate(pool, "macro_f1", TRUTH, 150, "active_stratified", rng=3)
    lower, upper = run.estimate.interval(basis="posterior").values[0]
    assert (row["posterior_lower"], row["posterior_upper"]) == pytest.approx(
        (lower, upper), rel=1e-12
    )
    assert run.estimate.posterior["posterior"].attrs["n_strata"] == 2  # the design's cells


def test_bayeval_label_runs_an_active_stratified_session_with_a_judge(tmp_path):
    path, judge = _judged_file(tmp_path)
    result = runner.invoke(
        app, ["label", "s.db", "--pool", path, "--classes", ",".join(CLASSES), "--judge-column",
              "llm", "--sampler", "active_stratified", "--seed", "4", "--batch-size", "3"],
        input="cat\ndog\nbird\nq\n",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    with be.Session.open(tmp_path / "s.db", read_only=True) as session:
        assert session.sampler.method == "active_stratified"
        np.testing.assert_array_equal(session.sampler.pool.judge, judge)
        measure = session.sampler.measure
        ids, labels = session.resolved_labels()
    assert labels.tolist() == [0, 1, 2]  # every answer kept, by class index
    pool = be.Pool(CONFIDENCE.round(6), PREDICTED, judge=judge, classes=CLASSES)
    plain = be.sampling.ActiveStratified(pool, measure, rng=4)
    asked = [int(i[1:]) for i in ids]  # the file's ids are "p<row>"
    np.testing.assert_array_equal(asked, plain.ask(3))  # the sampler's own first stage
