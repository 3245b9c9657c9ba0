"""AIS on a scored pool: the precision-recall curve with its bands."""

import numpy as np

import bayeval as be
from bayeval.plots import plot_pr_curve, pr_thresholds

rng = np.random.default_rng(0)
truth = (rng.random(20_000) < 0.05).astype(int)
scores = np.where(truth == 1, rng.beta(5, 2, truth.size), rng.beta(1, 8, truth.size))
pool = be.Pool(scores)
run = be.evaluate(pool, be.measures.FScore(), truth, 400, "ais", rng=1)
curve = be.measures.PrecisionRecallCurve(pr_thresholds(scores, 19))
plot_pr_curve(run.sampler.estimate(measure=curve), 0.95, truth=curve.value(truth, scores=scores))
