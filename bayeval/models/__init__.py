"""PyMC model builders for the ``engine="pymc"`` path.

Each builder turns a :class:`~bayeval.StratifiedSample` into a ``pymc.Model``; each
``sample_*`` function runs NUTS on it and returns an ArviZ-ready ``xarray.DataTree`` whose
``posterior`` holds ``stratum_yield`` and ``segment_yield``. PyMC is imported only when one of
these functions is called, so importing this package stays cheap. Model cards live in
``models/<name>/spec.md`` at the repository root.

- :func:`segment_yields_model`, :func:`sample_segment_yields`: independent Beta priors per
  stratum; the NUTS twin of the closed-form beta-binomial posterior (Webber 2013, §2.8, §3.6).
- :func:`hierarchical_yields_model`, :func:`sample_hierarchical_yields`: stratum prevalences
  partially pooled within each segment, for designs with many small strata (Webber 2013, §4.4).
"""

from bayeval.models.cell_rates import CellRates
from bayeval.models.class_calibration import ClassCalibration
from bayeval.models.class_pattern_draws import ClassPatternDraws
from bayeval.models.consensus_calibration import ConsensusCalibration
from bayeval.models.dawid_skene import AnnotatorPosterior, DawidSkene
from bayeval.models.dirichlet_tree import BoundTree, DirichletTree
from bayeval.models.hierarchical import hierarchical_yields_model, sample_hierarchical_yields
from bayeval.models.prediction_patterns import PatternDraws, PredictionPatterns
from bayeval.models.score_calibration import (
    BoundCalibration,
    CalibrationWarning,
    ScoreCalibration,
)
from bayeval.models.segment_yields import SEGMENTS, sample_segment_yields, segment_yields_model
from bayeval.models.system_confusion import ConfusionWarning, SystemConfusion

__all__ = [
    # the model of the labels given the scores behind every sampler's posterior
    "BoundCalibration",
    "CalibrationWarning",
    "ScoreCalibration",
    # a rate per cell: pools whose scores are their 0/1 predictions
    "CellRates",
    # multiclass: the true class given the predicted class (confusion matrix, macro-F1)
    "ClassCalibration",
    # the label given several systems' predictions (comparisons without scores)
    "ConsensusCalibration",
    "ConfusionWarning",
    "SystemConfusion",
    # one rate of positives (a class distribution) per pattern of many systems' predictions
    "ClassPatternDraws",
    "PatternDraws",
    "PredictionPatterns",
    # annotators who disagree: every answer, each annotator's confusion matrix
    "AnnotatorPosterior",
    "DawidSkene",
    # the Dirichlet-tree oracle model of adaptive importance sampling
    "BoundTree",
    "DirichletTree",
    # independent stratum prevalences (conjugate; the exact engine's twin)
    "SEGMENTS",
    "segment_yields_model",
    "sample_segment_yields",
    # partial pooling within segments (non-conjugate; NUTS only)
    "hierarchical_yields_model",
    "sample_hierarchical_yields",
]
