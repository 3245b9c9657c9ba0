import subprocess
import sys


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
