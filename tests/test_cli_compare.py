"""``bayeval compare``: from a label column, by hand at the terminal (and continued), and errors."""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from bayeval.cli import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path, monkeypatch):
    """Run in ``tmp_path``: the session and the report go to the working directory."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def runs():
    """1,500 items, four systems that share errors on a hard tenth, a text column, the labels."""
    rng = np.random.default_rng(0)
    n = 1_500
    truth = rng.random(n) < 0.3
    hard = rng.random(n) < 0.1
    rates = [0.2, 0.3, 0.4, 0.5]
    wrong = np.where(hard[:, None], rng.random((n, 4)) < rates, rng.random((n, 4)) < 0.02)
    predictions = np.where(wrong, ~truth[:, None], truth[:, None]).astype(int)
    table = pd.DataFrame(predictions, columns=list("abcd"))
    table["text"] = [f"item {i}" for i in range(n)]
    table["label"] = truth.astype(int)
    return table


def test_compare_from_a_label_column_reports_the_best_and_writes_the_report(runs, tmp_path):
    runs.drop(columns="text").to_csv("runs.csv", index=False)
    result = runner.invoke(app, ["compare", "--pool", "runs.csv", "--budget", "200", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    truth = {k: float((runs[k] == runs["label"]).mean()) for k in "abcd"}
    assert out["best"] == max(truth, key=truth.get) == "a"
    assert out["stop_reason"].startswith("P(best)")
    assert out["labels_used"] <= 200
    assert [r["system"] for r in out["systems"]][0] == "a"
    for row in out["systems"]:  # each difference from the leader, against the truth
        assert row["lower"] <= row["difference"] <= row["upper"]
        assert row["true_difference"] == pytest.approx(truth[row["system"]] - truth["a"])
    assert sorted(p.split("/")[-1] for p in out["report"]) == [
        "differences.png",
        "leader.png",
        "prob_best.png",
    ]
    assert all((tmp_path / p).stat().st_size > 0 for p in out["report"])


def test_compare_chooses_by_the_leaders_when_asked(runs):
    runs.drop(columns="text").to_csv("runs.csv", index=False)
    args = ["compare", "--pool", "runs.csv", "--budget", "200", "--choose", "leaders"]
    result = runner.invoke(app, [*args, "--json", "--no-report"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["best"] == "a"
    assert out["stop_reason"].startswith("P(best)")


def test_compare_by_hand_keeps_every_answer_and_continues(runs):
    """Answers typed at the prompt (the truth, y or n), a quit, and the same command again."""
    import bayeval as be

    runs.drop(columns="label").to_csv("unlabelled.csv", index=False)
    truth = runs["label"].to_numpy()
    # the items the seeded sampler asks for, in order, when answered truthfully
    pool = be.Pool(runs[list("abcd")].to_numpy(float), systems=list("abcd"))
    replay = be.sampling.ModelSelection(pool, rng=0)
    keys = []
    while not replay.done:
        ids = replay.ask(1)
        replay.tell(ids, truth[ids])
        keys.append("y" if truth[ids[0]] else "n")
    args = ["compare", "--pool", "unlabelled.csv", "--systems", "a,b,c,d", "--no-report", "--json"]
    first = runner.invoke(app, args, input="\n".join([*keys[:5], "q"]) + "\n")
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["labels_used"] == 5
    assert "every answer given is saved in compare_session.db" in first.stderr
    again = runner.invoke(app, args, input="\n".join(keys[5:]) + "\n")
    assert again.exit_code == 0, again.output
    out = json.loads(again.stdout)
    assert out["labels_used"] == len(keys) == replay.labels_used
    assert out["best"] == replay.best == "a"
    assert out["stop_reason"] == replay.stop_reason()
    assert "true_difference" not in out["systems"][0]
    # bayeval status reads the session: each system against the leader, with P(best)
    status = runner.invoke(app, ["status", "compare_session.db", "--json"])
    assert status.exit_code == 0, status.output
    rows = {r["output"]: r for r in json.loads(status.stdout)["estimate"]}
    assert rows["a - a"]["estimate"] == 0.0
    assert rows["a - a"]["prob_best"] == pytest.approx(replay.prob_best[0])
    assert sum(r["prob_best"] for r in rows.values()) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("args", "option", "message"),
    [
        (["--systems", "a,zz"], "--systems", "systems ['zz'] are not columns"),
        (["--systems", "a"], "--systems", "two or more system columns are needed"),
        (["--systems", "a,b", "--budget", "5000"], "--budget", "`budget` must be at most"),
        ([], "--pool", "column 'text' must hold finite numbers"),
        (["--choose", "best"], "--choose", "one of information, leaders, disagreement, uniform"),
        (["--prob", "1.5"], "--prob", "must be in the open interval (0, 1)"),
    ],
)
def test_compare_refuses_bad_options(runs, args, option, message):
    runs.to_csv("runs.csv", index=False)
    result = runner.invoke(app, ["compare", "--pool", "runs.csv", "--no-report", *args])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.replace("│", " ").split())
    assert option in text and message in text


# three answers by hand: the refitted confusion model's chains may mix slowly, and it says so
@pytest.mark.filterwarnings("ignore::bayeval.models.ConfusionWarning")
def test_compare_with_classes_reads_class_columns_and_labels_by_name():
    """A multiclass pool: each system's column and the label hold class names; with three
    systems the report's differences are refitted by be.compare's model."""
    rng = np.random.default_rng(1)
    n, names = 800, np.array(["cat", "dog", "bird"])
    truth = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    hard = rng.random(n) < 0.15
    wrong = np.where(hard[:, None], rng.random((n, 3)) < [0.2, 0.4, 0.6], rng.random((n, 3)) < 0.02)
    predictions = np.where(wrong, (truth[:, None] + 1) % 3, truth[:, None])
    table = pd.DataFrame(names[predictions], columns=list("abc"))
    table["label"] = names[truth]
    table.to_csv("classes.csv", index=False)
    args = ["compare", "--pool", "classes.csv", "--classes", "cat,dog,bird", "--no-report"]
    result = runner.invoke(app, [*args, "--measure", "macro_f1", "--budget", "100", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    macro_f1 = {}
    for k, name in enumerate("abc"):
        said = predictions[:, k]
        f1 = [
            2 * np.sum((truth == c) & (said == c)) / (np.sum(truth == c) + np.sum(said == c))
            for c in range(3)
        ]
        macro_f1[name] = float(np.mean(f1))
    assert out["best"] == max(macro_f1, key=macro_f1.get) == "a"
    assert out["stop_reason"].startswith("P(best)")
    assert "shared_errors=True" in out["model"]
    for row in out["systems"]:  # the reported truth is the macro-F1 of the label column
        assert row["lower"] <= row["difference"] <= row["upper"]
        assert row["true_difference"] == pytest.approx(macro_f1[row["system"]] - macro_f1["a"])
    # by hand: the systems' predicted classes shown by name, answers by name, q keeps them
    table.drop(columns="label").to_csv("unlabelled.csv", index=False)
    by_hand = ["compare", "--pool", "unlabelled.csv", "--classes", "cat,dog,bird", "--no-report"]
    first = runner.invoke(app, by_hand, input="cat\ndog\nbird\nq\n")
    assert first.exit_code == 0, first.output
    assert "prediction a" in first.output and "score a" not in first.output
    import bayeval as be

    session = be.Session.open("compare_session.db")
    try:
        assert session.labels_count() == 3
        assert sorted(session.resolved_labels()[1].tolist()) == [0, 1, 2]  # cat, dog, bird
    finally:
        session.close()
    refused = runner.invoke(app, [*args, "--measure", "f1"])
    assert refused.exit_code == 2
    assert "a multiclass pool takes accuracy" in " ".join(refused.output.replace("│", " ").split())
