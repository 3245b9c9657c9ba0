"""Generalized measures (Marchant & Rubinstein 2021, §2.2): values, Jacobians, loss tables."""

import math
import warnings

import numpy as np
import pytest

from bayeval import measures

# Sample-based values are sums of at most a few hundred terms divided by n, so the loss-vector
# route and the brute-force route agree to a few ulps of the result; 1e-12 leaves ample room.
RTOL = 1e-12

CLASSIFIERS = [
    measures.Accuracy(),
    measures.BalancedAccuracy(),
    measures.Precision(),
    measures.Recall(),
    measures.FScore(),
    measures.FScore(beta=0.5),
    measures.FScore(beta=2),
    measures.MatthewsCorrelation(),
    measures.FowlkesMallows(),
]
BINARY = [*CLASSIFIERS, measures.BrierScore(), measures.PrecisionRecallCurve([0.2, 0.5, 0.8])]
REGRESSION = [measures.MeanAbsoluteError(), measures.MeanSquaredError(), measures.RSquared()]
MULTICLASS = [
    measures.ClassMeasure(kind, n_classes=4)
    for kind in ("accuracy", "balanced_accuracy", "macro_f1", "micro_f1")
]
ALL = [*BINARY, *REGRESSION, *MULTICLASS]


def _ids(ms):
    return [repr(m) for m in ms]


def binary_data(seed, n=400, prevalence=0.3):
    """Labels, calibrated-ish scores and thresholded predictions, all seeded."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < prevalence).astype(int)
    scores = np.clip(0.35 * y + 0.65 * rng.random(n), 0.0, 1.0)
    predictions = (scores >= 0.5).astype(int)
    return y, predictions, scores


def regression_data(seed, n=300):
    rng = np.random.default_rng(seed)
    y = rng.normal(2.0, 1.5, n)
    f = 0.8 * y + rng.normal(0.3, 0.7, n)
    return y, f


def class_data(seed, n=400, n_classes=4):
    """Classes of unequal shares and predictions right 70% of the time, all seeded."""
    rng = np.random.default_rng(seed)
    y = rng.choice(n_classes, n, p=np.arange(n_classes, 0, -1) / np.arange(n_classes + 1).sum())
    f = np.where(rng.random(n) < 0.7, y, rng.integers(0, n_classes, n))
    return y, f


def data_for(measure, seed):
    """Keyword arguments ``labels``, ``predictions``/``scores`` suited to ``measure``."""
    if measure.label_type == "multiclass":
        y, f = class_data(seed, n_classes=measure.n_classes)
        return {"labels": y, "predictions": f}
    if measure.label_type == "real":
        y, f = regression_data(seed)
        return {"labels": y, "predictions": f}
    y, f, s = binary_data(seed)
    return {"labels": y, "predictions": f, "scores": s}


def confusion(y, f):
    """Count TP, FP, FN, TN one item at a time."""
    tp = fp = fn = tn = 0
    for yi, fi in zip(y.tolist(), f.tolist(), strict=True):
        if yi == 1 and fi == 1:
            tp += 1
        elif yi == 0 and fi == 1:
            fp += 1
        elif yi == 1 and fi == 0:
            fn += 1
        else:
            tn += 1
    return tp, fp, fn, tn


def brute_force(measure, y, f):
    """The textbook formula of each classification measure from a confusion matrix."""
    tp, fp, fn, tn = confusion(y, f)
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    match measure:
        case measures.Accuracy():
            return (tp + tn) / (tp + fp + fn + tn)
        case measures.BalancedAccuracy():
            return (recall + tn / (tn + fp)) / 2
        case measures.Precision():
            return precision
        case measures.Recall():
            return recall
        case measures.FScore(beta=beta):
            return (1 + beta**2) * precision * recall / (beta**2 * precision + recall)
        case measures.MatthewsCorrelation():
            return (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        case measures.FowlkesMallows():
            return math.sqrt(precision * recall)
    raise AssertionError(measure)


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("prevalence", [0.05, 0.3, 0.7])
@pytest.mark.parametrize("measure", CLASSIFIERS, ids=_ids(CLASSIFIERS))
def test_classification_value_matches_confusion_matrix(measure, seed, prevalence):
    y, f, _ = binary_data(seed, prevalence=prevalence)
    assert 0 < f.sum() < f.size and 0 < y.sum() < y.size  # every formula is defined
    got = measure.value(y, predictions=f)
    assert got.shape == (1,)
    assert got[0] == pytest.approx(brute_force(measure, y, f), rel=RTOL)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("measure", MULTICLASS, ids=_ids(MULTICLASS))
def test_class_measure_matches_the_confusion_matrix_measures(measure, seed):
    # the model's posterior maps confusion matrices with bayeval._core.multiclass: the design
    # estimate's g must give the same number from the same items
    from bayeval._core.multiclass import confusion_measures

    y, f = class_data(seed)
    f[f == 3] = 2  # a class never predicted: macro-F1 still counts it (it has true items)
    counts = np.zeros((4, 4))
    np.add.at(counts, (y, f), 1)
    expected = confusion_measures(counts)[measure.kind]
    np.testing.assert_allclose(measure.value(y, predictions=f), [expected], rtol=RTOL)


def test_class_measure_averages_over_the_classes_present_only():
    y, f = np.array([0, 0, 1, 1]), np.array([0, 1, 1, 1])  # class 2 absent from both
    macro = measures.ClassMeasure("macro_f1", n_classes=3).value(y, predictions=f)
    balanced = measures.ClassMeasure("balanced_accuracy", n_classes=3).value(y, predictions=f)
    np.testing.assert_allclose(macro, [(2 / 3 + 0.8) / 2], rtol=RTOL)
    np.testing.assert_allclose(balanced, [(0.5 + 1.0) / 2], rtol=RTOL)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"labels": [0, 3], "predictions": [0, 1]},
            r"`labels` must contain class indices 0 \.\. 2; entry 1 is 3",
        ),
        ({"labels": [0, 1], "predictions": [0, 1.5]}, r"`predictions` .*entry 1 is 1.5"),
        ({"labels": ["a", "b"], "predictions": [0, 1]}, r"`labels` .*got dtype <U1"),
        ({"labels": [0, 1], "predictions": None}, r"needs `predictions`"),
    ],
)
def test_class_measure_refuses_what_is_not_a_class_index(kwargs, message):
    with pytest.raises(ValueError, match=message):
        measures.ClassMeasure("accuracy", n_classes=3).loss(**kwargs)


def test_class_measure_loss_table_has_a_row_per_class():
    measure = measures.ClassMeasure("macro_f1", n_classes=3)
    f = np.array([0, 2, 1, 2])
    table = measure.loss_table(predictions=f)
    assert table.shape == (4, 3, 9)
    for label in range(3):
        expected = measure.loss(np.full(4, label), predictions=f)
        np.testing.assert_array_equal(table[:, label, :], expected)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_brier_score_is_summed_over_both_classes(seed):
    y, _, p = binary_data(seed)
    both = sum((pi - yi) ** 2 + ((1 - pi) - (1 - yi)) ** 2 for yi, pi in zip(y, p, strict=True))
    got = measures.BrierScore().value(y, scores=p)
    assert got[0] == pytest.approx(both / y.size, rel=RTOL)
    # the factor 2 of Table 1: twice the one-class convention
    assert got[0] == pytest.approx(2 * np.mean((p - y) ** 2), rel=RTOL)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regression_values_match_direct_formulas(seed):
    y, f = regression_data(seed)
    n = y.size
    mean_y = sum(y.tolist()) / n
    sse = sum((a - b) ** 2 for a, b in zip(y.tolist(), f.tolist(), strict=True))
    sst = sum((a - mean_y) ** 2 for a in y.tolist())
    mae = sum(abs(a - b) for a, b in zip(y.tolist(), f.tolist(), strict=True)) / n
    # R2 - R1^2 cancels about log10(E[y^2] / var(y)) < 1 digit here, so 1e-12 still holds
    assert measures.MeanAbsoluteError().value(y, predictions=f)[0] == pytest.approx(mae, rel=RTOL)
    assert measures.MeanSquaredError().value(y, predictions=f)[0] == pytest.approx(
        sse / n, rel=RTOL
    )
    assert measures.RSquared().value(y, predictions=f)[0] == pytest.approx(1 - sse / sst, rel=1e-11)


def test_r_squared_is_negative_for_a_bad_constant_predictor():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    f = np.full(4, 10.0)
    sse, sst = np.sum((y - f) ** 2), np.sum((y - y.mean()) ** 2)
    assert measures.RSquared().value(y, predictions=f)[0] == pytest.approx(1 - sse / sst)
    assert measures.RSquared().value(y, predictions=f)[0] < 0


def test_paper_table2_r_squared_formula_is_explained_over_total_sum_of_squares():
    """Table 2's g on [y, y^2, f, f^2] is SSR / SST, not 1 - SSE / SST (see RSquared Notes)."""

    def paper_g(y, f):
        r1, r2, r3, r4 = y.mean(), (y**2).mean(), f.mean(), (f**2).mean()
        return (r4 - 2 * r1 * r3 + r1**2) / (r2 - r1**2)

    rng = np.random.default_rng(3)
    y = rng.normal(size=200)
    # a constant predictor away from mean(y): R^2 < 0, the paper's formula > 0
    f = np.full(200, 1.0)
    ours = measures.RSquared().value(y, predictions=f)[0]
    assert ours < 0 < paper_g(y, f)
    assert paper_g(y, f) == pytest.approx(np.sum((f - y.mean()) ** 2) / np.sum((y - y.mean()) ** 2))
    # they agree for the in-sample least-squares fit with an intercept (SST = SSR + SSE)
    x = y + rng.normal(size=200)
    slope, intercept = np.polyfit(x, y, 1)
    f_ols = intercept + slope * x
    assert measures.RSquared().value(y, predictions=f_ols)[0] == pytest.approx(
        paper_g(y, f_ols), rel=1e-9
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_precision_recall_curve_matches_counts_per_threshold(seed):
    y, _, s = binary_data(seed)
    thresholds = [0.1, 0.3, 0.5, 0.7, 0.9]
    pr = measures.PrecisionRecallCurve(thresholds)
    got = pr.value(y, scores=s)
    positives = sum(y.tolist())
    for i, t in enumerate(thresholds):
        tp = sum(1 for yi, si in zip(y, s, strict=True) if si >= t and yi == 1)
        pp = sum(1 for si in s if si >= t)
        assert got[i] == pytest.approx(tp / pp, rel=RTOL)
        assert got[len(thresholds) + i] == pytest.approx(tp / positives, rel=RTOL)
        # and each threshold agrees with the scalar measures on thresholded predictions
        f = (s >= t).astype(int)
        assert got[i] == pytest.approx(measures.Precision().value(y, predictions=f)[0], rel=RTOL)


def test_precision_recall_curve_counts_ties_as_positive():
    pr = measures.PrecisionRecallCurve([0.5])
    loss = pr.loss([1, 0, 1], scores=[0.5, 0.5, 0.4999999])
    np.testing.assert_array_equal(loss, [[1, 1, 1], [1, 0, 0], [0, 0, 1]])


def test_value_pools_every_axis_of_multidimensional_input():
    y, f, _ = binary_data(0, n=120)
    m = measures.FScore()
    loss = m.loss(y.reshape(3, 40), predictions=f.reshape(3, 40))
    assert loss.shape == (3, 40, 2)
    assert m.value(y.reshape(3, 40), predictions=f.reshape(3, 40)) == pytest.approx(
        m.value(y, predictions=f)
    )


def test_scalar_item_gives_one_loss_vector():
    assert measures.Precision().loss(1, predictions=1).shape == (2,)
    assert measures.Precision().value(1, predictions=1) == pytest.approx([1.0])


def test_boolean_inputs_are_accepted():
    y = np.array([True, False, True])
    f = np.array([True, True, False])
    assert measures.Recall().value(y, predictions=f) == pytest.approx([0.5])


def test_unused_system_output_is_ignored_even_if_invalid():
    y, f, _ = binary_data(0, n=20)
    junk = np.full(20, np.nan)
    expected = measures.Precision().value(y, predictions=f)
    got = measures.Precision().value(y, predictions=f, scores=junk)
    np.testing.assert_array_equal(got, expected)


def test_precision_recall_curve_allows_infinite_scores():
    pr = measures.PrecisionRecallCurve([0.0])
    np.testing.assert_array_equal(pr.value([1, 0], scores=[np.inf, -np.inf]), [1.0, 1.0])


# --------------------------------------------------------------------------- g and Jacobian


def _interior_R(measure, seed):
    """A valid R well inside the domain: the mean loss of seeded data."""
    R = measure.loss(**data_for(measure, seed)).mean(axis=0)
    assert np.isfinite(measure.g(R)).all()
    return R


def central_differences(measure, R, h):
    jac = np.empty((len(measure.outputs), measure.dim))
    for j in range(measure.dim):
        step = np.zeros(measure.dim)
        step[j] = h
        jac[:, j] = (measure.g(R + step) - measure.g(R - step)) / (2 * h)
    return jac


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("measure", ALL, ids=_ids(ALL))
def test_jacobian_matches_central_differences(measure, seed):
    # Step h = 1e-6: the truncation error is h^2 / 6 |g'''| ~ 1e-12 |g'''| and rounding adds
    # ~ eps |g| / h ~ 2e-10; with R entries >= ~0.05 the third derivatives stay below ~1e4, so
    # an absolute tolerance of 1e-7 (plus 1e-6 relative) is safely above both.
    R = _interior_R(measure, seed)
    jac = measure.jacobian(R)
    assert jac.shape == (len(measure.outputs), measure.dim)
    np.testing.assert_allclose(jac, central_differences(measure, R, 1e-6), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("measure", ALL, ids=_ids(ALL))
def test_g_and_jacobian_map_posterior_draws(measure):
    rng = np.random.default_rng(7)
    base = _interior_R(measure, 0)
    # small perturbations keep every draw inside the domain
    draws = base * (1 + 0.01 * rng.standard_normal((4, 100, measure.dim)))
    m = len(measure.outputs)
    G = measure.g(draws)
    J = measure.jacobian(draws)
    assert G.shape == (4, 100, m)
    assert J.shape == (4, 100, m, measure.dim)
    for idx in [(0, 0), (1, 17), (3, 99)]:
        np.testing.assert_array_equal(G[idx], measure.g(draws[idx]))
        np.testing.assert_array_equal(J[idx], measure.jacobian(draws[idx]))


def test_precision_recall_curve_jacobian_is_sparse():
    pr = measures.PrecisionRecallCurve(np.linspace(0.1, 0.9, 6))
    J = pr.jacobian(_interior_R(pr, 0))
    assert J.shape == (12, 13)
    # each precision depends on two entries, each recall on two
    assert ((J != 0).sum(axis=1) == 2).all()


@pytest.mark.parametrize(
    ("measure", "R", "expected"),
    [
        (measures.Accuracy(), [0.25], [0.75]),
        (measures.Precision(), [0.2, 0.4], [0.5]),
        (measures.Recall(), [0.2, 0.8], [0.25]),
        (measures.FScore(), [0.2, 0.5], [0.4]),
        (measures.BrierScore(), [0.3], [0.3]),
        (measures.MeanSquaredError(), [2.5], [2.5]),
        (measures.RSquared(), [1.0, 5.0, 2.0], [0.5]),
    ],
)
def test_g_hand_computed(measure, R, expected):
    np.testing.assert_allclose(measure.g(R), expected, rtol=1e-15)


def test_balanced_accuracy_table1_formula_is_mean_of_tpr_and_tnr():
    # R = [E(yf), E(y), E(f)] from a confusion distribution: TPR = 3/4, TNR = 4/6
    tp, fp, fn, tn = 0.3, 0.2, 0.1, 0.4
    R = [tp, tp + fn, tp + fp]
    expected = (tp / (tp + fn) + tn / (tn + fp)) / 2
    assert measures.BalancedAccuracy().g(R)[0] == pytest.approx(expected, rel=1e-14)


def test_g_does_not_modify_its_input():
    R = np.array([0.3])
    G = measures.BrierScore().g(R)
    G[0] = 5.0
    assert R[0] == 0.3


# --------------------------------------------------------------------------- loss tables


@pytest.mark.parametrize("measure", BINARY, ids=_ids(BINARY))
def test_loss_table_rows_equal_loss_with_each_label(measure):
    _, f, s = binary_data(4, n=50)
    table = measure.loss_table(predictions=f, scores=s)
    assert table.shape == (50, 2, measure.dim)
    for label in (0, 1):
        expected = measure.loss(np.full(50, label), predictions=f, scores=s)
        np.testing.assert_array_equal(table[:, label, :], expected)


def test_loss_table_keeps_input_shape():
    table = measures.Recall().loss_table(predictions=np.ones((3, 4), dtype=int))
    assert table.shape == (3, 4, 2, 2)


@pytest.mark.parametrize("measure", REGRESSION, ids=_ids(REGRESSION))
def test_loss_table_refuses_regression_measures(measure):
    with pytest.raises(ValueError, match="regression measure"):
        measure.loss_table(predictions=[1.0, 2.0])


# --------------------------------------------------------------------------- undefined values


def _no_warnings(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kwargs)


@pytest.mark.parametrize(
    ("measure", "labels", "predictions"),
    [
        (measures.Precision(), [1, 0, 1], [0, 0, 0]),  # no predicted positive
        (measures.Recall(), [0, 0, 0], [1, 0, 1]),  # no positive label
        (measures.FScore(beta=2), [0, 0], [0, 0]),  # neither
        (measures.BalancedAccuracy(), [1, 1, 1], [1, 0, 1]),  # one class only
        (measures.MatthewsCorrelation(), [1, 0, 1], [1, 1, 1]),  # constant predictions
        (measures.MatthewsCorrelation(), [0, 0, 0], [1, 0, 1]),  # constant labels
        (measures.FowlkesMallows(), [1, 0, 1], [0, 0, 0]),
        (measures.RSquared(), [2.0, 2.0, 2.0], [1.0, 2.0, 3.0]),  # no variance
    ],
)
def test_undefined_value_is_nan_without_warnings(measure, labels, predictions):
    value = _no_warnings(measure.value, labels, predictions=predictions)
    assert np.isnan(value).all()
    R = measure.loss(labels, predictions=predictions).mean(axis=0)
    assert np.isnan(_no_warnings(measure.jacobian, R)).all()


def test_f_score_is_zero_not_nan_without_true_positives():
    assert measures.FScore().value([1, 0], predictions=[0, 1]) == pytest.approx([0.0])


def test_precision_recall_curve_nan_only_where_undefined():
    pr = measures.PrecisionRecallCurve([0.5, 2.0])  # nothing scores >= 2
    G = _no_warnings(pr.value, [1, 0, 1], scores=[0.9, 0.6, 0.1])
    np.testing.assert_array_equal(G, [0.5, np.nan, 0.5, 0.0])
    R = pr.loss([1, 0, 1], scores=[0.9, 0.6, 0.1]).mean(axis=0)
    J = _no_warnings(pr.jacobian, R)
    assert np.isnan(J[1]).all() and np.isfinite(J[[0, 2, 3]]).all()


def test_nan_in_R_propagates_per_draw():
    draws = np.array([[0.2, 0.4], [np.nan, 0.4], [0.1, 0.0]])
    G = _no_warnings(measures.Precision().g, draws)
    np.testing.assert_array_equal(G[:, 0], [0.5, np.nan, np.nan])


# --------------------------------------------------------------------------- description


def test_names_dims_and_outputs():
    assert measures.FScore().name == "f1"
    assert measures.FScore(beta=0.5).outputs == ("f0.5",)
    assert measures.FScore(beta=2).beta == 2.0
    assert [m.dim for m in REGRESSION] == [1, 1, 3]
    assert measures.BrierScore().system_output == "scores"
    assert measures.RSquared().label_type == "real"
    pr = measures.PrecisionRecallCurve([0, 0.5, 1])
    assert pr.thresholds == (0.0, 0.5, 1.0)
    assert pr.outputs == (
        "precision@0",
        "precision@0.5",
        "precision@1",
        "recall@0",
        "recall@0.5",
        "recall@1",
    )


def test_precision_recall_curve_outputs_are_unique_on_a_fine_grid():
    pr = measures.PrecisionRecallCurve(np.linspace(0.3, 0.3 + 1e-9, 1024))
    assert len(set(pr.outputs)) == 2 * 1024


def test_measures_are_frozen_hashable_and_comparable():
    assert measures.FScore(beta=1) == measures.FScore()
    assert measures.FScore(beta=1) != measures.FScore(beta=2)
    assert measures.PrecisionRecallCurve([0.1, 0.2]) == measures.PrecisionRecallCurve((0.1, 0.2))
    assert len({measures.Precision(), measures.Precision(), measures.Recall()}) == 2
    with pytest.raises(AttributeError):
        measures.FScore().beta = 3.0
    with pytest.raises(TypeError):
        measures.Measure()


def test_exports():
    for name in measures.__all__:
        assert hasattr(measures, name)


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: measures.Precision().loss([0, 2], [0, 1]), r"`labels` must contain only 0 and 1"),
        (lambda: measures.Precision().loss([0, 1], [0, 0.5]), r"`predictions` must contain only"),
        (lambda: measures.Recall().loss([0, np.nan], [0, 1]), r"`labels` must not contain NaN"),
        (lambda: measures.Recall().loss([0, 1], [np.nan, 1]), r"`predictions` must not contain"),
        (lambda: measures.Recall().loss([0, 1], [0, 1, 1]), r"same shape; got \(2,\) and \(3,\)"),
        (lambda: measures.Recall().loss([0, 1], scores=[0.1, 0.9]), r"needs `predictions`"),
        (lambda: measures.BrierScore().loss([0, 1], [0, 1]), r"needs `scores`"),
        (lambda: measures.BrierScore().loss([0, 1], scores=[0.1, 1.1]), r"probabilities in \[0"),
        (lambda: measures.PrecisionRecallCurve([0.5]).loss([1], scores=[np.nan]), r"`scores`"),
        (lambda: measures.RSquared().loss([1.0, np.inf], [1, 2]), r"`labels` must be finite"),
        (lambda: measures.MeanSquaredError().loss([1.0], [np.nan]), r"`predictions` must not"),
        (lambda: measures.MeanSquaredError().loss(["a"], [1.0]), r"`labels` must contain real"),
        (lambda: measures.MeanSquaredError().loss([1.0], [1j]), r"`predictions` must contain real"),
        (lambda: measures.Accuracy().value([], predictions=[]), r"at least one item"),
        (lambda: measures.FScore(beta=0), r"`beta` must be a positive number"),
        (lambda: measures.FScore(beta=-1.0), r"`beta`"),
        (lambda: measures.FScore(beta=np.inf), r"`beta`"),
        (lambda: measures.FScore(beta="2"), r"`beta`"),
        (lambda: measures.FScore(beta=True), r"`beta`"),
        (
            lambda: measures.PrecisionRecallCurve([]),
            r"`thresholds` must be a strictly increasing non-empty 1-d",
        ),
        (
            lambda: measures.PrecisionRecallCurve([[0.1, 0.2]]),
            r"`thresholds` must be a strictly increasing non-empty 1-d",
        ),
        (lambda: measures.PrecisionRecallCurve([0.5, 0.5]), r"strictly increasing .*\(entry 1"),
        (lambda: measures.PrecisionRecallCurve([0.5, 0.2]), r"strictly increasing"),
        (lambda: measures.PrecisionRecallCurve([0.1, np.nan]), r"finite numbers; .*entry 1 is nan"),
        (lambda: measures.PrecisionRecallCurve(["a"]), r"`thresholds` must be a .*; got \['a'\]"),
        (lambda: measures.Precision().g([0.1, 0.2, 0.3]), r"`R` must have shape \(\.\.\., 2\)"),
        (lambda: measures.Accuracy().g(0.1), r"`R` must have shape \(\.\.\., 1\)"),
        (lambda: measures.Accuracy().jacobian("x"), r"`R` must be an array of real numbers"),
    ],
)
def test_bad_inputs_raise_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_error_reports_position_in_multidimensional_labels():
    labels = np.zeros((2, 3))
    labels[1, 2] = 3
    with pytest.raises(ValueError, match=r"entry \(1, 2\) is 3.0"):
        measures.Accuracy().loss(labels, predictions=np.zeros((2, 3)))


def test_fowlkes_mallows_jacobian_without_true_positives():
    # g = R1 / sqrt(R2 R3) is 0 at R1 = 0 and its derivative 1 / sqrt(R2 R3) is finite
    jac = measures.FowlkesMallows().jacobian(np.array([0.0, 0.5, 0.5]))
    np.testing.assert_allclose(jac, [[2.0, 0.0, 0.0]], atol=1e-15)


def test_measures_by_name():
    from bayeval.measures import by_name
    from bayeval.measures.registry import NAMES

    assert by_name("f0.5") == measures.FScore(beta=0.5)
    assert all(by_name(name).outputs for name in NAMES)
    with pytest.raises(ValueError, match="`name` must be one of 'f1', 'f2'.*; got 'f3'"):
        by_name("f3")
