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
    runs.drop(columns="label").to_csv("unlabelled.csv", index=False)
    # the items the seeded sampler asks for, in order, when answered truthfully
    replay, keys = _replayed(runs, audit=0)
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


def _replayed(runs, audit, agreements=0):
    """The seeded sampler answered truthfully until it stops, then an audit of ``audit`` items
    (drawn at once and asked in the order drawn, as the prompt does); return it and the keys."""
    import bayeval as be

    truth = runs["label"].to_numpy()
    pool = be.Pool(runs[list("abcd")].to_numpy(float), systems=list("abcd"))
    replay = be.sampling.ModelSelection(pool, rng=0)
    keys = []
    while not replay.done:
        ids = replay.ask(1)
        replay.tell(ids, truth[ids])
        keys.append("y" if truth[ids[0]] else "n")
    if audit:
        ids = replay.ask_audit(audit, agreements=agreements)
        replay.tell(ids, truth[ids])
        keys += ["y" if t else "n" for t in truth[ids]]
    return replay, keys


def _leader_rows(differences, leader):
    ci = differences.interval(0.95).sel(other=leader)
    return {s: ci.sel(system=s).values.tolist() for s in differences.systems}


@pytest.mark.parametrize("agreements", [0, 25])
def test_compare_audits_after_the_selection_from_a_label_column(runs, tmp_path, agreements):
    import bayeval as be

    runs.drop(columns="text").to_csv("runs.csv", index=False)
    args = ["compare", "--pool", "runs.csv", "--budget", "200", "--audit", "30", "--json"]
    result = runner.invoke(app, [*args, "--audit-agreements", str(agreements)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["audit_labels"] == 30 + agreements
    assert out["model"].startswith("audit")
    # the same as the sampler run by hand: the selection, then one audit
    truth = runs["label"].to_numpy()
    pool = be.Pool(runs[list("abcd")].to_numpy(float), systems=list("abcd"))
    sampler = be.sampling.ModelSelection(pool, rng=0)
    sampler.run(truth, 200)
    chosen = sampler.labels_used
    ids = sampler.ask_audit(30, agreements=agreements)
    sampler.tell(ids, truth[ids])
    assert out["labels_used"] == chosen + 30 + agreements
    expected = _leader_rows(sampler.audited_differences(), out["best"])
    for row in out["systems"]:
        assert [row["lower"], row["upper"]] == pytest.approx(expected[row["system"]])
    files = sorted(p.split("/")[-1] for p in out["report"])
    assert all((tmp_path / p).stat().st_size > 0 for p in out["report"])
    if not agreements:
        assert "level" not in out["systems"][0]
        assert files == ["differences.png", "leader.png", "prob_best.png"]
        return
    assert files == ["differences.png", "leader.png", "levels.png", "prob_best.png"]
    levels = sampler.audited_levels().interval(0.95)
    for row in out["systems"]:
        expected = levels.sel(system=row["system"]).values.tolist()
        assert [row["level_lower"], row["level_upper"]] == pytest.approx(expected)
        true = float((runs[row["system"]] == runs["label"]).mean())
        assert row["true_level"] == pytest.approx(true)
    shown = runner.invoke(app, args[:-1] + ["--audit-agreements", "25", "--no-report"])
    assert "each system's accuracy (55 audit labels)" in shown.output


def test_compare_audits_f1_with_the_agreements(runs):
    import bayeval as be

    runs.drop(columns="text").to_csv("runs.csv", index=False)
    args = ["compare", "--pool", "runs.csv", "--measure", "f1", "--budget", "200", "--json"]
    result = runner.invoke(app, [*args, "--audit", "30", "--audit-agreements", "30", "--no-report"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["measure"] == "f1"
    truth = runs["label"].to_numpy()
    pool = be.Pool(runs[list("abcd")].to_numpy(float), systems=list("abcd"))
    sampler = be.sampling.ModelSelection(pool, "f1", rng=0)
    sampler.run(truth, 200)
    ids = sampler.ask_audit(30, agreements=30)
    sampler.tell(ids, truth[ids])
    expected = _leader_rows(sampler.audited_differences(), out["best"])
    levels = sampler.audited_levels().interval(0.95)
    f1 = be.measures.FScore()
    for row in out["systems"]:
        assert [row["lower"], row["upper"]] == pytest.approx(expected[row["system"]])
        interval = levels.sel(system=row["system"]).values.tolist()
        assert [row["level_lower"], row["level_upper"]] == pytest.approx(interval)
        true = np.ravel(f1.value(truth, predictions=runs[row["system"]].to_numpy()))[0]
        assert row["true_level"] == pytest.approx(true)


def test_compare_by_hand_reads_f1_differences_once_an_agreement_is_answered(runs):
    """F1 moves with every item: before any audited agreement is answered the report keeps the
    sampler's differences (and says whose), then the audit's."""
    import bayeval as be

    runs.drop(columns="label").to_csv("unlabelled.csv", index=False)
    truth = runs["label"].to_numpy()
    pool = be.Pool(runs[list("abcd")].to_numpy(float), systems=list("abcd"))
    replay = be.sampling.ModelSelection(pool, "f1", rng=0)
    keys = []
    while not replay.done:
        ids = replay.ask(1)
        replay.tell(ids, truth[ids])
        keys.append("y" if truth[ids[0]] else "n")
    ids = replay.ask_audit(3, agreements=2)
    replay.tell(ids, truth[ids])
    keys += ["y" if t else "n" for t in truth[ids]]
    args = ["compare", "--pool", "unlabelled.csv", "--systems", "a,b,c,d", "--measure", "f1"]
    args += ["--no-report", "--json"]
    audit = ["--audit", "3", "--audit-agreements", "2"]
    first = runner.invoke(app, [*args, *audit], input="\n".join([*keys[:-2], "q"]) + "\n")
    assert first.exit_code == 0, first.output
    assert not json.loads(first.stdout)["model"].startswith("audit")
    status = runner.invoke(app, ["status", "compare_session.db", "--json"])  # the model's yet
    assert status.exit_code == 0, status.output
    again = runner.invoke(app, args, input="\n".join(keys[-2:]) + "\n")
    assert again.exit_code == 0, again.output
    out = json.loads(again.stdout)
    assert out["model"].startswith("audit") and out["measure"] == "f1"
    expected = _leader_rows(replay.audited_differences(), out["best"])
    for row in out["systems"]:
        assert [row["lower"], row["upper"]] == pytest.approx(expected[row["system"]])


def test_compare_by_hand_keeps_the_audit_across_a_quit(runs):
    """Quit halfway through the audit; the same command finishes it and reads the differences
    and, once an agreement is answered, each system's accuracy."""
    runs.drop(columns="label").to_csv("unlabelled.csv", index=False)
    replay, keys = _replayed(runs, audit=8, agreements=4)
    args = ["compare", "--pool", "unlabelled.csv", "--systems", "a,b,c,d", "--no-report", "--json"]
    cut = len(keys) - 9  # three of the eight disagreements audited, no agreement yet
    audit = ["--audit", "8", "--audit-agreements", "4"]
    first = runner.invoke(app, [*args, *audit], input="\n".join([*keys[:cut], "q"]) + "\n")
    assert first.exit_code == 0, first.output
    out = json.loads(first.stdout)
    assert out["audit_labels"] == 3
    assert "level" not in out["systems"][0]  # no agreement answered: no levels yet
    assert "Now the audit: 12 items drawn at random" in first.stderr
    assert "audit item 3 of 12" in first.stderr
    # continued without --audit: the session's audit goes on all the same
    again = runner.invoke(app, args, input="\n".join(keys[cut:]) + "\n")
    assert again.exit_code == 0, again.output
    assert "done: the audit's 12 items are labelled." in again.stderr
    out = json.loads(again.stdout)
    assert out["audit_labels"] == 12
    levels = replay.audited_levels().interval(0.95)
    for row in out["systems"]:
        expected = levels.sel(system=row["system"]).values.tolist()
        assert [row["level_lower"], row["level_upper"]] == pytest.approx(expected)
    assert out["labels_used"] == replay.labels_used == len(keys)
    expected = _leader_rows(replay.audited_differences(), out["best"])
    for row in out["systems"]:
        assert [row["lower"], row["upper"]] == pytest.approx(expected[row["system"]])
    # bayeval status shows the audit's differences too
    status = runner.invoke(app, ["status", "compare_session.db", "--json"])
    assert status.exit_code == 0, status.output
    for row in json.loads(status.stdout)["estimate"]:
        system = row["output"].split(" - ")[0]
        assert [row["lower"], row["upper"]] == pytest.approx(expected[system])


@pytest.mark.parametrize(
    ("args", "option", "message"),
    [
        (["--systems", "a,zz"], "--systems", "systems ['zz'] are not columns"),
        (["--systems", "a"], "--systems", "two or more system columns are needed"),
        (["--systems", "a,b", "--budget", "5000"], "--budget", "`budget` must be at most"),
        ([], "--pool", "column 'text' must hold finite numbers"),
        (["--choose", "best"], "--choose", "one of information, leaders, disagreement, uniform"),
        (["--prob", "1.5"], "--prob", "must be in the open interval (0, 1)"),
        (["--audit", "20", "--measure", "f1"], "--audit", "give --audit-agreements M as well"),
        (["--audit", "-1"], "--audit", "greater than or equal to 0"),
        (["--audit-agreements", "5"], "--audit-agreements", "needs --audit N"),
    ],
)
def test_compare_refuses_bad_options(runs, args, option, message):
    runs.to_csv("runs.csv", index=False)
    result = runner.invoke(app, ["compare", "--pool", "runs.csv", "--no-report", *args])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.replace("│", " ").split())
    assert option in text and message in text


@pytest.mark.parametrize("labelled", [True, False], ids=["label column", "by hand"])
def test_compare_refuses_a_budget_above_the_disagreements_and_leaves_no_session(
    runs, tmp_path, labelled
):
    table = runs.drop(columns="text" if labelled else ["text", "label"])
    table.to_csv("runs.csv", index=False)
    disagreements = int((runs[list("abcd")].nunique(axis=1) > 1).sum())
    args = ["compare", "--pool", "runs.csv", "--no-report", "--budget", str(disagreements + 1)]
    result = runner.invoke(app, args, input="")
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.replace("│", " ").split())
    assert "--budget" in text and f"`budget` must be at most {disagreements}" in text
    assert not list(tmp_path.glob("compare_session.db*"))  # nothing was asked
    # the disagreements themselves are a budget it takes
    args[-1] = str(disagreements)
    assert runner.invoke(app, args, input="q\n").exit_code == 0


@pytest.mark.parametrize(
    ("column", "value", "extra", "message"),
    [
        ("b", "", [], "column 'b' must hold finite numbers; data row 1500 holds nan"),
        ("c", "2", [], "column 'c' holds whole numbers other than 0 and 1 (data row 1500 holds 2)"),
        ("c", "fish", ["--classes", "cat,dog,bird"],
         "column 'c' must hold a class of ['cat', 'dog', 'bird']"),
    ],
    ids=["a shorter system", "a class in a two-class pool", "a class outside the classes"],
)  # fmt: skip
def test_compare_refuses_a_system_of_another_length_or_outside_the_labels(
    runs, column, value, extra, message
):
    table = runs.drop(columns="text").astype(object)
    if extra:  # a multiclass pool: class names in every column
        table = table.replace({0: "cat", 1: "dog"})
    table.loc[len(table) - 1, column] = value
    table.to_csv("runs.csv", index=False)
    args = ["compare", "--pool", "runs.csv", "--no-report", *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.replace("│", " ").split())
    assert "--pool" in text and message in text


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
    # by hand, unblinded: the systems' predicted classes shown by name, answers by name, q keeps
    # them
    table.drop(columns="label").to_csv("unlabelled.csv", index=False)
    by_hand = ["compare", "--pool", "unlabelled.csv", "--classes", "cat,dog,bird", "--no-report",
               "--unblind"]  # fmt: skip
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
