"""Properties every generalized measure must have, for any labelled sample hypothesis can find."""

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bayeval import measures

SETTINGS = settings(
    max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
# Sums of a few dozen losses in a different order differ by a few ulps.
TOL = 1e-12

UNIT = [
    measures.Accuracy(),
    measures.BalancedAccuracy(),
    measures.Precision(),
    measures.Recall(),
    measures.FScore(),
    measures.FScore(beta=0.3),
    measures.FScore(beta=3),
    measures.FowlkesMallows(),
]
CLASSIFIERS = [*UNIT, measures.MatthewsCorrelation()]


@st.composite
def binary_samples(draw, min_size=1, max_size=60):
    n = draw(st.integers(min_size, max_size))
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    f = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    p = np.array(draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))
    return y, f, p


@st.composite
def regression_samples(draw):
    n = draw(st.integers(2, 60))
    values = st.floats(-100, 100, allow_nan=False)
    y = np.array(draw(st.lists(values, min_size=n, max_size=n)))
    f = np.array(draw(st.lists(values, min_size=n, max_size=n)))
    return y, f


@SETTINGS
@given(sample=binary_samples(), measure=st.sampled_from(UNIT))
def test_classification_values_in_unit_interval_or_nan(sample, measure):
    y, f, _ = sample
    value = measure.value(y, predictions=f)[0]
    assert np.isnan(value) or -TOL <= value <= 1 + TOL


@SETTINGS
@given(sample=binary_samples())
def test_matthews_correlation_in_minus_one_one(sample):
    y, f, _ = sample
    value = measures.MatthewsCorrelation().value(y, predictions=f)[0]
    assert np.isnan(value) or -1 - TOL <= value <= 1 + TOL


@SETTINGS
@given(sample=binary_samples())
def test_brier_score_in_zero_two(sample):
    y, _, p = sample
    value = measures.BrierScore().value(y, scores=p)[0]
    assert 0 <= value <= 2


@SETTINGS
@given(sample=regression_samples())
def test_regression_errors_nonnegative_and_r_squared_at_most_one(sample):
    y, f = sample
    assert measures.MeanAbsoluteError().value(y, predictions=f)[0] >= 0
    assert measures.MeanSquaredError().value(y, predictions=f)[0] >= 0
    # keep var(y) away from cancellation in E[y^2] - E[y]^2 (documented in RSquared)
    assume(np.var(y) > 1e-6 * (1 + np.mean(y**2)))
    assert measures.RSquared().value(y, predictions=f)[0] <= 1 + 1e-9


@SETTINGS
@given(sample=regression_samples())
def test_r_squared_of_perfect_predictions_is_one(sample):
    y, _ = sample
    assume(np.var(y) > 1e-6 * (1 + np.mean(y**2)))
    assert abs(measures.RSquared().value(y, predictions=y)[0] - 1) < 1e-12


@SETTINGS
@given(
    sample=binary_samples(min_size=2),
    measure=st.sampled_from([*CLASSIFIERS, measures.BrierScore()]),
    data=st.data(),
)
def test_values_invariant_to_permuting_items(sample, measure, data):
    y, f, p = sample
    perm = np.array(data.draw(st.permutations(range(y.size))))
    a = measure.value(y, predictions=f, scores=p)
    b = measure.value(y[perm], predictions=f[perm], scores=p[perm])
    np.testing.assert_allclose(a, b, rtol=TOL, atol=TOL)


@SETTINGS
@given(sample=binary_samples(), measure=st.sampled_from(CLASSIFIERS), copies=st.integers(2, 4))
def test_values_depend_only_on_the_empirical_distribution(sample, measure, copies):
    y, f, _ = sample
    a = measure.value(y, predictions=f)
    b = measure.value(np.tile(y, copies), predictions=np.tile(f, copies))
    np.testing.assert_allclose(a, b, rtol=TOL, atol=TOL)


@SETTINGS
@given(sample=binary_samples(), measure=st.sampled_from(CLASSIFIERS))
def test_perfect_classifier_scores_one_where_defined(sample, measure):
    y, _, _ = sample
    value = measure.value(y, predictions=y)[0]
    if measure.name in ("balanced_accuracy", "matthews_correlation"):
        defined = 0 < y.sum() < y.size
    elif measure.name == "accuracy":
        defined = True
    else:
        defined = y.sum() > 0
    assert value == 1.0 if defined else np.isnan(value)


@SETTINGS
@given(sample=binary_samples())
def test_swapping_classes_keeps_symmetric_measures(sample):
    y, f, _ = sample
    for measure in (measures.Accuracy(), measures.BalancedAccuracy()):
        a = measure.value(y, predictions=f)
        b = measure.value(1 - y, predictions=1 - f)
        np.testing.assert_allclose(a, b, rtol=TOL, atol=TOL)
    mcc = measures.MatthewsCorrelation()
    np.testing.assert_allclose(
        mcc.value(y, predictions=f), mcc.value(f, predictions=y), rtol=TOL, atol=TOL
    )
    np.testing.assert_allclose(
        mcc.value(y, predictions=f), mcc.value(1 - y, predictions=1 - f), rtol=TOL, atol=TOL
    )


@SETTINGS
@given(sample=binary_samples(), beta=st.floats(0.05, 20))
def test_f_score_between_precision_and_recall_and_f1_below_fowlkes_mallows(sample, beta):
    y, f, _ = sample
    assume((y * f).sum() > 0)
    p = measures.Precision().value(y, predictions=f)[0]
    r = measures.Recall().value(y, predictions=f)[0]
    fb = measures.FScore(beta=beta).value(y, predictions=f)[0]
    assert min(p, r) - TOL <= fb <= max(p, r) + TOL
    # harmonic mean <= geometric mean
    f1 = measures.FScore().value(y, predictions=f)[0]
    assert f1 <= measures.FowlkesMallows().value(y, predictions=f)[0] + TOL


@SETTINGS
@given(
    sample=binary_samples(),
    thresholds=st.lists(st.floats(-0.5, 1.5), min_size=1, max_size=8, unique=True).map(sorted),
)
def test_precision_recall_curve_agrees_with_scalar_measures(sample, thresholds):
    y, _, s = sample
    pr = measures.PrecisionRecallCurve(thresholds)
    G = pr.value(y, scores=s)
    L = len(thresholds)
    recalls = G[L:]
    if y.sum() > 0:
        assert (np.diff(recalls) <= TOL).all()  # recall never rises with the threshold
    for i, t in enumerate(thresholds):
        f = (s >= t).astype(int)
        np.testing.assert_allclose(G[i], measures.Precision().value(y, predictions=f)[0], rtol=TOL)
        np.testing.assert_allclose(G[L + i], measures.Recall().value(y, predictions=f)[0], rtol=TOL)


@SETTINGS
@given(
    sample=binary_samples(),
    measure=st.sampled_from(
        [*CLASSIFIERS, measures.BrierScore(), measures.PrecisionRecallCurve([0.25, 0.5, 0.75])]
    ),
)
def test_loss_is_the_loss_table_row_of_the_label(sample, measure):
    y, f, p = sample
    table = measure.loss_table(predictions=f, scores=p)
    loss = measure.loss(y, predictions=f, scores=p)
    np.testing.assert_array_equal(loss, table[np.arange(y.size), y])


@SETTINGS
@given(
    measure=st.sampled_from([*CLASSIFIERS, measures.PrecisionRecallCurve([0.2, 0.6])]),
    draws=st.integers(1, 5),
    data=st.data(),
)
def test_g_of_a_batch_is_g_of_each_row(measure, draws, data):
    rows = []
    for _ in range(draws):
        y, f, p = data.draw(binary_samples())
        rows.append(measure.loss(y, predictions=f, scores=p).mean(axis=0))
    R = np.stack(rows)
    G = measure.g(R)
    J = measure.jacobian(R)
    for k in range(draws):
        np.testing.assert_array_equal(G[k], measure.g(R[k]))
        np.testing.assert_array_equal(J[k], measure.jacobian(R[k]))
