"""The README's examples run and print what the README says they print."""

import re
from pathlib import Path

import numpy as np
import pytest

import bayeval as be

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.slow
def test_interval_example_runs(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the example writes recall.nc
    code = BLOCKS[0]
    exec(compile(code, str(README), "exec"), {})
    printed = capsys.readouterr().out
    claimed = re.search(r"print\(res\)\s+# (.*)", code).group(1)
    assert claimed.split("estimate ")[1].split(",")[0] in printed
    assert "[0.1111, 0.5416]" in printed and "[0.1111, 0.5416]" in claimed
    loaded = be.load(tmp_path / "recall.nc").interval().values  # the README's 4 decimals
    np.testing.assert_allclose(loaded, [0.1111, 0.5416], rtol=0, atol=5e-5)


def _numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+\.\d+", text)]


def test_active_evaluation_example_runs():
    code = BLOCKS[1]
    outputs = []  # one entry per print() call, in order

    def record(*args, **kwargs):
        outputs.append(" ".join(str(a) for a in args))

    exec(compile(code, str(README), "exec"), {"print": record})
    # the comments after each print claim the numbers it shows, in order, to the last of their
    # three decimals: a floating-point difference on another machine may move a value across a
    # rounding boundary (so +- 0.001), never more, as the runs are seeded
    claims = _print_comments(code)
    assert len(claims) == len(outputs) == 4
    for comment, output in zip(claims, outputs, strict=True):
        claimed, printed = _numbers(comment), _numbers(output)
        assert len(claimed) == len(printed) and claimed, (comment, output)
        np.testing.assert_allclose(printed, claimed, rtol=0, atol=0.001 + 1e-9)


def _print_comments(code: str) -> list[str]:
    """The comment text of each print() call: on its closing line and the lines after it."""
    claims, depth, current = [], 0, None
    for line in code.splitlines():
        text, _, comment = line.partition("#")
        if depth == 0 and text.strip() and current is not None and current[1]:
            claims.append(current[0])  # a code line ends the comments of the last print
            current = None
        if depth == 0 and text.strip().startswith("print("):
            current = ["", False]
        depth += text.count("(") - text.count(")")
        if current is not None:
            current[0] += " " + comment
            current[1] = current[1] or depth == 0  # the print's closing line was reached
    if current is not None:
        claims.append(current[0])
    return claims


def test_ondemand_example_runs(capsys):
    code = BLOCKS[5]
    exec(compile(code, str(README), "exec"), {})
    printed = capsys.readouterr().out
    for claim in ("[216, 175, 140, 118, 88, 78, 46, 50, 41, 38, 31, 27]", "[0.595, 0.674]"):
        assert claim in code and claim in printed, claim


def test_compare_example_runs():
    code = BLOCKS[6]
    outputs = []

    def record(*args, **kwargs):
        outputs.append(" ".join(str(a) for a in args))

    exec(compile(code, str(README), "exec"), {"print": record})
    # seeded: the claims hold to their last decimal, +- 0.001 for a rounding boundary elsewhere
    claims = _print_comments(code)
    assert len(claims) == len(outputs) == 2
    assert outputs[0].startswith("a ")
    for comment, output in zip(claims, outputs, strict=True):
        claimed, printed = _numbers(comment), _numbers(output)
        assert len(printed) <= len(claimed) and printed, (comment, output)
        np.testing.assert_allclose(printed, claimed[: len(printed)], rtol=0, atol=0.001 + 1e-9)


def test_model_selection_example_runs():
    """The sampler continues the comparison's example (its systems and truth)."""
    namespace = {"print": lambda *args: None}
    exec(compile(BLOCKS[6], str(README), "exec"), namespace)
    outputs = []
    namespace["print"] = lambda *args: outputs.append(" ".join(str(a) for a in args))
    code = BLOCKS[7]
    exec(compile(code, str(README), "exec"), namespace)
    (claim,) = _print_comments(code)
    best, used, *_ = outputs[0].split()
    assert best == claim.split()[0] == "a"
    # seeded, but one flipped choice (a sum in another order on another machine) changes the
    # path: the labels used within half of the claim either way, and P(best) past the target
    assert abs(int(used) - int(claim.split()[1])) <= 0.5 * int(claim.split()[1])
    assert _numbers(outputs[0])[0] >= 0.95 and _numbers(claim)[0] >= 0.95
    assert namespace["comparison"].best == "a"


def test_audit_example_runs():
    """The audit continues the model selection's example: its intervals as claimed and holding
    the true differences and accuracies. Seeded; another machine's path of choices (see
    above) would draw another audit, so the claims hold within 0.05, about half an interval's
    width."""
    namespace = {"print": lambda *args: None}
    for block in (BLOCKS[6], BLOCKS[7]):
        exec(compile(block, str(README), "exec"), namespace)
    outputs = []
    namespace["print"] = lambda *args: outputs.append(" ".join(str(a) for a in args))
    code = BLOCKS[8]
    exec(compile(code, str(README), "exec"), namespace)
    claims = _print_comments(code)
    assert len(claims) == len(outputs) == 2
    truth, systems = namespace["truth"], namespace["systems"]
    accuracy = np.array([(systems[k] == truth).mean() for k in "abc"])
    # the leader's differences, then each system's accuracy
    for output, claim, true in zip(
        outputs, claims, (accuracy[0] - accuracy, accuracy), strict=True
    ):
        printed = np.reshape(_numbers(output), (3, 2))
        claimed = _numbers(claim)
        np.testing.assert_allclose(printed.ravel(), claimed[:6], atol=0.05)
        stated = claimed[6:] if len(claimed) == 9 else [0.0, *claimed[6:]]  # the leader's: "0"
        np.testing.assert_allclose(true, stated, atol=5e-4)  # the truth as claimed
        assert ((printed[:, 0] <= true + 1e-9) & (true <= printed[:, 1] + 1e-9)).all()


def test_paired_example_runs():
    """Each printed interval and probability within 0.01 of its claim (seeded draws)."""
    outputs = []
    namespace = {"be": be}
    namespace["print"] = lambda *args: outputs.append(" ".join(str(a) for a in args))
    code = BLOCKS[9]
    exec(compile(code, str(README), "exec"), namespace)
    claims = _print_comments(code)
    assert len(claims) == len(outputs) == 2
    for output, claim in zip(outputs, claims, strict=True):
        np.testing.assert_allclose(_numbers(output), _numbers(claim), atol=0.01)


def test_curve_example_runs():
    namespace = {}
    code = BLOCKS[10]
    exec(compile(code, str(README), "exec"), namespace)
    # The README claims 48,292 planned labels and a guaranteed envelope around p = 0.75.
    assert "48,292" in code
    res = namespace["res"]
    assert res.annotations == 48_292
    assert res.lower(10**9) <= 0.75 <= res.upper(10**9)


def test_judge_example_runs():
    """Each printed interval within 0.005 of its claim (seeded runs; rounding to 3 decimals)."""
    outputs = []
    namespace = {"print": lambda *args: outputs.append(" ".join(str(a) for a in args))}
    code = BLOCKS[2]
    exec(compile(code, str(README), "exec"), namespace)
    claims = [line.split("#", 1)[1] for line in code.splitlines() if line.startswith("# ")]
    assert len(outputs) == 4 and len(claims) == 4
    for output, claim in zip(outputs, claims, strict=True):
        assert output.split()[0] == claim.split()[0]  # the pool's name
        np.testing.assert_allclose(_numbers(output)[:2], _numbers(claim)[:2], atol=0.005)
    # the claim beside the last interval: the true F1
    assert (
        "0.515" in claims[-1]
        and abs(
            namespace["f1"].value(namespace["truth"], predictions=namespace["pool"].predictions)[0]
            - 0.515
        )
        < 5e-4
    )


def test_annotators_example_runs(tmp_path, monkeypatch):
    """Each printed number within 0.01 of its claim (seeded draws; the claims have 2-3 decimals)."""
    monkeypatch.chdir(tmp_path)  # the example writes crowd.db
    outputs = []
    namespace = {"print": lambda *args: outputs.append(" ".join(str(a) for a in args))}
    code = BLOCKS[3]
    exec(compile(code, str(README), "exec"), namespace)
    claims = _print_comments(code)
    assert len(outputs) == len(claims) == 3
    for output, claim in zip(outputs, claims, strict=True):
        np.testing.assert_allclose(_numbers(output), _numbers(claim)[: len(_numbers(output))],
                                   atol=0.01)  # fmt: skip
    truth = be.measures.FScore().value(namespace["truth"], predictions=namespace["scores"] >= 0.5)
    assert abs(truth[0] - 0.953) < 5e-4 and "0.953" in claims[1]


def test_multiclass_example_runs():
    """Each printed number within 0.005 of its claim, and the truths as claimed."""
    outputs = []
    namespace = {"print": lambda *args: outputs.append(" ".join(str(a) for a in args))}
    code = BLOCKS[4]
    exec(compile(code, str(README), "exec"), namespace)
    # the loop's two prints share one comment block: accuracy, its truth, macro-F1, its truth
    loop, recall, workflow = (_numbers(claim) for claim in _print_comments(code))
    printed = [_numbers(output) for output in outputs]
    assert len(printed) == 4
    np.testing.assert_allclose(printed[0] + printed[1], loop[0:2] + loop[3:5], atol=0.005)
    np.testing.assert_allclose(printed[2], recall[:7], atol=0.005)
    np.testing.assert_allclose(printed[3], workflow[:2], atol=0.005)
    # the truths beside the claims, from the pool itself
    from bayeval._core.multiclass import confusion_measures

    counts = np.zeros((7, 7))
    np.add.at(counts, (namespace["truth"], namespace["predicted"]), 1)
    true = confusion_measures(counts)
    np.testing.assert_allclose([loop[2], loop[5]], [true["accuracy"], true["macro_f1"]],
                               atol=5e-4)  # fmt: skip
    np.testing.assert_allclose(recall[7:], true["recall"], atol=0.005)
    np.testing.assert_allclose(workflow[2], true["macro_f1"], atol=5e-4)
