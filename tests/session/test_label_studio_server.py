"""A session's questions labelled in a real Label Studio server, and its answers read back.

The test starts Label Studio (``make test`` installs it in ``.venv-label-studio``; the path is
``BAYEVAL_LABEL_STUDIO``) on 127.0.0.1 with a fresh data folder, creates a project from
``bayeval export --format label-studio`` and its config, posts an annotation per task through
the REST API as an annotator's browser does, downloads the project's JSON export and records
it with ``bayeval import``. With ``CI=true`` a missing Label Studio fails the test; elsewhere it
skips. Recipe and timings: the shared notes' ``label-studio-server.md`` (about 50 s to migrate
a fresh data folder on a 2-core machine).
"""

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

import bayeval as be
from bayeval.cli import app
from bayeval.session import Session

pytestmark = pytest.mark.label_studio

STARTUP = 300  # seconds for a fresh server to migrate its database and answer /health
runner = CliRunner()


def _executable() -> str:
    path = os.environ.get("BAYEVAL_LABEL_STUDIO") or shutil.which("label-studio")
    if path and Path(path).exists():
        return path
    message = "Label Studio is not installed (make test installs it in .venv-label-studio)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}; with CI=true it must run.")
    pytest.skip(message)


class Server:
    """A Label Studio server on 127.0.0.1 and its REST API (token authentication)."""

    def __init__(self, folder: Path):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url, self.token = f"http://127.0.0.1:{port}", secrets.token_hex(20)
        scrubbed = {k: v for k, v in os.environ.items()
                    if k not in ("HOST", "PORT", "USERNAME", "PASSWORD", "DEBUG")}  # fmt: skip
        env = {
            **scrubbed,
            "LABEL_STUDIO_BASE_DATA_DIR": str(folder / "data"),
            "LABEL_STUDIO_USERNAME": "annotator@example.org",
            "LABEL_STUDIO_PASSWORD": secrets.token_hex(12),
            "LABEL_STUDIO_USER_TOKEN": self.token,
            "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
            "SENTRY_DSN": "", "FRONTEND_SENTRY_DSN": "", "COLLECT_ANALYTICS": "false",
            "APP_WEBSERVER": "uwsgi",  # no version check against the package index
        }  # fmt: skip
        self.log = (folder / "label-studio.log").open("wb")
        self.proc = subprocess.Popen(
            [_executable(), "start", "--no-browser", "--internal-host", "127.0.0.1",
             "--port", str(port)],
            env=env, stdout=self.log, stderr=subprocess.STDOUT, cwd=folder,
        )  # fmt: skip
        self.log_path = folder / "label-studio.log"

    def wait(self) -> None:
        deadline = time.monotonic() + STARTUP
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"Label Studio exited:\n{self.log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=5) as response:
                    if json.loads(response.read()).get("status") == "UP":
                        return
            except OSError:
                pass
            time.sleep(1)
        raise AssertionError(f"Label Studio not up in {STARTUP} s")

    def api(self, method: str, path: str, body=None):
        request = urllib.request.Request(
            f"{self.url}{path}",
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read() or b"null")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = Server(tmp_path_factory.mktemp("label-studio"))
    try:
        running.wait()
        yield running
    finally:
        running.stop()


@pytest.fixture
def items(text_pool_file):
    """A pool file (id, score, prediction, text) of 400 items, and each item's true label."""
    return text_pool_file(400, 0.15, seed=5)


def _session(path, frame, asked):
    pool = be.Pool(frame["score"].to_numpy(), frame["prediction"].to_numpy(),
                   ids=frame["id"].to_numpy())  # fmt: skip
    sess = Session.create(path, pool, be.measures.FScore(), "static_is", rng=3)
    for _ in range(asked):
        sess.ask(10)
    return sess


def test_a_session_round_trips_through_a_real_label_studio(server, items, tmp_path):
    pool_file, frame, truth = items
    with _session(tmp_path / "s.db", frame, asked=2) as sess:
        asked = sess.pending.tolist()
    # the pool file itself as --data: blind, its score and prediction are not exported
    result = runner.invoke(app, ["export", str(tmp_path / "s.db"), str(tmp_path / "tasks.json"),
                                 "--data", str(pool_file), "--label-studio-config",
                                 str(tmp_path / "config.xml")])  # fmt: skip
    assert result.exit_code == 0, result.output
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    assert [t["data"]["bayeval_id"] for t in tasks] == asked
    assert all(set(t["data"]) == {"bayeval_id", "text"} for t in tasks)  # no score, prediction
    assert all(set(t["meta"]) == {"bayeval_id", "bayeval_session"} for t in tasks)  # no stratum
    # a project from the export, one annotation per task as the annotator's browser posts it
    config = (tmp_path / "config.xml").read_text()
    assert '<Text name="field_text" value="$text"/>' in config
    project = server.api("POST", "/api/projects/", {"title": "bayeval", "label_config": config})
    imported = server.api("POST", f"/api/projects/{project['id']}/import", tasks)
    assert imported["task_count"] == len(asked)
    page = server.api("GET", f"/api/tasks/?project={project['id']}&page_size=100")
    listed = page["tasks"] if isinstance(page, dict) else page
    assert sorted(t["data"]["bayeval_id"] for t in listed) == sorted(asked)
    assert all("score" not in t["data"] for t in listed)
    for task in listed:
        choice = "Positive" if truth[task["data"]["bayeval_id"]] else "Negative"
        value = {"from_name": "label", "to_name": "item", "type": "choices",
                 "value": {"choices": [choice]}}  # fmt: skip
        server.api("POST", f"/api/tasks/{task['id']}/annotations/", {"result": [value]})
    export = server.api("GET", f"/api/projects/{project['id']}/export?exportType=JSON")
    (tmp_path / "export.json").write_text(json.dumps(export))
    result = runner.invoke(app, ["import", str(tmp_path / "s.db"), str(tmp_path / "export.json")])
    assert result.exit_code == 0, result.output
    # every answer recorded, with its annotator; the estimate is the one of the same labels
    # told directly
    with Session.open(tmp_path / "s.db", read_only=True) as sess:
        answers = sess.answers()
        assert sorted(answers["id"]) == sorted(asked) and len(sess.pending) == 0
        assert all(answers["label"] == [truth[i] for i in answers["id"]])
        assert answers["annotator"].str.startswith("label-studio:").all()
        imported_estimate = float(sess.estimate().value[0])
    with _session(tmp_path / "direct.db", frame, asked=2) as direct:
        ids = direct.pending
        direct.tell(ids, [truth[i] for i in ids])
        assert imported_estimate == pytest.approx(float(direct.estimate().value[0]), rel=1e-9)
    # the same export again changes nothing; into another session it is refused, recording
    # nothing
    result = runner.invoke(app, ["import", str(tmp_path / "s.db"), str(tmp_path / "export.json")])
    assert result.exit_code == 0, result.output
    assert f"0 answers recorded, {len(asked)} skipped" in result.output
    result = runner.invoke(
        app, ["import", str(tmp_path / "direct.db"), str(tmp_path / "export.json")]
    )  # fmt: skip
    assert result.exit_code != 0 and "written for another session" in result.output
    with Session.open(tmp_path / "direct.db", read_only=True) as direct:
        assert len(direct.answers()) == len(asked)  # its own answers only
