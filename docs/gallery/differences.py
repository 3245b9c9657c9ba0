"""Three systems compared on 300 labels: every pairwise difference."""

import numpy as np

import bayeval as be
from bayeval.plots import plot_differences

rng = np.random.default_rng(2)
truth = rng.integers(0, 2, 2_000)
systems = np.stack(
    [np.where(rng.random(truth.size) < acc, truth, 1 - truth) for acc in (0.80, 0.82, 0.85)], axis=1
)
labelled = rng.choice(truth.size, 300, replace=False)
plot_differences(be.compare(systems, labelled, truth[labelled], rng=0))
