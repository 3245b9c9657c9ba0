"""The labelling widget in a real browser: clicked and typed at, its answers read back from the
session file.

The page runs the widget's own front end (``widget.js``, its ``render``) on a model that
stands in for the notebook's: each message the front end sends goes to the real Python
widget (``_handle_custom_msg``, as the comm delivers it), and the widget's new state comes back
as change events, as a kernel's updates do.
"""

import json

import numpy as np
import pandas as pd

import bayeval as be
from bayeval.session import Session

ORIGIN = "http://bayeval.test"
SYNCED = ("item", "title", "fields", "choices", "progress", "estimate", "message", "done")

PAGE = """<!doctype html><html><head><link rel="stylesheet" href="/widget.css"></head>
<body><div id="root"></div><script type="module">
import widget from "/widget.js";
const state = await (await fetch("/state.json")).json();
const listeners = {};
window.sent = 0;
const model = {
  get: (key) => state[key],
  set: (key, value) => { state[key] = value; },
  save_changes: () => {},
  on: (event, callback) => { (listeners[event] ||= []).push(callback); },
  off: () => {},
  send: async (content) => {
    const next = await window.pySend(content);
    for (const [key, value] of Object.entries(next)) {
      if (JSON.stringify(state[key]) !== JSON.stringify(value)) {
        state[key] = value;
        (listeners["change:" + key] || []).forEach((callback) => callback());
      }
    }
    window.sent += 1;
  },
};
widget.render({ model, el: document.getElementById("root") });
window.ready = true;
</script></body></html>"""


def _state(widget) -> dict:
    return {key: getattr(widget, key) for key in SYNCED}


def _serve(page, widget):
    files = {
        "/": ("text/html", PAGE),
        "/widget.js": ("text/javascript", widget._esm),
        "/widget.css": ("text/css", widget._css),
    }

    def handle(route):
        path = route.request.url[len(ORIGIN) :] or "/"
        if path == "/state.json":
            route.fulfill(content_type="application/json", body=json.dumps(_state(widget)))
        elif path in files:
            kind, body = files[path]
            route.fulfill(content_type=kind, body=str(body))
        else:  # an image's path: nothing to load here
            route.fulfill(status=404, body="")

    page.route(f"{ORIGIN}/**", handle)

    def send(content):
        widget._handle_custom_msg(content, [])
        return _state(widget)

    page.expose_function("pySend", send)


def test_the_widget_is_clicked_and_typed_at_and_its_answers_are_in_the_session(browser, tmp_path):
    scores = np.random.default_rng(0).random(200)
    ids = [f"doc-{i}" for i in range(200)]
    path = tmp_path / "s.db"
    sess = Session.create(path, be.Pool(scores, ids=ids), be.measures.FScore(), "passive", rng=1)
    data = pd.DataFrame({"id": ids, "score": scores, "text": [f"the text of {i}" for i in ids],
                         "image": [f"pictures/{i}.png" for i in ids]})  # fmt: skip
    widget = be.label(sess, data, annotator="ann", batch_size=5, budget=10)
    page = browser.new_page()
    try:
        _serve(page, widget)
        page.goto(f"{ORIGIN}/")
        page.wait_for_function("window.ready === true")
        first = widget.item
        assert page.inner_text(".bv-title") == f"id {first!r}"
        assert f"the text of {first}" in page.inner_text(".bv-fields")
        assert page.get_attribute(".bv-value img", "src") == f"pictures/{first}.png"
        assert str(scores[int(first[4:])])[:6] not in page.inner_text(".bv-label")  # blind
        assert page.inner_text(".bv-counts") == "0 of 10 labels, 5 pending"
        page.screenshot(path=tmp_path / "widget.png")  # the test's artefact
        # a click, then the keyboard: y, n, s (skip), u (undo)
        page.click("button.bv-choice[data-choice='0']")
        page.wait_for_function("window.sent === 1")
        second = widget.item
        assert page.inner_text(".bv-title") == f"id {second!r}"
        page.keyboard.press("n")
        page.wait_for_function("window.sent === 2")
        third = widget.item
        page.keyboard.press("s")
        page.wait_for_function("window.sent === 3")
        assert widget.item != third
        page.keyboard.press("u")
        page.wait_for_function("window.sent === 4")
        assert page.inner_text(".bv-title") == f"re-judging id {second!r}"
        page.keyboard.press("y")
        page.wait_for_function("window.sent === 5")
        assert page.inner_text(".bv-counts") == "2 of 10 labels, 3 pending"
        # an action on an item no longer shown (a stale page) changes nothing
        page.evaluate(f"window.pySend({{type: 'answer', item: {first!r}, choice: 1}})")
        assert "is not the one shown" in widget.message
    finally:
        page.close()
    assert (tmp_path / "widget.png").stat().st_size > 1000
    with Session.open(path, read_only=True) as saved:  # read back from the session file
        answers = saved.answers()
    assert answers["id"].tolist() == [first, second, second]
    assert answers["label"].tolist() == [1, 0, 1]  # the re-judgement kept beside the answer
    assert answers["annotator"].eq("ann").all()
    sess.close()
