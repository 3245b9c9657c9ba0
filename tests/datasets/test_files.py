"""Scored items read from files: the library loader behind ``--pool``."""

import pandas as pd
import pytest

from bayeval.datasets import read_scored_items


def test_a_file_with_ids_predictions_and_labels(tmp_path):
    path = tmp_path / "items.parquet"
    table = {"id": [7, 3, 5], "score": [0.1, 0.8, 0.4], "prediction": [0, 1, 1], "label": [0, 1, 0]}
    pd.DataFrame(table).to_parquet(path)
    items = read_scored_items(path)
    assert items.name == "items.parquet" and list(items.items.columns) == [
        "id",
        "score",
        "prediction",
    ]
    assert items.pool.positions([3, 5]).tolist() == [1, 2]
    assert items.pool.predictions.tolist() == [0, 1, 1] and items.truth.tolist() == [0, 1, 0]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("items.txt", "score\n0.5\n", "expected 'febrl' or a .csv or .parquet file; got"),
        (
            "items.csv",
            "grade\n0.5\n",
            "a column 'score' is needed .*; its columns are \\['grade'\\]",
        ),
        ("items.csv", "score\n0.5\nhigh\n", "column 'score' must hold finite numbers; data row 2"),
        (
            "items.csv",
            "score,label\n0.5,2\n",
            "column 'label' must hold 0 or 1 .*data row 1 holds 2",
        ),
        ("items.csv", "id,score\na,0.5\na,0.2\n", "column 'id'"),
    ],
)
def test_bad_files_are_refused_naming_the_column_and_row(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_scored_items(path)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(ValueError, match="file '.*nowhere.csv' does not exist"):
        read_scored_items(tmp_path / "nowhere.csv")
