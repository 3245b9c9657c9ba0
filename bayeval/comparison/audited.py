"""Labels chosen in any way plus a random audit: every difference, and each system's level."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayeval._constraints import Integer, Positive, Seed, validate
from bayeval._core import audit as kernel
from bayeval._validation import check_classes, check_rng, plain
from bayeval.comparison.result import Differences, Levels

__all__ = ["audited_differences", "audited_levels"]


@validate(prior=Positive(), draws=Integer(minimum=1), rng=Seed())
def audited_differences(
    systems: Any,
    chosen: Any,
    chosen_labels: Any,
    audit: Any,
    audit_labels: Any,
    *,
    measure: Any = "accuracy",
    prior: float = 0.5,
    draws: int = 1000,
    rng: Any = None,
) -> Differences:
    """Every pairwise difference of accuracy, from labels chosen in any way plus a random audit.

    Labels chosen adaptively (by :class:`~bayeval.sampling.ModelSelection`, or by hand) tell
    nothing certain about the items they skipped. An *audit* does: ``audit`` is a simple random
    sample of the items not in ``chosen`` (of all of them, or of those on which the systems do
    not all agree; :meth:`ModelSelection.ask_audit
    <bayeval.sampling.ModelSelection.ask_audit>` draws one), labelled after the chosen ones.
    For two systems only the items on which their predictions differ move their difference;
    among those left unlabelled, the share on which each of them is right (or, with more than
    two classes, neither) has a Dirichlet posterior from the audited items on which they differ,
    and the items left are a multinomial draw from it (:mod:`bayeval._core.audit`). Nothing is
    assumed about how the systems err.

    Parameters
    ----------
    systems : bayeval.Pool, mapping or array_like
        A :class:`~bayeval.Pool` with two or more systems (a multiclass pool's predicted
        classes), or the systems' 0/1 predictions: a mapping from each system's name to its
        predictions, or a 2-d array with one column per system.
    chosen : array_like of int
        Positions of the items labelled before the audit, chosen in any way (may be empty).
    chosen_labels : array_like
        Their labels (0/1; a multiclass pool's classes, by index or name).
    audit : array_like of int
        Positions of the audited items: drawn uniformly, without replacement, from the items
        not in ``chosen`` (or from those of them on which the systems do not all agree).
    audit_labels : array_like
        Their labels.
    measure : str or bayeval.measures.Measure, default "accuracy"
        Accuracy, or (two classes) any measure of a system's predictions with one output
        (``"f1"``, ``"precision"``, ...). Accuracy moves only where a pair differs; any other
        measure moves with every item, so ``audit`` must then reach the items on which all the
        systems agree too (``ModelSelection.ask_audit``'s ``agreements``), and each pair's
        items left are split by stratum and by the two systems' predictions, the share of
        positives in each part from its audited items.
    prior : float, default 0.5
        The symmetric Dirichlet prior of the outcomes' shares on a pair's disagreements
        (Jeffreys'); for another measure, of each part's share of positives.
    draws : int, default 1000
        Posterior draws (memory: ``draws x K x K`` floats).
    rng : int, numpy.random.Generator or None
        Seed or generator of the draws.

    Returns
    -------
    bayeval.comparison.Differences
        Accuracy of ``system`` minus that of ``other`` on the whole pool, every pair drawn
        from its own posterior (so the draws of different pairs are not one joint posterior,
        and there is no P(best) here: take it from the sampler or :func:`bayeval.compare`).

    Notes
    -----
    After :class:`~bayeval.sampling.ModelSelection` on Model Selector's five two-class tasks
    (20-30 runs each, at its budgets), where the sampler's own differences between the leader
    and the other systems were covered in 3-35% of runs, an audit of 20 labels covered them in
    0.97-0.99 of the runs (mean half-width 0.04-0.12) and one of 40 in 0.96-0.99 (0.03-0.08);
    on PACS's seven classes and 30 models 0.988 and 0.984 (``benchmarks/README.md``, model
    selection). After a choice biased on purpose (60 labels where the two best systems
    disagree, the best right first, then 40 audited) the tests' pools with shared errors, 3%
    positives, four classes whose errors name one class, and 30 real models covered
    0.949-0.963 of every pair's difference (``tests/comparison/test_audited_differences.py``,
    40-150 pools each). Jeffreys' prior is known to fall a little short of its level for a
    share near 0 or 1 seen a few times (Brown, Cai & DasGupta 2001): a pair whose weaker system
    is rarely right where they differ, with few such items in the audit.

    A pair is read only from the audited items on which its two systems differ, and systems
    that differ on few items have few of them: in one run the leader's closest rivals are read
    from the same handful and miss together (``notebooks/07_compare_systems.ipynb``: 5 audited
    items of 40, all won by one system that wins about half of such items; 0.87 of 92
    differences covered). The chosen labels, which are many on those items, are not used: they
    were not drawn at random.

    Differences of another measure split each pair's items into more parts, each read from
    fewer audited items: after the same biased choice (with 40 audited agreements besides)
    F1, precision and recall covered 0.939-0.940 on the shared-errors pool, short of 0.95 where
    the closest pair's few disagreements left hold almost none on which the best is right
    (0.86 for that pair), 0.975-0.994 with 3% positives, and F1 0.960 among 30 real models
    (``benchmarks/README.md``).

    Examples
    --------
    Three systems of accuracy about 0.90, 0.85 and 0.60; 60 labels chosen where the first
    two disagree (no random sample), then an audit of 40 items drawn from the rest; the 95%
    intervals of the first system's differences, in items of the 2,000:

    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(2_000) < 0.4
    >>> right = rng.random((2_000, 3)) < [0.90, 0.85, 0.60]
    >>> predictions = np.where(right, truth[:, None], ~truth[:, None]).astype(int)
    >>> chosen = np.flatnonzero(predictions[:, 0] != predictions[:, 1])[:60]
    >>> rest = np.setdiff1d(np.arange(2_000), chosen)
    >>> audit = rng.choice(rest, 40, replace=False)
    >>> differences = be.comparison.audited_differences(
    ...     predictions, chosen, truth[chosen], audit, truth[audit], rng=1)
    >>> (differences.interval().sel(system="system0") * 2_000).round().astype(int).values.tolist()
    [[0, 0], [-95, 321], [290, 722]]
    >>> right = predictions == truth[:, None]
    >>> (right[:, 0].sum() - right.sum(axis=0)).tolist()  # the truth, in items of the 2,000
    [0, 123, 584]
    """
    from bayeval.models._systems import check_measure

    rng = check_rng(rng)
    predictions, names, n_classes, (chosen, chosen_labels), (audit, audit_labels) = _checked(
        systems, chosen, chosen_labels, audit, audit_labels
    )
    measure = check_measure(measure, n_classes, "measure")
    n_items = predictions.shape[0]
    labelled = np.r_[chosen, audit]
    left = np.ones(n_items, dtype=bool)
    left[labelled] = False
    if measure.name != "accuracy":
        if n_classes > 2:
            raise ValueError(
                f"`measure` must be 'accuracy' with {n_classes} classes; got {measure.name!r}."
            )
        values = _measure_differences(
            predictions, (labelled, np.r_[chosen_labels, audit_labels]), (audit, audit_labels),
            left, measure, prior=prior, draws=draws, rng=rng,
        )  # fmt: skip
        return Differences(measure=measure.name, draws=_as_draws(values[None], names))
    right = predictions[labelled] == np.r_[chosen_labels, audit_labels][:, None]
    audit_right = predictions[audit] == audit_labels[:, None]
    values = kernel.difference_draws(
        right.sum(axis=0),
        audit_right,
        predictions[audit],
        predictions[left],
        n_classes,
        n_items,
        prior=prior,
        draws=draws,
        rng=rng,
    )
    return Differences(measure="accuracy", draws=_as_draws(values[None], names))


@validate(prior=Positive(), draws=Integer(minimum=1), rng=Seed())
def audited_levels(
    systems: Any,
    chosen: Any,
    chosen_labels: Any,
    audit: Any,
    audit_labels: Any,
    *,
    measure: Any = "accuracy",
    prior: float = 0.5,
    draws: int = 1000,
    rng: Any = None,
) -> Levels:
    """Each system's own measure, from labels chosen in any way plus a stratified audit.

    The items not in ``chosen`` fall in two strata: those on which the systems do not all
    agree, and those on which they all predict the same (which move every system alike, so
    labels chosen to tell systems apart never go there). ``audit`` is a simple random sample
    of each stratum's items not chosen (:meth:`ModelSelection.ask_audit
    <bayeval.sampling.ModelSelection.ask_audit>` with ``agreements`` draws one). For
    accuracy, a system's share right among the disagreements left has a Beta posterior from
    the audited disagreements, and the share of the agreements left that all the systems get
    right, from the audited agreements; the items left are binomial draws from them
    (:func:`bayeval._core.audit.level_draws`). Any other measure (two classes) needs the
    confusion counts: each stratum's items left are split further by the class the system
    predicts, the share of positives in each part gets a Beta posterior from the part's
    audited items, and the part's positives left are a binomial draw
    (:func:`bayeval._core.audit.confusion_draws`).
    Nothing is assumed about how the systems err.

    Parameters
    ----------
    systems, chosen, chosen_labels, audit, audit_labels
        As :func:`audited_differences`; ``audit`` must reach both strata wherever items of
        the stratum are left unlabelled.
    measure : str or bayeval.measures.Measure, default "accuracy"
        A measure of a system's predictions with one output (``"accuracy"``, ``"f1"``,
        ``"precision"``, ...); with more than two classes, accuracy only.
    prior : float, default 0.5
        Both parameters of each share's Beta prior (Jeffreys').
    draws : int, default 1000
        Posterior draws.
    rng : int, numpy.random.Generator or None
        Seed or generator of the draws.

    Returns
    -------
    bayeval.comparison.Levels
        Each system's measure on the whole pool. Each system's draws are its own posterior:
        for differences and P(best) use :func:`audited_differences` and the sampler.

    Notes
    -----
    Where the systems agree they are usually right, so the share of the agreements they get
    right is near 1, where Jeffreys' interval is known to fall a little short of its level
    with few audited agreements (Brown, Cai & DasGupta 2001); a part that no audited item
    reached keeps the prior's even shares, which a small audit can leave wide.

    Examples
    --------
    Three systems of accuracy about 0.90, 0.85 and 0.60; 60 labels chosen where the first
    two disagree, then 30 items audited among the disagreements left and 30 among the
    agreements; each system's 95% interval holds its accuracy, and is less than 0.16 wide:

    >>> import numpy as np
    >>> import bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(2_000) < 0.4
    >>> right = rng.random((2_000, 3)) < [0.90, 0.85, 0.60]
    >>> predictions = np.where(right, truth[:, None], ~truth[:, None]).astype(int)
    >>> chosen = np.flatnonzero(predictions[:, 0] != predictions[:, 1])[:60]
    >>> agree = predictions.min(axis=1) == predictions.max(axis=1)
    >>> rest = np.setdiff1d(np.arange(2_000), chosen)
    >>> audit = np.r_[rng.choice(rest[~agree[rest]], 30, replace=False),
    ...               rng.choice(rest[agree[rest]], 30, replace=False)]
    >>> levels = be.comparison.audited_levels(
    ...     predictions, chosen, truth[chosen], audit, truth[audit], rng=1)
    >>> lower, upper = levels.interval().values.T
    >>> accuracy = (predictions == truth[:, None]).mean(axis=0)  # the truth
    >>> ((lower <= accuracy) & (accuracy <= upper)).tolist(), (upper - lower < 0.16).tolist()
    ([True, True, True], [True, True, True])
    """
    from bayeval.models._systems import check_measure, measure_from_counts

    rng = check_rng(rng)
    predictions, names, n_classes, (chosen, chosen_labels), (audit, audit_labels) = _checked(
        systems, chosen, chosen_labels, audit, audit_labels
    )
    measure = check_measure(measure, n_classes, "measure")
    if n_classes > 2 and measure.name != "accuracy":
        raise ValueError(
            f"`measure` must be 'accuracy' with {n_classes} classes; got {measure.name!r}: split "
            "by the class predicted, the audit's parts are too thin (macro-F1's intervals held "
            "the truth in 0.92 of the runs on four classes, benchmarks/README.md)."
        )
    n_items, n_systems = predictions.shape
    labelled = np.r_[chosen, audit]
    known = _confusion(predictions[labelled], np.r_[chosen_labels, audit_labels], n_classes)
    disagree = predictions.min(axis=1) != predictions.max(axis=1)
    left = np.ones(n_items, dtype=bool)
    left[labelled] = False
    in_d = disagree[audit]
    _check_strata(~disagree, left, ~in_d)
    if measure.name == "accuracy":  # right or wrong: one part per stratum
        right = predictions[audit] == audit_labels[:, None]
        known = np.einsum("kcc->k", known)
        disagreements = right[in_d], int(np.count_nonzero(left & disagree))
        agreements = right[~in_d, 0], int(np.count_nonzero(left & ~disagree))
        values = kernel.level_draws(
            known, disagreements, agreements, n_items, prior=prior, draws=draws, rng=rng
        )
        return Levels(measure="accuracy", draws=_as_draws(values[None], names, ("system",)))
    # [k, j, c]: audited items by the class each system predicts and the true class
    audited_d = np.swapaxes(
        _confusion(predictions[audit[in_d]], audit_labels[in_d], n_classes), 1, 2
    )
    left_d = np.stack([np.bincount(predictions[left & disagree, k], minlength=n_classes)
                       for k in range(n_systems)])  # fmt: skip
    agreed = predictions[:, 0]  # every system's class where they all agree
    audited_a = _confusion(agreed[audit[~in_d], None], audit_labels[~in_d], n_classes)[0].T
    left_a = np.bincount(agreed[left & ~disagree], minlength=n_classes)
    counts = kernel.confusion_draws(
        known, (audited_d, left_d), (audited_a, left_a), prior=prior, draws=draws, rng=rng
    )
    with np.errstate(invalid="ignore", divide="ignore"):  # an undefined measure is NaN
        values = measure_from_counts(measure, counts)
    return Levels(measure=measure.name, draws=_as_draws(values[None], names, ("system",)))


def _measure_differences(predictions, labelled, audited, left, measure, *, prior, draws, rng):
    """Draws ``(draws, K, K)`` of the differences of a two-class measure other than accuracy."""
    from bayeval.models._systems import measure_from_counts

    audit, audit_labels = audited
    agree = predictions.min(axis=1) == predictions.max(axis=1)
    _check_strata(agree, left, agree[audit])
    known = _confusion(predictions[labelled[0]], labelled[1], 2)

    def measure_of(counts):
        with np.errstate(invalid="ignore", divide="ignore"):  # an undefined measure is NaN
            return measure_from_counts(measure, counts)

    return kernel.measure_difference_draws(
        known,
        (predictions[audit], audit_labels, agree[audit]),
        (predictions[left], agree[left]),
        measure_of,
        prior=prior,
        draws=draws,
        rng=rng,
    )


def _check_strata(agree: np.ndarray, left: np.ndarray, audited_agree: np.ndarray) -> None:
    """Raise unless the audit reaches each stratum (disagreements, agreements) with items left."""
    strata = (
        (
            left & ~agree,
            ~audited_agree,
            "disagreements (items on which the systems do not all agree)",
        ),
        (left & agree, audited_agree, "agreements (items on which they all agree)"),
    )
    for members, audited, what in strata:
        if members.any() and not audited.any():
            raise ValueError(
                f"`audit` must reach every stratum with items left: {int(members.sum())} {what} "
                "are left unlabelled and none of them is audited (ModelSelection.ask_audit's "
                "`agreements` draws agreements)."
            )


def _confusion(predictions: np.ndarray, labels: np.ndarray, n_classes: int) -> np.ndarray:
    """Return ``(K, C, C)`` confusion counts ``[k, true class, predicted class]``."""
    n_systems = predictions.shape[1]
    flat = (np.arange(n_systems) * n_classes * n_classes)[None, :] + (
        labels[:, None] * n_classes + predictions
    )
    counts = np.bincount(flat.ravel(), minlength=n_systems * n_classes * n_classes)
    return counts.reshape(n_systems, n_classes, n_classes)


def _checked(systems, chosen, chosen_labels, audit, audit_labels):
    """Return the predictions, names, classes, and the chosen and audited items checked."""
    from bayeval.comparison.compare import predictions_of
    from bayeval.models._systems import check_labelled, check_predictions, system_names
    from bayeval.pool import Pool

    if isinstance(systems, Pool):
        predictions, names = systems.predictions, list(systems.systems)
        classes = systems.classes
        n_classes = 2 if classes is None else len(classes)
        chosen_labels = check_classes(chosen_labels, "chosen_labels", classes)
        audit_labels = check_classes(audit_labels, "audit_labels", classes)
    else:
        predictions, names = predictions_of(systems)
        predictions = check_predictions(predictions, 2, "systems")
        n_classes = 2
    if predictions.ndim < 2 or predictions.shape[1] < 2:
        n_systems = 1 if predictions.ndim < 2 else predictions.shape[1]
        raise ValueError(f"`systems` must hold two or more systems to compare; got {n_systems}.")
    predictions = predictions.astype(np.int64)
    n_items, n_systems = predictions.shape
    names = system_names(names, n_systems)
    chosen, chosen_labels = check_labelled(
        chosen, chosen_labels, n_items, n_classes, ("chosen", "chosen_labels")
    )
    audit, audit_labels = check_labelled(
        audit, audit_labels, n_items, n_classes, ("audit", "audit_labels")
    )
    both = np.intersect1d(chosen, audit)
    if both.size:
        raise ValueError(
            "`audit` must hold items not in `chosen` (a sample of the items left); got "
            f"positions in both: {plain(both[:5].tolist())!r}."
        )
    return predictions, names, n_classes, (chosen, chosen_labels), (audit, audit_labels)


def _as_draws(values: np.ndarray, names: list[str], dims=("system", "other")):
    """Return draws ``(chain, draw, *dims)`` as a labelled DataArray."""
    import xarray as xr

    coords = {dim: names for dim in dims}
    return xr.DataArray(values, dims=("chain", "draw", *dims), coords=coords)
