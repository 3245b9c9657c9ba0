"""On-demand evaluation of many systems with joint importance sampling (Chaganty et al. 2017).

Systems arrive one after another, each a set of predicted instances. Labels are bought only
where the labels already collected do not cover a new system well enough, and every system's
precision, recall and F1 are re-estimated from all labels, without the bias of pooled
evaluation against systems that make new predictions.
"""

from bayeval.ondemand.evaluator import OnDemandEvaluator
from bayeval.ondemand.pooling import pooled_scores, pooling_bias
from bayeval.ondemand.result import SystemEstimates
from bayeval.ondemand.synthetic import SyntheticUniverse, synthetic_universe

__all__ = [
    "OnDemandEvaluator",
    "SyntheticUniverse",
    "SystemEstimates",
    "pooled_scores",
    "pooling_bias",
    "synthetic_universe",
]
