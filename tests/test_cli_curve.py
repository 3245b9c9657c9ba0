import json

import numpy as np
import pytest
from typer.testing import CliRunner

from bayeval import curves
from bayeval.cli import app
from bayeval.oracles import LabelOracle

runner = CliRunner()
N = 20_000


@pytest.fixture(scope="module")
def pool():
    """Scores and labels of a classifier-like pool: positives are likelier at high scores."""
    rng = np.random.default_rng(3)
    scores = np.round(rng.normal(size=N), 3)  # rounding makes ties
    labels = rng.random(N) < 1.0 / (1.0 + np.exp(-(2.5 * scores - 0.5)))
    return scores, labels


@pytest.fixture
def files(tmp_path, pool):
    scores, labels = pool
    s, lab = tmp_path / "scores.txt", tmp_path / "labels.txt"
    s.write_text("\n".join(f"{v:.3f}" for v in scores) + "\n")
    lab.write_text("\n".join(str(int(v)) for v in labels) + "\n")
    return ["--scores", str(s), "--labels", str(lab)]


def _ranked(pool):
    scores, labels = pool
    return labels[np.argsort(-scores, kind="stable")]


LIBRARY = {
    "random": lambda o: curves.random_baseline(
        o, N, alpha=1.05 * 1.03 - 1, p_min=0.5, delta=0.05, rng=0
    ),
    "logstrat": lambda o: curves.logstrat(o, N, epsilon=0.03, delta=0.05, p_min=0.5, beta=1.05),
    "paula": lambda o: curves.paula(o, N, epsilon=0.03, window=100),
    "adastrat": lambda o: curves.adastrat(
        o, N, epsilon=0.03, delta=0.05, p_min=0.5, beta=1.05, eta=0.0, rng=0
    ),
}


def test_table_output(files, pool):
    result = runner.invoke(app, ["curve", *files])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"PAULA precision curve of {N:,} items" in out
    for column in ("rank", "estimate", "lower", "upper", "true", "within"):
        assert column in out
    res = curves.paula(LabelOracle(_ranked(pool)), N)
    assert f"{res.n_queries:,} queried ranks" in out
    assert f"{res.annotations:,} annotations" in out
    assert f"{N:,}" in out and "guarantee: deterministic" in out
    assert "plot saved" not in out


@pytest.mark.parametrize("method", ["random", "logstrat", "paula", "adastrat"])
def test_json_matches_the_library(files, pool, method):
    result = runner.invoke(app, ["curve", *files, "--method", method, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    ranked = _ranked(pool)
    res = LIBRARY[method](LabelOracle(ranked))
    assert out["method"] == method and out["n_items"] == N and out["plot"] is None
    assert out["queries"] == res.n_queries and out["annotations"] == res.annotations
    assert out["exact_len"] == res.exact_len and out["guarantee"] == res.guarantee
    assert out["adaptive"] is (method == "adastrat")
    assert out["planned_annotations"] == res.plan.annotations >= res.annotations
    planned = res.plan.max_queries if method == "adastrat" else res.plan.n_queries
    assert out["planned_queries"] == planned >= res.n_queries
    ranks = np.array([row["rank"] for row in out["rows"]])
    assert ranks[0] == 1 and ranks[-1] == N and 8 <= ranks.size <= 10
    assert np.allclose(np.diff(np.log(ranks)), np.log(N) / 9, atol=0.7)  # about log-spaced
    true_p = np.cumsum(ranked) / np.arange(1, N + 1)
    for key, values in [
        ("estimate", res.at(ranks)),
        ("lower", res.lower(ranks)),
        ("upper", res.upper(ranks)),
        ("true", true_p[ranks - 1]),
    ]:
        assert [row[key] for row in out["rows"]] == pytest.approx(values.tolist(), rel=1e-12)


def test_json_parameters_call_the_library(files, pool):
    args = ["--method", "logstrat", "--epsilon", "0.05", "--beta", "1.1", "--delta", "0.1"]
    result = runner.invoke(app, ["curve", *files, *args, "--p-min", "0.6", "--seed", "4", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["parameters"] == {
        "epsilon": 0.05,
        "r_tilde": None,
        "delta": 0.1,
        "p_min": 0.6,
        "beta": 1.1,
        "rng": 4,
    }
    res = curves.logstrat(LabelOracle(_ranked(pool)), N, **out["parameters"])
    assert out["annotations"] == res.annotations
    assert out["rows"][-1]["estimate"] == pytest.approx(float(res.at(N)))


def test_options_a_method_does_not_use_are_ignored(files):
    base = json.loads(runner.invoke(app, ["curve", *files, "--json"]).stdout)
    other = runner.invoke(
        app, ["curve", *files, "--json", "--seed", "9", "--beta", "3", "--delta", "2"]
    )
    assert other.exit_code == 0, other.output
    assert json.loads(other.stdout) == base
    paula = json.loads(
        runner.invoke(
            app, ["curve", *files, "--json", "--window", "50", "--epsilon", "0.05"]
        ).stdout
    )
    assert paula["parameters"] == {"epsilon": 0.05, "window": 50, "r_tilde": None}
    assert paula["queries"] == curves.plan_paula(N, epsilon=0.05, window=50).n_queries


def test_random_alpha_comes_from_epsilon_and_beta(files):
    result = runner.invoke(
        app, ["curve", *files, "--method", "random", "--epsilon", "0.05", "--beta", "1.1", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["parameters"]["alpha"] == pytest.approx(1.1 * 1.05 - 1)


def test_ties_keep_file_order(tmp_path):
    n = 5000
    (tmp_path / "s.txt").write_text("0.5\n" * n)
    (tmp_path / "l.txt").write_text("0\n" + "1\n" * (n - 1))
    args = ["curve", "--scores", str(tmp_path / "s.txt"), "--labels", str(tmp_path / "l.txt")]
    out = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    assert out["rows"][0] == {"rank": 1, "estimate": 0.0, "lower": 0.0, "upper": 0.0, "true": 0.0}


def test_plot_is_written(files, tmp_path):
    path = tmp_path / "curve.png"
    result = runner.invoke(app, ["curve", *files, "--plot", str(path)])
    assert result.exit_code == 0, result.output
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot saved to {path}" in result.stdout
    svg = tmp_path / "curve.svg"
    result = runner.invoke(
        app, ["curve", *files, "--method", "random", "--plot", str(svg), "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["plot"] == str(svg)
    assert "random baseline" in svg.read_text()


def _write(tmp_path, scores, labels):
    s, lab = tmp_path / "bad_scores.txt", tmp_path / "bad_labels.txt"
    s.write_text(scores)
    lab.write_text(labels)
    return ["--scores", str(s), "--labels", str(lab)], str(s), str(lab)


@pytest.mark.parametrize(
    ("scores", "labels", "message"),
    [
        ("0.9\n0.8\n0.7\n", "1\n0\n", "--scores file {s} has 3 lines but --labels file {l} has 2"),
        (
            "0.9\nhigh\n0.7\n",
            "1\n0\n1\n",
            "--scores file {s}, line 2: expected one number per line; got 'high'.",
        ),
        ("0.9\n\n0.7\n", "1\n0\n1\n", "--scores file {s}, line 2: the line is empty"),
        ("0.9\nnan\n0.7\n", "1\n0\n1\n", "--scores file {s}, line 2: scores must be numbers"),
        (
            "0.9\n0.8\n0.7\n",
            "1\n0\n2\n",
            "--labels file {l}, line 3: labels must be 0 or 1; got '2'",
        ),
        (
            "0.9\n0.8\n0.7\n",
            "1\nyes\n1\n",
            "--labels file {l}, line 2: expected one number per line; got 'yes'.",
        ),
        ("\n\n", "1\n", "--scores file {s} is empty; expected one number per line."),
    ],
)
def test_file_errors_name_file_and_line(tmp_path, scores, labels, message):
    args, s, lab = _write(tmp_path, scores, labels)
    result = runner.invoke(app, ["curve", *args])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert message.format(s=s, l=lab) in result.stderr


def test_trailing_blank_lines_and_float_labels_are_fine(tmp_path):
    args, _, _ = _write(tmp_path, "3\n2\n1\n\n\n", "1.0\n0.0\n1\n")
    result = runner.invoke(app, ["curve", *args, "--epsilon", "1", "--window", "1", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert [row["true"] for row in rows] == pytest.approx([1.0, 0.5, 2 / 3])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--epsilon", "0"], "`epsilon` must be in the half-open interval (0, 1]; got 0.0."),
        (["--window", "0"], "`window` must be"),
        (["--r-tilde", str(N + 1)], "`r_tilde`"),
        (["--method", "logstrat", "--beta", "1"], "`beta` must be greater than 1; got 1.0."),
        (["--method", "random", "--delta", "1.5"], "`delta`"),
        (["--method", "random", "--epsilon", "-1"], "`epsilon` must be in the half-open"),
        (["--method", "adastrat", "--eta", "0.6"], "`eta` must be in the half-open interval"),
        (["--method", "adastrat", "--eta", "-0.1"], "`eta` must be in the half-open interval"),
        (
            ["--method", "adastrat", "--beta", "1.01", "--eta", "0.05"],
            "`beta` must exceed 1 + eta = 1.05",
        ),
        (["--method", "adastrat", "--m", "0"], "`m` must be a whole number >= 1; got 0."),
        (["--method", "adastrat", "--p-min", "0"], "`p_min` must be in the half-open interval"),
        (["--method", "adastrat", "--delta", "1"], "`delta` must be in the open interval (0, 1)"),
        (["--method", "adastrat", "--epsilon", "2"], "`epsilon` must be in the half-open"),
        (["--method", "adastrat", "--r-tilde", "1"], "`m` has no default for r_tilde=1"),
    ],
)
def test_parameter_errors(files, args, message):
    result = runner.invoke(app, ["curve", *files, *args])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and message in result.stderr


def test_short_list_for_the_default_r_tilde(tmp_path):
    args, _, _ = _write(tmp_path, "3\n2\n1\n", "1\n0\n1\n")
    result = runner.invoke(app, ["curve", *args])
    assert result.exit_code == 2
    assert "`r_tilde` must not exceed n_items=3" in result.stderr


def test_unknown_method_and_missing_file(files, tmp_path):
    result = runner.invoke(app, ["curve", *files, "--method", "magic"])
    assert result.exit_code == 2 and "magic" in result.output
    missing = str(tmp_path / "nope.txt")
    result = runner.invoke(app, ["curve", "--scores", missing, "--labels", files[3]])
    assert result.exit_code == 2 and "nope.txt" in result.output


def test_plot_that_cannot_be_saved(files, tmp_path):
    result = runner.invoke(app, ["curve", *files, "--plot", str(tmp_path / "curve.xyz")])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: --plot {tmp_path / 'curve.xyz'}: cannot save the plot")
    missing_dir = tmp_path / "no" / "such" / "dir" / "curve.png"
    result = runner.invoke(app, ["curve", *files, "--plot", str(missing_dir)])
    assert result.exit_code == 2 and "cannot save the plot" in result.stderr


# ------------------------------------------------------------------------------------ AdaStrat


def test_adastrat_summary_says_queries_are_adaptive(files, pool):
    result = runner.invoke(app, ["curve", *files, "--method", "adastrat", "--epsilon", "0.03"])
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())  # rich wraps long lines
    res = LIBRARY["adastrat"](LabelOracle(_ranked(pool)))
    assert f"AdaStrat precision curve of {N:,} items" in out
    assert f"{res.n_queries:,} queried ranks, {res.annotations:,} annotations" in out
    assert (
        f"queries are adaptive: {res.n_queries:,} queried ranks (worst case "
        f"{res.plan.max_queries:,}) and {res.annotations:,} annotations (worst case "
        f"{res.plan.annotations:,}), for m = {res.m:,} and r_tilde = {res.r_tilde:,}."
    ) in out
    assert "queried ranks: " + ", ".join(f"{r:,}" for r in np.sort(res.queried)) in out
    # p falls below p_min = 0.5 at the bottom of this list: the summary says the guarantee fails
    below = np.sort(res.queried)[res.at(np.sort(res.queried)) < 0.5]
    assert below.size and f"below p_min = 0.5 at {below.size:,} queried rank" in out
    assert "guarantee: probability >= 1 - delta" in out


def test_adastrat_json_lists_its_queried_ranks_and_assumption(files, pool):
    args = ["--method", "adastrat", "--m", "50", "--eta", "0.02", "--beta", "1.1", "--seed", "3"]
    result = runner.invoke(app, ["curve", *files, *args, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["parameters"] == {
        "epsilon": 0.03,
        "m": 50,
        "r_tilde": None,
        "delta": 0.05,
        "p_min": 0.5,
        "beta": 1.1,
        "eta": 0.02,
        "rng": 3,
    }
    res = curves.adastrat(LabelOracle(_ranked(pool)), N, **out["parameters"])
    assert out["queried_ranks"] == sorted(res.queried.tolist())
    assert out["m"] == 50 and out["r_tilde"] == res.r_tilde == 3400
    assert out["queries"] == res.n_queries and out["annotations"] == res.annotations
    assert out["planned_queries"] == res.plan.max_queries
    assert out["rows"][-1]["estimate"] == pytest.approx(float(res.at(N)))
    default = json.loads(
        runner.invoke(app, ["curve", *files, "--method", "adastrat", "--json"]).stdout
    )
    assert default["m"] == curves.plan_adastrat(N).m  # --m defaults to the plan's


def test_adastrat_ignores_window_and_others_ignore_m_and_eta(files):
    base = ["curve", *files, "--json"]
    ada = json.loads(runner.invoke(app, [*base, "--method", "adastrat"]).stdout)
    assert (
        json.loads(runner.invoke(app, [*base, "--method", "adastrat", "--window", "7"]).stdout)
        == ada
    )
    for method in ("logstrat", "paula"):
        plain = json.loads(runner.invoke(app, [*base, "--method", method]).stdout)
        other = runner.invoke(app, [*base, "--method", method, "--m", "5", "--eta", "0.3"])
        assert other.exit_code == 0, other.output
        assert json.loads(other.stdout) == plain
        assert "queried_ranks" not in plain and plain["adaptive"] is False


def test_adastrat_flat_list_stops_after_one_query(tmp_path):
    n = 8000
    args, _, _ = _write(
        tmp_path, "\n".join(str(n - i) for i in range(n)), "1\n1\n1\n0\n" * (n // 4)
    )
    result = runner.invoke(app, ["curve", *args, "--method", "adastrat", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["queries"] == 1 and out["queried_ranks"] == [n]
    assert all(row["lower"] <= row["true"] <= row["upper"] for row in out["rows"])


def test_adastrat_short_list_is_annotated_in_full(tmp_path):
    args, _, _ = _write(tmp_path, "3\n2\n1\n", "1\n0\n1\n")
    result = runner.invoke(
        app, ["curve", *args, "--method", "adastrat", "--r-tilde", "3", "--m", "1", "--json"]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["queries"] == 0 and out["queried_ranks"] == [] and out["annotations"] == 3
    assert [row["estimate"] for row in out["rows"]] == pytest.approx([1.0, 0.5, 2 / 3])
    table = runner.invoke(
        app, ["curve", *args, "--method", "adastrat", "--r-tilde", "3", "--m", "1"]
    )
    assert table.exit_code == 0, table.output
    assert "queries are adaptive: 0 queried ranks" in " ".join(table.stdout.split())


def test_adastrat_plot_is_written(files, tmp_path):
    svg = tmp_path / "adastrat.svg"
    result = runner.invoke(app, ["curve", *files, "--method", "adastrat", "--plot", str(svg)])
    assert result.exit_code == 0, result.output
    assert "AdaStrat" in svg.read_text()


def test_help_describes_adastrat_and_its_options():
    from bayeval.cli.curve import _CURVE_METHOD_HELP

    result = runner.invoke(app, ["curve", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.stdout.replace("│", " ").split())  # rich boxes and wraps the help
    assert "adastrat (Sabharwal & Xue 2018) chooses its queried ranks adaptively" in text
    assert "--m " in text and "--eta " in text
    assert "label-noise rate" in text and "monotonicity gap" in text
    used = "adastrat: --epsilon, --m, --r-tilde, --delta, --p-min, --beta, --eta, --seed"
    assert used in _CURVE_METHOD_HELP


def _inverted(tmp_path):
    """A list whose top 3,400 items are negative and all others positive: p rises from 0 to 0.83,
    so AdaStrat's guaranteed envelope crosses (lower > upper) beyond the exact prefix."""
    return _write(
        tmp_path,
        "\n".join(str(N - i) for i in range(N)),
        "0\n" * 3400 + "1\n" * (N - 3400),
    )[0]


def test_adastrat_crossing_is_a_note_not_a_warning(tmp_path):
    args = _inverted(tmp_path)
    with pytest.warns(RuntimeWarning, match="crosses"):
        res = curves.adastrat(LabelOracle(np.arange(N) >= 3400), N, rng=0)
    assert res.crossing == (3401, N)
    # pytest turns warnings into errors: the command must handle this one itself
    result = runner.invoke(app, ["curve", *args, "--method", "adastrat"])
    assert result.exit_code == 0, result.output
    assert result.stderr == "" and "Warning" not in result.stdout
    out = " ".join(result.stdout.split())
    assert (
        "note: the guaranteed envelope crosses (lower > upper) somewhere in ranks 3,401 to "
        "20,000: the list is not weakly monotone there (m = 103, r_tilde = 3,400)"
    ) in out
    assert "lower and upper are not bounds there" in out
    assert out.index("note: the guaranteed envelope crosses") < out.index("guarantee: ")
    result = runner.invoke(app, ["curve", *args, "--method", "adastrat", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["crossing"] == [3401, N]
    assert result.stderr.startswith("note: the guaranteed envelope crosses (lower > upper)")
    assert "Warning" not in result.stderr


def test_adastrat_without_crossing_has_no_note(files):
    table = runner.invoke(app, ["curve", *files, "--method", "adastrat"])
    assert table.exit_code == 0, table.output
    assert "crosses" not in table.stdout and table.stderr == ""
    result = runner.invoke(app, ["curve", *files, "--method", "adastrat", "--json"])
    assert json.loads(result.stdout)["crossing"] is None and result.stderr == ""
    paula = json.loads(runner.invoke(app, ["curve", *files, "--json"]).stdout)
    assert "crossing" not in paula  # only adaptive methods report it
