import numpy as np
import pandas as pd
import pytest

import bayeval as be


def test_two_segments_equals_explicit_constructor(webber_example):
    explicit = be.StratifiedSample(
        population=[2000, 100000],
        sampled=[100, 100],
        positives=[50, 3],
        retrieved=[True, False],
        names=["retrieved", "unretrieved"],
    )
    assert explicit == webber_example


def test_from_frame_round_trip(stratified_sample):
    df = stratified_sample.to_frame()
    back = be.StratifiedSample.from_frame(df)
    assert back == stratified_sample
    renamed = df.rename(columns={"N": "pop", "n": "size"}).reset_index()
    again = be.StratifiedSample.from_frame(
        renamed, population="pop", sampled="size", names="stratum"
    )
    assert again == stratified_sample


def test_plug_in_estimates_webber_example(webber_example):
    # Webber Eq. 2-5: R1_hat = 2000 * 50/100 = 1000, R0_hat = 100000 * 3/100 = 3000.
    np.testing.assert_allclose(webber_example.yield_estimates(), [1000.0, 3000.0])
    assert webber_example.recall_estimate() == pytest.approx(0.25)
    assert webber_example.precision_estimate() == pytest.approx(0.5)
    assert webber_example.f1_estimate() == pytest.approx(2 * 1000 / (2000 + 4000))


def test_segment_totals(stratified_sample):
    tot = stratified_sample.segment_totals()
    np.testing.assert_array_equal(tot["N"], [2000, 100000])
    np.testing.assert_array_equal(tot["r"], [70, 17])


def test_whole_float_counts_accepted():
    s = be.StratifiedSample([10.0, 20.0], [5.0, 5.0], [1.0, 0.0], [True, False])
    assert s.population.dtype == np.int64


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"positives": [6, 0]}, r"`positives` cannot exceed `sampled`.*positives=6 > sampled=5"),
        ({"sampled": [11, 5]}, r"`sampled` cannot exceed `population`.*sampled=11"),
        (
            {"population": [10, -20]},
            r"`population` must be a non-empty 1-d array of non-negative whole numbers; got "
            r"\[10, -20\] \(entry 1 is -20\)",
        ),
        ({"sampled": [5.5, 5]}, r"`sampled` must be .* whole numbers; .* \(entry 0 is 5.5\)"),
        ({"positives": ["a", "b"]}, r"`positives` must be .* whole numbers; got \['a', 'b'\]"),
        ({"positives": [1, 0, 0]}, r"same length.*'positives': 3"),
        ({"retrieved": ["yes", "no"]}, r"`retrieved` must be a non-empty 1-d array of True"),
        ({"retrieved": [1.0, 0.0]}, r"`retrieved` must be .*; got \[1.0, 0.0\]"),
        (
            {"population": [], "sampled": [], "positives": [], "retrieved": []},
            r"`population` must be a non-empty 1-d array",
        ),
        ({"names": ["a", "a"]}, r"`names` must be unique"),
    ],
)
def test_bad_input_names_parameter_and_value(kwargs, message):
    base = {"population": [10, 20], "sampled": [5, 5], "positives": [1, 0], "retrieved": [1, 0]}
    base.update(kwargs)
    with pytest.raises(ValueError, match=message):
        be.StratifiedSample(**base)


def test_from_frame_missing_column_is_named():
    df = pd.DataFrame({"N": [10], "n": [5], "r": [1]})
    with pytest.raises(ValueError, match=r"'retrieved'.*not found"):
        be.StratifiedSample.from_frame(df)


def test_sample_is_read_only(webber_example):
    with pytest.raises(ValueError, match="read-only"):
        webber_example.positives[0] = 7
