"""Crash safety (SIGKILL at random points) and one writer at a time."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import bayeval as be
from bayeval.session import Session, SessionInUseError

GEN = np.random.default_rng(8)
TRUTH = GEN.random(4_000) < 0.06
SCORES = np.where(TRUTH, GEN.beta(5, 2, TRUTH.size), GEN.beta(1, 8, TRUTH.size))
F1 = be.measures.FScore()
BATCH, BUDGET = 10, 200

# A labelling process: answers pending questions first, then asks; after each tell returns it
# prints the answered ids (the "told it was committed" the test checks against), then sleeps a
# little so that kills land anywhere in the loop.
WORKER = """
import json, sys, time
import numpy as np
from bayeval.session import Session
path, truth_file, batch, budget = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
truth = np.load(truth_file)
sess = Session.open(path)
print("open", flush=True)
while sess.labels_count() < budget:
    ids = sess.pending if len(sess.pending) else sess.ask(batch)
    for i in ids:  # one answer per tell: many commit points
        sess.tell([i], [truth[i]], annotator="worker")
        print(json.dumps(int(i)), flush=True)
        time.sleep(0.002)
sess.close()
print("done", flush=True)
"""


def _uninterrupted():
    sampler = be.sampling.AIS(be.Pool(SCORES), F1, rng=21, model=be.models.DirichletTree(depth=4))
    while sampler.labels_used < BUDGET:
        ids = sampler.ask(BATCH)
        sampler.tell(ids, TRUTH[ids])
    return sampler


def _label_then_kill(proc, gen, confirmed) -> int:
    """Read confirmations, then SIGKILL the worker at a random moment; 1 if killed."""
    assert proc.stdout.readline().strip() == "open"
    # kill after a random number of confirmed answers, at a random moment after it
    for _ in range(int(gen.integers(1, 30))):
        line = proc.stdout.readline().strip()
        if line in ("done", ""):
            proc.wait(timeout=60)
            return 0
        confirmed.append(json.loads(line))
    time.sleep(float(gen.uniform(0, 0.01)))
    os.kill(proc.pid, signal.SIGKILL)
    # answers confirmed between the last read and the kill count as confirmed too
    confirmed.extend(json.loads(x) for x in proc.stdout.read().split() if x != "done")
    proc.wait(timeout=60)
    return 1


def _work_and_kill(path, truth_file, batch, budget, *, seed, tries):
    """Run the worker on the session again and again, killing it at random moments.

    Return the answers it confirmed and how many times it was killed (it stops being run
    once it finishes the budget, or after ``tries`` runs).
    """
    script = path.with_name("worker.py")
    script.write_text(WORKER)
    gen = np.random.default_rng(seed)
    confirmed: list[int] = []
    kills = 0
    for _ in range(tries):
        with subprocess.Popen(
            [sys.executable, str(script), str(path), str(truth_file), str(batch), str(budget)],
            stdout=subprocess.PIPE,
            text=True,
        ) as proc:
            kills += _label_then_kill(proc, gen, confirmed)
        if proc.returncode == 0:
            break
    return confirmed, kills


def test_sigkill_at_random_points_loses_no_confirmed_answer(tmp_path):
    path, truth_file = tmp_path / "s.db", tmp_path / "truth.npy"
    np.save(truth_file, TRUTH)
    model = be.models.DirichletTree(depth=4)
    Session.create(path, be.Pool(SCORES), F1, "ais", rng=21, model=model).close()
    confirmed, kills = _work_and_kill(path, truth_file, BATCH, BUDGET, seed=0, tries=40)
    assert kills >= 8, "the budget ran out before enough kills: raise BUDGET"
    with Session.open(path) as sess:
        if sess.labels_count() < BUDGET:  # finish uninterrupted
            while sess.labels_count() < BUDGET:
                ids = sess.pending if len(sess.pending) else sess.ask(BATCH)
                sess.tell(ids, TRUTH[ids])
        answers = sess.answers()
        assert answers["id"].is_unique  # no answer recorded twice
        assert set(confirmed) <= set(answers["id"])  # every confirmed answer is there
        plain = _uninterrupted()
        np.testing.assert_array_equal(
            np.sort(answers["id"].to_numpy()), np.sort(plain.labelled()[0])
        )
        mine, theirs = sess.estimate(), plain.estimate()
        np.testing.assert_array_equal(mine.value, theirs.value)  # bit for bit
        np.testing.assert_array_equal(mine.covariance, theirs.covariance)


def test_a_second_writer_is_refused_and_a_reader_is_not(tmp_path):
    path = tmp_path / "s.db"
    sess = Session.create(path, be.Pool(SCORES), F1, "static_is", rng=1)
    ids = sess.ask(5)
    with pytest.raises(SessionInUseError, match="session is in use"):
        Session.open(path)
    with Session.open(path, read_only=True) as reader:
        assert len(reader.pending) == 5
        with pytest.raises(RuntimeError, match="open read-only"):
            reader.tell(ids, TRUTH[ids])
    sess.tell(ids, TRUTH[ids])
    sess.close()
    with Session.open(path) as again:  # the lock went with close()
        assert again.labels_count() == 5


LOCKER = """
import sys, time
from bayeval.session import Session
sess = Session.open(sys.argv[1])
print("locked", flush=True)
time.sleep(60)
"""


def test_the_lock_holds_across_processes_and_dies_with_its_holder(tmp_path):
    path = tmp_path / "s.db"
    Session.create(path, be.Pool(SCORES), F1, "static_is", rng=1).close()
    with subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(path)], stdout=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout.readline().strip() == "locked"
            with pytest.raises(SessionInUseError, match="session is in use"):
                Session.open(path)
        finally:
            proc.kill()
    with Session.open(path) as sess:  # a killed holder leaves no stale lock
        assert sess.labels_count() == 0


# A comparison: ModelSelection labels one item at a time where five systems disagree.
SYSTEMS_TRUTH = GEN.random(600) < 0.4
SYSTEMS = np.where(
    GEN.random((600, 5)) < [0.10, 0.11, 0.12, 0.13, 0.14],
    ~SYSTEMS_TRUTH[:, None],
    SYSTEMS_TRUTH[:, None],
).astype(int)
COMPARISON_BUDGET = 100  # at most 29 answers per kill: at least three kills


def _systems_pool():
    return be.Pool(SYSTEMS, systems=list("abcde"))


def test_sigkill_of_a_comparison_session_loses_no_answer_and_replays_exactly(tmp_path):
    path, truth_file = tmp_path / "s.db", tmp_path / "truth.npy"
    np.save(truth_file, SYSTEMS_TRUTH)
    options = {"target": 0.999}  # close systems: no stop before the budget
    measure = be.measures.Accuracy()
    Session.create(path, _systems_pool(), measure, "model_selection", rng=5, **options).close()
    confirmed, kills = _work_and_kill(path, truth_file, 1, COMPARISON_BUDGET, seed=1, tries=12)
    assert kills >= 3, "the budget ran out before enough kills: raise COMPARISON_BUDGET"
    plain = be.sampling.ModelSelection(_systems_pool(), rng=5, **options)
    plain.run(SYSTEMS_TRUTH, COMPARISON_BUDGET)
    assert plain.labels_used == COMPARISON_BUDGET
    with Session.open(path) as sess:
        while sess.labels_count() < COMPARISON_BUDGET:  # finish uninterrupted
            ids = sess.pending if len(sess.pending) else sess.ask(1)
            sess.tell(ids, SYSTEMS_TRUTH[ids])
        answers = sess.answers()
        assert answers["id"].is_unique  # no answer recorded twice
        assert set(confirmed) <= set(answers["id"])  # every confirmed answer is there
        # the same items in the same order, and the same posterior, as never interrupted
        np.testing.assert_array_equal(answers["id"].to_numpy(), plain.labelled()[0])
        np.testing.assert_array_equal(sess.sampler.prob_best, plain.prob_best)
