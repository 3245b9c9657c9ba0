"""The labelling widget in a real JupyterLab: a notebook cell shows ``be.label(session)``, the
browser clicks it, and the answer reaches the session file through the kernel.

JupyterLab runs on 127.0.0.1 with its settings, data and runtime folders in the test's temp
folder; the settings open the notebook with its kernel started and no news toast (recipe and
timings: the shared notes' ``browser-tests.md``, about 10 s per test).
"""

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import numpy as np
import pytest

import bayeval as be
from bayeval.session import Session

STARTUP = 120  # seconds for the server, and for the kernel to connect

SETTINGS = {
    "notebook-extension/tracker.jupyterlab-settings": {"autoStartDefaultKernel": True},
    "apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False
    },
}  # fmt: skip


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on a free port of 127.0.0.1, its root ``tmp_path``; its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = secrets.token_hex(16)
    env = {**os.environ}
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[name] = str(tmp_path / name.lower())
    for path, value in SETTINGS.items():
        file = tmp_path / "jupyter_config_dir" / "lab" / "user-settings" / "@jupyterlab" / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(value))
    log = (tmp_path / "lab.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
         f"--port={port}", f"--ServerApp.token={token}", f"--ServerApp.root_dir={tmp_path}"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError((tmp_path / "lab.log").read_text()[-3000:]) from None
                time.sleep(0.5)
        yield url, token
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()


def test_a_notebook_cell_labels_through_the_kernel_into_the_session(browser, lab, tmp_path):
    url, token = lab
    path = tmp_path / "s.db"
    scores = np.random.default_rng(0).random(100)
    ids = [f"doc-{i}" for i in range(100)]
    with Session.create(path, be.Pool(scores, ids=ids), be.measures.FScore(), "passive", rng=1):
        pass
    cell = (f"import bayeval as be\nsess = be.Session.open({str(path)!r})\n"
            "be.label(sess, annotator='ann', batch_size=5)")  # fmt: skip
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}  # fmt: skip
    nbformat.write(notebook, tmp_path / "label.ipynb")
    page = browser.new_page()
    try:
        page.goto(f"{url}/lab/tree/label.ipynb?token={token}", timeout=STARTUP * 1000)
        page.get_by_text("(ipykernel) | Idle").wait_for(timeout=STARTUP * 1000)
        page.click(".jp-Cell .jp-InputArea-editor")
        page.keyboard.press("Shift+Enter")
        button = page.locator(".jp-OutputArea-output button.bv-choice[data-choice='0']")
        button.wait_for(timeout=STARTUP * 1000)
        shown = page.inner_text(".jp-OutputArea-output .bv-title")
        page.screenshot(path=tmp_path / "jupyterlab.png")  # the test's artefact
        button.click()
        deadline = time.monotonic() + 30  # the comm message reaches the kernel on its own time
        answers = []
        while time.monotonic() < deadline and not len(answers):
            with Session.open(path, read_only=True) as saved:
                answers = saved.answers()
            time.sleep(0.2)
    finally:
        page.close()
    assert answers["id"].tolist() == [shown[4:-1]]  # the title is "id 'doc-…'"
    assert answers["label"].tolist() == [1] and answers["annotator"].tolist() == ["ann"]
