"""``bayeval evaluate`` labelled by hand, killed mid-stage: nothing answered is lost.

A person answers at the terminal of a real ``bayeval evaluate`` process (its standard input and
output are pipes); the process is killed with SIGKILL in the middle of a stage, twice, and run
again each time. Every answer it had confirmed (by showing the next item) is in the session
file, none twice, and the finished session asked the same items in the same order as a run
never interrupted.
"""

import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from bayeval.session import Session

PROMPT = "label [y/n/s/u/q, ? for help]: "
BUDGET, BATCH = 15, 5
TIMEOUT = 120  # seconds for one answer's next prompt (a stage's estimate included)


@pytest.fixture
def pool_file(text_pool_file):
    """300 scored items with string ids and a text, 10% positives; and their labels."""
    path, _, truth = text_pool_file(300, 0.1, seed=1)
    return path, truth


class Terminal:
    """A ``bayeval evaluate`` process whose prompts are answered from the known labels."""

    def __init__(self, pool, session):
        command = ["from bayeval.cli import app; app()", "evaluate", "--pool", str(pool),
                   "--budget", str(BUDGET), "--batch-size", str(BATCH), "--seed", "4",
                   "--session", str(session), "--no-report"]  # fmt: skip
        self.proc = subprocess.Popen(
            [sys.executable, "-c", *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"},
        )
        self.text = ""
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        while chunk := os.read(self.proc.stdout.fileno(), 4096):
            with self._lock:
                self.text += chunk.decode()

    def wait_for_prompt(self, count: int) -> str | None:
        """Wait until the ``count``-th prompt; return the id it asks about (None: it ended)."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            with self._lock:
                text = self.text
            if text.count(PROMPT) >= count:
                return re.findall(r"\(id '(doc-\d{3})'\)", text)[count - 1]
            if self.proc.poll() is not None:
                return None
            time.sleep(0.05)
        raise AssertionError(f"no prompt {count} within {TIMEOUT} s; output:\n{self.text}")

    def close(self) -> int:
        """Kill the process if it still runs; return its exit status once its output is read."""
        if self.proc.poll() is None:
            self.proc.kill()
        code = self.proc.wait(timeout=TIMEOUT)
        self._reader.join(timeout=TIMEOUT)
        self.proc.stdin.close()
        self.proc.stdout.close()
        return code

    def answer(self, label: int) -> None:
        self.proc.stdin.write(b"y\n" if label else b"n\n")
        self.proc.stdin.flush()


def _label(pool, session, truth, stop_after=None):
    """Answer until the budget, or SIGKILL once ``stop_after`` answers are confirmed.

    Return the ids answered and confirmed (the next prompt shown, or the run finished), and
    the exit status.
    """
    terminal = Terminal(pool, session)
    confirmed = []
    try:
        item = terminal.wait_for_prompt(1)
        while item is not None:
            terminal.answer(truth[item])
            following = terminal.wait_for_prompt(len(confirmed) + 2)
            confirmed.append(item)  # shown the next item (or finished): it is committed
            if stop_after is not None and len(confirmed) == stop_after and following:
                terminal.proc.send_signal(signal.SIGKILL)
                break
            item = following
        terminal.proc.wait(timeout=TIMEOUT)
    finally:
        code = terminal.close()
    return confirmed, code, terminal.text


def test_a_killed_evaluate_loses_no_answer_and_continues_as_if_never_stopped(tmp_path, pool_file):
    pool, truth = pool_file
    plain, code, _ = _label(pool, tmp_path / "plain.db", truth)
    assert code == 0 and len(plain) == BUDGET
    killed = tmp_path / "killed.db"
    given = []
    for stop_after in (7, 4):  # the first kill mid-stage 2; the second mid-stage 3 (7 + 4)
        confirmed, code, text = _label(pool, killed, truth, stop_after)
        assert code == -signal.SIGKILL, text
        given += confirmed
        with Session.open(killed, read_only=True) as sess:
            answers = sess.answers()
        assert answers["id"].tolist() == given  # every confirmed answer, once, in order
        assert answers["label"].tolist() == [truth[i] for i in given]
    rest, code, text = _label(pool, killed, truth)
    assert code == 0, text
    assert "continuing session" in text
    # the same questions, in the same order, as the run never interrupted
    assert given + rest == plain
    with Session.open(killed, read_only=True) as a, Session.open(tmp_path / "plain.db") as b:
        assert a.labels_count() == b.labels_count() == BUDGET
        assert a.sampler.labelled()[0].tolist() == b.sampler.labelled()[0].tolist()
        assert float(a.estimate().value[0]) == pytest.approx(float(b.estimate().value[0]))
