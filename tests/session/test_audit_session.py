"""A model selection's audit in a session: recorded, replayed, exchanged and read back."""

import sqlite3

import numpy as np
import pandas as pd
import pytest

import bayeval as be
from bayeval.session import SCHEMA_VERSION, Session
from tests.comparison.test_model_selection import shared_error_pool

POOL, TRUTH = shared_error_pool(3)


def _label(ids):
    return TRUTH[POOL.positions(ids)].astype(int)


def _chosen_then_audit(target, audit_sizes):
    """Label 40 chosen items one at a time, then audits of the given sizes; return their ids."""
    for _ in range(40):
        ids = target.ask(1)
        target.tell(ids, _label(ids))
    return [target.ask_audit(n) for n in audit_sizes]


def _version(path):
    with sqlite3.connect(path) as db:
        return db.execute("PRAGMA user_version").fetchone()[0]


def test_a_reopened_session_keeps_its_audit_and_continues_it_exactly(tmp_path):
    plain = be.sampling.ModelSelection(POOL, rng=5)
    first, second = _chosen_then_audit(plain, (10, 5))
    plain.tell(first, _label(first))
    plain.tell(second, _label(second))

    path = tmp_path / "s.db"
    with Session.create(path, POOL, be.measures.Accuracy(), "model_selection", rng=5) as sess:
        (audit,) = _chosen_then_audit(sess, (10,))
        assert _version(path) == SCHEMA_VERSION == 3  # binary sessions are 1 until an audit
        sess.tell(audit[:6], _label(audit[:6]))
    assert audit.tolist() == first.tolist()  # the sampler's own draws
    with Session.open(path) as sess:  # the audit drawn and the four pending came back
        assert sess.sampler.audit.tolist() == first.tolist()
        assert sorted(sess.pending.tolist()) == sorted(first[6:].tolist())
        with pytest.raises(ValueError, match=r"ask\(\) cannot choose items after ask_audit"):
            sess.ask(1)
        sess.tell(first[6:], _label(first[6:]))
        more = sess.ask_audit(5)
        assert more.tolist() == second.tolist()
        sess.tell(more, _label(more))
    with Session.open(path, read_only=True) as sess:
        ours = sess.audited_differences().posterior["posterior"]["difference"].values
        assert sess.labels_count() == plain.labels_used == 55
    theirs = plain.audited_differences().posterior["posterior"]["difference"].values
    assert np.array_equal(ours, theirs)


def test_an_audit_of_agreements_is_replayed_and_gives_each_systems_accuracy(tmp_path):
    plain = be.sampling.ModelSelection(POOL, rng=6)
    _chosen_then_audit(plain, ())
    drawn = plain.ask_audit(10, agreements=15)
    plain.tell(drawn, _label(drawn))
    path = tmp_path / "s.db"
    with Session.create(path, POOL, be.measures.Accuracy(), "model_selection", rng=6) as sess:
        _chosen_then_audit(sess, ())
        audit = sess.ask_audit(10, agreements=15)
    assert audit.tolist() == drawn.tolist()
    with Session.open(path) as sess:  # replayed with its agreements
        assert sess.sampler.audit.tolist() == drawn.tolist()
        assert sess.sampler.audit_agreements == 15
        sess.tell(audit, _label(audit))
        ours = sess.audited_levels().posterior["posterior"]["accuracy"].values
    theirs = plain.audited_levels().posterior["posterior"]["accuracy"].values
    assert np.array_equal(ours, theirs)


def test_a_session_without_an_audit_keeps_the_first_schema(tmp_path):
    path = tmp_path / "s.db"
    with Session.create(path, POOL, be.measures.Accuracy(), "model_selection", rng=1) as sess:
        ids = sess.ask(1)
        sess.tell(ids, _label(ids))
    assert _version(path) == 1


def test_the_audit_reads_labels_under_the_session_label_rule(tmp_path):
    path = tmp_path / "s.db"
    with Session.create(path, POOL, be.measures.Accuracy(), "model_selection", rng=2) as sess:
        (audit,) = _chosen_then_audit(sess, (20,))
        sess.tell(audit, _label(audit), annotator="ann")
        first_answers = sess.audited_differences().estimate.values
        # a second annotator re-judges three audit items: the latest answer counts
        flipped = 1 - _label(audit[:3])
        sess.tell(audit[:3], flipped, annotator="bob")
        latest = sess.audited_differences().estimate.values
        # the same as a sampler told the re-judged labels in the first place
        plain = be.sampling.ModelSelection(POOL, rng=2)
        (again,) = _chosen_then_audit(plain, (20,))
        plain.tell(again, np.concatenate([flipped, _label(again[3:])]))
        expected = plain.audited_differences().estimate.values
        assert np.array_equal(latest, expected)
        assert not np.array_equal(latest, first_answers)
        with pytest.raises(ValueError, match=r"`label_rule` must be 'latest' or 'majority'"):
            sess.audited_differences(label_rule="dawid-skene")


def test_audit_items_go_out_and_come_back_through_an_exchange_file(tmp_path):
    path = tmp_path / "s.db"
    with Session.create(path, POOL, be.measures.Accuracy(), "model_selection", rng=4) as sess:
        (audit,) = _chosen_then_audit(sess, (12,))
        assert sess.export_pending(tmp_path / "audit.csv") == 12
        sheet = pd.read_csv(tmp_path / "audit.csv")
        assert sheet["id"].tolist() == audit.tolist()  # in the order drawn
        sheet["label"] = _label(sheet["id"].to_numpy())
        sheet.to_csv(tmp_path / "answers.csv", index=False)
        report = sess.import_answers(tmp_path / "answers.csv", annotator="ann")
        assert report.recorded == 12
        assert len(sess.pending) == 0
        assert sess.audited_differences().estimate.shape == (5, 5)


def test_the_audit_needs_a_model_selection_session(tmp_path):
    pool = be.Pool(np.linspace(0.0, 1.0, 200))
    with Session.create(tmp_path / "s.db", pool, be.measures.FScore(), "passive", rng=0) as sess:
        with pytest.raises(ValueError, match=r"ask_audit\(\) needs a session of the "):
            sess.ask_audit(5)
        with pytest.raises(ValueError, match=r"audited_differences\(\) needs a session of the"):
            sess.audited_differences()
