"""A precision curve labelled by people: the curve sampler in a session, at the terminal and in
the notebook widget, giving the curve an oracle run gives."""

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import bayeval as be
from bayeval import curves
from bayeval.cli import app
from bayeval.oracles import LabelOracle
from bayeval.session import Session

N = 4_000
SCORES = np.random.default_rng(0).random(N)
# precision falling with the score's rank, as a ranked list's does
TRUTH = (np.random.default_rng(1).random(N) < 0.4 + 0.55 * SCORES).astype(int)
METHODS = {"logstrat": curves.logstrat, "paula": curves.paula, "adastrat": curves.adastrat,
           "random": curves.random_baseline}  # fmt: skip
OPTIONS = {"logstrat": {"epsilon": 0.3}, "paula": {"epsilon": 0.3, "window": 40},
           "adastrat": {"epsilon": 0.3}, "random": {"n_samples": 300}}  # fmt: skip


def _by_rank(values):
    """``values`` of the pool's items in rank order (highest score first)."""
    return np.asarray(values)[np.argsort(-SCORES, kind="stable")]


@pytest.mark.parametrize("curve", list(METHODS))
def test_a_session_reopened_midway_gives_the_curve_of_an_oracle(tmp_path, curve):
    path = tmp_path / "s.db"
    sess = Session.create(path, be.Pool(SCORES), be.measures.Precision(), "curve", rng=7,
                          curve=curve, **OPTIONS[curve])  # fmt: skip
    asked = []
    while sess.stop_reason() is None:
        ids = sess.ask(25)
        asked += ids.tolist()
        sess.tell(ids[:10], TRUTH[ids[:10]])
        if len(asked) > 100 and sess.labels_count() < 120:  # the laptop closes mid-batch
            sess.close()
            sess = Session.open(path)
        sess.tell(ids[10:], TRUTH[ids[10:]])
    assert sess.stop_reason().startswith(f"the {curve} curve is complete")
    assert len(asked) == len(set(asked)) == sess.labels_count()
    result = sess.estimate()
    options = sess.sampler.curve_options  # the method's own seed among them
    direct = METHODS[curve](LabelOracle(_by_rank(TRUTH)), N, **options)
    assert result.annotations == direct.annotations == sess.labels_count()
    np.testing.assert_array_equal(result.queried, direct.queried)
    np.testing.assert_allclose(result.corner_estimate, direct.corner_estimate, rtol=1e-12)
    if curve in ("logstrat", "adastrat"):  # the posterior band of their stratified samples
        band = result.posterior_band(0.95)["band"]
        assert bool((band["lower"] <= band["upper"]).all()) and band.attrs["method"] == curve
    sess.close()


def test_before_the_curve_is_complete_the_estimate_says_what_it_needs(tmp_path):
    sampler = be.sampling.CurveSampler(be.Pool(SCORES), be.measures.Precision(), curve="paula",
                                       epsilon=0.3)  # fmt: skip
    ids = sampler.ask(10)
    sampler.tell(ids, TRUTH[ids])
    with pytest.raises(ValueError, match="no curve yet: the paula method needs"):
        sampler.estimate()
    with pytest.raises(ValueError, match="`method` must be one of"):
        be.sampling.CurveSampler(be.Pool(SCORES), be.measures.Precision(), curve="roc")


def test_a_person_labels_a_curve_in_the_widget_label_studio_and_the_terminal(tmp_path):
    # every item positive: the person answers y to each, and the curve is 1 at every rank
    path = tmp_path / "s.db"
    with Session.create(path, be.Pool(SCORES), be.measures.Precision(), "curve", rng=3,
                        curve="paula", epsilon=0.3, window=40) as sess:  # fmt: skip
        widget = be.label(sess, batch_size=20)
        for _ in range(30):  # the first 30 in the notebook
            widget._handle_custom_msg({"type": "answer", "item": widget.item, "choice": 0}, [])
        assert sess.labels_count() == 30 and "no estimate yet" in widget.estimate
        # the pending ranks go to Label Studio like any session's questions
        assert sess.export_pending(tmp_path / "tasks.json") == len(sess.pending) > 0
    result = CliRunner().invoke(app, ["label", str(path)], input="y\n" * 3_000)
    assert result.exit_code == 0, result.output[-2000:]
    assert "stopping: the paula curve is complete" in result.output
    assert "precision@1 " in result.output  # the estimate line: the curve at a few ranks
    with Session.open(path, read_only=True) as sess:
        curve = sess.estimate()
        assert curve.annotations == sess.labels_count()
        np.testing.assert_allclose(curve.at([1, 100, N]), 1.0)


def test_bayeval_label_creates_a_curve_session_and_refuses_what_cannot_go_with_it(tmp_path):
    pd.DataFrame({"score": SCORES}).to_csv(tmp_path / "pool.csv", index=False)
    runner = CliRunner()
    args = ["label", str(tmp_path / "s.db"), "--pool", str(tmp_path / "pool.csv")]
    result = runner.invoke(app, [*args, "--curve", "paula", "--epsilon", "0.3", "--seed", "2"],
                           input="y\n" * 5 + "q\n")  # fmt: skip
    assert result.exit_code == 0, result.output
    with Session.open(tmp_path / "s.db", read_only=True) as sess:
        assert sess.meta["sampler"] == "curve" and sess.labels_count() == 5
        assert sess.sampler.curve_options == {"epsilon": 0.3}
    for extra, says in (
        (["--curve", "roc"], "must be one of logstrat, paula, adastrat, random; got 'roc'"),
        (["--curve", "paula", "--sampler", "ais"], "leave --sampler and --measure out"),
        (["--epsilon", "0.3"], "got 0.3 without --curve"),
        (["--curve", "paula", "--epsilon", "2"], "must be in (0, 1]; got 2.0"),
        (["--curve", "adastrat"], "was not created with --curve adastrat"),
    ):
        result = runner.invoke(app, [*args, *extra], input="q\n")
        assert result.exit_code == 2 and says in " ".join(result.output.replace("│", " ").split())
