"""Bundled real data sets for examples, tests and benchmarks.

Functions
---------
load_febrl_pairs
    All 499,500 record pairs of the FEBRL1 record-linkage data set, scored by a classifier
    trained on FEBRL2, with predicted and true match labels.
load_shuttle_pool, load_lending_club_pool
    Real scored pools ``(scores, labels)``: half of the UCI Statlog (Shuttle) anomaly data
    (24,549 records, 1,756 positives) and half of modeldata's Lending Club loans (4,929 loans,
    259 bad), each scored by a logistic regression trained on the other half.
load_image_segments_pool, IMAGE_SEGMENT_CLASSES
    A real multiclass pool ``(probabilities, labels)``: half of UCI Image Segmentation (1,155
    regions, seven classes), scored by an overconfident Gaussian naive Bayes.
read_scored_items, febrl_items, ScoredItems
    Scored items from a CSV or Parquet file (or the bundled FEBRL pool): the pool, what an
    annotator sees of each item, and the labels if the file has them.
scale_up, ScaledList, window_average
    Scaled-up ranked lists (Sabharwal & Xue 2018, §5): a label list smoothed by a sliding window
    and expanded ``factor``-fold with lazily drawn Bernoulli labels.
"""

from bayeval.datasets._febrl import load_febrl_pairs
from bayeval.datasets._real_pools import (
    IMAGE_SEGMENT_CLASSES,
    load_image_segments_pool,
    load_lending_club_pool,
    load_shuttle_pool,
)
from bayeval.datasets.files import ScoredItems, febrl_items, read_scored_items
from bayeval.datasets.scale_up import ScaledList, scale_up, window_average

__all__ = [
    "IMAGE_SEGMENT_CLASSES",
    "ScaledList",
    "ScoredItems",
    "febrl_items",
    "load_febrl_pairs",
    "load_image_segments_pool",
    "load_lending_club_pool",
    "load_shuttle_pool",
    "read_scored_items",
    "scale_up",
    "window_average",
]
