"""The README's worked example runs and prints what the README says it prints."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.slow
def test_readme_example_runs(capsys):
    text = README.read_text()
    (code,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    exec(compile(code, str(README), "exec"), {})
    printed = capsys.readouterr().out
    claimed = re.search(r"print\(res\)\s+# (.*)", code).group(1)
    assert claimed.split("estimate ")[1].split(",")[0] in printed
    assert "[0.1111, 0.5416]" in printed and "[0.1111, 0.5416]" in claimed
