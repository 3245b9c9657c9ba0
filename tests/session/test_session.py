"""Durable sessions: replay equals an uninterrupted run, and bad files give clear errors."""

import json
import sqlite3

import numpy as np
import pytest

import bayeval as be
from bayeval.models import DirichletTree
from bayeval.session import SCHEMA_VERSION, Session

GEN = np.random.default_rng(4)
TRUTH = GEN.random(3_000) < 0.05
SCORES = np.where(TRUTH, GEN.beta(5, 2, TRUTH.size), GEN.beta(1, 8, TRUTH.size))
F1 = be.measures.FScore()
OPTIONS = {
    "ais": {"model": DirichletTree(depth=3)},
    "stratified": {"allocation": "neyman", "n_strata": 6},
    "stochastic_ais": {"model": DirichletTree(depth=3)},
    "static_is": {},
}


def _labels(ids, pool):
    return TRUTH[pool.positions(ids)]


@pytest.mark.parametrize("name", list(OPTIONS))
def test_a_reopened_session_continues_exactly_like_an_uninterrupted_run(tmp_path, name):
    pool = be.Pool(SCORES, ids=np.arange(SCORES.size) * 3 + 11)  # ids are not positions
    plain = be.sampling.run.sampler_class(name)(pool, F1, rng=5, **OPTIONS[name])
    asked_plain = []
    for _ in range(6):
        ids = plain.ask(25)
        asked_plain.append(ids)
        plain.tell(ids, _labels(ids, pool))

    path = tmp_path / "s.db"
    asked = []
    sess = Session.create(path, pool, F1, name, rng=5, **OPTIONS[name])
    for stage in range(6):
        if stage in (2, 4):  # interrupted twice, once with questions pending
            ids = sess.ask(25)
            sess.close()
            sess = Session.open(path)
            np.testing.assert_array_equal(np.sort(sess.pending), np.sort(ids))
        else:
            ids = sess.ask(25)
        asked.append(ids)
        sess.tell(ids, _labels(ids, pool), annotator="a1")
    for a, b in zip(asked, asked_plain, strict=True):
        np.testing.assert_array_equal(a, b)
    mine, theirs = sess.estimate(), plain.estimate()
    np.testing.assert_array_equal(mine.value, theirs.value)  # bit for bit
    np.testing.assert_array_equal(mine.covariance, theirs.covariance)
    assert sess.labels_count() == plain.labels_used
    sess.close()


def test_every_answer_is_in_the_file_with_its_annotator(tmp_path):
    pool = be.Pool(SCORES)
    path = tmp_path / "s.db"
    with Session.create(path, pool, F1, "static_is", rng=1) as sess:
        ids = sess.ask(10)
        sess.tell(ids[:4], TRUTH[ids[:4]], annotator="ann")
        sess.tell(ids[4:], TRUTH[ids[4:]])
    db = sqlite3.connect(path)
    rows = db.execute("SELECT item, label, annotator FROM answers ORDER BY event, rank").fetchall()
    assert [r[0] for r in rows] == ids.tolist()
    assert [r[1] for r in rows] == TRUTH[ids].astype(int).tolist()
    assert [r[2] for r in rows] == ["ann"] * 4 + [None] * 6
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1  # binary: the first schema


def test_a_refused_tell_records_nothing(tmp_path):
    path = tmp_path / "s.db"
    with Session.create(path, be.Pool(SCORES), F1, "static_is", rng=1) as sess:
        ids = sess.ask(5)
        with pytest.raises(ValueError, match="only 0 and 1"):
            sess.tell(ids, [0, 1, 2, 0, 1])
        sess.tell(ids[:2], TRUTH[ids[:2]])
    with Session.open(path) as sess:
        assert sess.labels_count() == 2 and len(sess.pending) == 3
    count = sqlite3.connect(path).execute("SELECT COUNT(*) FROM answers").fetchone()[0]
    assert count == 2


def test_string_ids_and_several_systems_round_trip(tmp_path):
    ids = np.array([f"doc-{i}" for i in range(SCORES.size)], dtype=object)
    pool = be.Pool(np.stack([SCORES, SCORES**2], axis=1), ids=ids, systems=["a", "b"])
    path = tmp_path / "s.db"
    with Session.create(path, pool, F1, "static_is", rng=2) as sess:
        asked = sess.ask(8)
        sess.tell(asked, TRUTH[pool.positions(asked)])
        before = sess.estimate()
    with Session.open(path) as sess:
        assert sess.sampler.pool.ids[0] == "doc-0"
        assert sess.estimate().outputs == ("a/f1", "b/f1")
        np.testing.assert_array_equal(sess.estimate().value, before.value)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda p: p.write_text("a,b\n1,2\n"), "is not a bayeval session"),
        (lambda p: p.write_bytes(_valid(p)[:300]), "is not a bayeval session|damaged"),
        (lambda p: sqlite3.connect(p).execute("CREATE TABLE t (x)"), "is not a bayeval session"),
    ],
)
def test_foreign_and_truncated_files_are_refused_clearly(tmp_path, make, match):
    path = tmp_path / "bad.db"
    make(path)
    with pytest.raises(ValueError, match=match):
        Session.open(path)


def _valid(path):
    other = path.with_name("valid.db")
    Session.create(other, be.Pool(SCORES), F1, "static_is", rng=1).close()
    return other.read_bytes()


def test_newer_schema_and_changed_pool_are_refused(tmp_path):
    path = tmp_path / "s.db"
    Session.create(path, be.Pool(SCORES), F1, "static_is", rng=1).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.commit()
    with pytest.raises(ValueError, match="written by a newer bayeval"):
        Session.open(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    db.execute("UPDATE meta SET value = 'x' WHERE key = 'pool_sha256'")
    db.commit()
    with pytest.raises(ValueError, match="does not match its checksum"):
        Session.open(path)


def test_create_refuses_what_it_cannot_keep(tmp_path):
    pool, path = be.Pool(SCORES), tmp_path / "s.db"
    path.write_text("")
    with pytest.raises(ValueError, match="must not exist yet"):
        Session.create(path, pool, F1, "static_is", rng=1)
    with pytest.raises(ValueError, match="`rng` must be an integer seed"):
        Session.create(tmp_path / "t.db", pool, F1, "static_is", rng=np.random.default_rng(1))
    with pytest.raises(ValueError, match="must be a JSON value"):
        Session.create(tmp_path / "u.db", pool, F1, "static_is", rng=1, strata=pool.stratify(4))
    with pytest.raises(ValueError, match="`measure` must be a bayeval.measures measure"):
        Session.create(tmp_path / "v.db", pool, "f1", "static_is", rng=1)
    assert not (tmp_path / "v.db").exists()
    with pytest.raises(ValueError, match="must be an existing session file"):
        Session.open(tmp_path / "missing.db")


def test_a_pool_kept_outside_the_session_is_checked_on_open(tmp_path):
    ids = np.array([f"doc-{i}" for i in range(SCORES.size)], dtype=object)
    pool = be.Pool(SCORES, ids=ids)
    path, pool_file = tmp_path / "s.db", tmp_path / "pool.npz"
    with Session.create(path, pool, F1, "static_is", rng=3, pool_file=pool_file) as sess:
        asked = sess.ask(20)
        sess.tell(asked, TRUTH[pool.positions(asked)])
        before = sess.estimate()
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM arrays").fetchone()[0] == 0  # not in the session
    db.close()
    with Session.open(path) as sess:
        np.testing.assert_array_equal(sess.estimate().value, before.value)
        assert sess.sampler.pool.ids[5] == "doc-5"
    moved = tmp_path / "elsewhere.npz"
    pool_file.rename(moved)
    with pytest.raises(ValueError, match="pool file .* is missing; if it moved"):
        Session.open(path)
    with Session.open(path, pool_file=moved) as sess:
        assert sess.labels_count() == 20
    other = be.Pool(SCORES[::-1].copy(), ids=ids)
    np.savez(moved, scores=other.scores, predictions=other.predictions, ids=ids.astype(str))
    with pytest.raises(ValueError, match="a file for another pool \\(checksum mismatch\\)"):
        Session.open(path, pool_file=moved)
    with pytest.raises(ValueError, match="holds another pool"):
        Session.create(tmp_path / "t.db", pool, F1, "static_is", rng=3, pool_file=moved)
    with pytest.raises(ValueError, match="must be an .npz file"):
        Session.create(tmp_path / "u.db", pool, F1, "static_is", rng=3, pool_file="p.csv")


def test_the_random_state_is_recorded_and_checked_on_replay(tmp_path):
    path = tmp_path / "s.db"
    with Session.create(path, be.Pool(SCORES), F1, "static_is", rng=9) as sess:
        sess.ask(5)
        state = sess.sampler._rng.bit_generator.state
    db = sqlite3.connect(path)
    stored = db.execute("SELECT rng_state FROM events WHERE kind = 'ask'").fetchone()[0]
    assert json.loads(stored) == state  # the bit generator's state after the ask
    db.execute("UPDATE events SET rng_state = '{}' WHERE kind = 'ask'")
    db.commit()
    db.close()
    with pytest.raises(ValueError, match="another random state than recorded"):
        Session.open(path)
