"""``bayeval ondemand``: stateless replay, one system further per round of labels, and errors."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import bayeval as be
from bayeval.cli import app

runner = CliRunner()
TARGET_SE = "0.05"  # about 100 draws for the first system: fast, and several systems to go
MEASURES = ("precision", "recall", "f1")


def _flat(text: str) -> str:
    """Join an error box's wrapped lines, so messages can be searched for whole."""
    return " ".join(text.replace("│", " ").split())


@pytest.fixture(scope="module")
def universe():
    return be.ondemand.synthetic_universe(4, n_true=300, n_false=900, rng=5)


@pytest.fixture(scope="module")
def files(universe, tmp_path_factory):
    """SYSTEMS_DIR (one file per system, ids as strings) and the exhaustive sample Y0."""
    root = tmp_path_factory.mktemp("ondemand")
    runs = root / "runs"
    runs.mkdir()
    for name, ids in reversed(universe.systems.items()):  # created out of order on purpose
        (runs / f"{name}.txt").write_text("".join(f"{i}\n" for i in ids))
    y0 = root / "y0.txt"
    y0.write_text("\n".join(str(i) for i in universe.exhaustive(150, rng=6)) + "\n")
    return runs, y0


def _truth(universe, ids):
    return universe.label([int(x) for x in ids]).tolist()


def _direct(universe, y0, *, seed=0):
    """Drive OnDemandEvaluator in Python: each system's asked ids, and the evaluator."""
    exhaustive = y0.read_text().split()
    ev = be.ondemand.OnDemandEvaluator(exhaustive, target_se=float(TARGET_SE), rng=seed)
    asked = {}
    for name in sorted(universe.systems):
        ev.submit(name, [str(i) for i in universe.systems[name]])
        asked[name] = ev.ask()
        ev.tell(asked[name], _truth(universe, asked[name]))
    return asked, ev


def _write_labels(path, rows, header="id,label"):
    path.write_text(header + "\n" + "".join(f"{x},{y}\n" for x, y in rows))
    return path


def _run(files, *args):
    runs, y0 = files
    return runner.invoke(
        app, ["ondemand", str(runs), "--exhaustive", str(y0), "--target-se", TARGET_SE, *args]
    )


def _json(result):
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _check_rows(out, table):
    assert [row["system"] for row in out["rows"]] == table.index.tolist()
    for row in out["rows"]:
        for measure in MEASURES:
            for key in (measure, f"{measure}_lower", f"{measure}_upper"):
                expected = table.loc[row["system"], key]
                assert row[key] == (None if np.isnan(expected) else expected), (row, key)
        assert row["samples"] == table.loc[row["system"], "samples"]
        assert row["new_labels"] == table.loc[row["system"], "new_labels"]


def test_each_round_of_labels_goes_one_system_further_and_ends_as_in_python(
    universe, files, tmp_path
):
    asked, ev = _direct(universe, files[1])
    names = sorted(universe.systems)
    labels, ask = tmp_path / "labels.csv", tmp_path / "ask.txt"
    rows = []
    for k, name in enumerate(names):
        options = ["--ask", str(ask), "--json"] + (["--labels", str(labels)] if rows else [])
        out = _json(_run(files, *options))
        ids = ask.read_text().splitlines()
        assert ids == out["pending"] == asked[name]  # the same draws as in Python, in order
        assert out["complete"] == names[:k] and out["waiting"] == [name]
        assert out["not_submitted"] == names[k + 1 :] and not out["done"]
        assert [row["status"] for row in out["rows"]] == ["complete"] * k + ["waiting"]
        last = out["rows"][-1]  # its draws count once all of them are labelled
        assert last["samples"] == 0 < last["planned_samples"] and out["labels_used"] == len(rows)
        assert out["ask_file"] == str(ask)
        rows += [(x, "yes" if y else "no") for x, y in zip(ids, _truth(universe, ids), strict=True)]
        _write_labels(labels, rows)  # a person labels the ids, appending to one file
    out = _json(_run(files, "--labels", str(labels), "--ask", str(ask), "--json"))
    assert out["done"] and out["pending"] == [] and ask.read_text() == ""
    assert out["complete"] == names and out["waiting"] == out["not_submitted"] == []
    assert out["labels_used"] == len(rows) == ev.submissions["new_labels"].sum()
    assert (out["estimator"], out["interval"], out["prob"]) == ("joint", "normal", 0.95)
    assert out["header"] == "joint, 95% normal" == ev.table().columns.name
    _check_rows(out, ev.table())
    planned = ev.submissions
    for row in out["rows"]:
        assert row["planned_samples"] == row["samples"] == planned.loc[row["system"], "samples"]
        assert row["planned_se"] == planned.loc[row["system"], "planned_se"]
    # the text table says the same
    result = _run(files, "--labels", str(labels))
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "4 of 4 systems submitted (seed 0, target se 0.05)" in text
    assert "joint estimates, 95% normal intervals" in text
    assert "normal (Theorem 1 and delta-method standard errors)" in _flat(text)
    assert "all 4 systems are evaluated." in text
    s00 = ev.table().loc["s00"]
    assert f"{s00['recall']:.3f} [{s00['recall_lower']:.3f}, {s00['recall_upper']:.3f}]" in text


def test_a_shared_labels_file_and_partly_labelled_systems(universe, files, tmp_path):
    asked, ev = _direct(universe, files[1])
    everything = _write_labels(
        tmp_path / "all.csv",
        [(i, int(y)) for i, y in enumerate(universe.truth)],  # mostly never asked: ignored
    )
    out = _json(_run(files, "--labels", str(everything), "--json"))
    assert out["done"] and out["labels_used"] == ev.submissions["new_labels"].sum()
    _check_rows(out, ev.table())
    # the second system half labelled: its draws do not count yet
    first, second = asked["s00"], asked["s01"]
    half = len(second) // 2
    labels = tmp_path / "part.csv"  # other columns are ignored, in any order
    labels.write_text(
        "note,label,id\n"
        + "".join(
            f"x,{'TRUE' if y else 'False'},{x}\n"
            for x, y in zip(first, _truth(universe, first), strict=True)
        )
        + "".join(
            f",{y},{x}\n"
            for x, y in zip(second[:half], _truth(universe, second[:half]), strict=True)
        )
    )
    out = _json(_run(files, "--labels", str(labels), "--json"))
    assert out["pending"] == second[half:] and out["waiting"] == ["s01"]
    assert out["labels_used"] == len(first) + half
    partial = be.ondemand.OnDemandEvaluator(
        files[1].read_text().split(), target_se=float(TARGET_SE), rng=0
    )
    for name, ids in (("s00", first), ("s01", second[:half])):
        partial.submit(name, [str(i) for i in universe.systems[name]])
        partial.tell(ids, _truth(universe, ids))
    _check_rows(out, partial.table())
    row = out["rows"][1]
    assert row["samples"] == 0 < row["planned_samples"] == ev.submissions.loc["s01", "samples"]
    assert row["precision"] is None and out["rows"][0]["precision"] is not None
    for interval in ("bootstrap", "bayes"):  # resampling while a system waits: no warning
        for estimator in ("joint", "simple"):
            out = _json(_run(files, "--labels", str(labels), "--json", "--interval", interval,
                             "--estimator", estimator))  # fmt: skip
            _check_rows(out, partial.table(estimator, interval=interval))
        out = _json(_run(files, "--json", "--interval", interval))  # no label at all
        assert all(r[m] is None for r in out["rows"] for m in MEASURES)
    # without --ask the ids still needed are printed, one per line
    result = _run(files, "--labels", str(labels))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "ids need a label" in line)
    assert lines[start + 1 :] == second[half:]
    assert "waiting for labels: s01" in result.stdout
    assert "not submitted yet: s02, s03" in result.stdout


def test_estimators_interval_kinds_and_an_exact_header(universe, files, tmp_path):
    _, ev = _direct(universe, files[1])
    labels = _write_labels(
        tmp_path / "all.csv", [(i, int(y)) for i, y in enumerate(universe.truth)]
    )
    for estimator, interval, prob in (("simple", "bootstrap", 0.975), ("joint", "bayes", 0.8)):
        out = _json(
            _run(files, "--labels", str(labels), "--json", "--estimator", estimator,
                 "--interval", interval, "--prob", str(prob))
        )  # fmt: skip
        table = ev.table(estimator, interval=interval, prob=prob)
        _check_rows(out, table)
        assert out["interval_description"] == table.attrs["interval"]
        assert out["header"] == f"{estimator}, {prob * 100:g}% {interval}"
    result = _run(files, "--labels", str(labels), "--interval", "bootstrap", "--prob", "0.975")
    assert result.exit_code == 0, result.output
    assert "joint estimates, 97.5% bootstrap intervals" in result.stdout
    # another seed draws other instances
    other = _json(_run(files, "--seed", "1", "--json"))
    first = _json(_run(files, "--json"))
    assert other["pending"] != first["pending"]


def test_labels_of_y0_instances_are_true_by_definition(universe, files, tmp_path):
    y0 = files[1].read_text().split()
    labels = _write_labels(tmp_path / "labels.csv", [(y0[0], 0), (y0[1], 1)])
    result = _run(files, "--labels", str(labels), "--json")
    assert result.exit_code == 0, result.output
    assert "gives label 0 to 1 id(s) of the --exhaustive sample" in _flat(result.stderr)
    assert json.loads(result.stdout)["contradicted"] == [y0[0]]


def _error(result, option, *parts):
    assert result.exit_code == 2, result.output
    text = _flat(result.output)
    assert f"'{option}'" in text, text
    for part in parts:
        assert part in text, (part, text)
    assert "Traceback" not in result.output


def test_errors(universe, files, tmp_path):
    runs, y0 = files
    base = ["ondemand", "--exhaustive", str(y0)]
    _error(runner.invoke(app, [*base, str(tmp_path / "nope")]), "SYSTEMS_DIR", "does not exist")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / ".hidden").write_text("1\n")
    _error(runner.invoke(app, [*base, str(empty)]), "SYSTEMS_DIR", "holds no files")
    _error(runner.invoke(app, [*base, str(y0)]), "SYSTEMS_DIR", "is a file, not a directory")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "a.txt").write_text("1\n2\n")
    (bad / "b.txt").write_text("\n  \n")
    _error(runner.invoke(app, [*base, str(bad)]), "SYSTEMS_DIR", "b.txt' is empty")
    (bad / "b.txt").write_text("1\n\n2\n1\n")
    _error(runner.invoke(app, [*base, str(bad)]), "SYSTEMS_DIR", "repeats id '1' (lines 1 and 4)")
    (bad / "b.txt").write_text("3\n")
    (bad / "b.csv").write_text("4\n")
    _error(runner.invoke(app, [*base, str(bad)]), "SYSTEMS_DIR", "are both system 'b'")
    missing = ["ondemand", str(runs), "--exhaustive", str(tmp_path / "y0.txt")]
    _error(runner.invoke(app, missing), "--exhaustive", "does not exist")
    (tmp_path / "blank.txt").write_text("\n\n")
    blank = ["ondemand", str(runs), "--exhaustive", str(tmp_path / "blank.txt")]
    _error(runner.invoke(app, blank), "--exhaustive", "is empty")

    labels = tmp_path / "labels.csv"
    _write_labels(labels, [("1", "1"), ("2", "maybe")])
    _error(_run(files, "--labels", str(labels)), "--labels", "line 3",
           "must be 1/0, true/false or yes/no; got 'maybe'")  # fmt: skip
    _write_labels(labels, [("1", "1"), ("2", "")])
    _error(_run(files, "--labels", str(labels)), "--labels", "line 3", "got ''")
    _write_labels(labels, [("1", "1"), ("2", "0"), ("1", "yes"), ("2", "1")])
    _error(_run(files, "--labels", str(labels)), "--labels",
           "id '2' has conflicting labels, 0 on line 3 and 1 on line 5")  # fmt: skip
    _write_labels(labels, [("1", "1")], header="item,answer")
    _error(_run(files, "--labels", str(labels)), "--labels", "columns 'id' and 'label'",
           "['item', 'answer']")  # fmt: skip
    labels.write_text("1,1\n2,0\n")  # no header
    _error(_run(files, "--labels", str(labels)), "--labels", "columns 'id' and 'label'")
    _error(_run(files, "--labels", str(tmp_path / "none.csv")), "--labels", "does not exist")

    _error(_run(files, "--prob", "1.5"), "--prob", "open interval (0, 1); got 1.5")
    _error(_run(files, "--target-se", "0"), "--target-se", "positive number; got 0.0")
    _error(_run(files, "--estimator", "pooled"), "--estimator", "'pooled'", "joint", "simple")
    _error(_run(files, "--interval", "hdi"), "--interval", "'hdi'", "normal", "bootstrap", "bayes")
    _error(_run(files, "--max-samples", "0"), "--max-samples")
