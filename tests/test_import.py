import subprocess
import sys

import pytest


def test_import_is_light():
    # DESIGN: pymc, pytensor, dask and matplotlib load only where they are used; statsmodels
    # (Koopman) and scipy.stats are also deferred. A subprocess gives a clean sys.modules.
    code = (
        "import sys, bayeval\n"
        "heavy = ('pymc', 'pytensor', 'matplotlib', 'statsmodels', 'dask', 'scipy.stats',"
        " 'arviz', 'xarray', 'pandas')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_lazy_submodules():
    import bayeval as be

    assert be.datasets.load_febrl_pairs is not None
    assert be.models.sample_segment_yields is not None
    assert be.intervals.recall_estimator_distribution is not None


def test_tab_completion_lists_the_lazy_subpackages_and_entry_points():
    import bayeval as be

    names = dir(be)
    for name in ("curves", "models", "sampling", "session", "evaluate", "Run", "Session", "Pool"):
        assert name in names
    assert all(hasattr(be, name) for name in names if not name.startswith("_"))


def test_the_version_is_one_string_in_one_place():
    from importlib.metadata import version

    import bayeval as be
    from bayeval._version import __version__

    assert be.__version__ == __version__ == version("bayeval")


@pytest.mark.parametrize(
    ("old", "new", "name"),
    [
        ("bayeval.session_exchange", "bayeval.session.exchange", "import_answers"),
        ("bayeval.sample", "bayeval.stratified_sample", "StratifiedSample"),
        ("bayeval.report", "bayeval.plots.sampling", "pr_thresholds"),
        ("bayeval.curves.envelope", "bayeval._core.envelope", "bounds"),
    ],
)
def test_a_moved_module_warns_at_its_old_path(old, new, name):
    import importlib
    import sys

    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"moved to {new}"):
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)
