"""``bayeval evaluate``: the FEBRL demo, labelled files, the interactive loop and its errors."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import bayeval as be
from bayeval.cli import app
from bayeval.cli._labelling import EXIT_STOPPED

runner = CliRunner()


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path, monkeypatch):
    """Run in ``tmp_path``: labelling by hand keeps its answers in ./evaluate_session.db."""
    monkeypatch.chdir(tmp_path)


def _flat(text: str) -> str:
    """Join an error box's wrapped lines, so messages can be searched for whole."""
    return " ".join(text.replace("│", " ").split())


@pytest.fixture(scope="module")
def items():
    """3,000 scored items with string ids, 5% positives, and their true labels."""
    gen = np.random.default_rng(11)
    truth = (gen.random(3000) < 0.05).astype(np.int8)
    score = np.where(truth == 1, gen.beta(5, 2, truth.size), gen.beta(1, 6, truth.size))
    return pd.DataFrame(
        {
            "id": [f"item-{i:04d}" for i in range(truth.size)],
            "score": score.round(6),
            "prediction": (score >= 0.5).astype(np.int8),
            "label": truth,
        }
    )


def _write(df, path):
    if path.suffix == ".csv":
        df.to_csv(path, index=False)
    else:
        df.to_parquet(path, index=False)
    return path


def _pool(df):
    return be.Pool(df["score"].to_numpy(), df["prediction"].to_numpy(), ids=df["id"].to_numpy())


def _json(result):
    """Parse the JSON output; CliRunner echoes typed input into stdout, a terminal does not."""
    return json.loads(result.stdout[result.stdout.index("{\n") :])


def _rows(out):
    return {row["output"]: row for row in out["estimates"]}


def _check_rows(out):
    # design intervals (logit scale) and credible ones stay in [0, 1] and hold their estimate
    for row in out["estimates"]:
        for p in ("design_", "posterior_", "robust_"):
            lower, estimate, upper = (row[f"{p}{k}"] for k in ("lower", "estimate", "upper"))
            assert 0 <= lower <= estimate <= upper <= 1, row


def test_febrl_json_equals_the_python_api():
    result = runner.invoke(
        app, ["evaluate", "--pool", "febrl", "--budget", "200", "--seed", "3", "--json",
              "--no-report"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert (out["items"], out["labels_used"], out["sampler"], out["completed"]) == (
        499_500, 200, "ais", True,
    )  # fmt: skip
    pairs = be.datasets.load_febrl_pairs()
    pool = be.Pool(pairs["score"].to_numpy(), pairs["predicted"].to_numpy())
    truth = pairs["label"].to_numpy()
    run = be.evaluate(pool, be.measures.FScore(), truth, 200, "ais", rng=3)
    rows = _rows(out)
    assert list(rows) == ["f1", "precision", "recall"]
    ci = run.estimate.interval(0.95)
    assert rows["f1"]["role"] == "sampled for"
    design = [rows["f1"][f"design_{k}"] for k in ("estimate", "lower", "upper")]
    assert design == pytest.approx([run.estimate.value[0], *ci.values[0]], rel=1e-12)
    # release 0.1's keys stay one release, equal to the new ones, and the output names them
    assert out["deprecated_keys"]["credible_lower"] == "posterior_lower"
    for old, new in out["deprecated_keys"].items():
        assert rows["f1"][old] == rows["f1"][new]
    for name, measure in (("precision", be.measures.Precision()), ("recall", be.measures.Recall())):
        est = run.sampler.estimate(measure=measure)
        assert rows[name]["role"] == "same labels"
        assert rows[name]["design_estimate"] == pytest.approx(est.value[0], rel=1e-12)
        assert rows[name]["truth"] == measure.value(truth, predictions=pool.predictions)[0]
    assert rows["f1"]["truth"] == pytest.approx(2 * 494 / (500 + 514))  # FEBRL: 494 TP, 20 FP
    robust = run.sampler.estimate(model=be.models.ScoreCalibration.robust())
    robust_ci = robust.interval(0.95, basis="posterior")
    assert (rows["f1"]["robust_lower"], rows["f1"]["robust_upper"]) == pytest.approx(
        (robust_ci.sel(ci_bound="lower").values[0], robust_ci.sel(ci_bound="upper").values[0]),
        rel=1e-12,
    )
    _check_rows(out)


def test_febrl_table_and_report(tmp_path):
    result = runner.invoke(
        app, ["evaluate", "--pool", "febrl", "--budget", "150", "--report", str(tmp_path)],
        terminal_width=150,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "150 labels chosen by ais for f1, 95% intervals" in _flat(result.stdout)
    for word in ("precision", "recall", "truth", "covers", "credible", "design"):
        assert word in result.stdout
    # FEBRL's 416,000 low-score pairs get a few dozen labels: the robust model's recall is far
    # wider than the default's, so the table says so
    assert "recall: the robust model (ScoreCalibration.robust()" in _flat(result.stdout)
    for name in ("estimates.png", "pr_curve.png"):
        assert (tmp_path / name).stat().st_size > 20_000
    assert "150/150" in result.stderr  # the progress bar


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_labelled_file_is_a_simulated_oracle(tmp_path, items, suffix):
    path = _write(items, tmp_path / f"pool{suffix}")
    result = runner.invoke(
        app, ["evaluate", "--pool", str(path), "--budget", "120", "--batch-size", "40", "--json",
              "--seed", "5", "--report", str(tmp_path / "report")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["oracle"] == "labels" and out["items"] == 3000
    pool = _pool(items)
    run = be.evaluate(pool, be.measures.FScore(), items["label"].to_numpy(), 120, "ais",
                      batch_size=40, rng=5)  # fmt: skip
    assert _rows(out)["f1"]["design_estimate"] == pytest.approx(run.estimate.value[0], rel=1e-12)
    assert _rows(out)["recall"]["truth"] == pytest.approx(
        be.measures.Recall().value(items["label"], predictions=items["prediction"])[0]
    )
    assert [p.rsplit("/", 1)[1] for p in out["report"]] == [
        "estimates.png", "pr_curve.png", "report.html"
    ]  # fmt: skip
    _check_rows(out)


def test_other_measure_and_sampler(tmp_path, items):
    path = _write(items.drop(columns="prediction"), tmp_path / "pool.csv")  # score >= 0.5
    result = runner.invoke(
        app, ["evaluate", "--pool", str(path), "--measure", "accuracy", "--sampler", "passive",
              "--budget", "100", "--json", "--no-report"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert [r["output"] for r in out["estimates"]] == ["accuracy", "precision", "recall", "f1"]
    assert out["sampler"] == "passive" and out["report"] == []
    _check_rows(out)


def test_a_pool_of_predictions_gets_a_rate_per_cell_and_no_robust_interval(tmp_path, items):
    # a system that gives only its 0/1 predictions: they are its scores
    path = _write(items.assign(score=items["prediction"]), tmp_path / "pool.csv")
    args = ["evaluate", "--pool", str(path), "--sampler", "passive", "--budget", "200",
            "--seed", "4", "--json", "--no-report"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = _rows(json.loads(result.stdout))
    pool = be.Pool(items["prediction"].to_numpy().astype(float), ids=items["id"].to_numpy())
    run = be.evaluate(pool, be.measures.FScore(), items["label"].to_numpy(), 200, "passive",
                      rng=4)  # fmt: skip
    assert isinstance(run.sampler.default_model(), be.models.CellRates)
    ci = run.estimate.interval(0.95, basis="posterior").values[0]
    assert (rows["f1"]["posterior_lower"], rows["f1"]["posterior_upper"]) == pytest.approx(
        tuple(ci), rel=1e-12
    )
    for row in rows.values():  # no curve whose floor the robust variant would doubt
        assert row["robust_lower"] is None and row["robust_upper"] is None, row
        assert 0 <= row["posterior_lower"] <= row["posterior_estimate"] <= row["posterior_upper"]
    # the table's footnote names the model the credible intervals come from
    table = runner.invoke(app, [a for a in args if a != "--json"])
    assert table.exit_code == 0, table.output
    assert "posterior of bayeval.models.CellRates" in " ".join(table.output.split())


def test_measures_the_draws_do_not_cover_are_reported(tmp_path, items):
    path = _write(items, tmp_path / "pool.csv")
    result = runner.invoke(
        app, ["evaluate", "--pool", str(path), "--measure", "precision", "--budget", "60",
              "--report", str(tmp_path / "r")], terminal_width=200,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = _flat(result.stdout)
    assert "recall: not estimated" in text and "f1: not estimated" in text
    assert "pr_curve: not estimated" in text and "proposal never draws some items" in text
    assert not (tmp_path / "r" / "pr_curve.png").exists()


def _unlabelled(items, tmp_path):
    return _write(items.drop(columns="label").iloc[:400], tmp_path / "unlabelled.csv")


def _shown(text: str) -> list[str]:
    """The ids of the items shown, in order, from the loop's titles ``label 1 of 4 (id ...)``."""
    return re.findall(r"\(id '(item-\d{4})'\)", text)


def _session(path):
    """The answers and label count kept in a session file."""
    with be.Session.open(path, read_only=True) as sess:
        return sess.answers(), sess.labels_count(), sess.sampler


def test_interactive_loop_with_a_skip_keeps_every_answer_in_a_session(tmp_path, items):
    answers = ["s", "y", "n", "n", "y"]  # the first item is skipped, then labelled n
    db = tmp_path / "answers.db"
    result = runner.invoke(
        app, ["evaluate", "--pool", str(_unlabelled(items, tmp_path)), "--budget", "4",
              "--batch-size", "2", "--json", "--no-report", "--session", str(db),
              "--annotator", "ann"],
        input="\n".join(["maybe", *answers]) + "\n",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = _json(result)
    assert out["oracle"] == "interactive" and out["completed"] and out["labels_used"] == 4
    assert out["batch_size"] == 2
    shown = _shown(result.stderr)
    assert len(shown) == 5 and shown[0] == shown[2] and len(set(shown)) == 4
    # every answer is in the session file, with its annotator; its estimate is the one shown
    kept, labels, sampler = _session(db)
    assert labels == 4 and kept["annotator"].eq("ann").all()
    assert kept["id"].tolist() == [shown[1], shown[2], shown[3], shown[4]]
    assert kept["label"].tolist() == [1, 0, 0, 1]
    assert _rows(out)["f1"]["design_estimate"] == pytest.approx(
        sampler.estimate().value[0], rel=1e-9
    )
    assert _rows(out)["f1"]["truth"] is None
    # the prompt and each item's fields went to stderr, away from the JSON; blind: the item's
    # id, not the system's score
    first = items.set_index("id").loc[shown[0]]
    assert "(id 'item-" in result.stderr and str(first["score"]) not in result.stderr
    assert "'maybe': answer y, n, s, u or q" in result.stderr
    assert "skipped: it stays pending" in result.stderr


def test_quit_reports_the_complete_stages_and_the_session_continues(tmp_path, items):
    path = _unlabelled(items, tmp_path)
    args = ["evaluate", "--pool", str(path), "--budget", "4", "--batch-size", "2"]
    result = runner.invoke(
        app, [*args, "--report", str(tmp_path / "r")], input="y\nn\ny\nq\n", terminal_width=200
    )  # fmt: skip
    assert result.exit_code == EXIT_STOPPED, result.output  # stopped before the budget
    text = _flat(result.stdout)
    assert "stopped after 3 of 4 labels; the estimate uses the 2 of complete stages" in text
    # the session beside the report folder
    assert f"every answer given is saved in {tmp_path / 'evaluate_session.db'}" in text
    assert "Continue with: this command again (same --session)" in text
    assert (tmp_path / "r" / "estimates.png").exists()
    assert _session(tmp_path / "evaluate_session.db")[1] == 3  # nothing answered is lost
    # the same command continues the session: one more answer completes the budget
    result = runner.invoke(app, [*args, "--no-report"], input="n\n", terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "continuing session evaluate_session.db" in _flat(result.stdout)
    kept, labels, _ = _session(tmp_path / "evaluate_session.db")
    assert labels == 4 and kept["label"].tolist() == [1, 0, 1, 0]


def test_quit_before_a_stage_is_complete_and_end_of_input(tmp_path, items):
    path = _unlabelled(items, tmp_path)
    for answers in ("y\nq\n", "y\n"):  # quit, or the input ends
        db = tmp_path / f"{len(answers)}.db"
        result = runner.invoke(
            app, ["evaluate", "--pool", str(path), "--budget", "4", "--batch-size", "2",
                  "--json", "--no-report", "--session", str(db)],
            input=answers,
        )  # fmt: skip
        assert result.exit_code == EXIT_STOPPED, result.output
        out = _json(result)
        assert (out["completed"], out["labels_used"], out["estimates"]) == (False, 1, [])
        assert _session(db)[1] == 1


def test_a_continued_session_must_agree_with_the_options(tmp_path, items):
    path = _unlabelled(items, tmp_path)
    args = ["evaluate", "--pool", str(path), "--budget", "2", "--batch-size", "2", "--no-report"]
    assert runner.invoke(app, args, input="y\nq\n").exit_code == EXIT_STOPPED
    result = runner.invoke(app, [*args, "--measure", "precision"], input="y\n")
    assert result.exit_code == 2
    assert "was created with --measure f1, not precision" in _flat(result.output)


def test_blind_by_default_and_the_score_only_when_unblinded(tmp_path, items):
    # the person labelling sees the pool file's own fields (here a text), never the system's
    # score or prediction unless asked for
    texts = items.iloc[:400].assign(text=[f"pair {i}" for i in range(400)])
    path = _write(texts.drop(columns="label"), tmp_path / "texts.csv")
    args = ["evaluate", "--pool", str(path), "--budget", "2", "--batch-size", "2", "--no-report"]
    for unblind in ([], ["--unblind"]):
        db = tmp_path / f"{len(unblind)}.db"
        result = runner.invoke(app, [*args, "--session", str(db), *unblind], input="y\ny\n",
                               terminal_width=200)  # fmt: skip
        assert result.exit_code == 0, result.output
        first = texts.set_index("id").loc[_shown(result.stdout)[0]]
        assert f"│ {first['text']} " in result.stdout
        shows_system = "│ score " in result.stdout or "│ prediction " in result.stdout
        assert shows_system == bool(unblind), result.stdout
        assert (str(first["score"]) in result.stdout) == bool(unblind)


def test_interactive_hides_the_label_column(tmp_path, items):
    path = _write(items.iloc[:400], tmp_path / "labelled.csv")
    result = runner.invoke(
        app, ["evaluate", "--pool", str(path), "--interactive", "--budget", "2",
              "--batch-size", "2", "--no-report", "--unblind"],
        input="y\ny\n",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "│ score " in result.stdout and "│ label " not in result.stdout
    assert "truth" in result.stdout  # the file's labels still give the true values


def test_a_judge_column_narrows_the_interval_and_is_never_shown(tmp_path, items):
    # an accurate judge (the truth, flipped on 5% of the items) beside the scores
    flip = np.random.default_rng(4).random(len(items)) < 0.05
    judged = items.assign(llm=(items["label"].to_numpy() ^ flip).astype(np.int8))
    path = _write(judged, tmp_path / "judged.csv")
    args = ["evaluate", "--pool", str(path), "--budget", "100", "--json", "--seed", "2",
            "--no-report", "--measure", "precision"]  # fmt: skip
    widths = {}
    for key, extra in (("judge", ["--judge-column", "llm"]), ("alone", [])):
        result = runner.invoke(app, [*args, *extra])
        assert result.exit_code == 0, result.output
        row = _rows(json.loads(result.stdout))["precision"]
        assert row["posterior_lower"] <= row["truth"] <= row["posterior_upper"], key
        widths[key] = row["posterior_upper"] - row["posterior_lower"]
    assert widths["judge"] < 0.9 * widths["alone"], widths
    result = runner.invoke(
        app, ["evaluate", "--pool", str(path), "--judge-column", "llm", "--interactive",
              "--budget", "2", "--batch-size", "2", "--no-report", "--unblind"],
        input="y\ny\n",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "│ score " in result.stdout and "llm" not in result.stdout  # unblinded, not the judge
    session = be.Session.open(tmp_path / "evaluate_session.db", read_only=True)
    np.testing.assert_array_equal(session.sampler.pool.judge, judged["llm"])
    session.close()


@pytest.mark.parametrize(
    ("args", "option", "message"),
    [
        (["--pool", "scores.txt"], "--pool", "expected 'febrl' or a .csv or .parquet file"),
        (["--pool", "missing.csv"], "--pool", "file 'missing.csv' does not exist"),
        (["--pool", "{no_score}"], "--pool", "a column 'score' is needed"),
        (["--pool", "{nan_score}"], "--pool", "'score' must hold finite numbers; data row 2"),
        (["--pool", "{bad_label}"], "--pool", "column 'label' must hold 0 or 1"),
        (["--pool", "{repeated_id}"], "--pool", "`ids` must be unique; id 'a'"),
        (["--pool", "{good}", "--budget", "4"], "--budget", "at most the pool's 3 items; got 4"),
        (["--pool", "{good}", "--prob", "1.5"], "--prob", "open interval (0, 1); got 1.5"),
        (["--pool", "{good}", "--sampler", "magic"], "--sampler", "must be one of ais,"),
        (["--pool", "{good}", "--budget", "0"], "--budget", "greater than or equal to 1"),
        (["--pool", "{no_id}"], "--pool", "column 'id' is empty in data row 2"),
        (["--pool", "{unlabelled}", "--no-interactive"], "--no-interactive", "no 'label' column"),
        (["--pool", "{good}", "--judge-column", "llm"], "--pool", "judge's column 'llm' is not"),
        (
            ["--pool", "{judged}", "--judge-column", "llm"],
            "--pool",
            "column 'llm' must hold the judge's 0/1 labels or probabilities in [0, 1]; data row 2 "
            "holds 1.5",
        ),
        (["--pool", "febrl", "--judge-column", "llm"], "--judge-column", "has no judge's column"),
    ],
)
def test_errors_name_the_option(tmp_path, args, option, message):
    files = {
        "no_score": pd.DataFrame({"id": [1, 2], "points": [0.1, 0.2]}),
        "nan_score": pd.DataFrame({"score": [0.1, None, 0.3]}),
        "bad_label": pd.DataFrame({"score": [0.1, 0.9], "label": [0, 2]}),
        "repeated_id": pd.DataFrame({"id": ["a", "b", "a"], "score": [0.1, 0.9, 0.4]}),
        "no_id": pd.DataFrame({"id": ["a", None], "score": [0.1, 0.9]}),
        "good": pd.DataFrame({"score": [0.1, 0.9, 0.4], "label": [0, 1, 1]}),
        "unlabelled": pd.DataFrame({"score": [0.1, 0.9, 0.4]}),
        "judged": pd.DataFrame({"score": [0.1, 0.9], "label": [0, 1], "llm": [0.2, 1.5]}),
    }
    paths = {k: str(_write(df, tmp_path / f"{k}.csv")) for k, df in files.items()}
    result = runner.invoke(app, ["evaluate", *(a.format(**paths) for a in args)])
    assert result.exit_code == 2
    text = _flat(result.output)
    assert option in text and message in text, text


def test_a_sampler_that_runs_out_of_items_is_an_error(tmp_path, items):
    # a precision run's proposal ignores the items predicted negative: ~150 of 3,000 here
    path = _write(items, tmp_path / "pool.csv")
    result = runner.invoke(
        app, ["evaluate", "--pool", str(path), "--measure", "precision", "--budget", "1000"]
    )
    assert result.exit_code == 2
    assert "labels: `n` must be at most" in _flat(result.stderr)


def test_interactive_run_out_of_items_keeps_the_labels(tmp_path):
    # a precision run draws only the predicted positives: 2 of these 12 items
    scores = [*np.linspace(0, 0.4, 10), 0.6, 0.9]
    path = _write(pd.DataFrame({"score": scores}), tmp_path / "few.csv")
    result = runner.invoke(
        app, ["evaluate", "--pool", str(path), "--measure", "precision", "--budget", "5",
              "--batch-size", "2", "--no-report"],
        input="y\nn\n", terminal_width=200,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = _flat(result.stdout)
    assert "the sampler can draw no more items" in text
    assert "stopped after 2 of 5 labels; the estimate uses the 2 of complete stages" in text
