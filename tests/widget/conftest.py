"""A real browser for the widget's tests: Debian's chromium, driven by Playwright.

``make test`` installs chromium with apt (as root); Playwright is never asked to download a
browser. The path is ``BAYEVAL_CHROMIUM`` or ``chromium`` on the PATH. With ``CI=true`` a
missing browser fails the tests that need it; elsewhere they skip.
"""

import os
import shutil

import pytest


@pytest.fixture(scope="module")
def browser():
    path = os.environ.get("BAYEVAL_CHROMIUM") or shutil.which("chromium")
    if path is None:
        message = "no chromium (make test installs Debian's chromium with apt, as root)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; with CI=true the browser tests must run.")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path)
        try:
            yield launched
        finally:
            launched.close()
